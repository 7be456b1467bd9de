"""A changed sentence is flagged (claimcheck/fingerprint.py): the sentence a quote sits in, the
real registry's stamps, an edit outside a quote and one inside it, and ``claimcheck stamp``."""
import json
import re
import shutil
from pathlib import Path

import pytest

from claimcheck import fingerprint
from claimcheck.cli import main
from claimcheck.registry import load_registry

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"


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
    # a quote must lie within one paragraph
    assert fingerprint.sentences_of("Fine del primo.\nInizio del secondo.", "primo. Inizio") is None


# ---- the real registry -------------------------------------------------------------------------

def _real():
    registry = load_registry(FIXTURES / "claims.toml")
    texts = registry.texts()
    return registry, texts, fingerprint.load_stamps(fingerprint.stamps_path(registry))


@pytest.mark.fast
def test_the_committed_stamps_are_fresh():
    registry, texts, stamps = _real()
    assert stamps is not None, f"{fingerprint.stamps_path(registry)} is missing: run `claimcheck stamp`"
    suspects = fingerprint.check(registry, texts, stamps)
    assert not suspects, (
        f"{len(suspects)} claim(s) read suspect: {', '.join(suspects)}. Review each claim against its "
        "changed sentence, then run `claimcheck stamp ID ...` (or `claimcheck stamp` for all) and commit "
        "fixtures/claims.stamps.json")
    assert set(stamps) == set(registry), "every claim is stamped, and only the registry's claims"


def _copy(tmp_path) -> Path:
    shutil.copy(FIXTURES / "claims.toml", tmp_path / "claims.toml")
    shutil.copy(FIXTURES / "claims.stamps.json", tmp_path / "claims.stamps.json")
    shutil.copytree(FIXTURES / "chapters", tmp_path / "chapters")
    return tmp_path / "claims.toml"


def _loose(passage: str) -> str:
    """A regex for ``passage`` whatever white space the text has between its words."""
    return r"\s+".join(map(re.escape, passage.split()))


def _quoted(registry, text: str, source: str) -> list[tuple[int, int, str, str]]:
    """(start, end, claim ID, quote part) of every occurrence of every quote of ``source``."""
    return [(m.start(), m.end(), c.id, q) for c in registry.values() if c.source == source
            for q in c.quotes for m in re.finditer(_loose(q), text)]


def _words(text: str, lo: int, hi: int):
    return [m for m in re.finditer(r"\b[^\W\d_]{4,}\b", text[lo:hi])]


def _outside_edit(registry, texts, stamps):
    """(claim, sentence, start, end): a word of a claim's sentence that no quote of its source
    covers. Of the claims whose sentence is longer than their single quote, occurs once in the
    text and has such a word, the one whose sentence the most claims share (registry order
    breaks ties): the edit then has several claims to flag, and others in the source to spare."""
    found = []
    for c in registry.values():
        sentence = stamps[c.id]["sentence"]
        if len(c.quotes) != 1 or len(sentence) < len(c.quote) + 20:
            continue
        text = texts[c.source]
        hits = list(re.finditer(_loose(sentence), text))
        if len(hits) != 1:
            continue
        lo, hi = hits[0].span()
        covered = _quoted(registry, text, c.source)
        for w in _words(text, lo, hi):
            a, b = lo + w.start(), lo + w.end()
            if not any(s < b and e > a for s, e, _, _ in covered):
                sharing = sum(sentence in s["sentence"] for s in stamps.values())
                found.append((-sharing, len(found), (c, sentence, a, b)))
                break
    assert found, "no claim has a sentence with a word outside every quote"
    return min(found)[2]


def _edited(text: str, a: int, b: int) -> str:
    word = text[a:b]
    new = "zzz" + word[3:] if not word.startswith("zzz") else "qqq" + word[3:]
    return text[:a] + new + text[b:]


@pytest.mark.fast
def test_one_word_changed_outside_a_quote_makes_exactly_the_claims_of_that_sentence_suspect(tmp_path):
    real, texts, stamps = _real()
    claim, sentence, a, b = _outside_edit(real, texts, stamps)
    path = _copy(tmp_path)
    src = real.sources[claim.source]
    copy = tmp_path / src.file
    copy.write_text(_edited(texts[claim.source], a, b), encoding="utf-8")

    registry = load_registry(path)
    assert registry.sources[claim.source].path == copy.resolve()  # the copy is what is read
    now = registry.texts()
    suspects = fingerprint.check(registry, now, fingerprint.load_stamps(fingerprint.stamps_path(registry)))

    # the claims whose stamped sentence(s) include the edited sentence, and only they
    expected = {cid for cid, s in stamps.items()
                if real[cid].source == claim.source and sentence in s["sentence"]}
    assert claim.id in expected
    assert set(suspects) == expected
    for cid in expected:
        assert suspects[cid]["why"] == "the sentence changed since it was stamped"
        assert suspects[cid]["old"] == stamps[cid]["sentence"]
        assert suspects[cid]["new"] != suspects[cid]["old"]
        assert "zzz" in suspects[cid]["new"] or "qqq" in suspects[cid]["new"]


