"""PL "Pomysł w prostych słowach": the window, one pass for 16 predictions, perplexity."""
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from experiments.configs import tiny_lab_config
from experiments.polish_text import ALPHABET, POLISH_LETTERS
from model import GPT, causal_mask
from model.metrics import perplexity
from suite.settings import no_corpus

pytestmark = pytest.mark.fast


@pytest.mark.claim("TINY-02")
def test_position_5_sees_only_characters_1_to_5(claim_record):
    assert tiny_lab_config().block_size == 16
    claim_record("TINY-02", (causal_mask(16)[4].nonzero().flatten() + 1).tolist(), expected=[1, 2, 3, 4, 5],
                 tolerance="exact", label="characters (1-based) position 5's mask row allows, window 16")
    assert causal_mask(16)[4].tolist() == [True] * 5 + [False] * 11
    torch.manual_seed(0)
    m = GPT(tiny_lab_config()).eval()
    x = torch.randint(0, 34, (1, 16))
    y = x.clone()
    y[0, 5:] = torch.randint(0, 34, (11,))  # rewrite characters 6..16
    with torch.no_grad():
        a, b = m(x)[0, :5], m(y)[0, :5]
    claim_record("TINY-02", (a - b).abs().max().item(), tolerance="exact: bit-identical (torch.equal)",
                 label="max |change| at positions 1-5 when characters 6-16 change")
    assert torch.equal(a, b)


@pytest.mark.claim("TINY-03")
def test_the_labs_numpy_demo_one_pass_equals_sixteen(claim_record):
    """The lab's own demo, verbatim in substance: W_Q = W_K = W_V = I, the causal mask."""
    T, d = 16, 4
    X = np.sin(np.arange(T * d).reshape(T, d))

    def attend(X):
        S = X @ X.T / np.sqrt(X.shape[1])
        S = S + np.triu(np.full(S.shape, -np.inf), 1)
        A = np.exp(S - S.max(axis=1, keepdims=True))
        return (A / A.sum(axis=1, keepdims=True)) @ X

    once = attend(X)
    alone = np.array([attend(X[:t + 1])[t] for t in range(T)])
    claim_record("TINY-03", float(np.abs(once - alone).max()), expected="True (np.allclose)",
                 tolerance="exact: np.allclose", label="max |one pass - 16 passes|")
    assert np.allclose(once, alone)


@pytest.fixture(scope="module")
def one_pass():
    """The lab's GPT on a batch of 8 windows of 17: logits, the loss, and its 8 x 16 terms."""
    torch.manual_seed(0)
    m = GPT(tiny_lab_config())
    x = torch.randint(0, 34, (8, 17))
    logits, loss = m(x[:, :-1], x[:, 1:])
    terms = torch.nn.functional.cross_entropy(logits.transpose(1, 2), x[:, 1:], reduction="none")
    return logits, loss, terms


@pytest.mark.claim("TINY-03")
def test_one_forward_pass_gives_sixteen_predictions_and_loss_terms(one_pass):
    logits, _, terms = one_pass
    assert logits.shape == (8, 16, 34) and terms.shape == (8, 16)  # 16 predictions per window


@pytest.mark.claim("TINY-09")
def test_the_loss_is_the_mean_cross_entropy_over_all_eight_by_sixteen_positions(one_pass, claim_record):
    _, loss, terms = one_pass
    claim_record("TINY-09", ((loss - terms.mean()).abs() / terms.mean().abs()).item(),
                 tolerance="exact: rtol 1e-6, atol 0 (float32)",
                 label=f"|loss - mean of the {terms.shape[0]}x{terms.shape[1]} terms| / mean")
    torch.testing.assert_close(loss, terms.mean(), rtol=1e-6, atol=0)  # the mean over 8 x 16


@pytest.mark.claim("TINY-07")
def test_perplexity_is_exp_mean_cross_entropy_and_the_demo_gives_7_26(claim_record):
    p_true = np.array([0.30, 0.05, 0.12, 0.20])
    ppl = claim_record("TINY-07", float(np.exp(-np.log(p_true).mean())), expected=7.26,
                       tolerance="exact: prints as 7.26")
    assert f"{ppl:.2f}" == "7.26"
    logits = torch.randn(3, 5, 34, dtype=torch.float64)
    targets = torch.randint(0, 34, (3, 5))
    ce = -torch.log_softmax(logits, -1).gather(-1, targets[..., None]).mean().item()
    assert perplexity(logits, targets) == pytest.approx(np.exp(ce), rel=1e-12)


