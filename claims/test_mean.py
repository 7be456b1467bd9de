"""IT 3.3 The mean as a context summariser: order-blind, dilutes the present."""
import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from model import GPT, averaging_matrix, ladder

pytestmark = pytest.mark.fast

shapes = dict(T=st.integers(2, 64), d=st.integers(1, 32), seed=st.integers(0, 2**31 - 1))


@pytest.mark.claim("AVG-01")
@pytest.mark.parametrize("T", [1, 7, 128])
def test_mean_takes_any_count_and_has_gradient_identity_over_T(T):
    d = 5
    x = torch.randn(T, d, dtype=torch.float64)
    assert x.mean(0).shape == (d,)
    J = torch.autograd.functional.jacobian(lambda x: x.mean(0), x)  # (d, T, d)
    for i in range(T):
        torch.testing.assert_close(J[:, i, :], torch.eye(d, dtype=torch.float64) / T, rtol=0, atol=1e-15)


@pytest.mark.claim("AVG-04")
@given(**shapes)
def test_shuffling_the_window_leaves_the_mean_unchanged(T, d, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(T, d, generator=g)
    y = x[torch.randperm(T, generator=g)]
    A = averaging_matrix(T)
    # float32: a reordered sum differs by a few ulps of values ~1; 1e-6 is ~8 ulps at 1.0
    assert (A[-1] @ x - A[-1] @ y).abs().max().item() <= 1e-6
    exact = [math.fsum(col) for col in x.double().T.tolist()]  # correctly rounded: order-free
    assert exact == [math.fsum(col) for col in y.double().T.tolist()]


@pytest.mark.claim("AVG-04")
def test_chapter_shuffle_demo_is_float_noise(claim_record):
    x = torch.randn(128, 128)
    A = averaging_matrix(128)
    diff = (A[-1] @ x - A[-1] @ x[torch.randperm(128)]).abs().max().item()
    claim_record("AVG-04", diff, expected=2.98e-8, tolerance="<= 1e-6 (float32 reordering noise)")
    assert diff <= 1e-6


@pytest.mark.claim("AVG-05")
@given(seed=st.integers(0, 2**31 - 1), T=st.integers(2, 32))
def test_mean_only_lm_cannot_tell_a_window_from_its_permutation(seed, T):
    torch.manual_seed(seed)
    lm = GPT(ladder()["mean"]).eval()  # embedding -> causal mean -> linear
    idx = torch.randint(0, 1024, (1, T))
    perm = idx[:, torch.randperm(T)]
    with torch.no_grad():
        a, b = lm(idx)[0, -1], lm(perm)[0, -1]
    torch.testing.assert_close(a, b, rtol=0, atol=1e-5)  # float32 sums of 128-wide rows, reordered


@pytest.mark.claim("AVG-05")
def test_dog_bit_man_equals_man_bit_dog_for_the_mean_lm():
    lm = GPT(ladder()["mean"]).eval()
    the, dog, bit, man = 1, 2, 3, 4
    with torch.no_grad():
        a = lm(torch.tensor([[the, dog, bit, the, man]]))[0, -1]
        b = lm(torch.tensor([[the, man, bit, the, dog]]))[0, -1]
    torch.testing.assert_close(a, b, rtol=0, atol=1e-6)


@pytest.mark.claim("AVG-07")
@given(**shapes)
def test_positions_added_before_the_mean_are_forgotten(T, d, seed):
    g = torch.Generator().manual_seed(seed)
    x, P = torch.randn(T, d, generator=g), torch.randn(T, d, generator=g)
    perm = torch.randperm(T, generator=g)
    A = averaging_matrix(T)
    # the position term contributes mean(P) whatever the content's order
    assert (A[-1] @ (x[perm] + P) - A[-1] @ (x + P)).abs().max().item() <= 1e-6


@pytest.mark.claim("AVG-08")
def test_at_position_100_the_current_token_is_one_hundredth(claim_record):
    A = averaging_matrix(128, dtype=torch.float64)
    share = claim_record("AVG-08", A[99, 99].item(), expected=0.01, tolerance="exact (float64)")
    assert share == 0.01
    torch.testing.assert_close(A.diagonal(), 1 / torch.arange(1, 129, dtype=torch.float64), rtol=0, atol=0)
