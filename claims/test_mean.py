"""IT 3.3 The mean as a context summariser: order-blind, dilutes the present."""
import math
import numpy as np

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model import GPT, averaging_matrix
from experiments.configs import ladder
from suite.catalogue import LADDER_LOOKS
from suite.rules import ladder_gap
from claimcheck.rules import beyond, interval, interval_looks, joint_looks, judge, judge_look, within
from claimcheck import diverges
from suite.reading import reads
from suite.catalogue import LADDER_CI, LADDER_FULL


shapes = dict(T=st.integers(2, 64), d=st.integers(1, 32), seed=st.integers(0, 2**31 - 1))


@pytest.mark.fast
@pytest.mark.claim("AVG-01")
@pytest.mark.parametrize("T", [1, 7, 128])
def test_mean_takes_any_count_and_has_gradient_identity_over_T(T, claim_record):
    d = 5
    x = torch.randn(T, d, dtype=torch.float64)
    assert x.mean(0).shape == (d,)
    J = torch.autograd.functional.jacobian(lambda x: x.mean(0), x)  # (d, T, d)
    eye = torch.eye(d, dtype=torch.float64) / T
    claim_record("AVG-01", max((J[:, i, :] - eye).abs().max().item() for i in range(T)),
                 tolerance="exact: atol 1e-15, rtol 0 (float64)", label=f"T={T}: max |d mean / d x_i - I/T|")
    for i in range(T):
        torch.testing.assert_close(J[:, i, :], torch.eye(d, dtype=torch.float64) / T, rtol=0, atol=1e-15)


# "Tabella di embedding più questa media più un layer lineare verso il vocabolario: un language model
# completo in quindici righe" (IT L11). The chapter's own lines are not in our copy, so the sentence is
# judged as it can be: that such a model, written out whole, fits in fifteen lines and is a language model.
MEAN_LM = """
import torch, torch.nn as nn, torch.nn.functional as F
class MeanLM(nn.Module):
    def __init__(self, vocab, d):
        super().__init__()
        self.emb, self.out = nn.Embedding(vocab, d), nn.Linear(d, vocab)
    def forward(self, idx):                                       # idx (B, T)
        T = idx.shape[1]
        A = torch.tril(torch.ones(T, T)) / torch.arange(1, T + 1)[:, None]  # (T, T), rows sum to 1
        return self.out(A @ self.emb(idx))                        # (B, T, vocab)
    def loss(self, idx):                                          # next-token cross-entropy
        return F.cross_entropy(self(idx[:, :-1]).flatten(0, 1), idx[:, 1:].flatten())
    def sample(self, idx, n):                                     # idx (1, T) -> (1, T + n)
        for _ in range(n):
            idx = torch.cat([idx, torch.multinomial(F.softmax(self(idx)[:, -1], -1), 1)], 1)
        return idx
"""


@pytest.mark.fast
@pytest.mark.claim("AVG-10")
def test_embedding_mean_and_linear_make_a_language_model_in_fifteen_lines(claim_record):
    """The model as L11 lists it, whole (imports, next-token loss, sampling): its lines counted, and
    shown to be a language model: causal, trained below the uniform guess, able to write."""
    lines = claim_record("AVG-10", sum(1 for line in MEAN_LM.splitlines() if line.strip()), expected=15,
                         tolerance="exact (weaker form: our copy of the chapter lacks its code, so 'fits in "
                                   "fifteen lines' is judged on the model written out whole): <= 15",
                         label="non-blank lines: imports, model, loss, sampling")
    space = {}
    exec(MEAN_LM, space)
    text = torch.tensor(list(b"to be or not to be, that is the question. " * 20))  # bytes as tokens
    torch.manual_seed(0)
    m = space["MeanLM"](256, 32)
    idx = text.view(20, -1)  # (20, 43)
    before = m.loss(idx).item()
    opt = torch.optim.AdamW(m.parameters(), lr=3e-2)
    for _ in range(100):
        opt.zero_grad()
        m.loss(idx).backward()
        opt.step()
    k = len(set(text.tolist()))
    after = claim_record("AVG-10", round(m.loss(idx).item(), 3), expected=f"< ln {k} = {math.log(k):.3f}",
                         tolerance=f"exact: below the uniform guess over the text's {k} distinct bytes",
                         label=f"training loss after 100 AdamW steps (before: {before:.3f})")
    x = text[None, :10]
    y = x.clone()
    y[0, 6:] = 0  # a different future leaves the past's predictions alone: causal
    with torch.no_grad():
        causal = torch.equal(m(x)[:, :6], m(y)[:, :6])
        written = m.sample(x[:, :3], 20)
    assert lines <= 15 and after < math.log(k) and causal and written.shape == (1, 23)


