"""Seeds side by side against one after another: the wall time of a CI-scale arm's training
steps, stacked (model/stack.py) and as single runs. Prints figures; asserts nothing.

    python -m benchmarks.stacking [--steps 60] [--threads 1]

One thread is what each of the slow tier's two xdist workers gets on a 2-core machine.

Random tokens stand in for the corpus (the time of a step does not depend on them) and the
evaluation is left out, so the figures are the training loop's alone.
"""
import argparse
import time
from dataclasses import replace

import torch

from suite import settings

settings.load()  # an entry point: CLAIMS_* read here, before the catalogue's seeds

from suite.catalogue import LADDER_CI, NORM_CI, NORM_EQ_CI, POS_CI, SQRT_CI, TINY_LAB, WINOGRAD  # noqa: E402
from experiments.train import fit, token_batches  # noqa: E402
from experiments.winograd import BATCH, PREDICTIONS, fixed_task, model_config  # noqa: E402
from model.stack import Stack  # noqa: E402


def _arms():
    """(family, arm, config, batch, optimizer, seeds): the costliest arm of each family."""
    wino = model_config(fixed_task(), "2-blocks")
    lab = TINY_LAB.config
    return [
        ("ladder-ci", "+layernorm", LADDER_CI.arms["+layernorm"], LADDER_CI.train.batch_size, LADDER_CI.seeds),
        ("sqrt-ci", "nodiv-1024", SQRT_CI.arms["nodiv-1024"], SQRT_CI.train.batch_size, SQRT_CI.seeds),
        ("norm-ci", "post", NORM_CI.arms["post"], NORM_CI.train.batch_size, NORM_CI.seeds),
        ("norm-eq-ci", "pre", NORM_EQ_CI.arms["pre"], NORM_EQ_CI.train.batch_size, NORM_EQ_CI.seeds),
        ("pos-ci", "rope", POS_CI.arms["rope"], POS_CI.train.batch_size, POS_CI.seeds),
        ("winograd", "fixed/2-blocks", replace(wino, block_size=PREDICTIONS), BATCH, WINOGRAD.seeds),
        ("polish-lab", "positions", lab.model(), lab.batch, TINY_LAB.seeds),
    ]


def _time(cfg, seeds, batch, steps, tokens):
    stack = Stack(cfg, seeds)
    opt = torch.optim.AdamW(stack.parameters(), lr=1e-3)
    batches = token_batches(tokens, seeds, batch, cfg.block_size, "cpu")
    fit(stack, opt, batches, 3)  # warm up
    start = time.perf_counter()
    fit(stack, opt, batches, steps)
    return (time.perf_counter() - start) / steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; ms per step of the whole arm")
    print(f"{'family':<12} {'arm':<16} {'seeds':>5} {'single':>9} {'stacked':>9} {'speedup':>8}")
    for family, arm, cfg, batch, seeds in _arms():
        tokens = torch.randint(cfg.vocab_size, (100_000,), generator=torch.Generator().manual_seed(0))
        single = sum(_time(cfg, (s,), batch, args.steps, tokens) for s in seeds)
        stacked = _time(cfg, seeds, batch, args.steps, tokens)
        print(f"{family:<12} {arm:<16} {len(seeds):>5} {1e3 * single:>9.1f} {1e3 * stacked:>9.1f} "
              f"{single / stacked:>7.2f}x", flush=True)


if __name__ == "__main__":
    main()
