"""experiments/ as components: the fast tier must catch a broken function that computes a number.

Training loops, evaluations, counting baselines, the lab's protocol, the data loader and the
Winograd scorer, each on inputs small enough to compute the expected value independently:
hand-built windows, torch's own cross-entropy, counts made with a Counter, a stub model.
No corpus is needed except where a test says so (and then a missing one skips).
"""
import hashlib
import inspect
import json
import math
import urllib.error
from collections import Counter
from dataclasses import replace

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from experiments import data, runs
from experiments.data import CorpusUnavailable
from experiments.ngram import NGram
from experiments.numpy_gpt import (
    TinyLab,
    attention_forward,
    cross_entropy_forward,
    gelu_forward,
    layernorm_forward,
    params_from_torch,
)
from experiments.polish_lab import (
    CHECKPOINTS,
    FIRST_TARGET,
    K_GRID,
    LabConfig,
    batch_starts,
    batches,
    best_val_test,
    eval_windows,
    ngram_scores,
    train_runs,
    with_positions,
)
from experiments.polish_text import (
    ALPHABET,
    EXCERPT_CHARS,
    FOOTER,
    POLISH_LETTERS,
    TEST_CHARS,
    TRAIN_CHARS,
    VAL_CHARS,
    Excerpt,
    decode,
    encode,
    excerpts,
    normalise,
    poem,
)
from experiments.train import (
    FIRST_LOSSES,
    SHAKESPEARE_FULL,
    TrainConfig,
    fit,
    lr_at,
    perplexities,
    replay,
    token_batches,
    train,
    windows,
)
from experiments.winograd import (
    CROSSER,
    QUERY_AT,
    fixed_task,
    format_row,
    leaky_task,
    model_config,
    score,
    train_task,
)
from model.gpt import GPT, GPTConfig
from model.stack import Stack
from suite.settings import no_corpus


f64 = torch.float64
# a tiny GPT: 7 symbols, windows of 4, and a position table long enough to score windows of 8
TINY = GPTConfig(vocab_size=7, block_size=4, d_model=8, n_head=2, n_positions=8)


def _tokens(n, seed, V=7):
    return torch.randint(V, (n,), generator=torch.Generator().manual_seed(seed))


def _gpt(cfg, seed, dtype=torch.float32):
    """The model a seed's run starts from, made as Stack documents it: manual_seed, then GPT."""
    torch.manual_seed(seed)
    return GPT(cfg).to(dtype).eval()


def _hand_windows(tokens, L, n=0):
    """Non-overlapping windows, by slicing: window i reads tokens iL..iL+L-1, predicts iL+1..iL+L."""
    count = (len(tokens) - 1) // L
    count = min(n, count) if n else count
    x = torch.stack([tokens[i * L:(i + 1) * L] for i in range(count)])
    y = torch.stack([tokens[i * L + 1:(i + 1) * L + 1] for i in range(count)])
    return x, y


@torch.no_grad()
def _ppl(model, tokens, L, n=0):
    """exp(mean cross-entropy) over the hand-made windows, by torch's own cross_entropy."""
    x, y = _hand_windows(tokens, L, n)
    return math.exp(F.cross_entropy(model(x).flatten(0, 1).double(), y.flatten()).item())


# ---- train.py: windows and perplexities ------------------------------------------------------------

@pytest.mark.fast
@pytest.mark.parametrize("N, block, n, count", [(23, 5, 0, 4), (23, 5, 2, 2), (23, 5, 10, 4), (21, 5, 0, 4),
                                                (20, 5, 0, 3), (6, 5, 0, 1)])
def test_windows_are_the_first_n_non_overlapping_slices_and_their_next_tokens(N, block, n, count):
    """Evaluation windows: (N-1)//block of them at most (every target must exist), the first n
    when n is given, window i starting at i*block, targets shifted by one token."""
    tokens = torch.arange(100, 100 + N)  # values are not positions: an index bug cannot hide
    x, y = windows(tokens, block, n)
    assert x.shape == y.shape == (count, block)
    hx, hy = _hand_windows(tokens, block, n)
    assert torch.equal(x, hx) and torch.equal(y, hy)


@pytest.mark.fast
@pytest.mark.parametrize("seeds", [(0,), (0, 1)], ids=["single", "stacked"])
def test_perplexities_are_exp_mean_cross_entropy_over_every_window(seeds):
    """Each model's held-out perplexity is exp of the mean cross-entropy over all n*T targets,
    whatever the evaluation batch (3 here, over 7 windows: a partial last batch), scored in eval
    mode (dropout off), and the stack is left in training mode."""
    cfg = GPTConfig(**{**TINY.__dict__, "dropout": 0.3})
    stack = Stack(cfg, seeds, dtype=f64)
    tokens = _tokens(30, seed=5)
    x, y = _hand_windows(tokens, 4)
    assert len(x) == 7
    got = perplexities(stack, x, y, batch=3)
    assert len(got) == len(seeds)
    for m, s in enumerate(seeds):
        ref = _ppl(_gpt(cfg, s, f64), tokens, 4)
        assert got[m] == pytest.approx(ref, rel=1e-12), (m, got[m], ref)
    assert len(set(got)) == len(seeds)  # each model scored with its own weights
    assert stack.model(0).training


# ---- train.py: the training loop -------------------------------------------------------------------

@pytest.mark.fast
def test_fit_takes_one_plain_gradient_step_per_batch_for_every_model():
    """fit against a hand-written loop: with SGD (no normaliser to hide a scale) each of the two
    stacked models follows its own single-model run step for step, at the rate lr(step) set
    before the step; hooks see steps 1..n and the losses before each step; progress too."""
    steps, seeds, B, T = 3, (0, 1), 2, 4
    g = torch.Generator().manual_seed(3)
    xs = torch.randint(7, (steps, len(seeds), B, T + 1), generator=g)
    stack = Stack(TINY, seeds, dtype=f64).eval()  # fit must put it back into training mode
    opt = torch.optim.SGD(stack.parameters(), lr=123.0)
    rate = lambda s: 0.2 * s  # noqa: E731
    asked, seen, progress = [], [], []

    def batch(step):
        asked.append(step)
        w = xs[step - 1]
        return w[..., :-1], w[..., 1:]

    def hook(step, losses):
        seen.append((step, opt.param_groups[0]["lr"], losses.tolist()))
        assert not losses.requires_grad

    wall = fit(stack, opt, batch, steps, lr=rate, hooks=(hook,), progress=progress.append)
    assert asked == progress == [1, 2, 3]
    assert [(s, lr) for s, lr, _ in seen] == [(1, 0.2), (2, 0.4), (3, pytest.approx(0.6))]
    assert 0 <= wall < 60 and stack.model(0).training
    for m, seed in enumerate(seeds):
        ref = _gpt(TINY, seed, f64).train()
        sgd = torch.optim.SGD(ref.parameters(), lr=1.0)
        for step in range(1, steps + 1):
            sgd.param_groups[0]["lr"] = rate(step)
            w = xs[step - 1, m]
            _, loss = ref(w[:, :-1], w[:, 1:])
            assert seen[step - 1][2][m] == pytest.approx(loss.item(), rel=1e-12)
            sgd.zero_grad()
            loss.backward()
            sgd.step()
        mine = stack.model(m).state_dict()
        for k, p in ref.state_dict().items():
            assert torch.allclose(mine[k], p, rtol=0, atol=1e-12), (m, k)


