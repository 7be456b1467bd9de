"""experiments/cost.py as components: the harness behind the cost-of-attention claims (COST-04..09).

The slow tier reads its numbers (claims/test_cost.py); here each piece is checked on sizes small
enough to compute the expected value independently: the layer against hand-written attention in
float64 with the same weights, _median_ms against a fake clock, peak_bytes' bookkeeping against
hand-made allocator events, slope against exact power laws and closed-form least squares, and
table() against its rows written out by hand.

Not reachable here: the CUDA branches (``torch.cuda.synchronize``, ``memory_allocated``,
``reset_peak_memory_stats``, ``max_memory_allocated``). Only the dispatch is checked: a CUDA device
takes them (on a CPU build torch refuses the first call). A real ``torch.profiler`` run costs
seconds on its first use in a process (it imports torch._inductor), so the fast tier feeds
peak_bytes hand-made events in the shape the profiler gives and checks the profiler is asked for
memory events.
"""
import dataclasses
import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity

from experiments import cost
from experiments.cost import CORES, CostConfig, Layer, _median_ms, _sync, measure, peak_bytes, slope, table

pytestmark = pytest.mark.fast

f64 = torch.float64
CPU = torch.device("cpu")
# a small layer whose sizes are all different: batch 2, 5 tokens, 3 heads of 4 (T != h != hs),
# and a tile of 2, unlike tiled_attention's own default (128) that a dropped tile= would fall back to
SMALL = CostConfig(d_model=12, n_head=3, batch=2, repeats=3, warmup=1, tile=2)


def _attention64(q, k, v, causal):
    """softmax(q k^T / sqrt(hs) + mask) v per batch and head, written out in float64."""
    q, k, v = q.double(), k.double(), v.double()
    T, hs = q.shape[-2], q.shape[-1]
    s = torch.einsum("bhid,bhjd->bhij", q, k) / math.sqrt(hs)
    if causal:
        later = torch.arange(T)[None, :] > torch.arange(T)[:, None]  # key j after query i
        s = s.masked_fill(later, -math.inf)
    e = torch.exp(s - s.amax(-1, keepdim=True))
    return torch.einsum("bhij,bhjd->bhid", e / e.sum(-1, keepdim=True), v)


def _heads(t, h):
    """(B, T, d) -> (B, h, T, d/h): head i reads columns i*hs .. (i+1)*hs - 1."""
    hs = t.shape[-1] // h
    return torch.stack([t[..., i * hs:(i + 1) * hs] for i in range(h)], dim=1)


def _hand_layer(Wqkv, bqkv, Wo, bo, x, h, causal):
    """The layer from its four parameters: (q, k, v) per head, their attention, the output."""
    d = x.shape[-1]
    x, Wqkv, bqkv, Wo, bo = (t.detach().double() for t in (x, Wqkv, bqkv, Wo, bo))
    qkv = x @ Wqkv.T + bqkv  # q, k, v side by side: columns 0..d-1, d..2d-1, 2d..3d-1
    q, k, v = (_heads(qkv[..., j * d:(j + 1) * d], h) for j in range(3))
    y = _attention64(q, k, v, causal)
    out = torch.cat([y[:, i] for i in range(h)], dim=-1) @ Wo.T + bo  # heads side by side, then W_o
    return (q, k, v), y, out


def _of(layer, x, causal):
    return _hand_layer(layer.qkv.weight, layer.qkv.bias, layer.proj.weight, layer.proj.bias, x,
                       layer.cfg.n_head, causal)


def _layer64(cfg, seed=0):
    torch.manual_seed(seed)
    return Layer(cfg).double()


