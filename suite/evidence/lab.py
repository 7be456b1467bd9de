"""The Polish lab's grid evidence, a kind of the evidence store (suite/evidence/store.py): the
trained points of ``suite.diagnosis_grids.LAB_GRIDS``, each the lab's 100 starts (5 excerpts x
20 seeds) with or without positions (the arms its grids read, ``LAB_GRID_ARMS``), trained on the
CPU and recorded with its provenance:

    fixtures/evidence/lab/explore/<point>/{positions,no-positions}.json
    fixtures/evidence/lab/stated/{positions,no-positions}.json   # the verdicts' own runs
    python -m suite.evidence lab [POINT ...]      # record what is not yet recorded

The stated point is the verdicts' own runs: the slow tier trains them, and the fast tier judges
their committed records (``stated_runs``), so that ``pytest -m fast`` shows every lab verdict
without training. A record is checked
against its schema in the fast tier, and the first steps of its runs are retrained in the slow
tier (tests/test_evidence_lab.py).
"""
import json
import time
from dataclasses import asdict, replace

import numpy as np
import pytest

from claimcheck.progress import tracker
from experiments.polish_lab import LabConfig, train_runs, with_positions
from experiments.train import FIRST_LOSSES
from suite import settings
from suite.catalogue import SCHEDULED, TINY_LAB, TINY_LAB_MORE
from suite.diagnosis_grids import LAB_GRID_ARMS, LAB_GRIDS
from suite.evidence import schema, store
from suite.lab_scale import LabRuns

FAMILY = NAME = "lab"
REPLAYS = True
ARMS = {"positions": True, "no-positions": False}  # what the stated scale records: both
COMMAND = "python -m suite.evidence lab"


def points() -> list:
    """Every trained point's LabScale, once."""
    return store.trained_points(LAB_GRIDS)


def recorded_scales() -> list:
    """What has records: the stated scale and the main excerpt's later looks (both arms), and each
    trained point (the arms its grids read)."""
    return [TINY_LAB, *TINY_LAB_MORE, *points()]


def _verdicts(scale) -> bool:
    """Whether a scale's runs are a verdict's (the stated runs, the later looks): both arms."""
    return scale.name == TINY_LAB.name or any(scale.name == m.name for m in TINY_LAB_MORE)


def arms(scale) -> list[str]:
    """The arms a scale records: both for the verdicts' runs; for a grid point, those the grids
    that hold it read (``LAB_GRID_ARMS``)."""
    if _verdicts(scale):
        return list(ARMS)
    read = {a for cid, grid in LAB_GRIDS.items() if any(p.scale.name == scale.name for p in grid.trained())
            for a in LAB_GRID_ARMS[cid]}
    return [a for a in ARMS if a in read]


def path(point: str, arm: str):
    more = {m.name for m in TINY_LAB_MORE}
    where = "stated" if point == TINY_LAB.name else f"stated/{point}" if point in more else f"explore/{point}"
    return store.EVIDENCE / FAMILY / where / f"{arm}.json"


def record_paths() -> list:
    return sorted([*(store.EVIDENCE / FAMILY / "explore").glob("*/*.json"),
                   *(store.EVIDENCE / FAMILY / "stated").glob("*.json"),
                   *(store.EVIDENCE / FAMILY / "stated").glob("*/*.json")])


def config(scale, exs, arm: str) -> dict:
    """What determines a point's runs, as its record keeps it: the lab's config with or without
    positions, the declared seeds (records are made without CLAIMS_SEED_OFFSET) and the
    excerpts' hashes."""
    return json.loads(json.dumps({"lab": asdict(with_positions(scale.config, ARMS[arm])),  # as JSON keeps it
                                  "seeds": list(scale.declared_seeds),
                                  "excerpts": [ex.sha256 for ex in exs]}))


def todo(names=()) -> list:
    """The (scale, arm)s declared and not recorded (of ``names``, if given), in declaration order;
    a later look of the main excerpt only once the look before it is recorded, and only while a
    claim it serves is undecided (store.decided)."""
    out, done = [], store.decided(SCHEDULED[TINY_LAB.name][1])
    for s in recorded_scales():
        if s in TINY_LAB_MORE and done:  # every claim it serves decided at an earlier look
            continue
        if s in TINY_LAB_MORE[1:] and not all(path(p.name, a).is_file() for p in
                                              TINY_LAB_MORE[:TINY_LAB_MORE.index(s)] for a in ARMS):
            continue
        out += [(s, a) for a in arms(s) if not path(s.name, a).is_file() and (not names or s.name in names)]
    return out


def record(names=(), log=print) -> list:
    """Train and record every (scale, arm) not yet recorded (of ``names``, if given)."""
    store.check_points("lab", names, [s.name for s in recorded_scales()])
    work = todo(names)
    log(f"lab: {len(work)} (point, arm) set(s) to train on cpu")
    written = []
    for scale, arm in work:
        exs, start = scale.texts(), time.perf_counter()
        cfg = with_positions(scale.config, ARMS[arm])
        pairs = [(ex, s) for ex in exs for s in scale.seeds]
        result = train_runs(cfg, pairs, keep_loss=True, progress=tracker(f"{scale.name}/{len(pairs)} runs", cfg.steps))
        result["first_losses"] = [losses[:FIRST_LOSSES] for losses in result.pop("loss")]
        rec = {"family": FAMILY, "point": scale.name, "arm": arm, "config": config(scale, exs, arm), "result": result,
               "provenance": store.provenance("cpu", time.perf_counter() - start)}
        out = path(scale.name, arm)
        store.write(out, rec)
        log(f"  {scale.name} {arm}: {len(pairs)} runs, {rec['provenance']['wall_s'] / 60:.1f} min -> {out}")
        written.append(out)
    return written