@pytest.mark.fast
def test_the_warmup_is_linear_from_lr_over_warmup_then_constant():
    """lr_at(step) for 0-based steps: lr (s+1)/warmup during the warmup, then lr; no warmup: lr."""
    cfg = TrainConfig(steps=10, batch_size=1, lr=0.008, warmup=4)
    assert [lr_at(s, cfg) for s in range(6)] == pytest.approx([0.002, 0.004, 0.006, 0.008, 0.008, 0.008])
    assert lr_at(100, cfg) == 0.008
    plain = TrainConfig(steps=10, batch_size=1, lr=0.008)
    assert [lr_at(s, plain) for s in (0, 3, 50)] == [0.008] * 3


@pytest.mark.fast
def test_train_configs_default_to_torchs_adamw_and_count_their_predictions():
    """The defaults the docstring promises (torch's AdamW, no warmup, quiet, one evaluation at the
    end), and predictions = steps x batch x window; the Shakespeare budget: 3000 x 64 at 1e-3."""
    adamw = inspect.signature(torch.optim.AdamW).parameters
    cfg = TrainConfig(steps=7, batch_size=3, lr=0.1)
    assert cfg.weight_decay == adamw["weight_decay"].default and cfg.betas == adamw["betas"].default
    assert (cfg.warmup, cfg.eval_every, cfg.eval_windows, cfg.log_every, cfg.trace_every) == (0, 0, 0, 0, 0)
    assert cfg.eval_lengths == () and cfg.attention_stats is False
    assert cfg.predictions(5) == 7 * 3 * 5
    assert (SHAKESPEARE_FULL.steps, SHAKESPEARE_FULL.batch_size, SHAKESPEARE_FULL.lr) == (3000, 64, 1e-3)
    assert SHAKESPEARE_FULL.eval_every == 500 and SHAKESPEARE_FULL.warmup == 0


@pytest.mark.fast
def test_token_batches_are_random_windows_drawn_per_seed():
    """Each batch is B contiguous (T+1)-token windows of the text, targets shifted by one; a
    seed's batches are the same alone or stacked beside another seed, and differ between seeds."""
    N, B, T = 40, 6, 5
    tokens = torch.arange(1000, 1000 + N)
    alone, pair = token_batches(tokens, [3], B, T, "cpu"), token_batches(tokens, [8, 3], B, T, "cpu")
    starts = []
    for step in range(1, 6):
        x, y = pair(step)
        assert x.shape == y.shape == (2, B, T) and x.dtype == torch.long
        assert torch.equal(y[..., :-1], x[..., 1:])  # the targets are the next tokens
        assert torch.equal(x - x[..., :1], torch.arange(T).expand_as(x))  # contiguous windows
        assert (y[..., -1] < 1000 + N).all() and (x[..., 0] >= 1000).all()
        xa, ya = alone(step)
        assert torch.equal(xa[0], x[1]) and torch.equal(ya[0], y[1])
        assert not torch.equal(x[0], x[1])
        starts.append(x[..., 0])
    assert len({tuple(s[1].tolist()) for s in starts}) > 1  # a new draw at every step


@pytest.mark.fast
def test_token_batches_drawn_up_front_are_the_batches_drawn_step_by_step():
    """Given the steps, the starts are drawn at once (one call per generator) and moved to the
    device once: the same windows at every step, for each seed, alone or stacked."""
    tokens = torch.arange(5000, 5000 + 300)
    for seeds in ([3], [8, 3, 11]):
        by_step, up_front = token_batches(tokens, seeds, 7, 5, "cpu"), token_batches(tokens, seeds, 7, 5, "cpu", 40)
        for step in range(1, 41):
            for a, b in zip(by_step(step), up_front(step)):
                assert torch.equal(a, b), (seeds, step)
    with pytest.raises(IndexError, match=r"batch\(41\): the starts were drawn for steps 1..40"):
        up_front(41)


@pytest.mark.fast
@pytest.mark.skipif(torch.cuda.is_available(), reason="with CUDA present, the move would succeed")
def test_token_batches_move_the_tokens_to_the_device_once_not_each_batch():
    with pytest.raises((RuntimeError, AssertionError), match="CUDA|cuda|Torch not compiled"):
        token_batches(torch.arange(100), [0], 2, 4, "cuda", 3)  # the tokens go first, before any step


def _ce(model, x, y):
    with torch.no_grad():
        return F.cross_entropy(model(x).flatten(0, 1), y.flatten()).item()


