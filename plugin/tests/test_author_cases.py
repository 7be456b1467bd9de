"""A new author's small Markdown document: each case that was silent or
misleading gives one clear line (what is wrong, and how to fix it) or the right status.

    1. a quote across two table rows (or list items) is an error of ``claimcheck check``
    2. two claims with the same quote: a warning that names the other claim
    3. a registry tier the project does not declare: the same one line in ``check`` as in a run
    4. an ``expected`` with four or more decimals is read at the precision written
    5. a measured number shows at the precision recorded, never rounded onto or across its bound;
       a [mean, lo, hi] triple reads "mean [lo, hi]"
    6. a suspect erratum stays in the Errata table, marked suspect; "1 test", not "1 tests"
    7. a stamp covers the quoted sentence within its list item, not the whole list
"""
import json
import sys
import textwrap
from pathlib import Path

import pytest

from claimcheck import check, fingerprint
from claimcheck.chapters import annotate
from claimcheck.cli import main
from claimcheck.fmt import fmt, measured, number, plural
from claimcheck.markdown import markdown
from claimcheck.registry import load_registry
from claimcheck.report import build, terminal_lines
from claimcheck.suite import read

pytestmark = pytest.mark.fast

TEXT = """# Timing

| method | error |
|---|---|
| fast | 0.0016 |
| slow | below 0.001 |

The steps:

- sorting takes 3.14 seconds.
- merging takes 2 seconds
  on most machines
- the mean is 5 within [4, 6]

Pi is 3.14103, roughly.
"""

CLAIMS = {  # id: (quote, value, tier)
    "T-01": ("fast | 0.0016", "0.0016", "fast"),
    "T-02": ("slow | below 0.001", "< 0.001", "fast"),
    "T-03": ("sorting takes 3.14 seconds", "3.14", "fast"),
    "T-04": ("merging takes 2 seconds on most machines", "2", "fast"),
    "T-05": ("the mean is 5 within [4, 6]", "5", "fast"),
    "T-06": ("Pi is 3.14103", "3.14103", "fast"),
}

TESTS = '''
import pytest
from claimcheck import diverges

@pytest.mark.claim("T-01")
def test_one(claim_record):
    claim_record("T-01", 0.0016, expected=0.0016)

@pytest.mark.claim("T-02")
def test_two(claim_record):
    claim_record("T-02", 0.00099999975)

@pytest.mark.claim("T-03")
@diverges("it takes 3.5 seconds")
def test_three(claim_record):
    assert claim_record("T-03", [3.5, 3.4, 3.6]) == 3.14

@pytest.mark.claim("T-04")
def test_four(claim_record):
    claim_record("T-04", 2)

@pytest.mark.claim("T-05")
def test_five(claim_record):
    claim_record("T-05", [5, 4, 6])

@pytest.mark.claim("T-06")
def test_six(claim_record):
    claim_record("T-06", 3.14103)
'''


def _project(path, claims=CLAIMS, text=TEXT, tests=TESTS, tiers=("fast", "slow")):
    tables = "".join(textwrap.dedent(f'''
        [[claim]]
        id = "{cid}"
        source = "T"
        quote = "{quote}"
        statement = "s"
        value = "{value}"
        kind = "numeric"
        tier = "{tier}"
        ''') for cid, (quote, value, tier) in claims.items())
    (path / "claims.toml").write_text('[[source]]\nid = "T"\nfile = "text.md"\ntitle = "Timing"\nlanguage = "en"\n'
                                      + tables, encoding="utf-8")
    (path / "text.md").write_text(text, encoding="utf-8")
    (path / "test_t.py").write_text(tests, encoding="utf-8")
    (path / "pytest.ini").write_text("[pytest]\nclaimcheck_registry = claims.toml\nclaimcheck_report_dir = out\n"
                                     "claimcheck_tiers =\n" + "".join(f"    {t}: {t}\n" for t in tiers),
                                     encoding="utf-8")
    return path


def _problems(path):
    registry = load_registry(path / "claims.toml", None)
    return [("error: " if p.error else "warning: ") + str(p)
            for p in check.problems(registry, registry.texts(), read(path, [], ("fast", "slow")))]


def _check(path, monkeypatch, capsys):
    monkeypatch.chdir(path)
    with pytest.raises(SystemExit) as e:
        main(["check"])
    return e.value.code, capsys.readouterr().out.splitlines()


