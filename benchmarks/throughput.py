"""Trainer throughput on the full-scale one-block model (d 128, window 128, batch 64): our
training loop (``experiments.train.fit`` on a one-model ``Stack``) beside a plain PyTorch loop
on the same model and batches, and beside this machine's fp32 matmul rate, measured in the same
run. Prints figures; asserts nothing.

    python benchmarks/throughput.py [--steps 30] [--device cpu]

Effective FLOP per trained token: 6 N for the weight matmuls (N = parameters outside the
embedding tables) plus 12 L T d for attention's two T x T matmuls, forward and backward.
"""
import argparse
import time

import numpy as np
import torch

from model import GPT
from experiments.configs import ladder
from experiments.train import SHAKESPEARE_FULL, fit, token_batches
from model.stack import Stack


def matmul_gflops(device, n=2048, reps=10):
    a, b = torch.randn(n, n, device=device), torch.randn(n, n, device=device)
    for _ in range(2):
        a @ b
    t = time.perf_counter()
    for _ in range(reps):
        a @ b
    if device.type == "cuda":
        torch.cuda.synchronize()
    return 2 * n ** 3 * reps / (time.perf_counter() - t) / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = ap.parse_args()
    device = torch.device(args.device)
    cfg = ladder()["+layernorm"]
    B, T = SHAKESPEARE_FULL.batch_size, cfg.block_size
    data = torch.as_tensor(np.random.default_rng(0).integers(0, cfg.vocab_size, 200_000))

    torch.manual_seed(0)
    model = GPT(cfg).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(0)

    def plain(steps):
        for _ in range(steps):
            ix = torch.randint(len(data) - T - 1, (B,), generator=g)
            w = data[ix[:, None] + torch.arange(T + 1)].to(device)
            _, loss = model(w[:, :-1], w[:, 1:])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

    stack = Stack(cfg, (0,), device=device)
    ours_opt = torch.optim.AdamW(stack.parameters(), lr=1e-3)
    batches = token_batches(data, (0,), B, T, device)

    def ours(steps):
        fit(stack, ours_opt, batches, steps)

    def timed(run):
        run(3)  # warm up
        t = time.perf_counter()
        run(args.steps)
        if device.type == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter() - t

    times = {"plain": [], "ours": []}
    for _ in range(3):  # interleaved rounds: a slow moment of the machine hits both
        for name, run in (("plain", plain), ("ours", ours)):
            times[name].append(timed(run))
    dt, dt_plain = min(times["ours"]), min(times["plain"])
    tokens_s = args.steps * B * T / dt
    n_matmul = sum(p.numel() for n, p in model.named_parameters() if not n.startswith(("tok.", "pos.")))
    flop_per_token = 6 * n_matmul + 12 * cfg.n_layer * T * cfg.d_model
    eff = tokens_s * flop_per_token / 1e9
    peak = matmul_gflops(device)
    print(f"device {device} | torch {torch.__version__} | threads {torch.get_num_threads()}")
    print(f"our trainer: {tokens_s:,.0f} tokens/s ({dt / args.steps * 1000:.0f} ms/step, batch {B} x {T}); "
          f"plain PyTorch: {dt_plain / args.steps * 1000:.0f} ms/step; ours / plain: {dt / dt_plain:.3f}")
    print(f"effective: {eff:.1f} GFLOP/s ({flop_per_token / 1e6:.2f} MFLOP/token, N = {n_matmul:,})")
    print(f"fp32 matmul 2048^3: {peak:.1f} GFLOP/s")
    print(f"ratio: {eff / peak:.0%}")


if __name__ == "__main__":
    main()
