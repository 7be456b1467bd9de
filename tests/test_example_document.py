"""The plugin on a document that is not this one: examples/birthday/ runs as a pytest project of
its own (its pytest.ini, registry, tiers and scales), in a subprocess, from a copy, so neither its
report nor an edited text ever touches the repository, and this repository's conftest is never
loaded. It installs nothing: the subprocess is this interpreter, with the plugin it already has."""
import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.fast

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "birthday"
DESIGNED = {"BDAY-01": "holds", "BDAY-02": "holds", "BDAY-03": "holds", "BDAY-04": "holds",
            "BDAY-05": "diverges", "BDAY-06": "holds", "BDAY-07": "descriptive"}


def _env() -> dict:
    drop = ("CLAIMCHECK_RUN_DIR", "CLAIMS_PROGRESS_LOG", "PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT")
    return {**{k: v for k, v in os.environ.items() if k not in drop}, "PYTEST_ADDOPTS": ""}


def _copy(dest: Path) -> Path:
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns("reports", "__pycache__", ".pytest_cache"))
    return dest


def _run(project: Path) -> tuple[subprocess.CompletedProcess, dict]:
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                           "--runslow"], cwd=project, env=_env(), capture_output=True, text=True, timeout=120)
    report = project / "reports" / "claims.json"
    assert report.is_file(), f"no report; exit {proc.returncode}:\n{proc.stdout[-3000:]}{proc.stderr[-2000:]}"
    return proc, json.loads(report.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    project = _copy(tmp_path_factory.mktemp("example") / "birthday")
    proc, doc = _run(project)
    return project, proc, doc


def test_the_example_reports_each_claim_as_designed(baseline):
    project, proc, doc = baseline
    assert proc.returncode == 0, proc.stdout[-3000:]  # a strict divergence is an xfail, not a failure
    assert "6 passed, 1 xfailed" in proc.stdout, proc.stdout[-3000:]
    claims = {c["id"]: c for c in doc["claims"]}
    assert {cid: c["status"] for cid, c in claims.items()} == DESIGNED
    assert doc["summary"] == {"holds": 5, "fails": 0, "diverges": 1, "suspect": 0, "not-run": 0,
                              "untested": 0, "descriptive": 1}
    assert doc["tiers"] == ["fast", "slow"] and doc["scales"] == {"formula": "formula", "simulation": "simulation"}
    # the two-scale claim: by formula (fast) and by simulation (slow), headline at the higher
    two = claims["BDAY-02"]
    assert {s: v["status"] for s, v in two["scales"].items()} == {"formula": "holds", "simulation": "holds"}
    assert two["scale"] == "simulation"
    assert set(two["measured"]) == {"253/365", "40,000 random rooms"}
    assert abs(two["measured"]["253/365"] - 253 / 365) < 1e-12
    div = claims["BDAY-05"]
    assert abs(div["measured"] - 0.8912) < 1e-4 and div["expected"] == 0.9
    assert "89.1 %" in div["reason"]
    assert claims["BDAY-07"]["reason"].startswith("a claim about how people reason")

    # claims.md: the errata list the divergence, and only it
    md = (project / "reports" / "claims.md").read_text(encoding="utf-8")
    errata = md.split("## Errata", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"^\| (BDAY-\d+) \|", errata, re.M) == ["BDAY-05"]
    assert "Forty people are enough for a 90 % chance" in errata
    # index.html names every claim; the annotated text highlights every quote with its verdict
    page = (project / "reports" / "index.html").read_text(encoding="utf-8")
    assert all(cid in page for cid in DESIGNED)
    chapter = (project / "reports" / "chapters" / "BDAY.html").read_text(encoding="utf-8")
    for cid, status in DESIGNED.items():
        if status != "descriptive":
            assert f'class="{status}" data-claim="{cid}"' in chapter, cid
    assert "Quotes not found" not in chapter
    assert all((project / "reports" / f).is_file() for f in ("badge.svg", "badge.json"))


def test_the_example_uses_nothing_from_this_document():
    tree = ast.parse((EXAMPLE / "test_birthday.py").read_text(encoding="utf-8"))
    imported = {(n.module if isinstance(n, ast.ImportFrom) else a.name).split(".")[0]
                for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                for a in (n.names if isinstance(n, ast.Import) else [n])}
    assert imported == {"claimcheck", "math", "numpy", "pytest"}
    assert not (EXAMPLE / "conftest.py").exists()


def test_editing_one_word_makes_exactly_its_sentences_claims_suspect(baseline, tmp_path):
    _, _, before = baseline
    project = _copy(tmp_path / "birthday")
    stamps = json.loads((project / "claims.stamps.json").read_text(encoding="utf-8"))["claims"]
    quoting = {cid for cid, s in stamps.items() if s["sentence"].startswith("Multiplied out,")}
    assert quoting == {"BDAY-03", "BDAY-04"}  # two claims quote that one sentence
    text = project / "text.md"
    original = text.read_text(encoding="utf-8")
    assert original.count("Multiplied out,") == 1
    text.write_text(original.replace("Multiplied out,", "Worked out,"), encoding="utf-8")

    proc, after = _run(project)
    assert proc.returncode == 0, proc.stdout[-3000:]  # a suspect sentence flags, it fails no test
    old = {c["id"]: c for c in before["claims"]}
    for c in after["claims"]:
        if c["id"] in quoting:
            assert c["status"] == "suspect" and c["was"] == old[c["id"]]["status"], c["id"]
            assert c["suspect"]["why"] == "the sentence changed since it was stamped"
            assert c["suspect"]["old"].startswith("Multiplied out,") and c["suspect"]["new"].startswith("Worked out,")
        else:
            keys = ("status", "headline", "scale", "measured", "expected")
            assert {k: c[k] for k in keys} == {k: old[c["id"]][k] for k in keys}, c["id"]
    assert after["summary"]["suspect"] == 2 and after["summary"]["holds"] == 3
    md = (project / "reports" / "claims.md").read_text(encoding="utf-8")
    suspect = md.split("### Suspect: the sentence changed", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"^\| (BDAY-\d+) \|", suspect, re.M) == ["BDAY-03", "BDAY-04"]