@pytest.mark.claim("TINY-08")
def test_a_model_that_knows_nothing_chooses_among_34(claim_record):
    assert len(POLISH_LETTERS) == 32 and len(set(ALPHABET)) == len(ALPHABET) == 34
    assert set(ALPHABET) - set(POLISH_LETTERS) == {" ", "."}
    uniform = torch.zeros(1, 1, 34, dtype=torch.float64)
    assert perplexity(uniform, torch.tensor([[7]])) == pytest.approx(34, rel=1e-12)
    torch.manual_seed(0)
    m = GPT(tiny_lab_config()).eval()  # untrained: logits near 0
    x = torch.randint(0, 34, (64, 17))
    with torch.no_grad():
        ppl = claim_record("TINY-08", perplexity(m(x[:, :-1]), x[:, 1:]), expected=34,
                           tolerance="exact: [25, 45] at N(0, 0.02) init", label="untrained model")
    assert 25 <= ppl <= 45


# ---- counting passes (TINY-04, TINY-05, TINY-06) -------------------------------------------

from experiments.numpy_gpt import TinyLab, params_from_torch  # noqa: E402


def _lab():
    torch.manual_seed(0)
    return TinyLab(params_from_torch(GPT(tiny_lab_config())), lr=1e-2)


def _train(lab, steps, rng):
    """``steps`` Adam steps on the lab's own batches: its batch size and window, not ours."""
    from experiments.polish_lab import LabConfig, batches
    text = rng.integers(0, 34, 2000)
    for w in batches(text, int(rng.integers(2**31)), steps, LabConfig().batch, tiny_lab_config().block_size):
        lab.train_step(w)


def _watched(monkeypatch, lab):
    """Count what ``forward`` is really given, apart from the lab's own counters: windows
    (one pass each), positions predicted, and calls."""
    seen = {"windows": 0, "predictions": 0, "calls": 0}
    forward = lab.forward

    def watch(x, *a, **kw):
        x = np.asarray(x)
        seen["windows"] += x.shape[0] if x.ndim == 2 else 1
        seen["predictions"] += x.size
        seen["calls"] += 1
        return forward(x, *a, **kw)
    monkeypatch.setattr(lab, "forward", watch)
    return seen


@pytest.mark.claim("TINY-04")
def test_300_steps_of_8_windows_are_2400_passes_and_38400_predictions(claim_record, monkeypatch):
    """The lab's own training loop (``train_runs`` -> ``fit``) with its own batch and window:
    the test gives it a text and the 300 steps the claim names, and watches what the model's
    ``forward`` is given after every step. No batch size or window length of ours enters."""
    from experiments.polish_lab import LabConfig, train_runs
    from experiments.polish_text import EXCERPT_CHARS, Excerpt
    seen = {"windows": 0, "predictions": 0}
    forward = GPT.forward

    def watch(self, idx, *a, **kw):
        seen["windows"] += idx.shape[0]  # (B, T): one pass through the block per window
        seen["predictions"] += idx.numel()  # one next-character prediction per position
        return forward(self, idx, *a, **kw)
    monkeypatch.setattr(GPT, "forward", watch)
    rng = np.random.default_rng(0)
    ex = Excerpt(index=0, offset=0, text="".join(rng.choice(list(ALPHABET), EXCERPT_CHARS)))
    after = []  # (step, windows, predictions) after each step, as fit reports it
    train_runs(LabConfig(steps=300, checkpoints=()), [(ex, 1)],  # no checkpoint: no eval passes
               progress=lambda step: after.append((step, seen["windows"], seen["predictions"])))
    assert after[0] == (1, 8, 128)  # one Adam step: 8 passes, 128 predictions
    assert [(b[1] - a[1], b[2] - a[2]) for a, b in zip(after, after[1:])] == [(8, 128)] * 299  # every step alike
    claim_record("TINY-04", [seen["windows"], seen["predictions"]], expected=[2400, 38400], tolerance="exact",
                 label="windows and positions the lab's forward saw in its 300 training steps")
    assert (after[-1][0], seen["windows"], seen["predictions"]) == (300, 2400, 38_400)


