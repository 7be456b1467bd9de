"""IT 3.13 The cost of attention: which tensors are n x n, and the chapter's table's arithmetic.

The measured scaling (time and memory across n) belongs to the slow tier.
"""
import math

import numpy as np
import pytest
import torch
from torch.overrides import TorchFunctionMode

from model import MLP, Block, MultiHeadAttention
from suite.reading import reads
from suite.catalogue import COST_MEMORY_CI


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


@pytest.mark.fast
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


@pytest.mark.fast
@pytest.mark.claim("COST-02")
def test_the_attention_matrix_column_is_8_heads_n2_times_4_bytes(claim_record):
    claim_record("COST-02", [8 * n * n * 4 / 2**20 for n in [*TABLE, 16384]],
                 tolerance="exact: == the table's MB column, and 8192 at n = 16384",
                 label="8 heads x n^2 x 4 B in MiB, n = 128 ... 16384")
    for n, (_, _, mb, _) in TABLE.items():
        assert 8 * n * n * 4 / 2**20 == mb, n  # "MB" are MiB
    assert 8 * 16384**2 * 4 / 2**20 == 8192.0
    for n in (128, 256):
        t = torch.empty(8, n, n)
        assert t.element_size() * t.numel() / 2**20 == TABLE[n][2]


@pytest.mark.fast
@pytest.mark.scale("analytic")
@pytest.mark.claim("COST-02")
def test_the_peak_bytes_do_not_move_between_runs(claim_record):  # about 1 s: the profiler starts
    """"conteggi di byte dell'allocator e non si muovono": the layer's peak bytes at the table's
    sizes up to 512 tokens, on the CPU (torch's profiler; the chapter's card is a GPU: the gpu tier
    counts CUDA's, COST-11), over two seeds and a repeat."""
    from experiments.cost import peak_memory
    ns = [n for n in TABLE if n <= 512]
    peaks = {n: [peak_memory(n, seed=s) for s in (0, 1, 0)] for n in ns}
    spread = claim_record("COST-02", max(max(p) - min(p) for p in peaks.values()), expected=0, tolerance="exact",
                          label=f"peak bytes at n = {', '.join(map(str, ns))} (CPU), seeds 0, 1 and 0 again: "
                                f"largest spread (peaks {', '.join(f'{p[0]:,}' for p in peaks.values())} B)")
    assert spread == 0


# "peak MB": what is live at once at the softmax: scores and weights, each 8 heads x n^2 float32, and
# the causal mask, one bool per pair; the rest (weights, input, projections) is constant or linear in n.
PEAK_PER_N2 = 2 * 8 * 4 + 1  # bytes per n^2
PEAK_BAND = (PEAK_PER_N2 * 0.95, PEAK_PER_N2 * 1.05)  # the column's numbers are measured, printed bare


def n2_coefficient(ns, peaks) -> tuple[float, float, float]:
    """(a, b, c) of the least-squares peak = a + b n + c n^2, in bytes."""
    x = np.asarray(ns, float)
    (a, b, c), *_ = np.linalg.lstsq(np.stack([np.ones_like(x), x, x**2], 1), np.asarray(peaks, float), rcond=None)
    return a, b, c


TABLE_N2 = n2_coefficient(list(TABLE), [TABLE[n][3] * 2**20 for n in TABLE])[2]


@pytest.mark.fast
@pytest.mark.claim("COST-11")
def test_the_peak_column_is_scores_weights_and_mask_plus_a_linear_part(claim_record):
    """The table's peak-MB column, all seven rows: its n^2 coefficient is the layer's two n x n float32
    tensors and its mask. Each row's rest (the card's base and the linear part) is the chapter's."""
    claim_record("COST-11", {n: TABLE[n][:2] for n in TABLE}, tolerance="reported: a laptop's wall clock that L167 "
                 "says to read only for its ratios (COST-03 to COST-06 judge those)", label="the ms columns (total, projections)")
    claim_record("COST-11", {"attn matrix MB": [TABLE[n][2] for n in TABLE], "ms x4": MS_X4, "MB x4": MB_X4},
                 tolerance="reported: the quoted rows' other columns, judged by COST-02 (attn matrix MB), COST-03 (both "
                           "x4 columns) and COST-05 (3.91)", label="the quoted rows' other columns")
    c = claim_record("COST-11", round(TABLE_N2, 2), expected=PEAK_PER_N2,
                     tolerance=f"exact: 2 x 8 x 4 + 1 = {PEAK_PER_N2} B per n^2 +- 5 % {[round(x, 2) for x in PEAK_BAND]} "
                               "(the column's numbers are measured, printed bare)",
                     label="the table's peak MB, bytes per n^2 (least squares on its seven rows)")
    assert PEAK_BAND[0] <= c <= PEAK_BAND[1]


