"""The named configs build the document's models, and GPTConfig refuses what means nothing."""
import dataclasses
import itertools
import typing

import pytest
import torch
import torch.nn as nn

from experiments.configs import (
    ladder,
    shakespeare_config,
    sqrt_dk_config,
    tiny_lab_config,
)
from model import GPT, GPTConfig, gpt2_small_config
from model.attention import UniformMean
from model.params import config_params, count
from model.positional import ALiBi, LearnedPosition, NoPosition, RoPE

SMALL = dict(vocab_size=11, block_size=8, d_model=8, n_head=2)  # where the size does not matter


def _named_configs():
    yield "shakespeare", shakespeare_config()
    yield from ((f"ladder/{k}", c) for k, c in ladder().items())
    yield "gpt2-small", gpt2_small_config()
    yield "tiny-lab", tiny_lab_config()
    yield from ((f"sqrt/{d}", sqrt_dk_config(d)) for d in (32, 128, 256, 1024))


@pytest.mark.fast
def test_every_named_config_holds_the_types_its_fields_declare():
    # A config is serialised into its run's cache key and its evidence record (JSON): a None
    # where a bool is meant builds the same network under another key and reads as null.
    hints = typing.get_type_hints(GPTConfig)
    for name, c in _named_configs():
        for field, kind in hints.items():
            assert isinstance(getattr(c, field), kind), f"{name}: {field}={getattr(c, field)!r}"


# ---- the ladder, read from the built modules -------------------------------------------------

def _anatomy(m):
    """What a built GPT contains, in the ladder's words."""
    b = m.blocks[0] if len(m.blocks) else None
    attn = b is not None and not isinstance(b.mix, UniformMean)
    return dict(
        blocks=len(m.blocks),
        mixer=None if b is None else ("attention" if attn else "mean"),
        heads=(b.mix.n_head, b.mix.d_head) if attn else None,
        w_o=attn and isinstance(b.mix.proj, nn.Linear),
        positions=type(m.pos).__name__,
        residual=b is not None and b.residual,
        mlp=b is not None and b.ff is not None,
        layernorms=sum(isinstance(x, nn.LayerNorm) for x in m.modules()),
    )


# IT L13-28, L124-132 (catalogue §2a, rows L1-L9, and DEPTH-01's two blocks), at S-IT's width
# 128 (CORP-03): each row adds one piece to the row above.
N, M, A = NoPosition.__name__, "mean", "attention"
LP = LearnedPosition.__name__
RUNGS = {  # blocks, mixer, (heads, d_head), W_o, positions, residual, MLP, LayerNorms
    "no-context": (0, None, None, False, N, False, False, 0),  # L1: embedding -> linear, a bigram
    "mean": (1, M, None, False, N, False, False, 0),  # L2: the causal mean replacing the token
    "mean+positions": (1, M, None, False, LP, False, False, 0),  # L3: learned positions first
    "mean+residual": (1, M, None, False, LP, True, False, 0),  # L4: the mean added
    "head-replacing": (1, A, (1, 128), False, LP, False, False, 0),  # L5: one head, replacing
    "head-added": (1, A, (1, 128), False, LP, True, False, 0),  # L6: one head, added
    "4-heads": (1, A, (4, 32), True, LP, True, False, 0),  # L7 (ABL-02): four heads + W_o
    "+mlp": (1, A, (4, 32), True, LP, True, True, 0),  # L8: the 4x MLP
    "+layernorm": (1, A, (4, 32), True, LP, True, True, 3),  # L9 (ABL-05): ln1, ln2, ln_f
    "2-blocks": (2, A, (4, 32), True, LP, True, True, 5),  # DEPTH-01: one more block
}


@pytest.mark.fast
def test_every_ladder_rung_builds_the_documents_model():
    rungs = ladder()
    assert list(rungs) == list(RUNGS)
    keys = ("blocks", "mixer", "heads", "w_o", "positions", "residual", "mlp", "layernorms")
    for name, c in rungs.items():
        assert (c.d_model, c.block_size, c.vocab_size) == (128, 128, 1024), name  # CORP-03
        assert _anatomy(GPT(c)) == dict(zip(keys, RUNGS[name])), name


@pytest.mark.fast
def test_the_ladders_residual_rungs_add_and_the_others_replace():
    # Behaviour, not a flag: at position 0 the causal mean is the token itself, so a rung that
    # adds its mean returns 2x there and one that replaces returns x.
    r = ladder(GPTConfig(**SMALL))
    x = torch.randn(2, 5, 8)
    for name, doubled in (("mean", False), ("mean+residual", True)):
        block = GPT(r[name]).blocks[0]
        assert torch.allclose(block(x)[:, 0], (2 if doubled else 1) * x[:, 0]), name


# ---- GPT-2 small, S-SQ ---------------------------------------------------------------------