@pytest.mark.fast
def test_train_records_curves_perplexities_and_losses_of_the_runs_it_trained():
    """train at lr 0 leaves every model at its initialisation, so each number it records can be
    computed independently: val and train perplexity (as many train windows as held-out ones),
    the held-out split at other window lengths, the per-step losses, their means since the
    last checkpoint and per trace interval, and the log lines at every log_every steps."""
    seeds = (0, 1)
    tr, va = _tokens(60, seed=1), _tokens(27, seed=2)  # 6 held-out windows of 4
    cfg = TrainConfig(steps=6, batch_size=3, lr=0.0, eval_every=4, eval_lengths=(4, 8, 2), trace_every=2,
                      log_every=3)
    logs = []
    recs = train(TINY, cfg, tr.numpy(), va.numpy(), seeds=seeds, log=logs.append)
    assert len(logs) == 2 and logs[0].startswith("step      3") and logs[1].startswith("step      6")
    batch = token_batches(tr, seeds, 3, 4, "cpu")
    xy = [batch(s) for s in range(1, 7)]
    for m, (rec, seed) in enumerate(zip(recs, seeds)):
        model = _gpt(TINY, seed)
        val = _ppl(model, va, 4)
        assert rec["seed"] == seed and rec["stacked"] == 2
        assert rec["val_ppl"] == pytest.approx(val, rel=1e-5)
        assert rec["train_ppl"] == pytest.approx(_ppl(model, tr, 4, n=6), rel=1e-5)
        at = rec["val_ppl_at_length"]
        assert set(at) == {"4", "8", "2"} and at["4"] == rec["val_ppl"]
        assert at["8"] == pytest.approx(_ppl(model, va, 8), rel=1e-5)
        assert at["2"] == pytest.approx(_ppl(model, va, 2), rel=1e-5)
        losses = [_ce(model, x[m], y[m]) for x, y in xy]
        assert rec["first_losses"] == pytest.approx(losses, rel=1e-5)
        c = rec["curve"]
        assert c["step"] == [4, 6]
        assert c["loss"] == pytest.approx([np.mean(losses[:4]), np.mean(losses[4:])], rel=1e-5)
        assert c["val_ppl"] == pytest.approx([val, val], rel=1e-5)
        assert rec["trace"]["step"] == [0, 2, 4, 6] and rec["trace"]["loss"][0] is None
        assert rec["trace"]["loss"][1:] == pytest.approx([np.mean(losses[i:i + 2]) for i in (0, 2, 4)], rel=1e-5)
        assert rec["params"] == sum(p.numel() for p in model.parameters())
        assert rec["train"]["steps"] == 6 and rec["model"]["vocab_size"] == 7


@pytest.mark.fast
def test_train_scores_the_first_eval_windows_and_every_window_at_other_lengths():
    """eval_windows limits the held-out windows (and the train windows to as many); the scores at
    eval_lengths always read the whole held-out split, the training length included."""
    tr, va = _tokens(60, seed=1), _tokens(27, seed=2)
    cfg = TrainConfig(steps=2, batch_size=2, lr=0.0, eval_windows=2, eval_lengths=(4,))
    (rec,) = train(TINY, cfg, tr.numpy(), va.numpy(), seeds=(4,), log=None)
    model = _gpt(TINY, 4)
    assert rec["val_ppl"] == pytest.approx(_ppl(model, va, 4, n=2), rel=1e-5)
    assert rec["train_ppl"] == pytest.approx(_ppl(model, tr, 4, n=2), rel=1e-5)
    assert rec["val_ppl_at_length"]["4"] == pytest.approx(_ppl(model, va, 4), rel=1e-5)
    assert rec["curve"]["step"] == [2] and len(rec["first_losses"]) == 2 and rec["trace"] is None


@pytest.mark.fast
def test_training_on_a_repeated_sequence_lowers_the_loss_and_the_held_out_perplexity():
    """0 1 2 .. 6 0 1 2 ..: the next token follows from the last one. A few AdamW steps must
    bring the training loss and the perplexity on the same pattern well below chance (7)."""
    pattern = torch.arange(7).repeat(20)
    cfg = TrainConfig(steps=FIRST_LOSSES, batch_size=4, lr=3e-2, eval_every=5)
    (rec,) = train(TINY, cfg, pattern.numpy(), pattern[:41].numpy(), seeds=(0,), log=None)
    first = rec["first_losses"]
    assert len(first) == FIRST_LOSSES
    assert first[0] == pytest.approx(_ce(_gpt(TINY, 0), *_first_batch(pattern)), rel=1e-5)  # before any step
    assert first[-1] < 0.5 * first[0]
    vals = rec["curve"]["val_ppl"]
    assert rec["curve"]["step"] == [5, 10, 15, 20] and vals[-1] < vals[0] and vals[-1] < 3


def _first_batch(tokens):
    x, y = token_batches(tokens, [0], 4, 4, "cpu")(1)
    return x[0], y[0]


@pytest.mark.fast
def test_replay_retrains_the_runs_first_losses_with_the_configs_optimizer_and_warmup():
    """replay against a loop written from the config alone: AdamW with the config's betas and
    weight decay, the rate lr * min(1, step / warmup) at step 1, 2, ...; and train's own
    first_losses are the same numbers."""
    cfg = TrainConfig(steps=5, batch_size=3, lr=2e-2, warmup=4, weight_decay=0.3, betas=(0.8, 0.95))
    tr, seeds = _tokens(80, seed=6), (0, 2)
    got = replay(TINY, cfg, tr.numpy(), seeds=seeds, steps=5)
    stack = Stack(TINY, seeds)
    opt = torch.optim.AdamW(stack.parameters(), lr=99.0, betas=(0.8, 0.95), weight_decay=0.3)
    losses = []
    fit(stack, opt, token_batches(tr, seeds, 3, 4, "cpu"), 5, lr=lambda s: 2e-2 * min(1.0, s / 4),
        hooks=(lambda step, loss: losses.append(loss.tolist()),))
    expected = np.array(losses).T
    assert np.array(got).shape == (2, 5)
    assert np.allclose(got, expected, rtol=1e-6, atol=0)
    recs = train(TINY, cfg, tr.numpy(), tr[:30].numpy(), seeds=seeds, log=None)
    assert np.allclose([r["first_losses"] for r in recs], expected, rtol=1e-6, atol=0)


# ---- ngram.py ---------------------------------------------------------------------------------------

@pytest.mark.fast
def test_a_bigram_perplexity_is_the_hand_computation_from_its_counts():
    """Fitted on 0 1 0 1 2 (bigrams 01 x2, 10, 12; contexts 0 x2, 1 x2), k = 0.5, V = 3:
    p(1|0) = 2.5/3.5, p(2|1) = 1.5/3.5, p(2|2) = 0.5/1.5 (an unseen context, and a key beyond
    every fitted one)."""
    m = NGram(2, 3, k=0.5).fit([0, 1, 0, 1, 2])
    p = np.array([2.5 / 3.5, 1.5 / 3.5, 0.5 / 1.5])
    assert np.allclose(m.logprob([0, 1, 2, 2]), np.log(p), rtol=0, atol=1e-15)
    assert m.perplexity([0, 1, 2, 2]) == pytest.approx(p.prod() ** (-1 / 3), rel=1e-14)
    assert m.logprob([2, 0])[0] == pytest.approx(math.log(1 / 3))  # below every fitted key


