"""The Winograd task's grid evidence, a kind of the evidence store (suite/evidence/store.py): the
points of ``suite.diagnosis_grids.WINOGRAD_GRIDS``, trained on the CPU and recorded as small JSON
files with their provenance, one per (point, task, model):

    fixtures/evidence/winograd/explore/<point>/<task>-<model>.json
    fixtures/evidence/winograd/stated/<task>-<model>.json     # the verdicts' own runs
    python -m suite.evidence winograd [POINT ...]   # record what is not yet recorded, cheapest first

The stated point is the verdicts' own runs: the slow tier trains them, and the fast tier judges
their committed records (``stated_runs``), so that ``pytest -m fast`` shows every Winograd
verdict without training. A point records only the
models whose settings it changes (a point that changes the fixed task's held-out set leaves the
leaky task's models as they are, and reads them from the stated runs). A record is checked
against its schema in the fast tier and its first steps are retrained in the slow tier, like the
families' records (suite/evidence/families.py).
"""
import time

import pytest
import torch

from experiments.winograd import ADJECTIVES, fixed_task, leaky_task, train_task
from suite import settings
from suite.catalogue import SCHEDULED, WINOGRAD, WINOGRAD_MORE
from suite.diagnosis_grids import WINOGRAD_GRIDS
from suite.evidence import schema, store
from suite.winograd_scale import WinogradRuns, train_winograd

FAMILY = NAME = "winograd"
REPLAYS = True
COMMAND = "python -m suite.evidence winograd"


def points() -> list:
    """Every trained point's WinogradScale, once (the five claims share them)."""
    return store.trained_points(WINOGRAD_GRIDS)


def recorded_scales() -> list:
    """What has records: the stated scale and its later looks (every model), and each trained
    point."""
    return [WINOGRAD, *WINOGRAD_MORE, *points()]


def recorded_arm(scale, task: str, kind: str) -> dict:
    """The config a record of (point, model) holds: the point's, at its declared seeds (records
    are made without CLAIMS_SEED_OFFSET, which shifts the seeds a scale reads)."""
    return {**scale.arm(task, kind), "seeds": list(scale.declared_seeds)}


def changed(scale) -> list[tuple[str, str]]:
    """The (task, model)s a scale records: every model of the stated scale; a point's, those whose
    settings it changes."""
    if scale.name == WINOGRAD.name:
        return list(scale.models)
    return [m for m in scale.models if scale.arm(*m) != WINOGRAD.arm(*m)]


def path(point: str, task: str, kind: str):
    more = {m.name for m in WINOGRAD_MORE}
    where = "stated" if point == WINOGRAD.name else f"stated/{point}" if point in more else f"explore/{point}"
    return store.EVIDENCE / FAMILY / where / f"{task}-{kind}.json"


def record_paths() -> list:
    return sorted([*(store.EVIDENCE / FAMILY / "explore").glob("*/*.json"),
                   *(store.EVIDENCE / FAMILY / "stated").glob("*.json"),
                   *(store.EVIDENCE / FAMILY / "stated").glob("*/*.json")])


def cost(scale, model) -> float:
    """A (point, model)'s training cost, relative: steps x blocks x width (the bag counts as a
    tenth of a block), so that the cheapest points land first when time is short."""
    blocks = {"bag": 0.1, "1-block": 1, "2-blocks": 2}[model[1]]
    return scale.arm(*model)["steps"] * blocks * scale.d_model


def todo(names=()) -> list[tuple[object, tuple[str, str]]]:
    """The (point, model)s declared and not recorded (of the points ``names``, if given), the
    cheapest point first, so that whole points land first when time is short."""
    def looked(s):  # a later look once the looks before it are recorded, while a claim it serves is undecided
        if s in WINOGRAD_MORE and store.decided(SCHEDULED[WINOGRAD.name][1]):
            return False
        return s not in WINOGRAD_MORE[1:] or all(path(p.name, *m).is_file() for p in
                                                 WINOGRAD_MORE[:WINOGRAD_MORE.index(s)] for m in changed(p))
    out = [(s, m) for s in recorded_scales() if looked(s) for m in changed(s)
           if not path(s.name, *m).is_file() and (not names or s.name in names)]
    whole = {s.name: sum(cost(t, m) for t, m in out if t.name == s.name) for s, _ in out}
    return sorted(out, key=lambda sm: (whole[sm[0].name], sm[0].name, cost(*sm)))


