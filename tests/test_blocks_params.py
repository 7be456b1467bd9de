"""Components: formula counts equal built ones over every option; Block/MLP norm slots, defaults, errors."""
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from model import GPT, MLP, Block, GPTConfig, MultiHeadAttention
from model.blocks import NORMS
from model.gpt import MIXERS
from model.params import attention_params, config_params, count, layernorm_params, mlp_params

POSITIONS = ("none", "learned", "sinusoidal", "rope", "alibi")


# ---- the formulas against the modules they describe ------------------------------------

@st.composite
def attention_shapes(draw):
    """Any attention MultiHeadAttention accepts: without W_o the heads must fill d exactly."""
    n_head, width, w_o = draw(st.integers(1, 5)), draw(st.integers(1, 6)), draw(st.booleans())
    d = draw(st.integers(n_head, 24)) if w_o else n_head * width
    # d_head=None takes d // n_head, which need not divide d when W_o maps back to d
    d_head = draw(st.sampled_from([None, width]))
    return dict(d=d, n_head=n_head, d_head=d_head, qkv_bias=draw(st.booleans()), w_o=w_o,
                o_bias=draw(st.booleans()))


@pytest.mark.fast
@given(s=attention_shapes())
@settings(max_examples=60)
def test_attention_formula_counts_the_built_attention(s):
    d = s.pop("d")
    built = MultiHeadAttention(d, s["n_head"], s["d_head"], qkv_bias=s["qkv_bias"], w_o=s["w_o"],
                               o_bias=s["o_bias"])
    n = attention_params(d, **s)
    assert type(n) is int and n == count(built)  # a count, not a float that happens to compare equal


@pytest.mark.fast
@given(d=st.integers(1, 24), ratio=st.integers(1, 6), bias=st.booleans())
@settings(max_examples=30)
def test_mlp_formula_counts_the_built_mlp(d, ratio, bias):
    ff = MLP(d, ratio, bias)
    assert mlp_params(d, ratio, bias) == count(ff)
    if not bias:  # nothing to shift by: GELU(0) = 0, so zero in is zero out
        assert not ff(torch.zeros(1, 2, d)).any()


@st.composite
def gpt_configs(draw):
    """Small configs over every option the count depends on, each valid for GPTConfig."""
    positions = draw(st.sampled_from(POSITIONS))
    scores = positions in ("rope", "alibi")  # these need attention layers to act in
    unit = 2 if positions in ("sinusoidal", "rope") else 1  # even widths for the sin/cos pairs
    n_head, width, w_o = draw(st.integers(1, 4)), unit * draw(st.integers(1, 4)), draw(st.booleans())
    d_model = unit * draw(st.integers(n_head, 12)) if w_o else n_head * width  # d // n_head >= 1
    norm = draw(st.sampled_from(NORMS))
    return GPTConfig(
        vocab_size=draw(st.integers(1, 40)), block_size=draw(st.integers(1, 16)),
        n_positions=draw(st.none() | st.integers(1, 32)), d_model=d_model,
        n_layer=draw(st.integers(1 if scores else 0, 3)),
        mixer="attention" if scores else draw(st.sampled_from(MIXERS)),
        n_head=n_head, d_head=width if positions == "rope" else draw(st.sampled_from([None, width])),
        w_o=w_o, qkv_bias=draw(st.booleans()), o_bias=draw(st.booleans()),
        residual=True if norm != "none" else draw(st.booleans()),
        mlp=draw(st.booleans()), mlp_ratio=draw(st.integers(1, 4)), mlp_bias=draw(st.booleans()),
        norm=norm, ln_f=draw(st.booleans()), positions=positions,
        tie_weights=draw(st.booleans()), head_bias=draw(st.booleans()))


@pytest.mark.slow  # seconds, not milliseconds: it runs with --runslow
@given(c=gpt_configs())
@settings(max_examples=120)
def test_config_formula_counts_the_built_gpt_term_by_term(c):
    m = GPT(c)  # small enough to build for real: faster than the meta device at this size
    b = config_params(c)
    assert (b.token, b.positions, b.blocks, b.ln_f) == (count(m.tok), count(m.pos), count(m.blocks),
                                                        count(m.ln_f))
    # the head's own tensors: a tied weight is the token table's, already counted
    assert b.head == sum(p.numel() for p in m.head.parameters() if p is not m.tok.weight)
    assert b.total == count(m)


