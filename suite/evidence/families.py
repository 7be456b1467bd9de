"""The Shakespeare families' evidence: the document's full configurations, trained on whatever
device is here and recorded one run per file, ``fixtures/evidence/<family>/<arm>-seed<n>.json``
(a grid point's under ``<family>/explore/<point>/``). A kind of the evidence store
(suite/evidence/store.py); ``python -m suite.evidence run --family F`` records.

A run goes through the run cache, so an interrupted set resumes at the first run it had not
finished, and a run already recorded is not trained again. Without CUDA, the full-scale tests
judge these records (``recorded_runs``); with CUDA they train afresh.
"""
import functools
import json
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

from experiments import data, train
from experiments.data import split
from claimcheck.rules import declared_prefix
from suite import catalogue
from suite.diagnosis_grids import GRIDS
from suite.evidence import schema, store
from suite.scales import Runs

NAME = "families"
REPLAYS = True
COMMAND = "python -m suite.evidence run --family <family>"

# family -> the Scale (suite/scales.py) its records are made with; a Scale names its family
FAMILIES = {"ladder": catalogue.LADDER_FULL, "sqrt": catalogue.SQRT_FULL, "norm": catalogue.NORM_FULL,
            "positions": catalogue.POS_FULL, "sqrt-ladder": catalogue.SQRT09_FULL}

def family_scale(family: str, point: str = ""):
    """The Scale a family's records are made with; with ``point``, that grid point's variant."""
    if not point:
        return FAMILIES[family]
    for scale in points_of(family):
        if scale.name == point:
            return scale
    raise KeyError(f"{family} has no grid point {point!r}; its points: "
                   f"{', '.join(s.name for s in points_of(family)) or 'none'}")


def points_of(family: str) -> list:
    """The Scale of every grid point recorded under the family's explore/ (suite/diagnosis_grids.py),
    once each; a point is named '<scale>@<setting>=<value>' and so is its folder."""
    return [s for s in store.trained_points(GRIDS) if family_of(s.name) == family]


# scales made of a family's arms on more seeds: they read (and are recorded into) its records
SUBSETS = (catalogue.SQRT32_FULL, catalogue.SQRT1024_FULL, catalogue.SQRT_WORTH_FULL, catalogue.SQRT12_FULL, catalogue.LADDER_LN_FULL, catalogue.DEPTH_FULL,
           catalogue.NORM07_FULL)


def family_of(scale_name: str) -> str:
    """The family a Scale's records live in; a grid point's Scale is named '<scale>@<point>'."""
    named = {s.name: f for f, s in FAMILIES.items()}
    named.update({s.name: s.family for s in SUBSETS})
    return named[scale_name.split("@")[0]]


def point_of(scale_name: str) -> str:
    """The grid point a Scale records (its whole name, '<scale>@<setting>=<value>'), or '' for a
    family's own configuration."""
    return scale_name if "@" in scale_name else ""


def path(family: str, arm: str, seed: int, point: str = "") -> Path:
    where = store.EVIDENCE / family / "explore" / point if point else store.EVIDENCE / family
    return where / f"{arm}-seed{seed}.json"


def config_of(spec) -> dict:
    """What determines a run, as the record keeps it (the code is checked by replay instead)."""
    return json.loads(json.dumps({"model": asdict(spec.model), "train": asdict(spec.train), "corpus": spec.corpus,
                                  "vocab_size": spec.vocab_size, "train_slice": spec.train_slice}, default=list))


# Settings that change how often a run is evaluated and nothing else: evaluation draws no random
# numbers and leaves the weights as they were (experiments/train.py perplexities: eval mode, no
# grad), so the run evaluated every 50 steps is, step for step, the run evaluated at its end only
# (tests/test_experiments_train.py proves it bit for bit, dropout on). A grid point that differs
# from its family only there (the norm grid's curve, suite/diagnosis_grids.py) records the family's own
# record of that seed too, when it is missing: one training, not two.
EVAL_ONLY = ("eval_every",)


