"""IT 3.5 From scores to queries, keys and values."""
import math

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model import LearnedMixing, MultiHeadAttention, causal_mask
from model.params import count

pytestmark = pytest.mark.fast


@pytest.mark.claim("QKV-01")
def test_a_learned_T_by_T_matrix_gives_the_same_weights_for_every_sentence(claim_record):
    """Read off the outputs, not the module's own ``weights``: with d > T a sentence x (T, d)
    has full row rank, so y = W x determines the mixing matrix W = y x^T (x x^T)^-1 that
    was really applied. Two sentences must give one and the same W."""
    mix = LearnedMixing(16).double()
    torch.nn.init.normal_(mix.scores)
    g = torch.Generator().manual_seed(0)
    a, b = (torch.randn(16, 32, dtype=torch.float64, generator=g) for _ in range(2))  # two sentences

    def applied(x):
        with torch.no_grad():
            y = mix(x[None])[0]
        return torch.linalg.solve(x @ x.T, x @ y.T).T  # W with y = W x

    Wa, Wb = applied(a), applied(b)
    claim_record("QKV-01", (Wa - Wb).abs().max().item(), tolerance="exact: atol 1e-9, rtol 0: float64 solve",
                 label="max |W applied to sentence a - W applied to sentence b|")
    torch.testing.assert_close(Wa, Wb, rtol=0, atol=1e-9)  # float64 solve; no input enters the weights
    torch.testing.assert_close(Wa, mix.weights(16).detach(), rtol=0, atol=1e-9)  # and it is the learned one


@pytest.mark.claim("QKV-01")
def test_look_four_back_is_representable_by_a_fixed_matrix():
    mix = LearnedMixing(16)
    with torch.no_grad():
        mix.scores.copy_(100.0 * torch.diag(torch.ones(12), -4))  # a big score at offset 4
    w = mix.weights(16)
    for t in range(4, 16):
        assert w[t, t - 4] > 0.999


@pytest.mark.claim("QKV-02")
def test_raw_dot_products_put_each_row_maximum_on_itself_for_equal_norms():
    X = torch.nn.functional.normalize(torch.randn(32, 16, dtype=torch.float64), dim=1)
    G = X @ X.T
    assert torch.equal(G.argmax(1), torch.arange(32))  # Cauchy-Schwarz: a theorem for equal norms


@pytest.mark.claim("QKV-02")
def test_random_gaussian_tokens_attend_mostly_to_themselves(claim_record):
    hits = []
    for _ in range(100):
        X = torch.randn(16, 64, dtype=torch.float64)
        hits.append((X @ X.T).argmax(1).eq(torch.arange(16)).double().mean().item())
    rate = claim_record("QKV-02", sum(hits) / len(hits),
                        tolerance="exact: >= 0.95 over 100 draws of 16x64 (||x||^2 ~ 64 vs x.y ~ N(0, 64))")
    assert rate >= 0.95


@pytest.mark.claim("QKV-03")
def test_raw_scores_are_symmetric_and_distinct_projections_break_it(claim_record):
    X = torch.randn(10, 16, dtype=torch.float64)
    G = (X[:, None, :] * X[None, :, :]).sum(-1)  # x_t . x_i term by term: no BLAS blocking order
    assert (G - G.T).abs().max() == 0
    Wq, Wk = torch.randn(16, 16, dtype=torch.float64), torch.randn(16, 16, dtype=torch.float64)
    S = (X @ Wq) @ (X @ Wk).T
    asym = claim_record("QKV-03", (S - S.T).abs().max().item(), tolerance="exact: > 1e-3",
                        label="max |S - S^T| with W_q != W_k")
    assert asym > 1e-3
    S_same = (X @ Wq) @ (X @ Wq).T  # the excluded special case W_q = W_k stays symmetric
    assert (S_same - S_same.T).abs().max() < 1e-10


@pytest.mark.claim("QKV-04")
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])  # claim_record keeps no state
@given(T=st.integers(1, 24), d=st.integers(2, 24), hs=st.integers(1, 24), seed=st.integers(0, 2**31 - 1))
def test_the_head_is_the_closed_formula(T, d, hs, seed, claim_record):
    torch.manual_seed(seed)
    head = MultiHeadAttention(d, n_head=1, d_head=hs, w_o=True).double()
    x = torch.randn(2, T, d, dtype=torch.float64)
    Wq, Wk, Wv = head.qkv.weight.split(hs)
    M = torch.zeros(T, T, dtype=torch.float64).masked_fill(~causal_mask(T), float("-inf"))
    formula = torch.softmax((x @ Wq.T) @ (x @ Wk.T).transpose(1, 2) / math.sqrt(hs) + M, -1) @ (x @ Wv.T)
    out, ref = head(x), head.proj(formula)
    claim_record("QKV-04", (out - ref).abs().max().item(), tolerance="exact: atol 1e-12, rtol 0: float64 reordering",
                 label=f"T={T}, d={d}, d_head={hs}, seed={seed}: max |head - formula|")
    torch.testing.assert_close(out, ref, rtol=0, atol=1e-12)  # float64 reordering


@pytest.mark.claim("QKV-04")
def test_the_head_has_three_bias_free_projections_and_works_below_the_window():
    head = MultiHeadAttention(128, n_head=1, w_o=False)
    assert count(head) == 3 * 128 * 128
    assert head(torch.randn(2, 5, 128)).shape == (2, 5, 128)  # T < window: the mask is sliced
