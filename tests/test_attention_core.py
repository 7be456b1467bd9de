"""Attention, masks and tiled attention as components: the fast tier must catch a broken one."""
import math
import warnings
import weakref
from collections import Counter

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from model import (LearnedMixing, MultiHeadAttention, UniformMean, additive_mask, attend,
                   averaging_matrix, capture_attention, causal_mask)
from model.attention import tiled_attention
from model.positional import ALiBi, NoPosition, alibi_slopes

pytestmark = pytest.mark.fast

f64 = torch.float64


def _qkv(*shape, dtype=f64, seed=0):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(*shape, generator=g, dtype=dtype) for _ in range(3))


def _close(a, b, atol):
    """assert_close, rtol 0, without torch.testing's first-call import (about a second)."""
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    assert torch.allclose(a, b, rtol=0, atol=atol), (a - b).abs().max()


def _masked_softmax(s):
    """softmax over each row's allowed prefix: the definition, written out."""
    T = s.shape[-1]
    return torch.softmax(s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf")), -1)


# ---- devices: every tensor the library makes follows its input ---------------------------------
#
# A user may set a default device (torch.set_default_device("cuda")) and still pass tensors that
# live elsewhere. Here the default is "meta" and the inputs are on the CPU: a mask or buffer made
# on the default device instead of the input's ends up on meta, or fails on the device mismatch.

def _cpu(*shape):
    return torch.randn(*shape)


@pytest.mark.parametrize("build", [
    lambda: (lambda: causal_mask(10, "cpu")),
    lambda: (lambda: additive_mask(10, device="cpu")),
    lambda: (lambda: averaging_matrix(10, device="cpu")),
    lambda: (lambda q=_cpu(2, 10, 4): attend(q, q, q)),
    lambda: (lambda q=_cpu(2, 10, 4): tiled_attention(q, q, q, tile=4)),  # blocks cross the diagonal
    lambda: (lambda x=_cpu(2, 10, 4): UniformMean()(x)),
    lambda: (lambda m=LearnedMixing(16), x=_cpu(2, 10, 4): m(x)),
    lambda: (lambda m=MultiHeadAttention(16, 4, positional=ALiBi(4)), x=_cpu(2, 10, 16): m(x)),
], ids=["causal_mask", "additive_mask", "averaging_matrix", "attend", "tiled_attention",
        "UniformMean", "LearnedMixing", "MultiHeadAttention+ALiBi"])
def test_everything_is_made_on_the_inputs_device_not_the_default_one(build):
    run = build()  # modules and inputs are made on the CPU, before the default changes
    with torch.no_grad():
        expected = run()
        with torch.device("meta"):
            out = run()
    assert out.device.type == "cpu"
    assert torch.equal(out, expected)  # a meta operand can even yield a CPU tensor of garbage


# ---- attend -------------------------------------------------------------------------------------

@given(T=st.integers(1, 12), hs=st.integers(1, 8), causal=st.booleans(), seed=st.integers(0, 2**31 - 1))
def test_attend_adds_the_bias_to_the_scaled_scores(T, hs, causal, seed):
    q, k, v = _qkv(2, T, hs, seed=seed)
    bias = torch.randn(T, T, dtype=f64, generator=torch.Generator().manual_seed(seed + 1))
    s = q @ k.transpose(-2, -1) / math.sqrt(hs) + bias
    w = _masked_softmax(s) if causal else torch.softmax(s, -1)
    _close(attend(q, k, v, causal=causal, bias=bias), w @ v, 1e-12)


class _Tracked(torch.Tensor):
    """A tensor whose results are tracked: how many float (..., n, n) buffers are alive at once."""
    n, refs, peak = 0, Counter(), 0

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        out = super().__torch_function__(func, types, args, kwargs)
        if isinstance(out, _Tracked) and out.is_floating_point() and out.shape[-2:] == (cls.n, cls.n):
            ptr = out.untyped_storage().data_ptr()  # a view shares its base's buffer
            cls.refs[ptr] += 1
            weakref.finalize(out, cls._drop, ptr)  # CPython frees a rebound tensor at once
            cls.peak = max(cls.peak, len(cls.refs))
        return out

    @classmethod
    def _drop(cls, ptr):
        cls.refs[ptr] -= 1
        if not cls.refs[ptr]:
            del cls.refs[ptr]


def _peak_score_matrices(n, **kw):
    _Tracked.n, _Tracked.refs, _Tracked.peak = n, Counter(), 0
    q, k, v = (t.as_subclass(_Tracked) for t in _qkv(2, n, 8))
    with torch.no_grad():
        attend(q, k, v, **kw)
    return _Tracked.peak


@pytest.mark.parametrize("causal", [True, False])
def test_attend_holds_at_most_two_score_matrices_at_once(causal):
    # attend promises two n x n tensors at a time (scores, then weights): a third copy kept alive
    # would add half to the n^2 peak the cost claims measure. Only a probe keeps the unmasked ones.
    assert _peak_score_matrices(48, causal=causal) == 2
    probed = _peak_score_matrices(48, causal=causal, probe=lambda s, w: None)
    assert probed == (3 if causal else 2)  # a probe keeps the unmasked scores beside the masked


# ---- MultiHeadAttention: construction ------------------------------------------------------------

@pytest.mark.parametrize("kw, message", [
    (dict(d_model=8, n_head=3, d_head=2, w_o=False), "3 heads of width 2 give 6, not d_model=8"),
    (dict(d_model=4, n_head=8), "8 heads of width 0 give 0, not d_model=4"),  # d_model // n_head = 0
    (dict(d_model=8, n_head=2, d_head=0, w_o=True), "2 heads of width 0"),   # W_o cannot rescue width 0
])
def test_invalid_head_layouts_fail_at_construction_with_a_message(kw, message):
    with pytest.raises(ValueError, match=message):
        MultiHeadAttention(**kw)


@pytest.mark.parametrize("n_head", [1, 2, 4])
def test_heads_that_concatenate_to_d_model_need_no_output_projection(n_head):
    head = MultiHeadAttention(8, n_head, w_o=False)
    assert head(torch.randn(2, 5, 8)).shape == (2, 5, 8)


# ---- MultiHeadAttention: the bias site -----------------------------------------------------------

class _DecayBias(NoPosition):
    """A user's bias scheme: -0.1 per step back, built in the dtype and on the device asked for
    (0.1 is inexact in float32, so a bias built in the wrong precision shows at 1e-12)."""

    def bias(self, T, device=None, dtype=None):
        t = torch.arange(T, device=device, dtype=dtype)
        return (-0.1 * (t[:, None] - t[None, :]).clamp(min=0)).expand(4, T, T)


@pytest.mark.parametrize("scheme", ["alibi", "decay"])
def test_with_content_scores_zero_the_weights_are_the_positional_bias_alone(scheme):
    # W_q = 0 makes every q . k zero, so what is left is softmax(bias + M): the scheme must reach
    # the scores of every head, with its sign, in the model's precision.
    T = 12
    torch.manual_seed(0)
    pos = ALiBi(4) if scheme == "alibi" else _DecayBias()
    head = MultiHeadAttention(16, 4, positional=pos).to(f64)
    with torch.no_grad():
        head.qkv.weight[:16].zero_()
    with capture_attention(head) as maps, torch.no_grad():
        head(torch.randn(2, T, 16, dtype=f64))
    dist = (torch.arange(T)[:, None] - torch.arange(T)[None, :]).clamp(min=0).to(f64)
    slopes = alibi_slopes(4).to(f64) if scheme == "alibi" else torch.full((4,), 0.1, dtype=f64)
    expected = _masked_softmax(-slopes[:, None, None] * dist)  # (nh, T, T): nearer keys weigh more
    _close(maps[0].weights, expected.expand(2, 4, T, T), 1e-12)


# ---- LearnedMixing ------------------------------------------------------------------------------

@given(T=st.integers(1, 16), seed=st.integers(0, 2**31 - 1))
def test_learned_mixing_rows_are_a_softmax_over_the_allowed_prefix(T, seed):
    mix = LearnedMixing(16).double()
    with torch.no_grad():
        mix.scores.copy_(3 * torch.randn(16, 16, dtype=f64, generator=torch.Generator().manual_seed(seed)))
    w = mix.weights(T)
    _close(w.sum(-1), torch.ones(T, dtype=f64), 1e-12)  # each row mixes
    assert (w.triu(1) == 0).all()  # never the future
    for t in range(T):
        _close(w[t, :t + 1], torch.softmax(mix.scores[t, :t + 1], 0), 1e-12)


def test_learned_mixing_starts_as_the_uniform_mean_and_warns_nothing():
    # The ladder's learned rung starts where the mean rung is: zero scores are the causal mean.
    x = torch.randn(2, 10, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. softmax's deprecated implicit dim, once per forward
        _close(LearnedMixing(16)(x), UniformMean()(x), 1e-6)


# ---- tiled attention ----------------------------------------------------------------------------

def test_tiled_attention_defaults_match_attends():
    q, k, v = _qkv(1, 2, 40, 8)  # T < default tile: the defaults' causal and scale alone decide
    _close(tiled_attention(q, k, v), attend(q, k, v), 1e-12)


@pytest.mark.parametrize("causal", [True, False])
def test_tiled_attention_without_scaling_matches_attend_without_scaling(causal):
    q, k, v = _qkv(2, 20, 4)
    _close(tiled_attention(q, k, v, causal=causal, scale=False, tile=6),
           attend(q, k, v, causal=causal, scale=False), 1e-12)


@pytest.mark.parametrize("shape", [(13, 5), (3, 13, 5), (2, 1, 2, 13, 5)], ids=["T,hs", "B,T,hs", "5-D"])
@pytest.mark.parametrize("causal", [True, False])
def test_tiled_attention_takes_any_leading_dims_like_attend(shape, causal):
    q, k, v = _qkv(*shape)  # (..., T, hs) with T != hs, and T not a multiple of the tile
    _close(tiled_attention(q, k, v, causal=causal, tile=4), attend(q, k, v, causal=causal), 1e-12)


@pytest.mark.parametrize("T, tile", [(12, 4), (13, 4), (7, 3), (5, 8)])
def test_tiled_attention_scores_each_allowed_pair_once_and_skips_the_future(T, tile):
    # The point of tiling with a causal mask: every allowed (query, key) pair is scored exactly
    # once, and no block lies wholly above the diagonal (about half the work of the full matrix).
    q, k, v = _qkv(T, 4)
    blocks = []
    tiled_attention(q, k, v, tile=tile, probe=blocks.append)
    assert sum(int(torch.isfinite(b).sum()) for b in blocks) == T * (T + 1) // 2
    assert all(torch.isfinite(b).any() for b in blocks)
    full = []
    tiled_attention(q, k, v, causal=False, tile=tile, probe=full.append)
    assert sum(b.numel() for b in full) == T * T  # without the mask: each pair once, no overlap


def test_tiled_attention_default_tile_is_128():
    # COST-09's bound is one 128 x 128 block per head; that is also the default.
    q, k, v = _qkv(1, 300, 4, dtype=torch.float32)
    sides = []
    tiled_attention(q, k, v, probe=lambda s: sides.extend(s.shape[-2:]))
    assert max(sides) == 128


def test_tiled_attention_keeps_a_low_precision_dtype():
    # The running max and normaliser must not silently change bfloat16 into another dtype.
    q, k, v = _qkv(2, 40, 8, dtype=torch.float32)
    out = tiled_attention(q.bfloat16(), k.bfloat16(), v.bfloat16(), tile=16)
    assert out.dtype == torch.bfloat16
    _close(out.float(), attend(q, k, v), 0.05)  # bfloat16 rounding


def test_tiled_attention_running_max_is_per_query_row():
    # Scores of ~1e4 in one head and ~1 in the other: a maximum shared across rows or heads would
    # underflow the small head's exponentials to 0 (0/0). Per row, the online softmax stays exact.
    q, k, v = _qkv(1, 2, 24, 8)
    q[:, 0] *= 100
    k[:, 0] *= 100
    out = tiled_attention(q, k, v, tile=5)
    assert torch.isfinite(out).all()
    _close(out, attend(q, k, v), 1e-10)


@pytest.mark.parametrize("Tk", [6, 3], ids=["more keys", "fewer keys"])
def test_tiled_attention_reads_every_key_when_there_are_not_as_many_as_queries(Tk):
    # cross-attention shapes: without a mask every key counts; with one, the lengths must agree
    q, (k, v) = _qkv(4, 5)[0], _qkv(Tk, 5, seed=1)[:2]
    _close(tiled_attention(q, k, v, causal=False, tile=2), attend(q, k, v, causal=False), 1e-12)
    with pytest.raises(ValueError, match=f"causal attention needs as many keys as queries, got {Tk} keys for 4"):
        tiled_attention(q, k, v, tile=2)


def test_a_divided_head_starts_with_a_score_std_of_two_thirds():
    """Where SQRT-13's trained std of 3.44 starts (our derivation, not a claim of the text, which
    speaks of the end of training): token and position embeddings N(0, 1) each, nn.Linear's
    default init, so Var q_j = 2/3 and std(q.k / sqrt(d_k)) = 2/3 at d_k = 1024."""
    from experiments.configs import sqrt_dk_config
    from model import GPT, capture_attention
    torch.manual_seed(0)
    m = GPT(sqrt_dk_config(1024, scale=True)).eval()
    with capture_attention(m) as maps, torch.no_grad():
        m(torch.randint(0, 1024, (16, 128)))
    assert maps[0].scores.std().item() == pytest.approx(2 / 3, rel=0.05)

