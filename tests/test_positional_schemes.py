"""Positional schemes (and effective tokens) against the papers' formulas, as GPT builds them: POS claims rest on them."""
import math
import re

import pytest
import torch

from model import GPT, GPTConfig
from model.metrics import effective_tokens
from model.positional import ALiBi, build_positional

pytestmark = pytest.mark.fast


def _gpt(positions, **kw):
    cfg = dict(vocab_size=20, block_size=8, d_model=16, n_layer=1, n_head=2, positions=positions)
    return GPT(GPTConfig(**{**cfg, **kw}))


# ---- sinusoidal: Vaswani et al. 2017, 3.5 --------------------------------------------------

def test_the_sinusoidal_scheme_adds_the_2017_table():
    """PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos(p / 10000^(2i/d)), added to x."""
    d, T = 16, 300
    pe = _gpt("sinusoidal", d_model=d, block_size=T).double().pos
    want = torch.tensor([[(math.sin if j % 2 == 0 else math.cos)(p / 10000 ** (2 * (j // 2) / d)) for j in range(d)]
                         for p in range(T)], dtype=torch.float64)
    x = torch.randn(2, T, d, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(pe.embed(x), x + want, rtol=0, atol=1e-12)


# ---- RoPE: Su et al. 2021, 3.2 --------------------------------------------------------------

def test_rope_turns_pair_i_at_frequency_base_to_the_minus_2i_over_d():
    """The pair (x_2i, x_2i+1) = (1, 0) at position p lands on (cos p*theta_i, sin p*theta_i),
    theta_i = 10000^(-2i/d): the same circle at every position, at a geometric set of speeds.
    Positions up to 1000, where a wrong or single-precision frequency shows."""
    m = _gpt("rope", d_model=32, n_head=2)  # d_head 16
    rope = m.blocks[0].mix.positional  # the scheme attention applies
    d = 16
    ps = torch.tensor([0, 1, 2, 7, 100, 1000])
    x = torch.zeros(len(ps), d, dtype=torch.float64)
    x[:, 0::2] = 1.0
    out = rope.apply(x, ps)
    angle = torch.tensor([[p * 10000 ** (-2 * i / d) for i in range(d // 2)] for p in ps.tolist()], dtype=torch.float64)
    torch.testing.assert_close(out[:, 0::2], angle.cos(), rtol=0, atol=1e-10)
    torch.testing.assert_close(out[:, 1::2], angle.sin(), rtol=0, atol=1e-10)


def test_rope_rotate_makes_scores_a_function_of_the_offset():
    """One query and one key repeated along a (T, hs) window: after rotate, score(t, s) depends
    on t - s only, so the score matrix is constant along each diagonal."""
    rope = build_positional("rope", d_model=32, d_head=8, n_head=4, n_positions=16)
    g = torch.Generator().manual_seed(0)
    T = 12
    q, k = (torch.randn(8, dtype=torch.float64, generator=g).expand(T, 8) for _ in range(2))
    rq, rk = rope.rotate(q, k)  # rotate takes any leading dims before (T, hs)
    s = rq @ rk.T
    torch.testing.assert_close(s[1:, 1:], s[:-1, :-1], rtol=0, atol=1e-12)
    assert (s[0, 0] - s[0, 5]).abs() > 1e-3  # and it does depend on the offset


# ---- every scheme runs where its input is ---------------------------------------------------

DEVICES = ["meta"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("scheme", ["learned", "sinusoidal", "rope", "alibi"])
def test_a_model_moved_to_another_device_makes_its_positions_there(scheme, device):
    """Training runs on a GPU: no scheme may build a position tensor on the CPU behind the
    input's back. The meta device stands in for one where there is none."""
    m = _gpt(scheme).to(device)
    assert m(torch.randint(0, 20, (2, 8), device=device)).shape == (2, 8, 20)


@pytest.mark.parametrize("device", DEVICES)
def test_alibi_makes_its_bias_on_the_device_asked_for(device):
    assert ALiBi(4).bias(6, device=device).device.type == device


# ---- mistakes fail at once, saying what to do -----------------------------------------------

def test_a_window_past_the_learned_table_names_the_limit():
    m = _gpt("learned", block_size=8)
    with pytest.raises(ValueError, match=r"window 9 exceeds the table's 8 rows; build with a larger n_positions"):
        m(torch.zeros(1, 9, dtype=torch.long))


@pytest.mark.parametrize("positions, d_model, n_head, why", [
    ("sinusoidal", 15, 3, "sinusoidal positions need an even width, got 15"),
    ("rope", 12, 4, "RoPE needs an even head width, got 3"),
])
def test_an_odd_width_fails_at_construction(positions, d_model, n_head, why):
    with pytest.raises(ValueError, match=re.escape(why)):
        _gpt(positions, d_model=d_model, n_head=n_head)


def test_an_unknown_scheme_fails_at_construction_listing_the_valid_ones():
    with pytest.raises(ValueError, match=r"unknown positional scheme 'absolute'") as err:
        _gpt("absolute")
    listed = re.search(r"choose one of (.*)$", str(err.value)).group(1).split(", ")
    assert len(listed) == 5
    for name in listed:  # every name the message offers really builds
        assert _gpt(name).config.positions == name


# ---- model/metrics.effective_tokens ---------------------------------------------------------

def test_effective_tokens_counts_along_the_dim_asked_for():
    """Uniform over n -> n, one-hot -> 1, along whichever axis holds the distribution."""
    w = torch.zeros(5, 3)
    w[:, 0] = 1 / 5    # column 0: uniform over 5
    w[2, 1] = 1.0      # column 1: one-hot
    w[:4, 2] = 1 / 4   # column 2: uniform over 4
    torch.testing.assert_close(effective_tokens(w, dim=0), torch.tensor([5.0, 1.0, 4.0]))
    torch.testing.assert_close(effective_tokens(w.T), torch.tensor([5.0, 1.0, 4.0]))  # default: the last
