"""The plugin on a document that is not this one: examples/birthday/ runs as a pytest project of
its own (its pytest.ini, registry, tiers and scales), through pytester, from a copy, so neither
its report nor an edited text ever touches the repository, and no conftest of this repository is
ever loaded (the copy is its own rootdir). It installs nothing: the plugin is the one this
interpreter already has, through its entry point."""
import ast
import json
import re
import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.fast

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "birthday"
DESIGNED = {"BDAY-01": "holds", "BDAY-02": "holds", "BDAY-03": "holds", "BDAY-04": "holds",
            "BDAY-05": "diverges", "BDAY-06": "holds", "BDAY-07": "descriptive"}


class _Run:
    """What a run printed and its exit code, as the checks below read them."""
    def __init__(self, result):
        self.returncode, self.stdout = int(result.ret), "\n".join(result.outlines)


def _copy(dest: Path) -> Path:
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns("reports", "__pycache__", ".pytest_cache"),
                    dirs_exist_ok=True)
    return dest


def _run(pytester) -> tuple[_Run, dict]:
    result = pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider", "-p", "no:randomly", "--claims-runslow")
    report = pytester.path / "reports" / "claims.json"
    out = _Run(result)
    assert report.is_file(), f"no report; exit {out.returncode}:\n{out.stdout[-3000:]}"
    return out, json.loads(report.read_text(encoding="utf-8"))


@pytest.fixture
def baseline(pytester):
    project = _copy(pytester.path)
    proc, doc = _run(pytester)
    return project, proc, doc


def test_the_example_reports_each_claim_as_designed(baseline):
    project, proc, doc = baseline
    assert proc.returncode == 0, proc.stdout[-3000:]  # a strict divergence is an xfail, not a failure
    assert "6 passed, 1 xfailed" in proc.stdout, proc.stdout[-3000:]
    claims = {c["id"]: c for c in doc["claims"]}
    assert {cid: c["status"] for cid, c in claims.items()} == DESIGNED
    assert doc["summary"] == {"holds": 5, "fails": 0, "diverges": 1, "undecided": 0, "suspect": 0, "not-run": 0,
                              "not-measured": 0, "untested": 0, "descriptive": 1, "undecided at the cap": 0}
    assert doc["tiers"] == ["fast", "slow"] and doc["scales"] == {"formula": "formula", "simulation": "simulation"}
    # the two-scale claim: by formula (fast) and by simulation (slow), headline at the higher
    two = claims["BDAY-02"]
    assert {s: v["status"] for s, v in two["scales"].items()} == {"formula": "holds", "simulation": "holds"}
    assert two["scale"] == "simulation"
    assert set(two["measured"]) == {"253/365", "40,000 random rooms"}
    assert abs(two["measured"]["253/365"] - 253 / 365) < 1e-12
    div = claims["BDAY-05"]
    assert abs(div["measured"] - 0.8912) < 1e-4 and div["expected"] == "0.90"  # the registry's value
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
    assert imported == {"claimcheck", "collections", "math", "pytest", "random", "statistics"}  # the standard library: the plugin alone runs it
    assert not (EXAMPLE / "conftest.py").exists()


def test_editing_one_word_makes_exactly_its_sentences_claims_suspect(baseline, pytester):
    project, _, before = baseline
    stamps = json.loads((project / "claims.stamps.json").read_text(encoding="utf-8"))["claims"]
    quoting = {cid for cid, s in stamps.items() if s["sentence"].startswith("Multiplied out,")}
    assert quoting == {"BDAY-03", "BDAY-04"}  # two claims quote that one sentence
    text = project / "text.md"
    original = text.read_text(encoding="utf-8")
    assert original.count("Multiplied out,") == 1
    text.write_text(original.replace("Multiplied out,", "Worked out,"), encoding="utf-8")

    proc, after = _run(pytester)
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