@pytest.mark.fast
@pytest.mark.scale("analytic")
@pytest.mark.claim("COST-11")
def test_our_allocator_counts_the_tables_n2_bytes_on_the_cpu(claim_record):  # about 0.4 s
    """The same layer's peak bytes of one forward, by torch's profiler on the CPU (the chapter's
    card is a GPU: CUDA's count is the gpu tier's), 128 to 1,024 tokens: the n^2 part is the
    table's. The rest of each row (weights, input, the card's workspace) is the card's, so reported."""
    from experiments.cost import peak_memory
    ns = [n for n in TABLE if n <= 1024]
    peaks = [peak_memory(n) for n in ns]
    claim_record("COST-11", {n: round(p / 2**20, 2) for n, p in zip(ns, peaks)},
                 expected={n: TABLE[n][3] for n in ns},
                 tolerance="reported: the base (weights, input and the card's workspace, allocated before the "
                           "forward or by the card's libraries) is the chapter's setting, which it does not print",
                 label="our peak MiB of one forward above what was allocated before it (CPU)")
    c = claim_record("COST-11", round(n2_coefficient(ns, peaks)[2], 3), expected=round(TABLE_N2, 2),
                     tolerance=f"exact: the table's {TABLE_N2:.2f} B per n^2 +- 5 % (a measured number printed bare)",
                     label="our peak, bytes per n^2, 128 to 1,024 tokens (CPU allocator)")
    assert abs(c - TABLE_N2) <= 0.05 * TABLE_N2


def _ratio_range(a, b, half_ulp):
    """The ratio b/a can take when a and b were printed rounded to +-half_ulp."""
    return (b - half_ulp) / (a + half_ulp), (b + half_ulp) / (a - half_ulp)


@pytest.mark.fast
@pytest.mark.claim("COST-03")
def test_the_x4_columns_are_ratios_to_the_row_above(claim_record):
    ns = sorted(TABLE)
    claim_record("COST-03", [round(TABLE[n][0] / TABLE[ns[i]][0], 2) for i, n in enumerate(ns[1:])], expected=MS_X4,
                 tolerance="exact: rounds to the printed 2 dp", label="ms x4: ratio to the row above")
    claim_record("COST-03", [[round(x, 3) for x in _ratio_range(TABLE[ns[i]][3], TABLE[n][3], 0.05)]
                             for i, n in enumerate(ns[1:])], expected=MB_X4,
                 tolerance="exact: printed ratio inside the range +- 0.005",
                 label="MB x4: range of the unrounded ratio")
    for i, n in enumerate(ns[1:]):
        prev = TABLE[ns[i]]
        assert round(TABLE[n][0] / prev[0], 2) == MS_X4[i]  # ms printed to 3 dp: no ambiguity
        lo, hi = _ratio_range(prev[3], TABLE[n][3], 0.05)  # MB printed to 1 dp
        assert lo - 0.005 <= MB_X4[i] <= hi + 0.005, (n, lo, hi)  # the ratio of the unrounded values


@pytest.mark.fast
@pytest.mark.claim("COST-04")
def test_the_tables_fitted_exponents_are_1_91_and_1_87(claim_record):
    ns = [1024, 2048, 4096, 8192]  # "last four rows", least squares on log-log
    t = np.polyfit(np.log(ns), np.log([TABLE[n][0] for n in ns]), 1)[0]
    m = np.polyfit(np.log(ns), np.log([TABLE[n][3] for n in ns]), 1)[0]
    claim_record("COST-04", {"time": t, "memory": m}, expected={"time": 1.91, "memory": 1.87},
                 tolerance="exact: rounds to 2 dp", label="from the document's own table")
    assert round(t, 2) == 1.91 and round(m, 2) == 1.87


