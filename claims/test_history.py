"""IT 3.2 History and motivation: recurrences multiply Jacobians; attention is one matmul."""
import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from model import averaging_matrix
from model.attention import attend

pytestmark = pytest.mark.fast


def _jacobian_norm(step, h0, T):
    """||dh_T/dh_0||_2 through T applications of ``step``."""
    J = torch.autograd.functional.jacobian(lambda h: _unroll(step, h, T), h0)
    return torch.linalg.matrix_norm(J, ord=2).item()


def _unroll(step, h, T):
    for _ in range(T):
        h = step(h)
    return h


@pytest.mark.claim("HIST-01")
@pytest.mark.parametrize("rho", [0.9, 1.1])
@pytest.mark.parametrize("T", [10, 50])
def test_linear_recurrence_gradient_scales_as_rho_to_the_T(rho, T, claim_record):
    g = torch.Generator().manual_seed(0)
    Q, _ = torch.linalg.qr(torch.randn(16, 16, dtype=torch.float64, generator=g))
    W = rho * Q  # every singular value is rho
    norm = _jacobian_norm(lambda h: W @ h, torch.randn(16, dtype=torch.float64, generator=g), T)
    claim_record("HIST-01", norm, expected=rho ** T, tolerance="exact: rtol 1e-9 (float64)",
                 label=f"rho={rho}, T={T}")
    assert norm == pytest.approx(rho ** T, rel=1e-9)  # product of T orthogonal*rho Jacobians


@pytest.mark.claim("HIST-01")
def test_tanh_recurrence_gradient_vanishes_with_length():
    g = torch.Generator().manual_seed(1)
    W = 0.5 * torch.randn(16, 16, dtype=torch.float64, generator=g) / 4  # small weights
    h0 = torch.randn(16, dtype=torch.float64, generator=g)
    norms = [_jacobian_norm(lambda h: torch.tanh(W @ h), h0, T) for T in (1, 5, 10, 20, 40)]
    assert all(a > b for a, b in zip(norms, norms[1:])), norms
    assert norms[-1] < 1e-6 * norms[0]


@pytest.mark.claim("HIST-02")
def test_token_5_reaches_token_500_through_495_updates(claim_record):
    """Measured on the autograd graph of an unrolled RNN, not counted by our own loop: every
    path from h_500 back to x_5 passes through the tanh of every update from the one that
    reads x_5 to h_500; x_5 then survives all of them but the first. "Only by surviving":
    the fewest tanh nodes over all paths, not the depth of the first path a search finds."""
    W = torch.randn(4, 4, dtype=torch.float64) * 0.1
    xs = [torch.zeros(4, dtype=torch.float64, requires_grad=True) for _ in range(501)]  # x_1 .. x_500
    h = torch.zeros(4, dtype=torch.float64)
    for t in range(1, 501):
        h = torch.tanh(W @ h + xs[t])
    target = xs[5]

    def tanh_depths(root):
        """(fewest, most) tanh nodes on the paths from ``root`` down to x_5's leaf, over every
        path of the graph (post-order, iteratively: 500 deep); None if x_5 is unreachable."""
        memo, stack = {}, [(root, False)]
        while stack:
            node, ready = stack.pop()
            if node in memo:
                continue
            kids = [nxt for nxt, _ in node.next_functions if nxt is not None]
            if getattr(node, "variable", None) is target:
                memo[node] = (0, 0)
            elif not ready:
                stack.append((node, True))
                stack.extend((k, False) for k in kids if k not in memo)
            else:
                own = type(node).__name__.startswith("TanhBackward")
                reach = [memo[k] for k in kids if memo[k] is not None]
                memo[node] = (min(r[0] for r in reach) + own, max(r[1] for r in reach) + own) if reach else None
        return memo[root]

    depths = tanh_depths(h.grad_fn)
    assert depths is not None, "x_5 is not in h_500's graph"
    fewest, most = (d - 1 for d in depths)  # less the update that reads x_5
    claim_record("HIST-02", fewest, expected=495, tolerance="exact",
                 label="fewest tanh updates on any graph path from x_5 to h_500, after the one that reads it")
    assert (fewest, most) == (495, 495)  # no path skips an update, none takes more