@pytest.mark.fast
@pytest.mark.claim("AVG-04")
@given(**shapes)
def test_shuffling_the_window_leaves_the_mean_unchanged(T, d, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(T, d, generator=g)
    y = x[torch.randperm(T, generator=g)]
    A = averaging_matrix(T)
    # float32: a reordered sum differs by a few ulps of values ~1; 1e-6 is ~8 ulps at 1.0
    assert (A[-1] @ x - A[-1] @ y).abs().max().item() <= 1e-6
    exact = [math.fsum(col) for col in x.double().T.tolist()]  # correctly rounded: order-free
    assert exact == [math.fsum(col) for col in y.double().T.tolist()]


@pytest.mark.fast
@pytest.mark.claim("AVG-04")
def test_chapter_shuffle_demo_is_float_noise(claim_record):
    x = torch.randn(128, 128)
    A = averaging_matrix(128)
    diff = (A[-1] @ x - A[-1] @ x[torch.randperm(128)]).abs().max().item()
    # the chapter's 2.98e-08 (2^-25) is one draw of float32 reordering noise, not a value to match
    claim_record("AVG-04", diff, expected=2.98e-8, band=(0.0, 1e-6),
                 tolerance="comparison: at most 1e-6, float32 reordering noise (the chapter's 2^-25 is one draw of it)")


@pytest.mark.fast
@pytest.mark.claim("AVG-05")
@given(seed=st.integers(0, 2**31 - 1), T=st.integers(2, 32))
def test_mean_only_lm_cannot_tell_a_window_from_its_permutation(seed, T):
    torch.manual_seed(seed)
    lm = GPT(ladder()["mean"]).eval()  # embedding -> causal mean -> linear
    idx = torch.randint(0, 1024, (1, T))
    perm = idx[:, torch.randperm(T)]
    with torch.no_grad():
        a, b = lm(idx)[0, -1], lm(perm)[0, -1]
    torch.testing.assert_close(a, b, rtol=0, atol=1e-5)  # float32 sums of 128-wide rows, reordered


@pytest.mark.fast
@pytest.mark.claim("AVG-05")
def test_dog_bit_man_equals_man_bit_dog_for_the_mean_lm(claim_record):
    lm = GPT(ladder()["mean"]).eval()
    the, dog, bit, man = 1, 2, 3, 4
    with torch.no_grad():
        a = lm(torch.tensor([[the, dog, bit, the, man]]))[0, -1]
        b = lm(torch.tensor([[the, man, bit, the, dog]]))[0, -1]
    claim_record("AVG-05", (a - b).abs().max().item(), tolerance="exact: atol 1e-6, rtol 0: float32",
                 label="dog bit man vs man bit dog: max |logit difference|")
    torch.testing.assert_close(a, b, rtol=0, atol=1e-6)


@pytest.mark.fast
@pytest.mark.claim("AVG-07")
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])  # claim_record keeps no state
@given(**shapes)
def test_positions_added_before_the_mean_are_forgotten(T, d, seed, claim_record):
    g = torch.Generator().manual_seed(seed)
    x, P = torch.randn(T, d, generator=g), torch.randn(T, d, generator=g)
    perm = torch.randperm(T, generator=g)
    A = averaging_matrix(T)
    # the position term contributes mean(P) whatever the content's order
    diff = claim_record("AVG-07", (A[-1] @ (x[perm] + P) - A[-1] @ (x + P)).abs().max().item(),
                        tolerance="exact: <= 1e-6, float32 reordering",
                        label=f"T={T}, d={d}, seed={seed}: max |change|")
    assert diff <= 1e-6


@pytest.mark.fast
@pytest.mark.claim("AVG-08")
def test_at_position_100_the_current_token_is_one_hundredth(claim_record):
    A = averaging_matrix(128, dtype=torch.float64)
    share = claim_record("AVG-08", A[99, 99].item(), expected=0.01, tolerance="exact (float64)")
    assert share == 0.01
    torch.testing.assert_close(A.diagonal(), 1 / torch.arange(1, 129, dtype=torch.float64), rtol=0, atol=0)


# ---- training claims: CI scale (slow) and the document's configuration (gpu) ---------------