@pytest.mark.fast
@pytest.mark.claim("COST-05")
def test_the_tables_doubling_ratios_close_in_on_4_in_time_and_in_memory(claim_record):
    ns = sorted(TABLE)[-4:]  # the doublings the text reads: 1024 -> 8192
    for col, what in ((0, "time"), (3, "memory")):
        ratios = [TABLE[b][col] / TABLE[a][col] for a, b in zip(ns, ns[1:])]
        off = claim_record("COST-05", [round(abs(r - 4), 2) for r in ratios], expected="shrinking towards 0",
                           tolerance="exact: strictly decreasing", label=f"the chapter's table: |{what} ratio - 4| per doubling")
        assert all(a > b for a, b in zip(off, off[1:])), what  # time oscillates (3.14, 4.37, 3.69) but closes in
    last = claim_record("COST-05", TABLE[8192][3] / TABLE[4096][3], expected=3.91, band=(3.905, 3.915),
                        tolerance="exact: half a unit of '3,91' [3.905, 3.915]",
                        label="the chapter's table: peak MB, 8192 / 4096")
    assert 3.905 <= last <= 3.915


@pytest.mark.fast
@pytest.mark.claim("COST-06")
def test_the_tables_projections_grow_tenfold_for_eightfold_tokens(claim_record):
    ratio = claim_record("COST-06", TABLE[8192][1] / TABLE[1024][1], expected=10,
                         tolerance="exact: |ratio - 10| < 0.05", label="the table's projection ms, 8192 / 1024")
    assert abs(ratio - 10) < 0.05


@pytest.mark.fast
@pytest.mark.claim("COST-07")
def test_16384_tokens_need_8_gib_of_scores(claim_record):
    scores = claim_record("COST-07", 8 * 16384**2 * 4 / 2**30, expected=8, tolerance="exact",
                          label="GiB of scores at 16,384 tokens, 8 heads, 4 bytes")
    assert scores == 8  # exactly 8 GiB
    assert scores * 2**30 > 8e9  # more than an "8 GB" card holds, before the model or the weights



@pytest.mark.fast
@pytest.mark.claim("COST-08")
def test_a_throttle_from_1785_to_under_300_mhz_accounts_for_seven_to_ten_times(claim_record):
    """"fa throttling da 1.785 MHz a meno di 300 MHz …, quindi una run a freddo … torna sette-dieci
    volte più veloce": the laptop is not here, so only the "quindi" is checked. The same code bound
    by its clock runs in time proportional to 1 / clock, so a throttle to f < 300 MHz makes a cold
    run 1785 / f > 5.95 times faster; each end of "sette-dieci" must need a clock under 300 MHz.
    Rule written before the test first ran."""
    clocks = {x: 1785 / x for x in (7, 10)}  # the hot clock each speedup implies, MHz
    floor = claim_record("COST-08", 1785 / 300, tolerance="exact: below 7, the stated range's low end",
                         label="the least speedup a throttle from 1,785 to under 300 MHz gives")
    claim_record("COST-08", {f"{x}x": round(f, 1) for x, f in clocks.items()}, expected="under 300 MHz",
                 tolerance="exact: each < 300", label="the hot clock (MHz) each end of 'sette-dieci' implies")
    assert floor < 7 and all(f < 300 for f in clocks.values())

# ---- tiled attention (FlashAttention's idea) -----------------------------------------------

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from model.attention import attend, tiled_attention  # noqa: E402


@pytest.mark.fast
@pytest.mark.claim("COST-09")
@given(T=st.integers(1, 48), hs=st.integers(1, 16), tile=st.integers(3, 20), causal=st.booleans(),
       seed=st.integers(0, 2**31 - 1))
def test_tiled_attention_computes_the_same_result(T, hs, tile, causal, seed):
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(2, 3, T, hs, generator=g) for _ in range(3))
    full = attend(q, k, v, causal=causal)
    torch.testing.assert_close(tiled_attention(q, k, v, causal=causal, tile=tile), full,
                               rtol=0, atol=1e-6)  # float32: the same sums, regrouped


@pytest.mark.fast
@pytest.mark.claim("COST-09")
def test_tiled_attention_never_holds_more_than_one_tile_of_scores(claim_record):
    q = k = v = torch.randn(1, 8, 600, 16)
    biggest = []
    tiled_attention(q, k, v, tile=128, probe=lambda s: biggest.append(s.numel()))
    claim_record("COST-09", max(biggest), expected=8 * 128 * 128, tolerance="exact: <= one 8 x 128 x 128 block",
                 label="largest score block held at n=600 (the full matrix: 2,880,000)")
    assert max(biggest) <= 8 * 128 * 128 < 8 * 600 * 600


