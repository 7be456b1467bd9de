"""``claimcheck check``: the registry read against its text and its tests before any test runs
(claimcheck/check.py). Each mistake an author made on a document of their own is one
line naming the file, the line and the claim, and stops a pytest run before its first test."""
import textwrap

import pytest

from claimcheck import check
from claimcheck.cli import main
from claimcheck.registry import load_registry
from claimcheck.suite import read

pytestmark = pytest.mark.fast

TEXT = """# Sorting

Insertion sort compares 45 pairs at most on ten items. Merge sort is never
worse than n log n, a bound that holds for every input.

| n | comparisons |
| 10 | 45 |

Quicksort is fast. Quicksort is fast.
"""

CLAIMS = {
    "SORT-01": ("Insertion sort compares 45 pairs at most", "45", "fast"),
    "SORT-02": ("never worse than n log n", "n log n", "fast"),   # wrapped across a line break
    "SORT-03": ("Quicksort is fast", "fast", "fast"),              # found twice
}


def _project(path, claims=CLAIMS, tests=""):
    tables = "".join(textwrap.dedent(f'''
        [[claim]]
        id = "{cid}"
        source = "S"
        quote = "{quote}"
        statement = "s"
        value = "{value}"
        kind = "exact"
        tier = "{tier}"
        ''') for cid, (quote, value, tier) in claims.items())
    (path / "claims.toml").write_text('[[source]]\nid = "S"\nfile = "text.md"\ntitle = "Sorting"\nlanguage = "en"\n'
                                      + tables, encoding="utf-8")
    (path / "text.md").write_text(TEXT, encoding="utf-8")
    (path / "test_sort.py").write_text(tests or textwrap.dedent('''
        import pytest

        @pytest.mark.claim("SORT-01")
        def test_one(claim_record):
            claim_record("SORT-01", 45)

        @pytest.mark.claim("SORT-02")
        def test_two(claim_record):
            claim_record("SORT-02", "n log n")

        @pytest.mark.claim("SORT-03")
        def test_three(claim_record):
            claim_record("SORT-03", "fast")
        '''), encoding="utf-8")
    (path / "pytest.ini").write_text("[pytest]\nclaimcheck_registry = claims.toml\nclaimcheck_report_dir = out\n"
                                     "claimcheck_tiers =\n    fast: seconds\n", encoding="utf-8")
    return path


def _problems(path):
    registry = load_registry(path / "claims.toml", None)
    return [str(p) if p.error else f"warning: {p}" for p in
            check.problems(registry, registry.texts(), read(path, [], ("fast", "slow")))]


def test_a_clean_document_has_only_its_duplicate_quote_warned(tmp_path):
    """A wrapped paragraph's quote is found; a quote found twice is a warning with both lines."""
    assert _problems(_project(tmp_path)) == [
        "warning: claims.toml:26: SORT-03: quote 'Quicksort is fast' found 2 times in text.md (lines 9, 9); "
        "it binds to line 9: quote more of the sentence to make it unique"]


def test_a_mistyped_quote_is_an_error_that_shows_the_nearest_passage(tmp_path):
    claims = dict(CLAIMS, **{"SORT-01": ("Insertion sort compares 46 pairs at most", "45", "fast")})
    [line, _] = _problems(_project(tmp_path, claims))
    assert line == ("claims.toml:8: SORT-01: quote 'Insertion sort compares 46 pairs at most' not found in text.md; "
                    "nearest, line 3 of text.md: 'Insertion sort compares 45 pairs at most'; copy the passage from "
                    "the text into quote")


def test_a_registry_tier_no_test_carries_is_an_error(tmp_path):
    claims = dict(CLAIMS, **{"SORT-02": ("never worse than n log n", "n log n", "slow")})
    path = _project(tmp_path, claims, tests=textwrap.dedent('''
        import pytest

        @pytest.mark.fast
        @pytest.mark.claim("SORT-01", "SORT-03")
        def test_one():
            pass

        @pytest.mark.fast
        @pytest.mark.claim("SORT-02")
        def test_two():
            pass
        '''))
    errors = [p for p in _problems(path) if not p.startswith("warning")]
    assert errors == ["claims.toml:17: SORT-02: tier = 'slow', but its tests are marked fast: in a slow run it "
                      "would read not-run; set tier to the tier of a test, or mark a test slow"]