@pytest.mark.claim("TINY-05")
def test_writing_n_characters_takes_n_passes(monkeypatch, claim_record):
    lab, rng = _lab(), np.random.default_rng(0)
    seen = _watched(monkeypatch, lab)
    for n in (16, 40):
        before = seen["calls"]
        out = lab.generate([1, 2, 3], n, rng)
        claim_record("TINY-05", seen["calls"] - before, expected=n, tolerance="exact",
                     label=f"forward passes to write {n} characters")
        assert len(out) == n and seen["calls"] - before == n  # one forward pass per character written
    before = seen["windows"], seen["predictions"]
    lab.forward(rng.integers(0, 34, (1, 16)))
    assert (seen["windows"] - before[0], seen["predictions"] - before[1]) == (1, 16)  # 16 positions, one pass


@pytest.mark.claim("TINY-06")
def test_the_try_it_counter_after_300_steps_and_40_characters(claim_record, monkeypatch):
    """The lab's "Try it": retrain at 300 steps, write 40 characters, compare the counters."""
    lab, rng = _lab(), np.random.default_rng(1)
    seen = _watched(monkeypatch, lab)
    _train(lab, 300, rng)
    training = seen["windows"]
    calls = seen["calls"]
    lab.generate([0], 40, rng)
    writing = seen["calls"] - calls
    claim_record("TINY-06", [training, writing], expected=[2400, 40], tolerance="exact",
                 label="passes forward made: training 300 steps (windows), writing 40 characters (calls)")
    assert (training, writing) == (lab.passes - 40, 40) == (2400, 40)


@pytest.mark.claim("TINY-08")
@given(text=st.text(max_size=200))
def test_any_text_normalises_into_the_34_symbols(text):
    from experiments.polish_text import normalise
    out = normalise(text)
    assert set(out) <= set(ALPHABET)
    assert "  " not in out and " ." not in out and ".." not in out  # one separator, one stop
    assert normalise(out) == out  # idempotent: the lab's text is a fixed point


@pytest.mark.claim("TINY-08")
def test_pan_tadeusz_normalised_uses_exactly_the_labs_34_symbols(claim_record):
    from experiments.data import CorpusUnavailable
    from experiments.polish_text import normalise, poem
    assert normalise("Litwo! Ojczyzno moja! ty jesteś — «Vivat»; X, q…") == "litwo. ojczyzno moja. ty jesteś wiwat ks k."
    try:
        p = poem()
    except CorpusUnavailable as e:
        no_corpus(e)
    symbols = claim_record("TINY-08", len(set(p)), expected=34, tolerance="exact",
                           label="distinct symbols in the normalised poem")
    assert symbols == 34 and set(p) == set(ALPHABET)


