"""The plugin on a plain Markdown document: examples/sorting/ (hard-wrapped paragraphs, no scales,
no tier markers, a slow claim and a deliberate erratum) runs as a pytest project of its own,
from a copy, as test_example_document.py runs examples/birthday/."""
import json
import re
import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.fast

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sorting"
DESIGNED = {"SORT-01": "holds", "SORT-02": "holds", "SORT-03": "holds", "SORT-04": "holds",
            "SORT-05": "diverges", "SORT-06": "descriptive"}


@pytest.fixture
def project(pytester):
    shutil.copytree(EXAMPLE, pytester.path, ignore=shutil.ignore_patterns("reports", "__pycache__"),
                    dirs_exist_ok=True)
    return pytester


def test_the_sorting_example_reports_its_erratum_with_its_line_and_a_link(project):
    result = project.runpytest_inprocess("-q", "-p", "no:cacheprovider", "--claims-runslow")
    assert result.ret == 0, "\n".join(result.outlines)[-3000:]  # the erratum is a strict xfail
    doc = json.loads((project.path / "reports" / "claims.json").read_text(encoding="utf-8"))
    claims = {c["id"]: c for c in doc["claims"]}
    assert {cid: c["status"] for cid, c in claims.items()} == DESIGNED
    assert doc["scales"] == {"": ""} and all(not c["scale"] for c in doc["claims"])  # no scales named
    assert doc["tiers"] == ["fast", "slow"]
    assert claims["SORT-05"]["measured"] == 10 and claims["SORT-05"]["expected"] == "9"
    assert claims["SORT-05"]["line"] == 20 and claims["SORT-02"]["line"] == 9  # SORT-02 runs over a line break
    md = (project.path / "reports" / "claims.md").read_text(encoding="utf-8")
    errata = md.split("## Errata", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"^\| (SORT-\d+) \|", errata, re.M) == ["SORT-05"]
    assert "[text.md:20](chapters/SORT.html#q-SORT-05)" in errata
    page = (project.path / "reports" / "chapters" / "SORT.html").read_text(encoding="utf-8")
    assert "<h2>Quadratic sorts</h2>" in page and "## Quadratic" not in page  # Markdown, rendered
    for cid, status in DESIGNED.items():
        assert f'class="{status}" data-claim="{cid}"' in page, cid
    assert "Quotes not found" not in page


def test_the_check_command_passes_on_it(project, monkeypatch, capsys):
    from claimcheck.cli import main
    monkeypatch.chdir(project.path)
    with pytest.raises(SystemExit) as e:
        main(["check"])
    assert e.value.code == 0
    assert capsys.readouterr().out.splitlines()[-1] == "claims.toml: 6 claims, 6 tests read; 0 error(s), 0 warning(s)"


def test_its_erratum_gets_a_proposed_correction_and_a_patch_that_applies_to_a_clean_checkout(project):
    """SORT-05 ("at most 9") diverges with our count 10: the registry's template, filled from the
    count, is the proposed sentence, in the errata table, corrections.md, the annotated page and a
    patch that ``git apply --check`` and ``patch --dry-run`` accept on a clean checkout."""
    import subprocess
    git = lambda *a: subprocess.run(["git", *a], cwd=project.path, capture_output=True, text=True)  # noqa: E731
    assert git("init", "-q").returncode == 0
    git("add", "text.md")
    assert git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "text").returncode == 0
    result = project.runpytest_inprocess("-q", "-p", "no:cacheprovider")
    assert result.ret == 0, "\n".join(result.outlines)[-3000:]
    reports = project.path / "reports"
    doc = json.loads((reports / "claims.json").read_text(encoding="utf-8"))
    p = next(c for c in doc["claims"] if c["id"] == "SORT-05")["correction_proposal"]
    proposed = "Binary search finds any item among 1,000 sorted items in at most 10"
    was = "Binary search finds any item among 1,000 sorted items in at most 9"
    assert p == {"kind": "text", "proposed": proposed, "missing": None, "draft": None, "replaces": was,
                 "edits": [{"replaces": was, "with": proposed}]}
    assert proposed in (reports / "claims.md").read_text(encoding="utf-8")
    assert f"> {proposed}" in (reports / "corrections.md").read_text(encoding="utf-8")
    page = (reports / "chapters" / "SORT.html").read_text(encoding="utf-8")
    assert f'<span class="suggestion" data-claim="SORT-05"><span class="label">SORT-05 · suggested correction (text)</span> ' \
           f'<span class="proposed">{proposed}</span></span>' in page
    checked = git("apply", "--check", "reports/chapters/SORT.patch")
    assert checked.returncode == 0, checked.stderr
    dry = subprocess.run(["patch", "-p1", "--dry-run", "-i", "reports/chapters/SORT.patch"], cwd=project.path,
                         capture_output=True, text=True)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert git("apply", "reports/chapters/SORT.patch").returncode == 0
    assert "in at most 10\ncomparisons." in (project.path / "text.md").read_text(encoding="utf-8")


