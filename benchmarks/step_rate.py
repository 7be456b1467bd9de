"""Training steps per second, our trainer beside plain PyTorch loops on the same shape, measured
side by side in one run: a benchmark that prints figures, never a test (docs/reference/benchmarks.md).

    python -m benchmarks.step_rate [--shape norm-full|norm-ci] [--steps 20] [--device cpu|cuda]

Rows: plain PyTorch eager, one model; ours, one seed; plain PyTorch, three models in turn; ours,
three and twelve seeds stacked (model/stack.py); ours with the compiled step (one and three seeds,
``experiments.train.StepLoss``: CUDA graphs of eager's kernels on CUDA, inductor on the CPU), and with
inductor's CUDA graphs ("reduce-overhead") on one seed; plain PyTorch compiled (torch.compile;
mode="reduce-overhead" on CUDA) with AdamW's fused kernel where this torch has it. A step is one
optimiser step of every model it trains; "model-steps/s" counts each model's step. Random tokens
stand in for the corpus (a step's time does not depend on them); no evaluation.
"""
import argparse
import time

import torch

from suite import settings

settings.load()  # an entry point: CLAIMS_* read here, before the catalogue's seeds

from experiments.train import StepLoss, fit, token_batches  # noqa: E402
from model import GPT  # noqa: E402
from model.stack import Stack  # noqa: E402
from suite.catalogue import NORM_CI, NORM_FULL  # noqa: E402

SHAPES = {"norm-full": NORM_FULL, "norm-ci": NORM_CI}


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def _plain(cfg, n_models, device, data, batch, compiled=False):
    """A plain loop over ``n_models`` models in turn: step() trains each once."""
    torch.manual_seed(0)
    models = [GPT(cfg).to(device) for _ in range(n_models)]
    kw = {}
    if compiled:
        try:
            torch.optim.AdamW([torch.zeros(1, device=device, requires_grad=True)], fused=True)
            kw = {"fused": True}
        except (RuntimeError, TypeError):  # no fused kernel for this device in this torch
            kw = {}
    opts = [torch.optim.AdamW(m.parameters(), lr=1e-3, **kw) for m in models]
    calls = [torch.compile(m, mode="reduce-overhead" if device.type == "cuda" else "default") if compiled else m
             for m in models]
    T, g = cfg.block_size, torch.Generator().manual_seed(0)

    def step():
        for m, opt in zip(calls, opts):
            ix = torch.randint(len(data) - T - 1, (batch,), generator=g)
            w = data[ix[:, None] + torch.arange(T + 1)].to(device)
            _, loss = m(w[:, :-1], w[:, 1:])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    return step


def _ours(cfg, n_seeds, device, data, batch, step="eager", options=None):
    stack = Stack(cfg, tuple(range(n_seeds)), device=device)
    opt = torch.optim.AdamW(stack.parameters(), lr=1e-3)
    batches = token_batches(data, tuple(range(n_seeds)), batch, cfg.block_size, device, 1)  # as train(): on the device
    loss = StepLoss(stack, step, device, options)  # one compilation, kept across the calls
    run = lambda: fit(stack, opt, batches, 1, step=loss)  # noqa: E731
    run.ran = lambda: loss.ran  # what ran: a compile that fell back is named beside its row
    return run


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", choices=SHAPES, default="norm-full")
    ap.add_argument("--arm", default="pre")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3, help="steps before timing (compilation included)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--rows", default="plain1,ours1,plain3,ours3,ours12,ours1c,ours3c,ours1ro,compiled1",
                    help="which rows, comma-separated")
    args = ap.parse_args(argv)
    device, scale = torch.device(args.device), SHAPES[args.shape]
    cfg, batch = scale.arms[args.arm], scale.train.batch_size
    data = torch.randint(0, cfg.vocab_size, (200_000,), generator=torch.Generator().manual_seed(0))
    rows = {
        "plain1": ("plain PyTorch, eager, 1 model", 1, lambda: _plain(cfg, 1, device, data, batch)),
        "ours1": ("ours, 1 seed", 1, lambda: _ours(cfg, 1, device, data, batch)),
        "plain3": ("plain PyTorch, 3 models in turn", 3, lambda: _plain(cfg, 3, device, data, batch)),
        "ours3": ("ours, 3 seeds stacked", 3, lambda: _ours(cfg, 3, device, data, batch)),
        "ours12": ("ours, 12 seeds stacked", 12, lambda: _ours(cfg, 12, device, data, batch)),
        "ours1c": ("ours, 1 seed, compiled step", 1, lambda: _ours(cfg, 1, device, data, batch, "compiled")),
        "ours3c": ("ours, 3 seeds stacked, compiled step", 3, lambda: _ours(cfg, 3, device, data, batch, "compiled")),
        "ours1ro": ("ours, 1 seed, inductor + CUDA graphs", 1,
                    lambda: _ours(cfg, 1, device, data, batch, "compiled", {"mode": "reduce-overhead"})),
        "compiled1": ("plain PyTorch, compiled + fused AdamW, 1 model", 1,
                      lambda: _plain(cfg, 1, device, data, batch, compiled=True)),
    }
    print(f"{args.shape}/{args.arm}: {cfg.n_layer} blocks, d {cfg.d_model}, window {cfg.block_size}, batch {batch}, "
          f"float32 | device {device} | torch {torch.__version__} | threads {torch.get_num_threads()}")
    print(f"{'loop':48s} {'steps/s':>9s} {'model-steps/s':>14s}")
    for key in args.rows.split(","):
        name, models, make = rows[key]
        step = make()
        for _ in range(args.warmup):
            step()
        _sync(device)
        t = time.perf_counter()
        for _ in range(args.steps):
            step()
        _sync(device)
        rate = args.steps / (time.perf_counter() - t)
        ran = step.ran() if hasattr(step, "ran") else ""
        print(f"{name:48s} {rate:9.2f} {rate * models:14.2f}" + (f"   ran: {ran}" if "(" in ran else ""),
              flush=True)


if __name__ == "__main__":
    main()
