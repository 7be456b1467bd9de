"""What the grid-point records of scales trained outside the evidence families share (the Winograd
task's, suite/evidence/winograd.py; the Polish lab's, suite/evidence/lab.py): their
provenance, how they are written, and how they are read against their schema.
"""
import json
import platform
from datetime import datetime, timezone

from suite.evidence.families import InvalidRecord, _commit, _shown, replay_problem

PROVENANCE = ("device", "device_name", "machine", "torch", "commit", "code", "date", "wall_s")


def provenance(wall_s: float) -> dict:
    """Where, with what and when a record was made (CPU)."""
    import torch
    from suite.evidence.families import _device_name
    from experiments.runs import code_version
    return {"device": "cpu", "device_name": _device_name("cpu"), "machine": platform.machine(),
            "torch": torch.__version__, "commit": _commit(), "code": code_version(),
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "wall_s": round(wall_s, 2)}


def provenance_problems(prov) -> list[str]:
    if not isinstance(prov, dict):
        return ["provenance: an object expected"]
    out = [f"provenance.{k}: missing" for k in PROVENANCE if k not in prov]
    if "wall_s" in prov and not (isinstance(prov["wall_s"], (int, float)) and not isinstance(prov["wall_s"], bool)
                                 and prov["wall_s"] > 0):
        out.append(f"provenance.wall_s: a positive number expected, got {prov['wall_s']!r}")
    for k in set(PROVENANCE) - {"wall_s"}:
        if k in prov and not (isinstance(prov[k], str) and prov[k]):
            out.append(f"provenance.{k}: a non-empty string expected, got {prov[k]!r:.40}")
    if isinstance(prov.get("date"), str):
        try:
            datetime.fromisoformat(prov["date"])
        except ValueError:
            out.append(f"provenance.date: an ISO date expected, got {prov['date']!r}")
    return out


def write(path, rec: dict) -> None:
    from experiments.data import write_atomic
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, (json.dumps(rec, indent=1) + "\n").encode())


def read(path, problems, command: str, point: str, arm: str) -> dict | None:
    """The record at ``path``, or None; InvalidRecord names the field it breaks, or says it is
    another point's or model's record than its path names."""
    if not path.is_file():
        return None
    try:
        rec = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise InvalidRecord(f"{_shown(path)} is not JSON ({e}); restore it from git or rerun `{command}`") from None
    bad = problems(rec)
    if not bad and (rec["point"], rec["arm"]) != (point, arm):
        bad = [f"point, arm: {point} {arm} expected (the record's path), got {rec['point']} {rec['arm']}"]
    if bad:
        raise InvalidRecord(f"{_shown(path)} breaks its schema: {'; '.join(bad)}; restore it from git or "
                            f"rerun `{command}`")
    return rec


def evidence_of(rec: dict) -> str:
    """The "<device>, <date>" a verdict's report names for a record."""
    prov = rec["provenance"]
    return f"{prov['device_name']}, {prov['date'][:10]}"


def check_replay(rec: dict, moved: tuple[float, float], command: str) -> tuple[float, float]:
    """The slow tier's replay check: ``moved``, how far the record's first REPLAY_STEPS losses
    moved when retrained with the current code (suite/evidence/families.py: movement), within its tolerances."""
    problem = replay_problem(moved)
    assert not problem, (f"{rec['point']} {rec['arm']}: {problem}: the code no longer makes this record; "
                         f"delete it and rerun `{command}`")
    return moved
