"""A changed sentence is flagged (claimcheck/fingerprint.py): the sentence a quote sits in, an edit
outside a quote and one inside it, and ``claimcheck stamp``.

Every test reads texts and a registry of its own (inline, or plugin/tests/data/fingerprint/), so that
editing a document changes no test of the logic. The suite's own stamps are checked fresh by the
suite (tests/test_fingerprint.py)."""
import json
import shutil
from pathlib import Path

import pytest

from claimcheck import fingerprint
from claimcheck.cli import main
from claimcheck.registry import load_registry

SAMPLE = Path(__file__).resolve().parent / "data" / "fingerprint"


# ---- sentences_of ------------------------------------------------------------------------------

@pytest.mark.fast
def test_a_quote_mid_sentence_gives_its_whole_sentence():
    text = "Prima frase qui. La media pesa ogni token allo stesso modo, sempre. Terza frase!"
    assert fingerprint.sentences_of(text, "ogni token") == "La media pesa ogni token allo stesso modo, sempre."
    assert fingerprint.sentences_of(text, "Prima") == "Prima frase qui."
    assert fingerprint.sentences_of(text, "Terza frase!") == "Terza frase!"


@pytest.mark.fast
def test_thousands_separators_and_decimal_commas_do_not_end_a_sentence():
    text = ("Il corpus ha 1.115.394 caratteri e 459.760 token da 2,43 caratteri ciascuno, divisi 90/10. "
            "Poi si allena.")
    whole = "Il corpus ha 1.115.394 caratteri e 459.760 token da 2,43 caratteri ciascuno, divisi 90/10."
    for quote in ("1.115.394 caratteri", "2,43", "divisi 90/10", "Il corpus"):
        assert fingerprint.sentences_of(text, quote) == whole, quote
    assert fingerprint.sentences_of(text, "Poi si allena") == "Poi si allena."


@pytest.mark.fast
@pytest.mark.parametrize("end", [".", "!", "?", "…"])
def test_every_sentence_end_splits(end):
    text = f"Uno due tre{end} Quattro cinque."
    assert fingerprint.sentences_of(text, "due") == f"Uno due tre{end}"
    assert fingerprint.sentences_of(text, "cinque") == "Quattro cinque."


@pytest.mark.fast
def test_a_quote_spanning_two_sentences_gives_both():
    text = "Zero. Il primo finisce qui. Il secondo comincia qui e continua. Il terzo no."
    assert (fingerprint.sentences_of(text, "qui. Il secondo")
            == "Il primo finisce qui. Il secondo comincia qui e continua.")


@pytest.mark.fast
def test_white_space_may_differ_between_quote_and_text():
    text = "Titolo\n\nUna   frase\tcon  spazi  strani,   e poi.  Un'altra.\n"
    assert fingerprint.sentences_of(text, "frase con spazi") == "Una frase con spazi strani, e poi."
    assert fingerprint.sentences_of(text, "frase  con\nspazi") == "Una frase con spazi strani, e poi."


@pytest.mark.fast
def test_the_sentence_comes_from_the_paragraph_that_holds_the_quote():
    text = "Un paragrafo. Niente qui.\nUn altro paragrafo, con la citazione dentro. Fine."
    assert fingerprint.sentences_of(text, "la citazione") == "Un altro paragrafo, con la citazione dentro."


@pytest.mark.fast
def test_a_quote_not_in_the_text_gives_none():
    text = "Una frase. Un'altra frase."
    assert fingerprint.sentences_of(text, "una terza") is None
    # a quote must lie within one paragraph: a blank line ends it
    assert fingerprint.sentences_of("Fine del primo.\n\nInizio del secondo.", "primo. Inizio") is None


@pytest.mark.fast
def test_a_hard_wrapped_paragraph_is_matched_across_its_line_breaks():
    """Markdown wraps prose at ~80 columns: the quote, and its sentence, read across the breaks."""
    text = "# Titolo\n\nPrima frase. La media pesa ogni\ntoken allo stesso modo,\n  sempre. Fine.\n\nAltro.\n"
    [place] = fingerprint.places(text, "pesa ogni token allo stesso")
    assert place.line == 3 and place.sentence == "La media pesa ogni token allo stesso modo, sempre."
    assert text[place.start:place.end] == "pesa ogni\ntoken allo stesso"


@pytest.mark.fast
def test_a_quote_within_one_line_keeps_its_line_as_its_unit():
    """A table row or a line of program output is a unit of its own: where one line holds the
    quote, the sentence never runs on into the next line (the stamps of such quotes stay)."""
    text = "| a | 37.82 |\n| b | 37.62 |\n"
    [place] = fingerprint.places(text, "37.82")
    assert place.line == 1 and place.sentence == "| a | 37.82 |"


