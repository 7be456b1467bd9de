"""The training loop, and the Shakespeare trainer built on it.

``fit`` is the one loop: every experiment (the Shakespeare families, the Winograd task, the
Polish lab) trains a ``model.stack.Stack`` through it, and differs only in its batches, its
optimizer and its hooks (what is evaluated, and when). ``train`` is the Shakespeare families'
trainer: AdamW with an optional linear warmup, perplexity on the held-out split.

Device-agnostic (pass a device), deterministic on CPU for given seeds, quiet unless asked to
log. ``train`` returns one plain dict per seed (its record) that the run cache stores as JSON.
"""
import time
import warnings
from contextlib import contextmanager
from dataclasses import asdict, dataclass

import numpy as np
import torch
import torch.nn.functional as F

from model.gpt import GPTConfig
from model.stack import Stack
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


def flushing_denormals() -> bool:
    """Whether this thread flushes denormal floats to zero (the smallest one, read as zero)."""
    smallest = torch.tensor([1], dtype=torch.int32).view(torch.float32)  # 1.4e-45
    return bool((smallest * 1 == 0).item())


@contextmanager
def flushed_denormals():
    """x86 computes denormal floats (below 1.2e-38) many times slower, and a saturated softmax
    is full of them: the undivided d_k = 1024 head of SQRT_CI trained 2.7x faster with them
    flushed to zero, and its record, like every other measured so, was the same bit for bit (a
    denormal added to a sum of normal float32 numbers vanishes either way). The setting is the
    calling thread's: torch's other intra-op threads keep theirs, so the speed-up is whole on
    one thread (CI's workers) and partial on several. Restored after."""
    before = flushing_denormals()
    torch.set_flush_denormal(True)  # False where the CPU cannot; then nothing changes
    try:
        yield
    finally:
        torch.set_flush_denormal(before)


STEPS = ("eager", "compiled")
# torch recompiles the step for each new config and, past 8 variants, runs it eager without a word.
# A process trains one variant per arm, a few dozen in the gpu tier; past this many the call fails
# instead, and the step falls back to eager, saying so.
RECOMPILES = 64


def compile_options(device) -> dict:
    """``torch.compile``'s options for a step on ``device``. CUDA: the "cudagraphs" backend captures
    eager's own kernels, so a launch-bound step should replay without launching each one, round as
    eager does, and compile an arm in seconds where inductor takes tens (expected: no card has
    measured it yet, docs/notes/speed.md). The CPU: inductor, which fuses kernels."""
    return {"backend": "cudagraphs"} if torch.device(device).type == "cuda" else {"mode": "default"}


def _cudagraph_skips() -> int:
    from torch._dynamo.utils import counters
    return counters["inductor"]["cudagraph_skips"]


class StepLoss:
    """The stack's loss as a training step computes it: eager, or through ``torch.compile``
    (``compile_options``, or ``options``). ``ran`` names what ran, for the run's record: a forward
    that fails to compile on the first call falls back to eager with a warning; a capture torch
    skipped (CUDA graphs) is named (``settle``); a failure later, or in the first backward, is
    raised."""

    def __init__(self, stack: Stack, step: str, device, options: dict | None = None):
        if step not in STEPS:
            raise ValueError(f"unknown training step {step!r}; choose one of {STEPS}")
        self.stack, self.ran, self.calls = stack, step, 0
        self.fn, self.compiled = stack.loss, step == "compiled"
        if self.compiled:
            self.fn = torch.compile(stack.loss, dynamic=False, **(options or compile_options(device)))
            self.skips = _cudagraph_skips()

    def settle(self) -> str:
        """Name a CUDA graph capture that torch skipped since the step was made (the counter is the
        process's: another compile in between would be counted too); returns ``ran``."""
        if self.compiled and self.ran == "compiled" and _cudagraph_skips() > self.skips:
            self.ran = "compiled (torch skipped the CUDA graph capture)"
        return self.ran

    def __call__(self, x, y) -> torch.Tensor:
        self.calls += 1
        if not self.compiled:
            return self.fn(x, y)
        if self.calls == 2:  # the first step's forward and backward are compiled
            self.settle()
        try:
            with torch._dynamo.config.patch(recompile_limit=RECOMPILES, fail_on_recompile_limit_hit=True):
                return self.fn(x, y)
        except Exception as e:  # noqa: BLE001 (a backend's failure has no common type)
            if self.calls > 1:
                raise
            said = " ".join(line.strip() for line in str(e).splitlines() if line.strip())[:200]
            self.ran = f"eager (compile failed: {type(e).__name__}: {said})"
            warnings.warn(f"the training step runs eager: {self.ran}", stacklevel=2)
            self.fn, self.compiled = self.stack.loss, False
            return self.fn(x, y)


