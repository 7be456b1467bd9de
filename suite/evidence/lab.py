"""The Polish lab's grid evidence, a kind of the evidence store (suite/evidence/store.py): the
trained points of ``suite.diagnosis_grids.LAB_GRIDS``, each the lab's 100 starts (5 excerpts x
20 seeds) with positions, trained on the CPU and recorded with its provenance:

    fixtures/evidence/lab/explore/<point>/positions.json
    python -m suite.evidence lab [POINT ...]      # record what is not yet recorded

The stated point is the verdict's own runs, which the slow tier trains. A record is checked
against its schema in the fast tier, and the first steps of its runs are retrained in the slow
tier (tests/test_evidence_lab.py).
"""
import json
import math
import time
from dataclasses import asdict, replace

import numpy as np
import pytest

from claimcheck.progress import tracker
from experiments.polish_lab import LabConfig, train_runs, with_positions
from experiments.train import FIRST_LOSSES
from suite import settings
from suite.diagnosis_grids import LAB_GRIDS
from suite.evidence import store
from suite.lab_scale import LabRuns

FAMILY = "lab"
ARM = "positions"  # TINY-14 and -16 read the lab with positions only
COMMAND = "python -m suite.evidence lab"


def points() -> list:
    """Every trained point's LabScale, once."""
    return store.trained_points(LAB_GRIDS)


def path(point: str):
    return store.EVIDENCE / FAMILY / "explore" / point / f"{ARM}.json"


def record_paths() -> list:
    return sorted((store.EVIDENCE / FAMILY / "explore").glob(f"*/{ARM}.json"))


def config(scale, exs) -> dict:
    """What determines a point's runs, as its record keeps it: the lab's config with positions,
    the suite's own seeds (records are made without CLAIMS_SEED_OFFSET) and the excerpts' hashes."""
    return json.loads(json.dumps({"lab": asdict(with_positions(scale.config, True)),  # as JSON keeps it
                                  "seeds": [s - settings.current().seed_offset for s in scale.seeds],
                                  "excerpts": [ex.sha256 for ex in exs]}))


def pending(names=()) -> list:
    """The points declared and not recorded (of ``names``, if given), in declaration order."""
    return [s for s in points() if not path(s.name).is_file() and (not names or s.name in names)]


def record(names=(), log=print) -> list:
    """Train and record every trained point not yet recorded (of ``names``, if given)."""
    store.check_points("lab", names, [s.name for s in points()])
    todo = pending(names)
    log(f"lab: {len(todo)} point(s) to train on cpu")
    written = []
    for scale in todo:
        exs, start = scale.texts(), time.perf_counter()
        cfg = with_positions(scale.config, True)
        pairs = [(ex, s) for ex in exs for s in scale.seeds]
        result = train_runs(cfg, pairs, keep_loss=True, progress=tracker(f"{scale.name}/{len(pairs)} runs", cfg.steps))
        result["first_losses"] = [losses[:FIRST_LOSSES] for losses in result.pop("loss")]
        rec = {"family": FAMILY, "point": scale.name, "arm": ARM, "config": config(scale, exs), "result": result,
               "provenance": store.provenance("cpu", time.perf_counter() - start)}
        store.write(path(scale.name), rec)
        log(f"  {scale.name}: {len(pairs)} runs, {rec['provenance']['wall_s'] / 60:.1f} min -> {path(scale.name)}")
        written.append(path(scale.name))
    return written


# ---- the schema ------------------------------------------------------------------------------

