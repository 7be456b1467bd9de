"""Training: AdamW with an optional linear warmup, perplexity on the held-out split.

Device-agnostic (pass a device), deterministic on CPU for a given seed, quiet unless asked
to log. A run returns a plain dict (its record) that the run cache stores as JSON.
"""
import math
import time
from dataclasses import asdict, dataclass

import numpy as np
import torch

from model.gpt import GPT, GPTConfig
from model.attention_maps import attention_summary


@dataclass(frozen=True)
class TrainConfig:
    steps: int
    batch_size: int
    lr: float
    warmup: int = 0                 # linear warmup over this many steps, then constant
    weight_decay: float = 0.01      # torch's AdamW default
    betas: tuple[float, float] = (0.9, 0.999)
    eval_every: int = 0             # 0: evaluate at the end only
    eval_windows: int = 0           # windows per evaluation; 0: the whole held-out split
    log_every: int = 0              # 0: silent
    eval_lengths: tuple[int, ...] = ()  # also score the held-out split in windows of these lengths
    attention_stats: bool = False   # record layer 1's score std, entropy and saturation per trace
    trace_every: int = 0            # cheap trace: mean training loss (and attention) every n steps

    def predictions(self, block_size: int) -> int:
        """Next-token predictions made in training: steps x batch x window."""
        return self.steps * self.batch_size * block_size


# S-IT: "3000 passi di AdamW a 1e-3 con un batch di 64"
SHAKESPEARE_FULL = TrainConfig(steps=3000, batch_size=64, lr=1e-3, eval_every=500)


def lr_at(step: int, cfg: TrainConfig) -> float:
    return cfg.lr * min(1.0, (step + 1) / cfg.warmup) if cfg.warmup else cfg.lr


def windows(tokens: torch.Tensor, block: int, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The first n non-overlapping (input, target) windows (n=0: all): a fixed evaluation set."""
    n = min(n or len(tokens), (len(tokens) - 1) // block)
    idx = torch.arange(n)[:, None] * block + torch.arange(block + 1)  # (n, block+1)
    w = tokens[idx]
    return w[:, :-1], w[:, 1:]


@torch.no_grad()
def perplexity(model, x, y, batch=64) -> float:
    model.eval()
    total, count = 0.0, 0
    for i in range(0, len(x), batch):
        logits = model(x[i:i + batch])
        total += torch.nn.functional.cross_entropy(logits.flatten(0, 1), y[i:i + batch].flatten(),
                                                   reduction="sum").item()
        count += y[i:i + batch].numel()
    experiments.train()
    return math.exp(total / count)


def train(model_cfg: GPTConfig, cfg: TrainConfig, train_tokens, val_tokens, *, seed: int = 0,
          device="cpu", log=print, progress=None) -> dict:
    """Train from scratch; return the run's record: curves and final perplexities.

    ``progress(step)``, if given, is called after every step (a sign of life; it decides how
    often to say so)."""
    device = torch.device(device)
    torch.manual_seed(seed)
    model = GPT(model_cfg).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=cfg.betas, weight_decay=cfg.weight_decay)
    tr = torch.as_tensor(np.asarray(train_tokens), dtype=torch.long)
    va = torch.as_tensor(np.asarray(val_tokens), dtype=torch.long)
    T = model_cfg.block_size
    val = windows(va, T, cfg.eval_windows)
    evals = {"val": val, "train": windows(tr, T, len(val[0]))}  # train ppl on as many windows
    evals = {k: (x.to(device), y.to(device)) for k, (x, y) in evals.items()}
    g = torch.Generator().manual_seed(seed)  # the batches: the same for a seed on any device
    checkpoints = sorted({s for s in range(cfg.eval_every, cfg.steps, cfg.eval_every or cfg.steps)} | {cfg.steps})
    curve = {"step": [], "train_ppl": [], "val_ppl": [], "loss": []}
    probe_x = evals["val"][0][:16]  # a fixed held-out batch for the attention statistics
    trace = {"step": [0], "loss": [None]} if cfg.trace_every else None
    if trace is not None and cfg.attention_stats:
        trace["attention"] = [attention_summary(model, probe_x)]  # at initialisation, step 0
    traced = 0.0
    start, running = time.perf_counter(), 0.0
    for step in range(cfg.steps):
        for group in opt.param_groups:
            group["lr"] = lr_at(step, cfg)
        ix = torch.randint(len(tr) - T - 1, (cfg.batch_size,), generator=g)
        w = tr[ix[:, None] + torch.arange(T + 1)].to(device)  # (B, T+1)
        _, loss = model(w[:, :-1], w[:, 1:])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if progress:
            progress(step + 1)
        running += loss.item()
        traced += loss.item()
        done = step + 1
        if trace is not None and done % cfg.trace_every == 0:
            trace["step"].append(done)
            trace["loss"].append(traced / cfg.trace_every)
            traced = 0.0
            if cfg.attention_stats:
                trace["attention"].append(attention_summary(model, probe_x))
        if cfg.log_every and done % cfg.log_every == 0:
            tps = done * cfg.batch_size * T / (time.perf_counter() - start)
            log(f"step {done:>6d}  loss {loss.item():.4f}  {tps:,.0f} tok/s")
        if done in checkpoints:
            curve["step"].append(done)
            curve["loss"].append(running / (done - (curve["step"][-2] if len(curve["step"]) > 1 else 0)))
            running = 0.0
            curve["train_ppl"].append(perplexity(model, *evals["train"]))
            curve["val_ppl"].append(perplexity(model, *evals["val"]))
    wall = time.perf_counter() - start
    at_length = {str(L): (curve["val_ppl"][-1] if L == T and not cfg.eval_windows  # already scored
                          else perplexity(model, *(t.to(device) for t in windows(va, L, 0))))
                 for L in cfg.eval_lengths}
    return {
        "val_ppl_at_length": at_length, "trace": trace,
        "val_ppl": curve["val_ppl"][-1], "train_ppl": curve["train_ppl"][-1], "curve": curve,
        "seed": seed, "device": str(device), "wall_s": round(wall, 2),
        "tokens_per_s": round(cfg.steps * cfg.batch_size * T / wall),
        "model": asdict(model_cfg), "train": asdict(cfg),
        "params": sum(p.numel() for p in model.parameters()),
    }
