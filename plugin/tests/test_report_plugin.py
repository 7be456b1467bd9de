"""The report plugin, tested the way it is used: real pytest runs in a scratch directory."""
import json
import os
from pathlib import Path

import pytest

from claimcheck.cli import main as report_main
from claimcheck.storage import prune_runs


PLUGIN = Path(__file__).resolve().parents[1]  # plugin/: the claimcheck package

IDS = ["P-01", "F-01", "X-01", "S-01", "U-01", "D-01", "M-01", "G-01", "C-01", "N-01"]
SOURCES = '''[[source]]
id = "IT"
file = "it.txt"
title = "The first text"
language = "it"

[[source]]
id = "PL"
file = "pl.txt"
title = "The second text"
language = "pl"

'''
# each claim's quote is a sentence of its source
VALUES = {"P-01": "2.5", "F-01": "7.26", "X-01": "0.7", "G-01": "8.15"}  # what the tests' records expect
TEXTS = {"it": " ".join(f"The quote of {cid}." for cid in IDS if cid != "F-01"), "pl": "The quote of F-01."}
REGISTRY = SOURCES + "\n".join(f'''[[claim]]
id = "{cid}"
source = "{'PL' if cid == 'F-01' else 'IT'}"
section = "s{cid[0]}"
where = "L1"
quote = "quote of {cid}"
statement = "statement of {cid}"
value = "{VALUES.get(cid, f'doc value of {cid}')}"
kind = "{kind}"
tier = "{tier}"
''' + ('untestable = "a definition"\n' if kind == "descriptive" else "")
    for cid, kind, tier in [("P-01", "exact", "fast"), ("F-01", "numeric", "fast"),
                            ("X-01", "qualitative", "slow"), ("S-01", "numeric", "slow"),
                            ("U-01", "exact", "fast"), ("D-01", "descriptive", "none"),
                            ("M-01", "exact", "fast"), ("G-01", "numeric", "slow"),
                            ("C-01", "numeric", "fast"), ("N-01", "exact", "fast")])

TESTS = '''
import pytest

@pytest.mark.fast
@pytest.mark.claim("P-01")
def test_passes(claim_record):
    claim_record("P-01", 2.5, expected=2.5, tolerance="exact")

@pytest.mark.fast
@pytest.mark.claim("F-01")
def test_fails(claim_record):
    claim_record("F-01", 3.0, expected=7.26)
    assert 3.0 == 7.26

@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("X-01")
@pytest.mark.xfail(strict=True, raises=AssertionError, reason="reproduction disagrees")
def test_diverges(claim_record):
    claim_record("X-01", 0.3, expected=0.7)
    assert 0.3 > 0.6

@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("S-01")
def test_skips():
    pytest.skip("no corpus: set CLAIMS_DATA_DIR")

@pytest.mark.fast
@pytest.mark.claim("M-01")
def test_part_one(claim_record):
    claim_record("M-01", 1, label="part one")

@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("M-01")
def test_part_two(claim_record):
    claim_record("M-01", 2, label="part two")

@pytest.mark.fast
@pytest.mark.claim("N-01")
def test_records_nothing():
    pass

@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("G-01")
@pytest.mark.xfail(strict=True, raises=AssertionError, reason="at CI scale the effect is too small")
def test_ci_scale_diverges(claim_record):
    claim_record("G-01", 1.2, expected=8.15)
    assert 1.2 > 3

@pytest.mark.gpu
@pytest.mark.claim("G-01")
def test_full_scale_holds(claim_record):
    claim_record("G-01", 8.0, expected=8.15)

@pytest.mark.fast
@pytest.mark.claim("C-01")
@pytest.mark.xfail(strict=True, raises=AssertionError, reason="a canned divergence")
def test_crashes_before_measuring():
    {}["the field the test reads"]
'''

SCALES_INI = ("claimcheck_scales =\n    analytic: no training\n    ci (CI scale): reduced\n    full (full scale): the text's\n"
              "claimcheck_default_scales =\n    fast: analytic\n    gpu: full\n")

EXPECTED = {"P-01": "holds", "F-01": "fails", "X-01": "diverges", "S-01": "not-run",
            "U-01": "untested", "D-01": "descriptive", "M-01": "holds", "G-01": "holds",
            "C-01": "fails", "N-01": "not-measured"}


@pytest.fixture
def scratch(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(PLUGIN))  # xdist workers import the plugin too
    pytester.makefile(".toml", claims=REGISTRY)
    pytester.makefile(".txt", **TEXTS)
    pytester.makepyfile(test_sample=TESTS)
    pytester.makeini("[pytest]\nmarkers =\n    fast: f\n    slow: s\n    gpu: g\n" + SCALES_INI)
    return pytester


def _run(p, *args, subprocess=False):
    run = p.runpytest_subprocess if subprocess else p.runpytest  # in-process: no interpreter start-up
    result = run("--claims-registry", "claims.toml", "--claims-runslow", "--claims-report-scope=run",
                 "--claims-report-dir", "out", "-p", "no:cacheprovider", *args)
    doc = json.loads((p.path / "out" / "claims.json").read_text(encoding="utf-8"))
    return result, doc


def by_id(doc):
    return {c["id"]: c for c in doc["claims"]}


def _statuses(doc):
    return {c["id"]: c["status"] for c in doc["claims"]}