def problems(rec) -> list[str]:
    """Every way ``rec`` breaks the lab record's schema, each naming its field; empty for a sound
    record. One run per (excerpt, seed), a perplexity >= 1 at every checkpoint of each part, the
    first training losses of every run, and the provenance."""
    if not isinstance(rec, dict):
        return [f"record: an object expected, got {type(rec).__name__}"]
    out = [] if rec.get("family") == FAMILY else [f"family: {FAMILY!r} expected, got {rec.get('family')!r}"]
    scales = {s.name: s for s in points()}
    if not isinstance(rec.get("point"), str) or rec["point"] not in scales:
        return out + [f"point: one of {', '.join(scales)} expected, got {rec.get('point')!r:.60}"]
    if rec.get("arm") != ARM:
        return out + [f"arm: {ARM!r} expected, got {rec.get('arm')!r:.60}"]
    scale = scales[rec["point"]]
    want = config(scale, scale.texts())
    if rec.get("config") != want:
        return out + [f"config: the point's settings expected ({want['lab']}), got {rec.get('config')!r:.80}"]
    res = rec.get("result")
    if not isinstance(res, dict):
        return out + ["result: an object expected"]
    runs = [[e, s] for e in range(len(want["excerpts"])) for s in want["seeds"]]
    if res.get("runs") != runs:
        out.append("result.runs: one run per (excerpt, seed), excerpts outer, expected")
    if res.get("checkpoints") != list(want["lab"]["checkpoints"]):
        out.append(f"result.checkpoints: {want['lab']['checkpoints']} expected, got {res.get('checkpoints')!r:.60}")
    for part in ("train", "val", "test"):
        rows = res.get(part)
        if not (isinstance(rows, list) and len(rows) == len(runs) and all(
                isinstance(r, list) and len(r) == len(want["lab"]["checkpoints"])
                and all(isinstance(x, float) and math.isfinite(x) and x >= 1 for x in r) for r in rows)):
            out.append(f"result.{part}: per run, a perplexity >= 1 at every checkpoint expected")
    first = res.get("first_losses")
    if not (isinstance(first, list) and len(first) == len(runs) and all(
            isinstance(r, list) and len(r) == FIRST_LOSSES
            and all(isinstance(x, float) and math.isfinite(x) and x > 0 for x in r) for r in first)):
        out.append(f"result.first_losses: per run, {FIRST_LOSSES} finite positive losses expected")
    return out + store.provenance_problems(rec.get("provenance"))


def load(point: str) -> dict | None:
    """The record, or None; InvalidRecord names the field it breaks."""
    return store.read(path(point), problems, COMMAND, {"point": point, "arm": ARM})


def point_runs(scale, stated: LabRuns) -> LabRuns:
    """A point's runs, from its record (with positions only); a missing record skips naming the
    command, a broken one fails (never a divergence)."""
    try:
        rec = load(scale.name)
    except store.InvalidRecord as e:
        pytest.fail(str(e), pytrace=False)
    if rec is None:
        raise pytest.skip.Exception(f"no lab evidence for {scale.name}: run `{COMMAND}`", _use_item_location=True)
    if settings.current().seed_offset:
        raise pytest.skip.Exception(f"lab evidence for {scale.name} is recorded at seeds {rec['config']['seeds']}; "
                                    f"CLAIMS_SEED_OFFSET={settings.current().seed_offset} moves the suite's", _use_item_location=True)
    runs = scale.read(stated.excerpts, {True: rec["result"]})
    runs.evidence.add(store.evidence_of(rec))
    return runs


def replay_movement(rec: dict) -> tuple[float, float]:
    """``store.movement`` of every run's first REPLAY_STEPS training losses, retrained now
    with the current code."""
    scale = {s.name: s for s in points()}[rec["point"]]
    exs = scale.texts()
    lab = rec["config"]["lab"]
    cfg = replace(LabConfig(**{**lab, "checkpoints": tuple(lab["checkpoints"])}), steps=store.REPLAY_STEPS, checkpoints=())
    pairs = [(exs[e], s) for e, s in rec["result"]["runs"]]
    ours = np.array(train_runs(cfg, pairs, keep_loss=True)["loss"])  # (runs, store.REPLAY_STEPS)
    return store.movement(ours, np.array(rec["result"]["first_losses"])[:, :store.REPLAY_STEPS])
