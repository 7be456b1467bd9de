"""IT 3.13 The cost of attention: which tensors are n x n, and the chapter's table's arithmetic.

The measured scaling (time and memory across n) belongs to the slow tier.
"""
import math

import numpy as np
import pytest
import torch
from torch.overrides import TorchFunctionMode

from model import MLP, Block, MultiHeadAttention

pytestmark = pytest.mark.fast

# The chapter's table: n -> (ms total, ms projections, attention matrix MB, peak MB)
TABLE = {128: (2.246, 1.324, 0.5, 14.6), 256: (2.855, 2.113, 2.0, 19.2), 512: (5.761, 3.105, 8.0, 34.4),
         1024: (16.414, 4.008, 32.0, 89.1), 2048: (51.573, 9.989, 128.0, 296.1),
         4096: (225.432, 20.176, 512.0, 1100.1), 8192: (832.838, 40.106, 2048.0, 4300.1)}
MS_X4 = [1.27, 2.02, 2.85, 3.14, 4.37, 3.69]
MB_X4 = [1.31, 1.79, 2.59, 3.32, 3.72, 3.91]


class _Census(TorchFunctionMode):
    """Every tensor an op produces during a forward pass: (op name, shape, dtype)."""

    def __init__(self):
        super().__init__()
        self.out = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        r = func(*args, **(kwargs or {}))
        if isinstance(r, torch.Tensor) and not any(r is a for a in args):  # skip identities
            self.out.append((getattr(func, "__name__", str(func)), tuple(r.shape), r.dtype))
        return r


def _census(n, d=64, heads=8):
    torch.manual_seed(0)
    blk = Block(MultiHeadAttention(d, heads), MLP(d), d, norm="pre")
    with torch.no_grad(), _Census() as c:
        blk(torch.randn(1, n, d))
    return c.out


@pytest.mark.claim("COST-01")
def test_only_the_scores_and_the_weights_are_n_by_n(claim_record):
    small, big = _census(32), _census(64)  # the same ops at n and 2n
    assert [op for op, _, _ in small] == [op for op, _, _ in big]
    growth = [math.prod(b) / math.prod(a) for (_, a, _), (_, b, _) in zip(small, big)]
    quadratic = [(op, shape) for (op, shape, dtype), g in zip(big, growth)
                 if g == 4 and dtype.is_floating_point]
    softmax_at = [i for i, (op, _, _) in enumerate(big) if op == "softmax"]
    assert len(softmax_at) == 1
    # float n x n tensors: the score stages (product, scale, mask) up to the softmax, then its output
    first_quadratic = min(i for i, g in enumerate(growth) if g == 4 and big[i][2].is_floating_point)
    assert all(g == 4 for i, g in enumerate(growth) if first_quadratic <= i <= softmax_at[0]
               and big[i][2].is_floating_point)
    assert all(shape[-2:] == (64, 64) for _, shape in quadratic)
    assert quadratic[-1][0] == "softmax" and len(quadratic) >= 2  # the scores' stages, then the weights
    after = [(op, g) for i, ((op, _, dt), g) in enumerate(zip(big, growth)) if i > softmax_at[0]]
    assert all(g <= 2 for _, g in after), after  # w @ v, W_o, the whole MLP: linear in n
    claim_record("COST-01", [op for op, _ in quadratic], expected="scores, weights",
                 label="ops producing float n x n tensors")


@pytest.mark.claim("COST-02")
def test_the_attention_matrix_column_is_8_heads_n2_times_4_bytes(claim_record):
    for n, (_, _, mb, _) in TABLE.items():
        assert 8 * n * n * 4 / 2**20 == mb, n  # "MB" are MiB
    assert 8 * 16384**2 * 4 / 2**20 == 8192.0
    for n in (128, 256):
        t = torch.empty(8, n, n)
        assert t.element_size() * t.numel() / 2**20 == TABLE[n][2]


def _ratio_range(a, b, half_ulp):
    """The ratio b/a can take when a and b were printed rounded to +-half_ulp."""
    return (b - half_ulp) / (a + half_ulp), (b + half_ulp) / (a - half_ulp)


@pytest.mark.claim("COST-03")
def test_the_x4_columns_are_ratios_to_the_row_above():
    ns = sorted(TABLE)
    for i, n in enumerate(ns[1:]):
        prev = TABLE[ns[i]]
        assert round(TABLE[n][0] / prev[0], 2) == MS_X4[i]  # ms printed to 3 dp: no ambiguity
        lo, hi = _ratio_range(prev[3], TABLE[n][3], 0.05)  # MB printed to 1 dp
        assert lo - 0.005 <= MB_X4[i] <= hi + 0.005, (n, lo, hi)  # the ratio of the unrounded values


@pytest.mark.claim("COST-04")
def test_the_tables_fitted_exponents_are_1_91_and_1_87(claim_record):
    ns = [1024, 2048, 4096, 8192]  # "last four rows", least squares on log-log
    t = np.polyfit(np.log(ns), np.log([TABLE[n][0] for n in ns]), 1)[0]
    m = np.polyfit(np.log(ns), np.log([TABLE[n][3] for n in ns]), 1)[0]
    claim_record("COST-04", {"time": t, "memory": m}, expected={"time": 1.91, "memory": 1.87},
                 tolerance="rounds to 2 dp", label="from the document's own table")
    assert round(t, 2) == 1.91 and round(m, 2) == 1.87


@pytest.mark.claim("COST-06")
def test_the_tables_projections_grow_tenfold_for_eightfold_tokens():
    assert abs(TABLE[8192][1] / TABLE[1024][1] - 10) < 0.05


@pytest.mark.claim("COST-07")
def test_16384_tokens_need_8_gib_of_scores(claim_record):
    scores = 8 * 16384**2 * 4
    assert scores == 8 * 2**30  # exactly 8 GiB
    assert scores > 8e9  # more than an "8 GB" card holds, before the model or the weights
    claim_record("COST-07", 2 * scores / 2**30, expected=16, tolerance="exact",
                 label="GiB for scores + weights at 16,384 tokens")
