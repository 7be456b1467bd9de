"""What the claimcheck plugin costs over plain pytest on a small document of its own: a
benchmark that prints figures, never a test.

    python benchmarks/plugin_overhead.py [--repeats 7] [--example examples/sorting]

Both runs use a copy of the example, in a subprocess each time (interpreter start included):
*with* the plugin, as its README runs it (the fast tier); *without* it (`-p no:claimcheck`),
where a conftest stands in for `claim_record` and the markers are declared, so the same tests run.
The figure is the difference of the medians.
"""
import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STUB = '''import pytest

def pytest_configure(config):
    for name in ("claim", "fast", "slow", "gpu", "scale", "diagnosis"):
        config.addinivalue_line("markers", f"{name}: stand-in")

@pytest.fixture
def claim_record():
    return lambda claim_id, measured, **kw: measured
'''


def _wall(cmd, cwd) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--example", default=str(ROOT / "examples" / "sorting"))
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        plugin, plain = Path(tmp) / "plugin", Path(tmp) / "plain"
        for dest in (plugin, plain):
            shutil.copytree(args.example, dest, ignore=shutil.ignore_patterns("reports", "__pycache__"))
        (plain / "conftest.py").write_text(STUB, encoding="utf-8")
        # the fast tier of each: plain pytest cannot select --runslow's tiers
        base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow"]
        runs = {"with the plugin": (base, plugin),
                "plain pytest": (base + ["-p", "no:claimcheck", "-o", "addopts="], plain)}
        walls = {name: [] for name in runs}
        for _ in range(args.repeats):
            for name, (cmd, cwd) in runs.items():
                walls[name].append(_wall(cmd, cwd))
    med = {name: statistics.median(w) for name, w in walls.items()}
    for name, w in walls.items():
        print(f"{name:18s} median {med[name]:.3f} s  (min {min(w):.3f}, max {max(w):.3f}, {len(w)} runs)")
    print(f"the plugin's overhead: {med['with the plugin'] - med['plain pytest']:+.3f} s "
          f"on {Path(args.example).name} (target: <= 0.5 s)")


if __name__ == "__main__":
    main()