def _pytest(pytester, *args):
    return pytester.runpytest("-p", "no:cacheprovider", *args)


def _claimcheck() -> str:
    """The ``claimcheck`` command of the interpreter that runs these tests: a venv that is not
    activated (``.venv-plugin/bin/python -m pytest``) has it beside its python, not on PATH."""
    beside = Path(sys.executable).with_name("claimcheck")
    return str(beside) if beside.is_file() else "claimcheck"


def test_the_document_as_fixed_is_clean(tmp_path):
    assert _problems(_project(tmp_path)) == []


# ---- 1. a quote may not run across table rows or list items --------------------------------------

def test_a_quote_across_two_table_rows_is_an_error(tmp_path, monkeypatch, capsys):
    path = _project(tmp_path, dict(CLAIMS, **{"T-01": ("fast | 0.0016 | | slow", "0.0016", "fast")}))
    assert _problems(path) == [
        "error: claims.toml:8: T-01: quote 'fast | 0.0016 | | slow' runs across table rows of text.md (line 5); "
        "quote a passage within one table row (a claim about several: quote = [one passage per table row])"]
    code, out = _check(path, monkeypatch, capsys)
    assert code == 1 and out[0].startswith("error   claims.toml:8: T-01: quote 'fast | 0.0016 | | slow' runs across")


def test_a_quote_across_two_list_items_is_an_error_and_an_items_own_line_break_is_not(tmp_path):
    claims = dict(CLAIMS, **{"T-03": ("3.14 seconds. - merging takes", "3.14", "fast")})
    assert [p for p in _problems(_project(tmp_path, claims)) if p.startswith("error")] == [
        "error: claims.toml:26: T-03: quote '3.14 seconds. - merging takes' runs across list items of text.md "
        "(line 10); quote a passage within one list item (a claim about several: quote = [one passage per list "
        "item])"]
    # T-04 runs across its own item's line break: a hard-wrapped item, one unit
    assert fingerprint.places(TEXT, "merging takes 2 seconds on most machines", True)[0].crosses is None


def test_a_wrapped_line_that_starts_with_a_year_is_not_a_list_item():
    text = "The model was trained in\n2023. It held.\n"
    [place] = fingerprint.places(text, "trained in 2023. It held", True)
    assert place.crosses is None and place.sentence == "The model was trained in 2023. It held."


def test_a_run_stops_on_it_and_the_annotated_page_marks_no_cells(pytester, tmp_path):
    _project(pytester.path, dict(CLAIMS, **{"T-01": ("fast | 0.0016 | | slow", "0.0016", "fast")}))
    result = _pytest(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["claims.toml:8: T-01: quote 'fast | 0.0016 | | slow' runs across table rows*"])
    doc = {"claims": [{"id": "T-01", "source": "T", "quote": "fast | 0.0016 | | slow", "status": "holds",
                       "expected": "0.0016", "records": []}], "sources": [{"id": "T", "title": "T", "file": "text.md"}]}
    page = annotate(doc, "T", TEXT)
    assert "<mark" not in page.split("<table>")[1].split("</table>")[0]
    assert "run across table rows or list items, not highlighted (quote within one row or item): T-01" in page


# ---- 2. two claims with the same quote ------------------------------------------------------------

def test_two_claims_with_the_same_quote_are_a_warning_that_names_both(tmp_path):
    claims = dict(CLAIMS, **{"T-07": ("Pi  is 3.14103", "3.14103", "fast")})
    tests = TESTS + '\n@pytest.mark.claim("T-07")\ndef test_seven(claim_record):\n    claim_record("T-07", 3.14103)\n'
    assert _problems(_project(tmp_path, claims, tests=tests)) == [
        "warning: claims.toml:62: T-07: quote 'Pi  is 3.14103' is T-06's too (claims.toml:53): fine if both claims "
        "are about that sentence; else quote the passage this claim is about"]