@pytest.mark.claim("HIST-05")
@given(T=st.integers(1, 40), d=st.integers(1, 16), seed=st.integers(0, 2**31 - 1))
def test_causal_attention_over_all_positions_is_one_matmul(T, d, seed):
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(T, d, dtype=torch.float64, generator=g) for _ in range(3))
    once = attend(q, k, v)  # every position in one batched matmul
    loop = torch.stack([torch.softmax(q[t] @ k[: t + 1].T / math.sqrt(d), -1) @ v[: t + 1]
                        for t in range(T)])  # what a sequential model would do, position by position
    torch.testing.assert_close(once, loop, rtol=0, atol=1e-12)  # float64 reordering only


@pytest.mark.claim("HIST-05")
def test_the_averaging_matmul_matches_its_loop_in_float32(claim_record):
    x = torch.randn(128, 128)
    loop = torch.stack([x[: t + 1].mean(0) for t in range(128)])
    mat = averaging_matrix(128) @ x
    claim_record("HIST-05", (mat - loop).abs().max().item(), tolerance="exact: atol 1e-6, rtol 0: float32 reordering",
                 label="T=128: max |one matmul - per-position loop|")
    torch.testing.assert_close(mat, loop, rtol=0, atol=1e-6)  # float32 reorder


# ---- ARCH-01: the 2017 encoder-decoder, as PyTorch builds it ---------------------------------

@pytest.mark.claim("ARCH-01")
def test_the_encoder_is_unmasked_the_decoder_causal_and_cross_attention_asks_from_the_decoder(claim_record):
    """On torch.nn.Transformer with the 2017 layout (the causal target mask its own
    generate_square_subsequent_mask gives): moving the source's last token moves the encoder's
    first output (unmasked); moving the target's last token leaves the decoder's earlier outputs
    unchanged (causal); the cross-attention's queries are the decoder's positions and its keys
    the encoder's (a source of 7 tokens, a target of 5)."""
    torch.manual_seed(0)
    net = torch.nn.Transformer(d_model=16, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                               dim_feedforward=32, dropout=0.0, batch_first=True).double().eval()
    src, tgt = torch.randn(1, 7, 16, dtype=torch.float64), torch.randn(1, 5, 16, dtype=torch.float64)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64)
    src2, tgt2 = src.clone(), tgt.clone()
    src2[0, -1] += 1.0
    tgt2[0, -1] += 1.0
    seen = {}
    cross = net.decoder.layers[0].multihead_attn
    hook = cross.register_forward_pre_hook(lambda m, args, kw: seen.update(q=args[0].shape[1], k=args[1].shape[1]),
                                           with_kwargs=True)
    with torch.no_grad():
        enc, enc2 = net.encoder(src), net.encoder(src2)
        out, out2 = net(src, tgt, tgt_mask=causal), net(src, tgt2, tgt_mask=causal)
    hook.remove()
    reach = claim_record("ARCH-01", (enc[0, 0] - enc2[0, 0]).abs().max().item(), tolerance="exact: > 1e-6",
                         label="encoder: change of position 0's output when the last source token moves")
    leak = claim_record("ARCH-01", (out[0, :-1] - out2[0, :-1]).abs().max().item(), tolerance="exact: <= 1e-12 (float64)",
                        label="decoder: change of earlier outputs when the last target token moves")
    shapes = claim_record("ARCH-01", seen, expected={"q": 5, "k": 7}, tolerance="exact",
                          label="cross-attention: query positions (decoder's) and key positions (encoder's)")
    assert reach > 1e-6 and leak <= 1e-12 and shapes == {"q": 5, "k": 7}


@pytest.mark.claim("HIST-04")
def test_bahdanau_came_three_years_before_the_transformer(claim_record):
    """"nel 2014, tre anni prima del transformer": the chapter's own dates, 2014 here and "il
    paper del 2017" (L140, L187) for the transformer. The bibliography itself is not tested."""
    gap = claim_record("HIST-04", 2017 - 2014, expected=3, tolerance="exact", label="2017 - 2014, years")
    assert gap == 3
