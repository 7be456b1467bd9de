"""The report dir on disk: each run writes only into a folder of its own (``runs/<run>/``),
so runs in one checkout never share a file while they run; a finished run's report is copied
into the report dir file by file, and old runs are pruned."""
import datetime as _dt
import json
import os
import re
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

RUN_NAME = re.compile(r"\d{8}T\d{6}Z-\d+-[0-9a-f]{4}")


def git_commit(root: Path, paths=(), untracked: bool = False) -> str:
    """HEAD's short hash at ``root``, with "-dirty" where a tracked file (of ``paths``, if given;
    with ``untracked``, a new file too) has uncommitted changes; "unknown" outside a git checkout.
    The report's commit, and the suite's evidence records' (suite/evidence/store.py)."""
    def git(*args) -> str | None:
        try:
            return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return None

    sha = git("rev-parse", "--short", "HEAD")
    if not sha:
        return "unknown"
    dirty = git("status", "--porcelain", f"--untracked-files={'all' if untracked else 'no'}", "--", *paths)
    return sha + ("-dirty" if dirty or dirty is None else "")  # a status that failed is not shown clean


def run_id() -> str:
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return f"{now}-{os.getpid()}-{uuid.uuid4().hex[:4]}"  # two runs in one second and process differ


def keep_runs(config) -> int:
    value = config.getini("claimcheck_keep_runs")
    try:
        keep = int(value)
    except ValueError:
        keep = -1
    if keep < 0:
        raise pytest.UsageError(f"claimcheck_keep_runs = {value!r}: a whole number expected, 0 to keep every run")
    return keep


def drop_if_empty(run_dir: Path) -> None:
    """Remove a run's folder that holds nothing but its progress log (the run stopped before
    writing anything); a folder with anything else in it (a report, a pin's values) stays."""
    try:
        if run_dir.is_dir() and {p.name for p in run_dir.iterdir()} <= {"progress.log"}:
            shutil.rmtree(run_dir, ignore_errors=True)
    except OSError:
        pass


def _finished_at(d: Path) -> float | None:
    try:
        return (d / "claims.json").stat().st_mtime
    except OSError:  # not finished, or pruned by another run meanwhile
        return None


def finished_runs(runs: Path, current: Path) -> list[tuple[Path, dict]]:
    """(folder, claims.json) of every finished run under ``runs`` but ``current``, the
    earliest to finish first."""
    docs = []
    for d in runs.iterdir() if runs.is_dir() else ():
        if d == current or not RUN_NAME.fullmatch(d.name) or (t := _finished_at(d)) is None:
            continue
        try:
            docs.append((t, d, json.loads((d / "claims.json").read_text("utf-8"))))
        except (OSError, ValueError):  # being pruned or written by another run: not a finished run
            continue
    return [(d, doc) for _, d, doc in sorted(docs, key=lambda x: x[0])]


def prune_runs(runs: Path, keep: int, current: Path | None = None, protect=frozenset()) -> list[Path]:
    """Delete all but the ``keep`` most recently finished runs under ``runs`` (by when their
    claims.json was written, not when they started: a long run that ends last is the newest);
    return what was deleted. A run still going has no claims.json yet and is never touched, nor
    is ``current`` (the run pruning), nor a run in ``protect`` (one the report dir's report still
    reads: the latest to reach some test), nor anything but a run's own folder (named by
    run_id). ``keep`` 0 deletes nothing."""
    if keep <= 0 or not runs.is_dir():
        return []
    done = [(t, d) for d in runs.iterdir() if d.is_dir() and RUN_NAME.fullmatch(d.name)
            and (t := _finished_at(d)) is not None]
    old = [d for _, d in sorted(done)[:-keep] if d != current and d not in protect]
    for d in old:
        shutil.rmtree(d, ignore_errors=True)  # another run pruning the same folder at once is fine
    return old


def publish(run_dir: Path, outdir: Path, skip=frozenset()) -> None:
    """Copy a finished run's report into the report dir, file by file, each one replaced
    atomically: a reader never sees half a file, and two runs never share a file while they
    run (each writes only into its own run dir). ``skip``: paths relative to ``run_dir``."""
    for src in sorted(run_dir.rglob("*")):
        if not src.is_file() or src.name == "progress.log" or src.relative_to(run_dir) in skip:
            continue
        dest = outdir / src.relative_to(run_dir)
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
        try:
            shutil.copyfile(src, tmp)
            os.replace(tmp, dest)
        finally:
            tmp.unlink(missing_ok=True)