def test_the_same_quote_is_a_note_of_the_run(pytester):
    claims = dict(CLAIMS, **{"T-07": ("Pi is 3.14103", "3.14103", "fast")})
    tests = TESTS + '\n@pytest.mark.claim("T-07")\ndef test_seven(claim_record):\n    claim_record("T-07", 3.14103)\n'
    _project(pytester.path, claims, tests=tests)
    result = _pytest(pytester)
    result.assert_outcomes(passed=6, xfailed=1)
    result.stdout.fnmatch_lines(["*note: claims.toml:62: T-07: quote 'Pi is 3.14103' is T-06's too (claims.toml:53)*"])


# ---- 3. a tier the project does not declare: check and the run say the same line -----------------

TIER_LINE = ("claims.toml: claim #2 (T-02): tier = 'medium' is not a tier this project declares; set it to one of "
             "fast, slow, none, or declare medium in claimcheck_tiers")


def test_an_undeclared_tier_is_the_same_error_in_check_as_in_a_run(pytester, monkeypatch, capsys):
    _project(pytester.path, dict(CLAIMS, **{"T-02": ("slow | below 0.001", "< 0.001", "medium")}))
    code, out = _check(pytester.path, monkeypatch, capsys)
    assert code == 1 and out[0] == f"error   {TIER_LINE}"
    assert out[1].startswith("claims.toml: 1 error(s), 0 warning(s)")
    result = _pytest(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{TIER_LINE}"])


def test_check_reads_the_tiers_the_ini_declares(tmp_path, monkeypatch, capsys):
    path = _project(tmp_path, dict(CLAIMS, **{"T-02": ("slow | below 0.001", "< 0.001", "medium")}),
                    tiers=("fast", "medium"))
    code, out = _check(path, monkeypatch, capsys)  # its test carries no marker: it runs in medium
    assert code == 0 and out == ["claims.toml: 6 claims, 6 tests read; 0 error(s), 0 warning(s)"]


# ---- 4. expected= at the precision written --------------------------------------------------------

@pytest.mark.parametrize("value, expected", [
    ("0.0016", 0.0016), ("0.00123", 0.00123), ("3.14159", 3.14159), ("2.718281828", 2.718281828),
    ("0,0016", 0.0016), ("1.2345e-3", 1.2345e-3), ("12.34567 s", 12.34567), ("-0.12345", -0.12345),
    ("1,115,394.0625", 1115394.0625), ("0.1", 0.1), ("0.01", 0.01), ("0.001", 0.001),
])
def test_a_number_with_many_decimals_states_itself(value, expected):
    assert check.stated(value, expected)


@pytest.mark.parametrize("value, expected", [
    ("0.0016", 0.001), ("0.0016", 6), ("0.0016", 0.0017), ("3.14159", 3.141), ("3.14159", 59), ("0.12345", 45),
])
def test_a_number_with_many_decimals_is_not_read_as_its_pieces(value, expected):
    assert not check.stated(value, expected)


def test_expected_equal_to_the_registry_value_is_no_warning(tmp_path):
    registry = load_registry(_project(tmp_path) / "claims.toml", None)
    assert check.expected_problem(registry["T-01"], 0.0016) is None
    assert "does not state it" in check.expected_problem(registry["T-01"], 0.0015)


# ---- 5. numbers at the precision recorded ---------------------------------------------------------

@pytest.mark.parametrize("x, against, shown", [
    (3.14103, None, "3.14103"), (3.14103, "3.14103", "3.14103"), (0.0016, "0.0016", "0.0016"),
    (0.00099999975, "< 0.001", "0.0009999997"), (45.0000001, "45", "45.0000001"), (45.0, "45", "45"),
    (0.1 + 0.2, None, "0.3"), (249750.0, None, "249750"), (123456789.123, None, "123456789"),
    (2.98e-08, None, "2.98e-08"), (3.14159265358, None, "3.14159"), (12.3456789, "12.34568", "12.345679"),
])
def test_a_float_shows_the_precision_it_was_recorded_with(x, against, shown):
    assert number(x, against) == shown
    if against and x != float(shown):  # never rounded onto or across the document's number
        b = min(check._numbers(against), key=lambda v: abs(v - x))
        assert (float(shown) < b) == (x < b) and (float(shown) == b) == (x == b)


def test_a_triple_whose_bounds_hold_its_mean_reads_mean_lo_hi():
    assert fmt([3.5, 3.4, 3.6]) == measured([3.5, 3.4, 3.6]) == "3.5 [3.4, 3.6]"
    assert fmt({"seed 0": [5, 4, 6]}) == "seed 0: 5 [4, 6]"
    assert fmt([0.5, "-inf", "inf"]) == "0.5 (one seed: no interval)"  # as claims.json writes one seed
    assert fmt([1, 2, 3]) == "[1, 2, 3]" and fmt([True, False, True]) == "[True, False, True]"


# ---- 1-7 end to end: the author's run -------------------------------------------------------------

def test_the_authors_run(pytester):
    """Stamp, then edit one list item: only its claim reads suspect, and its erratum stays listed;
    the other numbers read as recorded."""
    _project(pytester.path)
    pytester.run(_claimcheck(), "stamp")
    stamps = json.loads((pytester.path / "claims.stamps.json").read_text("utf-8"))["claims"]
    assert stamps["T-03"]["sentence"] == "- sorting takes 3.14 seconds."
    assert stamps["T-04"]["sentence"] == "- merging takes 2 seconds on most machines"  # its item, wrapped
    assert stamps["T-05"]["sentence"] == "- the mean is 5 within [4, 6]"
    (pytester.path / "text.md").write_text(TEXT.replace("3.14 seconds.", "3.14 seconds, often."), "utf-8")
    result = _pytest(pytester)
    result.assert_outcomes(passed=5, xfailed=1)
    result.stdout.fnmatch_lines(["6 checkable claims: 5 holds, 0 fails, 0 diverges, 1 suspect, *",
                                 "  SUSPECT   T-03 *the sentence changed since it was stamped; the tests said: diverges*"])
    assert "note:" not in result.stdout.str()  # expected=0.0016 is the registry's value
    md = (pytester.path / "out" / "claims.md").read_text("utf-8")
    errata = md.split("## Errata")[1].split("### Suspect")[0]
    assert "| T-03 | suspect (was diverges) |" in errata and "3.5 [3.4, 3.6]" in errata
    rows = {line.split(" | ")[0][2:]: line for line in md.splitlines() if line.startswith("| T-0")}
    assert "| 0.0009999997 " in rows["T-02"] and "| 3.14103 " in rows["T-06"] and "| 5 [4, 6] " in rows["T-05"]
    html = (pytester.path / "out" / "index.html").read_text("utf-8")
    assert '<tr class="erratum suspect"><td><a href="#T-03">' in html and "0.0009999997" in html


def test_one_test_and_one_claim_are_singular(tmp_path, monkeypatch, capsys):
    assert plural(1, "test") == "1 test" and plural(2, "test") == "2 tests" and plural(0, "test") == "0 tests"
    path = _project(tmp_path, {"T-06": CLAIMS["T-06"]},
                    tests='import pytest\n\n@pytest.mark.claim("T-06")\ndef test_six(claim_record):\n'
                          '    claim_record("T-06", 3.14103)\n')
    code, out = _check(path, monkeypatch, capsys)
    assert code == 0 and out[-1] == "claims.toml: 1 claim, 1 test read; 0 error(s), 0 warning(s)"
    registry = load_registry(path / "claims.toml", None)
    tests = {"test_t.py::test_six": {"outcome": "passed", "reason": "", "tier": "fast", "scale": None,
                                     "claims": ["T-06"], "records": []}}
    doc = build(registry, tests, [], {"T-06"}, texts=registry.texts())
    assert terminal_lines(doc)[0].startswith("1 checkable claim: ")
    assert "| T-06 |" in markdown(doc)


# ---- 7. a stamp covers its list item --------------------------------------------------------------

def test_editing_one_list_item_leaves_the_other_items_stamps(tmp_path):
    registry = load_registry(_project(tmp_path) / "claims.toml", None)
    stamps = fingerprint.stamp(registry, {"T": TEXT})
    edited = TEXT.replace("on most machines", "on most machines we tried")
    assert list(fingerprint.check(registry, {"T": edited}, stamps)) == ["T-04"]
    edited = TEXT.replace("the mean is 5", "the mean is 5.0")
    assert list(fingerprint.check(registry, {"T": edited}, stamps)) == ["T-05"]


def test_a_list_item_is_its_own_unit_in_a_plain_text_too():
    text = "Steps:\n- one thing\n  wrapped\n- another thing\n"
    [place] = fingerprint.places(text, "one thing wrapped")
    assert place.sentence == "- one thing wrapped" and place.crosses is None