@pytest.mark.fast
def test_each_claim_gets_exactly_one_verdict(scratch):
    result, doc = _run(scratch)
    assert _statuses(doc) == EXPECTED
    assert set(doc) >= {"generated", "commit", "info", "tiers", "scales", "sources", "summary", "claims"}
    keys = {"id", "source", "section", "where", "line", "quote", "statement", "expected", "measured", "tolerance",
            "tier", "status", "scale", "reason", "details", "scales", "tests", "headline"}
    # "diagnosis" only where a grid reported one, "correction_proposal" only for an erratum,
    # "broken" only where a test raised something other than an assertion (C-01)
    assert all(set(c) - {"correction_proposal", "broken"} == keys | {"records"} for c in doc["claims"])
    assert [c["id"] for c in doc["claims"] if c.get("broken")] == ["C-01"]
    assert {c["id"] for c in doc["claims"] if "correction_proposal" in c} == {
        c for c, s in EXPECTED.items() if s == "diverges"}
    assert doc["summary"] == {"holds": 3, "fails": 2, "diverges": 1, "undecided": 0, "suspect": 0, "not-measured": 1,
                              "not-run": 1, "untested": 1, "descriptive": 1, "undecided at the cap": 0}
    # a test that passed and recorded nothing shows no evidence: not a holds
    assert by_id(doc)["N-01"]["reason"] == ("1 test passed, and none recorded a value for N-01: claim_record(...) "
                                            "puts what a test measured in the report")
    by = {c["id"]: c for c in doc["claims"]}
    assert by["F-01"]["where"] == "L1" and by["F-01"]["line"] == 1  # the registry's where, the source's line
    assert by["F-01"]["measured"] == 3.0 and by["F-01"]["expected"] == "7.26"  # the registry's value
    assert "no corpus" in by["S-01"]["reason"]
    assert "reproduction disagrees" in by["X-01"]["reason"]
    assert by["U-01"]["expected"] == "doc value of U-01"  # the registry's value when no test says
    assert by["X-01"]["scale"] == "ci" and by["P-01"]["scale"] == "analytic"
    assert by["M-01"]["scales"].keys() == {"analytic", "ci"}
    result.stdout.fnmatch_lines(["*claimcheck*", "*FAILS*F-01*", "*DIVERGES*X-01*"])


@pytest.mark.slow  # two worker interpreters: seconds, not milliseconds
def test_verdicts_are_identical_under_xdist(scratch):
    pytest.importorskip("xdist", reason="pytest-xdist is not installed")
    _, serial = _run(scratch)
    _, parallel = _run(scratch, "-n", "2", subprocess=True)
    assert _statuses(parallel) == _statuses(serial) == EXPECTED
    assert [c["measured"] for c in parallel["claims"]] == [c["measured"] for c in serial["claims"]]


@pytest.mark.fast
def test_a_test_that_names_no_claim_needs_no_tier_marker(scratch):
    scratch.makepyfile(test_helpers="def test_one():\n    pass\n\ndef test_two():\n    pass\n")
    result, doc = _run(scratch)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # F-01 and C-01 fail by design; no usage error
    result.assert_outcomes(passed=7, failed=2, skipped=1, xfailed=2)  # the two helpers among them
    assert _statuses(doc) == EXPECTED


@pytest.mark.fast
def test_a_claim_test_without_a_marker_runs_in_its_registry_tier(scratch):
    scratch.makepyfile(test_unmarked='import pytest\n@pytest.mark.claim("U-01")\ndef test_u(claim_record):\n'
                                     '    claim_record("U-01", 1)\n')
    result, doc = _run(scratch, "-m", "fast", "test_unmarked.py")
    result.assert_outcomes(passed=1)  # -m fast selects it: U-01's registry tier is fast
    u = next(c for c in doc["claims"] if c["id"] == "U-01")
    assert u["status"] == "holds" and u["tests"] == ["test_unmarked.py::test_u"]
    assert u["records"][0]["expected"] == "doc value of U-01"  # expected defaults to the registry's value


@pytest.mark.fast
def test_every_test_that_needs_a_tier_marker_is_named_on_a_line_of_its_own(scratch):
    """Two claims of different registry tiers leave the tier open: the test must say."""
    scratch.makepyfile(test_mixed='import pytest\n@pytest.mark.claim("P-01", "X-01")\ndef test_one():\n    pass\n\n'
                                  '@pytest.mark.claim("P-01", "X-01")\ndef test_two():\n    pass\n')
    result = scratch.runpytest("--claims-registry", "claims.toml", "--claims-report-dir", "out",
                               "-p", "no:cacheprovider", "test_mixed.py")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    for name in ("test_one", "test_two"):
        assert [line for line in err.splitlines() if name in line and "registry tier fast, slow" in line
                and "carries no tier marker" in line], err


@pytest.mark.fast
def test_deselected_tiers_are_not_run_with_the_reason(scratch):
    _, doc = _run(scratch, "-m", "fast")
    by = {c["id"]: c for c in doc["claims"]}
    assert by["X-01"]["status"] == "not-run" and "slow tier not selected" in by["X-01"]["reason"]
    # the headline is read at the highest scale that ran; the CI half says it did not run
    assert by["M-01"]["status"] == "holds" and by["M-01"]["scale"] == "analytic"
    assert by["M-01"]["scales"]["ci"]["status"] == "not-run"
    assert "slow tier not selected" in by["M-01"]["scales"]["ci"]["reason"]
    assert doc["tiers"] == ["fast"]


