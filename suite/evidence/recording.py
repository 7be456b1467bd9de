"""Training and recording the families' full-scale runs (suite/evidence/families.py holds their
records, and what they still lack): ``run`` records what is missing of a family's arms and seeds,
``record_pending`` records what ``families.ranked_rows`` lists within a time budget (a lent
GPU's script), ``record_grid`` a claim's diagnosis grid. A run goes through the run cache, so an
interrupted set resumes at the first run it had not finished. Several processes may record at
once (one per core, say): each record is claimed while it trains, and a process passes over a
record another holds, coming back to it at the end of the row (``run``) or, for
``record_pending`` and ``record_grid``, after every other row (``record_held``).
"""
import contextlib
import hashlib
import sys
import time
from pathlib import Path

import torch
from filelock import FileLock, Timeout
from tqdm import tqdm

from experiments import runs
from experiments.data import cache_dir
from suite.diagnosis_grids import GRIDS
from suite.evidence import store
from suite.evidence.families import (FAMILIES, evaluated_at_end, family_of, family_scale, load, make_record,
                                     path, point_of, ranked_rows, records, same_run, steps_of)


def _bar(total_steps: int, done_before: list):
    """``progress(label, steps)`` for the run cache: a tqdm bar per run, and the set's ETA."""
    start = time.perf_counter()

    def progress(label, steps):
        bar = tqdm(total=steps, desc=label, unit="step", leave=False, file=sys.stderr)

        def step(n):
            bar.update(1)
            if n % 50 == 0 or n == steps:
                done = done_before[0] + n
                rate = done / (time.perf_counter() - start)
                bar.set_postfix_str(f"set ETA {(total_steps - done) / rate / 60:.0f} min")
            if n == steps:
                bar.close()
                done_before[0] += steps
        return step
    return progress


def run(family: str, seeds, arms=None, device="cpu", log=print, point: str = "", stack: bool = False,
        held: list | None = None) -> list[Path]:
    """Train and record what is missing of (arms x seeds); ``stack`` trains an arm's missing
    seeds side by side (a GPU step is launch-bound: seeds cost little more than one). Seeds
    another process is recording are waited for at the end, or, given a ``held`` list, added to
    it as ``(family, point, arm, seeds)`` for the caller to come back to (``record_held``)."""
    try:
        scale = family_scale(family, point)
    except KeyError as e:
        raise SystemExit(f"error: {e.args[0]}") from None
    arms = arms or list(scale.arms)
    unknown = [a for a in arms if a not in scale.arms]
    if unknown:
        raise SystemExit(f"error: {family} has no arm {', '.join(unknown)}; its arms: {', '.join(scale.arms)}")
    todo = [(a, s) for a in arms for s in seeds if load(family, a, s, point) is None]
    store.commit()  # read now, before a long set: a commit made meanwhile is not this code
    groups = {}
    for arm, seed in todo:  # an arm's missing seeds, together or one by one
        groups.setdefault((arm, None) if stack else (arm, seed), []).append(seed)
    steps = sum(scale.trains.get(a, scale.train).steps for a, _ in groups)
    log(f"{family}: {len(todo)} run(s) to train on {device} ({torch.get_num_threads()} threads), "
        f"{len(arms) * len(seeds) - len(todo)} already recorded")
    progress, written, passed = _bar(steps, [0]), [], []
    for (arm, _), group in groups.items():
        if not _record(family, arm, group, device, log, point, progress, written, wait=False):
            log(f"  {arm} seeds {group}: another process is recording them; back to them "
                + ("at the end of the set" if held is not None else "at the end of this row"))
            passed.append((arm, group))
    for arm, group in passed:  # by now most are recorded by whoever held them; else wait for them
        if held is not None:
            held.append((family, point, arm, tuple(group)))
            continue
        log(f"  {arm} seeds {group}: waiting for the process recording them")
        _record(family, arm, group, device, log, point, progress, written, wait=True)
    return written


def record_held(held: list, device: str, log, stack: bool) -> list[Path]:
    """Come back to the ``(family, point, arm, seeds)`` another process held: recorded by it
    by now, or waited for and trained if it is still missing."""
    return [w for fam, point, arm, seeds in held
            for w in run(fam, list(seeds), [arm], device=device, log=log, point=point, stack=stack)]


def claim_path(out: Path) -> Path:
    """The lock file of recording ``out``: under the cache folder, never beside the records
    (the committer commits what lands there)."""
    return cache_dir() / "recording" / f"{hashlib.sha256(str(out.resolve()).encode()).hexdigest()[:20]}.lock"


def _claim(out: Path, wait: bool):
    """A lock on recording ``out``, held until released (or its process ends, however it
    ends); None when another process holds it and ``wait`` is False."""
    lock_path = claim_path(out)
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(lock_path))
    try:
        lock.acquire(timeout=-1 if wait else 0)
    except Timeout:
        return None
    return lock


