"""The evidence store: what every kind of record shares, written once.

A record is a small JSON file under ``fixtures/evidence/``: a run's (or a set of runs') results,
the configuration that made them, its first training losses, and its provenance. Four kinds plug
in, each with its own schema and paths: the Shakespeare families (suite/evidence/families.py), the
Polish lab's grid points (lab.py), the Winograd task's (winograd.py), and measurements that train
nothing a verdict needs retrained (measured.py). Each kind is a module that implements
``EvidenceKind``: ``NAME``, ``COMMAND`` (what records what is missing), ``REPLAYS``,
``record_paths``, ``problems``, ``pending`` (a list of ``Pending``), ``read_record`` and ``replay``
(the trained kinds retrain a record's first steps; a measurement is measured afresh whole,
``measured.stale``). ``python -m suite.evidence`` is their one command line, and loops over them.

Here: where records live, reading one (a broken file is one line naming the file and the field;
the records' shapes are declared in schema.py), writing one atomically, the provenance every
record carries, the replay's tolerances, and the kinds' interface.
"""
import functools
import json
import math
import platform
import re
import tomllib
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np
import pytest
import torch

from claimcheck import verdict_pins
from claimcheck.storage import git_commit
from experiments.data import write_atomic
from experiments.runs import code_version
from suite import settings
from suite.pins import SAFETY, cpu_model

ROOT = Path(__file__).resolve().parents[2]
EVIDENCE = ROOT / "fixtures" / "evidence"
# The committed verdicts (claimcheck_verdict_pins): a look whose claims they all decide is never wanted.
VERDICTS = ROOT / "fixtures" / "verdicts.toml"

# Replay: the first steps of a record are retrained with the current code (the slow tier does one
# record per configuration and code version; `python -m suite.evidence replay` does every record).
# Four steps: the loss at initialisation, then three of backward and optimizer (warmup included),
# so a change to any of them shows, within the slow tier's two-minute budget for replays.
# Two tolerances, each 3x (suite/pins.py's SAFETY) the largest relative movement measured between
# machines and kernels, rounded up (every record: docs/reference/replay.md):
# - the loss at initialisation is a forward pass only, nothing trained amplifies its rounding:
#   at most 1.9e-7, three float32 ulps of a loss near ln 1024;
# - the trained steps amplify it, most where training is least stable: the undivided d_k = 1024
#   head at lr 3e-3 (a sqrt(d_k) grid point) moved 1.2e-4 at its fourth loss between an Intel Xeon
#   and an AMD EPYC; every other record moved at most 1.2e-6.
REPLAY_STEPS = 4
REPLAY_RTOL_INIT = 1e-6
REPLAY_RTOL = 4e-4
# A configuration whose first steps are chaotic (the sqrt(d_k) grid's points at 10 to 100x the
# chapter's rate) moves further: its records, replayed under SPREAD_KERNELS, moved by up to 0.12.
# Each configuration's own figure, measured when it is recorded (`python -m suite.evidence spread`),
# is kept in SPREAD; its trained steps replay at SAFETY x that figure, never under REPLAY_RTOL.
SPREAD = ROOT / "fixtures" / "replay_spread.toml"
SPREAD_COMMAND = "python -m suite.evidence spread"
# The kernel settings a record is replayed under, by name: each chaotic configuration moves its own
# way under each, so its figure is the largest over all (one setting alone undercut a tolerance by
# 10%: docs/reference/replay.md).
SPREAD_KERNELS = {
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "COMPATIBLE", "ONEDNN_MAX_CPU_ISA": "AVX2"},
    "aten-scalar": {"ATEN_CPU_CAPABILITY": "default"},  # ATen's kernels with no vector ISA
    # a reduction's order follows the thread count: the slow tier runs cpu_count // workers threads
    "threads-2": {"OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2"},
}



class InvalidRecord(ValueError):
    """A committed record that breaks its schema: a failure of the suite, never a divergence."""


