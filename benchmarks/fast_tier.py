"""The fast tier's wall time, cold and warm: a benchmark that prints figures, never a test.

    python benchmarks/fast_tier.py [--repeats 3] [-- extra pytest args, e.g. -n 2]

*Cold*: the project's bytecode caches removed and an empty run cache (CLAIMS_CACHE_DIR), as on
a fresh clone whose packages are installed. *Warm*: the same command again, right after. Each
figure is the wall time of the whole command (interpreter start, imports, collection, tests,
report), on whatever cores the machine has; run it alone, nothing else training. Under
PYTHONDONTWRITEBYTECODE (set on some machines, this project's among them) no bytecode is cached,
so every run, and every pytest process a test starts, compiles the project afresh: warm is cold.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _clear_bytecode():
    for folder in ("claimcheck", "claims", "model", "experiments", "tests", "benchmarks", "tools"):
        for cache in (ROOT / folder).rglob("__pycache__"):
            shutil.rmtree(cache, ignore_errors=True)
    (ROOT / "__pycache__").exists() and shutil.rmtree(ROOT / "__pycache__", ignore_errors=True)


def run(args, env) -> tuple[float, str]:
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "pytest", "-m", "fast", "-q", "-p", "no:randomly", *args],
                         cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    tail = [line for line in out.stdout.splitlines() if " passed" in line or " failed" in line]
    return wall, (tail[-1] if tail else f"exit {out.returncode}")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3, help="warm runs after the cold one")
    ap.add_argument("pytest_args", nargs="*")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, CLAIMS_CACHE_DIR=cache)
        _clear_bytecode()
        cold, summary = run(a.pytest_args, env)
        print(f"cold   {cold:6.1f} s  {summary}")
        walls = []
        for _ in range(a.repeats):
            wall, summary = run(a.pytest_args, env)
            walls.append(wall)
            print(f"warm   {wall:6.1f} s  {summary}")
    warm = sorted(walls)[len(walls) // 2] if walls else float("nan")
    bytecode = "not cached (PYTHONDONTWRITEBYTECODE)" if os.environ.get("PYTHONDONTWRITEBYTECODE") else "cached"
    print(f"`pytest -m fast {' '.join(a.pytest_args)}` on {os.cpu_count()} cores, bytecode {bytecode}: "
          f"cold {cold:.1f} s, warm {warm:.1f} s (median of {len(walls)})")


if __name__ == "__main__":
    main()
