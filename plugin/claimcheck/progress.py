"""Signs of life while the suite trains: one line per run when it starts and every ``EVERY_S``
seconds (family/arm/seed, step, elapsed time), and one when it ends, with its wall time.

Every process (xdist workers too) appends its lines to ``progress.log`` in the run's own folder;
the controlling process tails that file and writes each new line to the terminal, so ``-n 2``
shows them as well (a worker finds the log in its ``workerinput``). The finished runs' wall
times also go into the report (``claims.json`` "training"). The lines are a sign of life, not
the work: a failure to write one (the folder was deleted, the disk is full) is dropped and never
fails a test.
"""
import re
import sys
import threading
import time
from pathlib import Path

import pytest

EVERY_S = 30.0
WORKER_KEY = "claimcheck_progress_log"  # the log's path, in each xdist worker's workerinput
_log: Path | None = None  # this process's log: the innermost pytest run's, while it runs
_DONE = re.compile(r"^(?P<label>\S+) +done: (?P<steps>\d+) steps in (?P<wall>[\d.]+) s$")


def _write(line: str):
    path = _log
    if path is None:  # outside pytest (a script): straight to stderr
        print(line, file=sys.stderr, flush=True)
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)  # the report folder may have been deleted
        with open(path, "a", encoding="utf-8") as f:  # one short append per line: whole under O_APPEND
            f.write(line + "\n")
    except OSError:
        pass


def tracker(label: str, steps: int):
    """``progress(step)`` for one run named ``label`` (family/arm/seed) of ``steps`` steps."""
    start = last = time.perf_counter()

    def progress(step: int):
        nonlocal last
        now = time.perf_counter()
        if step >= steps:
            _write(f"{label:36s} done: {steps} steps in {now - start:.1f} s")
        elif step == 1 or now - last >= EVERY_S:
            last = now
            _write(f"{label:36s} step {step:>6d}/{steps}  {now - start:6.0f} s")

    return progress


def finished(path: Path) -> list[dict]:
    """The runs a progress log saw end: {label, steps, wall_s}."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return []
    return [{"label": m["label"], "steps": int(m["steps"]), "wall_s": float(m["wall"])}
            for m in map(_DONE.match, text.splitlines()) if m]


class Tail:
    """The controlling process's side: a thread that copies new log lines to the terminal."""

    def __init__(self, config, path: Path):
        self.config, self.path = config, path
        self._stop = threading.Event()
        self._thread = None
        self._pos = 0

    def pytest_sessionstart(self, session):
        self._thread = threading.Thread(target=self._run, name="claimcheck-progress", daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.wait(1.0):
            self._flush()

    def _flush(self):
        try:
            with open(self.path, encoding="utf-8") as f:
                f.seek(self._pos)
                text = f.read()
        except OSError:
            return
        done = text[: text.rfind("\n") + 1]  # whole lines only
        self._pos += len(done.encode("utf-8"))
        tr = self.config.pluginmanager.get_plugin("terminalreporter")
        for line in done.splitlines():
            if tr is not None:
                tr.write_line(f"[train] {line}")

    @pytest.hookimpl(optionalhook=True)  # xdist's, before each worker starts
    def pytest_configure_node(self, node):
        node.workerinput[WORKER_KEY] = str(self.path)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._flush()


def register(config, run_dir: Path) -> None:
    """This process's log while the run lasts: in the controlling process, the run's own log and
    the tail (a pytest run inside a test too: it is a run of its own); in an xdist worker, which
    only writes, its controller's log."""
    global _log
    if hasattr(config, "workerinput"):
        given = config.workerinput.get(WORKER_KEY)
        path = Path(given) if given else None
    elif config.option.collectonly:
        return
    else:
        path = run_dir / "progress.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
        config.pluginmanager.register(Tail(config, path), "claimcheck-progress")
    previous, _log = _log, path

    def restore():
        global _log
        _log = previous
    config.add_cleanup(restore)
