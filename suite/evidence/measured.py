"""Measured evidence, a kind of the evidence store (suite/evidence/store.py): measurements that
take the slow tier a minute and train nothing a verdict needs retrained, recorded one file per
scale, so that ``pytest -m fast`` judges them too (the fast report is the whole picture).

    fixtures/evidence/measured/<scale>.json
    python -m suite.evidence measured [SCALE ...]   # measure afresh and (re)write the records

The scales are suite/catalogue.py's ``MEASURED``: NORM-03's gradient norms at initialisation,
COST-09's peak memory, TINY-10's numpy lab against its torch twin. Each offers ``name``,
``runs()`` (what a test reads), ``measure()`` (the same, never from the run cache), ``config()``
(what determines the result), ``shape_problem(result)`` (one value per seed, size, ...), ``rtol``
and ``rtol_why`` (how far a fresh measurement may move from its record, and why), and, where
needed, ``compared`` (the result's keys a fresh measurement is checked on) and ``to_json`` /
``from_json`` (``runs()`` not plain JSON). Records are made with one thread, as each xdist
worker of the slow tier runs.

Without --runslow a test reads the record (suite/fixtures.py ``recorded``); with it, the test
measures afresh and tests/test_evidence_measured.py checks the fresh value against the record.
"""
import math
import time

import pytest
import torch

from suite.catalogue import MEASURED
from suite.evidence import schema, store

FAMILY = NAME = "measured"
REPLAYS = False
COMMAND = "python -m suite.evidence measured"


def path(scale):
    return store.EVIDENCE / FAMILY / f"{scale.name}.json"


def record_paths() -> list:
    return sorted((store.EVIDENCE / FAMILY).glob("*.json"))


def scale_named(name: str):
    for s in MEASURED:
        if s.name == name:
            return s
    raise KeyError(f"no measured scale {name!r}; they are: {', '.join(s.name for s in MEASURED)}")


def as_json(scale, runs):
    return getattr(scale, "to_json", lambda r: r)(runs)


def pending() -> list[store.Pending]:
    """The measured scales with no record yet."""
    return [store.Pending(NAME, s.name, "-", command=f"{COMMAND} {s.name}") for s in MEASURED if not path(s).is_file()]


def read_record(path) -> dict:
    return store.read(path, problems, COMMAND)


def replay(rec) -> None:
    """Nothing to replay: a measurement is measured again whole (``stale``)."""
    return None


def record(names=(), log=print) -> list:
    """Measure each scale (``names``, or every one) afresh and write its record."""
    todo = [scale_named(n) for n in names] if names else list(MEASURED)
    torch.set_num_threads(1)  # as each xdist worker of the slow tier runs
    written = []
    for scale in todo:
        start = time.perf_counter()
        result = as_json(scale, scale.measure())  # never the run cache: the provenance is this run's
        rec = {"family": FAMILY, "scale": scale.name, "config": scale.config(), "result": result,
               "provenance": store.provenance("cpu", time.perf_counter() - start)}
        store.write(path(scale), rec)
        log(f"measured: {scale.name} in {rec['provenance']['wall_s']:.1f} s -> {store.shown(path(scale))}")
        written.append(path(scale))
    return written


# ---- the schema ------------------------------------------------------------------------------

def _leaves(x, where="result"):
    """(where, leaf) for every number, bool or string in a JSON value."""
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _leaves(v, f"{where}.{k}")
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from _leaves(v, f"{where}[{i}]")
    else:
        yield where, x