@pytest.mark.fast
def test_runs_merge_into_one_report(scratch, tmp_path):
    _, fast = _run(scratch, "-m", "fast")
    (tmp_path / "fast.json").write_text(json.dumps(fast))
    _, slow = _run(scratch, "-m", "slow")
    (tmp_path / "slow.json").write_text(json.dumps(slow))
    out = tmp_path / "merged"
    report_main(["merge", str(tmp_path / "fast.json"), str(tmp_path / "slow.json"),
                 "--out", str(out), "--registry", str(scratch.path / "claims.toml")])
    merged = json.loads((out / "claims.json").read_text())
    assert _statuses(merged) == dict(EXPECTED, **{"G-01": "diverges"})  # its full-scale test never ran
    assert merged["tiers"] == ["fast", "slow"] and len(merged["runs"]) == 2
    assert json.loads((out / "badge.json").read_text())["message"] == "2/9 hold"
    assert "2/9 hold" in (out / "badge.svg").read_text()
    md = (out / "claims.md").read_text()
    errata = md.split("## Errata")[1].split("##")[0]
    assert "F-01" in errata and "X-01" in errata and "P-01" not in errata


def _top(scratch, *args):
    """Run pytest in the scratch project with the default scope; the report dir's claims.json."""
    result = scratch.runpytest("--claims-registry", "claims.toml", "--claims-report-dir", "out",
                               "-p", "no:cacheprovider", *args)
    return result, json.loads((scratch.path / "out" / "claims.json").read_text(encoding="utf-8"))


@pytest.mark.fast
def test_the_report_dir_shows_each_test_as_the_latest_run_that_reached_it(scratch):
    """A slow-only run after a fast one: the top-level report keeps the fast tier's verdicts and
    erratum, names both runs, and each run's own report stays its own."""
    _top(scratch, "-m", "fast")
    result, top = _top(scratch, "-m", "slow", "--claims-runslow")
    assert by_id(top)["F-01"]["status"] == "fails" and by_id(top)["P-01"]["status"] == "holds"  # from the fast run
    assert by_id(top)["X-01"]["status"] == "diverges"  # from the slow run
    assert [r["tests"] for r in top["runs"]] == [5, 5] and top["tiers"] == ["fast", "slow"]
    result.stdout.fnmatch_lines(["*it shows each test as the latest run that reached it: * (5 tests); * (5 tests)*"])
    own = sorted((scratch.path / "out" / "runs").glob("*/claims.json"), key=lambda p: p.stat().st_mtime)
    assert [json.loads(p.read_text())["tiers"] for p in own] == [["fast"], ["slow"]]
    # a later fast run replaces what the first one saw, and only that
    scratch.makepyfile(test_sample=TESTS.replace("claim_record(\"F-01\", 3.0, expected=7.26)\n    assert 3.0 == 7.26",
                                                 "claim_record(\"F-01\", 7.26)"))
    _, top = _top(scratch, "-m", "fast")
    assert by_id(top)["F-01"]["status"] == "holds" and by_id(top)["X-01"]["status"] == "diverges"
    # this run only, as before
    _, only = _top(scratch, "-m", "fast", "--claims-report-scope=run")
    assert by_id(only)["X-01"]["status"] == "not-run"


@pytest.mark.fast
def test_a_partial_run_replaces_only_the_tests_it_reached(scratch):
    """-k, one node ID, -x: the tests a run deselected, did not collect or never reached keep the
    result of the latest run that reached them; a test deleted from the suite drops out."""
    _top(scratch, "--claims-runslow")
    _, top = _top(scratch, "-k", "test_passes")
    assert _statuses(top) == EXPECTED
    _, top = _top(scratch, "test_sample.py::test_part_one")  # the others: not collected at all
    assert _statuses(top) == EXPECTED
    _, top = _top(scratch, "-x")  # stops at the first failure: the rest never reported
    assert _statuses(top) == EXPECTED
    scratch.makepyfile(test_sample=TESTS.replace("def test_passes(", "def test_renamed_passes("))
    _, top = _top(scratch, "-k", "test_part_one")
    assert not any(n.endswith("::test_passes") for n in top["tests"])  # gone from the suite
    assert by_id(top)["P-01"]["status"] == "not-run"  # its new test has not run yet


@pytest.mark.fast
def test_a_test_made_by_assignment_stays_in_the_merged_report(scratch):
    """``test_x = make_test(...)`` (a diagnosis grid's test) is still in the suite: a later run
    that does not reach it keeps its result, where only ``def test_x`` used to count."""
    scratch.makepyfile(test_made="import pytest\n\n\ndef make():\n    @pytest.mark.fast\n"
                                 "    @pytest.mark.claim('P-01')\n    def test(claim_record):\n"
                                 "        claim_record('P-01', 1.0)\n    return test\n\n\ntest_made_here = make()\n")
    _top(scratch, "test_made.py")
    _, top = _top(scratch, "-k", "test_passes")
    assert "test_made.py::test_made_here" in top["tests"]
    assert top["tests"]["test_made.py::test_made_here"]["outcome"] == "passed"


@pytest.mark.fast
def test_pruning_keeps_every_run_the_report_dir_still_reads(scratch):
    scratch.makeini("[pytest]\nclaimcheck_keep_runs = 2\nmarkers =\n    fast: f\n    slow: s\n    gpu: g\n" + SCALES_INI)
    _top(scratch, "-m", "slow", "--claims-runslow")
    for _ in range(3):
        _, top = _top(scratch, "-m", "fast")
    assert by_id(top)["X-01"]["status"] == "diverges"  # the slow run survived three fast ones
    # the two latest, and the slow run the report still reads
    assert len(list((scratch.path / "out" / "runs").iterdir())) == 3


