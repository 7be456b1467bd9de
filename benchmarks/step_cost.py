"""What the full-scale evidence costs here: one training step of every arm of every full-scale
family, timed, and the estimated wall time of one seed of each family. Prints figures;
asserts nothing.

    python -m benchmarks.step_cost [--steps 5] [--families ladder,sqrt,norm,positions]

Random tokens stand in for the corpus (a step's time does not depend on them); the estimate
leaves out the evaluations, a few percent of a run.
"""
import argparse
import time

import torch

from suite import settings

settings.load()  # an entry point: CLAIMS_* read here, before the catalogue's seeds

from suite.evidence.families import FAMILIES, family_scale  # noqa: E402
from experiments.train import _start, token_batches, fit  # noqa: E402


def step_seconds(cfg, train, steps):
    stack, opt, schedule = _start(cfg, train, (0,), torch.device("cpu"))
    tokens = torch.randint(cfg.vocab_size, (200_000,), generator=torch.Generator().manual_seed(0))
    batches = token_batches(tokens, (0,), train.batch_size, cfg.block_size, "cpu")
    fit(stack, opt, batches, 2, lr=schedule)  # warm up
    start = time.perf_counter()
    fit(stack, opt, batches, steps, lr=schedule)
    return (time.perf_counter() - start) / steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--families", default=",".join(FAMILIES))
    args = ap.parse_args()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"{'family':<10} {'arm':<16} {'ms/step':>8} {'steps':>6} {'min':>6}")
    for family in args.families.split(","):
        scale, total = family_scale(family), 0.0
        for arm, cfg in scale.arms.items():
            train = scale.trains.get(arm, scale.train)
            s = step_seconds(cfg, train, args.steps)
            total += s * train.steps
            print(f"{family:<10} {arm:<16} {1e3 * s:>8.0f} {train.steps:>6} {s * train.steps / 60:>6.1f}", flush=True)
        print(f"{family:<10} {'one seed, all arms':<16} {'':>8} {'':>6} {total / 60:>6.0f}", flush=True)


if __name__ == "__main__":
    main()
