"""Mutation testing of the network library, model/, against the fast tier.

    pip install -e ".[test,mutation]"
    python -m tools.mutation [--max-children 2] [--no-run]

Runs mutmut 3 as pyproject.toml's [tool.mutmut] sets it up (every mutant of model/ against
``pytest -m fast``, each against the tests that reach its function), then prints the score,
killed / (all - equivalent), and every survivor that docs/mutation.md does not list as
equivalent with its reason. Exits 1 below TARGET. Not part of CI: about 20 minutes on 2 cores.
mutmut keeps its results in mutants/, so a second run retests only what changed.
"""
import argparse
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENTS = ROOT / "docs" / "mutation.md"
TARGET = 0.90
# a mutant that hangs or crashes the fast tier is caught too: the run goes red (mutmut's timeout
# is 15x the tests' own time)
DETECTED = {"killed", "timeout", "segfault"}


def equivalents(text: str) -> dict[str, str]:
    """Mutant name -> reason, from the lines "- `model.x__mutmut_N`: ... — reason" of the
    section "## Equivalent mutants" (other sections may name mutants too)."""
    section = re.search(r"^## Equivalent mutants$(.*?)(?=^## |\Z)", text, re.M | re.S)
    body = section[1] if section else ""
    return {m[1]: m[2].strip() for m in re.finditer(r"^- `(model\.[^`]+)`:(.*)$", body, re.M)}


def results(text: str) -> dict[str, str]:
    """Mutant name -> status, from ``mutmut results --all true``."""
    return {m[1]: m[2].strip() for m in re.finditer(r"^\s+(model\.\S+): (.+)$", text, re.M)}


def score(status: dict[str, str], equivalent: dict[str, str]) -> dict:
    """The counts and the score; an equivalent entry that is no longer a survivor is stale."""
    counts = Counter(status.values())
    eq = {k for k in equivalent if status.get(k) == "survived"}
    survivors = sorted(k for k, s in status.items() if s not in DETECTED and k not in eq)
    killed = sum(counts[s] for s in DETECTED)
    judged = len(status) - len(eq)
    return {"all": len(status), "killed": killed, "equivalent": len(eq), "survivors": survivors,
            "stale": sorted(set(equivalent) - eq), "counts": dict(counts),
            "score": killed / judged if judged else 0.0}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.mutation", description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-children", type=int, default=2, help="mutants tested at once (default 2)")
    ap.add_argument("--no-run", action="store_true", help="score the results mutants/ already holds")
    a = ap.parse_args(argv)
    mutmut = [sys.executable, "-m", "mutmut"]
    if not a.no_run:
        subprocess.run([*mutmut, "run", "--max-children", str(a.max_children)], cwd=ROOT, check=True)
    out = subprocess.run([*mutmut, "results", "--all", "true"], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    status = results(out)
    if not status:
        print("no mutmut results in mutants/: run without --no-run first", file=sys.stderr)
        return 2
    s = score(status, equivalents(EQUIVALENTS.read_text()))
    for name in s["survivors"]:
        print(f"  {status[name]:>9}  {name}   (mutmut show {name})")
    for name in s["stale"]:
        print(f"  stale equivalent in docs/mutation.md (killed, or renamed by a code change): {name}")
    print(f"mutation score of model/: {s['killed']} killed / ({s['all']} mutants - {s['equivalent']} equivalent)"
          f" = {s['score']:.1%} (target {TARGET:.0%}); {len(s['survivors'])} survive; "
          + ", ".join(f"{k} {v}" for k, v in sorted(s["counts"].items())))
    return 0 if s["score"] >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
