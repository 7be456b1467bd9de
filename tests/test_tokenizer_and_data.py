"""The tokenizer and the corpus loader as code: the machinery the corpus claims (claims/test_setup.py)
stand on. Every loader failure is one line that says how to fix it."""
import hashlib
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from experiments import data
from experiments.bpe import BPE, _merge, pretokenize, train_bpe, word_counts
from experiments.data import CorpusUnavailable
from suite.settings import no_corpus

# ---- the tokenizer as code (no claim: the machinery the claims stand on) -------------------

def _naive_bpe(text, vocab_size):
    """The textbook algorithm: recount every pair after every merge. Slow, obviously right;
    it checks the incremental bookkeeping, so it shares only the merge of one word."""
    words = {tuple(w): c for w, c in word_counts(text).items()}
    merges = []
    while len(merges) < vocab_size - 256:
        pairs = Counter()
        for w, c in words.items():
            for p in zip(w, w[1:]):
                pairs[p] += c
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        new = 256 + len(merges)
        merges.append(best)
        words = {tuple(_merge(list(w), best, new)): c for w, c in words.items()}
    return tuple(merges)


SAMPLE = ("First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n\n"
          "First Citizen:\nYou are all resolved rather to die than to famish?\n\nAll:\nResolved. resolved.\n") * 3


@pytest.mark.fast
def test_incremental_pair_counts_learn_the_same_merges_as_recounting():
    assert train_bpe(SAMPLE, 330).merges == _naive_bpe(SAMPLE, 330)


@pytest.mark.fast
@given(st.text(max_size=200))
@settings(max_examples=50)
def test_pretokens_concatenate_back_and_any_text_round_trips(text):
    assert "".join(pretokenize(text)) == text
    bpe = _sample_bpe()
    assert bpe.decode(bpe.encode(text)) == text


REPEATS = "aaaa aaa aa a bbbb abab aabb baaa aaaaaaa bb abba " * 20  # merges of a symbol with itself


def _reference_encode(merges, word: bytes) -> list[int]:
    """BPE as the merges define it: apply each merge, in the order learned, left to right."""
    ids = list(word)
    for rank, (a, b) in enumerate(merges):
        out, i = [], 0
        while i < len(ids):
            if i + 1 < len(ids) and (ids[i], ids[i + 1]) == (a, b):
                out.append(256 + rank)
                i += 2
            else:
                out.append(ids[i])
                i += 1
        ids = out
    return ids


@pytest.mark.fast
@given(st.text(alphabet="ab ", max_size=60))
@settings(max_examples=80)
def test_repeated_symbols_encode_as_the_merges_say_and_round_trip(text):
    """Runs like "aaaa" hold overlapping pairs: (a, a) must merge left to right, once per pair."""
    bpe = _repeats_bpe()
    assert bpe.decode(bpe.encode(text)) == text
    for word in pretokenize(text):
        assert bpe.encode_word(word.encode()) == _reference_encode(bpe.merges, word.encode()), word


def _repeats_bpe() -> BPE:
    if "r" not in _BPE:
        _BPE["r"] = train_bpe(REPEATS, 272)
    return _BPE["r"]


_BPE = {}


def _sample_bpe() -> BPE:
    if "b" not in _BPE:
        _BPE["b"] = train_bpe(SAMPLE, 300)
    return _BPE["b"]


# ---- the loader: every failure is one line that says how to fix it ---------------------------

def _fake_corpus(monkeypatch, tmp_path, content=b"to be or not to be\n", url=None):
    src = tmp_path / "origin.txt"
    src.write_bytes(content)
    c = data.Corpus("toy", "toy.txt", url or src.as_uri(), hashlib.sha256(b"to be or not to be\n").hexdigest(), 19)
    monkeypatch.setitem(data.CORPORA, "toy", c)
    monkeypatch.setattr(data, "_places", replace(data.places(), cache_dir=tmp_path / "cache"))
    monkeypatch.setattr(data, "_places", replace(data.places(), data_dir=None))
    return c


@pytest.mark.fast
def test_a_download_is_checked_and_cached(monkeypatch, tmp_path):
    _fake_corpus(monkeypatch, tmp_path)
    p = data.corpus_path("toy")
    assert p == tmp_path / "cache" / "data" / "toy.txt" and p.read_text() == "to be or not to be\n"


@pytest.mark.fast
def test_a_checksum_mismatch_refuses_the_data_in_one_line(places, monkeypatch, tmp_path):
    _fake_corpus(monkeypatch, tmp_path)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "toy.txt").write_text("to be or not to be?\n")
    places(data_dir=tmp_path / "d")
    with pytest.raises(data.CorpusUnavailable, match="sha256 .* is not the expected") as e:
        data.corpus_path("toy")
    assert "\n" not in str(e.value)


@pytest.mark.fast
def test_a_changed_origin_is_not_used(monkeypatch, tmp_path):
    _fake_corpus(monkeypatch, tmp_path, content=b"to be, or not to be\n")
    with pytest.raises(data.CorpusUnavailable, match="the origin changed"):
        data.corpus_path("toy")
    assert not (tmp_path / "cache" / "data" / "toy.txt").exists()  # nothing wrong is kept


@pytest.mark.fast
def test_no_network_says_how_to_fix_it(monkeypatch, tmp_path):
    _fake_corpus(monkeypatch, tmp_path, url="http://127.0.0.1:9/toy.txt")  # nothing listens there
    with pytest.raises(data.CorpusUnavailable, match="name a data folder") as e:
        data.corpus_path("toy", timeout=5)
    assert "\n" not in str(e.value)


@pytest.mark.fast
def test_a_missing_corpus_skips_in_one_line_or_fails_where_data_is_required(monkeypatch):
    err = data.CorpusUnavailable("tinyshakespeare.txt is not in CLAIMS_DATA_DIR or the cache")
    from suite import settings
    before = settings.use(replace(settings.current(), require_data=False))
    try:
        with pytest.raises(pytest.skip.Exception, match="^tinyshakespeare.txt is not in CLAIMS_DATA_DIR"):
            no_corpus(err)
        settings.use(replace(settings.current(), require_data=True))  # CLAIMS_REQUIRE_DATA=1: a failed download turns CI red
        with pytest.raises(pytest.fail.Exception, match="^CLAIMS_REQUIRE_DATA=1: tinyshakespeare.txt"):
            no_corpus(err)
    finally:
        settings.use(before)


@pytest.mark.fast
def test_the_excerpt_is_split_5775_500_500_like_the_labs_text(data_regression):
    """Our setup, not a claim: the excerpts copy the lab's text sizes (TINY-14's 500 and 500,
    TINY-18's 5,775) by definition, so this checks the cut, and pins the excerpts."""
    from experiments.polish_text import excerpts
    try:
        exs = excerpts(5)
    except CorpusUnavailable as e:
        no_corpus(e)
    assert all((len(ex.train), len(ex.val), len(ex.test)) == (5775, 500, 500) for ex in exs)
    # the normalised excerpts, pinned by sha256: a new edition or a changed mapping shows here
    try:
        data_regression.check({f"excerpt {ex.index} at {ex.offset}": ex.sha256 for ex in exs},
                              fullpath=Path(__file__).resolve().parents[1] / "fixtures" / "pins" / "pan_tadeusz_excerpts.yml")
    except AssertionError as e:
        if "File not found" in str(e):
            raise
        pytest.fail("pin fixtures/pins/pan_tadeusz_excerpts.yml is stale: the normalised excerpts changed "
                    "(another edition of the poem, or a new mapping in experiments/polish_text.py); if intended, "
                    "rerun with --force-regen and commit the new pin", pytrace=False)