@pytest.mark.fast
def test_one_word_changed_inside_a_quote_reads_quote_not_found(tmp_path):
    real, texts, stamps = _real()
    claim, sentence, _, _ = _outside_edit(real, texts, stamps)
    text = texts[claim.source]
    covered = _quoted(real, text, claim.source)
    (qa, qb), = {(s, e) for s, e, cid, _ in covered if cid == claim.id}
    w = _words(text, qa, qb)[0]
    a, b = qa + w.start(), qa + w.end()
    path = _copy(tmp_path)
    edited = _edited(text, a, b)
    (tmp_path / real.sources[claim.source].file).write_text(edited, encoding="utf-8")

    registry = load_registry(path)
    now = registry.texts()
    suspects = fingerprint.check(registry, now, fingerprint.load_stamps(fingerprint.stamps_path(registry)))

    # a claim loses its quote when some part of it had every occurrence cover the edited word
    lost = {cid for cid in real if real[cid].source == claim.source
            and any(all(s < b and e > a for s, e, c2, q2 in covered if c2 == cid and q2 == q)
                    and any(c2 == cid and q2 == q for _, _, c2, q2 in covered)
                    for q in real[cid].quotes)}
    assert claim.id in lost
    not_found = {cid for cid, s in suspects.items() if s["why"] == "quote not found in the source (a quote lies within one line)"}
    assert not_found == lost
    for cid in lost:
        assert suspects[cid] == {"why": "quote not found in the source (a quote lies within one line)", "old": stamps[cid]["sentence"], "new": None}
    # the rest of that sentence's claims still find their quote: their sentence changed
    changed = {cid for cid, s in stamps.items() if real[cid].source == claim.source
               and sentence in s["sentence"]} - lost
    assert {cid for cid, s in suspects.items() if s["why"] != "quote not found in the source (a quote lies within one line)"} == changed


@pytest.mark.fast
def test_a_claim_never_stamped_is_not_suspect_but_a_lost_quote_is(tmp_path):
    real, texts, stamps = _real()
    some = next(iter(real))
    partial = {cid: s for cid, s in stamps.items() if cid != some}
    assert fingerprint.check(real, texts, partial) == {}
    assert fingerprint.check(real, texts, None) == {}
    gone = dict(texts, **{real[some].source: texts[real[some].source].replace(real[some].quotes[0], "")})
    assert fingerprint.check(real, gone, None)[some]["why"] == "quote not found in the source (a quote lies within one line)"


# ---- claimcheck stamp --------------------------------------------------------------------------

def _stamp(capsys, *argv) -> tuple[object, str]:
    with pytest.raises(SystemExit) as e:
        main(["stamp", *argv])
    return e.value.code, capsys.readouterr().out


@pytest.mark.fast
def test_stamp_all_reproduces_the_committed_stamps_byte_for_byte(tmp_path, capsys):
    path = _copy(tmp_path)
    (tmp_path / "claims.stamps.json").unlink()
    code, out = _stamp(capsys, "--registry", str(path))
    assert code == 0, out
    assert out.startswith(f"stamped {len(load_registry(path))} claim(s)")
    assert (tmp_path / "claims.stamps.json").read_bytes() == (FIXTURES / "claims.stamps.json").read_bytes()


@pytest.mark.fast
def test_stamping_one_claim_leaves_the_others_as_they_were(tmp_path, capsys):
    path = _copy(tmp_path)
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
    committed = fingerprint.load_stamps(FIXTURES / "claims.stamps.json")
    assert after[first] == committed[first]
    assert after[second] == stale  # not asked for: left as it was, still suspect
    assert {k: v for k, v in after.items() if k not in (first, second)} == \
        {k: v for k, v in committed.items() if k not in (first, second)}
    assert list(after) == list(committed)  # registry order kept
    assert set(fingerprint.check(registry, texts, after)) == {second}


@pytest.mark.fast
def test_stamping_an_unknown_id_exits_with_one_line_and_writes_nothing(tmp_path, capsys):
    path = _copy(tmp_path)
    before = (tmp_path / "claims.stamps.json").read_bytes()
    first = next(iter(load_registry(path)))
    with pytest.raises(SystemExit) as e:
        main(["stamp", "--registry", str(path), first, "NOPE-99"])
    message = str(e.value.code)
    assert e.value.code not in (0, None)
    assert "NOPE-99" in message and first not in message
    assert "\n" not in message.strip()
    assert (tmp_path / "claims.stamps.json").read_bytes() == before
