"""The Polish lab's experiment: train the tiny GPT on an excerpt, read its curves, count n-grams.

Protocol, as the lab states it: train with Adam on batches of 8 random 16-character windows;
read train, validation and test perplexity at the slider's checkpoints 100 … 6,400; choose the
step on validation and look at test once, at that step (``best_val_test``).

Perplexity is scored on the same characters for every model, network or counter: each
character from the third on (so a 3-gram has its two characters of context), predicted from
up to 16 characters before it, all inside the same split.

Many independent runs (excerpts x seeds) train at once, as one ``model.stack.Stack`` through
the one training loop (``experiments.train.fit``): each model reads its own excerpt.
"""
import itertools
import math
from dataclasses import dataclass, replace

import numpy as np
import torch
import torch.nn.functional as F

from experiments.configs import tiny_lab_config
from model.stack import Stack
from .ngram import NGram
from .polish_text import ALPHABET, Excerpt
from .train import fit

# The slider points the chapter names: 100 (PL L7), 300 (L9), 400 (L21), 1600, 3200, 6400 (L23);
# 200 and 800 fill the doublings (docs/reference/setup-audit.md §6).
CHECKPOINTS = (100, 200, 300, 400, 800, 1600, 3200, 6400)
FIRST_TARGET = 2  # score characters 2.. so that every model has its context
K_GRID = (0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0)  # add-k values tried on validation


@dataclass(frozen=True)
class LabConfig:
    steps: int = 6400
    batch: int = 8
    lr: float = 3e-3
    checkpoints: tuple = CHECKPOINTS
    positions: bool = True
    dtype: str = "float32"

    def model(self):
        return tiny_lab_config(positions="learned" if self.positions else "none")


# ---- data ------------------------------------------------------------------------------------

def batch_starts(n_chars: int, seed: int, steps: int, batch: int = 8, T: int = 16) -> np.ndarray:
    """(steps, batch) window starts: the same batches for every implementation of one run."""
    return np.random.default_rng(seed).integers(0, n_chars - T, (steps, batch))


def batches(ids: np.ndarray, seed: int, steps: int, batch: int = 8, T: int = 16):
    """(batch, T+1) windows, step after step."""
    for starts in batch_starts(len(ids), seed, steps, batch, T):
        yield ids[starts[:, None] + np.arange(T + 1)]


def eval_windows(ids: np.ndarray, T: int = 16):
    """Windows and (window, position) pairs that score characters FIRST_TARGET.. of ``ids``.

    Window 0 scores characters 2..T from positions 1..T-1; window j >= 1 is ids[j:j+T] and
    scores character j+T from its last position, with the full 16 characters of context.
    """
    n = len(ids)
    win = np.lib.stride_tricks.sliding_window_view(ids[:-1], T)  # (n-T, T)
    w_idx = np.r_[np.zeros(T - FIRST_TARGET + 1, dtype=np.int64), np.arange(1, n - T)]
    pos = np.r_[np.arange(FIRST_TARGET - 1, T), np.full(n - T - 1, T - 1)]
    targets = ids[FIRST_TARGET:]
    assert len(w_idx) == len(targets) == n - FIRST_TARGET
    return win, w_idx, pos, targets


# ---- counting baselines ---------------------------------------------------------------------

SMOOTHINGS = ("add-k", "interpolated")
MIX_STEP = 0.1  # interpolation weights tried on validation: every point of a 0.1 grid on the simplex


def ngram_scores(ex: Excerpt, n: int, smoothing: str = "add-k") -> dict:
    """An n-gram fitted on the training part: add-k, k chosen on validation from K_GRID; or
    ``smoothing="interpolated"``: a mix of the add-k 1..n-grams (each its own k, chosen so),
    the mix's weights chosen on validation too. Scored on the network's characters."""
    if smoothing not in SMOOTHINGS:
        raise ValueError(f"unknown smoothing {smoothing!r}; choose one of {', '.join(SMOOTHINGS)}")
    tr, va, te = (ex.ids(p) for p in ("train", "val", "test"))

    def probs(model, ids):
        return np.exp(model.logprob(ids)[FIRST_TARGET - (model.n - 1):])  # the same characters as the network

    def add_k(order):
        fits = {k: NGram(order, len(ALPHABET), k).fit(tr) for k in K_GRID}
        return fits[min(K_GRID, key=lambda k: -np.log(probs(fits[k], va)).mean())]

    models = [add_k(n)] if smoothing == "add-k" else [add_k(j) for j in range(1, n + 1)]
    steps = round(1 / MIX_STEP)
    mixes = [np.array(w) / steps for w in itertools.product(range(steps + 1), repeat=len(models))
             if sum(w) == steps]

    def ppl(w, ids):
        return math.exp(-np.log(sum(wi * probs(m, ids) for wi, m in zip(w, models) if wi)).mean())

    w = min(mixes, key=lambda w: ppl(w, va))
    out = {"n": n, "k": models[-1].k, "train": ppl(w, tr), "val": ppl(w, va), "test": ppl(w, te)}
    if smoothing == "interpolated":
        out.update(k=[m.k for m in models], weights=w.tolist())
    return out