# ---- measured scaling: CPU (slow) and CUDA (gpu) --------------------------------------------

from claimcheck import undecided  # noqa: E402
from experiments.cost import CostConfig, NoRoom, measure, peak_memory, scaling, slope, table  # noqa: E402
from claimcheck.rules import TOST_LEVEL, inside, judge, within  # noqa: E402
from suite.catalogue import COST_CI  # noqa: E402  (CPU_NS below is read at import)

CPU_NS = COST_CI.ns


def _last4(rows, key):
    return slope([r["n"] for r in rows[-4:]], [r[key] for r in rows[-4:]])


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("COST-04")
@reads(COST_CI)
def test_memory_grows_as_n_squared(runs_of, claim_record, claim_figure):
    cost_ci = runs_of(COST_CI)
    naive = cost_ci["naive"]
    m, m_se = _last4(naive, "peak_bytes")
    claim_record("COST-04", round(m, 3), expected=1.87, tolerance=f"exact: [1.8, 2.05]; SE {m_se:.3f}",
                 label="memory exponent, last four sizes (CPU)")
    claim_record("COST-04", table(naive), label="our table (CPU, naive layer)")
    claim_figure("COST-04", "cost_loglog", _draw_cost(cost_ci))
    assert 1.8 <= m <= 2.05  # allocator bytes: the same on every run


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("COST-05")
@reads(COST_CI)
def test_doubling_n_multiplies_the_peak_memory_towards_4(runs_of, claim_record):
    """The weaker form at CI scale: the CPU run stops at 4,096 tokens, a step before the chapter's
    3,91 (4,096 -> 8,192), so the ratio is judged climbing towards 4 (each doubling's above the
    last's, the last below 4: allocator bytes, the same on every run); 3,91 is judged on the gpu tier."""
    cost_ci = runs_of(COST_CI)
    naive = cost_ci["naive"]
    ratios = [b["peak_bytes"] / a["peak_bytes"] for a, b in zip(naive, naive[1:])]
    claim_record("COST-05", [round(r, 3) for r in ratios], expected="3.91 at 4096 -> 8192",
                 tolerance="reported: the CPU scale stops at 4096; the chapter's table gives 3.32, 3.72 for its "
                           "last two steps here", label=f"peak memory ratio per doubling, {CPU_NS[0]} -> {CPU_NS[-1]} (CPU)")
    last = ratios[-3:]
    claim_record("COST-05", [round(r, 3) for r in last], expected="rising towards 4",
                 tolerance="comparison (CI scale: the direction only): the last three ratios rising, the last below 4",
                 label=f"peak memory ratio, last three doublings to {CPU_NS[-1]} (CPU)")
    assert all(a < b for a, b in zip(last, last[1:])) and last[-1] < 4


def bench_ms(fn) -> float:
    """ms of one ``fn()`` by torch.utils.benchmark, on one thread: the fastest block of runs,
    timed in the thread's own CPU time. Another process on the same cores (the other xdist
    worker training) can only slow a block down, so the fastest one is the cost of ``fn``."""
    import time
    from torch.utils import benchmark
    fn()  # warm-up: allocator, kernels' first call
    m = benchmark.Timer(stmt="fn()", globals={"fn": fn}, num_threads=1, timer=time.thread_time)
    return min(m.blocked_autorange(min_run_time=0.2).times) * 1e3


def exponent_ci(ns, ms, level=TOST_LEVEL) -> tuple[float, float, float]:
    """Log-log slope and its two-sided confidence interval (t with n - 2 degrees of freedom)."""
    from scipy import stats
    m, se = slope(ns, ms)
    t = stats.t.ppf(0.5 + level / 2, len(ns) - 2)
    return m, m - t * se, m + t * se


@pytest.fixture(scope="module")
def timings():
    """n -> (ms for the whole naive layer, ms for its projections): the fastest of three rounds
    over the sizes, so that a burst of load lands on one round, not on one size."""
    from experiments.cost import Layer
    torch.manual_seed(0)
    layer = Layer(COST_CI.config)
    xs = {n: torch.randn(COST_CI.config.batch, n, COST_CI.config.d_model) for n in CPU_NS[-4:]}
    out = {n: (math.inf, math.inf) for n in xs}
    with torch.no_grad():
        for _ in range(3):
            for n, x in xs.items():
                y = layer.core(*layer.project(x), "naive")
                whole = bench_ms(lambda: layer(x, "naive"))
                proj = bench_ms(lambda: (layer.project(x), layer.out(y)))
                out[n] = (min(out[n][0], whole), min(out[n][1], proj))
    return out


