"""IT 3.1 Setup and corpus: the arithmetic of the ladder's setup (the corpus itself: slow tier)."""
from dataclasses import replace

import numpy as np
import pytest

from experiments.configs import shakespeare_config
from experiments.data import split
from experiments.train import SHAKESPEARE_FULL
from suite.settings import no_corpus


CHARS, TOKENS = 1_115_394, 459_760  # the document's figures


@pytest.mark.fast
@pytest.mark.claim("CORP-01")
def test_chars_per_token_rounds_to_2_43(claim_record):
    ratio = claim_record("CORP-01", CHARS / TOKENS, expected=2.43, tolerance="exact: rounds to 2 dp",
                         label="chars/token from the document's counts")
    assert round(ratio, 2) == 2.43


@pytest.mark.fast
@pytest.mark.claim("CORP-02")
def test_ninety_ten_split_is_contiguous_and_sized(claim_record):
    train, val = split(range(TOKENS))
    claim_record("CORP-02", [len(train), len(val)], expected=[413_784, 45_976], tolerance="exact")
    assert (len(train), len(val)) == (413_784, 45_976)
    assert train[-1] + 1 == val[0]  # contiguous: the held-out text follows the training text


@pytest.mark.fast
@pytest.mark.claim("CORP-03")
def test_ladder_budget_is_the_documents(claim_record):
    c, b = shakespeare_config(), SHAKESPEARE_FULL
    assert (c.d_model, c.block_size, c.vocab_size) == (128, 128, 1024)
    assert (b.steps, b.lr, b.batch_size) == (3000, 1e-3, 64)
    predictions = claim_record("CORP-03", b.predictions(c.block_size), expected=24_576_000,
                               tolerance="exact", label="predicted tokens")
    assert predictions == 3000 * 64 * 128 == 24_576_000
    epochs = claim_record("CORP-03", predictions / 413_784, expected=59.4, tolerance="exact: ±0.05",
                          label="epochs of the 90 % split")
    assert epochs == pytest.approx(59.4, abs=0.05)  # far from one pass: overfitting is possible


# ---- the corpus and the tokenizer ---------------------------------------------------------

import hashlib  # noqa: E402
from collections import Counter  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from experiments import data  # noqa: E402
from experiments.bpe import BPE, _merge, pretokenize, train_bpe, word_counts  # noqa: E402


@pytest.fixture(scope="module")
def shakespeare_text():
    try:
        return data.load_text("tinyshakespeare")
    except data.CorpusUnavailable as e:
        no_corpus(e)


@pytest.mark.fast
@pytest.mark.claim("CORP-01")
def test_the_corpus_has_1115394_characters(shakespeare_text, claim_record):
    n = claim_record("CORP-01", len(shakespeare_text), expected=CHARS, tolerance="exact",
                     label="characters")
    assert n == CHARS


@pytest.mark.slow
@pytest.mark.scale("full")
@pytest.mark.claim("CORP-01")
def test_bpe_1024_gives_459760_tokens_and_round_trips(shakespeare_text, shakespeare_tokens, claim_record):
    n = claim_record("CORP-01", len(shakespeare_tokens), expected=TOKENS,
                     tolerance="exact: ±0.1 % (pre-tokenisation and tie-breaking details move a few tokens)",
                     label="tokens, our BPE")
    ratio = claim_record("CORP-01", len(shakespeare_text) / n, expected=2.43, tolerance="exact: rounds to 2.43",
                         label="characters per token, our BPE")
    assert abs(n - TOKENS) <= 0.001 * TOKENS and round(ratio, 2) == 2.43
    _, bpe = data.bpe_tokens("tinyshakespeare", 1024)
    assert bpe.vocab_size == 1024
    assert bpe.decode(shakespeare_tokens.tolist()) == shakespeare_text  # lossless


@pytest.mark.slow
@pytest.mark.scale("full")
@pytest.mark.claim("CORP-01")
def test_hugging_face_tokenizers_trained_alike_agree_with_ours(shakespeare_text, shakespeare_tokens, claim_record):
    tk = pytest.importorskip("tokenizers", reason="tokenizers is not installed (pip install -e '.[hf]')")
    tok = tk.Tokenizer(tk.models.BPE())
    tok.pre_tokenizer = tk.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    trainer = tk.trainers.BpeTrainer(vocab_size=1024, show_progress=False,
                                     initial_alphabet=tk.pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator([shakespeare_text], trainer)
    theirs = claim_record("CORP-01", len(tok.encode(shakespeare_text).ids), expected=TOKENS,
                          tolerance="exact: within 0.1 % of ours", label=f"tokens, HF tokenizers {tk.__version__}")
    assert abs(theirs - len(shakespeare_tokens)) <= 0.001 * len(shakespeare_tokens)


@pytest.mark.slow
@pytest.mark.scale("full")
@pytest.mark.claim("CORP-02")
def test_the_token_split_is_ninety_ten_and_contiguous(shakespeare_tokens, claim_record):
    """Against the chapter, not against ``split``'s own formula: the document's 413,784 /
    45,976, within the 0.1 % by which our token count may differ from its 459,760 (CORP-01:
    pre-tokenisation and tie-breaking); 90 % of our tokens to the rounding of one token; and
    the held-out tokens are the text's tail, the training tokens its head, nothing dropped."""
    train, val = split(shakespeare_tokens)
    n = len(shakespeare_tokens)
    sizes = claim_record("CORP-02", [len(train), len(val)], expected=[413_784, 45_976],
                         tolerance="exact: each within 0.1 % (CORP-01's tolerance on N)", label="our token split")
    assert abs(sizes[0] - 413_784) <= 0.001 * 413_784 and abs(sizes[1] - 45_976) <= 0.001 * 45_976
    assert abs(len(train) - 0.9 * n) < 1  # 90/10 of our N, to one token's rounding
    assert np.array_equal(np.concatenate([train, val]), shakespeare_tokens)  # contiguous: head, then tail


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
