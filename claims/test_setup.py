"""IT 3.1 Setup and corpus: the arithmetic of the ladder's setup (the corpus itself: slow tier)."""

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


@pytest.mark.fast
@pytest.mark.claim("CORP-03")
def test_the_trainer_steps_adamw_and_scores_the_held_out_split(claim_record, monkeypatch):
    """"passi di AdamW … La perplexity è calcolata sullo split tenuto da parte": one step of the
    suite's trainer on a tiny model, watching which optimizer it builds and which tokens it scores."""
    import torch
    from dataclasses import replace
    from experiments import train as trainer
    built, scored = [], []

    class Watched(torch.optim.AdamW):
        def __init__(self, *a, **kw):
            built.append(type(self).__mro__[1].__name__)
            super().__init__(*a, **kw)

    windows = trainer.windows
    monkeypatch.setattr(trainer.torch.optim, "AdamW", Watched)
    monkeypatch.setattr(trainer, "windows", lambda tokens, *a: scored.append(tokens.clone()) or windows(tokens, *a))
    cfg = replace(shakespeare_config(), vocab_size=16, block_size=8, d_model=16, n_layer=1, n_head=1)
    train_tokens, held_out = np.arange(200) % 8, 8 + np.arange(100) % 8  # disjoint vocabularies
    trainer.train(cfg, replace(SHAKESPEARE_FULL, steps=1, batch_size=2, eval_every=0), train_tokens, held_out, log=None)
    opt = claim_record("CORP-03", built, expected=["AdamW"], tolerance="exact", label="the optimizer the trainer builds")
    assert opt == ["AdamW"]
    val = claim_record("CORP-03", bool((scored[0] >= 8).all().item()), expected=True, tolerance="exact",
                       label="the perplexity's windows come from the held-out split only")
    assert val


# ---- the corpus and the tokenizer ---------------------------------------------------------



from experiments import data  # noqa: E402


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


@pytest.mark.fast
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


@pytest.mark.fast
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


@pytest.mark.fast
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
