"""``claim_record`` judges what it records: a value that contradicts the
document's under the named rule cannot read holds; a tolerance names a rule or is refused in one
line; a band judges the record; a test with one claim writes its ID once (``.value``); and the
registry's value must write a number its quote writes, or say how it is derived."""
import json
import textwrap

import pytest

from claimcheck import check
from claimcheck.registry import load_registry

pytestmark = pytest.mark.fast  # in-process pytester runs: a tenth of a second each

TEXT = "Pi is 3.14159. The ratio is about 2.5. Seven hundred and sixty-two is 762.\n"
REGISTRY = """
[[source]]
id = "PI"
file = "text.txt"
title = "Three ways to estimate pi"
language = "en"
""" + "".join(f"""
[[claim]]
id = "{cid}"
source = "PI"
quote = "{quote}"
statement = "s"
value = "{value}"
kind = "numeric"
tier = "fast"
""" for cid, quote, value in (("PI-09", "Pi is 3.14159", "3.14159"), ("PI-10", "The ratio is about 2.5", "2.5"),
                              ("PI-11", "is 762", "762")))


def _run(pytester, tests: str, *args):
    pytester.makefile(".txt", text=TEXT)
    pytester.makefile(".toml", claims=REGISTRY)
    pytester.makeini("[pytest]\nclaimcheck_registry = claims.toml\nclaimcheck_tiers =\n    fast: seconds\n"
                     "claimcheck_scales =\n    analytic: computed\nclaimcheck_default_scales =\n    fast: analytic\n")
    pytester.makepyfile(test_pi=textwrap.dedent(tests))
    result = pytester.runpytest("-p", "no:cacheprovider", *args)
    doc = json.loads((pytester.path / "reports" / "claims.json").read_text(encoding="utf-8"))
    return result, {c["id"]: c for c in doc["claims"]}


def test_e_recorded_against_pi_under_exact_fails(pytester):
    result, claims = _run(pytester, '''
        import math, pytest

        @pytest.mark.claim("PI-09")
        def test_pi(claim_record):
            claim_record("PI-09", math.e, tolerance="exact")
    ''')
    assert claims["PI-09"]["status"] == "fails"
    result.stdout.fnmatch_lines(["*PI-09: measured 2.718281828 contradicts the document's '3.14159' under the rule exact*"])


@pytest.mark.parametrize("body", [
    'claim_record("PI-09", math.e, expected=2.718, tolerance="exact")',  # a test's own expected cannot loosen
    'claim_record("PI-09", float("nan"), tolerance="exact")',
    'claim_record("PI-09", math.inf, tolerance="exact")',
])
def test_exact_judges_the_registry_value_and_a_non_finite_measurement_fails(pytester, body):
    _, claims = _run(pytester, f'''
        import math, pytest

        @pytest.mark.claim("PI-09")
        def test_pi(claim_record):
            {body}
    ''')
    assert claims["PI-09"]["status"] == "fails"


def test_three_seeds_are_not_read_as_an_interval_and_a_repeated_marker_names_one_claim(pytester):
    result, claims = _run(pytester, '''
        import pytest

        @pytest.mark.claim("PI-10")
        class TestRatio:
            @pytest.mark.claim("PI-10")
            def test_seeds(self, claim_record):
                claim_record.value([2.4, 2.6, 2.5], tolerance="equivalence: 2.5 +- 10 %", band=(2.25, 2.75))
    ''')
    result.stdout.fnmatch_lines(["*a band judges a number or a [[]mean, lo, hi[]] interval with lo <= mean <= hi, "
                                 "not [[]2.4, 2.6, 2.5[]]*"])
    assert claims["PI-10"]["status"] == "fails" and claims["PI-10"].get("broken")


def test_the_document_value_within_its_last_digit_holds_and_value_writes_the_id_once(pytester):
    _, claims = _run(pytester, '''
        import math, pytest

        @pytest.mark.claim("PI-09")
        def test_pi(claim_record):
            claim_record.value(math.pi, tolerance="exact: five decimals")
    ''')
    assert claims["PI-09"]["status"] == "holds"