# ---- the protocol ------------------------------------------------------------------------------

def best_val_test(val_by_step: dict, test_at) -> tuple[int, float]:
    """Choose the step on validation, then look at test once, at that step."""
    step = min(val_by_step, key=val_by_step.get)
    return step, test_at(step)


# ---- many runs at once -------------------------------------------------------------------------

@torch.no_grad()
def _perplexities(stack: Stack, ids: torch.Tensor, chunk: int = 256) -> list[float]:
    """ids (M, n): each model's own text -> each model's perplexity (protocol above)."""
    win, w_idx, pos, targets = eval_windows(np.arange(ids.shape[1]))  # index arrays, shared
    nll = torch.zeros(ids.shape[0], dtype=torch.float64, device=ids.device)
    on = lambda a: torch.from_numpy(a).to(ids.device)  # noqa: E731
    for lo in range(0, len(w_idx), chunk):
        sl = slice(lo, lo + chunk)
        wins = np.unique(w_idx[sl])
        x = ids[:, on(win[wins])]  # (M, w, T)
        logp = F.log_softmax(stack.logits(x).double(), -1)  # (M, w, T, V)
        row = on(np.searchsorted(wins, w_idx[sl]))
        tgt = ids[:, on(targets[sl])]  # (M, t)
        picked = logp[:, row, on(pos[sl])]  # (M, t, V)
        nll -= picked.gather(-1, tgt[..., None])[..., 0].sum(1)
    return torch.exp(nll / len(w_idx)).tolist()


def train_runs(cfg: LabConfig, runs: list[tuple[Excerpt, int]], log=None, keep_loss=False,
               device="cpu", progress=None) -> dict:
    """Train one model per (excerpt, seed), all at once; curves of train/val/test perplexity.

    Returns {"runs": [(excerpt, seed)], "checkpoints": [...], "train"/"val"/"test": (M, C) lists,
    and with ``keep_loss`` "loss": (M, steps) training losses}. ``progress(step)``: as in
    ``experiments.train.fit``.
    """
    stack = Stack(cfg.model(), [s for _, s in runs], device=device, dtype=getattr(torch, cfg.dtype))
    opt = torch.optim.Adam(stack.parameters(), lr=cfg.lr)
    parts = {p: torch.from_numpy(np.stack([ex.ids(p) for ex, _ in runs])).to(device)
             for p in ("train", "val", "test")}
    tr = parts["train"]
    T = cfg.model().block_size
    starts = torch.from_numpy(np.stack([batch_starts(tr.shape[1], s, cfg.steps, cfg.batch, T)
                                        for _, s in runs], axis=1)).to(device)  # (steps, M, batch)
    offs = torch.arange(T + 1, device=device)
    rows = torch.arange(len(runs), device=device)[:, None, None]

    def windows(step):
        w = tr[rows, starts[step - 1][..., None] + offs]  # (M, batch, T+1): each model's own text
        return w[..., :-1], w[..., 1:]

    curves = {k: [] for k in parts}
    losses = []  # kept only when asked: 6,400 steps x M models is a lot of JSON

    def record(step, loss):
        if keep_loss:
            losses.append(loss.double().tolist())
        if step in cfg.checkpoints:
            for k, ids in parts.items():
                curves[k].append(_perplexities(stack, ids))
            if log:
                log(f"tiny lab step {step}: val {np.round(curves['val'][-1], 2).tolist()}")

    fit(stack, opt, windows, cfg.steps, hooks=(record,), progress=progress)
    return {"runs": [[ex.index, s] for ex, s in runs], "checkpoints": list(cfg.checkpoints),
            **{k: np.array(v).T.tolist() for k, v in curves.items()},
            **({"loss": np.array(losses).T.tolist()} if keep_loss else {})}


def with_positions(cfg: LabConfig, positions: bool) -> LabConfig:
    return replace(cfg, positions=positions)