def _without_eval(cfg: dict) -> dict:
    return {**cfg, "train": {k: v for k, v in cfg["train"].items() if k not in EVAL_ONLY}}


def same_run(family: str, point: str, arm: str, seed: int) -> bool:
    """Whether ``point``'s run of (arm, seed) is the family's own run of a seed it declares,
    only evaluated more often (EVAL_ONLY)."""
    if not point:
        return False
    own, var = family_scale(family), family_scale(family, point)
    if arm not in own.arms or seed not in own.seeds:
        return False
    a, b = config_of(own.spec(arm, (seed,))), config_of(var.spec(arm, (seed,)))
    return a != b and _without_eval(a) == _without_eval(b)


def evaluated_at_end(rec: dict) -> dict:
    """``rec`` (a run's result) as the same run evaluated at its last step only reports it: the
    curve cut to its last point, whose loss is the mean over every step (a curve point's loss is
    the mean since the point before)."""
    c = rec["curve"]
    edges = [0, *c["step"]]
    mean = sum(loss * (b - a) for loss, a, b in zip(c["loss"], edges, edges[1:])) / c["step"][-1]
    return {**rec, "curve": {"step": c["step"][-1:], "train_ppl": c["train_ppl"][-1:],
                             "val_ppl": c["val_ppl"][-1:], "loss": [mean]}}


def make_record(family: str, arm: str, seed: int, spec, rec: dict, point: str = "", same_run_as: str = "") -> dict:
    """A record of one run; ``same_run_as`` names the grid point's record whose run this is
    (``same_run``), in the provenance."""
    return {
        "family": family, **({"point": point} if point else {}), "arm": arm, "seed": seed,
        "scale": family_scale(family, point).name, "config": config_of(spec),
        "result": {k: rec[k] for k in ("val_ppl", "train_ppl", "curve", "trace", "val_ppl_at_length")},
        "first_losses": rec["first_losses"],
        "provenance": store.provenance(spec.device, rec["wall_s"], tokens_per_s=rec["tokens_per_s"],
                                       **({"same_run_as": same_run_as} if same_run_as else {}),
                                       **({"step": rec["step"]} if rec.get("step", "eager") != "eager" else {})),
    }


def recorded_seeds(scale) -> tuple[int, ...]:
    """The seeds recorded for every arm; while a family is being recorded, its first seed
    (the document reports one run of each), read arm by arm as they land."""
    fam, point = family_of(scale.name), point_of(scale.name)
    full = tuple(s for s in scale.seeds if all(path(fam, a, s, point).is_file() for a in scale.arms))
    return full or scale.seeds[:1]


def read(scale, arms) -> dict:
    """arm -> the records of ``scale``'s recorded seeds; a missing record skips naming the
    command that records it, a broken or stale one fails."""
    fam, point, seeds, out = family_of(scale.name), point_of(scale.name), recorded_seeds(scale), {}
    cmd = command(fam, point)
    for arm in arms:
        out[arm] = []
        for seed in seeds:
            try:
                rec = load(fam, arm, seed, point)
            except store.InvalidRecord as e:  # a broken record fails; it never reads as a divergence
                pytest.fail(str(e), pytrace=False)
            if rec is None:
                raise pytest.skip.Exception(  # reported at the test that read the arm
                    f"no full-scale evidence for {scale.name}/{arm} seed {seed}, and no CUDA to train it: run "
                    f"`{cmd}`, or the gpu tier on CUDA",
                    _use_item_location=True)
            if rec["config"] != config_of(scale.spec(arm, (seed,))):
                pytest.fail(f"stale evidence {path(fam, arm, seed, point).name} of {fam}: it was "
                            f"recorded with another configuration than {scale.name}'s; delete it and rerun "
                            f"`{cmd}`", pytrace=False)
            prov = rec["provenance"]
            out[arm].append({**rec["result"], "seed": seed, "wall_s": prov["wall_s"], "device": prov["device"],
                             "evidence": store.evidence_of(rec)})
    return out