@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("AVG-02")
@reads(LADDER_CI)
def test_averaging_the_context_is_several_times_worse_than_none(runs_of, claim_record):
    ladder_ci = runs_of(LADDER_CI)
    r = claim_record("AVG-02", ladder_ci.val("mean") / ladder_ci.val("no-context"), expected=4.16,
                     tolerance="reported", label="CI scale: mean / no context, per seed")
    judge("AVG-02", interval(claim_record, "AVG-02", r, lambda lo, hi: beyond(lo, hi, 2),
                             "comparison (CI scale: 'several times', not the 4x): the 90 % interval of the mean "
                             "paired ratio above 2", "CI scale: mean / no context", expected=4.16),
          "the mean is several times worse than no context")


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("AVG-06")
@reads(LADDER_CI)
def test_positions_before_the_mean_barely_help(runs_of, claim_record):
    ladder_ci = runs_of(LADDER_CI)
    mean, pos, res = (ladder_ci.val(k) for k in ("mean", "mean+positions", "mean+residual"))
    share = (mean - pos) / (mean - res)
    claim_record("AVG-06", share, expected=2.14 / 188, tolerance="reported",
                 label="CI scale: positions' share of the residual's gain, per seed")
    judge("AVG-06", interval(claim_record, "AVG-06", share, lambda lo, hi: within(lo, hi, (-0.1, 0.1)),
                             "comparison (CI scale: 'barely'): the 90 % interval of the mean share inside ±0.1 of "
                             "the gap the residual closes", "CI scale: positions' share of the residual's gain",
                             expected=round(2.14 / 188, 4)),
          "positions before the mean barely help")


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("AVG-09")
@reads(LADDER_CI)
def test_the_residual_mean_contributes_nothing(runs_of, claim_record):
    ladder_ci = runs_of(LADDER_CI)
    r = claim_record("AVG-09", ladder_ci.val("mean+residual") / ladder_ci.val("no-context"),
                     expected=60.45 / 59.71, tolerance="reported", label="CI scale: residual mean / no context, per seed")
    # the uniform mean adds no information: the residual mean is no better than no context
    judge("AVG-09", interval(claim_record, "AVG-09", r, lambda lo, hi: beyond(lo, hi, 0.97),
                             "comparison: the 90 % interval of the mean paired ratio above 0.97 (no better than no "
                             "context, with 3 % for 'nulla')", "CI scale: residual mean / no context",
                             expected=round(60.45 / 59.71, 4)),
          "the residual mean is no better than no context")


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("AVG-09")
@diverges("at CI scale the residual mean stays clearly worse than no "
                   "context (the text: +1.2 %); the gpu tier checks the full configuration")
@reads(LADDER_CI)
def test_the_residual_mean_is_within_3_percent_of_no_context(runs_of, claim_record):
    ladder_ci = runs_of(LADDER_CI)
    r = ladder_ci.val("mean+residual") / ladder_ci.val("no-context")
    claim_record("AVG-09", [x - 1 for x in r], expected=0.012, tolerance="reported", label="CI scale: relative gap, per seed")
    judge("AVG-09", interval(claim_record, "AVG-09", r - 1, lambda lo, hi: within(lo, hi, (-0.03, 0.03)),
                             "comparison: the 90 % interval of the mean relative gap inside ±3 % ('quasi', "
                             "docs/reference/statistics.md)", "CI scale: residual mean / no context - 1", expected=0.012),
          "the residual mean is within 3 % of no context")


@pytest.mark.slow
@pytest.mark.scale("analytic")
@pytest.mark.claim("AVG-03")
def test_a_counted_token_bigram_lands_where_the_no_context_model_does(shakespeare_tokens, claim_record):
    """No training: an add-k token bigram on the same split, k chosen on the last tenth of train.
    A count, not a training run, so analytic; slow only because it tokenises the corpus."""
    from experiments.data import split
    from experiments.ngram import NGram
    train, val = split(shakespeare_tokens)
    fit, tune = split(train)
    k = min((10.0 ** e for e in range(-4, 1)), key=lambda k: NGram(2, 1024, k).fit(fit).perplexity(tune))
    ppl = claim_record("AVG-03", NGram(2, 1024, k).fit(train).perplexity(val), expected=59.71,
                       tolerance="exact: 55-65 (a stand-in: a counted bigram lands near the trained one; the "
                                 "trained 59.71 is judged at full scale)",
                       label=f"add-{k:g} token bigram, val ppl")
    assert 55 <= ppl <= 65


# Full scale: the document reports one number per rung. A trained number printed bare is judged
# within 5 % (the word table, docs/reference/statistics.md), a derived one within 15 % (catalogue §2a: ±0.5 per
# rounded difference used), each on the interval of the seed mean at the declared looks
# (catalogue.LADDER_LOOKS, a sequential design).

def _near(claim_record, cid, x, doc, rel, label, why, available):
    claim_record(cid, np.round(x, 2), expected=doc, tolerance="reported", label=f"{label}, per seed")
    band = (doc * (1 - rel), doc * (1 + rel))
    return interval_looks(claim_record, cid, x, lambda lo, hi: within(lo, hi, band),
                          f"equivalence: the interval of the seed mean inside {doc} ± {rel:.0%} ({why})", label,
                          LADDER_LOOKS, available, expected=doc)