@pytest.mark.fast
def test_a_unigram_counts_every_token_with_add_one_by_default():
    """n = 1: p(w) = (c(w) + 1) / (N + V). Fitted on 0 0 1, V = 3: 3/6, 2/6, 1/6."""
    m = NGram(1, 3).fit([0, 0, 1])
    assert np.allclose(np.exp(m.logprob([0, 1, 2])), [3 / 6, 2 / 6, 1 / 6], rtol=0, atol=1e-15)
    assert m.perplexity([2, 0]) == pytest.approx(math.sqrt(12), rel=1e-14)


@pytest.mark.fast
@pytest.mark.parametrize("n, k", [(1, 1.0), (2, 0.1), (3, 0.01)])
def test_ngram_log_probabilities_are_add_k_counts_and_sum_to_one_for_a_context(n, k):
    """On random text over 5 symbols, every log p equals (c(ctx, w) + k) / (c(ctx) + kV) from a
    Counter, and p(. | ctx) sums to 1 over the alphabet, for a seen and an unseen context."""
    V, rng = 5, np.random.default_rng(n)
    text, probe = rng.integers(0, V - 1, 200), rng.integers(0, V, 50)  # symbol 4 never in training
    m = NGram(n, V, k).fit(text)
    full = Counter(tuple(text[i - n + 1:i + 1]) for i in range(n - 1, len(text)))
    ctx = Counter(tuple(text[i - n + 1:i]) for i in range(n - 1, len(text)))
    ref = [math.log((full[tuple(probe[i - n + 1:i + 1])] + k) / (ctx[tuple(probe[i - n + 1:i])] + k * V))
           for i in range(n - 1, len(probe))]
    assert np.allclose(m.logprob(probe), ref, rtol=0, atol=1e-12)
    for c in (text[:n - 1], np.full(n - 1, V - 1)):
        p = np.exp([m.logprob(np.r_[c, w].astype(np.int64))[0] for w in range(V)])
        assert p.sum() == pytest.approx(1.0, abs=1e-12)


@pytest.mark.fast
@pytest.mark.parametrize("kw, message", [(dict(n=0, vocab_size=3), "n >= 1 and k > 0, got n=0, k=1.0"),
                                         (dict(n=2, vocab_size=3, k=0), "got n=2, k=0"),
                                         (dict(n=2, vocab_size=2**31), r"2147483648\^2 contexts do not fit")])
def test_an_ngram_refuses_what_it_cannot_count(kw, message):
    with pytest.raises(ValueError, match=message):
        NGram(**kw)
    NGram(2, 2**31 - 1)  # (2^31 - 1)^2 < 2^62 still fits


# ---- polish_lab.py: the protocol --------------------------------------------------------------

@pytest.mark.fast
def test_the_step_is_chosen_on_validation_and_test_is_read_once_there():
    """Whatever the order of the checkpoints, the lowest validation wins, and test is looked at
    once, at that step (reading it elsewhere would be choosing on test)."""
    calls = []
    val = {400: 9.0, 100: 12.0, 1600: 8.5, 800: 8.7, 6400: 9.5}
    step, test = best_val_test(val, lambda s: calls.append(s) or 10.0 + s)
    assert (step, test, calls) == (1600, 1610.0, [1600])


@pytest.mark.fast
def test_the_labs_checkpoints_run_from_100_to_the_last_step():
    """The slider: 100, 200, ..., 6400, with the 300 the chapter names (PL L9), and the lab trains
    up to the last with batches of 8 at 3e-3; with_positions switches the learned table alone."""
    assert CHECKPOINTS == tuple(sorted({100 * 2 ** i for i in range(7)} | {300}))
    cfg = LabConfig()
    assert (cfg.steps, cfg.batch, cfg.lr, cfg.checkpoints) == (CHECKPOINTS[-1], 8, 3e-3, CHECKPOINTS)
    assert cfg.positions and cfg.model().positions == "learned" and cfg.model().block_size == 16
    off = with_positions(cfg, False)
    assert off.model().positions == "none" and off.steps == cfg.steps
    assert list(K_GRID) == sorted(K_GRID) and len(set(K_GRID)) == len(K_GRID)


@pytest.mark.fast
def test_eval_windows_score_each_character_from_the_third_with_up_to_16_before_it():
    """For ids 0..n-1 every character from FIRST_TARGET on is scored once, from the position
    just before it, in a window that starts at max(0, i - 16): the full context when there is
    one, the whole prefix before."""
    n, T = 40, 16
    ids = np.arange(n) + 100
    win, w_idx, pos, targets = eval_windows(ids)
    assert FIRST_TARGET == 2 and win.shape == (n - T, T)
    assert targets.tolist() == ids[2:].tolist()
    for t, i in enumerate(range(2, n)):
        w = win[w_idx[t]]
        assert w[0] == ids[max(0, i - T)] and w[pos[t]] == ids[i - 1]  # context, then the last seen


@pytest.mark.fast
def test_the_labs_batches_are_contiguous_windows_reproducible_per_seed():
    """(steps, batch) starts from one seed's generator: every window of 17 fits the text, the
    last one included, and the same seed draws the same batches."""
    n = 20  # starts 0..3: the last window is ids[3:20]
    s = batch_starts(n, seed=5, steps=50)
    assert s.shape == (50, 8) and set(s.ravel().tolist()) == {0, 1, 2, 3}
    assert np.array_equal(s, batch_starts(n, 5, 50)) and not np.array_equal(s, batch_starts(n, 6, 50))
    ids = np.arange(n) * 3
    got = list(batches(ids, 5, 50))
    assert len(got) == 50
    for w, start in zip(got, s):
        assert w.shape == (8, 17) and np.array_equal(w, ids[start[:, None] + np.arange(17)])
    assert batch_starts(100, 0, 3, batch=2, T=4).shape == (3, 2)


def _synthetic_excerpt(index=0, seed=0):
    """6,775 characters: train and test from 8 letters, validation with 2 % of a 21st symbol
    that training never saw (so validation, not training, wants a larger k)."""
    r = np.random.default_rng(seed)
    tr = r.integers(0, 8, TRAIN_CHARS)
    va = np.where(r.random(VAL_CHARS) < 0.02, 20, r.integers(0, 8, VAL_CHARS))
    te = r.integers(0, 8, TEST_CHARS)
    return Excerpt(index, 0, decode(np.r_[tr, va, te]))


