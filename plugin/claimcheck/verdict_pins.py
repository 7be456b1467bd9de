"""Verdict pins: every claim's verdict at every scale, committed beside the registry.

A band, a rule's level or a precedence can change and move verdicts while every test stays
green. With ``claimcheck_verdict_pins = "<file>"`` a run compares each verdict it measured with its
pin, and a move fails the run (exit status 1) until the file changes in the same commit, with the
reason in the commit's message. ``--claims-repin`` writes this run's verdicts into the file.

How strictly (``--claims-pins``):

    exact   any move fails (verdicts judged from committed evidence or by arithmetic: the same on
            every machine)
    loose   only a move between holds and diverges or fails fails; a move to or from undecided,
            or a verdict with no pin, is a note (runs trained on this machine, near a band's edge)
    off     nothing is compared

The file (TOML), one table per claim, one key per scale, the value the verdict as the report
writes it::

    [ABL-05]
    full = "undecided"
    ci = "holds"
"""
import json
import tomllib
from pathlib import Path

from .verdict import MEASURED_STATUSES, status_text

MODES = ("exact", "loose", "off")
_DECIDED = {"holds": "holds", "diverges": "against", "fails": "against"}


def load(path: Path) -> dict[str, dict[str, str]]:
    """claim ID -> {scale: verdict}; an absent file is empty, a broken one is one line."""
    if not path.is_file():
        return {}
    try:
        pins = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise ValueError(f"{path}: {e}; restore it from git, or rewrite it with --claims-repin") from None
    bad = [cid for cid, v in pins.items() if not isinstance(v, dict) or not all(isinstance(x, str) for x in v.values())]
    if bad:
        raise ValueError(f"{path}: {', '.join(bad[:5])}: each entry is a table of scale = \"verdict\" "
                         "(rewrite it with --claims-repin)")
    return pins


def measured(doc: dict) -> dict[str, dict[str, str]]:
    """claim ID -> {scale: verdict} for every scale this report measured whole (holds, diverges,
    undecided, undecided at the cap, fails): a scale where some test naming the claim did not run
    (skipped, deselected: a ``-k`` run) gives a partial verdict, neither compared nor pinned."""
    out = {}
    for c in doc["claims"]:
        got = {s: status_text(v) for s, v in (c.get("scales") or {}).items()
               if v.get("status") in MEASURED_STATUSES and not v.get("partial")}
        if got:
            out[c["id"]] = got
    return out


def moved(doc: dict, pins: dict, mode: str = "exact") -> tuple[list[str], list[str]]:
    """(failures, notes): one line per measured verdict that differs from its pin. Under
    ``loose``, only holds against diverges or fails is a failure."""
    if mode not in MODES:
        raise ValueError(f"--claims-pins={mode!r}: one of {', '.join(MODES)}")
    fails, notes = [], []
    if mode == "off":
        return fails, notes
    for cid, got in measured(doc).items():
        for scale, verdict in got.items():
            pin = pins.get(cid, {}).get(scale)
            if pin == verdict:
                continue
            line = (f"{cid} at {scale}: {verdict}, pinned {pin}" if pin else f"{cid} at {scale}: {verdict}, not pinned")
            flip = pin in _DECIDED and verdict in _DECIDED and _DECIDED[pin] != _DECIDED[verdict]
            (fails if mode == "exact" or flip else notes).append(line)
    return fails, notes


def write(doc: dict, path: Path) -> int:
    """Write this run's verdicts into the pin file, keeping every pin this run did not measure;
    returns how many pins changed."""
    try:
        pins = load(path)
    except ValueError:  # a broken file is rewritten from this run's verdicts
        pins = {}
    changed = 0
    for cid, got in measured(doc).items():
        entry = pins.setdefault(cid, {})
        for scale, verdict in got.items():
            changed += entry.get(scale) != verdict
            entry[scale] = verdict
    lines = ["# Every claim's verdict at every scale a run measured (claimcheck/verdict_pins.py). A verdict",
             "# that moves fails the run until this file changes in the same commit, with the reason in",
             "# the commit's message. Rewrite it with `pytest --claims-repin`.", ""]
    for cid in sorted(pins):
        lines.append(f"[{json.dumps(cid)}]")
        lines += [f"{json.dumps(scale)} = {json.dumps(verdict)}" for scale, verdict in sorted(pins[cid].items())]
        lines.append("")
    path.write_text("\n".join(lines), encoding="utf-8")
    return changed
