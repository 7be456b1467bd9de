"""IT 3.4 Mean = matrix = softmax, and the causal mask."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model import GPT, GPTConfig, additive_mask, averaging_matrix, causal_mask
from experiments.configs import ladder

pytestmark = pytest.mark.fast


@pytest.mark.claim("MASK-01")
@given(T=st.integers(1, 64), d=st.integers(1, 32), seed=st.integers(0, 2**31 - 1))
def test_prefix_mean_loop_equals_matmul_equals_masked_softmax(T, d, seed):
    x = torch.randn(T, d, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    loop = torch.stack([x[: t + 1].mean(0) for t in range(T)])
    mat = averaging_matrix(T, torch.float64) @ x
    soft = F.softmax(additive_mask(T, torch.float64), dim=-1) @ x
    torch.testing.assert_close(mat, loop, rtol=0, atol=1e-12)  # float64 reordering
    torch.testing.assert_close(soft, loop, rtol=0, atol=1e-12)


@pytest.mark.claim("MASK-01")
def test_chapter_demo_differences_are_float32_noise(claim_record):
    """Both printed differences, 5.960464477539063e-08 = 2^-24, are one draw of float32 reordering
    on values near 1: each is judged at a few float32 ulps, the printed digits are that draw's."""
    x = torch.randn(128, 128)
    loop = torch.stack([x[: t + 1].mean(0) for t in range(128)])
    mat = averaging_matrix(128) @ x
    soft = F.softmax(additive_mask(128), dim=-1) @ x
    diffs = [claim_record("MASK-01", (loop - y).abs().max().item(), expected=5.96e-8,
                          tolerance="exact: <= 1e-6 (a few float32 ulps; the printed 2^-24 is one draw's)",
                          label=f"loop vs {name}") for name, y in (("matmul", mat), ("softmax", soft))]
    assert max(diffs) <= 1e-6


@pytest.mark.claim("MASK-02")
def test_printed_averaging_matrix(claim_record):
    printed = np.array([[1.000, 0, 0, 0, 0, 0],
                        [0.500, 0.500, 0, 0, 0, 0],
                        [0.333, 0.333, 0.333, 0, 0, 0],
                        [0.250, 0.250, 0.250, 0.250, 0, 0],
                        [0.200, 0.200, 0.200, 0.200, 0.200, 0],
                        [0.167, 0.167, 0.167, 0.167, 0.167, 0.167]])
    A = averaging_matrix(6, torch.float64).numpy()
    claim_record("MASK-02", np.round(A, 3).tolist(), expected=printed.tolist(), tolerance="exact, rounded to 3 dp",
                 label="6x6 averaging matrix, rounded as printed")
    assert np.array_equal(np.round(A, 3), printed)
    assert np.allclose(A.sum(1), 1, rtol=0, atol=1e-15)
    assert (np.triu(A, 1) == 0).all()


def _model(causal=True, **kw):
    return GPT(GPTConfig(vocab_size=50, block_size=32, d_model=32, n_layer=2, n_head=4,
                         causal=causal, **kw)).eval()


@pytest.mark.claim("MASK-03")
@given(t=st.integers(0, 30), seed=st.integers(0, 2**31 - 1),
       positions=st.sampled_from(["none", "learned", "sinusoidal", "rope", "alibi"]),
       norm=st.sampled_from(["pre", "post"]))
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])  # claim_record keeps no state
def test_output_at_t_ignores_every_later_token(t, seed, positions, norm, claim_record):
    torch.manual_seed(seed)
    m = _model(positions=positions, norm=norm)
    x = torch.randint(0, 50, (2, 32))
    y = x.clone()
    y[:, t + 1:] = torch.randint(0, 50, (2, 31 - t))  # rewrite the future
    with torch.no_grad():
        a, b = m(x)[:, : t + 1], m(y)[:, : t + 1]
    claim_record("MASK-03", (a - b).abs().max().item(), tolerance="exact: bit-identical (torch.equal)",
                 label=f"t={t}, {positions}, {norm}-norm, seed={seed}: max |change| at <= t")
    assert torch.equal(a, b)  # bit-identical, not approximately


@pytest.mark.claim("MASK-03")
def test_without_the_mask_the_answer_leaks_into_the_input():
    torch.manual_seed(0)
    m = _model(causal=False)
    x = torch.randint(0, 50, (1, 32))
    y = x.clone()
    y[0, 6] = (x[0, 6] + 1) % 50  # change the token position 5 must predict
    with torch.no_grad():
        assert not torch.allclose(m(x)[0, 5], m(y)[0, 5])