@pytest.mark.fast
def test_a_run_that_stops_before_its_report_leaves_no_folder(scratch):
    scratch.makepyfile(test_loose='import pytest\n@pytest.mark.fast\n@pytest.mark.xfail\ndef test_x():\n    assert 0\n')
    result = scratch.runpytest("--claims-registry", "claims.toml", "--claims-report-dir", "out",
                               "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # at collection: after the run's folder was made
    runs = scratch.path / "out" / "runs"
    assert runs.is_dir() and list(runs.iterdir()) == []  # not a folder holding only progress.log


@pytest.mark.fast
def test_an_unknown_claim_id_is_flagged(scratch):
    scratch.makepyfile(test_unknown='import pytest\n@pytest.mark.fast\n@pytest.mark.claim("NOPE-99")\ndef test_x():\n    pass\n')
    result = scratch.runpytest("--claims-registry", "claims.toml", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # caught before any test runs
    result.stderr.fnmatch_lines(["*test_unknown.py:4: NOPE-99: test_x names a claim the registry lacks*"])


@pytest.mark.fast
def test_a_malformed_registry_stops_collection_with_one_line(scratch):
    scratch.makefile(".toml", claims=REGISTRY + REGISTRY[REGISTRY.index("[[claim]]"):].split("\n\n")[0] + "\n")
    result = scratch.runpytest("--claims-registry", "claims.toml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*claims.toml: claim #11 (P-01) is registered twice*"])


def _merge(tmp_path, scratch, *docs):
    paths = []
    for i, doc in enumerate(docs):
        paths.append(tmp_path / f"run{i}.json")
        paths[-1].write_text(json.dumps(doc))
    out = tmp_path / "merged"
    report_main(["merge", *map(str, paths), "--out", str(out), "--registry", str(scratch.path / "claims.toml")])
    return json.loads((out / "claims.json").read_text()), (out / "claims.md").read_text()


@pytest.mark.fast
def test_a_full_scale_pass_overturns_a_ci_scale_divergence_when_runs_merge(scratch, tmp_path):
    _, slow = _run(scratch, "-m", "slow")  # a CPU box: the CI-scale test diverges, gpu deselected
    g = {c["id"]: c for c in slow["claims"]}["G-01"]
    assert (g["status"], g["scale"]) == ("diverges", "ci")
    _, gpu = _run(scratch, "-m", "gpu")  # a CUDA box: the full-scale test passes
    merged, md = _merge(tmp_path, scratch, slow, gpu)
    g = {c["id"]: c for c in merged["claims"]}["G-01"]
    assert (g["status"], g["scale"]) == ("holds", "full")
    assert g["scales"]["ci"]["status"] == "diverges" and g["scales"]["full"]["status"] == "holds"
    assert "holds (full scale); diverges at CI scale" in md
    errata, lower = md.split("## Errata")[1].split("### Divergences at a lower scale only")
    assert "G-01" not in errata and "G-01" in lower.split("\n## ")[0]


@pytest.mark.fast
def test_a_crash_in_a_divergence_test_fails_the_claim(scratch):
    result, doc = _run(scratch)
    c = {c["id"]: c for c in doc["claims"]}["C-01"]
    assert c["status"] == "fails" and "KeyError" in c["reason"], c
    assert "a canned divergence" not in c["reason"]
    result.assert_outcomes(failed=2, passed=5, xfailed=2, skipped=1)


MORE = '''
import pytest
from claimcheck import diverges

@pytest.fixture
def broken():
    assert False, "the fixture could not load its data"

@pytest.mark.fast
@pytest.mark.claim("P-01")
@diverges("canned")
def test_setup(broken):
    pass

@pytest.mark.fast
@pytest.mark.claim("U-01")
def test_imperative():
    pytest.xfail("I give up")

@pytest.mark.fast
@pytest.mark.claim("M-01")
@diverges("canned")
def test_imperative_under_diverges():
    pytest.xfail("the mark is there, but no assertion failed")
'''


@pytest.mark.fast
def test_an_assertion_in_setup_or_pytest_xfail_is_never_a_divergence(scratch):
    scratch.makepyfile(test_more=MORE)
    _, doc = _run(scratch, "test_more.py")
    by = {c["id"]: c for c in doc["claims"]}
    assert by["P-01"]["status"] == "fails" and "in setup is not a divergence" in by["P-01"]["reason"]
    assert by["U-01"]["status"] == "fails" and "not a divergence" in by["U-01"]["reason"]
    assert by["M-01"]["status"] == "fails" and "by pytest.xfail(), not a failed assertion" in by["M-01"]["reason"]


@pytest.mark.fast
@pytest.mark.parametrize("mark", ["xfail(strict=False, raises=AssertionError, reason='r')",
                                  "xfail(strict=True, reason='r')",
                                  "xfail(strict=True, raises=Exception, reason='r')"])
def test_an_xfail_that_is_not_a_strict_assertion_divergence_stops_collection(scratch, mark):
    scratch.makepyfile(test_loose=f"import pytest\n@pytest.mark.fast\n@pytest.mark.{mark}\ndef test_x():\n    assert 0\n")
    result = scratch.runpytest("--claims-registry", "claims.toml", "test_loose.py")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*test_x: an xfail here must be claimcheck.diverges*"])


@pytest.mark.slow  # three interpreters
def test_a_mistake_found_at_collection_is_one_line_under_xdist_too(scratch):
    """xdist's workers collect: they run nothing and the controller ends with exit 4 and the
    line, not an INTERNALERROR."""
    pytest.importorskip("xdist", reason="pytest-xdist is not installed")
    scratch.makepyfile(test_loose="import pytest\n@pytest.mark.fast\n@pytest.mark.xfail\ndef test_x():\n    assert 0\n")
    result = scratch.runpytest_subprocess("--claims-registry", "claims.toml", "-n", "2", "test_loose.py")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    out = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in out and out.count("test_x: an xfail here must be claimcheck.diverges") == 1, out


@pytest.mark.fast
def test_a_slow_claim_test_without_a_scale_stops_collection(scratch):
    scratch.makepyfile(test_noscale='import pytest\n@pytest.mark.slow\n@pytest.mark.claim("X-01")\n'
                                    'def test_x():\n    pass\n')
    result = scratch.runpytest("--claims-registry", "claims.toml", "test_noscale.py")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*test_x: a slow-tier test that names a claim declares its scale*"])


@pytest.mark.fast
def test_claims_of_uncollected_tests_are_not_collected_rather_than_untested(scratch):
    _, doc = _run(scratch, "test_sample.py::test_passes")
    by = {c["id"]: c for c in doc["claims"]}
    assert by["P-01"]["status"] == "holds"
    assert by["F-01"]["status"] == "not-run" and "not collected" in by["F-01"]["reason"]
    assert by["U-01"]["status"] == "untested" and by["D-01"]["status"] == "descriptive"
    _, doc = _run(scratch, "-k", "passes")
    by = {c["id"]: c for c in doc["claims"]}
    assert by["F-01"]["status"] == "not-run" and "deselected by -k 'passes'" in by["F-01"]["reason"]


PINS = '''
import pytest

from claimcheck import pin_checked

def _pin(request, name):
    pin_checked(request.node, name, f"fixtures/pins/{name}.npz", tolerance="rtol 1e-6", meaning="m")

@pytest.mark.fast
def test_fresh_pin(request):
    _pin(request, "a")

@pytest.mark.fast
def test_stale_pin(request):
    _pin(request, "b")
    pytest.fail("pin fixtures/pins/b.npz is stale", pytrace=False)
'''


@pytest.mark.fast
def test_pins_are_reported_apart_and_never_change_a_verdict(scratch):
    scratch.makepyfile(test_pins=PINS)
    _, doc = _run(scratch)
    pins = {p["name"]: p for p in doc["pins"]}
    assert pins["a"]["status"] == "fresh" and pins["b"]["status"] == "stale"
    assert "is stale" in pins["b"]["reason"]
    assert _statuses(doc) == EXPECTED
    md = (scratch.path / "out" / "claims.md").read_text()
    assert "## Pins" in md and "fixtures/pins/b.npz` | stale" in md


EVIDENCE = '''
import pytest
from claimcheck import evidence_note

@pytest.fixture
def judged_evidence(request):
    yield
    evidence_note(request.node, "evidence recorded on CPU X (2 threads), 2026-11-30")

@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("G-01")
def test_ci_scale(claim_record):  # G-01's registry tier
    claim_record("G-01", 8.1)

@pytest.mark.gpu
@pytest.mark.claim("G-01")
def test_full_scale_holds(judged_evidence, claim_record):
    claim_record("G-01", 8.2)
'''


@pytest.mark.fast
def test_a_verdict_on_committed_evidence_says_whose_evidence(scratch):
    scratch.makepyfile(test_sample=EVIDENCE)  # replaces the sample: G-01 is judged on evidence only
    _, doc = _run(scratch, "-m", "gpu")
    g = next(c for c in doc["claims"] if c["id"] == "G-01")
    assert g["status"] == "holds" and g["scale"] == "full"
    assert g["details"][-1] == "evidence recorded on CPU X (2 threads), 2026-11-30"
    assert "evidence" not in g["reason"]  # provenance is a detail, not the reason


@pytest.mark.fast
def test_diff_lists_the_claims_judged_differently_and_why(scratch, tmp_path, capsys):
    _, a = _run(scratch)
    _, b = _run(scratch, "-m", "fast")
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps(b))
    with pytest.raises(SystemExit) as e:
        report_main(["diff", str(tmp_path / "a.json"), str(tmp_path / "a.json")])
    assert e.value.code == 0 and "0 of 10 claims differ" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        report_main(["diff", str(tmp_path / "a.json"), str(tmp_path / "b.json")])
    out = capsys.readouterr().out
    assert e.value.code == 1
    assert "X-01" in out and "diverges (CI scale)" in out and "P-01" not in out
    assert "CI scale measured in one run only" in out and "0 disagree at a scale both runs measured" in out
    # the fast run could not measure CI scale: with --measured, only a disagreement fails
    with pytest.raises(SystemExit) as e:
        report_main(["diff", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--measured"])
    assert e.value.code == 0
    flipped = json.loads(json.dumps(a))
    x = next(c for c in flipped["claims"] if c["id"] == "X-01")
    x["status"] = x["scales"]["ci"]["status"] = "holds"
    (tmp_path / "c.json").write_text(json.dumps(flipped))
    with pytest.raises(SystemExit) as e:
        report_main(["diff", str(tmp_path / "a.json"), str(tmp_path / "c.json"), "--measured"])
    assert e.value.code == 1 and "disagrees at CI scale" in capsys.readouterr().out


PROGRESS = '''
import pytest
from claimcheck.progress import tracker

@pytest.mark.fast
def test_trains():
    step = tracker("fam/arm/seed0", 3)
    for s in (1, 2, 3):
        step(s)
'''


@pytest.mark.fast
def test_training_progress_reaches_the_terminal_and_the_report(scratch):  # the inner run owns its log
    scratch.makepyfile(test_progress=PROGRESS)
    result, doc = _run(scratch, "test_progress.py")
    result.stdout.fnmatch_lines(["*[[]train[]] fam/arm/seed0 * step      1/3 *",
                                 "*[[]train[]] fam/arm/seed0 * done: 3 steps in * s"])
    assert [t["label"] for t in doc["runs"][0]["training"]] == ["fam/arm/seed0"]
    assert "done: 3 steps" in (scratch.path / "out" / "runs" / doc["runs"][0]["run"] / "progress.log").read_text()
    assert "## Training runs" in (scratch.path / "out" / "claims.md").read_text()


@pytest.mark.slow  # two worker interpreters
def test_training_progress_reaches_the_terminal_under_xdist(scratch):
    pytest.importorskip("xdist", reason="pytest-xdist is not installed")
    scratch.makepyfile(test_progress=PROGRESS)
    result, doc = _run(scratch, "test_progress.py", "-n", "2", subprocess=True)
    result.stdout.fnmatch_lines(["*[[]train[]] fam/arm/seed0 * done: 3 steps in * s"])
    assert [t["label"] for t in doc["runs"][0]["training"]] == ["fam/arm/seed0"]


@pytest.mark.fast
def test_a_missing_source_text_stops_the_run_with_one_line(scratch):
    (scratch.path / "pl.txt").unlink()
    result = scratch.runpytest("--claims-registry", "claims.toml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: source PL: cannot read */pl.txt (No such file or directory); fix its file "
                                 "in the registry's *source* table"])


@pytest.mark.fast
def test_the_command_finds_the_registry_the_ini_names(scratch, monkeypatch, capsys):
    from claimcheck.cli import default_registry
    assert default_registry(scratch.path) is None  # tox.ini names none
    (scratch.path / "pytest.ini").write_text("[pytest]\nclaimcheck_registry = claims.toml\n")
    assert default_registry(scratch.path) == scratch.path / "claims.toml"
    (scratch.path / "pyproject.toml").write_text('[tool.pytest.ini_options]\nclaimcheck_registry = "other.toml"\n')
    assert default_registry(scratch.path) == scratch.path / "claims.toml"  # pytest.ini first, as pytest reads
    (scratch.path / "pytest.ini").rename(scratch.path / "kept.ini")
    assert default_registry(scratch.path) == scratch.path / "other.toml"  # then pyproject.toml
    (scratch.path / "kept.ini").rename(scratch.path / "pytest.ini")
    monkeypatch.chdir(scratch.path)
    (scratch.path / "pyproject.toml").unlink()
    with pytest.raises(SystemExit) as e:
        report_main(["stamp"])
    assert e.value.code == 0 and (scratch.path / "claims.stamps.json").is_file()
    (scratch.path / "pytest.ini").unlink()
    with pytest.raises(SystemExit, match="^claimcheck: no registry: pass --registry"):
        report_main(["stamp"])


# Layouts of a project's pytest configuration: {file: text}, written in a folder and its subfolder "sub".
INI_LAYOUTS = {
    "pytest.toml first": {"pytest.toml": '[pytest]\nclaimcheck_registry = "a.toml"\n',
                          "pytest.ini": "[pytest]\nclaimcheck_registry = b.toml\n"},
    "an empty pytest.ini still wins": {"pytest.ini": "", "pyproject.toml": '[tool.pytest.ini_options]\nclaimcheck_registry = "b.toml"\n'},
    "native [tool.pytest]": {"pyproject.toml": '[tool.pytest]\nclaimcheck_registry = "a.toml"\n'},
    "tox.ini's [pytest] without the key ends the search": {
        "tox.ini": "[pytest]\naddopts = -q\n", "setup.cfg": "[tool:pytest]\nclaimcheck_registry = b.toml\n"},
    "a tox.ini without [pytest] is passed over": {
        "tox.ini": "[tox]\nenvlist = py\n", "setup.cfg": "[tool:pytest]\nclaimcheck_registry = b.toml\n"},
    "a pyproject.toml without pytest is passed over": {
        "pyproject.toml": "[project]\nname = 'x'\n", "setup.cfg": "[tool:pytest]\nclaimcheck_registry = b.toml\n"},
    "sub's own file, nearer, wins": {"pytest.ini": "[pytest]\nclaimcheck_registry = a.toml\n",
                                     "sub/tox.ini": "[pytest]\nclaimcheck_registry = c.toml\n"},
    "a multi-line value": {"pytest.ini": "[pytest]\nclaimcheck_tiers =\n    fast: quick\n    slow: long\n"},
}


@pytest.mark.fast
@pytest.mark.parametrize("layout", INI_LAYOUTS)
def test_the_command_reads_the_ini_pytest_reads_from_a_folder_and_below_it(tmp_path, layout):
    """pytest's own lookup (its private locate_config, used only here to check ours against it):
    the same file, from the folder and from a subfolder, and the same values."""
    from _pytest.config.findpaths import locate_config
    from claimcheck.cli import find_ini
    (tmp_path / "sub").mkdir()
    for name, text in INI_LAYOUTS[layout].items():
        (tmp_path / name).write_text(text)
    for start in (tmp_path, tmp_path / "sub"):
        _, inifile, cfg, *_ = locate_config(start, [start])
        path, options = find_ini(start)
        assert path == inifile
        assert options == {k: v.value for k, v in cfg.items()}


@pytest.mark.fast
def test_a_registry_named_by_an_ini_above_is_found_from_below_it(tmp_path, monkeypatch):
    from claimcheck.cli import default_registry, find_ini
    (tmp_path / "docs").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\nclaimcheck_registry = "claims.toml"\n')
    assert default_registry(tmp_path / "docs") == tmp_path / "claims.toml"  # from the ini's folder, as pytest's
    (tmp_path / "pytest.ini").write_text("[pytest\n")
    with pytest.raises(SystemExit, match=r"^claimcheck: .*pytest.ini: .*; fix the file \(pytest reads it too\)$"):
        find_ini(tmp_path / "docs")


@pytest.mark.fast
def test_collecting_only_writes_no_report(scratch):
    result = scratch.runpytest("--claims-registry", "claims.toml", "--claims-report-dir", "out", "--co")
    assert result.ret == 0 and not (scratch.path / "out").exists()


@pytest.mark.fast
def test_a_document_with_scales_of_its_own_needs_no_default_scales(scratch):
    scratch.makeini("[pytest]\nclaimcheck_scales =\n    quick: by formula\n    deep (deep scale): by simulation\n")
    scratch.makepyfile(test_own='import pytest\n@pytest.mark.fast\n@pytest.mark.scale("deep")\n'
                                '@pytest.mark.claim("P-01")\ndef test_x(claim_record):\n    claim_record("P-01", 1)\n')
    result, doc = _run(scratch, "test_own.py")
    assert result.ret == 0 and doc["scales"] == {"quick": "quick", "deep": "deep scale"}
    (p01,) = [c for c in doc["claims"] if c["id"] == "P-01"]
    assert p01["headline"] == "holds (deep scale)"


@pytest.mark.fast
def test_every_errata_table_row_has_its_header_s_columns(scratch):
    _, doc = _run(scratch)
    md = (scratch.path / "out" / "claims.md").read_text(encoding="utf-8")
    lower = md.split("### Divergences at a lower scale only", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in lower.splitlines() if line.startswith("|")]
    cells = lambda line: len(line.replace("\\|", "").split("|")) - 2  # noqa: E731
    assert len(rows) >= 3 and {cells(r) for r in rows} == {7}, rows  # header, rule, G-01
    assert any(r.startswith("| G-01 | holds (full scale); diverges at CI scale | — |") for r in rows), rows


# ---- keeping runs/ bounded -------------------------------------------------------------------

@pytest.mark.fast
def test_prune_runs_keeps_the_latest_finished_runs_and_never_one_still_going(tmp_path):
    names = ["20261201T100000Z-1-aaaa", "20261201T110000Z-2-bbbb", "20261202T090000Z-3-cccc",
             "20261202T100000Z-4-dddd"]
    for n in names:
        (tmp_path / n).mkdir()
        (tmp_path / n / "claims.json").write_text("{}")
    going = tmp_path / "20261130T000000Z-9-eeee"  # the oldest, but no claims.json: still running
    going.mkdir()
    (tmp_path / "notes").mkdir()  # not a run's folder
    (tmp_path / "notes" / "claims.json").write_text("{}")
    for i, n in enumerate(names):  # finished in this order, except the first: a long run that ended last
        os.utime(tmp_path / n / "claims.json", (1000 + i, 1000 + i) if i else (2000, 2000))
    assert prune_runs(tmp_path, 0) == [] and prune_runs(tmp_path, 9) == []
    assert prune_runs(tmp_path, 2, current=tmp_path / names[2]) == [tmp_path / names[1]]  # never the current run
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([names[0], *names[2:], going.name, "notes"])
    assert prune_runs(tmp_path, 2) == [tmp_path / names[2]]
    assert prune_runs(tmp_path / "absent", 2) == []


@pytest.mark.fast
def test_claimcheck_keep_runs_bounds_runs_and_a_bad_value_is_one_line(scratch):
    scratch.makeini("[pytest]\nclaimcheck_keep_runs = 2\nmarkers =\n    fast: f\n    slow: s\n    gpu: g\n" + SCALES_INI)
    for _ in range(3):
        _run(scratch, "-m", "fast")
    assert len(list((scratch.path / "out" / "runs").iterdir())) == 2
    scratch.makeini("[pytest]\nclaimcheck_keep_runs = all\nmarkers =\n    fast: f\n")
    result = scratch.runpytest("--claims-registry", "claims.toml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*claimcheck_keep_runs = 'all': a whole number expected, 0 to keep every run*"])