def _record(family, arm, group, device, log, point, progress, written, wait) -> bool:
    """Train and record ``group``'s seeds of ``arm`` (appending to ``written``), holding their
    claims; False, with nothing done, when another process holds one and ``wait`` is False."""
    scale = family_scale(family, point)
    with contextlib.ExitStack() as claims:
        for seed in sorted(set(group)):  # one order for every process: no two wait on each other
            lock = _claim(path(family, arm, seed, point), wait)
            if lock is None:
                return False
            claims.callback(lock.release)
        group = [s for s in group if load(family, arm, s, point) is None]  # another process may have recorded it
        if not group:
            return True
        spec = scale.spec(arm, tuple(group), device)
        for seed, rec in zip(group, runs.ensure([spec], log=lambda *_: None, progress=progress)[0]):
            out = path(family, arm, seed, point)
            one = scale.spec(arm, (seed,), device)  # the record names its own seed's config
            store.write(out, make_record(family, arm, seed, one, rec, point))
            written.append(out)
            log(f"  {arm} seed {seed}: val {rec['val_ppl']:.2f}, train {rec['train_ppl']:.2f}, "
                f"{rec['wall_s'] / 60:.1f} min -> {store.shown(out)}")
            own = path(family, arm, seed)
            if not same_run(family, point, arm, seed) or (lock := _claim(own, wait=False)) is None:
                continue  # held: another process is recording the family's own run itself
            try:
                if load(family, arm, seed) is None:
                    rec_own = make_record(family, arm, seed, family_scale(family).spec(arm, (seed,), device),
                                          evaluated_at_end(rec), same_run_as=store.shown(out))
                    store.write(own, rec_own)
                    written.append(own)
                    log(f"  {arm} seed {seed}: the same run is {family}'s own -> {store.shown(own)}")
            finally:
                lock.release()
    return True


def status(log=print):
    for family in FAMILIES:
        have = [r for r in records() if r["family"] == family]
        listed = ", ".join(f"{r['arm']}/{r['seed']} {r['result']['val_ppl']:.2f}" for r in have)
        log(f"{family:<10} {len(have)} of {len(family_scale(family).arms)} arms x seeds recorded: {listed or '-'}")


# The default budget of ``record_pending``, in seconds of training: on a lent GPU
# (tools/device_evidence.sh), 420 s leaves the machine's start and the transfers inside an
# 8-minute share of a session's 15 device minutes, with time to rerun once.
RECORD_BUDGET_S = 420


def record_pending(device="cuda", budget_s: float = RECORD_BUDGET_S, stack=True, log=print) -> list[Path]:
    """Record what ``pending`` prints, in its order (``ranked_rows``), inside the budget. Each group's time is
    predicted from the step rate measured on the groups before it (its family's, else the
    slowest seen): a group that would overrun is passed over for the next that fits, so the
    budget is spent, not left at the first large group."""
    start, written, held = time.perf_counter(), [], []
    per_step: dict[str, float] = {}  # family -> seconds per step, as measured here
    skipped = []
    for *_, fam, point, arm, seeds in ranked_rows():
        steps = steps_of(fam, point, arm)
        left = budget_s - (time.perf_counter() - start)
        rate = per_step.get(fam, max(per_step.values(), default=0.0))
        if rate * steps * 1.1 > left:  # 10 %: the step rate varies a little between arms
            skipped.append(f"{fam}/{point or '-'}/{arm} seeds {list(seeds)} (~{rate * steps:.0f} s)")
            continue
        t = time.perf_counter()
        written += run(fam, list(seeds), [arm], device=device, log=log, point=point, stack=stack, held=held)
        per_step[fam] = max(per_step.get(fam, 0.0), (time.perf_counter() - t) / steps)
    written += record_held(held, device, log, stack)  # started inside the budget by another process
    if skipped:
        log(f"budget: {budget_s - (time.perf_counter() - start):.0f} s left, {len(skipped)} group(s) not started "
            "(predicted from the step rates measured here): " + "; ".join(skipped))
    return written


def record_grid(claim: str, device="cpu", stack=False, log=print) -> list[Path]:
    """Record every point of ``claim``'s diagnosis grid that needs training, on the seeds its
    Scale declares."""
    if claim not in GRIDS:
        raise SystemExit(f"error: no diagnosis grid for {claim}; grids: {', '.join(GRIDS)}")
    written, held = [], []
    for p in GRIDS[claim].trained():
        fam, point = family_of(p.scale.name), point_of(p.scale.name)
        log(f"{claim}: point {point}")
        written += run(fam, list(p.scale.seeds), list(p.scale.arms), device=device, log=log, point=point,
                       stack=stack, held=held)  # a second look trains only the arms its rule reads
    return written + record_held(held, device, log, stack)
