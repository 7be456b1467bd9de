"""IT 3.7 Multiple heads and the MLP: partitioned width, linear mixing, per-position compute."""
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from model import MLP, MultiHeadAttention, capture_attention
from model.params import count

pytestmark = pytest.mark.fast


@pytest.mark.claim("MHA-02")
@pytest.mark.parametrize("h", [1, 2, 4, 8])
def test_heads_partition_the_width_rather_than_widen_it(h, claim_record):
    mha = MultiHeadAttention(128, n_head=h, w_o=True, o_bias=True)
    assert mha.qkv.weight.numel() == 3 * 128 * 128  # Q, K, V: 3d^2 whatever h
    assert mha.n_head * mha.d_head == 128  # the concatenation is d wide
    w_o = claim_record("MHA-02", count(mha.proj), expected=16_512, tolerance="exact", label=f"W_o, h={h}")
    assert w_o == 128 * 128 + 128 == 16_512


@pytest.mark.claim("MHA-03")
def test_a_head_is_w_v_applied_to_a_convex_combination_of_inputs(claim_record):
    torch.manual_seed(0)
    head = MultiHeadAttention(16, n_head=1, w_o=False).double()
    x = torch.randn(2, 10, 16, dtype=torch.float64)
    with capture_attention(head) as maps:
        y = head(x)
    w = maps[0].weights[:, 0]  # (B, T, T)
    W_v = head.qkv.weight[32:]
    claim_record("MHA-03", (y - (w @ x) @ W_v.T).abs().max().item(), tolerance="exact: atol 1e-12, rtol 0 (float64)",
                 label="max |head(x) - W_v (w x)|")
    torch.testing.assert_close(y, (w @ x) @ W_v.T, rtol=0, atol=1e-12)  # linear in the features
    assert (torch.triu(w, 1) == 0).all()  # the combination reaches back only: later inputs weigh exactly 0
    assert torch.allclose(w.sum(-1), torch.ones(2, 10, dtype=torch.float64))


@pytest.mark.claim("MHA-03")
@given(a=st.floats(-3, 3), b=st.floats(-3, 3), seed=st.integers(0, 2**31 - 1))
def test_attention_with_frozen_weights_is_a_linear_map(a, b, seed):
    torch.manual_seed(seed)
    layers = [MultiHeadAttention(8, n_head=2).double() for _ in range(2)]
    x0 = torch.randn(1, 6, 8, dtype=torch.float64)
    frozen = []
    for layer in layers:  # read each layer's weights on x0, then freeze them
        with capture_attention(layer) as maps:
            x0 = layer(x0)
        frozen.append(maps[0].weights)

    def f(x):
        for layer, w in zip(layers, frozen):
            B, T, _ = x.shape
            v = layer.qkv(x)[..., 16:].view(B, T, 2, 4).transpose(1, 2)  # (B, nh, T, hs)
            x = layer.proj((w @ v).transpose(1, 2).reshape(B, T, 8)) - layer.proj.bias
        return x

    x, y = torch.randn(1, 6, 8, dtype=torch.float64), torch.randn(1, 6, 8, dtype=torch.float64)
    torch.testing.assert_close(f(a * x + b * y), a * f(x) + b * f(y), rtol=1e-9, atol=1e-9)


@pytest.mark.claim("MHA-04")
@given(t=st.integers(0, 11), s=st.integers(0, 11), seed=st.integers(0, 2**31 - 1))
def test_the_mlp_computes_within_one_position(t, s, seed):
    torch.manual_seed(seed)
    ff = MLP(16).eval()
    x = torch.randn(1, 12, 16)
    y = x.clone()
    y[0, s] += torch.randn(16)
    if s != t:
        assert torch.equal(ff(x)[0, t], ff(y)[0, t])  # bit-exact: no mixing between positions


@pytest.mark.claim("MHA-04")
def test_the_mlp_widens_four_times_through_a_gelu(claim_record):
    ff = MLP(128)
    assert (ff.fc.in_features, ff.fc.out_features, ff.proj.out_features) == (128, 512, 128)
    assert isinstance(ff.act, torch.nn.GELU)
    n = claim_record("MHA-04", count(ff), expected=131_712, tolerance="exact", label="MLP params at d=128")
    assert n == 8 * 128**2 + 5 * 128 == 131_712


@pytest.mark.claim("ARCH-03")
def test_a_block_is_an_mlp_of_two_thirds_two_norms_and_two_additions(claim_record, monkeypatch):
    """The chapter's full block (the ladder's +layernorm rung: width 128, 4 heads, pre-norm): the
    MLP's share of the block's weights ("due terzi", read as PARAM-01 reads it), the block's
    LayerNorms, and the residual sums one forward pass makes."""
    from experiments.configs import ladder
    from model import GPT, Block

    block = GPT(ladder()["+layernorm"]).blocks[0]
    share = claim_record("ARCH-03", count(block.ff) / count(block), expected=2 / 3,
                         tolerance="exact: in [0.66, 2/3] ('due terzi', as PARAM-01)", label="the MLP's share of a block")
    norms = claim_record("ARCH-03", sum(isinstance(m, torch.nn.LayerNorm) for m in block.modules()), expected=2,
                         tolerance="exact", label="LayerNorms in a block")
    sums = []
    join = Block._join
    monkeypatch.setattr(Block, "_join", lambda self, x, y: sums.append(self.residual) or join(self, x, y))
    block(torch.randn(1, 8, 128))
    adds = claim_record("ARCH-03", sum(sums), expected=2, tolerance="exact", label="residual additions in a forward pass")
    assert 0.66 <= share <= 2 / 3 and norms == 2 and adds == 2


@pytest.mark.claim("MHA-01")
@given(logits=st.lists(st.floats(-30, 30), min_size=3, max_size=64))
def test_one_softmax_row_cannot_be_concentrated_on_three_places(logits):
    """"una distribuzione di probabilità non può essere concentrata in tre posti": a row that
    concentrates on a place gives it more than half its weight, and at most one place can have
    that; the most a row can give each of three places at once is a third."""
    w = torch.softmax(torch.tensor(logits, dtype=torch.float64), 0)
    assert int((w > 0.5).sum()) <= 1
    assert torch.topk(w, 3).values.min().item() <= 1 / 3 + 1e-12


@pytest.mark.claim("MHA-01")
def test_the_bound_is_reached_only_by_a_third_each(claim_record):
    w = torch.softmax(torch.tensor([5.0, 5.0, 5.0] + [-1e9] * 13, dtype=torch.float64), 0)
    third = claim_record("MHA-01", torch.topk(w, 3).values.min().item(), expected=1 / 3, tolerance="exact: rtol 1e-12 (float64)",
                         label="three places at once: the most each can hold")
    assert third == pytest.approx(1 / 3, rel=1e-12) and third < 0.5  # spread, not concentrated