def _ngram_ppl(train_ids, ids, n, k, V=34):
    """Add-k perplexity from Counter counts, scoring characters 2.. of ``ids`` alone."""
    full = Counter(tuple(train_ids[i - n + 1:i + 1]) for i in range(n - 1, len(train_ids)))
    ctx = Counter(tuple(train_ids[i - n + 1:i]) for i in range(n - 1, len(train_ids)))
    lp = [math.log((full[tuple(ids[i - n + 1:i + 1])] + k) / (ctx[tuple(ids[i - n + 1:i])] + k * V))
          for i in range(2, len(ids))]
    return math.exp(-np.mean(lp))


@pytest.mark.slow  # seconds, not milliseconds: it runs with --runslow
@pytest.mark.parametrize("n", [1, 2, 3])
def test_ngram_scores_choose_k_on_validation_and_score_the_same_characters(n):
    """k is the grid's best on validation (here not the best on train or test); the three
    perplexities score characters 2.. of each split, as the network's do."""
    ex = _synthetic_excerpt()
    tr, va, te = (ex.ids(p) for p in ("train", "val", "test"))
    by_k = {k: _ngram_ppl(tr, va, n, k) for k in K_GRID}
    best = min(by_k, key=by_k.get)
    assert best != min(K_GRID, key=lambda k: _ngram_ppl(tr, te, n, k))
    got = ngram_scores(ex, n)
    assert (got["n"], got["k"]) == (n, best)
    for part, ids in (("train", tr), ("val", va), ("test", te)):
        assert got[part] == pytest.approx(_ngram_ppl(tr, ids, n, best), rel=1e-10), part


@torch.no_grad()
def _protocol_ppl(model, ids):
    """Character i (i >= 2) predicted from the up-to-16 characters before it, by hand."""
    ids = torch.as_tensor(ids)
    nll = [F.cross_entropy(model(ids[None, :i])[0, -1], ids[i]).item() for i in range(2, 16)]
    ctx = ids.unfold(0, 16, 1)[:len(ids) - 16]  # ids[i-16:i] for i = 16..n-1
    nll += F.cross_entropy(model(ctx)[:, -1], ids[16:], reduction="none").tolist()
    return math.exp(np.mean(nll))


class _ShortExcerpt(Excerpt):
    """An excerpt cut 300 / 60 / 40 instead of 5,775 / 500 / 500: the lab's protocol on a text
    small enough for the fast tier (300 training characters still take two scoring chunks)."""

    @property
    def train(self):
        return self.text[:300]

    @property
    def val(self):
        return self.text[300:360]

    @property
    def test(self):
        return self.text[360:400]


@pytest.mark.fast
def test_train_runs_score_each_model_on_its_own_excerpt_at_the_checkpoints():
    """Two runs (two excerpts, two seeds) at lr 0, so every model stays at its initialisation:
    train/val/test perplexities at the checkpoint (step 2 of 3: once) follow the protocol computed
    by hand, each model reads its own text, and the kept losses are those of the seed's own
    batches, step by step."""
    r = np.random.default_rng(0)
    exs = [_ShortExcerpt(i, 0, decode(r.integers(0, 34, 400))) for i in (0, 3)]
    cfg = LabConfig(steps=3, lr=0.0, checkpoints=(2,))
    got = train_runs(cfg, [(exs[0], 0), (exs[1], 1)], keep_loss=True)
    assert got["runs"] == [[0, 0], [3, 1]] and got["checkpoints"] == [2]
    for m, (ex, seed) in enumerate(zip(exs, (0, 1))):
        model = _gpt(cfg.model(), seed)
        for part in ("train", "val", "test"):
            ref = _protocol_ppl(model, ex.ids(part))
            assert got[part][m] == pytest.approx([ref], rel=1e-5), (m, part)
        wins = [torch.from_numpy(w) for w in batches(ex.ids("train"), seed, 3)]
        assert got["loss"][m] == pytest.approx([_ce(model, w[:, :-1], w[:, 1:]) for w in wins], rel=1e-5)
    assert "loss" not in train_runs(LabConfig(steps=1, lr=0.0, checkpoints=()), [(exs[0], 0)])


# ---- polish.py --------------------------------------------------------------------------------------

@pytest.mark.fast
def test_the_alphabet_is_32_polish_letters_space_and_full_stop_encoded_in_order():
    assert len(POLISH_LETTERS) == len(set(POLISH_LETTERS)) == 32 and POLISH_LETTERS.islower()
    assert ALPHABET == POLISH_LETTERS + " ." and len(set(ALPHABET)) == 34
    assert encode(ALPHABET).tolist() == list(range(34)) and encode("ą .").tolist() == [1, 32, 33]
    assert decode(encode("zażółć gęślą jaźń.")) == "zażółć gęślą jaźń."
    assert encode("ab").dtype == np.int64


@pytest.mark.fast
@pytest.mark.parametrize("text, expected", [
    ("Vox QUIZ", "woks kuiz"),                         # foreign letters spelled the Polish way
    ("Café à la Æsop", "cafe a la esop"),
    ("Tak, tak… Nie? Nie!", "tak tak. nie. nie."),     # sentence ends become one full stop
    ("a . . b", "a. b"),                               # no space before a stop, runs of stops are one
    ("a...b", "a.b"),
    ("  «Litwo»\n\tOjczyzno 1834 (moja)! ", "litwo ojczyzno moja."),  # the rest is a word break
])
def test_normalise_maps_any_text_onto_the_34_symbols(text, expected):
    assert normalise(text) == expected


def _book(body):
    return f"Adam Mickiewicz\nPan Tadeusz\n\nKsięga pierwsza\n{body}{FOOTER}Licencja CC BY-SA\n"


