"""Mutation testing of the code that computes the numbers, against the fast tier.

    pip install -e ".[test,mutation]"
    python -m tools.mutation [--target model|experiments|plugin] [--max-children 2] [--no-run | --retest]

Three targets, each scored on its own (default: all three, in turn):

    model         model/, the network library
    experiments   experiments/, data, baselines, training loops and the numpy reference
    plugin        the plugin's pure modules, claimcheck/verdict.py and registry.py, and the
                  document's verdict rules, suite/lab_rules.py, rules.py, pins.py

Runs mutmut 3 with pyproject.toml's [tool.mutmut] settings (every mutant against
``pytest -m fast`` over claims/, tests/ and the plugin's own plugin/tests/, each against the tests
that reach its function) and the target's own ``source_paths``: mutmut reads its config from the
pyproject.toml of the folder it runs in, so each target runs in a folder of its own,
mutants/targets/<target>/, that links the repository's files and holds a pyproject.toml whose
[tool.mutmut] differs only in ``source_paths``; mutmut's results for the target stay there
(mutants/targets/<target>/mutants/), so a second run retests only what changed (and ``--retest``
tests again every mutant that was not killed, to see the tests added since). Then prints, per
target, every survivor that docs/howto/mutation.md does not list as equivalent with its reason,
and the score, killed / (all - equivalent). Exits 1 when a target scores below TARGET, 2 when a
target has no results to score. Not part of CI: model/ takes about 20 minutes on 2 cores.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENTS = ROOT / "docs" / "howto" / "mutation.md"
WORK = ROOT / "mutants" / "targets"  # mutants/ is git-ignored; a plain `mutmut run` uses mutants/<path>
TARGET = 0.90
# target -> mutmut's source_paths (folders, or single modules)
TARGETS = {
    "model": ["model/"],
    "experiments": ["experiments/"],
    "plugin": ["plugin/claimcheck/verdict.py", "plugin/claimcheck/registry.py", "suite/lab_rules.py", "plugin/claimcheck/rules.py",
               "suite/pins.py"],
}
# a mutant that hangs or crashes the fast tier is caught too: the run goes red (mutmut's timeout
# is 15x the tests' own time)
DETECTED = {"killed", "timeout", "segfault"}
_NAME = r"[^`\s:]+__mutmut_\d+"  # package.module.x_function__mutmut_N, classes as xǁClassǁmethod


def equivalents(text: str) -> dict[str, str]:
    """Mutant name -> reason, from the lines "- `pkg.module.x__mutmut_N`: ... — reason" of the
    section "## Equivalent mutants", subsections (### ...) included; other sections may name
    mutants too."""
    section = re.search(r"^## Equivalent mutants$(.*?)(?=^## |\Z)", text, re.M | re.S)
    body = section[1] if section else ""
    return {m[1]: m[2].strip() for m in re.finditer(rf"^- `({_NAME})`:(.*)$", body, re.M)}


def results(text: str) -> dict[str, str]:
    """Mutant name -> status, from ``mutmut results --all true``."""
    return {m[1]: m[2].strip() for m in re.finditer(rf"^\s+({_NAME}): (.+)$", text, re.M)}


def modules(target: str) -> list[str]:
    """The dotted prefixes of the target's mutant names: "model." or "claimcheck.verdict."."""
    return [p.removesuffix("/").removesuffix(".py").replace("/", ".") + "." for p in TARGETS[target]]


def target_of(name: str) -> str | None:
    """The target a mutant name belongs to, None for none."""
    return next((t for t in TARGETS if name.startswith(tuple(modules(t)))), None)


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


def config_for(pyproject: str, target: str) -> str:
    """pyproject.toml's text with [tool.mutmut] set up for ``target``: its ``source_paths``,
    and ``also_copy`` without them (mutmut copies its source paths itself). The section is
    written out again from the parsed values; everything else is kept as it is."""
    cfg = dict(tomllib.loads(pyproject)["tool"]["mutmut"])
    sources = TARGETS[target]
    cfg["source_paths"] = sources
    cfg["also_copy"] = [p for p in cfg.get("also_copy", []) if p not in sources]
    section = "[tool.mutmut]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in cfg.items())
    text, n = re.subn(r"^\[tool\.mutmut\][ \t]*\n(?:(?!\[).*\n?)*", lambda _: section, pyproject, flags=re.M)
    if n != 1 or tomllib.loads(text)["tool"]["mutmut"] != cfg:
        raise ValueError(f"could not set [tool.mutmut] source_paths for target {target}")
    return text


def workdir(target: str) -> Path:
    """mutants/targets/<target>/: links to the top-level files and folders the target's mutmut
    run reads (its source paths and also_copy), and its own pyproject.toml."""
    base = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    text = config_for(base, target)
    cfg = tomllib.loads(text)["tool"]["mutmut"]
    d = WORK / target
    d.mkdir(parents=True, exist_ok=True)
    for top in sorted({Path(p).parts[0] for p in cfg["source_paths"] + cfg["also_copy"]}):
        link, src = d / top, ROOT / top
        if not src.exists():
            continue
        if link.is_symlink() and Path(os.readlink(link)) == src:
            continue
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(src, target_is_directory=src.is_dir())
    cfg_path = d / "pyproject.toml"
    if not cfg_path.is_file() or cfg_path.read_text(encoding="utf-8") != text:  # mutmut watches its hash
        cfg_path.write_text(text, encoding="utf-8")
    return d


def stored(mutmut: list[str], d: Path, target: str) -> dict[str, str]:
    """Mutant name -> status of the target's results in ``d``; empty before a first run."""
    if not (d / "mutants").is_dir():
        return {}
    out = subprocess.run([*mutmut, "results", "--all", "true"], cwd=d, check=True, capture_output=True,
                         text=True).stdout
    return {k: v for k, v in results(out).items() if target_of(k) == target}


def report(target: str, status: dict[str, str], equivalent: dict[str, str]) -> dict:
    """Print the target's survivors, stale equivalents and score; return the score's dict."""
    s = score(status, {k: v for k, v in equivalent.items() if target_of(k) == target})
    where = f"mutants/targets/{target}"
    for name in s["survivors"]:
        print(f"  {status[name]:>9}  {name}   (cd {where} && mutmut show {name})")
    for name in s["stale"]:
        print(f"  stale equivalent in docs/howto/mutation.md (killed, or renamed by a code change): {name}")
    print(f"mutation score of {target} ({', '.join(TARGETS[target])}): {s['killed']} killed / "
          f"({s['all']} mutants - {s['equivalent']} equivalent) = {s['score']:.1%} (target {TARGET:.0%}); "
          f"{len(s['survivors'])} survive; " + ", ".join(f"{k} {v}" for k, v in sorted(s["counts"].items())))
    return s


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.mutation", description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", choices=[*TARGETS, "all"], default="all",
                    help="what to mutate (default: all, each scored on its own)")
    ap.add_argument("--max-children", type=int, default=2, help="mutants tested at once (default 2)")
    ap.add_argument("--no-run", action="store_true",
                    help="score the results mutants/targets/<target>/ already holds")
    ap.add_argument("--retest", action="store_true",
                    help="after the run, test again every mutant not killed (survivors, timeouts, untested): "
                         "after adding tests")
    a = ap.parse_args(argv)
    mutmut = [sys.executable, "-m", "mutmut"]
    equivalent = equivalents(EQUIVALENTS.read_text(encoding="utf-8"))
    unknown = sorted(k for k in equivalent if target_of(k) is None)
    for name in unknown:
        print(f"  equivalent in docs/howto/mutation.md of no target: {name}")
    codes = []
    for target in TARGETS if a.target == "all" else [a.target]:
        d = workdir(target)
        status = stored(mutmut, d, target)
        if not a.no_run:
            before = status
            run = [*mutmut, "run", "--max-children", str(a.max_children)]
            subprocess.run(run, cwd=d, check=True)
            status = stored(mutmut, d, target)
            # mutmut tests a mutant once and keeps its result while its function is unchanged: a
            # test added since sees the mutant only when it is named again
            again = sorted(k for k, v in status.items()
                           if v != "killed" and before.get(k, "not checked") != "not checked") if a.retest else []
            if again:
                subprocess.run([*run, *again], cwd=d, check=True)
                status = stored(mutmut, d, target)
        if not status:
            print(f"no mutmut results for {target} in {d.relative_to(ROOT)}/mutants: run without --no-run first",
                  file=sys.stderr)
            codes.append(2)
            continue
        s = report(target, status, equivalent)
        codes.append(0 if s["score"] >= TARGET else 1)
    return max(codes + [1 if unknown else 0])


if __name__ == "__main__":
    sys.exit(main())