# "time ~ n^1.91": the text's 1.91 +- 0.2, and up to 2.2 above: a little over 2 is still the n^2
# cost the text describes (a memory-bound softmax at long n can push it there). The chapter's own
# table passes: 1.91, 90 % interval [1.73, 2.10] (tests/test_experiments_cost.py).
TIME_BAND = (1.7, 2.2)

# A CPU timing is a benchmark, not a verdict: in CI the other xdist worker trains on the same two
# cores, and the fastest block still moves with the memory traffic it makes (a CI run can time a
# doubling at 3.37 where the arithmetic says 4, and fit an exponent interval [1.78, 2.27]).
# So these tests print the exponents, their intervals and the rule they would face, then skip; the
# time claims are judged in the gpu tier, on the document's configuration. The memory halves of
# COST-04/05 (allocator bytes, the same on every run) are asserted above.
BENCHMARK = ("benchmark: a CPU timing moves with whatever else runs on the cores, so it prints "
             "its figures and decides nothing; the gpu tier judges the time claims")


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("COST-04")
def test_time_grows_as_n_squared(timings, claim_record):
    """"time ~ n^1.91" is a claim about a value, so an equivalence: the fitted exponent's 90 %
    interval (two one-sided tests at 5 %) must lie inside the band; noisy timings widen the
    interval and make the pass harder, never easier."""
    ns = CPU_NS[-4:]
    t, lo, hi = exponent_ci(ns, [timings[n][0] for n in ns])
    claim_record("COST-04", round(t, 3), expected=1.91,
                 tolerance=f"reported (a benchmark on a CPU): 90 % interval [{lo:.2f}, {hi:.2f}] against {list(TIME_BAND)}",
                 label="time exponent, last four sizes (CPU, torch.utils.benchmark, fastest block)")
    print(f"COST-04 time exponent {t:.2f}, 90 % interval [{lo:.2f}, {hi:.2f}], "
          f"{'inside' if inside(lo, hi, TIME_BAND) else 'not inside'} {list(TIME_BAND)}")
    pytest.skip(BENCHMARK)


# COST-06's "Lineare": the exponent rounds to 1, as the word table reads "N volte" as a ratio that
# rounds to N (docs/reference/statistics.md). The chapter's own timings pass: its x10 for x8 fits
# 1.10, 90 % interval [0.94, 1.26] (tests/test_experiments_cost.py).
LINEAR = (0.5, 1.5)

# COST-05's time half: "converges exactly to 4" read at the last doubling, as close to 4 as the
# chapter's own last time ratio is (8192 / 4096: 3.69, 0.31 below 4)
TIME_X4 = (4 - 0.31, 4 + 0.31)


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("COST-05")
def test_doubling_n_multiplies_the_time_by_about_4(timings, claim_record):
    a, b = CPU_NS[-2:]
    r = claim_record("COST-05", round(timings[b][0] / timings[a][0], 3), expected="4 (the chapter's last: 3.69)",
                     tolerance=f"reported (a benchmark on a CPU): against {list(TIME_X4)}, as close as the chapter's own last time ratio",
                     label=f"time ratio {a} -> {b} (CPU, torch.utils.benchmark, fastest of three rounds)")
    print(f"COST-05 time ratio {r:.2f}, {'inside' if TIME_X4[0] <= r <= TIME_X4[1] else 'not inside'} "
          f"{list(TIME_X4)}")
    pytest.skip(BENCHMARK)


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("COST-06")
def test_the_projections_grow_linearly(timings, claim_record):
    ns = CPU_NS[-4:]
    p, lo, hi = exponent_ci(ns, [timings[n][1] for n in ns])
    claim_record("COST-06", round(p, 3), expected="≈1 (×10 for ×8)",
                 tolerance=f"reported (a benchmark on a CPU): 90 % interval [{lo:.2f}, {hi:.2f}] against {list(LINEAR)}",
                 label="projection time exponent, last four sizes (CPU, torch.utils.benchmark, fastest block)")
    print(f"COST-06 projection exponent {p:.2f}, 90 % interval [{lo:.2f}, {hi:.2f}], "
          f"{'inside' if inside(lo, hi, LINEAR) else 'not inside'} {list(LINEAR)}")
    pytest.skip(BENCHMARK)


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("COST-09")
@reads(COST_MEMORY_CI)
def test_tiled_memory_grows_linearly_where_naive_grows_quadratically(runs_of, claim_record):
    cost_memory_ci = runs_of(COST_MEMORY_CI)
    slopes = {kind: round(_last4(rows, "peak_bytes")[0], 3) for kind, rows in cost_memory_ci.items()}
    claim_record("COST-09", slopes, tolerance="exact: tiled <= 1.2 and naive >= 1.8",
                 label="peak-memory exponent per core, last four sizes (CPU)")
    assert slopes["tiled"] <= 1.2 and slopes["naive"] >= 1.8