def test_an_expected_the_registry_does_not_state_is_a_warning_and_a_stated_one_is_not(tmp_path):
    """The report shows the registry's value as the document's whatever a test passes: a stray
    expected is a warning, not a stop (reading numbers out of prose can miss one)."""
    path = _project(tmp_path, tests=textwrap.dedent('''
        import pytest

        @pytest.mark.claim("SORT-01")
        def test_one(claim_record):
            claim_record("SORT-01", 44, expected=44)
            claim_record("SORT-01", 45, expected=45)
            claim_record("SORT-01", 44, expected=44, label="nine items")

        @pytest.mark.claim("SORT-02", "SORT-03")
        def test_two():
            pass
        '''))
    assert [p for p in _problems(path) if "expected=" in p] == [
        "warning: test_sort.py:6: SORT-01: claim_record('SORT-01', expected=44): the registry's value is '45', "
        "which does not state it; drop expected= (it defaults to the registry's value), fix the "
        "registry's value, or give the record a label= if it measures something else"]
    assert not [p for p in _problems(path) if not p.startswith("warning")]


@pytest.mark.parametrize("value, expected, ok", [
    ("45", 45, True), ("45", 44, False), ("< 1661000", 1661000, True), ("1,115,394 characters", 1115394, True),
    ("max |diff| 2.98e-08", 2.98e-08, True), ("1/100", 0.01, True), ("90/10 split: 413,784 / 45,976", [413784, 45976], True),
    ("each token attends mostly to itself", "mostly to itself", True), ("almost a third", "≈1/3", False),
    ("−3.5 points", -3.5, True), ("anything", None, True),
    # as prose writes numbers (a review's list)
    ("10^4", 10000, True), ("5×10⁻³", 0.005, True), ("1.5 × 10^-3", 0.0015, True), ("3,5", 3.5, True),
    ("1.115.394", 1115394, True), ("widths (128,256)", 256, True), ("10-20 ppl", 20, True), ("top-5", 5, True),
    ("124M", 124e6, True), ("90/10 split", 90, True), (".5", 0.5, True), ("50.7 %", 0.507, True),
    ("2023-01-05", -1, False), ("untrue", True, False), ("x", "", False),
])
def test_what_a_registry_value_states(value, expected, ok):
    assert check.stated(value, expected) is ok


def test_no_test_for_a_claim_and_an_unknown_id_in_a_test(tmp_path):
    path = _project(tmp_path, tests=textwrap.dedent('''
        import pytest

        @pytest.mark.claim("SORT-01", "SORT-09")
        def test_one():
            pass
        '''))
    out = _problems(path)
    assert out[0] == ("test_sort.py:5: SORT-09: test_one names a claim the registry lacks; add a [[claim]] table "
                      "for SORT-09 or fix the ID")
    assert "warning: claims.toml:17: SORT-02: no test names this claim: it reads untested; write its test " \
           "(@pytest.mark.claim('SORT-02'))" in out


def test_the_command_lists_every_problem_and_exits_1_on_an_error(tmp_path, monkeypatch, capsys):
    claims = dict(CLAIMS, **{"SORT-01": ("Insertion sort compares 46 pairs", "45", "fast")})
    monkeypatch.chdir(_project(tmp_path, claims))
    with pytest.raises(SystemExit) as e:
        main(["check"])
    out = capsys.readouterr().out.splitlines()
    assert e.value.code == 1
    assert out[0].startswith("error   claims.toml:8: SORT-01: quote 'Insertion sort compares 46 pairs' not found")
    assert out[1].startswith("warning claims.toml:26: SORT-03: quote 'Quicksort is fast' found 2 times")
    assert out[2] == "claims.toml: 3 claims, 3 tests read; 1 error(s), 1 warning(s)"


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.startswith("claimcheck ")


# ---- at the start of every pytest run -----------------------------------------------------------

def _pytest(pytester, *args):
    return pytester.runpytest("-p", "no:cacheprovider", *args)


def test_a_mistyped_quote_stops_the_run_before_its_first_test(pytester):
    claims = dict(CLAIMS, **{"SORT-01": ("Insertion sort compares 46 pairs", "45", "fast")})
    _project(pytester.path, claims)
    result = _pytest(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*claimcheck check: 1 error(s)*",
                                 "claims.toml:8: SORT-01: quote 'Insertion sort compares 46 pairs' not found in "
                                 "text.md; nearest, line 3*"])
    assert not (pytester.path / "out" / "claims.json").exists()


def test_a_wrapped_quote_holds_and_the_duplicate_is_a_note(pytester):
    _project(pytester.path)
    result = _pytest(pytester)
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*note: claims.toml:26: SORT-03: quote 'Quicksort is fast' found 2 times*"])


def test_an_expected_the_registry_does_not_state_is_a_note_when_it_runs(pytester):
    """Where the source cannot tell (expected computed), the fixture notes it: one line in the
    run's notes; the report shows the registry's value as the document's."""
    _project(pytester.path, tests=textwrap.dedent('''
        import pytest

        @pytest.mark.claim("SORT-01", "SORT-02", "SORT-03")
        def test_one(claim_record):
            doc = 40 + 4
            claim_record("SORT-01", 44, expected=doc)
        '''))
    result = _pytest(pytester)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*note: test_sort.py::test_one: claim_record('SORT-01', expected=44): the registry's value is '45'*"])