def problems(rec) -> list[str]:
    """Every way ``rec`` breaks the measured record's schema, each naming its field: its shape
    (schema.MeasuredRecord, the provenance), a known scale, its current config, and a result of
    finite numbers >= 0 in the scale's shape."""
    out = schema.problems(schema.MeasuredRecord, rec)
    if out:
        return out
    if bad := schema.one_of(rec, "scale", [s.name for s in MEASURED]):
        return bad
    scale = scale_named(rec["scale"])
    if rec["config"] != scale.config():
        out.append(f"config: {scale.config()} expected (the scale's), got {rec['config']!r:.80}; "
                   f"rerun `{COMMAND} {scale.name}`")
    if not rec["result"]:
        return out + ["result: a non-empty object expected"]
    for where, leaf in _leaves(rec["result"]):
        if isinstance(leaf, float) and not math.isfinite(leaf):
            out.append(f"{where}: a finite number expected, got {leaf!r}")
        elif isinstance(leaf, (int, float)) and not isinstance(leaf, bool) and leaf < 0:
            # every measured quantity is a size, a count, a byte total, a norm, a loss or a |difference|
            out.append(f"{where}: a number >= 0 expected (no measurement here can be negative), got {leaf!r}")
        elif leaf is None:
            out.append(f"{where}: a value expected, got null")
    if not out and (shape := scale.shape_problem(rec["result"])):  # one value per seed, size, ...
        out.append(f"result: {shape}")
    return out


def load(scale) -> dict | None:
    """The record, or None; InvalidRecord names the field it breaks."""
    return store.read(path(scale), problems, COMMAND, {"scale": scale.name})


def recorded_runs(scale):
    """What a test reads of ``scale`` in the fast tier: its record's result, as ``runs()`` returns
    it. A missing record skips naming the command; a broken one fails (never a divergence)."""
    try:
        rec = load(scale)
    except store.InvalidRecord as e:
        pytest.fail(str(e), pytrace=False)
    if rec is None:
        raise pytest.skip.Exception(f"no measured evidence for {scale.name}: run `{COMMAND} {scale.name}`",
                                    _use_item_location=True)
    return getattr(scale, "from_json", lambda r: r)(rec["result"])


def provenance_line(scale) -> str | None:
    """Where and when the record was measured, for the verdict's details; None without a sound
    record (the test that read it has already said so)."""
    try:
        rec = load(scale)
    except store.InvalidRecord:
        return None
    return rec and f"{rec['provenance']['device_name']}, {rec['provenance']['date'][:10]}"


# ---- a fresh measurement against its record ---------------------------------------------------

def movement(fresh, recorded) -> tuple[float, list[str]]:
    """(the largest relative difference between two JSON values' numbers, the places where they
    differ in kind: a key, a length, a bool or a string)."""
    a, b = dict(_leaves(fresh)), dict(_leaves(recorded))
    if a.keys() != b.keys():
        return math.inf, [f"{k}: in one only" for k in sorted(a.keys() ^ b.keys())][:5]
    worst, other = 0.0, []
    for k in a:
        x, y = a[k], b[k]
        if isinstance(x, bool) or isinstance(y, bool) or isinstance(x, str) or isinstance(y, str):
            if x != y:
                other.append(f"{k}: {x!r} against {y!r}")
        elif not (math.isfinite(x) and math.isfinite(y)):  # max() would drop a NaN: a change in kind
            other.append(f"{k}: {x!r} against {y!r}")
        elif x != y:
            worst = max(worst, abs(x - y) / max(abs(x), abs(y)))
    return worst, other


def stale(scale, fresh_runs) -> str:
    """'' when a fresh measurement agrees with the record within the scale's rtol, else one line
    saying how far it moved and how to refresh the record."""
    rec = load(scale)
    if rec is None:
        return f"{scale.name}: no record; run `{COMMAND} {scale.name}`"
    keys = getattr(scale, "compared", None)  # a scale may leave rounding-level parts out
    fresh, kept = as_json(scale, fresh_runs), rec["result"]
    if keys:
        fresh, kept = ({k: v[k] for k in keys} for v in (fresh, kept))
    worst, other = movement(fresh, kept)
    if other or worst > scale.rtol:
        shown = "; ".join(other) if other else f"moved {worst:.3g} relative, past {scale.rtol:g} ({scale.rtol_why})"
        return (f"{scale.name}: the fresh measurement differs from {store.shown(path(scale))} "
                f"(recorded on {rec['provenance']['device_name']}, {rec['provenance']['date'][:10]}): {shown}; "
                f"if the code changed on purpose, rerun `{COMMAND} {scale.name}`")
    return ""