def recorded_runs(scale) -> Runs:
    """A full scale's runs read from its committed records (never trained here)."""
    return Runs(scale, functools.partial(read, scale), recorded_seeds(scale))


# ---- the record's schema: a record nobody can quietly edit ------------------------------------

def problems(rec) -> list[str]:
    """Every way ``rec`` breaks the evidence schema, each naming its field: its shape first
    (schema.FamilyRecord: types, ranges, the provenance), then what ties its fields together (the
    curve's lists of one length, its last point equal to the final values, a trace from step 0)
    and what the catalogue says (the family, the point, the arm, the steps its scale trains).
    Empty for a sound record."""
    out = schema.problems(schema.FamilyRecord, rec)
    if out:
        return out
    if bad := schema.one_of(rec, "family", FAMILIES):
        return bad
    res, curve, trace = rec["result"], rec["result"]["curve"], rec["result"]["trace"]
    lengths = {k: len(curve[k]) for k in ("step", "train_ppl", "val_ppl", "loss")}
    if len(set(lengths.values())) > 1:
        return [f"result.curve: its lists differ in length {lengths}"]
    out += [f"result.{k}: {res[k]!r} disagrees with its own curve's last point {curve[k][-1]!r}"
            for k in ("train_ppl", "val_ppl") if curve[k][-1] != res[k]]
    if trace is not None and (len(trace["step"]) != len(trace["loss"]) or trace["step"][:1] != [0]
                              or trace["loss"][:1] != [None] or None in trace["loss"][1:]):
        out.append("result.trace: step starts at 0, with a loss per step: null at step 0, then numbers")
    try:
        scale = family_scale(rec["family"], rec.get("point") or "")
    except KeyError as e:
        return out + [f"point: {e.args[0]}"]
    if bad := schema.one_of(rec, "arm", scale.arms):
        return out + bad
    steps = scale.trains.get(rec["arm"], scale.train).steps
    if curve["step"][-1] != steps:
        out.append(f"result.curve.step: ends at {curve['step'][-1]}, but {scale.name} trains {steps} steps "
                   "(an interrupted run?)")
    return out


def load(family: str, arm: str, seed: int, point: str = "") -> dict | None:
    """The record of (family, arm, seed[, point]), or None; InvalidRecord names the file and field."""
    return store.read(path(family, arm, seed, point), problems, command(family, point))


def command(family: str, point: str = "") -> str:
    """The command that records a family's runs (or a grid point's)."""
    return f"python -m suite.evidence run --family {family}" + (f" --point '{point}'" if point else "")


def record_paths(explore: bool = True) -> list[Path]:
    """Every committed record: the families' own, then (``explore``) their grid points'."""
    own = sorted(p for p in store.EVIDENCE.glob("*/*.json") if p.parent.name in FAMILIES)  # not measured/
    grid = sorted(p for p in store.EVIDENCE.glob("*/explore/*/*.json")  # the Winograd task's are its own
                  if p.relative_to(store.EVIDENCE).parts[0] in FAMILIES)  # (suite/evidence/winograd.py)
    return own + (grid if explore else [])


def records(explore: bool = False) -> list[dict]:
    """Every record, read (a file that is not JSON: InvalidRecord naming it)."""
    return [store.read_json(p, COMMAND) for p in record_paths(explore)]