@pytest.mark.fast
def test_excerpts_are_disjoint_evenly_spaced_stretches_split_5775_500_500():
    """n excerpts at offsets i * (len // n) of the normalised poem (title page and footer cut),
    each 5,775 + 500 + 500 characters; excerpt 0 opens the poem."""
    assert (TRAIN_CHARS, VAL_CHARS, TEST_CHARS, EXCERPT_CHARS) == (5775, 500, 500, 6775)
    body = " ".join(f"słowo{i % 10}" for i in range(5000)).replace("0", "a").replace("1", "b")
    text = _book(body)
    p = poem(text)
    assert p.startswith("księga pierwsza słowo") and "licencja" not in p and "mickiewicz" not in p
    exs = excerpts(3, text)
    stride = len(p) // 3
    assert [ex.index for ex in exs] == [0, 1, 2] and [ex.offset for ex in exs] == [0, stride, 2 * stride]
    for ex in exs:
        assert ex.text == p[ex.offset:ex.offset + 6775]
        assert (len(ex.train), len(ex.val), len(ex.test)) == (5775, 500, 500)
        assert ex.train + ex.val + ex.test == ex.text
        assert ex.ids("val").tolist() == encode(ex.val).tolist()
        assert ex.sha256 == hashlib.sha256(ex.text.encode()).hexdigest()
    with pytest.raises(ValueError, match=f"6 excerpts of 6775 characters do not fit in {len(p)}"):
        excerpts(6, text)
    with pytest.raises(ValueError, match="does not look like the Wolne Lektury edition"):
        poem("Księga pierwsza\nno footer")


