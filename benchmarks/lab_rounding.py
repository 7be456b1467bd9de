"""How far rounding moves the Polish lab: the main excerpt's ten runs (seeds 1-5, with and
without positions) trained in float32, as the lab runs, and in float64. The largest relative
difference at any checkpoint bounds what another machine's kernels could move, since those
also differ from ours by a float32 rounding per operation. Prints figures; asserts nothing.

    CLAIMS_DATA_DIR=... python -m benchmarks.lab_rounding

Measured on AMD EPYC, torch 2.13.0+cpu: float32 against float64 at most 5.3e-6; float32 under
ATEN_CPU_CAPABILITY=avx2 MKL_CBWR=COMPATIBLE ONEDNN_MAX_CPU_ISA=AVX2 bit-identical. Those ten
runs understate it: the slow tier's 200 stacked runs move by up to 7.1e-4 under the same
settings, so suite/lab_rules.py takes its margin (ROUNDING) from the lab pin's measured
movement in suite/pins.py, not from this script.
"""
from dataclasses import replace

import numpy as np

from suite import settings

settings.load()  # an entry point: CLAIMS_* read here, before the catalogue's seeds

from suite.catalogue import TINY_LAB  # noqa: E402
from experiments.polish_text import excerpts  # noqa: E402
from experiments.polish_lab import train_runs, with_positions  # noqa: E402


def main():
    main_excerpt = excerpts(1)[0]
    for pe in (True, False):
        cfg = with_positions(TINY_LAB.config, pe)
        runs = [(main_excerpt, s) for s in TINY_LAB.seeds]
        f32, f64 = (train_runs(replace(cfg, dtype=d), runs) for d in ("float32", "float64"))
        for part in ("train", "val", "test"):
            a, b = np.array(f32[part]), np.array(f64[part])  # (seed, checkpoint)
            print(f"{'with' if pe else 'without'} positions, {part:5s}: float32 vs float64 at most "
                  f"{np.abs(a / b - 1).max():.2e} relative over {a.size} (seed, checkpoint) values")


if __name__ == "__main__":
    main()
