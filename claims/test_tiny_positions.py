"""PL "Pozycje i maska": order-blindness without positions, and what the mask reveals."""
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from model import GPT, averaging_matrix, tiny_lab_config

pytestmark = pytest.mark.fast

seeds = st.integers(0, 2**31 - 1)


def _lab(**kw):
    return GPT(tiny_lab_config(positions="none", **kw)).double().eval()


@pytest.mark.claim("TINY-22")
@given(seed=seeds)
def test_without_positions_or_mask_the_lab_block_sees_a_bag_of_characters(seed):
    torch.manual_seed(seed)
    m = _lab(causal=False)
    x = torch.randint(0, 34, (1, 16))
    p = torch.randperm(16)
    with torch.no_grad():
        y, yp = m(x), m(x[:, p])
    torch.testing.assert_close(yp, y[:, p], rtol=0, atol=1e-12)  # equivariant
    torch.testing.assert_close(yp.mean(1), y.mean(1), rtol=0, atol=1e-12)  # pooled: invariant


@pytest.mark.claim("TINY-23")
def test_with_a_mask_the_prefix_reveals_the_position():
    A = averaging_matrix(16, torch.float64)
    first = torch.zeros(16, dtype=torch.float64)
    first[0] = 1  # a distinguished first token
    seen = A @ first
    torch.testing.assert_close(seen, 1 / torch.arange(1, 17, dtype=torch.float64), rtol=0, atol=1e-15)
    assert len(set(seen.tolist())) == 16  # 1/(t+1): a different value at every position
    const = A @ torch.ones(16, dtype=torch.float64)  # the caveat: identical tokens reveal nothing
    assert torch.allclose(const, torch.ones(16, dtype=torch.float64))


@pytest.mark.claim("TINY-25", "TINY-28")
@given(t=st.integers(2, 15), seed=seeds)
def test_one_block_without_positions_ignores_the_order_of_earlier_characters(t, seed):
    torch.manual_seed(seed)
    m = _lab()
    x = torch.randint(0, 34, (1, 16))
    y = x.clone()
    y[0, :t] = x[0, torch.randperm(t)]
    with torch.no_grad():
        torch.testing.assert_close(m(y)[0, t], m(x)[0, t], rtol=0, atol=1e-12)


@pytest.mark.claim("TINY-25")
def test_it_knows_the_current_character_but_not_the_previous_one():
    torch.manual_seed(0)
    m = _lab()
    x = torch.tensor([[5, 9, 2, 30, 11, 3, 17, 8, 21, 4, 0, 13, 6, 25, 19, 7]])
    t = 10
    cur = x.clone()
    cur[0, t] = (x[0, t] + 1) % 34
    swap = x.clone()
    swap[0, [0, t - 1]] = x[0, [t - 1, 0]]  # move the previous character to the front
    with torch.no_grad():
        assert not torch.allclose(m(cur)[0, t], m(x)[0, t])  # the current character matters
        torch.testing.assert_close(m(swap)[0, t], m(x)[0, t], rtol=0, atol=1e-12)


@pytest.mark.claim("TINY-25")
def test_two_blocks_without_positions_do_see_the_order():
    torch.manual_seed(0)
    m = _lab(n_layer=2)
    x = torch.tensor([[5, 9, 2, 30, 11, 3, 17, 8, 21, 4, 0, 13, 6, 25, 19, 7]])
    swap = x.clone()
    swap[0, [0, 9]] = x[0, [9, 0]]
    with torch.no_grad():
        assert (m(swap)[0, 10] - m(x)[0, 10]).abs().max() > 1e-6  # the control: not invariant