def replay_groups(paths: list[Path] | None = None) -> list[list[Path]]:
    """The records that differ only in their seed: the same family, point and arm (so the same
    configuration, which the fast tier checks record by record) made by the same code
    (``provenance.code``) on the same kind of device and torch (a GPU's record replays on the CPU
    for itself). Each group's highest seed comes first: the slow tier replays it for the group,
    so its cost grows with configurations, code versions and devices, not with seeds. The
    highest, because seed 0 is the one a seed-dependent change is likeliest to spare."""
    groups: dict[tuple, list[tuple[int, Path]]] = {}
    for p in record_paths() if paths is None else paths:
        try:
            rec = store.read_json(p, COMMAND)
            pv = rec["provenance"]
            key = (rec["family"], rec.get("point", ""), rec["arm"], pv["code"], pv["device"].split(":")[0], pv["torch"])
        except (store.InvalidRecord, KeyError, TypeError, AttributeError):
            key = ("unreadable", str(p))  # a group of its own: its replay fails, naming the file
            rec = {"seed": 0}
        groups.setdefault(key, []).append((rec["seed"], p))
    return [[p for _, p in sorted(g, key=lambda sp: -sp[0])] for g in groups.values()]


# ---- what is missing, and its cost ----------------------------------------------------------

# What to record first when time is short (a lent GPU's minutes): the seeds a verdict waits for,
# then the diagnosis grids, then the rest. The norm family's seeds, which its verdicts wait for,
# come with its grid's stated point (``same_run``), so the family itself is last.
FIRST = ("sqrt09-full", "depth-full", "ladder-ln-full")
LAST = ("norm-full", "sqrt-full", "pos-full", "sqrt32-full", "sqrt1024-full", "ladder-full")


def wanted(scale) -> tuple[int, ...]:
    """The seeds of ``scale`` to record now: a scheduled scale's (catalogue.SCHEDULED) up to its next
    look, never past it (a look may decide its claims), and none once its claims are all decided
    (store.decided); any other scale's every declared seed."""
    if scale.name not in catalogue.SCHEDULED:
        return scale.seeds
    schedule, claims = catalogue.SCHEDULED[scale.name]
    if store.decided(claims):  # every claim decided at an earlier look: no look is left to take
        return ()
    fam, point = family_of(scale.name), point_of(scale.name)
    have = [s for s in scale.seeds if all(load(fam, a, s, point) is not None for a in scale.arms)]
    n = declared_prefix(have, scale.seeds)
    nxt = next((k for k in schedule.looks if k > n), None)
    return scale.seeds[:nxt] if nxt else ()


def claims_of(scale) -> tuple[str, ...]:
    """What a scale's records decide: the claims of its next look (catalogue.SCHEDULED), or, for a
    diagnosis grid's point, the kinds of the claims whose grids hold it ("kind of NORM-04")."""
    if scale.name in catalogue.SCHEDULED:  # those its committed verdicts leave undecided
        return tuple(c for c in catalogue.SCHEDULED[scale.name][1] if not store.decided((c,)))
    return tuple(f"kind of {cid}" for cid, g in GRIDS.items() if any(p.scale.name == scale.name for p in g.trained()))


def step_walls() -> list[tuple[str, str, float]]:
    """(family, arm, seconds a step) of every recorded one-thread CPU run."""
    return [(r["family"], r["arm"], r["provenance"]["wall_s"] / max(1, r["config"]["train"]["steps"]))
            for r in records() if r["provenance"]["device"] == "cpu" and "(1 threads)" in r["provenance"]["device_name"]]


def cost_s(fam: str, point: str, arm: str, seeds, walls=None) -> float:
    """Seconds of one CPU thread to record ``seeds`` of an arm: the median wall of its recorded
    one-thread CPU runs, else of its family's, scaled by steps; else 0.05 s a step (a guess).
    ``walls``: ``step_walls()``, read once for many rows."""
    walls = step_walls() if walls is None else walls
    per_step = [w for f, a, w in walls if f == fam and a == arm] or [w for f, _, w in walls if f == fam]
    rate = float(np.median(per_step)) if per_step else 0.05
    return rate * steps_of(fam, point, arm) * len(seeds)


def todo() -> list[tuple[str, str, str, tuple[int, ...]]]:
    """(family, point, arm, missing seeds) of ``pending_rows``."""
    return [row[1:] for row in pending_rows()]


