"""IT 3.3 The mean as a context summariser: order-blind, dilutes the present."""
import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from model import GPT, averaging_matrix
from experiments.configs import ladder
from claimcheck import diverges


shapes = dict(T=st.integers(2, 64), d=st.integers(1, 32), seed=st.integers(0, 2**31 - 1))


@pytest.mark.fast
@pytest.mark.claim("AVG-01")
@pytest.mark.parametrize("T", [1, 7, 128])
def test_mean_takes_any_count_and_has_gradient_identity_over_T(T):
    d = 5
    x = torch.randn(T, d, dtype=torch.float64)
    assert x.mean(0).shape == (d,)
    J = torch.autograd.functional.jacobian(lambda x: x.mean(0), x)  # (d, T, d)
    for i in range(T):
        torch.testing.assert_close(J[:, i, :], torch.eye(d, dtype=torch.float64) / T, rtol=0, atol=1e-15)


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
    claim_record("AVG-04", diff, expected=2.98e-8, tolerance="<= 1e-6 (float32 reordering noise)")
    assert diff <= 1e-6


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
def test_dog_bit_man_equals_man_bit_dog_for_the_mean_lm():
    lm = GPT(ladder()["mean"]).eval()
    the, dog, bit, man = 1, 2, 3, 4
    with torch.no_grad():
        a = lm(torch.tensor([[the, dog, bit, the, man]]))[0, -1]
        b = lm(torch.tensor([[the, man, bit, the, dog]]))[0, -1]
    torch.testing.assert_close(a, b, rtol=0, atol=1e-6)


@pytest.mark.fast
@pytest.mark.claim("AVG-07")
@given(**shapes)
def test_positions_added_before_the_mean_are_forgotten(T, d, seed):
    g = torch.Generator().manual_seed(seed)
    x, P = torch.randn(T, d, generator=g), torch.randn(T, d, generator=g)
    perm = torch.randperm(T, generator=g)
    A = averaging_matrix(T)
    # the position term contributes mean(P) whatever the content's order
    assert (A[-1] @ (x[perm] + P) - A[-1] @ (x + P)).abs().max().item() <= 1e-6


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
def test_averaging_the_context_is_several_times_worse_than_none(ladder_ci, claim_record):
    r = claim_record("AVG-02", ladder_ci.val("mean") / ladder_ci.val("no-context"), expected=4.16,
                     tolerance="> 2 on every seed (CI scale: the ordering, not the 4x) (3 seeds: a replication check of the ordering, not a rate)",
                     label="CI scale: mean / no context, per seed")
    assert all(x > 2 for x in r)


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("AVG-06")
def test_positions_before_the_mean_barely_help(ladder_ci, claim_record):
    mean, pos, res = (ladder_ci.val(k) for k in ("mean", "mean+positions", "mean+residual"))
    share = (mean - pos) / (mean - res)
    claim_record("AVG-06", share, expected=2.14 / 188, tolerance="< 0.1 of the gap the residual closes",
                 label="CI scale: positions' share of the residual's gain, per seed")
    assert all(abs(s) < 0.1 for s in share)


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("AVG-09")
def test_the_residual_mean_contributes_nothing(ladder_ci, claim_record):
    r = claim_record("AVG-09", ladder_ci.val("mean+residual") / ladder_ci.val("no-context"),
                     expected=60.45 / 59.71, tolerance=">= 0.97: no better than no context",
                     label="CI scale: residual mean / no context, per seed")
    assert all(x >= 0.97 for x in r)  # the uniform mean adds no information


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("AVG-09")
@diverges("at CI scale the residual mean stays clearly worse than no "
                   "context (the text: +1.2 %); the gpu tier checks the full configuration")
def test_the_residual_mean_is_within_3_percent_of_no_context(ladder_ci, claim_record):
    r = ladder_ci.val("mean+residual") / ladder_ci.val("no-context")
    claim_record("AVG-09", [x - 1 for x in r], expected=0.012, tolerance="|relative gap| < 3 % per seed",
                 label="CI scale: relative gap, per seed")
    assert all(abs(x - 1) < 0.03 for x in r)


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
                       tolerance="55-65 (catalogue: a counted bigram lands near the trained one)",
                       label=f"add-{k:g} token bigram, val ppl")
    assert 55 <= ppl <= 65


# Full scale: one run per rung (the document reports one number per rung). Stated values
# within 5 %: a rung's seed spread at CI scale is ~1-2 %, doubled for one unreplicated run.
# Derived values (catalogue §2a: ±0.5 per rounded difference used) within 15 %.

@pytest.mark.gpu
@pytest.mark.claim("AVG-03")
def test_no_context_baseline_is_59_71(ladder_full, claim_record):
    (v,) = ladder_full.val("no-context")
    claim_record("AVG-03", v, expected=59.71, tolerance="±5 %", label="full scale")
    assert v == pytest.approx(59.71, rel=0.05)


@pytest.mark.gpu
@pytest.mark.claim("AVG-02")
def test_the_mean_is_four_times_worse_at_full_scale(ladder_full, claim_record):
    (mean,), (noctx,) = ladder_full.val("mean"), ladder_full.val("no-context")
    claim_record("AVG-02", mean, expected=248.45, tolerance="±15 % (derived)", label="full scale: mean")
    # "quattro volte peggiore", read as NORM-05 reads "otto volte": the ratio rounds to 4
    ratio = claim_record("AVG-02", round(mean / noctx, 3), expected=4, tolerance="rounds to 4: [3.5, 4.5)",
                         label="full scale: mean / no context")
    assert mean == pytest.approx(248.45, rel=0.15) and round(ratio) == 4


@pytest.mark.gpu
@pytest.mark.claim("AVG-06")
def test_positions_gain_2_14_at_full_scale(ladder_full, claim_record):
    (mean,), (pos,) = ladder_full.val("mean"), ladder_full.val("mean+positions")
    claim_record("AVG-06", mean - pos, expected=2.14, tolerance="±2", label="full scale: gain")
    assert abs((mean - pos) - 2.14) <= 2


@pytest.mark.gpu
@pytest.mark.claim("AVG-09")
def test_the_residual_mean_is_60_45(ladder_full, claim_record):
    (res,) = ladder_full.val("mean+residual")
    claim_record("AVG-09", res, expected=60.45, tolerance="±5 %", label="full scale")
    assert res == pytest.approx(60.45, rel=0.05)