def _draw_cost(rows):
    def draw(fig):
        ax1, ax2 = fig.subplots(1, 2)
        fig.set_size_inches(11, 4.2)
        doc_n = sorted(TABLE)
        ax1.plot(doc_n, [TABLE[n][0] for n in doc_n], "k--", label="chapter (laptop GPU)")
        ax2.plot(doc_n, [TABLE[n][3] for n in doc_n], "k--", label="chapter (laptop GPU)")
        for kind, rs in rows.items():
            ns = [r["n"] for r in rs]
            ax1.plot(ns, [r["ms_total"] for r in rs], marker="o", label=f"{kind} (this CPU)")
            ax2.plot(ns, [r["peak_bytes"] / 2**20 for r in rs], marker="o", label=f"{kind} (this CPU)")
        ax1.set(xscale="log", yscale="log", xlabel="tokens n", ylabel="ms per forward", title="time")
        ax2.set(xscale="log", yscale="log", xlabel="tokens n", ylabel="peak MiB", title="memory")
        ax1.legend(fontsize=8)
        ax2.legend(fontsize=8)
    return draw


# ---- the document's configuration on a CUDA card (gpu tier) ------------------------------------

DOC_NS = (1024, 2048, 4096, 8192)  # the chapter's last four rows: its fits and its 4.0 -> 40.1 ms

# A call this short is mostly kernel launches: on an H200 the projections at 1,024 tokens and batch
# 1 fitted an exponent of 0.40. A launch costs microseconds and a call makes a few dozen,
# so at 2 ms they are a few percent of a point, and bend an 8x span's exponent by about
# log(1.03) / log(8) = 0.015. At each length the batch grows until the call takes this long, and
# the time is per sequence: a batch is more sequences of the document's layer, so the exponent over
# n is the document's.
MIN_CALL_MS = 2.0


@pytest.fixture(scope="module")
def cuda_card(device):
    """The card's memory in bytes. The time claims are judged where the chapter measured them, on a
    GPU; a CPU timing is a benchmark (above)."""
    if device.type != "cuda":
        pytest.skip("the time claims are judged on a CUDA card, like the chapter's laptop GPU")
    return torch.cuda.get_device_properties(device).total_memory