# ---- undecided: a rule that cannot decide is neither a pass nor a divergence -----------------

UNDECIDED = '''
import pytest
from claimcheck import diverges, undecided

@pytest.fixture
def early():
    undecided("a fixture measured nothing")

@pytest.mark.fast
@pytest.mark.claim("P-01")
def test_straddles(claim_record):
    claim_record("P-01", [1.23, 0.12, 2.34], tolerance="equivalence: 90 % interval inside [0.9, 2.7]")
    undecided("the 90 % interval [0.12, 2.34] straddles the band [0.9, 2.7]: more seeds decide")

@pytest.mark.fast
@pytest.mark.claim("U-01")
def test_in_a_fixture(early):
    pass

@pytest.mark.fast
@pytest.mark.claim("M-01")
@diverges("canned")
def test_under_diverges():
    undecided("the mark is there, but nothing was asserted; its looks are spent", final=True)
'''


@pytest.mark.parametrize("workers", [pytest.param((), marks=pytest.mark.fast),
                                     pytest.param(("-n", "2"), marks=pytest.mark.slow)])  # three interpreters
def test_undecided_is_its_own_verdict_only_from_the_tests_own_call(scratch, workers):
    if workers:
        pytest.importorskip("xdist", reason="pytest-xdist is not installed")
    scratch.makepyfile(test_undecided=UNDECIDED)
    result, doc = _run(scratch, "test_undecided.py", *workers, subprocess=bool(workers))
    by = {c["id"]: c for c in doc["claims"]}
    assert by["P-01"]["status"] == "undecided" and by["P-01"]["measured"] == [1.23, 0.12, 2.34]
    assert by["P-01"]["reason"] == "the 90 % interval [0.12, 2.34] straddles the band [0.9, 2.7]: more seeds decide"
    assert by["P-01"]["details"] == ["test_undecided.py::test_straddles: undecided"]
    assert by["U-01"]["status"] == "fails" and "undecided() in setup is not a verdict" in by["U-01"]["reason"]
    assert by["M-01"]["status"] == "undecided"  # not a failed assertion, so never a divergence
    assert by["M-01"]["at_cap"] and "at_cap" not in by["P-01"]  # final=True: its declared looks are spent
    assert by["M-01"]["headline"].startswith("undecided at the cap") and by["P-01"]["headline"].startswith("undecided (")
    assert doc["summary"]["undecided"] == 2 and doc["summary"]["undecided at the cap"] == 1
    result.stdout.fnmatch_lines(["*1 fails, 0 diverges, 2 undecided (1 at the cap)*", "*UNDECIDED P-01*",
                                 "*UNDECIDED AT THE CAP M-01*"])
    md = (scratch.path / "out" / "claims.md").read_text()
    undecided_part = md.split("### Undecided")[1].split("##")[0]
    assert "P-01" in undecided_part and "M-01" in undecided_part and "P-01" not in md.split("## Errata")[1].split("###")[0]
    page = (scratch.path / "out" / "index.html").read_text()
    section = page.split("<h3>Undecided</h3>")[1].split("</section>")[0]
    assert 'href="#P-01"' in section and 'href="#M-01"' in section and 'class="erratum undecided"' in section