def _x(cfg, T, seed=1, dtype=f64):
    return torch.randn(cfg.batch, T, cfg.d_model, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def _close(a, b, atol=1e-12):
    # by hand: torch.testing.assert_close costs most of a second on its first call in a process
    assert a.shape == b.shape, (a.shape, b.shape)
    gap = (a.double() - b.double()).abs().max().item()
    assert gap <= atol, f"largest difference {gap:.3g} > {atol:.3g}"


# ---- CostConfig, CORES ------------------------------------------------------------------------------

def test_the_default_configuration_is_the_chapters_layer():
    """Width 512, 8 heads, batch 1, causal, 5 repeats after 2 warm-ups, tiles of 256; frozen,
    so a configuration used as a cache key cannot change under it."""
    got = [(f.name, f.default) for f in dataclasses.fields(CostConfig)]
    assert got == [("d_model", 512), ("n_head", 8), ("batch", 1), ("causal", True), ("repeats", 5),
                   ("warmup", 2), ("tile", 256)]
    assert CostConfig().causal is True  # not merely == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        CostConfig().n_head = 4
    assert CORES == ("naive", "tiled", "sdpa")


# ---- Layer -------------------------------------------------------------------------------------------

def test_the_layer_holds_one_fused_qkv_projection_and_one_output_projection():
    torch.manual_seed(0)
    layer = Layer(SMALL)
    assert layer.cfg is SMALL
    shapes = {name: tuple(p.shape) for name, p in layer.named_parameters()}
    assert shapes == {"qkv.weight": (36, 12), "qkv.bias": (36,), "proj.weight": (12, 12), "proj.bias": (12,)}


def test_project_splits_the_fused_projection_into_q_k_v_per_head():
    """Columns 0..d-1 of x W^T + b are q, then k, then v; each (B, h, T, hs), head i on its own
    hs columns. Batch 2: a split along the wrong dimension cannot pass."""
    layer = _layer64(SMALL)
    x = _x(SMALL, 5)
    got = layer.project(x)
    assert isinstance(got, list) and len(got) == 3
    for g, e in zip(got, _of(layer, x, True)[0]):
        _close(g, e)
        assert g.shape == (2, 3, 5, 4)
    # and against torch's own linear, as one more independent route to the same q
    _close(got[0], F.linear(x, layer.qkv.weight, layer.qkv.bias)[..., :12].view(2, 5, 3, 4).transpose(1, 2))


def test_out_concatenates_the_heads_and_applies_W_o():
    layer = _layer64(SMALL)
    y = torch.randn(2, 3, 5, 4, generator=torch.Generator().manual_seed(2), dtype=f64)  # (B, h, T, hs)
    want = torch.cat([y[:, 0], y[:, 1], y[:, 2]], dim=-1) @ layer.proj.weight.detach().T + layer.proj.bias.detach()
    _close(layer.out(y), want)


class _Spies:
    """Wrap the three cores where cost.py looks them up: each call recorded (which, q k v, kwargs)."""

    def __init__(self, monkeypatch):
        self.calls = []
        for name, owner, attr in (("naive", cost, "attend"), ("tiled", cost, "tiled_attention"),
                                  ("sdpa", cost.F, "scaled_dot_product_attention")):
            monkeypatch.setattr(owner, attr, self._wrap(name, getattr(owner, attr)))

    def _wrap(self, name, fn):
        def spy(*args, **kwargs):
            self.calls.append((name, args, kwargs))
            return fn(*args, **kwargs)
        return spy


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("kind", CORES)
def test_each_core_is_softmax_attention_with_the_configurations_mask_and_tile(kind, causal, monkeypatch):
    """All three cores compute the same attention (checked against the hand-written one, causal
    or not as configured), each by its own function: naive -> attend, tiled -> tiled_attention
    with the configured tile, sdpa -> torch's scaled_dot_product_attention."""
    cfg = dataclasses.replace(SMALL, causal=causal)
    layer = _layer64(cfg)
    (q, k, v), want, _ = _of(layer, _x(cfg, 5), causal)
    spies = _Spies(monkeypatch)
    got = layer.core(q, k, v, kind)
    _close(got, want, atol=1e-10)
    expected_kwargs = {"naive": {"causal": causal}, "tiled": {"causal": causal, "tile": 2},
                       "sdpa": {"is_causal": causal}}[kind]
    [(name, args, kwargs)] = spies.calls
    assert name == kind and kwargs == expected_kwargs
    assert all(kwargs[key] is causal for key in kwargs if "causal" in key)
    assert len(args) == 3 and all(a is b for a, b in zip(args, (q, k, v)))


def test_an_unknown_core_is_refused_with_the_choices():
    layer = _layer64(SMALL)
    q = k = v = torch.zeros(2, 3, 5, 4, dtype=f64)
    with pytest.raises(ValueError, match=r"^unknown core 'flash'; choose one of \('naive', 'tiled', 'sdpa'\)$"):
        layer.core(q, k, v, "flash")


@pytest.mark.parametrize("kind", [None, *CORES])
def test_forward_is_the_whole_layer_and_defaults_to_the_naive_core(kind, monkeypatch):
    layer = _layer64(SMALL)
    x = _x(SMALL, 5)
    spies = _Spies(monkeypatch)
    got = layer(x) if kind is None else layer(x, kind)
    _close(got, _of(layer, x, True)[2], atol=1e-10)
    assert [c[0] for c in spies.calls] == [kind or "naive"]


# ---- _sync and _median_ms ----------------------------------------------------------------------------

def test_sync_is_a_no_op_on_the_cpu():
    assert _sync(CPU) is None  # a CPU build would raise if it reached torch.cuda


@pytest.mark.skipif(torch.cuda.is_available(), reason="with CUDA present, torch.cuda would succeed")
def test_a_cuda_device_is_sent_to_torch_cuda():
    """The CUDA branches themselves cannot run here; what can be seen is that a CUDA device takes
    them: torch's CPU build refuses the first torch.cuda call, before the measured function runs."""
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        _sync(torch.device("cuda"))
    ran = []
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        peak_bytes(lambda: ran.append(1), torch.device("cuda"))
    assert ran == []  # not the profiler path, which would have run it


class _Clock:
    """A fake time.perf_counter that moves only when the timed function runs."""

    def __init__(self, durations, start=1000.0):
        self.now, self.durations, self.calls = start, list(durations), 0

    def perf_counter(self):
        return self.now

    def fn(self):
        self.calls += 1
        self.now += self.durations.pop(0)


@pytest.mark.parametrize("warmup, durations, median_ms", [
    (2, [50.0, 70.0, 0.004, 0.001, 0.010, 0.002], 3.0),  # even: mean of the middle two (mean: 4.25)
    (0, [0.005, 0.001, 0.002], 2.0),                     # odd: the middle one (mean: 2.67)
])
def test_median_ms_is_the_median_of_the_timed_calls_after_warmup_in_milliseconds(warmup, durations, median_ms,
                                                                                 monkeypatch):
    """Warm-up calls run first and are not timed (theirs last 50 s here); then each repeat is timed
    on its own, clock after minus clock before (the clock does not start at 0), times 1000."""
    clock = _Clock(durations)
    monkeypatch.setattr(cost, "time", SimpleNamespace(perf_counter=clock.perf_counter))
    repeats = len(durations) - warmup
    got = _median_ms(clock.fn, CPU, repeats=repeats, warmup=warmup)
    assert got == pytest.approx(median_ms, rel=1e-9)
    assert clock.calls == warmup + repeats and not clock.durations


# ---- peak_bytes (CPU path) -------------------------------------------------------------------------

class _FakeProfile:
    """Stands in for torch.profiler.profile: records how it was asked, and hands back events with
    the two fields peak_bytes reads (the start of each op, the bytes it allocated or, as a
    negative number, freed)."""

    def __init__(self, events):
        self.asked, self.active = [], False
        self._events = [SimpleNamespace(time_range=SimpleNamespace(start=t), self_cpu_memory_usage=b)
                        for t, b in events]

    def __call__(self, *args, **kwargs):
        self.asked.append((args, kwargs))
        return self

    def __enter__(self):
        self.active = True
        return self

    def __exit__(self, *exc):
        self.active = False
        return False

    def events(self):
        assert not self.active  # read after the profiler has stopped
        return self._events


def _peak(events, monkeypatch):
    fake = _FakeProfile(events)
    monkeypatch.setattr(torch.profiler, "profile", fake)
    seen = []
    got = peak_bytes(lambda: seen.append(fake.active), CPU)
    assert seen == [True]  # fn ran once, inside the profiler
    assert fake.asked == [((), {"activities": [ProfilerActivity.CPU], "profile_memory": True})]
    return got


@pytest.mark.parametrize("events, peak", [
    # listed out of time order, ops that allocate nothing among them: in time order the live bytes
    # are 100, 400, 300, 0, 50, 0, so the peak is 400 (in the listed order it would be 100)
    ([(5, -300), (1, 100), (3, 300), (2, 0), (4, -100), (6, 50), (7, -50)], 400),
    # two allocations in sequence, each freed before the next: the larger one, not the sum
    ([(1, 1 << 20), (2, -(1 << 20)), (3, 2 << 20), (4, -(2 << 20))], 2 << 20),
    # both alive at once: the sum
    ([(1, 1 << 20), (2, 2 << 20), (3, -(1 << 20)), (4, -(2 << 20))], 3 << 20),
    # a free of something allocated before fn ran: it never takes the peak below 0 or counts
    ([(1, -500), (2, 200), (3, -200)], 0),
    ([], 0),
])
def test_peak_bytes_is_the_highest_running_total_of_allocations_in_time_order(events, peak, monkeypatch):
    got = _peak(events, monkeypatch)
    assert got == peak and isinstance(got, int)


# ---- measure -----------------------------------------------------------------------------------------

class _Recorder:
    """Stands in for _median_ms and peak_bytes: calls each measured function once, keeps what it
    returned and how it was asked, and answers a distinct number per call."""

    def __init__(self, monkeypatch):
        self.timed, self.peaks = [], []
        monkeypatch.setattr(cost, "_median_ms", self.median_ms)
        monkeypatch.setattr(cost, "peak_bytes", self.peak_bytes)

    def median_ms(self, fn, device, repeats, warmup):
        answer = 10.0 + len(self.timed)
        self.timed.append(dict(answer=answer, out=fn(), device=device, repeats=repeats, warmup=warmup))
        return answer

    def peak_bytes(self, fn, device):
        answer = 1000 + len(self.peaks)
        self.peaks.append(dict(answer=answer, out=fn(), device=device))
        return answer


def _measured(rec, result, key):
    [call] = [c for c in rec.timed if c["answer"] == result[key]]
    return call


def test_measure_times_the_layer_its_projections_and_its_core_and_takes_the_peak_of_the_layer(monkeypatch):
    """What each of measure's numbers is a number of, on 3 tokens: ms_total times the whole layer,
    ms_projections the q/k/v and W_o projections, ms_core the core alone, peak_bytes the whole
    layer; all on the configured repeats and warm-up, without autograd, on a layer and input
    drawn from the seed (layer first, then x); score_bytes is batch x heads x n x n x 4 bytes.
    The tiled core: its numbers equal the naive one's, so only the spies tell the kind was passed on."""
    kind = "tiled"
    spies = _Spies(monkeypatch)
    rec = _Recorder(monkeypatch)
    cfg = SMALL
    result = measure(3, kind, cfg, "cpu", seed=7)
    assert set(result) == {"n", "core", "ms_total", "ms_projections", "ms_core", "peak_bytes", "score_bytes"}
    assert result["n"] == 3 and result["core"] == kind
    assert result["score_bytes"] == 2 * 3 * 3 * 3 * 4 and isinstance(result["score_bytes"], int)

    torch.manual_seed(7)
    qkv, proj = torch.nn.Linear(12, 36), torch.nn.Linear(12, 12)  # Layer's parameters, in its order
    x = torch.randn(2, 3, 12)
    (q, k, v), y, out = _hand_layer(qkv.weight, qkv.bias, proj.weight, proj.bias, x, 3, True)

    assert len(rec.timed) == 3 and len(rec.peaks) == 1
    for call in rec.timed:
        assert call["device"] == CPU and isinstance(call["device"], torch.device)
        assert (call["repeats"], call["warmup"]) == (3, 1)
    total = _measured(rec, result, "ms_total")["out"]
    _close(total, out, atol=1e-5)
    (pq, pk, pv), py = _measured(rec, result, "ms_projections")["out"]
    for g, e in zip((pq, pk, pv), (q, k, v)):
        _close(g, e, atol=1e-5)
    _close(py, out, atol=1e-5)  # W_o applied to the core's output
    _close(_measured(rec, result, "ms_core")["out"], y, atol=1e-5)
    [peak] = rec.peaks
    assert result["peak_bytes"] == peak["answer"] and peak["device"] == CPU
    _close(peak["out"], out, atol=1e-5)
    assert not any(t.requires_grad for t in (total, pq, py, peak["out"]))  # measured under no_grad
    # the core ran for y, then inside the timed layer, the timed core and the measured layer
    assert [c[0] for c in spies.calls] == ["tiled"] * 4


def test_measure_defaults_to_the_naive_core_on_the_cpu_with_seed_0(monkeypatch):
    rec = _Recorder(monkeypatch)
    spies = _Spies(monkeypatch)
    result = measure(4, cfg=SMALL)
    assert result["core"] == "naive" and result["n"] == 4 and result["score_bytes"] == 2 * 3 * 16 * 4
    assert {c[0] for c in spies.calls} == {"naive"}
    torch.manual_seed(0)
    qkv, proj = torch.nn.Linear(12, 36), torch.nn.Linear(12, 12)
    x = torch.randn(2, 4, 12)
    _close(rec.peaks[0]["out"], _hand_layer(qkv.weight, qkv.bias, proj.weight, proj.bias, x, 3, True)[2],
           atol=1e-5)
    assert rec.peaks[0]["device"] == CPU


# ---- slope -------------------------------------------------------------------------------------------

def test_slope_of_an_exact_power_law_is_its_exponent_with_no_error():
    ns = [3, 6, 12, 24, 48]
    m, se = slope(ns, [2.5 * n**1.75 for n in ns])
    assert m == pytest.approx(1.75, abs=1e-12) and abs(se) < 1e-6  # rounding noise only


def test_slope_is_the_least_squares_log_log_slope_and_its_standard_error():
    ns = np.array([128, 256, 512, 1024])
    ys = ns**2.0 * np.array([1.1, 0.9, 1.05, 0.97])
    x, y = np.log(ns), np.log(ys)
    sxx = ((x - x.mean()) ** 2).sum()
    b = ((x - x.mean()) * (y - y.mean())).sum() / sxx
    resid = y - y.mean() - b * (x - x.mean())
    se = math.sqrt((resid**2).sum() / (len(ns) - 2) / sxx)
    got = slope(list(ns), list(ys))
    assert len(got) == 2
    assert got[0] == pytest.approx(b, rel=1e-12) and got[1] == pytest.approx(se, rel=1e-9)
    assert se > 0.01  # the noise is visible: the second number is not a zero by accident


# ---- table -------------------------------------------------------------------------------------------

HEADER = "  tokens   ms total   ms x4   ms projections   attn matrix MB   peak MB   MB x4"
MiB = 2**20
ROWS = [  # ms x4: -, 2.50, 4.00; MB x4: -, 3.20, 2.50 (to the row above, never the first row)
    dict(n=128, core="naive", ms_total=2.0, ms_projections=1.25, ms_core=0.5, peak_bytes=10 * MiB,
         score_bytes=MiB // 2),
    dict(n=256, core="naive", ms_total=5.0, ms_projections=2.5, ms_core=2.0, peak_bytes=32 * MiB,
         score_bytes=2 * MiB),
    dict(n=4096, core="naive", ms_total=20.0, ms_projections=11.75, ms_core=8.0, peak_bytes=80 * MiB,
         score_bytes=512 * MiB),
]
LINES = [
    HEADER,
    "     128      2.000       -            1.250              0.5      10.0       -",
    "     256      5.000    2.50            2.500              2.0      32.0    3.20",
    "    4096     20.000    4.00           11.750            512.0      80.0    2.50",
]


def test_table_prints_the_chapters_columns_with_ratios_to_the_row_above():
    """Written out by hand: tokens; ms total (3 dp); its ratio to the row above (2 dp, "-" on the
    first row); ms projections; the attention matrix and the peak in MiB (1 dp); the peak's ratio.
    ms_core is not a column."""
    assert table(ROWS) == "\n".join(LINES)
    assert table(ROWS[:1]) == "\n".join(LINES[:2])
    assert table([]) == HEADER


def test_a_row_after_one_that_measured_zero_prints_no_ratio():
    """A time under the clock's resolution reads 0 ms: the next row's ratio to it is '-', not a
    ZeroDivisionError that loses the whole table."""
    zero = [dict(ROWS[0], ms_total=0.0, peak_bytes=0), ROWS[1]]
    assert table(zero).splitlines()[2] == "     256      5.000       -            2.500              2.0      32.0       -"


def test_table_values_end_under_their_headers():
    """Every value is right-aligned to the last letter of its column's header."""
    names = ["tokens", "ms total", "ms x4", "ms projections", "attn matrix MB", "peak MB", "MB x4"]
    header_ends = [HEADER.index(name) + len(name) for name in names]
    assert header_ends[-1] == len(HEADER)
    for line in table(ROWS).splitlines()[1:]:
        value_ends = [i + 1 for i, c in enumerate(line) if c != " " and (i + 1 == len(line) or line[i + 1] == " ")]
        assert value_ends == header_ends, line


# ---- a batch grown until a call is arithmetic, not launches (the gpu tier's timings) ----------

@pytest.mark.parametrize("ms_per_seq, min_ms, max_batch, expected", [
    (3.0, 2.0, 64, (1, 3.0)),       # long enough at batch 1
    (0.3, 2.0, 64, (8, 2.4)),       # 0.3, 0.6, 1.2, 2.4: the first power of two at 2 ms
    (0.3, 2.0, 5, (4, 1.2)),        # capped: the largest power of two under the memory's batch
    (0.3, 2.0, 1, (1, 0.3)),        # one sequence fits: it is what gets timed
])
def test_grown_batch_is_the_smallest_power_of_two_whose_call_takes_min_ms(ms_per_seq, min_ms, max_batch, expected):
    asked = []

    def ms_at(b):
        asked.append(b)
        return ms_per_seq * b
    b, ms = cost.grown_batch(ms_at, min_ms, max_batch)
    assert (b, round(ms, 9)) == expected
    assert asked == [2**i for i in range(len(asked))] and asked[-1] == b  # no batch timed twice, none skipped


def test_a_memory_that_holds_no_sequence_is_refused_in_one_line():
    with pytest.raises(cost.NoRoom, match="not even one sequence fits"):
        cost.grown_batch(lambda b: 1.0, 2.0, 0)


def test_an_unknown_part_is_refused_with_the_choices():
    layer, x = cost._layer(4, SMALL, CPU, 0)
    with pytest.raises(ValueError, match=r"unknown part 'core'.*\('total', 'projections'\)"):
        cost._part(layer, x, "core", "naive")


def test_the_projections_part_runs_q_k_v_and_W_o_and_no_core(monkeypatch):
    layer, x = cost._layer(5, SMALL, CPU, 0)
    monkeypatch.setattr(Layer, "core", lambda *a: pytest.fail("the projections' time includes no core"))
    out = cost._part(layer, x, "projections", "naive")()
    q, k, v = out[0]
    assert q.shape == (SMALL.batch, SMALL.n_head, 5, SMALL.d_model // SMALL.n_head) and out[1].shape == x.shape
    torch.testing.assert_close(out[0][0], layer.project(x)[0])


def test_scaling_grows_the_batch_at_each_length_and_gives_ms_per_sequence(monkeypatch):
    calls = []

    def part_ms(n, part, kind, cfg, device):
        calls.append((n, cfg.batch))
        return 0.001 * n * cfg.batch  # ms: linear in tokens and in sequences
    monkeypatch.setattr(cost, "part_ms", part_ms)
    monkeypatch.setattr(cost, "part_peak", lambda n, part, kind, cfg, device: 1000 * n)  # bytes per sequence
    rows = cost.scaling((100, 200, 400), "projections", cfg=SMALL, min_ms=0.35, memory=400_000 * 3)
    assert rows["batch"] == [4, 2, 1] and rows["reached"] == [True, True, True]  # 0.4, 0.4, 0.4 ms a call
    assert rows["ms"] == pytest.approx([0.1, 0.2, 0.4]) and rows["call_ms"] == pytest.approx([0.4, 0.4, 0.4])
    assert rows["bytes_per_sequence"] == [100_000, 200_000, 400_000]
    assert calls == [(100, 1), (100, 2), (100, 4), (200, 1), (200, 2), (400, 1)]
    capped = cost.scaling((100, 200, 400), "projections", cfg=SMALL, min_ms=0.45, memory=400_000)
    assert capped["batch"] == [4, 2, 1] and capped["reached"] == [False, False, False]  # 0.4 ms: the memory's most
    with pytest.raises(cost.NoRoom, match=r"one projections call at 400 tokens needs 0.0 GiB; 0.0 GiB were given"):
        cost.scaling((100, 400), "projections", cfg=SMALL, min_ms=0.35, memory=399_999)
    timed = []
    monkeypatch.setattr(cost, "part_ms", lambda *a: timed.append(a) or 1.0)
    with pytest.raises(cost.NoRoom):
        cost.scaling((100, 200, 400), "projections", cfg=SMALL, min_ms=0.35, memory=399_999)
    assert timed == []  # the longest length's room is known before any timing


def test_the_projections_peak_counts_the_core_output_they_read(monkeypatch):
    monkeypatch.setattr(cost, "peak_bytes", lambda fn, device: 0)
    x_bytes = SMALL.batch * 5 * SMALL.d_model * 4
    assert cost.part_peak(5, "total", cfg=SMALL) == x_bytes
    assert cost.part_peak(5, "projections", cfg=SMALL) == 2 * x_bytes  # x, and y as large


def test_scaling_on_the_cpu_measures_real_calls():
    rows = cost.scaling((8, 16), "total", cfg=SMALL, min_ms=0.0, memory=2**30)
    assert rows["batch"] == [1, 1] and rows["reached"] == [True, True] and all(ms > 0 for ms in rows["ms"])
    assert all(b > 0 for b in rows["bytes_per_sequence"])


# ---- the gpu tier's time rules against the chapter's own laptop-GPU table ---------------------

def test_the_chapters_own_timings_pass_the_gpu_tiers_rules():
    """A rule that refuted the chapter's own measurement would judge the rule, not the claim:
    COST-04's time exponent and COST-06's projection exponent, through the gpu tier's rules, from
    the chapter's table (COST-05's band is the chapter's own last ratio, so it cannot refute it)."""
    from claims.test_cost import DOC_NS, LINEAR, TABLE, TIME_BAND, exponent_ci
    from claimcheck.rules import inside
    t, t_lo, t_hi = exponent_ci(DOC_NS, [TABLE[n][0] for n in DOC_NS])
    p, p_lo, p_hi = exponent_ci(DOC_NS, [TABLE[n][1] for n in DOC_NS])
    assert (round(t, 2), round(t_lo, 2), round(t_hi, 2)) == (1.91, 1.73, 2.10) and inside(t_lo, t_hi, TIME_BAND)
    assert (round(p, 2), round(p_lo, 2), round(p_hi, 2)) == (1.10, 0.94, 1.26) and inside(p_lo, p_hi, LINEAR)
