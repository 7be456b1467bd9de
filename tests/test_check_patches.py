"""tools/check_patches.py, which CI runs on the fast tier's report: a patch that applies and
changes only corrected sentences passes; one that touches another line, or loses another
claim's quote, fails with its line."""
import json

import pytest

from claimcheck.corrections import patch
from tools.check_patches import ROOT, check

pytestmark = pytest.mark.fast

PATH = "fixtures/chapters/000_5fede232be7b7538.txt"
SENTENCE = "Nota anche che quasi un terzo di un modello piccolo è la tabella di embedding"


def _report(tmp_path, edits, other_quote):
    text = (ROOT / PATH).read_text(encoding="utf-8")
    fixed = {"id": "X-01", "source": "IT", "quote": SENTENCE,
             "correction_proposal": {"proposed": "…", "edits": edits}}
    other = {"id": "X-02", "source": "IT", "quote": other_quote}
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "IT.patch").write_text(patch(PATH, text, [fixed]), encoding="utf-8")
    (tmp_path / "claims.json").write_text(json.dumps(
        {"sources": [{"id": "IT", "path": PATH}], "claims": [fixed, other]}), encoding="utf-8")
    return tmp_path


def test_a_patch_of_one_sentence_passes(tmp_path, capsys):
    edits = [{"replaces": SENTENCE, "with": SENTENCE.replace("quasi", "circa")}]
    assert check(_report(tmp_path, edits, "Che è la dimensione pubblicata di quel modello.")) == []
    assert "1 line(s) changed" in capsys.readouterr().out


def test_a_patch_that_loses_another_claims_quote_fails(tmp_path):
    edits = [{"replaces": "Che è la dimensione pubblicata di quel modello. La formula non è un’approssimazione; è il "
                          "modello. " + SENTENCE, "with": SENTENCE.replace("quasi", "circa")}]
    problems = check(_report(tmp_path, edits, "Che è la dimensione pubblicata di quel modello."))
    assert problems == ["IT: after the patch these claims' quotes are gone: X-02"]


def test_a_patch_that_changes_another_line_fails(tmp_path):
    """A patch written by hand that also edits the chapter's first line: the check names it."""
    import difflib
    text = (ROOT / PATH).read_text(encoding="utf-8")
    report = _report(tmp_path, [{"replaces": SENTENCE, "with": SENTENCE.replace("quasi", "circa")}],
                     "Che è la dimensione pubblicata di quel modello.")
    new = text.replace(SENTENCE, SENTENCE.replace("quasi", "circa")).replace(text.split("\n")[0], "Altro titolo", 1)
    (report / "chapters" / "IT.patch").write_text("".join(difflib.unified_diff(
        text.splitlines(True), new.splitlines(True), f"a/{PATH}", f"b/{PATH}")), encoding="utf-8")
    assert check(report) == ["IT: the patch changes lines no correction touches: [1]"]


def test_the_fast_tier_fails_a_correction_template_it_cannot_build():
    """conftest's session end: an erratum of the run whose template was not filled is named."""
    from conftest import _unbuilt_corrections
    ok = {"id": "A", "correction": "x {value}", "correction_proposal": {"proposed": "x 1"}}
    draft = {"id": "B", "correction": "y {mean}", "correction_proposal": {"draft": "y 2"}}
    broken = {"id": "C", "correction": "z {nope}", "correction_proposal": {"missing": "the correction names {nope}"}}
    untemplated = {"id": "D", "correction_proposal": {"missing": "no template"}}
    assert _unbuilt_corrections({"claims": [ok, draft, broken, untemplated]}) == [
        "correction not built: C: the correction names {nope}"]
    assert _unbuilt_corrections(None) == []
