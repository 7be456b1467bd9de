"""What one attention layer costs, measured: time per part and peak memory, across n.

The layer is the chapter's (width 512, 8 heads, batch 1, float32): projections, then the
naive core that materialises the n x n scores and weights. The same layer can run its core
tiled (online softmax) or through torch's ``scaled_dot_product_attention``.

Times are medians of repeats after warm-up, per part: the projections (q, k, v and W_o) and
the core. Peak memory comes from the allocator: ``torch.profiler`` memory events on CPU,
``torch.cuda.max_memory_allocated`` on CUDA. Nothing here estimates what it can measure.
"""
import statistics
import time
from dataclasses import dataclass, replace

import torch
import torch.nn.functional as F

from model.attention import attend, tiled_attention

CORES = ("naive", "tiled", "sdpa")


@dataclass(frozen=True)
class CostConfig:
    d_model: int = 512
    n_head: int = 8
    batch: int = 1
    causal: bool = True
    repeats: int = 5
    warmup: int = 2
    tile: int = 256


class Layer(torch.nn.Module):
    def __init__(self, cfg: CostConfig):
        super().__init__()
        self.cfg = cfg
        self.qkv = torch.nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = torch.nn.Linear(cfg.d_model, cfg.d_model)

    def project(self, x):
        B, T, d = x.shape
        h = self.cfg.n_head
        return [t.view(B, T, h, d // h).transpose(1, 2) for t in self.qkv(x).split(d, 2)]  # 3 x (B, nh, T, hs)

    def core(self, q, k, v, kind):
        if kind == "naive":
            return attend(q, k, v, causal=self.cfg.causal)
        if kind == "tiled":
            return tiled_attention(q, k, v, causal=self.cfg.causal, tile=self.cfg.tile)
        if kind == "sdpa":
            return F.scaled_dot_product_attention(q, k, v, is_causal=self.cfg.causal)
        raise ValueError(f"unknown core {kind!r}; choose one of {CORES}")

    def out(self, y):
        B, h, T, hs = y.shape
        return self.proj(y.transpose(1, 2).reshape(B, T, h * hs))

    def forward(self, x, kind="naive"):
        return self.out(self.core(*self.project(x), kind))


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def _median_ms(fn, device, repeats, warmup):
    for _ in range(warmup):
        fn()
    _sync(device)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        _sync(device)
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def peak_bytes(fn, device) -> int:
    """Peak bytes allocated while ``fn`` runs, above what was allocated before it."""
    if device.type == "cuda":
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        fn()
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated() - base
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    # each op's own allocations (+) and each free ([memory], -), in time order
    deltas = sorted((e.time_range.start, e.self_cpu_memory_usage) for e in prof.events()
                    if e.self_cpu_memory_usage)
    live = best = 0
    for _, d in deltas:
        live += d
        best = max(best, live)
    return best


def _layer(n: int, cfg: CostConfig, device, seed: int):
    """(the layer, an input of length ``n``), drawn after ``torch.manual_seed(seed)``."""
    torch.manual_seed(seed)
    layer = Layer(cfg).to(device)
    return layer, torch.randn(cfg.batch, n, cfg.d_model, device=device)  # (B, n, d)


@torch.no_grad()
def peak_memory(n: int, kind="naive", cfg=CostConfig(), device="cpu", seed=0) -> int:
    """Peak bytes of one forward of the layer at length ``n`` (no timing: COST-09's measurement)."""
    device = torch.device(device)
    layer, x = _layer(n, cfg, device, seed)
    return peak_bytes(lambda: layer(x, kind), device)


@torch.no_grad()
def measure(n: int, kind="naive", cfg=CostConfig(), device="cpu", seed=0) -> dict:
    device = torch.device(device)
    layer, x = _layer(n, cfg, device, seed)
    q, k, v = layer.project(x)
    y = layer.core(q, k, v, kind)
    reps = dict(device=device, repeats=cfg.repeats, warmup=cfg.warmup)
    return {
        "n": n, "core": kind,
        "ms_total": _median_ms(lambda: layer(x, kind), **reps),
        "ms_projections": _median_ms(lambda: (layer.project(x), layer.out(y)), **reps),
        "ms_core": _median_ms(lambda: layer.core(q, k, v, kind), **reps),
        "peak_bytes": peak_bytes(lambda: layer(x, kind), device),
        "score_bytes": cfg.batch * cfg.n_head * n * n * 4,
    }


PARTS = ("total", "projections")


def _part(layer, x, part: str, kind: str):
    """``fn()`` running one part of the layer on ``x``: the whole layer, or its projections
    (q, k, v and W_o). The projections' W_o reads a random core output: its values cost nothing
    more, and the naive core at a grown batch would need its n x n scores for nothing."""
    if part == "total":
        return lambda: layer(x, kind)
    if part == "projections":
        B, n, d = x.shape
        h = layer.cfg.n_head
        y = torch.randn(B, h, n, d // h, device=x.device)  # (B, nh, n, hs)
        return lambda: (layer.project(x), layer.out(y))
    raise ValueError(f"unknown part {part!r}; choose one of {PARTS}")


@torch.no_grad()
def part_ms(n: int, part: str, kind="naive", cfg=CostConfig(), device="cpu", seed=0) -> float:
    """Median ms of one call of ``part`` at length ``n`` and the config's batch."""
    device = torch.device(device)
    layer, x = _layer(n, cfg, device, seed)
    return _median_ms(_part(layer, x, part, kind), device, cfg.repeats, cfg.warmup)


@torch.no_grad()
def part_peak(n: int, part: str, kind="naive", cfg=CostConfig(), device="cpu", seed=0) -> int:
    """Peak bytes of one call of ``part`` at length ``n``, with the inputs it holds (``x``; for the
    projections also the core output W_o reads, as large as ``x``); the layer's weights, which do
    not grow with the batch, are left out."""
    device = torch.device(device)
    layer, x = _layer(n, cfg, device, seed)
    fn = _part(layer, x, part, kind)
    held = x.numel() * x.element_size() * (2 if part == "projections" else 1)
    return peak_bytes(fn, device) + held


class NoRoom(ValueError):
    """Not one sequence of the part fits the memory given."""


def grown_batch(ms_at, min_ms: float, max_batch: int) -> tuple[int, float]:
    """The smallest power of two ``b <= max_batch`` at which one call takes ``ms_at(b) >= min_ms``,
    and that call's ms; ``max_batch`` (or the largest power of two under it) and its ms when none
    does. A call shorter than ``min_ms`` is partly kernel launches, not arithmetic."""
    if max_batch < 1:
        raise NoRoom(f"max_batch is {max_batch}: not even one sequence fits the memory given")
    b, ms = 1, ms_at(1)
    while ms < min_ms and 2 * b <= max_batch:
        b *= 2
        ms = ms_at(b)
    return b, ms


def scaling(ns, part: str, kind="naive", cfg=CostConfig(), device="cpu", *, min_ms: float,
            memory: int) -> dict:
    """Ms per sequence of ``part`` at each length in ``ns``. At each length the batch grows until one
    call takes ``min_ms`` (``grown_batch``) within ``memory`` bytes, and the call's ms is divided by
    its batch: past its launches a call is linear in its sequences. ``reached``, per length: whether
    the call got to ``min_ms``."""
    rows = {"ns": list(ns), "ms": [], "batch": [], "call_ms": [], "reached": [], "min_ms": min_ms,
            "bytes_per_sequence": []}
    per_seq = {}
    for n in sorted(ns, reverse=True):  # the longest first: a card without room says so at once
        per_seq[n] = part_peak(n, part, kind, replace(cfg, batch=1), device)
        if per_seq[n] > memory:
            raise NoRoom(f"one {part} call at {n} tokens needs {per_seq[n] / 2**30:.1f} GiB; "
                         f"{memory / 2**30:.1f} GiB were given")
    for n in ns:
        b, ms = grown_batch(lambda b: part_ms(n, part, kind, replace(cfg, batch=b), device), min_ms,
                            memory // per_seq[n])
        for k, v in (("ms", ms / b), ("batch", b), ("call_ms", ms), ("reached", ms >= min_ms),
                     ("bytes_per_sequence", per_seq[n])):
            rows[k].append(v)
    return rows


def slope(ns, ys) -> tuple[float, float]:
    """Least-squares log-log slope and its standard error."""
    import numpy as np
    from scipy import stats  # here, not at import: scipy.stats costs a second of every collection
    r = stats.linregress(np.log(ns), np.log(ys))
    return r.slope, r.stderr


def _ratio(now, before) -> str:
    """now / before in the table's 7 columns; '-' with no row before, or one that measured 0
    (a time under the clock's resolution)."""
    return f"{now / before:7.2f}" if before else "      -"


def table(rows) -> str:
    """The chapter's table layout, with our numbers."""
    out = ["  tokens   ms total   ms x4   ms projections   attn matrix MB   peak MB   MB x4"]
    prev = None
    for r in rows:
        mb = r["peak_bytes"] / 2**20
        x4t = _ratio(r["ms_total"], prev and prev["ms_total"])
        x4m = _ratio(r["peak_bytes"], prev and prev["peak_bytes"])
        out.append(f"{r['n']:8d} {r['ms_total']:10.3f} {x4t} {r['ms_projections']:16.3f} "
                   f"{r['score_bytes'] / 2**20:16.1f} {mb:9.1f} {x4m}")
        prev = r
    return "\n".join(out)
