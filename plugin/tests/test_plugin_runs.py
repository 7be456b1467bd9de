"""One run cannot break another: each run writes into a folder of its own and publishes its
report whole when it ends; progress lines that cannot be written are dropped, never a failure."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REGISTRY = '''[[source]]
id = "T"
file = "text.txt"
title = "A text"
language = "en"

[[claim]]
id = "SLOW-01"
source = "T"
quote = "Training makes it better."
statement = "s"
value = "1.0"
kind = "qualitative"
tier = "slow"

[[claim]]
id = "FAST-01"
source = "T"
quote = "Two and two make four."
statement = "s"
value = "4"
kind = "exact"
tier = "fast"
'''

TESTS = '''
import os, time
from pathlib import Path
import pytest
from claimcheck.progress import tracker

@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("SLOW-01")
def test_trains(claim_record):
    """'Trains' until the file go exists, writing progress lines all along."""
    progress = tracker("fam/arm/seed0", 3)
    progress(1)
    Path("started").write_text("yes")
    deadline = time.time() + 60
    while not Path("go").exists() and time.time() < deadline:
        progress(2)
        time.sleep(0.05)
    progress(3)
    claim_record("SLOW-01", 1.0, expected=1.0)

@pytest.mark.fast
@pytest.mark.claim("FAST-01")
def test_adds(claim_record):
    assert claim_record("FAST-01", 2 + 2, expected=4) == 4
'''


@pytest.fixture
def project(tmp_path):
    (tmp_path / "claims.toml").write_text(REGISTRY, encoding="utf-8")
    (tmp_path / "text.txt").write_text("Two and two make four. Training makes it better.\n", encoding="utf-8")
    (tmp_path / "test_it.py").write_text(TESTS, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\nclaimcheck_registry = claims.toml\n"
                                         "claimcheck_report_dir = out\n"
                                         "claimcheck_scales =\n    analytic: no training\n    ci: reduced training\n"
                                         "claimcheck_default_scales =\n    fast: analytic\n", encoding="utf-8")
    return tmp_path


def _env():
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT")}
    return env


def _pytest(cwd, *args):
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *args]


def _wait_for(path: Path, proc, timeout=60):
    deadline = time.time() + timeout
    while not path.exists():
        if proc.poll() is not None or time.time() > deadline:
            raise AssertionError(f"the slow run never started: {proc.communicate()[0][-2000:]}")
        time.sleep(0.05)


def _doc(run_dir: Path) -> dict:
    return json.loads((run_dir / "claims.json").read_text(encoding="utf-8"))


@pytest.mark.fast
def test_a_fast_run_while_a_slow_one_trains_and_reports_deleted_mid_run_break_nothing(project):
    """One slow run, three things done to it while it trains: a fast run in the same checkout
    starts and ends, then the whole report dir is deleted (its progress log and run folder with
    it), then the slow run ends. Both runs' verdicts stand; nothing failed."""
    slow = subprocess.Popen(_pytest(project, "--claims-runslow", "-m", "slow"), cwd=project, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        _wait_for(project / "started", slow)
        fast = subprocess.run(_pytest(project, "-m", "fast"), cwd=project, env=_env(), capture_output=True,
                              text=True, timeout=120)
        assert fast.returncode == 0, fast.stdout[-2000:]
        (fast_dir,) = [r for r in (project / "out" / "runs").iterdir() if (r / "claims.json").is_file()]
        fast_doc = _doc(fast_dir)
        running = [r for r in (project / "out" / "runs").iterdir() if r != fast_dir]
        log = (running[0] / "progress.log").read_text(encoding="utf-8")  # the slow run's own, untouched
        assert "fam/arm/seed0" in log and "step      1/3" in log
        shutil.rmtree(project / "out")  # progress lines are written into the void meanwhile
        time.sleep(0.3)
        (project / "go").write_text("go")
        out, _ = slow.communicate(timeout=120)
    finally:
        slow.kill()
    assert slow.returncode == 0, out[-2000:]
    status = lambda doc: {c["id"]: c["status"] for c in doc["claims"]}  # noqa: E731
    assert fast_doc["tiers"] == ["fast"] and status(fast_doc) == {"SLOW-01": "not-run", "FAST-01": "holds"}
    slow_doc = _doc(project / "out")  # published whole when it ended
    assert slow_doc["tiers"] == ["slow"] and status(slow_doc) == {"SLOW-01": "holds", "FAST-01": "not-run"}
    (slow_dir,) = (project / "out" / "runs").iterdir()
    assert _doc(slow_dir) == slow_doc
    assert "done: 3 steps" in (slow_dir / "progress.log").read_text(encoding="utf-8")  # recreated after the deletion


# ---- Ctrl-C: the report of what ran, said to be partial ---------------------------------

SIGINT_TESTS = '''
import pathlib, time
import pytest

@pytest.mark.fast
@pytest.mark.claim("FAST-01")
def test_first(claim_record):
    assert claim_record("FAST-01", 2 + 2) == 4

@pytest.mark.fast
@pytest.mark.claim("SLOW-01")
def test_waits_for_ctrl_c(claim_record):
    pathlib.Path("started").write_text("")
    time.sleep(60)
'''


# pytest as a terminal starts it. A suite started in the background (``nohup``, ``&``) passes SIGINT
# on ignored, and Python then never raises KeyboardInterrupt; the child sets Python's own handler
# first (in the child's code: preexec_fn is unsafe in a process with threads, as torch's).
PYTEST_AS_IN_A_TERMINAL = ("import signal, sys, pytest; signal.signal(signal.SIGINT, signal.default_int_handler); "
                           "sys.exit(pytest.console_main())")


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a process group is POSIX")
@pytest.mark.parametrize("workers", [pytest.param((), marks=pytest.mark.fast, id="serial"),
                                     pytest.param(("-n", "2"), marks=pytest.mark.slow, id="xdist")])
def test_ctrl_c_writes_the_report_of_what_ran_marked_interrupted_with_no_traceback(project, workers):
    """Ctrl-C in a terminal signals the whole process group (xdist's workers too): so does this."""
    if workers:
        pytest.importorskip("xdist", reason="pytest-xdist is not installed")
    (project / "claims.toml").write_text(REGISTRY.replace('tier = "slow"', 'tier = "fast"'), encoding="utf-8")
    (project / "test_it.py").write_text(SIGINT_TESTS, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-c", PYTEST_AS_IN_A_TERMINAL, "-p", "no:cacheprovider", "-p", "no:randomly",
                             *workers], cwd=project, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    deadline = time.monotonic() + 60
    while not (project / "started").exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[0][-2000:]
        time.sleep(0.05)
    time.sleep(0.3)  # inside its sleep
    os.killpg(proc.pid, signal.SIGINT)
    out = proc.communicate(timeout=60)[0]
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out[-3000:]
    assert "Traceback" not in out and "Error" not in out.replace("KeyboardInterrupt", ""), out[-3000:]
    [own] = (project / "out" / "runs").glob("*/claims.json")
    doc = json.loads(own.read_text(encoding="utf-8"))
    assert doc["interrupted"] is True and doc["runs"][0]["interrupted"] is True
    by = {c["id"]: c["status"] for c in doc["claims"]}
    assert by == {"FAST-01": "holds", "SLOW-01": "not-run"}
    assert "Interrupted: this run stopped before its end" in (own.parent / "claims.md").read_text(encoding="utf-8")
    # the report dir's report: each test as the latest run that reached it, this one included
    top = json.loads((project / "out" / "claims.json").read_text(encoding="utf-8"))
    assert {c["id"]: c["status"] for c in top["claims"]} == {"FAST-01": "holds", "SLOW-01": "not-run"}
