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


@pytest.mark.claim("QKV-04")
def test_the_value_is_a_third_map_that_copies_without_changing_what_is_matched(claim_record):
    """"apprendi una terza mappa, v_i = W_v x_i, il value, e somma quelli": changing W_v leaves the
    attention weights as they were and changes only what is summed, and the output is then the
    weighted sum of the new W_v x_i."""
    from model import capture_attention
    torch.manual_seed(0)
    head = MultiHeadAttention(16, n_head=1, w_o=False).double()
    x = torch.randn(1, 6, 16, dtype=torch.float64)
    with capture_attention(head) as before, torch.no_grad():
        head(x)
    with torch.no_grad():
        head.qkv.weight[32:] = torch.randn(16, 16, dtype=torch.float64)  # W_v: the third 16 rows
        with capture_attention(head) as after:
            y = head(x)
    w = after[0].weights[0, 0]  # (T, T)
    moved = claim_record("QKV-04", (before[0].weights - w).abs().max().item(), tolerance="exact: atol 1e-15 (float64)",
                         label="attention weights after W_v changes")
    summed = claim_record("QKV-04", (y[0] - w @ (x[0] @ head.qkv.weight[32:].T)).abs().max().item(),
                          tolerance="exact: atol 1e-12 (float64)", label="output against sum_j w_ij W_v x_j")
    assert moved <= 1e-15 and summed <= 1e-12