def pending_rows() -> list[tuple]:
    """Every (family, point, arm, missing seeds) that some Scale or grid point declares and no
    record holds yet, in the order to record them (FIRST, the grids, LAST); a family's seed that a
    grid point records with its own (``same_run``) is listed at the point only. A scheduled
    scale's seeds stop at its next look (``wanted``)."""
    named = {s.name: s for s in [*FAMILIES.values(), *SUBSETS]}
    points = [p for g in GRIDS.values() for p in g.trained()]
    points = [p.scale for p in sorted(points, key=lambda p: not p.supersedes)]  # second looks decide most: first
    order = [named[n] for n in FIRST] + points + [named[n] for n in LAST]
    order += [s for s in named.values() if s not in order]
    out, seen = [], set()
    for scale in order:
        fam, point = family_of(scale.name), point_of(scale.name)
        for arm in scale.arms:
            missing = tuple(s for s in wanted(scale) if (fam, point, arm, s) not in seen
                            and load(family_of(scale.name), arm, s, point) is None)
            seen.update((fam, point, arm, s) for s in wanted(scale))
            seen.update((fam, "", arm, s) for s in missing if same_run(fam, point, arm, s))  # recording them records these
            if missing:
                out.append((scale, fam, point, arm, missing))
    return out


def ranked_rows() -> list[tuple]:
    """``pending_rows`` as ``(claims, CPU hours, scale, family, point, arm, seeds)``, most claims
    decided per CPU-hour first, a scale's rows kept together (the arms of one look decide
    together): the order ``pending`` prints and ``record_pending`` records."""
    walls = step_walls()
    rows = [(claims_of(scale), cost_s(fam, point, arm, seeds, walls) / 3600, scale, fam, point, arm, seeds)
            for scale, fam, point, arm, seeds in pending_rows()]
    look = {}
    for claims, hours, *_ in rows:
        look[claims] = look.get(claims, 0.0) + hours
    return sorted(rows, key=lambda r: -(len(r[0]) / look[r[0]]) if r[0] and look[r[0]] else 0.0)


def steps_of(fam: str, point: str, arm: str) -> int:
    """The training steps of one arm of a family (or grid point)."""
    scale = family_scale(fam, point)
    return scale.trains.get(arm, scale.train).steps


def pending() -> list[store.Pending]:
    """What the scales, schedules and grids declare and no record holds, most claims decided per
    CPU-hour first (``ranked_rows``, the order ``pending --record`` trains in)."""
    return [store.Pending(fam, point or scale.name, arm, tuple(seeds), command(fam, point), hours, tuple(claims))
            for claims, hours, scale, fam, point, arm, seeds in ranked_rows()]


def read_record(path: Path) -> dict:
    """The record at ``path``; a broken one names the command that records its family (or point)."""
    parts = path.relative_to(store.EVIDENCE).parts if path.is_relative_to(store.EVIDENCE) else ()
    how = command(parts[0], parts[2] if parts[1:2] == ("explore",) else "") if parts else COMMAND
    return store.read(path, problems, how)


@functools.cache
def _tokens():
    return data.bpe_tokens("tinyshakespeare", 1024)[0]


def replay(rec: dict) -> tuple[float, float]:
    """``replay_movement`` on the corpus every family trains on."""
    return replay_movement(rec, _tokens())


def replay_movement(rec: dict, tokens) -> tuple[float, float]:
    """``store.movement`` of the record's first REPLAY_STEPS training losses, retrained now with the
    current code."""
    spec = family_scale(rec["family"], rec.get("point", "")).spec(rec["arm"], (rec["seed"],))
    tr, _ = split(tokens)
    (ours,) = train.replay(spec.model, spec.train, tr[: int(spec.train_slice * len(tr))], seeds=(rec["seed"],),
                     steps=store.REPLAY_STEPS)
    return store.movement(ours, rec["first_losses"][:store.REPLAY_STEPS])