# ---- the schema ------------------------------------------------------------------------------

def problems(rec) -> list[str]:
    """Every way ``rec`` breaks the lab record's schema, each naming its field; empty for a sound
    record. Its shape (schema.LabRecord: perplexities >= 1, finite positive first losses, the
    provenance), then the point's: its config, one run per (excerpt, seed), a perplexity at every
    checkpoint of each part, and the first training losses of every run."""
    out = schema.problems(schema.LabRecord, rec)
    if out:
        return out
    scales = {s.name: s for s in recorded_scales()}
    if bad := schema.one_of(rec, "point", scales) or schema.one_of(rec, "arm", arms(scales[rec["point"]])):
        return bad
    scale = scales[rec["point"]]
    want = config(scale, scale.texts(), rec["arm"])
    if rec["config"] != want:
        return [f"config: the point's settings expected ({want['lab']}), got {rec['config']!r:.80}"]
    res, checkpoints = rec["result"], want["lab"]["checkpoints"]
    runs = [[e, s] for e in range(len(want["excerpts"])) for s in want["seeds"]]
    if res["runs"] != runs:
        out.append("result.runs: one run per (excerpt, seed), excerpts outer, expected")
    if res["checkpoints"] != list(checkpoints):
        out.append(f"result.checkpoints: {checkpoints} expected, got {res['checkpoints']!r:.60}")
    for part in ("train", "val", "test"):
        if len(res[part]) != len(runs) or any(len(r) != len(checkpoints) for r in res[part]):
            out.append(f"result.{part}: per run, a perplexity at every checkpoint expected")
    if len(res["first_losses"]) != len(runs):
        out.append("result.first_losses: one list per run expected")
    return out


def pending() -> list[store.Pending]:
    """``todo``'s (scale, arm)s as the evidence kinds list them."""
    return [store.Pending(NAME, s.name, a, tuple(s.seeds), COMMAND) for s, a in todo()]


def read_record(path) -> dict:
    return store.read(path, problems, COMMAND)


def replay(rec) -> tuple[float, float]:
    return replay_movement(rec)


def load(point: str, arm: str) -> dict | None:
    """The record, or None; InvalidRecord names the field it breaks."""
    return store.read(path(point, arm), problems, COMMAND, {"point": point, "arm": arm})


def _record(point: str, arm: str) -> dict:
    """A record the verdicts read: a missing one skips naming the command, a broken one fails
    (never a divergence), a seed offset skips (records hold the suite's own seeds)."""
    try:
        rec = load(point, arm)
    except store.InvalidRecord as e:
        pytest.fail(str(e), pytrace=False)
    if rec is None:
        raise pytest.skip.Exception(f"no lab evidence for {point} {arm}: run `{COMMAND}`", _use_item_location=True)
    if settings.current().seed_offset:
        raise pytest.skip.Exception(f"lab evidence for {point} is recorded at seeds {rec['config']['seeds']}; "
                                    f"CLAIMS_SEED_OFFSET={settings.current().seed_offset} moves the suite's", _use_item_location=True)
    return rec


def stated_runs() -> LabRuns:
    """The verdicts' own runs from their committed records (the fast tier's)."""
    recs = {arm: _record(TINY_LAB.name, arm) for arm in ARMS}
    runs = TINY_LAB.read(TINY_LAB.texts(), {ARMS[a]: r["result"] for a, r in recs.items()})
    runs.evidence.update(store.evidence_of(r) for r in recs.values())
    return runs


def main_runs(stated: LabRuns) -> LabRuns:
    """The main excerpt's runs a lab verdict counts: the stated runs' seeds, then each later
    look's recorded seeds, in order (a look not recorded ends them). Under a seed offset, the
    stated runs' alone (records hold the suite's own seeds)."""
    more = []
    for scale in () if settings.current().seed_offset else TINY_LAB_MORE:
        try:
            recs = {arm: load(scale.name, arm) for arm in ARMS}
        except store.InvalidRecord as e:
            pytest.fail(str(e), pytrace=False)
        if any(r is None for r in recs.values()):
            break
        runs = scale.read(stated.excerpts[:1], {ARMS[a]: r["result"] for a, r in recs.items()})
        runs.evidence.update(store.evidence_of(r) for r in recs.values())
        more.append(runs)
    return stated.main(*more)


def point_runs(scale, stated: LabRuns) -> LabRuns:
    """A point's runs, from the records of the arms its grids read; an arm not yet recorded
    skips only where a rule reads it, so a grid that reads the other arm is judged."""
    present = [a for a in arms(scale) if path(scale.name, a).is_file()]
    recs = {arm: _record(scale.name, arm) for arm in present or arms(scale)[:1]}
    runs = scale.read(stated.excerpts, {ARMS[a]: r["result"] for a, r in recs.items()})
    runs.evidence.update(store.evidence_of(r) for r in recs.values())
    return runs


def replay_movement(rec: dict) -> tuple[float, float]:
    """``store.movement`` of every run's first REPLAY_STEPS training losses, retrained now
    with the current code."""
    scale = {s.name: s for s in recorded_scales()}[rec["point"]]
    exs = scale.texts()
    lab = rec["config"]["lab"]
    cfg = replace(LabConfig(**{**lab, "checkpoints": tuple(lab["checkpoints"])}), steps=store.REPLAY_STEPS, checkpoints=())
    pairs = [(exs[e], s) for e, s in rec["result"]["runs"]]
    ours = np.array(train_runs(cfg, pairs, keep_loss=True)["loss"])  # (runs, store.REPLAY_STEPS)
    return store.movement(ours, np.array(rec["result"]["first_losses"])[:, :store.REPLAY_STEPS])