def record(names=(), log=print) -> list:
    """Train and record every pending (point, model), cheapest first."""
    store.check_points("Winograd", names, [s.name for s in recorded_scales()])
    work, written = todo(names), []
    log(f"winograd: {len(work)} (point, model) set(s) to train on cpu ({torch.get_num_threads()} threads)")
    for scale, (task, kind) in work:
        arm, start = scale.arm(task, kind), time.perf_counter()
        result = train_winograd(arm)
        rec = {"family": FAMILY, "point": scale.name, "arm": f"{task}/{kind}", "config": arm, "result": result,
               "provenance": store.provenance("cpu", time.perf_counter() - start)}
        out = path(scale.name, task, kind)
        store.write(out, rec)
        acc = [r["final"]["accuracy"] for r in result["runs"]]
        log(f"  {scale.name} {task}/{kind}: held-out accuracy {min(acc):.3f}-{max(acc):.3f} over "
            f"{len(acc)} seeds, {rec['provenance']['wall_s'] / 60:.1f} min -> {store.shown(out)}")
        written.append(out)
    return written


# ---- the schema ------------------------------------------------------------------------------

def _counts(scores: dict, n: int) -> bool:
    """Whether each score is a count over ``n`` sentences."""
    return all(abs(scores[k] * n - round(scores[k] * n)) < 1e-6 for k in ("accuracy", "pair_accuracy", "wrong_noun"))