def _scaling(part, device):
    """experiments.cost.scaling over DOC_NS within half the card's free memory (the tier's training
    may hold some); a card that holds not one call at the longest length skips, naming it."""
    torch.cuda.empty_cache()
    free, _ = torch.cuda.mem_get_info(device)
    try:
        return scaling(DOC_NS, part, "naive", CostConfig(), device, min_ms=MIN_CALL_MS, memory=free // 2)
    except NoRoom as e:
        pytest.skip(f"{torch.cuda.get_device_name(device)}, half of its {free / 2**30:.0f} GiB free: {e}")


@pytest.fixture(scope="module")
def cuda_layer(cuda_card, device):
    """The whole layer's ms per sequence over DOC_NS (COST-04's and COST-05's time)."""
    return _scaling("total", device)  # cuda_card: the skip without CUDA


@pytest.fixture(scope="module")
def cuda_projections(cuda_card, device):
    """The projections' ms per sequence over DOC_NS (COST-06)."""
    return _scaling("projections", device)  # cuda_card: the skip without CUDA


@pytest.fixture(scope="module")
def cuda_memory(cuda_card, device):
    """Peak bytes of one forward at batch 1, the chapter's, over DOC_NS: no timing in the same call."""
    return [peak_memory(n, "naive", CostConfig(), device) for n in DOC_NS]


def _timed(claim_id, rows, claim_record, reads):
    """Record each length's batch and call; undecided when a call the rule ``reads`` (indices into
    DOC_NS) stayed under MIN_CALL_MS at the largest batch that fits: launches, not arithmetic,
    would set its time."""
    claim_record(claim_id, {"batch": rows["batch"], "ms per call": [round(x, 3) for x in rows["call_ms"]]},
                 label=f"per length, the batch grown until a call takes {MIN_CALL_MS} ms, and its call (CUDA)")
    short = [DOC_NS[i] for i in reads if not rows["reached"][i]]
    if short:
        undecided(f"{claim_id}: at {short} tokens the largest batch that fits half the card still calls in under "
                  f"{MIN_CALL_MS} ms; launches set those times")
    return rows["ms"]


@pytest.mark.gpu
@pytest.mark.claim("COST-04")
def test_on_cuda_memory_grows_as_n_squared(cuda_memory, claim_record):
    m, _ = slope(DOC_NS, cuda_memory)
    claim_record("COST-04", round(m, 3), expected=1.87, tolerance="exact: [1.8, 2.05]",
                 label="memory exponent, the chapter's last four sizes, batch 1 (CUDA)")
    assert 1.8 <= m <= 2.05  # allocator bytes: the same on every run


@pytest.mark.gpu
@pytest.mark.claim("COST-04")
def test_on_cuda_time_grows_as_n_squared(cuda_layer, claim_record):
    ms = _timed("COST-04", cuda_layer, claim_record, reads=range(4))
    t, lo, hi = exponent_ci(DOC_NS, ms)
    claim_record("COST-04", round(t, 3), expected=1.91, tolerance=f"equivalence: 90 % interval [{lo:.2f}, {hi:.2f}] "
                 f"inside {list(TIME_BAND)} (TOST)", label="time exponent per sequence, the chapter's last four sizes (CUDA)")
    judge("COST-04", within(lo, hi, TIME_BAND), f"time exponent {t:.2f} [{lo:.2f}, {hi:.2f}] against {list(TIME_BAND)}")


@pytest.mark.gpu
@pytest.mark.claim("COST-05")
def test_on_cuda_doubling_n_multiplies_the_peak_memory_towards_4(cuda_memory, claim_record):
    # a measured number printed bare: the word table's bare row, ± 5 %
    ratio = claim_record("COST-05", round(cuda_memory[3] / cuda_memory[2], 3), expected=3.91,
                         tolerance=f"exact: 3.91 ± 5 % {[round(x, 3) for x in COST05_BAND]} (a measured number printed bare)",
                         label=f"peak memory ratio {DOC_NS[2]} -> {DOC_NS[3]}, batch 1 (CUDA)")
    assert COST05_BAND[0] <= ratio <= COST05_BAND[1]  # allocator bytes: the same on every run of one card


COST05_BAND = (3.91 * 0.95, 3.91 * 1.05)


@pytest.mark.gpu
@pytest.mark.claim("COST-05")
def test_on_cuda_doubling_n_multiplies_the_time_by_about_4(cuda_layer, claim_record):
    ms = _timed("COST-05", cuda_layer, claim_record, reads=(2, 3))
    x4 = claim_record("COST-05", round(ms[3] / ms[2], 3), expected=3.69, tolerance=f"exact: {list(TIME_X4)}",
                      label=f"time ratio per sequence, {DOC_NS[2]} -> {DOC_NS[3]} (CUDA)")
    assert TIME_X4[0] <= x4 <= TIME_X4[1]


@pytest.mark.gpu
@pytest.mark.claim("COST-06")
def test_on_cuda_the_projections_grow_linearly(cuda_projections, claim_record):
    ms = _timed("COST-06", cuda_projections, claim_record, reads=range(4))
    p, lo, hi = exponent_ci(DOC_NS, ms)
    claim_record("COST-06", round(p, 3), expected="≈1 (×10 for ×8)", tolerance=f"equivalence: 90 % interval "
                 f"[{lo:.2f}, {hi:.2f}] inside {list(LINEAR)} (TOST)",
                 label="projection time exponent per sequence, 1024 -> 8192 (CUDA)")
    judge("COST-06", within(lo, hi, LINEAR), f"projection exponent {p:.2f} [{lo:.2f}, {hi:.2f}] against {list(LINEAR)}")


@pytest.mark.gpu
@pytest.mark.claim("COST-11")
def test_on_cuda_the_peak_column_has_the_tables_n2_bytes(cuda_card, device, claim_record):
    """The table's seven sizes at batch 1 on CUDA: the n^2 part of the peak is the table's; each row's
    base is the card's (weights, input, the libraries' workspaces), so reported."""
    ns = list(TABLE)
    peaks = [peak_memory(n, "naive", CostConfig(), device) for n in ns]
    claim_record("COST-11", {n: round(p / 2**20, 1) for n, p in zip(ns, peaks)}, expected={n: TABLE[n][3] for n in ns},
                 tolerance="reported: the base (weights, input, workspaces) is the chapter's setting, which it does "
                           "not print", label=f"our peak MiB of one forward on {torch.cuda.get_device_name(device)}")
    c = claim_record("COST-11", round(n2_coefficient(ns, peaks)[2], 3), expected=round(TABLE_N2, 2),
                     tolerance=f"exact: the table's {TABLE_N2:.2f} B per n^2 +- 5 % (a measured number printed bare)",
                     label="our peak, bytes per n^2, the table's seven sizes (CUDA)")
    assert abs(c - TABLE_N2) <= 0.05 * TABLE_N2  # allocator bytes: the same on every run of one card


@pytest.fixture(scope="module")
def cuda_cost(cuda_card, device):
    """The naive layer's peak memory at 16,384 tokens, batch 1, on a card with room for the uncapped
    run: COST-07's wall."""
    if cuda_card < 20 * 2**30:  # the uncapped naive layer at 16,384 tokens needs about 16.5 GiB
        pytest.skip(f"{torch.cuda.get_device_name(device)} has {cuda_card / 2**30:.0f} GiB; the uncapped run needs 20")
    return peak_memory(16384, "naive", CostConfig(), device), cuda_card


@pytest.mark.gpu
@pytest.mark.claim("COST-07")
def test_on_cuda_the_scores_hit_the_memory_wall_where_the_arithmetic_says(cuda_cost, device, claim_record):
    peak, total = cuda_cost
    predicted = 2 * 8 * 16384**2 * 4  # scores and weights live at once
    claim_record("COST-07", peak / 2**30, expected=8,
                 tolerance="exact: within 10 % of 16 GiB: the document's 8 GiB of scores, and as much of weights",
                 label=f"peak GiB at 16,384 tokens on {torch.cuda.get_device_name(device)}")
    assert peak == pytest.approx(predicted, rel=0.10)
    # an 8 GB card: cap this process at 8e9 bytes and the naive layer cannot run; the tiled one can.
    # The caching allocator still holds the uncapped run's blocks: release them before the cap.
    torch.cuda.empty_cache()
    torch.cuda.set_per_process_memory_fraction(8e9 / total, device)
    try:
        with pytest.raises(torch.cuda.OutOfMemoryError):
            measure(16384, "naive", CostConfig(repeats=1, warmup=0), device)
        torch.cuda.empty_cache()
        try:
            measure(16384, "tiled", CostConfig(repeats=1, warmup=0, tile=1024), device)
        except torch.cuda.OutOfMemoryError as e:
            pytest.fail(f"the tiled layer ran out of memory under the 8 GB cap: {str(e).splitlines()[0]}",
                        pytrace=False)
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0, device)
        torch.cuda.empty_cache()


@pytest.mark.fast
@pytest.mark.claim("COST-10")
def test_the_cost_layer_is_the_tables_configuration(claim_record):
    """"Un layer di attention, larghezza 512, 8 heads, batch di uno, float32": the layer the cost
    claims time and measure (experiments.cost), as built; the card is the chapter's own."""
    from experiments.cost import Layer, _layer
    cfg = CostConfig()
    layer, x = _layer(128, cfg, torch.device("cpu"), 0)
    built = claim_record("COST-10", {"width": layer.qkv.in_features, "heads": cfg.n_head, "batch": x.shape[0],
                                     "dtype": str(x.dtype).replace("torch.", "")},
                         expected={"width": 512, "heads": 8, "batch": 1, "dtype": "float32"}, tolerance="exact",
                         label="the cost layer as built (experiments.cost)")
    assert isinstance(layer, Layer) and built == {"width": 512, "heads": 8, "batch": 1, "dtype": "float32"}
    assert all(p.dtype == torch.float32 for p in layer.parameters())