def test_its_erratum_reads_without_machine_learning_words(project):
    """An arithmetic erratum: no settings tried, grids, seeds or training in what the author reads,
    and no empty table."""
    result = project.runpytest_inprocess("-q", "-p", "no:cacheprovider", "--claims-runslow")
    assert result.ret == 0
    for name in ("claims.md", "corrections.md"):
        text = (project.path / "reports" / name).read_text(encoding="utf-8")
        erratum = text.split("SORT-05", 1)[1]
        for word in ("setting tried", "settings tried", "grid", "seed", "training", "| point | settings |"):
            assert word not in erratum, (name, word)


def test_apply_writes_the_correction_and_the_claim_reads_suspect_until_stamped(project, monkeypatch, capsys):
    """`claimcheck apply`: the text's one sentence and the registry's quote change, nothing else;
    the next run reads SORT-05 suspect; a second apply finds the passage gone and writes nothing."""
    from claimcheck.cli import main
    assert project.runpytest_inprocess("-q", "-p", "no:cacheprovider", "--claims-runslow").ret == 0
    monkeypatch.chdir(project.path)
    text, reg = (project.path / "text.md").read_text(encoding="utf-8"), (project.path / "claims.toml").read_text(encoding="utf-8")
    with pytest.raises(SystemExit) as e:
        main(["apply"])
    assert e.value.code == 0
    after = (project.path / "text.md").read_text(encoding="utf-8")
    changed = [(a, b) for a, b in zip(text.splitlines(), after.splitlines()) if a != b]
    assert changed == [("Binary search finds any item among 1,000 sorted items in at most 9",
                        "Binary search finds any item among 1,000 sorted items in at most 10")]
    reg_after = (project.path / "claims.toml").read_text(encoding="utf-8")
    assert [b for a, b in zip(reg.splitlines(), reg_after.splitlines()) if a != b] == [
        'quote = "Binary search finds any item among 1,000 sorted items in at most 10"']
    assert "SORT-05" in capsys.readouterr().out
    project.runpytest_inprocess("-q", "-p", "no:cacheprovider", "--claims-runslow")
    doc = json.loads((project.path / "reports" / "claims.json").read_text(encoding="utf-8"))
    assert {c["id"]: c["status"] for c in doc["claims"]}["SORT-05"] == "suspect"
    # a report older than the text: its passage is gone; one line, and nothing is written
    stale = project.path / "stale-report"
    stale.mkdir()
    doc["claims"] = [dict(c, correction_proposal={"proposed": "x", "edits": [
        {"replaces": "in at most 9", "with": "in at most 11"}]}) if c["id"] == "SORT-05" else c for c in doc["claims"]]
    (stale / "claims.json").write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(SystemExit, match="the passage it corrects is not in text.md"):
        main(["apply", str(stale)])
    assert (project.path / "text.md").read_text(encoding="utf-8") == after
