"""The evidence store's one command line.

    python -m suite.evidence status                    what is recorded
    python -m suite.evidence pending [--record ...]    what is declared and not recorded (and record it)
    python -m suite.evidence run --family F [...]      record a family's full-scale runs
    python -m suite.evidence grid CLAIM [...]          record a claim's diagnosis grid (any kind)
    python -m suite.evidence lab [POINT ...]           record the Polish lab's grid points
    python -m suite.evidence winograd [POINT ...]      record the Winograd task's grid points
    python -m suite.evidence measured [SCALE ...]      measure and record (NORM-03, COST-09, TINY-10)
    python -m suite.evidence replay [PATH ...]         retrain every record's first steps
    python -m suite.evidence spread [--all]            measure new records' replay spread

An entry point: the settings are read here, before the catalogue's seeds are.
"""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

from suite import settings
from suite.evidence import store


def _cuda() -> bool:
    return torch.cuda.is_available()


def _parser(families, recording) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m suite.evidence", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    device = "cuda" if _cuda() else "cpu"
    r = sub.add_parser("run", help="train a family's full-scale runs and record them")
    r.add_argument("--family", required=True, choices=list(families.FAMILIES))
    r.add_argument("--seeds", default="0", help="comma-separated, e.g. 0,1,2 (default 0)")
    r.add_argument("--arms", default="", help="comma-separated arm names (default: every arm)")
    r.add_argument("--device", default=device)
    r.add_argument("--point", default="", help="a grid point of the family (suite/diagnosis_grids.py), "
                                               "recorded under explore/")
    r.add_argument("--stack", action="store_true", help="train an arm's seeds side by side (on a GPU)")
    g = sub.add_parser("grid", help="record every point of a claim's diagnosis grid (suite/diagnosis_grids.py)")
    g.add_argument("claim")
    g.add_argument("--device", default=device)
    g.add_argument("--stack", action="store_true", help="train an arm's seeds side by side (on a GPU)")
    q = sub.add_parser("pending", help="list what the scales and grids declare and no record holds; with "
                                       "--record, train the families' within --budget-s (a lent GPU's script)")
    q.add_argument("--record", action="store_true")
    q.add_argument("--budget-s", type=float, default=recording.RECORD_BUDGET_S)
    q.add_argument("--device", default=device)
    q.add_argument("--no-stack", action="store_true", help="train seeds one at a time (the CPU's faster way)")
    for kind in ("lab", "winograd"):
        k = sub.add_parser(kind, help=f"record the {kind} grid points not yet recorded (CPU)")
        k.add_argument("points", nargs="*", help="only these points (default: every one)")
    m = sub.add_parser("measured", help="measure afresh and record catalogue.MEASURED's scales (CPU)")
    m.add_argument("scales", nargs="*", help="only these scales (default: every one)")
    sub.add_parser("status", help="list what is recorded")
    p = sub.add_parser("replay", help="retrain every record's first steps; print how far they moved")
    p.add_argument("paths", nargs="*", help="only these records (default: every one)")
    p.add_argument("--json", default="", help="also write each record's movement to this file")
    p = sub.add_parser("spread", help="replay every record not yet measured in fixtures/replay_spread.toml "
                                      "under other kernels, and add it")
    p.add_argument("--all", action="store_true", help="every record, not only the new ones")
    return ap


def all_kinds():
    """Every kind of record (store.EvidenceKind), the families first: the catalogue's seeds are
    read when these are imported, so after the settings."""
    from suite.evidence import families, lab, measured, winograd
    return families, lab, winograd, measured


def _pending(kinds) -> None:
    """Every record the scales, schedules and grids ask for: the families' with their one-thread
    CPU hours (from the recorded runs' own walls) and the claims their look decides ('-' where
    no schedule names them), most claims decided per CPU-hour first, the order ``--record``
    trains them in; then the other kinds', minutes each."""
    rows = [p for kind in kinds for p in kind.pending()]
    total = 0.0
    print(f"{'CPU h':>6} {'sum':>6}  claims its look decides | record")
    for p in (p for p in rows if p.hours is not None):
        total += p.hours
        print(f"{p.hours:6.2f} {total:6.1f}  {','.join(p.claims) or '-'} | {p.kind:<12} {p.point:<40} {p.arm:<14} "
              f"seeds {','.join(map(str, p.seeds))}")
    for p in (p for p in rows if p.hours is None):
        print(f"     -      -  - | {p.kind:<12} {p.point:<40} {p.arm}  (CPU: {p.command})")
    print(f"# {total:.1f} CPU-hours (one thread, from the recorded runs' walls) for the family records above; "
          "the lab's, Winograd's and the measured records are minutes each. On a lent GPU: "
          "`python -m suite.evidence pending --record`")