@pytest.mark.claim("TINY-01")
def test_the_labs_model_is_one_causal_pre_norm_block_predicting_the_next_character(claim_record):
    """The lab's own model, as the lab trains it: one GPT-2-style block (a LayerNorm before
    attention and before the MLP), 34 symbols, a causal mask, and a loss whose targets are the
    inputs shifted by one character."""
    from experiments.polish_lab import LabConfig, batch_starts, train_runs
    from experiments.polish_text import Excerpt
    cfg = LabConfig(steps=1, checkpoints=(1,), dtype="float64")
    m = GPT(cfg.model()).double()
    claim_record("TINY-01", [cfg.model().vocab_size, len(m.blocks)], expected=[34, 1], tolerance="exact",
                 label="symbols, blocks")
    assert (cfg.model().vocab_size, len(m.blocks)) == (len(ALPHABET), 1) == (34, 1)
    blk = m.blocks[0]
    assert isinstance(blk.ln_mix_in, torch.nn.LayerNorm) and isinstance(blk.ln_ff_in, torch.nn.LayerNorm)
    assert not isinstance(blk.ln_mix_out, torch.nn.LayerNorm) and not isinstance(blk.ln_ff_out, torch.nn.LayerNorm)
    # causal: changing the last character moves no earlier position's prediction
    x = torch.randint(34, (1, 16), generator=torch.Generator().manual_seed(0))
    y = x.clone()
    y[0, -1] = (y[0, -1] + 1) % 34
    torch.testing.assert_close(m(x)[:, :-1], m(y)[:, :-1], rtol=0, atol=0)
    assert not torch.equal(m(x)[:, -1], m(y)[:, -1])
    # the loss of the lab's first step is next-character cross-entropy on its first batch
    rng = np.random.default_rng(0)
    ex = Excerpt(index=0, offset=0, text="".join(rng.choice(list(ALPHABET), 5775 + 500 + 500)))
    rec = train_runs(cfg, [(ex, 1)], keep_loss=True)
    torch.manual_seed(1)
    first = GPT(cfg.model()).double()  # the lab's seed-1 model before its first step
    train = ex.ids("train")
    start = batch_starts(len(train), 1, 1, cfg.batch, 16)[0]
    w = torch.from_numpy(train[start[:, None] + np.arange(17)])  # (8, 17): 16 inputs and the one after
    expected = torch.nn.functional.cross_entropy(first(w[:, :-1]).flatten(0, 1), w[:, 1:].flatten())
    claim_record("TINY-01", rec["loss"][0][0], expected=expected.item(), tolerance="exact: rel 1e-12 (float64)",
                 label="the lab's first loss vs next-character cross-entropy on its first batch")
    assert rec["loss"][0][0] == pytest.approx(expected.item(), rel=1e-12)




# ---- TINY-29: the block with random weights, and the counting neighbour -------------------------

@pytest.mark.scale("analytic")
@pytest.mark.claim("TINY-29")
def test_the_block_with_random_weights_knows_nothing_and_the_neighbour_only_counts(claim_record):
    """"blok transformera miał losowe wagi i niczego nie umiał": lesson 12's block is not in the
    lab, so the lab's own block stands in ("ten sam rodzaj bloku"), at its random initialisation,
    on the main excerpt's validation text by the lab's protocol. "niczego" is read against the
    chapter's own "model bez żadnej wiedzy" (34): on every one of ten seeds the perplexity is at
    least 34 less 3 % ("niczego", the barely row). "Obok stoi model, który tylko zlicza trójki
    znaków": the 3-gram's probabilities are its triple counts and nothing else. Rule written
    before the test first ran."""
    from collections import Counter

    from experiments.data import CorpusUnavailable
    from experiments.ngram import NGram
    from experiments.polish_lab import _perplexities
    from model.stack import Stack
    from suite.catalogue import TINY_LAB
    from suite.lab_scale import _excerpts
    from suite.settings import seeds
    try:
        ex = _excerpts(1)[0]
    except CorpusUnavailable as e:
        no_corpus(e)
    cfg, ss = TINY_LAB.config, seeds(*range(10))
    stack = Stack(cfg.model(), ss, dtype=getattr(torch, cfg.dtype))
    val = torch.from_numpy(np.stack([ex.ids("val")] * len(ss)))  # (10, n): every model, the same text
    ppl = np.array(_perplexities(stack, val))
    claim_record("TINY-29", np.round(ppl, 3), expected=34,
                 tolerance="exact: every seed >= 34 x 0.97 = 32.98 ('niczego': the barely row, against the "
                           "chapter's own 34 for a model without any knowledge)",
                 label=f"the lab's block at random init, main excerpt's validation perplexity, seeds {ss[0]}-{ss[-1]}")
    # the neighbour: p(c | a b) = (n(a b c) + k) / (n(a b) + 34 k), from a plain count of the train text
    tr = ex.ids("train").tolist()
    g = NGram(3, 34, k=0.1).fit(tr)
    tri, bi = Counter(zip(tr, tr[1:], tr[2:])), Counter(zip(tr, tr[1:-1]))
    counted = np.log([(tri[a, b, c] + 0.1) / (bi[a, b] + 3.4) for a, b, c in zip(tr, tr[1:], tr[2:])])
    gap = claim_record("TINY-29", float(np.abs(g.logprob(tr) - counted).max()), expected=0,
                       tolerance="exact: atol 1e-12 (float64)",
                       label="the 3-gram's log p on its train text against a plain count of triples: max |difference|")
    assert gap <= 1e-12
    assert (ppl >= 34 * 0.97).all(), ppl