@pytest.mark.fast
def test_the_real_poem_gives_five_excerpts_of_the_labs_sizes_in_its_alphabet():
    """Needs pan-tadeusz.txt (skips without it): the default five excerpts, evenly spaced, only
    the 34 symbols."""
    try:
        text = data.load_text("pan-tadeusz", download=False)
    except CorpusUnavailable as e:
        no_corpus(e)
    p = poem(text)
    exs = excerpts(text=text)
    assert len(exs) == 5 and [ex.offset for ex in exs] == [i * (len(p) // 5) for i in range(5)]
    assert all((len(ex.train), len(ex.val), len(ex.test)) == (5775, 500, 500) for ex in exs)
    assert set("".join(ex.text for ex in exs)) <= set(ALPHABET) and set(p) == set(ALPHABET)


# ---- data.py ----------------------------------------------------------------------------------------

@pytest.mark.fast
@pytest.mark.parametrize("N, n_train", [(10, 9), (101, 90), (7, 6), (1, 0)])
def test_the_split_is_the_first_int_ninety_percent_then_the_rest(N, n_train):
    tokens = list(range(N))
    tr, va = data.split(tokens)
    assert (len(tr), len(va)) == (n_train, N - n_train) and tr + va == tokens
    tr, va = data.split(np.arange(10), train_fraction=0.5)
    assert tr.tolist() == [0, 1, 2, 3, 4] and va.tolist() == [5, 6, 7, 8, 9]


def _toy(monkeypatch, tmp_path, content=b"the pinned text\n"):
    c = data.Corpus("toy", "toy.txt", "http://example.invalid/toy.txt", hashlib.sha256(content).hexdigest(),
                    len(content))
    monkeypatch.setitem(data.CORPORA, "toy", c)
    monkeypatch.setattr(data, "_places", replace(data.places(), cache_dir=tmp_path / "cache"))
    monkeypatch.setattr(data, "_places", replace(data.places(), data_dir=tmp_path / "data"))
    (tmp_path / "data").mkdir()
    (tmp_path / "cache" / "data").mkdir(parents=True)
    return c


@pytest.mark.fast
def test_a_corpus_is_found_in_the_data_dir_then_the_cache_and_only_if_its_sha256_matches(monkeypatch, tmp_path):
    _toy(monkeypatch, tmp_path)
    cached = tmp_path / "cache" / "data" / "toy.txt"
    cached.write_bytes(b"the pinned text\n")
    assert data.corpus_path("toy", download=False) == cached  # not in the data dir: the cache
    (tmp_path / "data" / "toy.txt").write_bytes(b"the pinned text\n")
    assert data.corpus_path("toy", download=False) == tmp_path / "data" / "toy.txt"
    assert data.load_text("toy", download=False) == "the pinned text\n"
    (tmp_path / "data" / "toy.txt").write_bytes(b"the pinned text!\n")  # one byte off
    with pytest.raises(CorpusUnavailable, match=r"toy.txt: sha256 [0-9a-f]{12}… is not the expected"):
        data.corpus_path("toy", download=False)
    (tmp_path / "data" / "toy.txt").unlink()
    cached.write_bytes(b"")  # a wrong file in the cache is refused too
    with pytest.raises(CorpusUnavailable, match="replace the file with the one from http://example.invalid"):
        data.corpus_path("toy", download=False)
    cached.unlink()
    with pytest.raises(CorpusUnavailable, match="toy.txt is in neither the data folder"):
        data.corpus_path("toy", download=False)
    with pytest.raises(KeyError, match="unknown corpus 'nope'"):
        data.corpus_path("nope")


@pytest.mark.fast
def test_a_download_that_fails_or_differs_from_the_pin_is_not_kept(monkeypatch, tmp_path):
    _toy(monkeypatch, tmp_path)

    class _Response:
        def __init__(self, body):
            self.body = body

        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False

        def read(self):
            return self.body

    answers = iter([urllib.error.URLError("no route"), b"not the pinned text\n", b"the pinned text\n"])

    def urlopen(url, timeout):
        assert url == "http://example.invalid/toy.txt" and timeout == 7
        a = next(answers)
        if isinstance(a, Exception):
            raise a
        return _Response(a)

    monkeypatch.setattr(data.urllib.request, "urlopen", urlopen)
    dest = tmp_path / "cache" / "data" / "toy.txt"
    with pytest.raises(CorpusUnavailable, match=r"downloading http://example.invalid/toy.txt failed \(no route\)"):
        data.corpus_path("toy", timeout=7)
    with pytest.raises(CorpusUnavailable, match="its sha256 does not match the pinned"):
        data.corpus_path("toy", timeout=7)
    assert list((tmp_path / "cache" / "data").iterdir()) == []  # no partial or wrong file left
    assert data.corpus_path("toy", timeout=7) == dest and dest.read_bytes() == b"the pinned text\n"


@pytest.mark.fast
def test_sha256_reads_the_whole_file_and_writes_are_atomic(places, tmp_path, monkeypatch):
    blob = bytes(range(256)) * 9000  # 2.2 MiB: more than one read
    p = tmp_path / "big.bin"
    data.write_atomic(p, blob)
    assert p.read_bytes() == blob and [q.name for q in tmp_path.iterdir()] == ["big.bin"]
    assert data.sha256_of(p) == hashlib.sha256(blob).hexdigest()
    places(cache_dir=tmp_path / "c")
    assert data.cache_dir() == tmp_path / "c"
    places(cache_dir=None)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert data.cache_dir() == tmp_path / "x" / "claimcheck"


# ---- runs.py: the run cache's keys and memo -----------------------------------------------------------

@pytest.mark.fast
def test_a_run_key_names_what_determines_the_result_and_nothing_else():
    spec = runs.RunSpec(TINY, TrainConfig(steps=2, batch_size=2, lr=1e-3), seeds=(0, 1))
    same = runs.RunSpec(TINY, TrainConfig(steps=2, batch_size=2, lr=1e-3), seeds=(0, 1), label="a name")
    assert spec.key() == same.key() and len(spec.key()) == 20
    for other in (runs.RunSpec(TINY, spec.train, seeds=(0,)),
                  runs.RunSpec(TINY, TrainConfig(steps=3, batch_size=2, lr=1e-3), seeds=(0, 1)),
                  runs.RunSpec(GPTConfig(**{**TINY.__dict__, "d_model": 16}), spec.train, seeds=(0, 1)),
                  runs.RunSpec(TINY, spec.train, seeds=(0, 1), train_slice=0.5),
                  runs.RunSpec(TINY, spec.train, seeds=(0, 1), corpus="pan-tadeusz")):
        assert other.key() != spec.key()
    assert runs.RunSpec(TINY, spec.train, seeds=(0, 1), device="cpu:0").key() == spec.key()  # the type only
    assert len(runs.code_version()) == 12 and runs.code_version() == runs.code_version()


@pytest.mark.fast
def test_memo_computes_once_and_reads_the_record_after(places, tmp_path, monkeypatch):
    places(cache_dir=tmp_path)
    calls = []

    def compute(v):
        return lambda: calls.append(v) or {"v": v}

    key = runs.memo_key("unit", {"a": 1})
    assert key != runs.memo_key("unit", {"a": 2}) != runs.memo_key("other", {"a": 1})
    assert runs.memo_key("unit", {"a": 1}, source=test_memo_computes_once_and_reads_the_record_after) != key
    assert runs.memo(key, compute(1)) == {"v": 1} and runs.memo(key, compute(2)) == {"v": 1}
    assert json.loads((tmp_path / "runs" / f"{key}.json").read_text()) == {"v": 1}
    assert runs.memo_many([(key, compute(3)), ("k2", compute(4))]) == [{"v": 1}, {"v": 4}]
    assert calls == [1, 4]


# ---- winograd.py: scoring --------------------------------------------------------------------------

class _Stub(torch.nn.Module):
    """A 'model' whose logits are given: it records what it was shown and in which mode."""

    def __init__(self, logits):
        super().__init__()
        self.logits, self.shown = logits, []

    def forward(self, idx):
        self.shown.append((idx.clone(), self.training))
        return self.logits


@pytest.mark.fast
def test_winograd_score_reads_the_word_after_so_the_and_compares_the_pair():
    """Five held-out sentences with known answers at position 14: right (argmax = referent),
    the other noun, a third word with the referent above the other noun, a third word with it
    below, and a tie between the two nouns (not a win). accuracy 1/5, wrong_noun 1/5,
    pair_accuracy 2/5. Every other position says the referent: reading any of them would show.
    The model sees the sentence up to "the" alone, in eval mode, and is put back to training."""
    task = fixed_task()
    exs = list(task.held_out[:5])
    index = {w: i for i, w in enumerate(task.vocab)}
    V, third = len(task.vocab), index["because"]
    logits = torch.zeros(5, QUERY_AT + 1, V)
    for i, e in enumerate(exs):
        logits[i, :, index[e.ref]] = 100.0  # misleading everywhere but at QUERY_AT
        logits[i, QUERY_AT] = 0.0
    r, o = (torch.tensor([index[getattr(e, a)] for e in exs]) for a in ("ref", "other"))
    q = logits[:, QUERY_AT]
    q[0, r[0]] = 5.0
    q[1, o[1]] = 5.0
    q[2, third], q[2, r[2]], q[2, o[2]] = 5.0, 2.0, 1.0
    q[3, third], q[3, r[3]], q[3, o[3]] = 5.0, 1.0, 2.0
    q[4, third], q[4, r[4]], q[4, o[4]] = 5.0, 2.0, 2.0
    stub = _Stub(logits).train()
    got = score(stub, task, exs)
    assert got == {"accuracy": 0.2, "wrong_noun": 0.2, "pair_accuracy": 0.4}
    (shown, training), = stub.shown
    assert not training and stub.training
    assert torch.equal(shown, task.encode(exs)[:, :QUERY_AT + 1])


@pytest.mark.fast
def test_winograd_referents_tasks_and_model_configs():
    """A crosser adjective names x, a crossed one y; the fixed task holds out one order of 43
    pairs (344 sentences) and trains on the other 197 orders (1,576); the leaky one holds out 15
    of 64 animal-place pairs (120 sentences). The bag is one uniform-mean layer with nothing else."""
    task = fixed_task()
    assert (len(task.train), len(task.held_out)) == (197 * 8, 43 * 8)
    assert all((e.ref, e.other) == ((e.x, e.y) if e.adj in CROSSER else (e.y, e.x)) for e in task.held_out)
    assert fixed_task(seed=1).held_out != task.held_out and fixed_task().held_out == task.held_out
    leaky = leaky_task()
    assert (len(leaky.train), len(leaky.held_out)) == (49 * 8, 15 * 8)
    assert task.encode(task.held_out[:2]).shape == (2, 18)
    bag = model_config(task, "bag", d_model=8)
    assert (bag.mixer, bag.n_layer, bag.mlp, bag.residual, bag.positions, bag.vocab_size, bag.block_size) == \
        ("mean", 1, False, False, "none", len(task.vocab), 18)
    assert model_config(task, "2-blocks").n_layer == 2 and model_config(task, "1-block").mixer == "attention"
    with pytest.raises(ValueError, match="unknown Winograd model 'x'"):
        model_config(task, "x")
    assert format_row(["a", "b"], torch.tensor([0.5, 0.254])) == "a:0.50 b:0.25"


@pytest.mark.fast
def test_winograd_training_scores_every_eval_every_steps_and_at_the_end():
    """Curves at steps 2, 4 and the last (5); the last entry is score() of the trained model."""
    task = fixed_task()
    stack, curves = train_task(task, "bag", steps=5, seeds=(0, 1), batch=4, eval_every=2, d_model=8)
    assert len(curves) == 2 and all([c["step"] for c in curve] == [2, 4, 5] for curve in curves)
    for m, curve in enumerate(curves):
        assert {k: v for k, v in curve[-1].items() if k != "step"} == score(stack.model(m), task, task.held_out)



@pytest.mark.fast
def test_the_held_out_halves_split_by_pair_and_leave_training_as_it_was():
    """A best checkpoint chosen apart (read.checkpoint=best): the select half takes the first, third, ...
    held-out pair with all eight adjectives, the report half the rest; scoring them trains nothing."""
    from experiments.winograd import halves
    task = fixed_task(held_pairs=5)
    select, report = halves(task.held_out)
    pairs = lambda xs: [(e.x, e.y) for e in xs][::8]  # noqa: E731
    assert len(select) == 3 * 8 and len(report) == 2 * 8 and set(select).isdisjoint(report)
    assert sorted(select + report, key=task.held_out.index) == list(task.held_out)
    assert pairs(select) == pairs(task.held_out)[0::2] and pairs(report) == pairs(task.held_out)[1::2]
    plain, apart = [], []
    _, curves = train_task(task, "bag", steps=3, seeds=(0,), batch=4, eval_every=2, d_model=8, first_losses=plain)
    stack, split = train_task(task, "bag", steps=3, seeds=(0,), batch=4, eval_every=2, d_model=8, first_losses=apart,
                              select_apart=True)
    assert plain == apart and [{k: p[k] for k in curves[0][0]} for p in split[0]] == curves[0]
    assert split[0][-1]["report"] == score(stack.model(0), task, report)
    n = len(task.held_out)
    assert split[0][-1]["accuracy"] * n == pytest.approx(
        split[0][-1]["select"]["accuracy"] * len(select) + split[0][-1]["report"]["accuracy"] * len(report))

# ---- numpy_gpt.py: the hand-written layers against torch's ---------------------------------------------

@pytest.mark.fast
def test_numpy_layers_compute_what_torchs_do():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 5, 6))
    g, b = rng.normal(size=6), rng.normal(size=6)
    tx = torch.from_numpy(x)
    ln, _ = layernorm_forward(x, g, b)
    assert np.allclose(ln, F.layer_norm(tx, (6,), torch.from_numpy(g), torch.from_numpy(b)).numpy(), atol=1e-12)
    assert np.allclose(gelu_forward(x)[0], F.gelu(tx).numpy(), atol=1e-12)
    t = rng.integers(0, 6, (2, 5))
    loss, _ = cross_entropy_forward(x, t)
    assert loss == pytest.approx(F.cross_entropy(tx.flatten(0, 1), torch.from_numpy(t).flatten()).item(), rel=1e-12)
    qkv = rng.normal(size=(2, 5, 12))
    y, _ = attention_forward(qkv, n_head=2)
    q, k, v = (torch.from_numpy(a).view(2, 5, 2, 2).transpose(1, 2) for a in np.split(qkv, 3, -1))
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(2, 5, 4)
    assert np.allclose(y, ref.numpy(), atol=1e-12)