def fit(stack: Stack, opt, batch, steps: int, *, lr=None, hooks=(), progress=None, step="eager") -> float:
    """Train the stack for ``steps`` steps; return the wall time in seconds.

    ``batch(step)`` -> (x, y), each (M, B, T): model m's own batch at this step (steps count
    from 1). ``lr(step)``, if given, sets the rate before the step. ``hook(step, losses)`` runs
    after it, with the (M,) training losses; ``progress(step)`` is a sign of life. ``step``: a
    ``StepLoss`` or one of STEPS.
    """
    loss_fn = step if isinstance(step, StepLoss) else StepLoss(stack, step, next(iter(stack.parameters())).device)
    with flushed_denormals():
        wall = _fit(stack, opt, batch, steps, lr=lr, hooks=hooks, progress=progress, loss_fn=loss_fn)
    loss_fn.settle()  # a capture skipped after the second step is named too
    return wall


def _fit(stack: Stack, opt, batch, steps: int, *, lr, hooks, progress, loss_fn) -> float:
    stack.train()
    start = time.perf_counter()
    for step in range(1, steps + 1):
        if lr is not None:
            for group in opt.param_groups:
                group["lr"] = lr(step)
        x, y = batch(step)
        loss = loss_fn(x, y)  # (M,)
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()  # the models share nothing: each gets its own gradient
        opt.step()
        if progress:
            progress(step)
        for hook in hooks:
            hook(step, loss.detach())
    return time.perf_counter() - start