@pytest.mark.fast
def test_every_place_of_a_quote_found_twice_is_given():
    text = "Uno. Due volte qui.\nE due volte qui.\n"
    assert [p.line for p in fingerprint.places(text, "Due volte qui")] == [1]  # case matters
    assert [p.line for p in fingerprint.places(text, "volte qui")] == [1, 2]


@pytest.mark.fast
def test_the_nearest_passage_to_a_mistyped_quote():
    text = "Intro.\nLa media pesa ogni token allo stesso modo.\nFine.\n"
    assert fingerprint.nearest(text, "pesa ogni tokne allo stesso") == (2, "pesa ogni token allo stesso")
    assert fingerprint.nearest(text, "qualcosa di completamente diverso e lungo") is None


# ---- check, on a registry of its own -----------------------------------------------------------
# data/fingerprint/ (beside this file): two short texts, eight claims and their stamps, so that these tests do
# not depend on the chapters' wording. In it.txt, three claims quote the sentence "La media pesa
# ogni token ..." (MEAN-01, MEAN-02 nested in it, and MEAN-03, whose second part lies in the next
# paragraph); four more quote the other sentences of that text, one the Polish text.

MEAN = "La media pesa ogni token allo stesso modo, per quanto lontano sia, qualunque sia la sua posizione."
CHANGED = "the sentence changed since it was stamped"
NOT_FOUND = "quote not found in the source"


def _sample(tmp_path) -> Path:
    """A copy of the sample project (registry, texts, stamps): its registry file."""
    shutil.copytree(SAMPLE, tmp_path, dirs_exist_ok=True)
    return tmp_path / "claims.toml"


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def _check(path: Path) -> dict:
    registry = load_registry(path)
    return fingerprint.check(registry, registry.texts(), fingerprint.load_stamps(fingerprint.stamps_path(registry)))


@pytest.mark.fast
def test_the_sample_stamps_are_fresh():
    assert _check(SAMPLE / "claims.toml") == {}


@pytest.mark.fast
def test_one_word_changed_outside_a_quote_makes_exactly_the_claims_of_that_sentence_suspect(tmp_path):
    path = _sample(tmp_path)
    _edit(tmp_path / "it.txt", "per quanto lontano sia", "per quanto vicino sia")
    suspects = _check(path)

    new = MEAN.replace("lontano", "vicino")
    assert suspects == {
        "MEAN-01": {"why": CHANGED, "old": MEAN, "new": new},
        "MEAN-02": {"why": CHANGED, "old": MEAN, "new": new},
        "MEAN-03": {"why": CHANGED, "old": f"{MEAN} […] Con il warmup sì.", "new": f"{new} […] Con il warmup sì."},
    }


@pytest.mark.fast
def test_one_word_changed_inside_a_quote_reads_quote_not_found(tmp_path):
    path = _sample(tmp_path)
    _edit(tmp_path / "it.txt", "pesa ogni token allo", "pesa ogni parola allo")
    suspects = _check(path)

    # both quotes that hold the word are lost; MEAN-03 quotes another part of the sentence, which
    # still reads, changed; "459.760 token" in the sentence before is no quote's, and is untouched
    assert suspects == {
        "MEAN-01": {"why": NOT_FOUND, "old": MEAN, "new": None},
        "MEAN-02": {"why": NOT_FOUND, "old": MEAN, "new": None},
        "MEAN-03": {"why": CHANGED, "old": f"{MEAN} […] Con il warmup sì.",
                    "new": f"{MEAN.replace('ogni token', 'ogni parola')} […] Con il warmup sì."},
    }


@pytest.mark.fast
def test_a_claim_never_stamped_is_not_suspect_but_a_lost_quote_is():
    registry = load_registry(SAMPLE / "claims.toml")
    texts = registry.texts()
    stamps = fingerprint.load_stamps(fingerprint.stamps_path(registry))
    partial = {cid: s for cid, s in stamps.items() if cid != "WARM-02"}
    assert fingerprint.check(registry, texts, partial) == {}
    assert fingerprint.check(registry, texts, None) == {}
    gone = dict(texts, IT=texts["IT"].replace("Sei block, 500 passi", ""))
    assert fingerprint.check(registry, gone, None) == {"WARM-02": {"why": NOT_FOUND, "old": None, "new": None}}


# ---- claimcheck stamp --------------------------------------------------------------------------

def _stamp(capsys, *argv) -> tuple[object, str]:
    with pytest.raises(SystemExit) as e:
        main(["stamp", *argv])
    return e.value.code, capsys.readouterr().out


@pytest.mark.fast
def test_stamp_all_reproduces_the_sample_stamps_byte_for_byte(tmp_path, capsys):
    path = _sample(tmp_path)
    (tmp_path / "claims.stamps.json").unlink()
    code, out = _stamp(capsys, "--registry", str(path))
    assert code == 0, out
    assert out.startswith(f"stamped {len(load_registry(path))} claim(s)")
    assert (tmp_path / "claims.stamps.json").read_bytes() == (SAMPLE / "claims.stamps.json").read_bytes()