@pytest.mark.fast
def test_gpt2_small_is_the_published_architecture():
    # PARAM-05..11: 12 blocks, d 768, 12 heads of 64, vocab 50,257, 1,024 positions, tied output
    # without bias; GPT-2's biased attention, tanh GELU and init. Read from the config: building
    # it even on the meta device costs 2 s here, and its built counts are test_params.py's.
    c = gpt2_small_config()
    assert (c.vocab_size, c.block_size, c.d_model, c.n_layer, c.n_head, c.head_width) == (50_257, 1024, 768, 12, 12, 64)
    assert (c.n_positions or c.block_size) == 1024 and c.positions == "learned" and c.mlp_ratio == 4
    assert c.qkv_bias and c.o_bias and c.mlp_bias and c.norm == "pre" and c.ln_f
    assert c.tie_weights and not c.head_bias
    assert (c.gelu, c.init) == ("tanh", "gpt2")


@pytest.mark.fast
@pytest.mark.parametrize("d_head", [32, 128, 256, 1024])
def test_the_sqrt_dk_model_is_one_divided_head_and_nothing_else(d_head):
    # S-SQ (SQRT-10, IT L112): one head, no normalisation before the projections; the width the
    # S-IT model's (128). The division is the default: leaving it out is the ablation.
    m = GPT(sqrt_dk_config(d_head))
    assert len(m.blocks) == 1 and m.config.d_model == 128
    b = m.blocks[0]
    assert (b.mix.n_head, b.mix.d_head) == (1, d_head) and b.mix.scale
    assert isinstance(b.mix.proj, nn.Linear) and b.mix.proj.in_features == d_head  # back to 128
    assert b.ff is None
    assert not any(isinstance(x, nn.LayerNorm) for x in m.modules())
    assert not GPT(sqrt_dk_config(d_head, scale=False)).blocks[0].mix.scale


@pytest.mark.fast
def test_the_sqrt_dk_config_passes_sizes_through_and_refuses_to_change_the_setup():
    # The CI scale shrinks the S-SQ model by keyword; a keyword that would change the setup
    # itself (another block, head, norm, MLP) is refused instead of building another experiment
    m = GPT(sqrt_dk_config(32, d_model=64, block_size=32))
    assert (m.config.d_model, m.pos.table.num_embeddings, m.blocks[0].mix.proj.out_features) == (64, 32, 64)
    for kw in (dict(n_layer=2), dict(n_head=2), dict(w_o=False), dict(norm="pre"), dict(ln_f=True),
               dict(mlp=True), dict(scale_scores=False)):
        with pytest.raises(TypeError, match="multiple values"):
            sqrt_dk_config(32, **kw)


# ---- GPTConfig.validate ----------------------------------------------------------------------

INVALID = [
    (dict(mixer="conv"), r"mixer must be one of \('mean', 'attention'\), got 'conv'"),
    (dict(norm="rms"), r"norm must be one of \('none', 'pre', 'post'\), got 'rms'"),
    (dict(init="xavier"), r"init must be one of \('torch', 'normal', 'gpt2'\), got 'xavier'"),
    (dict(n_layer=-1), r"n_layer must be >= 0, got -1"),
    (dict(mixer="mean", positions="rope"), r"rope acts on attention scores; the uniform mean has none"),
    (dict(mixer="mean", positions="alibi"), r"alibi acts on attention scores; the uniform mean has none"),
    (dict(n_layer=0, positions="rope"), r"rope needs at least one attention layer"),
    (dict(n_layer=0, positions="alibi"), r"alibi needs at least one attention layer"),
    (dict(dropout=-0.1), r"dropout must be in \[0, 1\), got -0.1"),
    (dict(dropout=1.0), r"dropout must be in \[0, 1\), got 1.0"),  # p = 1 zeroes everything
    (dict(dropout=1.5), r"dropout must be in \[0, 1\), got 1.5"),
]


@pytest.mark.fast
@pytest.mark.parametrize("kw,msg", INVALID, ids=[str(kw) for kw, _ in INVALID])
def test_a_meaningless_config_fails_at_construction_saying_why(kw, msg):
    with pytest.raises(ValueError, match=f"^GPTConfig: {msg}$"):
        GPT(GPTConfig(**SMALL, **kw))


