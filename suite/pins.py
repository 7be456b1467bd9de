"""Pin tolerances that hold on any x86 CPU, and the command that measured them.

Training amplifies kernel rounding: the same CPU run ends 0.1-2 % apart on two machines, while
its first logged losses agree far more closely. So each pin keeps two kinds of value apart:

    <key>/early   the first logged training losses (or the first checkpoint)
    <key>         trained end values (perplexities, accuracies, attention weights)

and each group of keys gets its own tolerance: ``SAFETY`` times the largest movement measured
between two runs that differ only in their kernels, and never below ``FLOOR`` (the 1e-4 that a
second x86 machine met for the end values). Measure it again with

    python -m suite.pins movement reports-default/pins reports-avx2/pins

where the second run had ``ATEN_CPU_CAPABILITY=avx2 MKL_CBWR=COMPATIBLE ONEDNN_MAX_CPU_ISA=AVX2``
(and its own CLAIMS_CACHE_DIR), and paste what it prints into ``MOVEMENT``.
"""
import argparse
import fnmatch
import json
import math
import platform
from pathlib import Path

import numpy as np

SAFETY = 3  # a second machine moves values less far than the ISA switch does; 3x that
FLOOR = {"/early": 1e-6, "": 1e-4}  # relative, for early values and for end values

MEASURED_ON = ("AMD EPYC (2 cores, AVX-512), torch 2.13.0+cpu: default kernels vs "
               "ATEN_CPU_CAPABILITY=avx2 MKL_CBWR=COMPATIBLE ONEDNN_MAX_CPU_ISA=AVX2, 2026-11-30 and "
               "2026-12-01 (the larger of the two measurements per group)")

# pin -> [(key pattern, "rtol" or "atol", largest movement measured)]; a key takes the first
# pattern it matches. Undivided heads and post-norm arms train chaotically: kernel rounding
# moves their ends by percents, so they are pinned loosely and apart from the stable arms.
MOVEMENT = {
    "ladder_ci": [("*/early", "rtol", 2.35e-08), ("*", "rtol", 3.67e-07)],
    "norm_ci": [("*/early", "rtol", 9.02e-05), ("*", "rtol", 3.00e-02)],
    "positions_ci": [("*", "rtol", 8.52e-07)],
    "sqrt_dk_ci": [("nodiv-*/early", "rtol", 2.39e-03), ("nodiv-*", "rtol", 6.10e-02),
                   ("*/early", "rtol", 1.94e-07), ("*", "rtol", 2.71e-07)],
    # the 200 stacked runs (5 excerpts x 20 seeds x 2 arms) move 7.08e-4; 5 x 5 move 6.9e-5
    "tiny_lab": [("*/early", "rtol", 8.93e-07), ("*", "rtol", 7.08e-04)],
    # means over 10 starts: one start that turns (a fixed-task two-block seed can stay at chance
    # under the AVX2 kernels and solve it under the default ones) moves an accuracy mean by 0.5 / 10
    # and a weight mean by at most 1 / 10; not a measurement of ours, the bound of one turned start
    "winograd": [("rows/*", "atol", 1e-01), ("*", "atol", 5e-02)],  # weights, accuracies in [0, 1]
}

PORTABLE_WHY = (f"{SAFETY}x the largest movement of each group of values measured on {MEASURED_ON}, "
                f"never below {FLOOR['/early']:g} (early) or {FLOOR['']:g} (end) relative (suite/pins.py)")


def _round_up(x: float) -> float:
    """Up to one significant figure."""
    if x <= 0:
        return 0.0
    e = math.floor(math.log10(x))
    return math.ceil(round(x / 10**e, 9)) * 10**e


def _group(name: str, key: str) -> tuple[str, str]:
    for pattern, kind, _ in MOVEMENT.get(name, [("*/early", "rtol", 0), ("*", "rtol", 0)]):
        if fnmatch.fnmatchcase(key, pattern):
            return pattern, kind
    raise KeyError(f"pin {name}: key {key!r} matches no pattern of suite/pins.py MOVEMENT")


def tolerance(name: str, key: str) -> dict[str, float]:
    """ndarrays_regression's {rtol, atol} for one key of a pin."""
    if name not in MOVEMENT:
        raise KeyError(f"pin {name}: no measured movement in suite/pins.py MOVEMENT; run "
                       "`python -m suite.pins movement` on two kernel settings and add it")
    pattern, kind = _group(name, key)
    moved = next(m for p, _, m in MOVEMENT[name] if p == pattern)
    tol = _round_up(SAFETY * moved)
    if kind == "atol":
        return {"rtol": 0.0, "atol": tol}
    return {"rtol": max(tol, FLOOR["/early" if key.endswith("/early") else ""]), "atol": 0.0}


def describe(name: str, keys) -> str:
    """One line: each group's tolerance, for the report."""
    seen = {}
    for key in keys:
        pattern, kind = _group(name, key)
        seen.setdefault(pattern, f"{pattern}: {kind} {tolerance(name, key)[kind]:g}")
    return ", ".join(seen.values())


def movement(a: Path, b: Path) -> dict[str, list]:
    """Per pin, per key group of MOVEMENT, the largest difference between runs a and b:
    relative for 'rtol' groups, absolute for 'atol' ones."""
    out = {}
    for pa in sorted(Path(a).glob("*.json")):
        pb = Path(b) / pa.name
        if not pb.is_file():
            continue
        va, vb = json.loads(pa.read_text()), json.loads(pb.read_text())
        moved = {}
        for key in sorted(va.keys() & vb.keys()):
            pattern, kind = _group(pa.stem, key)
            x, y = np.asarray(va[key], float), np.asarray(vb[key], float)
            d = np.abs(x - y) if kind == "atol" else np.abs(x - y) / np.maximum(np.abs(y), 1e-300)
            moved[pattern, kind] = max(moved.get((pattern, kind), 0.0), float(d.max()) if d.size else 0.0)
        out[pa.stem] = [(p, k, float(f"{m:.3g}")) for (p, k), m in moved.items()]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m suite.pins")
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("movement", help="largest movement per pin and key group between two runs' "
                                        "reports/pins folders")
    m.add_argument("a", type=Path)
    m.add_argument("b", type=Path)
    args = ap.parse_args(argv)
    for d in (args.a, args.b):
        if not d.is_dir():
            raise SystemExit(f"movement: {d} is not a folder of pin values (reports/pins after a run)")
    moved = movement(args.a, args.b)
    for name, groups in moved.items():
        for pattern, kind, m in groups:
            print(f"{name:14s} {pattern:16s} {kind} moved {m:.2e} -> {_round_up(SAFETY * m):.0e}")
    print("MOVEMENT = " + json.dumps(moved, indent=1))


if __name__ == "__main__":
    main()


def cpu_model() -> str:
    """The CPU's model name, for provenance."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