@pytest.mark.fast
def test_stamping_one_claim_leaves_the_others_as_they_were(tmp_path, capsys):
    path = _sample(tmp_path)
    stamps_file = tmp_path / "claims.stamps.json"
    data = json.loads(stamps_file.read_text(encoding="utf-8"))
    first, second, *_ = data["claims"]
    stale = {"sentence": "an older sentence", "fingerprint": "0" * 16}
    data["claims"][first] = dict(stale)
    data["claims"][second] = dict(stale)
    fingerprint.save_stamps(stamps_file, data["claims"])
    registry = load_registry(path)
    texts = registry.texts()
    assert set(fingerprint.check(registry, texts, fingerprint.load_stamps(stamps_file))) == {first, second}

    code, out = _stamp(capsys, "--registry", str(path), first)
    assert code == 0, out
    assert out.startswith("stamped 1 claim(s)") and "1 new or changed" in out
    after = fingerprint.load_stamps(stamps_file)
    committed = fingerprint.load_stamps(SAMPLE / "claims.stamps.json")
    assert after[first] == committed[first]
    assert after[second] == stale  # not asked for: left as it was, still suspect
    assert {k: v for k, v in after.items() if k not in (first, second)} == \
        {k: v for k, v in committed.items() if k not in (first, second)}
    assert list(after) == list(committed)  # registry order kept
    assert set(fingerprint.check(registry, texts, after)) == {second}


@pytest.mark.fast
def test_stamping_a_claim_whose_quote_is_lost_keeps_its_reviewed_stamp(tmp_path, capsys):
    """A broken quote cannot be stamped: the command says so and exits 1, and the stamp the
    author reviewed stays, so the claim still reads suspect against it."""
    path = _sample(tmp_path)
    before = fingerprint.load_stamps(tmp_path / "claims.stamps.json")
    _edit(tmp_path / "it.txt", "pesa ogni token allo", "pesa ogni parola allo")
    code, out = _stamp(capsys, "--registry", str(path), "MEAN-01")
    assert code == 1 and "quote not found, not stamped: MEAN-01" in out
    assert fingerprint.load_stamps(tmp_path / "claims.stamps.json") == before
    assert _check(path)["MEAN-01"]["old"] == MEAN
    code, out = _stamp(capsys, "--registry", str(path))  # every claim: the lost ones keep theirs too
    after = fingerprint.load_stamps(tmp_path / "claims.stamps.json")
    assert code == 1 and after["MEAN-01"] == before["MEAN-01"] and after["MEAN-02"] == before["MEAN-02"]


@pytest.mark.fast
def test_stamping_an_unknown_id_exits_with_one_line_and_writes_nothing(tmp_path, capsys):
    path = _sample(tmp_path)
    before = (tmp_path / "claims.stamps.json").read_bytes()
    first = next(iter(load_registry(path)))
    with pytest.raises(SystemExit) as e:
        main(["stamp", "--registry", str(path), first, "NOPE-99"])
    message = str(e.value.code)
    assert e.value.code not in (0, None)
    assert "NOPE-99" in message and first not in message
    assert "\n" not in message.strip()
    assert (tmp_path / "claims.stamps.json").read_bytes() == before


@pytest.mark.fast
def test_in_markdown_the_sentence_is_read_from_its_paragraph_however_it_is_wrapped():
    """A quote within one line of a hard-wrapped Markdown paragraph: its stamp covers the whole
    sentence, so an edit on the next line flags it, and re-wrapping the same sentence does not."""
    quote = "Binary search finds any item"
    text = "# Search\n\nBinary search finds any item among 1,000 sorted items in at most 9\ncomparisons. Next.\n"
    whole = "Binary search finds any item among 1,000 sorted items in at most 9 comparisons."
    assert fingerprint.sentences_of(text, quote, markdown=True) == whole
    edited = text.replace("9\ncomparisons.", "9\nguesses, never more.")
    assert fingerprint.sentences_of(edited, quote, markdown=True) != whole
    rewrapped = text.replace("in at most 9\ncomparisons.", "in at\nmost 9 comparisons.")
    assert fingerprint.sentences_of(rewrapped, quote, markdown=True) == whole
    # a heading, a table row and a fenced code line stay units of their own
    md = "# Title here\nText after. More.\n\n| a | 37.82 |\n| b | 37.62 |\n\n```\nloss 1.5\nloss 1.2\n```\n"
    assert fingerprint.sentences_of(md, "Title", markdown=True) == "# Title here"
    assert fingerprint.sentences_of(md, "37.82", markdown=True) == "| a | 37.82 |"
    assert fingerprint.sentences_of(md, "loss 1.5", markdown=True) == "loss 1.5"
    assert fingerprint.sentences_of(md, "Text after", markdown=True) == "Text after."