@dataclass(frozen=True)
class Pending:
    """A record that a scale, schedule or grid declares and no file holds yet."""
    kind: str                      # its folder under fixtures/evidence: the family, or the kind's NAME
    point: str                     # the scale's or grid point's name
    arm: str                       # its arm ("pre", "leaky/bag"); "-" where a record has none
    seeds: tuple[int, ...] = ()    # the seeds it records, where the kind records by seed
    command: str = ""              # what records it
    hours: float | None = None     # one CPU thread's hours, where the kind can tell (the families)
    claims: tuple[str, ...] = ()   # what its look decides ("NORM-07", "kind of SQRT-14")


@runtime_checkable
class EvidenceKind(Protocol):
    """What every kind of record offers; each kind is a module (families, lab, winograd,
    measured: ``all_kinds()`` in suite/evidence/__main__.py), so these are its module-level names."""
    NAME: str
    COMMAND: str
    REPLAYS: bool  # its records' first steps are retrained (``replay``), else measured again whole

    def record_paths(self) -> list[Path]:
        """Every committed record of the kind."""

    def problems(self, rec) -> list[str]:
        """Every way ``rec`` breaks the kind's schema, each naming its field; empty when sound."""

    def pending(self) -> list[Pending]:
        """What is declared and not recorded, in the order the kind records it."""

    def read_record(self, path: Path) -> dict:
        """The record at ``path``, checked; InvalidRecord names the file and the field."""

    def replay(self, rec) -> tuple[float, float] | None:
        """``movement`` of its first losses retrained now (None where REPLAYS is false)."""


def decided(claims, scale: str = "full") -> bool:
    """Whether every one of ``claims`` has a decided committed verdict at ``scale`` (holds, diverges
    or fails in fixtures/verdicts.toml). The first look that decides is the verdict, so a later
    look of such a schedule would train for nothing; an undecided or unpinned claim keeps it open."""
    pins = verdict_pins.load(VERDICTS)
    return all(pins.get(c, {}).get(scale) in ("holds", "diverges", "fails") for c in claims)


def shown(p: Path) -> str:
    """A path as a message shows it: relative to the repository where it can be."""
    return str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p)


@functools.cache
def commit() -> str:
    """The commit the code was at when a set of records started (cached: later commits are not
    its). CLAIMS_COMMIT (suite/settings.py) names it for a copy of the tree that has no .git."""
    if settings.current().commit:
        return settings.current().commit
    return git_commit(ROOT, ("model", "experiments", "suite/scales.py", "suite/catalogue.py", "suite/lab_scale.py",
                             "suite/winograd_scale.py"), untracked=True)


def device_name(device) -> str:
    if torch.device(device).type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"{cpu_model()} ({torch.get_num_threads()} threads)"


def provenance(device, wall_s: float, **more) -> dict:
    """Where, with what and when a record was made; ``more`` adds a kind's own fields."""
    return {"device": str(device), "device_name": device_name(device), "machine": platform.machine(),
            "torch": torch.__version__, "commit": commit(), "code": code_version(),
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "wall_s": round(wall_s, 2), **more}


def write(path: Path, rec: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, (json.dumps(rec, indent=1) + "\n").encode())


def read_json(path: Path, command: str):
    """The JSON at ``path``; a file that is not JSON (truncated, say) is one InvalidRecord line
    that names it."""
    try:
        return json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InvalidRecord(f"{shown(path)} is not JSON ({e}); restore it from git or rerun `{command}`") from None


def read_or_fail(path: Path, command: str):
    """``read_json`` for a test: a broken file fails the test in its one line (never a divergence)."""
    try:
        return read_json(path, command)
    except InvalidRecord as e:
        pytest.fail(str(e), pytrace=False)


