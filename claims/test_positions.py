"""IT 3.11 Position: equivariance without it, and the four schemes' exact properties."""
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from model import GPT, GPTConfig, MultiHeadAttention
from model.positional import RoPE, alibi_slopes, build_positional, sinusoid_table

pytestmark = pytest.mark.fast

seeds = st.integers(0, 2**31 - 1)


def _nope(n_layer=1, causal=True, d=16, T=12, V=20, **kw):
    return GPT(GPTConfig(vocab_size=V, block_size=T, d_model=d, n_layer=n_layer, n_head=2,
                         positions="none", causal=causal, **kw)).double().eval()


@pytest.mark.claim("POS-02")
@given(T=st.integers(2, 16), seed=seeds)
def test_unmasked_attention_without_positions_is_permutation_equivariant(T, seed):
    torch.manual_seed(seed)
    attn = MultiHeadAttention(16, 4, causal=False).double()
    x = torch.randn(2, T, 16, dtype=torch.float64)
    p = torch.randperm(T)
    torch.testing.assert_close(attn(x[:, p]), attn(x)[:, p], rtol=0, atol=1e-12)


@pytest.mark.claim("POS-02")
@given(seed=seeds)
def test_a_whole_unmasked_block_without_positions_is_equivariant(seed):
    torch.manual_seed(seed)
    m = _nope(causal=False, T=10)
    x = torch.randint(0, 20, (1, 10))
    p = torch.randperm(10)
    with torch.no_grad():
        torch.testing.assert_close(m(x[:, p]), m(x)[:, p], rtol=0, atol=1e-12)


def _prefix_shuffled(x, t, g):
    y = x.clone()
    y[:, :t] = x[:, torch.randperm(t, generator=g)]
    return y


@pytest.mark.claim("POS-03", "TINY-28")
@given(t=st.integers(2, 11), seed=seeds)
def test_one_causal_block_cannot_see_order_inside_its_prefix(t, seed):
    torch.manual_seed(seed)
    m = _nope(n_layer=1)
    x = torch.randint(0, 20, (1, 12))
    y = _prefix_shuffled(x, t, torch.Generator().manual_seed(seed))
    with torch.no_grad():
        torch.testing.assert_close(m(y)[0, t], m(x)[0, t], rtol=0, atol=1e-12)


@pytest.mark.claim("POS-03", "TINY-28")
def test_two_causal_blocks_can_see_order_the_catalogues_caveat(claim_record):
    """Negative control: from the second layer on, the prefix's states carry their own prefixes."""
    torch.manual_seed(0)
    m = _nope(n_layer=2)
    x = torch.tensor([[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]])
    y = x.clone()
    y[0, [0, 1]] = y[0, [1, 0]]  # swap two earlier tokens
    with torch.no_grad():
        diff = (m(y)[0, 11] - m(x)[0, 11]).abs().max().item()
    claim_record("POS-03", diff, tolerance="> 1e-4", label="2-block output change, swapped prefix")
    assert diff > 1e-4


@pytest.mark.claim("POS-05")
def test_positions_never_seen_keep_their_initial_vector():
    torch.manual_seed(0)
    m = GPT(GPTConfig(vocab_size=64, block_size=64, n_positions=256, d_model=32, n_layer=1, n_head=2))
    init = m.pos.table.weight.detach().clone()
    opt = torch.optim.Adam(m.parameters(), lr=1e-2)
    for _ in range(20):
        x = torch.randint(0, 64, (4, 65))
        opt.zero_grad()
        m(x[:, :-1], x[:, 1:])[1].backward()
        opt.step()
    rows = m.pos.table.weight.detach()
    assert torch.equal(rows[64:], init[64:])  # bit-identical: position 100 was never in a batch
    assert not torch.equal(rows[:64], init[:64])


@pytest.mark.claim("POS-05")
def test_decoupled_weight_decay_rescales_the_unseen_rows(claim_record):
    torch.manual_seed(0)
    m = GPT(GPTConfig(vocab_size=64, block_size=64, n_positions=256, d_model=32, n_layer=1, n_head=2))
    init = m.pos.table.weight.detach().clone()
    lr, wd, steps = 1e-2, 0.1, 20
    opt = torch.optim.AdamW(m.parameters(), lr=lr, weight_decay=wd)
    for _ in range(steps):
        x = torch.randint(0, 64, (4, 65))
        opt.zero_grad()
        m(x[:, :-1], x[:, 1:])[1].backward()
        opt.step()
    factor = (1 - lr * wd) ** steps
    shrink = (m.pos.table.weight.detach()[64:] / init[64:]).mean().item()
    claim_record("POS-05", shrink, expected=factor, tolerance="rtol 1e-5 (float32)",
                 label="unseen rows / init under AdamW")
    torch.testing.assert_close(m.pos.table.weight.detach()[64:], init[64:] * factor, rtol=1e-5, atol=0)


@pytest.mark.claim("POS-06")
def test_sinusoids_are_computed_geometric_and_defined_anywhere():
    pe = build_positional("sinusoidal", d_model=64, d_head=16, n_head=4, n_positions=64)
    assert list(pe.parameters()) == []  # nothing learned
    d = 64
    freq = 10000 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    ratios = freq[1:] / freq[:-1]
    assert (ratios - ratios[0]).abs().max() < 1e-12  # geometric spacing
    table = sinusoid_table(1001, d, dtype=torch.float64)
    torch.testing.assert_close(table[200, 0::2], torch.sin(200 * freq), rtol=0, atol=1e-12)
    torch.testing.assert_close(table[200, 1::2], torch.cos(200 * freq), rtol=0, atol=1e-12)
    assert torch.isfinite(table).all() and table.abs().max() <= 1


@pytest.mark.claim("POS-08")
@given(offset=st.integers(0, 50), seed=seeds)
def test_rope_scores_depend_only_on_the_distance(offset, seed):
    g = torch.Generator().manual_seed(seed)
    rope = RoPE(32)
    q, k = torch.randn(32, dtype=torch.float64, generator=g), torch.randn(32, dtype=torch.float64, generator=g)
    ts = torch.tensor([offset, offset + 7, offset + 60, offset + 200, offset + 1000])
    scores = (rope.apply(q.expand(5, 32), ts) * rope.apply(k.expand(5, 32), ts - offset)).sum(-1)
    assert (scores - scores[0]).abs().max() < 1e-9  # float64 trig at angles up to ~1000 rad
    assert torch.allclose(rope.apply(q.expand(5, 32), ts).norm(dim=-1), q.norm().expand(5))


@pytest.mark.claim("POS-10")
def test_alibi_is_a_linear_distance_penalty_with_one_slope_per_head():
    pe = build_positional("alibi", d_model=64, d_head=8, n_head=8, n_positions=64)
    b = pe.bias(1024, dtype=torch.float64)  # defined at any distance: no table
    assert b.shape == (8, 1024, 1024)
    slopes = alibi_slopes(8)
    assert torch.equal(slopes, torch.tensor([2.0 ** -k for k in range(1, 9)]))  # 1/2 ... 1/256
    assert len(set(slopes.tolist())) == 8
    t, i = 1000, torch.arange(1001)
    torch.testing.assert_close(b[:, t, : t + 1], -slopes[:, None].double() * (t - i), rtol=0, atol=1e-9)
    assert torch.isfinite(b).all()