@pytest.mark.fast
def test_every_meaningful_combination_builds_and_runs():
    # The complement of the list above: score-site positions need attention to act on;
    # everything else, with any norm placement and init, builds and gives logits.
    x = torch.randint(0, 11, (2, 8))
    for mixer, pos, n_layer in itertools.product(("mean", "attention"), ("none", "learned", "sinusoidal",
                                                 "rope", "alibi"), (0, 1, 2)):
        score_site = pos in ("rope", "alibi")
        c = GPTConfig(**SMALL, mixer=mixer, positions=pos, n_layer=n_layer)
        if score_site and (mixer == "mean" or n_layer == 0):
            with pytest.raises(ValueError):
                GPT(c)
            continue
        assert GPT(c)(x).shape == (2, 8, 11), c
    for norm, init, dropout in itertools.product(("none", "pre", "post"), ("torch", "normal", "gpt2"), (0.0, 0.5)):
        assert GPT(GPTConfig(**SMALL, norm=norm, init=init, dropout=dropout))(x).shape == (2, 8, 11)


# ---- what the config reaches inside the model -----------------------------------------------

@pytest.mark.fast
@pytest.mark.parametrize("scheme", [RoPE, ALiBi])
def test_score_site_positions_reach_the_attention(scheme):
    # RoPE and ALiBi have no weights: the same weights with and without them must still give
    # other logits, or the scheme never entered the scores
    name = scheme.__name__.lower()
    torch.manual_seed(0)
    with_pos = GPT(GPTConfig(**SMALL, positions=name)).eval()
    assert isinstance(with_pos.blocks[0].mix.positional, scheme)
    without = GPT(GPTConfig(**SMALL, positions="none")).eval()
    without.load_state_dict(with_pos.state_dict())
    x = torch.randint(0, 11, (2, 8))
    with torch.no_grad():
        assert (with_pos(x) - without(x)).abs().max() > 1e-3


@pytest.mark.fast
def test_the_dropout_rate_reaches_every_site():
    # The three sites of the chapter: the embedding sum, the attention weights, and each
    # sub-layer's output (attention and MLP)
    m = GPT(GPTConfig(**SMALL, n_layer=2, dropout=0.3))
    sites = [m.drop] + [d for b in m.blocks for d in (b.mix.attn_dropout, b.mix.resid_dropout, b.ff.dropout)]
    assert [d.p for d in sites] == [0.3] * 7


# ---- initialisation ---------------------------------------------------------------------------

def _is_normal(t, std):
    """t's entries look like N(0, std) draws: for n draws the sample mean has standard error
    std/sqrt(n) and the sample std a relative one of 1/sqrt(2n). The smallest tensor checked has
    4,096 entries (SE 1.1 %), so 10 % on the std is > 9 SE and still tells 0.02 from 0.02/sqrt(2);
    5 SE on the mean tells it from any offset of the size of std."""
    n = t.numel()
    return abs(t.mean().item()) < 5 * std / n**0.5 and abs(t.std().item() / std - 1) < 0.10


@pytest.mark.fast
@pytest.mark.parametrize("init", ["normal", "gpt2"])
@pytest.mark.parametrize("variant", [{}, dict(mixer="mean"), dict(mlp=False), dict(w_o=False)],
                         ids=["full", "mean", "no-mlp", "no-w_o"])
def test_normal_inits_draw_zero_mean_weights_at_their_std(init, variant):
    # "normal": N(0, 0.02) everywhere, zero biases (the Polish lab). "gpt2": the same, with what
    # writes into the residual stream at 0.02/sqrt(2 n_layer) (GPT-2 paper, 2.3): 0.01 here.
    # Whatever a block lacks (a W_o, an MLP), the projections it has are still scaled.
    torch.manual_seed(0)
    L = 2
    m = GPT(GPTConfig(vocab_size=64, block_size=64, d_model=64, n_head=4, n_layer=L, init=init, **variant))
    resid = 0.02 / (2 * L) ** 0.5 if init == "gpt2" else 0.02
    writes = {id(p) for b in m.blocks for p in (getattr(b.mix, "proj", None), b.ff and b.ff.proj)
              if isinstance(p, nn.Linear)}
    assert len(writes) == L * (("mlp" not in variant) + ("mixer" not in variant and "w_o" not in variant))
    for name, mod in m.named_modules():
        if isinstance(mod, (nn.Linear, nn.Embedding)):
            assert _is_normal(mod.weight, resid if id(mod) in writes else 0.02), name
        if isinstance(mod, nn.Linear) and mod.bias is not None:
            assert not mod.bias.any(), name


@pytest.mark.fast
def test_each_rung_adds_one_piece_to_the_rung_above():
    """A chain of small edits: two fields where a piece has two parts (a head *replacing*,
    four heads *with* W_o), one everywhere else."""
    rungs = list(ladder().values())
    for above, below in zip(rungs, rungs[1:]):
        changed = {f.name for f in dataclasses.fields(above) if getattr(above, f.name) != getattr(below, f.name)}
        assert 1 <= len(changed) <= 2, changed


@pytest.mark.fast
@pytest.mark.parametrize("name", list(ladder()))
def test_every_rung_builds_with_the_count_its_formula_predicts(name):
    c = ladder()[name]
    assert count(GPT(c)) == config_params(c).total