def read(path: Path, problems, command: str, names: dict | None = None) -> dict | None:
    """The record at ``path``, or None when there is none. InvalidRecord, in one line, names the
    file and every field its schema (``problems(rec) -> [str]``) finds broken, or the fields in
    ``names`` ({field: value its path gives}) where the record names another."""
    if not path.is_file():
        return None
    rec = read_json(path, command)
    bad = problems(rec)
    if not bad and names:
        wrong = {k: v for k, v in names.items() if rec.get(k) != v}
        if wrong:
            bad = [f"{', '.join(wrong)}: {' '.join(map(str, wrong.values()))} expected (the record's path), "
                   f"got {' '.join(str(rec.get(k)) for k in wrong)}"]
    if bad:
        raise InvalidRecord(f"{shown(path)} breaks its schema: {'; '.join(bad)}; restore it from git or "
                            f"rerun `{command}`")
    return rec


def trained_points(grids: dict) -> list:
    """The scale of every point of these grids that trains (``Grid.trained``), once each, in
    declaration order: several claims' grids may share a point."""
    seen = {}
    for grid in grids.values():
        for p in grid.trained():
            seen.setdefault(p.scale.name, p.scale)
    return list(seen.values())


def check_points(kind: str, names, known) -> None:
    """Before a kind records grid points: only at the suite's own seeds, and only declared points."""
    if settings.current().seed_offset:
        raise SystemExit(f"error: {kind} grid records are made at the suite's own seeds; unset CLAIMS_SEED_OFFSET")
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"error: no {kind} grid point {', '.join(unknown)}; the points: {', '.join(known)}")


def evidence_of(rec: dict) -> str:
    """The "<device>, <date>" a verdict's report names for a record."""
    prov = rec["provenance"]
    return f"{prov['device_name']}, {prov['date'][:10]}"


def movement(ours, recorded) -> tuple[float, float]:
    """How far retrained first losses moved from the recorded ones, relative: (the loss at
    initialisation, the largest over the trained steps). Any shape, the step on the last axis."""
    ours, recorded = np.asarray(ours, dtype=float), np.asarray(recorded, dtype=float)
    moved = np.abs(ours - recorded) / np.abs(recorded)
    return float(moved[..., 0].max()), float(moved[..., 1:].max(initial=0.0))


def configuration(path: Path) -> str:
    """The configuration a record was made with: its path under fixtures/evidence, without the
    ``.json`` and the seed, e.g. ``sqrt/explore/sqrt1024-full@train.lr=0.03/nodiv-1024``."""
    rel = Path(path).relative_to(EVIDENCE)  # ValueError for a file that is not a committed record
    return re.sub(r"-seed\d+$", "", rel.with_suffix("").as_posix())


def unmeasured(paths, setting: str | None = None) -> list[Path]:
    """The records of ``paths`` that SPREAD has not measured under ``setting`` (a SPREAD_KERNELS
    name), or under every setting where it is None: a configuration's seeds land one by one, and
    each is measured, as seeds of one configuration move apart (9.1e-5 to 9.9e-4)."""
    rows, names = spreads(), [setting] if setting else list(SPREAD_KERNELS)
    return [p for p in paths
            if any(Path(p).name not in rows.get(configuration(p), {}).get("records", {}).get(n, ()) for n in names)]


@functools.cache
def spreads() -> dict[str, dict]:
    """SPREAD's rows: per configuration, the movements measured replaying it under SPREAD_KERNELS."""
    if not SPREAD.exists():
        return {}
    try:
        return tomllib.loads(SPREAD.read_text())["spread"]
    except (tomllib.TOMLDecodeError, KeyError) as e:
        raise InvalidRecord(f"{shown(SPREAD)}: {e}; rerun `{SPREAD_COMMAND} --all`") from None


def _up(x: float) -> float:
    """``x`` rounded up to two significant digits."""
    step = 10.0 ** (math.floor(math.log10(x)) - 1)
    return round(math.ceil(x / step - 1e-9) * step, 12)


def replay_rtol(path: Path) -> float:
    """The trained steps' tolerance for the record at ``path``: SAFETY x its configuration's measured
    spread (SPREAD), rounded up, or REPLAY_RTOL where that is larger or nothing is measured."""
    if not Path(path).is_relative_to(EVIDENCE):  # a record made elsewhere (a test's): no measurement
        return REPLAY_RTOL
    trained = spreads().get(configuration(path), {}).get("trained", 0.0)
    return max(REPLAY_RTOL, _up(SAFETY * trained)) if trained > 0 else REPLAY_RTOL