@pytest.mark.claim("MASK-04")
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])  # claim_record keeps no state
@given(T=st.integers(1, 32), seed=st.integers(0, 2**31 - 1))
def test_minus_inf_gives_exact_zeros_and_renormalises_the_rest(T, seed, claim_record):
    s = 5 * torch.randn(T, T, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    allowed = causal_mask(T)
    w = F.softmax(s.masked_fill(~allowed, float("-inf")), dim=-1)
    claim_record("MASK-04", int((w[~allowed] != 0).sum()), expected=0, tolerance="exact: == 0, not approximately",
                 label=f"T={T}, seed={seed}: forbidden weights that are not 0")
    assert (w[~allowed] == 0).all()  # exactly zero, not approximately
    for t in range(T):
        torch.testing.assert_close(w[t, : t + 1], F.softmax(s[t, : t + 1], -1), rtol=0, atol=1e-15)


@pytest.mark.claim("MASK-04")
def test_a_fully_masked_row_is_nan_which_a_causal_mask_never_builds():
    s = torch.zeros(3).masked_fill(torch.ones(3, dtype=torch.bool), float("-inf"))
    assert torch.isnan(F.softmax(s, -1)).all()  # why the diagonal must stay allowed
    assert causal_mask(64).diagonal().all()


@pytest.mark.claim("MASK-05")
def test_minus_inf_survives_float16(claim_record):
    assert np.float16(-np.inf) == -np.inf
    assert torch.tensor(float("-inf")).half().isinf().item()
    s = torch.randn(16, 16).half()
    w = F.softmax(s.masked_fill(~causal_mask(16), float("-inf")).float(), -1).half()
    assert (w[~causal_mask(16)] == 0).all()
    # The catalogue's caveat: -1e9 also becomes -inf in a float16 cast, so the cast is not
    # where -1e9 goes wrong. Recorded, not asserted as the chapter's point.
    with np.errstate(over="ignore"):
        assert np.float16(-1e9) == -np.inf
    try:
        torch.zeros(2, dtype=torch.half).masked_fill(torch.tensor([True, False]), -1e9)
        behaviour = "masked_fill(-1e9) on float16 gives -inf silently"
    except RuntimeError as e:
        behaviour = f"masked_fill(-1e9) on float16 raises: {str(e).splitlines()[0][:80]}"
    claim_record("MASK-05", behaviour, label="torch float16 and -1e9")


@pytest.mark.claim("MASK-06")
@pytest.mark.parametrize("c", [-5.0, 0.0, 3.0, 100.0])
def test_equal_allowed_scores_give_the_uniform_average(c, claim_record):
    T = 12
    s = torch.full((T, T), c, dtype=torch.float64).masked_fill(~causal_mask(T), float("-inf"))
    w, A = F.softmax(s, -1), averaging_matrix(T, torch.float64)
    claim_record("MASK-06", (w - A).abs().max().item(), tolerance="exact: atol 1e-15, rtol 0 (float64)",
                 label=f"equal scores c={c}: max |softmax - uniform average|")
    torch.testing.assert_close(w, A, rtol=0, atol=1e-15)


@pytest.mark.claim("MASK-06")
@given(seed=st.integers(0, 2**31 - 1), scale=st.floats(0.01, 100))
def test_any_scores_become_valid_weights(seed, scale):
    s = scale * torch.randn(16, 16, generator=torch.Generator().manual_seed(seed))
    w = F.softmax(s.masked_fill(~causal_mask(16), float("-inf")), -1)
    assert (torch.triu(w, 1) == 0).all()  # no weight on any later position: exactly 0, by index
    assert (w.sum(-1) - 1).abs().max() < 1e-6  # float32 row sums


@pytest.mark.claim("MASK-03")
@given(t=st.integers(0, 14), seed=st.integers(0, 2**31 - 1),
       rung=st.sampled_from(list(ladder(GPTConfig(vocab_size=50, block_size=16, d_model=16)))))
def test_every_rung_of_the_ladder_is_causal(t, seed, rung):
    """Every mixer the ladder builds (none, the uniform mean, one head, four heads, with or
    without residual, MLP, norms, two blocks): rewriting the future moves no past output."""
    torch.manual_seed(seed)
    m = GPT(ladder(GPTConfig(vocab_size=50, block_size=16, d_model=16))[rung]).eval()
    x = torch.randint(0, 50, (2, 16))
    y = x.clone()
    y[:, t + 1:] = (y[:, t + 1:] + 1 + torch.randint(0, 48, (2, 15 - t))) % 50  # every later token changes
    with torch.no_grad():
        assert torch.equal(m(x)[:, : t + 1], m(y)[:, : t + 1])