# ---- verdict pins: a verdict that moves fails the run until its pin changes -----------------

PINNED = '''
import pytest

@pytest.mark.fast
@pytest.mark.claim("P-01")
def test_p(claim_record):
    claim_record("P-01", 2.5, expected=2.5, tolerance="exact")

@pytest.mark.fast
@pytest.mark.claim("X-01")
def test_x(claim_record):
    claim_record("X-01", 0.7, expected=0.7, tolerance="exact")
'''


@pytest.mark.fast
def test_a_verdict_that_moves_from_its_pin_fails_the_run_until_it_is_repinned(scratch):
    scratch.makepyfile(test_pinned=PINNED)
    scratch.makeini("[pytest]\nmarkers =\n    fast: f\n    slow: s\n    gpu: g\n" + SCALES_INI
                    + "claimcheck_verdict_pins = verdicts.toml\n")
    result, _ = _run(scratch, "test_pinned.py", "--claims-repin")
    assert result.ret == 0 and '"analytic" = "holds"' in (scratch.path / "verdicts.toml").read_text()
    result, _ = _run(scratch, "test_pinned.py")
    assert result.ret == 0
    pins = scratch.path / "verdicts.toml"
    pins.write_text(pins.read_text().replace('["X-01"]\n"analytic" = "holds"', '["X-01"]\n"analytic" = "diverges"'))
    result, _ = _run(scratch, "test_pinned.py")
    assert result.ret == 1  # every test passed; the verdict moved
    result.stdout.fnmatch_lines(["*VERDICT MOVED X-01 at analytic: holds, pinned diverges: if the move is right, "
                                 "run with --claims-repin and commit verdicts.toml with the reason"])
    # loose: holds against diverges still fails; undecided against holds is a note
    result, _ = _run(scratch, "test_pinned.py", "--claims-pins=loose")
    assert result.ret == 1
    pins.write_text(pins.read_text().replace('"analytic" = "diverges"', '"analytic" = "undecided"'))
    result, _ = _run(scratch, "test_pinned.py", "--claims-pins=loose")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*note: verdict moved (a note under --claims-pins=loose): X-01 at analytic: holds, "
                                 "pinned undecided*"])
    assert _run(scratch, "test_pinned.py", "--claims-pins=off")[0].ret == 0
    pins.write_text("[broken")
    result, _ = _run(scratch, "test_pinned.py")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*ERROR: verdict pins: *verdicts.toml: *restore it from git, or rewrite it with "
                                 "--claims-repin"])
    assert _run(scratch, "test_pinned.py", "--claims-repin")[0].ret == 0  # the advice works
    assert _run(scratch, "test_pinned.py")[0].ret == 0
    # a run that leaves a claim's test deselected compares nothing of it
    pins.write_text(pins.read_text().replace('["X-01"]\n"analytic" = "holds"', '["X-01"]\n"analytic" = "diverges"'))
    assert _run(scratch, "test_pinned.py", "--deselect", "test_pinned.py::test_x")[0].ret == 0


@pytest.mark.fast
def test_a_scale_some_of_whose_tests_did_not_run_is_neither_compared_nor_pinned():
    from claimcheck import verdict_pins
    from claimcheck.verdict import claim_verdict
    from types import SimpleNamespace
    claim = SimpleNamespace(id="W-07", descriptive=False)
    tests = [("t.py::test_a", {"outcome": "undecided", "reason": "r", "tier": "fast", "scale": "full"}),
             ("t.py::test_b", {"outcome": "deselected", "reason": "-k", "tier": "fast", "scale": "full"})]
    v = claim_verdict(claim, tests)
    (scale, at), = v["scales"].items()
    assert at["status"] == "undecided" and at["partial"]
    doc = {"claims": [{"id": "W-07", "scales": v["scales"]}]}
    assert verdict_pins.measured(doc) == {}
    assert verdict_pins.moved(doc, {"W-07": {scale: "diverges"}}) == ([], [])
