"""The report plugin, tested the way it is used: real pytest runs in a scratch directory."""
import json
from pathlib import Path

import pytest

from claims.report import main as report_main


ROOT = Path(__file__).resolve().parents[1]

REGISTRY = "\n".join(f'''[[claim]]
id = "{cid}"
source = "{'PL' if cid == 'F-01' else 'IT'}"
section = "s{cid[0]}"
where = "L1"
quote = "quote of {cid}"
statement = "statement of {cid}"
value = "doc value of {cid}"
kind = "{kind}"
tier = "{tier}"
''' + ('untestable = "a definition"\n' if kind == "descriptive" else "")
    for cid, kind, tier in [("P-01", "exact", "fast"), ("F-01", "numeric", "fast"),
                            ("X-01", "qualitative", "slow"), ("S-01", "numeric", "slow"),
                            ("U-01", "exact", "fast"), ("D-01", "descriptive", "none"),
                            ("M-01", "exact", "fast")])

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
@pytest.mark.claim("X-01")
@pytest.mark.xfail(strict=True, reason="reproduction disagrees")
def test_diverges(claim_record):
    claim_record("X-01", 0.3, expected=0.7)
    assert 0.3 > 0.6

@pytest.mark.slow
@pytest.mark.claim("S-01")
def test_skips():
    pytest.skip("no corpus: set CLAIMS_DATA_DIR")

@pytest.mark.fast
@pytest.mark.claim("M-01")
def test_part_one():
    pass

@pytest.mark.slow
@pytest.mark.claim("M-01")
def test_part_two():
    pass
'''

EXPECTED = {"P-01": "holds", "F-01": "fails", "X-01": "diverges", "S-01": "not-run",
            "U-01": "untested", "D-01": "descriptive", "M-01": "holds"}


@pytest.fixture
def scratch(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # xdist workers import the plugin too
    pytester.makefile(".toml", claims=REGISTRY)
    pytester.makepyfile(test_sample=TESTS)
    pytester.makeini("[pytest]\nmarkers =\n    fast: f\n    slow: s\n")
    return pytester


def _run(p, *args, subprocess=False):
    run = p.runpytest_subprocess if subprocess else p.runpytest  # in-process: no interpreter start-up
    result = run("-p", "claims.report", "--claims-registry", "claims.toml",
                                    "--claims-report-dir", "out", "-p", "no:cacheprovider", *args)
    doc = json.loads((p.path / "out" / "claims.json").read_text(encoding="utf-8"))
    return result, doc


def _statuses(doc):
    return {c["id"]: c["status"] for c in doc["claims"]}


@pytest.mark.fast
def test_each_claim_gets_exactly_one_verdict(scratch):
    result, doc = _run(scratch)
    assert _statuses(doc) == EXPECTED
    assert set(doc) >= {"generated", "commit", "torch", "device", "tiers", "summary", "claims"}
    keys = {"id", "source", "section", "quote", "statement", "expected", "measured", "tolerance",
            "tier", "status", "reason", "tests"}
    assert all(set(c) == keys for c in doc["claims"])
    assert doc["summary"] == {"holds": 2, "fails": 1, "diverges": 1, "not-run": 1, "untested": 1,
                              "descriptive": 1}
    by = {c["id"]: c for c in doc["claims"]}
    assert by["F-01"]["measured"] == 3.0 and by["F-01"]["expected"] == 7.26
    assert "no corpus" in by["S-01"]["reason"]
    assert "reproduction disagrees" in by["X-01"]["reason"]
    assert by["U-01"]["expected"] == "doc value of U-01"  # the registry's value when no test says
    result.stdout.fnmatch_lines(["*claimcheck*", "*FAILS*F-01*", "*DIVERGES*X-01*"])


@pytest.mark.slow  # two worker interpreters: seconds, not milliseconds
def test_verdicts_are_identical_under_xdist(scratch):
    pytest.importorskip("xdist", reason="pytest-xdist is not installed")
    _, serial = _run(scratch)
    _, parallel = _run(scratch, "-n", "2", subprocess=True)
    assert _statuses(parallel) == _statuses(serial) == EXPECTED
    assert [c["measured"] for c in parallel["claims"]] == [c["measured"] for c in serial["claims"]]


@pytest.mark.fast
def test_deselected_tiers_are_not_run_with_the_reason(scratch):
    _, doc = _run(scratch, "-m", "fast")
    by = {c["id"]: c for c in doc["claims"]}
    assert by["X-01"]["status"] == "not-run" and "slow tier not selected" in by["X-01"]["reason"]
    assert by["M-01"]["status"] == "not-run" and "the 1 that ran passed" in by["M-01"]["reason"]
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
    assert _statuses(merged) == EXPECTED
    assert merged["tiers"] == ["fast", "slow"] and len(merged["runs"]) == 2
    assert json.loads((out / "badge.json").read_text())["message"] == "2/6 hold"
    assert "2/6 hold" in (out / "badge.svg").read_text()
    md = (out / "claims.md").read_text()
    errata = md.split("## Errata")[1].split("##")[0]
    assert "F-01" in errata and "X-01" in errata and "P-01" not in errata


@pytest.mark.fast
def test_an_unknown_claim_id_is_flagged(scratch):
    scratch.makepyfile(test_unknown='import pytest\n@pytest.mark.claim("NOPE-99")\ndef test_x():\n    pass\n')
    result, doc = _run(scratch)
    result.stdout.fnmatch_lines(["*UNKNOWN*NOPE-99*"])


@pytest.mark.fast
def test_a_malformed_registry_stops_collection_with_one_line(scratch):
    scratch.makefile(".toml", claims=REGISTRY + REGISTRY.split("\n\n")[0] + "\n")
    result = scratch.runpytest("-p", "claims.report", "--claims-registry", "claims.toml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*claims.toml: claim #8 (P-01) is registered twice*"])