def add_spreads(moved: dict, source: dict, setting: str) -> None:
    """Merge replays under SPREAD_KERNELS[setting] (``moved``: record path -> ``movement``) into
    SPREAD: per configuration, the largest movement over its seeds, the settings and every
    measurement so far, which measurements (``source``: kernels, machine, torch, code, date) it was
    taken from, and which of its records (file names) have been measured under each setting."""
    key = f"{source['date']}-{source['code']}-{setting}"
    text = SPREAD.read_text() if SPREAD.exists() else ""
    old = tomllib.loads(text) if text else {}
    measured, rows = old.get("measured", {}), old.get("spread", {})
    measured[key] = source
    for path, (init, trained) in moved.items():
        row = rows.setdefault(configuration(path), {"init": 0.0, "trained": 0.0, "measured": [], "records": {}})
        row["init"], row["trained"] = max(row["init"], init), max(row["trained"], trained)
        row["measured"] = sorted({*row["measured"], key})
        row["records"][setting] = sorted({*row["records"].get(setting, ()), Path(path).name})
    _write_spreads(measured, rows)


def _write_spreads(measured: dict, rows: dict) -> None:
    text = SPREAD.read_text() if SPREAD.exists() else ""
    head = [line for line in text.splitlines() if line.startswith("#")] or [
        "# Per configuration (a record's path under fixtures/evidence without its seed): the largest",
        "# relative movement of its first losses when its records were replayed under other kernels",
        "# (suite/evidence/store.py: SPREAD_KERNELS), over its seeds, the settings and every measurement",
        "# below, and the records measured under each setting. The slow tier replays its trained steps",
        "# at SAFETY x `trained`, never under REPLAY_RTOL (docs/reference/replay.md).",
        f"# Written by `{SPREAD_COMMAND}`; do not edit by hand.",
    ]
    out = [*head, ""]
    for k, src in sorted(measured.items()):
        out += [f"[measured.{json.dumps(k)}]", *(f"{f} = {json.dumps(v)}" for f, v in src.items()), ""]
    out.append("[spread]")
    for conf, row in sorted(rows.items()):
        init, trained = (float(f"{row[f]:.3g}") for f in ("init", "trained"))
        out.append(f"{json.dumps(conf)} = {{ init = {init!r}, trained = {trained!r}, "
                   f"measured = {json.dumps(row['measured'])}, records = {{ "
                   + ", ".join(f"{json.dumps(n)} = {json.dumps(r)}" for n, r in sorted(row["records"].items()))
                   + " } }")
    write_atomic(SPREAD, ("\n".join(out) + "\n").encode())
    spreads.cache_clear()


def replay_problem(moved: tuple[float, float], rtol: float = REPLAY_RTOL) -> str:
    """What a replay's ``movement`` says beyond rounding, or "" when it is within its tolerances
    (``rtol``: the trained steps', ``replay_rtol`` of the record)."""
    init, trained = moved
    if init > REPLAY_RTOL_INIT:
        return (f"its loss at initialisation moved by {init:.1e} (relative; tolerance {REPLAY_RTOL_INIT:.0e}, "
                f"a forward pass with nothing trained to amplify rounding)")
    if trained > rtol:
        source = "" if rtol == REPLAY_RTOL else f", {SAFETY}x this configuration's spread in {shown(SPREAD)}"
        return (f"its first {REPLAY_STEPS} training losses moved by {trained:.1e} (relative; tolerance "
                f"{rtol:.2g}{source})")
    return ""


def check_replay(path: Path, rec: dict, moved: tuple[float, float], command: str) -> tuple[float, float]:
    """The slow tier's replay check: ``moved`` (``movement``) within the tolerances of the record at ``path``."""
    problem = replay_problem(moved, replay_rtol(path))
    assert not problem, (f"{rec.get('point') or rec['family']} {rec['arm']}: {problem}: the code no longer makes "
                         f"this record; delete it and rerun `{command}`")
    return moved