@pytest.mark.fast
def test_numpy_adam_steps_like_torchs_adam():
    torch.manual_seed(0)
    model = GPT(LabConfig().model()).double()
    lab = TinyLab(params_from_torch(model), lr=1e-2, betas=(0.8, 0.9))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2, betas=(0.8, 0.9))
    w = np.random.default_rng(1).integers(0, 34, (3, 17))
    for _ in range(3):
        ours = lab.train_step(w)
        wt = torch.from_numpy(w)
        _, loss = model(wt[:, :-1], wt[:, 1:])
        opt.zero_grad()
        loss.backward()
        opt.step()
        assert ours == pytest.approx(loss.item(), rel=1e-12)
    for name, p in model.named_parameters():
        assert np.allclose(lab.p[name], p.detach().numpy(), rtol=0, atol=1e-12), name
    assert (lab.t, lab.passes, lab.predictions) == (3, 9, 9 * 16)


# ---- grad_norms.py: NORM-03's measurement --------------------------------------------------------

@pytest.mark.slow  # seconds, not milliseconds: it runs with --runslow
def test_grad_norms_reads_every_reduction_from_one_gradient_per_block_norm_and_seed(monkeypatch):
    """12 blocks' norms per (norm, seed); the whole block's square is at least its attention's
    plus its MLP's (the LayerNorms add the rest); the seed fixes the init and the batch."""
    from experiments import grad_norms as gn
    monkeypatch.setattr(gn, "BATCH", 2)  # the shape, not the size, is under test
    tokens = np.random.default_rng(0).integers(0, 1024, 2000)
    out = gn.grad_norms(tokens, (0, 1))
    assert set(out) == {"block", "attention", "mlp"} and set(out["block"]) == {"pre", "post"}
    for r in out:
        for norm in ("pre", "post"):
            assert np.array(out[r][norm]).shape == (2, 12) and np.all(np.array(out[r][norm]) > 0)
    b, a, m = (np.array(out[r]["post"]) for r in ("block", "attention", "mlp"))
    assert np.all(b ** 2 >= a ** 2 + m ** 2 - 1e-9)
    assert out["block"]["pre"][0] != out["block"]["pre"][1]
    assert gn.grad_norms(tokens, (1,))["block"]["pre"][0] == out["block"]["pre"][1]
    with pytest.raises(ValueError, match="batch must be one of"):
        gn.grad_norms(tokens, (0,), batch="mean2")


@pytest.mark.fast
@given(n=st.integers(1, 3), k=st.sampled_from([0.001, 0.1, 1.0]), seed=st.integers(0, 2**31 - 1))
def test_an_ngram_is_a_distribution_over_the_vocabulary_for_any_context(n, k, seed):
    """The counting baselines' probabilities, as their perplexities use them: for any context,
    seen or not, p(. | context) sums to 1 over the 34 symbols."""
    from experiments.ngram import NGram
    rng = np.random.default_rng(seed)
    m = NGram(n, 34, k).fit(rng.integers(0, 34, 300))
    for ctx in (rng.integers(0, 34, n - 1), np.full(n - 1, 33)):  # a random context, and a rare one
        seqs = np.array([np.r_[ctx, w] for w in range(34)])
        p = np.exp([m.logprob(s_)[0] for s_ in seqs])
        assert p.sum() == pytest.approx(1.0, abs=1e-12) and (p > 0).all()