def _replay(kinds, only=(), out="") -> int:
    """Retrain the first steps of every record (or ``only`` these) of every kind that replays."""
    if only:
        wanted = {Path(p).resolve() for p in only}
    stale, movements = 0, {}
    for kind in (k for k in kinds if k.REPLAYS):
        for path in kind.record_paths():
            if only and path.resolve() not in wanted:
                continue
            rec = store.read_json(path, "python -m suite.evidence replay")
            moved = movements[str(path)] = kind.replay(rec)
            problem = store.replay_problem(moved, store.replay_rtol(path))
            stale += bool(problem)
            if out:  # as it goes: a long replay that is stopped keeps what it measured
                Path(out).write_text(json.dumps(movements))
            print(f"{store.shown(path)}: at initialisation {moved[0]:.2e}, trained {moved[1]:.2e} "
                  f"({rec['provenance']['device_name']})" + (f": STALE, {problem}" if problem else ""), flush=True)
    print(f"{stale} stale record(s): delete each and rerun the command that records it" if stale
          else "every record replays within its tolerances (docs/reference/replay.md)")
    return 1 if stale else 0


def replay_elsewhere(paths, out: Path, kernels: dict[str, str]) -> None:
    """``replay --json out paths`` in a child process whose environment sets ``kernels`` (the
    kernels are chosen when torch loads, so not in this process)."""
    subprocess.run([sys.executable, "-m", "suite.evidence", "replay", "--json", str(out), *map(str, paths)],
                   env=settings.child_environ(kernels), check=False)  # a stale line there is what this measures


def _spread(kinds, every: bool) -> int:
    """Replay, in a child process under each of store.SPREAD_KERNELS, every record SPREAD has not
    measured under it (or every one), and merge how far they moved into it."""
    paths = [p for kind in kinds if kind.REPLAYS for p in kind.record_paths()]
    if not (paths if every else store.unmeasured(paths)):
        print(f"every record's spread is in {store.shown(store.SPREAD)}")
        return 0
    for setting, env in store.SPREAD_KERNELS.items():
        if not (todo := paths if every else store.unmeasured(paths, setting)):
            continue
        kernels = " ".join(f"{k}={v}" for k, v in env.items())
        print(f"replaying {len(todo)} record(s) under {kernels}", flush=True)
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "moved.json"
            replay_elsewhere(todo, out, env)
            moved = {Path(p): tuple(m) for p, m in json.loads(out.read_text()).items()} if out.exists() else {}
        if not moved:
            raise SystemExit(f"error: the replay under {kernels} measured nothing; its output is above")
        store.add_spreads(moved, {"kernels": kernels, "machine": store.cpu_model(),
                                  "threads": int(env.get("OMP_NUM_THREADS", torch.get_num_threads())),
                                  "torch": torch.__version__,
                                  "code": store.commit(),
                                  "date": store.datetime.now(store.timezone.utc).strftime("%Y-%m-%d")}, setting)
        print(f"{len(moved)} record(s) measured under {setting}; {store.shown(store.SPREAD)} updated")
        if left := store.unmeasured(todo, setting):  # the child stopped part-way: say so, and fail
            print(f"error: {len(left)} record(s) not measured under {kernels}, e.g. {store.shown(left[0])}; "
                  "the child's output is above")
            return 1
    return 0


def _grid(claim: str, device: str, stack: bool, recording, lab, winograd) -> None:
    from suite.diagnosis_grids import GRIDS, LAB_GRIDS, WINOGRAD_GRIDS  # the catalogue's seeds: after the settings
    if claim in LAB_GRIDS:
        lab.record(tuple(p.scale.name for p in LAB_GRIDS[claim].trained()))
    elif claim in WINOGRAD_GRIDS:
        winograd.record(tuple(p.scale.name for p in WINOGRAD_GRIDS[claim].trained()))
    elif claim in GRIDS:
        recording.record_grid(claim, device, stack)
    else:
        raise SystemExit(f"error: no diagnosis grid for {claim}; grids: "
                         f"{', '.join([*GRIDS, *LAB_GRIDS, *WINOGRAD_GRIDS])}")


def main(argv=None) -> int:
    settings.exit_on_problem(settings.load())  # one line for a bad variable, before any seed is read
    try:
        return _main(argv)
    except store.InvalidRecord as e:  # a broken record: its one line, never a traceback
        raise SystemExit(f"error: {e}") from None


def _main(argv) -> int:
    from suite.evidence import families, lab, recording, winograd  # the catalogue's seeds: after the settings
    a = _parser(families, recording).parse_args(argv)
    kinds = all_kinds()
    if a.cmd == "status":
        recording.status()
        for kind in kinds[1:]:
            print(f"{kind.NAME:<10} {len(kind.record_paths())} record(s), {len(kind.pending())} pending")
    elif a.cmd == "replay":
        return _replay(kinds, a.paths, a.json)
    elif a.cmd == "spread":
        return _spread(kinds, a.all)
    elif a.cmd == "grid":
        _grid(a.claim, a.device, a.stack, recording, lab, winograd)
    elif a.cmd == "pending":
        if a.record:
            recording.record_pending(a.device, a.budget_s, not a.no_stack)
        else:
            _pending(kinds)
    elif a.cmd == "measured":
        from suite.evidence import measured
        try:
            measured.record(tuple(a.scales))
        except KeyError as e:
            raise SystemExit(f"error: {e.args[0]}") from None
    elif a.cmd in ("lab", "winograd"):
        {"lab": lab, "winograd": winograd}[a.cmd].record(tuple(a.points))
    else:
        recording.run(a.family, [int(s) for s in a.seeds.split(",")], [x for x in a.arms.split(",") if x], a.device,
                     point=a.point, stack=a.stack)
    return 0


if __name__ == "__main__":
    sys.exit(main())