def test_a_tolerance_that_names_no_rule_is_refused_in_one_line(pytester):
    result, claims = _run(pytester, '''
        import pytest

        @pytest.mark.claim("PI-10")
        def test_ratio(claim_record):
            claim_record("PI-10", 2.5, tolerance="±0.0001 of the bound")
    ''')
    assert claims["PI-10"]["status"] == "fails"
    result.stdout.fnmatch_lines(["*the tolerance '±0.0001 of the bound' names no rule: start it with one of exact, "
                                 "equivalence, comparison, joint, start count*"])


@pytest.mark.parametrize("measured, status", [([2.5, 2.4, 2.6], "holds"), ([3.1, 3.0, 3.2], "diverges"),
                                              ([2.7, 2.5, 2.9], "undecided")])
def test_a_band_judges_the_record(pytester, measured, status):
    _, claims = _run(pytester, f'''
        import pytest
        from claimcheck import diverges

        @pytest.mark.claim("PI-10")
        {'@diverges("outside the band")' if status == "diverges" else ""}
        def test_ratio(claim_record):
            claim_record.value({measured}, tolerance="equivalence: about 2.5, ± 10 %", band=(2.25, 2.75))
    ''')
    assert claims["PI-10"]["status"] == status


def test_a_test_whose_own_assert_is_looser_cannot_make_the_record_hold(pytester):
    _, claims = _run(pytester, '''
        import pytest

        @pytest.mark.claim("PI-09")
        def test_pi(claim_record):
            x = claim_record("PI-09", 3.2, tolerance="exact")
            assert abs(x - 3.14159) < 0.1  # looser than the sentence's five decimals
    ''')
    assert claims["PI-09"]["status"] == "fails"


def test_a_mistyped_id_is_one_line_naming_the_markers(pytester):
    result, _ = _run(pytester, '''
        import pytest

        @pytest.mark.claim("PI-09")
        def test_pi(claim_record):
            claim_record("PI-90", 3.14159, tolerance="exact")
    ''')
    assert "claim_record('PI-90'): this test's claim marker names ['PI-09']; fix the ID or the marker" in result.stdout.str()


def test_a_registry_value_its_quote_does_not_write_is_a_warning_unless_derived(tmp_path):
    (tmp_path / "text.txt").write_text(TEXT, encoding="utf-8")
    (tmp_path / "claims.toml").write_text(REGISTRY.replace('value = "762"', 'value = "763"'), encoding="utf-8")
    reg = load_registry(tmp_path / "claims.toml")
    found = [p for p in check.value_problems(reg)]
    assert [p.claim for p in found] == ["PI-11"] and not found[0].error  # a warning; an exact record then fails
    assert "value '763' writes no number its quote writes (762)" in found[0].message
    (tmp_path / "claims.toml").write_text(REGISTRY.replace('value = "762"', 'value = "763"\nderived = "762 + 1"'),
                                          encoding="utf-8")
    assert check.value_problems(load_registry(tmp_path / "claims.toml")) == []


def test_a_test_that_breaks_is_listed_apart_from_the_errata(pytester):
    result, claims = _run(pytester, '''
        import pytest

        @pytest.mark.claim("PI-09")
        def test_pi(claim_record):
            raise KeyError("a typo in the test")
    ''')
    assert claims["PI-09"]["status"] == "fails" and claims["PI-09"]["broken"]
    assert "correction_proposal" not in claims["PI-09"]
    md = (pytester.path / "reports" / "claims.md").read_text(encoding="utf-8")
    errata = md.split("## Errata", 1)[1].split("###", 1)[0]
    assert "PI-09" not in errata and "### Tests that broke" in md
    result.stdout.fnmatch_lines(["*BROKEN    PI-09*the test broke*"])


def test_a_divergence_that_did_not_show_says_to_remove_diverges(pytester):
    result, claims = _run(pytester, '''
        import math, pytest
        from claimcheck import diverges

        @pytest.mark.claim("PI-09")
        @diverges("pi is not 3.14159")
        def test_pi(claim_record):
            claim_record("PI-09", math.pi, tolerance="exact")
    ''')
    assert claims["PI-09"]["status"] == "fails" and not claims["PI-09"].get("broken")
    assert "the divergence did not show; if the sentence now holds, remove @diverges" in claims["PI-09"]["reason"]