def windows(tokens: torch.Tensor, block: int, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The first n non-overlapping (input, target) windows (n=0: all): a fixed evaluation set."""
    n = min(n or len(tokens), (len(tokens) - 1) // block)
    idx = torch.arange(n)[:, None] * block + torch.arange(block + 1)  # (n, block+1)
    w = tokens[idx]
    return w[:, :-1], w[:, 1:]


@torch.no_grad()
def perplexities(stack: Stack, x, y, batch=64) -> list[float]:
    """Each model's perplexity on the same windows x, y (n, T)."""
    stack.eval()
    total = torch.zeros(len(stack), dtype=torch.float64, device=x.device)
    for i in range(0, len(x), batch):
        logits = stack.logits(x[i:i + batch])  # (M, b, T, V)
        yy = y[i:i + batch].expand(len(stack), *y[i:i + batch].shape)  # (M, b, T)
        # rows of V contiguous: the class-in-dim-1 layout runs the same loss 8x slower on a CPU
        losses = F.cross_entropy(logits.flatten(0, 2), yy.flatten(), reduction="none")  # (M*b*T,)
        total += losses.view(len(stack), -1).double().sum(1)  # (M,)
    stack.train()
    return torch.exp(total / y.numel()).tolist()


def token_batches(tokens: torch.Tensor, seeds, batch_size: int, T: int, device, steps: int = 0):
    """``batch(step)`` for ``fit``: random windows of ``tokens``, a generator per seed, so a
    seed's batches are the same alone or stacked, on any device.

    The windows are cut on ``device`` from the tokens moved there once. Given ``steps``, every
    step's starts are drawn up front, one call per generator (the same numbers as a call per step)
    and moved once: a step then copies nothing from the host, and waits for nothing."""
    gens = [torch.Generator().manual_seed(s) for s in seeds]
    tokens = tokens.to(device)
    offs = torch.arange(T + 1, device=device)
    high = len(tokens) - T - 1
    if steps:
        starts = torch.stack([torch.randint(high, (steps, batch_size), generator=g) for g in gens], 1).to(device)  # (S, M, B)

    def batch(step):
        if steps:
            if not 1 <= step <= steps:
                raise IndexError(f"batch({step}): the starts were drawn for steps 1..{steps}")
            ix = starts[step - 1]  # (M, B)
        else:
            ix = torch.stack([torch.randint(high, (batch_size,), generator=g) for g in gens]).to(device)  # (M, B)
        w = tokens[ix[..., None] + offs]  # (M, B, T+1)
        return w[..., :-1], w[..., 1:]
    return batch


FIRST_LOSSES = 20  # per-step training losses kept from the start of every run, for replay


def _start(model_cfg: GPTConfig, cfg: TrainConfig, seeds, device):
    """The models, their optimizer and the schedule: what a run and its replay share."""
    stack = Stack(model_cfg, seeds, device=device)
    opt = torch.optim.AdamW(stack.parameters(), lr=cfg.lr, betas=cfg.betas, weight_decay=cfg.weight_decay)
    schedule = (lambda step: lr_at(step - 1, cfg)) if cfg.warmup else None
    return stack, opt, schedule


def replay(model_cfg: GPTConfig, cfg: TrainConfig, train_tokens, *, seeds=(0,), steps=FIRST_LOSSES,
           device="cpu", step="eager") -> list[list[float]]:
    """The first ``steps`` per-step training losses of each seed's run, retrained: the same
    models, batches and optimizer as ``train``, without the evaluations. A replay measures the
    ``step`` it was asked for: a compiled one that fell back to eager raises."""
    stack, opt, schedule = _start(model_cfg, cfg, seeds, torch.device(device))
    tr = torch.as_tensor(np.asarray(train_tokens), dtype=torch.long)
    losses, loss_fn = [], StepLoss(stack, step, device)
    fit(stack, opt, token_batches(tr, seeds, cfg.batch_size, model_cfg.block_size, device, steps), steps,
        lr=schedule, hooks=(lambda _, loss: losses.append(loss.double().tolist()),), step=loss_fn)
    if loss_fn.ran.split(" (")[0] != step:
        raise RuntimeError(f"replay asked for the {step} step and ran {loss_fn.ran}")
    return np.array(losses).T.tolist()  # (M, steps)


def train(model_cfg: GPTConfig, cfg: TrainConfig, train_tokens, val_tokens, *, seeds=(0,),
          device="cpu", log=print, progress=None, step="eager") -> list[dict]:
    """Train one model per seed from scratch, side by side; return each run's record: curves
    and final perplexities. ``progress(step)``, ``step``: as in ``fit``."""
    device = torch.device(device)
    stack, opt, schedule = _start(model_cfg, cfg, seeds, device)
    loss_fn = StepLoss(stack, step, device)
    tr = torch.as_tensor(np.asarray(train_tokens), dtype=torch.long)
    va = torch.as_tensor(np.asarray(val_tokens), dtype=torch.long)
    T, M = model_cfg.block_size, len(stack)
    val = windows(va, T, cfg.eval_windows)
    evals = {"val": val, "train": windows(tr, T, len(val[0]))}  # train ppl on as many windows
    evals = {k: (x.to(device), y.to(device)) for k, (x, y) in evals.items()}
    checkpoints = sorted({s for s in range(cfg.eval_every, cfg.steps, cfg.eval_every or cfg.steps)} | {cfg.steps})
    curves = [{"step": [], "train_ppl": [], "val_ppl": [], "loss": []} for _ in range(M)]
    probe_x = evals["val"][0][:16]  # a fixed held-out batch for the attention statistics
    traces = [{"step": [0], "loss": [None]} if cfg.trace_every else None for _ in range(M)]

    def attention(m):
        return attention_summary(stack.model(m), probe_x)

    if cfg.trace_every and cfg.attention_stats:
        for m in range(M):
            traces[m]["attention"] = [attention(m)]  # at initialisation, step 0
    # the losses are summed where they are computed and read back only where a value is kept
    # (the first steps, a trace, a log line, a checkpoint): no host sync on the other steps
    sums = {k: torch.zeros(M, dtype=torch.float64, device=device) for k in ("running", "traced")}
    first = []

    def record(step, loss):
        loss = loss.double()  # (M,), on the device
        for k in sums:
            sums[k] += loss
        if step <= FIRST_LOSSES:
            first.append(loss.tolist())
        if cfg.trace_every and step % cfg.trace_every == 0:
            traced = sums["traced"].tolist()
            for m in range(M):
                traces[m]["step"].append(step)
                traces[m]["loss"].append(traced[m] / cfg.trace_every)
                if cfg.attention_stats:
                    traces[m]["attention"].append(attention(m))
            sums["traced"].zero_()
        if cfg.log_every and step % cfg.log_every == 0:
            log(f"step {step:>6d}  loss {np.round(loss.tolist(), 4).tolist()}")
        if step in checkpoints:
            since = step - (curves[0]["step"][-1] if curves[0]["step"] else 0)
            ppl = {k: perplexities(stack, *evals[k]) for k in ("train", "val")}
            running = sums["running"].tolist()
            for m, c in enumerate(curves):
                c["step"].append(step)
                c["loss"].append(running[m] / since)
                c["train_ppl"].append(ppl["train"][m])
                c["val_ppl"].append(ppl["val"][m])
            sums["running"].zero_()

    wall = fit(stack, opt, token_batches(tr, seeds, cfg.batch_size, T, device, cfg.steps), cfg.steps,
               lr=schedule, hooks=(record,), progress=progress, step=loss_fn)
    at_length = {L: ([c["val_ppl"][-1] for c in curves] if L == T and not cfg.eval_windows  # already scored
                     else perplexities(stack, *(t.to(device) for t in windows(va, L, 0))))
                 for L in cfg.eval_lengths}
    params = sum(p.numel() for p in stack.model(0).parameters())
    return [{
        "val_ppl_at_length": {str(L): v[m] for L, v in at_length.items()}, "trace": traces[m],
        "first_losses": [f[m] for f in first],
        "val_ppl": curves[m]["val_ppl"][-1], "train_ppl": curves[m]["train_ppl"][-1], "curve": curves[m],
        "seed": seed, "device": str(device), "step": loss_fn.ran, "wall_s": round(wall, 2), "stacked": M,
        "tokens_per_s": round(M * cfg.steps * cfg.batch_size * T / wall),
        "model": asdict(model_cfg), "train": asdict(cfg), "params": params,
    } for m, seed in enumerate(stack.seeds)]