# ---- the block: where the norms sit, what a default means, what is refused --------------

def _block(norm="pre", ff=True, **kw):
    torch.manual_seed(0)
    return Block(MultiHeadAttention(16, 4), MLP(16) if ff else None, 16, norm=norm, **kw).double()


def _normalised_rows(y):  # LayerNorm at init (gain 1, bias 0): every row mean 0, variance 1
    return (torch.allclose(y.mean(-1), torch.zeros_like(y[..., 0]), atol=1e-6)
            and torch.allclose(y.var(-1, unbiased=False), torch.ones_like(y[..., 0]), atol=1e-3))


X = 3 + 2 * torch.randn(2, 6, 16, generator=torch.Generator().manual_seed(1), dtype=torch.float64)


@pytest.mark.fast
@pytest.mark.parametrize("ff", [True, False], ids=["attention+mlp", "attention only"])
def test_post_norm_output_rows_are_normalised_and_pre_norm_ones_are_not(ff):
    # post-norm ends every sub-layer in a LayerNorm, the last one included; pre-norm adds
    # the sub-layer's output to an unnormalised stream (mean 3, std 2 here)
    assert _normalised_rows(_block("post", ff)(X))
    y = _block("pre", ff)(X)
    assert not _normalised_rows(y) and y.mean() > 1


@pytest.mark.fast
def test_post_norm_normalises_after_the_mixing_sub_layer_too():
    # the MLP sees LN(x + mix(x)): hook its input
    seen = []
    blk = _block("post")
    blk.ff.register_forward_hook(lambda mod, args, out: seen.append(args[0]))
    blk(X)
    assert _normalised_rows(seen[0])


@pytest.mark.fast
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("ff", [True, False], ids=["attention+mlp", "attention only"])
def test_a_block_holds_one_layernorm_per_sub_layer_it_has(norm, ff):
    blk = _block(norm, ff)
    sub_layers = count(blk.mix) + (count(blk.ff) if ff else 0)
    norms = 0 if norm == "none" else layernorm_params(16) * (2 if ff else 1)
    assert count(blk) == sub_layers + norms


@pytest.mark.fast
def test_a_block_is_pre_norm_by_default():
    # the GPT-2 placement, as the module docstring and GPTConfig's default say
    torch.manual_seed(0)
    default = Block(MultiHeadAttention(16, 4), MLP(16), 16).double()
    default.load_state_dict(_block("pre").state_dict())  # strict: the same slots are filled
    assert torch.equal(default(X), _block("pre")(X))


@pytest.mark.fast
def test_an_unknown_norm_is_refused_with_the_choices():
    with pytest.raises(ValueError, match=r"^norm must be one of \('none', 'pre', 'post'\), got 'layer'$"):
        Block(MultiHeadAttention(16, 4), MLP(16), 16, norm="layer")


@pytest.mark.fast
@pytest.mark.parametrize("norm", ["pre", "post"])
def test_a_norm_without_a_residual_is_refused_with_the_fix(norm):
    with pytest.raises(ValueError, match=rf"^{norm}-norm is defined around a residual sum; "
                                         r"use residual=True or norm='none'$"):
        Block(MultiHeadAttention(16, 4), MLP(16), 16, norm=norm, residual=False)


# ---- the MLP's defaults and refusals -----------------------------------------------------

@pytest.mark.fast
def test_an_unknown_gelu_is_refused_with_the_choices():
    with pytest.raises(ValueError, match=r"^gelu must be one of \('exact', 'tanh'\), got 'relu'$"):
        MLP(16, gelu="relu")


@pytest.mark.fast
def test_the_mlp_has_no_dropout_by_default():
    # training mode must compute what evaluation does unless dropout is asked for
    torch.manual_seed(0)
    ff = MLP(16).train()
    x = torch.randn(2, 6, 16)
    y = ff(x)
    assert y.abs().sum() > 0
    assert torch.equal(y, ff.eval()(x))