@pytest.mark.gpu
@pytest.mark.claim("AVG-03")
@reads(LADDER_FULL)
def test_no_context_baseline_is_59_71(runs_of, claim_record):
    ladder_full = runs_of(LADDER_FULL)
    judge_look("AVG-03", _near(claim_record, "AVG-03", ladder_full.val("no-context"), 59.71, 0.05,
                               "full scale: no context", "a trained number printed bare", ladder_full.prefix()), "59.71",
               doc=59.71)


@pytest.mark.gpu
@pytest.mark.claim("AVG-02")
@reads(LADDER_FULL)
def test_the_mean_is_four_times_worse_at_full_scale(runs_of, claim_record):
    ladder_full = runs_of(LADDER_FULL)
    mean, noctx = ladder_full.val("mean"), ladder_full.val("no-context")
    claim_record("AVG-02", np.round(mean, 2), expected=248.45, tolerance="reported", label="full scale: mean, per seed")
    # "quattro volte peggiore", read as NORM-05 reads "otto volte": the ratio rounds to 4; and the
    # mean's own perplexity, a derived number, within 15 %
    judge_look("AVG-02", joint_looks(claim_record, "AVG-02", [
        ("full scale: mean / no context", mean / noctx, lambda lo, hi: within(lo, hi, (3.5, np.nextafter(4.5, 0)))),
        ("full scale: mean", mean, lambda lo, hi: within(lo, hi, (248.45 * 0.85, 248.45 * 1.15)))],
        "joint: the ratio's interval inside [3.5, 4.5) ('quattro volte'), the mean's inside 248.45 ± 15 % "
        "(derived)", LADDER_LOOKS, ladder_full.prefix()), "four times worse, the mean near 248.45")


@pytest.mark.gpu
@pytest.mark.claim("AVG-06")
@reads(LADDER_FULL)
def test_positions_gain_2_14_at_full_scale(runs_of, claim_record):
    """"ha guadagnato 2,14 punti su 188": the gain and the 188 it is out of (the mean against the
    mean with a residual, ABL-04's), each by the gap row, jointly."""
    ladder_full = runs_of(LADDER_FULL)
    mean = ladder_full.val("mean")
    parts, texts = [], []
    for label, x, doc, with_ in (("full scale: gain", mean - ladder_full.val("mean+positions"), 2.14, "mean+positions"),
                                 ("full scale: mean - mean+residual", mean - ladder_full.val("mean+residual"), 188,
                                  "mean+residual")):
        claim_record("AVG-06", x.round(2), expected=doc, tolerance="reported", label=f"{label}, per seed")
        band, text = ladder_gap(doc, "mean", with_)
        parts.append((label, x, (lambda b: lambda lo, hi: within(lo, hi, b))(band)))
        texts.append(text)
    judge_look("AVG-06", joint_looks(claim_record, "AVG-06", parts, "joint: each interval of the mean paired gap inside "
                                     "its band: " + "; ".join(texts), LADDER_LOOKS, ladder_full.prefix()),
               "2.14 points of 188", doc=2.14)


@pytest.mark.gpu
@pytest.mark.claim("AVG-09")
@reads(LADDER_FULL)
def test_the_residual_mean_is_60_45(runs_of, claim_record):
    """"la media uniforme non contribuisce nulla: 60,45 contro una baseline di 59,71": the rung
    inside 60.45 ± 5 % (bare), and its paired gap to the baseline inside ± 3 % of 59.71 ("nulla",
    the barely row, as SQRT-09's "non vale nulla"), jointly. The baseline's own 59.71 is AVG-03."""
    ladder_full = runs_of(LADDER_FULL)
    mr, noctx = ladder_full.val("mean+residual"), ladder_full.val("no-context")
    claim_record("AVG-09", np.round(mr, 2), expected=60.45, tolerance="reported", label="full scale: mean + residual, per seed")
    claim_record("AVG-09", np.round(mr - noctx, 2), expected=round(60.45 - 59.71, 2), tolerance="reported",
                 label="full scale: mean + residual - no context, per seed")
    rung, nothing = (60.45 * 0.95, 60.45 * 1.05), (-0.03 * 59.71, 0.03 * 59.71)
    judge_look("AVG-09", joint_looks(claim_record, "AVG-09", [
        ("full scale: mean + residual", mr, lambda lo, hi: within(lo, hi, rung)),
        ("full scale: mean + residual - no context", mr - noctx, lambda lo, hi: within(lo, hi, nothing))],
        f"joint: the rung's interval inside 60.45 ± 5 % (bare); the paired gap's inside ± 3 % of 59.71 "
        f"[{nothing[0]:.2f}, {nothing[1]:.2f}] ('non contribuisce nulla', the barely row)", LADDER_LOOKS,
        ladder_full.prefix()), "60.45 against 59.71: nothing contributed", doc=60.45)