def _halves_problem(point: dict, cfg: dict) -> str:
    """What is wrong with an evaluation's two halves (``select``, ``report``: a select_apart
    point's, experiments.winograd.halves), or "": present exactly when the config asks for them,
    each a count over its half, and together the whole set's accuracy."""
    if not cfg.get("select_apart"):
        return "select and report halves of a point that does not score them" if {"select", "report"} & set(point) else ""
    pairs = cfg["held_pairs"]
    sizes = {"select": len(ADJECTIVES) * (pairs - pairs // 2), "report": len(ADJECTIVES) * (pairs // 2)}
    for half, n in sizes.items():
        if half not in point or not _counts(point[half], n):
            return f"{half}: accuracy, pair_accuracy, wrong_noun expected, each a count over its {n} sentences"
    right = sum(point[h]["accuracy"] * n for h, n in sizes.items())
    if abs(right - point["accuracy"] * sum(sizes.values())) > 1e-6:
        return "the halves' correct answers do not add up to the whole held-out set's"
    return ""


def problems(rec) -> list[str]:
    """Every way ``rec`` breaks the Winograd record's schema, each naming its field; empty for a
    sound record. Its shape (schema.WinogradRecord: scores in [0, 1], finite positive first losses,
    rows of 15 weights, the provenance), then the point's: its config, a run per seed, an
    evaluation every 250 steps to the last, scores that count sentences, each run's final scores
    equal to its curve's last point, and attention rows that are distributions."""
    out = schema.problems(schema.WinogradRecord, rec)
    if out:
        return out
    scales = {s.name: s for s in recorded_scales()}
    if bad := schema.one_of(rec, "point", scales):
        return bad
    scale = scales[rec["point"]]
    models = {f"{t}/{k}": (t, k) for t, k in changed(scale)}
    if bad := schema.one_of(rec, "arm", models):
        return bad
    task, kind = models[rec["arm"]]
    cfg = rec["config"]
    if cfg != recorded_arm(scale, task, kind):
        return [f"config: {recorded_arm(scale, task, kind)} expected (the point's settings), got {cfg!r:.80}"]
    n = len(ADJECTIVES) * cfg["held_pairs"]  # held-out sentences: every score is a count over them
    evaluations = sorted({*range(250, cfg["steps"], 250), cfg["steps"]})  # train_task's eval_every
    runs = rec["result"]["runs"]
    if [r["seed"] for r in runs] != cfg["seeds"]:
        return [f"result.runs: one run per seed {cfg['seeds']} expected"]
    for i, r in enumerate(runs):
        where, curve = f"result.runs[{i}]", r["curve"]
        steps = [p["step"] for p in curve]
        if steps != evaluations:
            out.append(f"{where}.curve.step: an evaluation every 250 steps and at {cfg['steps']} expected, "
                       f"got {steps!r:.60}")
        for p in curve:
            if not _counts(p, n) or p["accuracy"] + p["wrong_noun"] > 1 + 1e-9:
                out.append(f"{where}.curve: at step {p['step']}, scores that are counts over {n} sentences "
                           "expected, with accuracy + wrong_noun <= 1 (two different answers)")
                break
            if problem := _halves_problem(p, cfg):
                out.append(f"{where}.curve: at step {p['step']}, {problem}")
                break
        if r["final"] != curve[-1]:
            out.append(f"{where}.final: {r['final']!r:.60} disagrees with its own curve's last point")
        if (task, kind) == ("fixed", "2-blocks"):
            for key in ("rows", "rows_held"):
                rows = r.get(key)
                if not (rows and set(rows) == set(ADJECTIVES)
                        and all(abs(sum(row) - 1) < 1e-4 for b in rows.values() for row in b)):
                    out.append(f"{where}.{key}: per adjective, 2 blocks of 15 weights summing to 1 expected")
    return out


def pending() -> list[store.Pending]:
    """``todo``'s (point, model)s as the evidence kinds list them."""
    return [store.Pending(NAME, s.name, f"{t}/{k}", tuple(s.seeds), COMMAND) for s, (t, k) in todo()]


def read_record(path) -> dict:
    return store.read(path, problems, COMMAND)


def replay(rec) -> tuple[float, float]:
    return replay_movement(rec)


def load(point: str, task: str, kind: str) -> dict | None:
    """The record, or None; InvalidRecord names the field it breaks."""
    return store.read(path(point, task, kind), problems, COMMAND, {"point": point, "arm": f"{task}/{kind}"})


def stated_runs() -> WinogradRuns:
    """The verdicts' own runs from their committed records (the fast tier's): a missing record
    skips naming the command, a broken one fails, a seed offset skips (the records hold the
    suite's own seeds)."""
    records, evidence = {}, set()
    for task, kind in WINOGRAD.models:
        records[task, kind], ev = _result(WINOGRAD, task, kind)
        evidence.add(ev)
    return WinogradRuns(WINOGRAD, records, evidence)


def _result(scale, task: str, kind: str) -> tuple[dict, str]:
    """(the record's result, its provenance line) for one (scale, model)."""
    try:
        rec = load(scale.name, task, kind)
    except store.InvalidRecord as e:
        pytest.fail(str(e), pytrace=False)
    if rec is None:
        raise pytest.skip.Exception(f"no Winograd evidence for {scale.name} {task}/{kind}: run `{COMMAND}`",
                                    _use_item_location=True)
    if settings.current().seed_offset:
        raise pytest.skip.Exception(f"Winograd evidence for {scale.name} is recorded at seeds {rec['config']['seeds']}; "
                                    f"CLAIMS_SEED_OFFSET={settings.current().seed_offset} moves the suite's",
                                    _use_item_location=True)
    return rec["result"], store.evidence_of(rec)


def looks_runs(stated: WinogradRuns) -> WinogradRuns:
    """The starts a scheduled verdict counts: the stated runs, then each later look's recorded
    starts in order (a look not wholly recorded ends them; under a seed offset, none)."""
    more = []
    for scale in () if settings.current().seed_offset else WINOGRAD_MORE:
        try:
            recs = {m: load(scale.name, *m) for m in scale.models}
        except store.InvalidRecord as e:
            pytest.fail(str(e), pytrace=False)
        if any(r is None for r in recs.values()):
            break
        more.append(WinogradRuns(scale, {m: r["result"] for m, r in recs.items()},
                                 {store.evidence_of(r) for r in recs.values()}))
    return stated.join(*more)


def point_runs(scale, stated: WinogradRuns) -> WinogradRuns:
    """A point's runs: its own records for the models it changes, the stated runs for the rest. A
    missing record skips naming the command; a broken one fails (never a divergence)."""
    records, evidence = {}, set()
    for task, kind in scale.models:
        if (task, kind) not in changed(scale):
            records[task, kind] = {"runs": [stated.record(task, kind, s) for s in stated.seeds]}
            continue
        records[task, kind], ev = _result(scale, task, kind)
        evidence.add(ev)
    return WinogradRuns(scale, records, evidence)


def replay_movement(rec: dict) -> tuple[float, float]:
    """``store.movement`` of the record's first REPLAY_STEPS training losses (every seed),
    retrained now with the current code."""
    cfg = rec["config"]
    task = {"leaky": leaky_task, "fixed": fixed_task}[cfg["task"]](held_pairs=cfg["held_pairs"])
    first = []  # (store.REPLAY_STEPS, seeds)
    train_task(task, cfg["kind"], steps=store.REPLAY_STEPS, seeds=cfg["seeds"], lr=cfg["lr"], d_model=cfg["d_model"],
               first_losses=first)
    recorded = [r["first_losses"][:store.REPLAY_STEPS] for r in rec["result"]["runs"]]  # (seeds, store.REPLAY_STEPS)
    return store.movement([list(seed) for seed in zip(*first[:store.REPLAY_STEPS])], recorded)
