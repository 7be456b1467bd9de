"""The claimcheck pytest plugin, loaded through its ``pytest11`` entry point.

It is configured by the registry file and ini options, never by code:

    [tool.pytest.ini_options]            # or pytest.ini's [pytest]
    claimcheck_registry = "claims.toml"  # the plugin is off in a project that names none
    claimcheck_report_dir = "reports"
    claimcheck_title = "Which claims of my chapter hold"
    claimcheck_tiers = ["fast: seconds", "slow: minutes; needs --runslow"]
    claimcheck_scales = ["analytic: no training", "ci (CI scale): reduced", "full (full scale): the text's"]

Each test names its claims (``@pytest.mark.claim("ID")``), carries one tier marker, and records
what it measured (``claim_record``). Every run writes its report into a folder of its own,
``<report dir>/runs/<run>/``, and copies it to the report dir when it ends.
"""
import datetime as _dt
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

from . import check, fingerprint, progress, report, verdict_pins
from .marks import EVIDENCE_KEY, PIN_KEY, TIER_SKIP, Undecided, is_divergence_mark, settings_from_ini
from .registry import RegistryError, load_registry
from .suite import PYTHON_FILES
from .suite import read as read_suite
from .verdict import unknown_ids

_KEY = pytest.StashKey["ClaimReporter"]()
RUN_ENV = "CLAIMCHECK_RUN_DIR"  # set by the controlling process; xdist workers inherit it
REASON_CHARS = 300  # characters kept of a test's one-line reason in the report (skip, xfail, failure)
SCOPES = ("latest", "run")


def pytest_addhooks(pluginmanager):
    from . import hooks
    pluginmanager.add_hookspecs(hooks)


def pytest_addoption(parser):
    g = parser.getgroup("claimcheck")
    g.addoption("--runslow", action="store_true", default=False,
                help="also run the tiers that the claimcheck_slow_tiers ini option names")
    g.addoption("--claims-registry", default=None,
                help="the claim registry (default: the claimcheck_registry ini option)")
    g.addoption("--claims-report-dir", default=None,
                help="where the report is written (default: the claimcheck_report_dir ini option)")
    g.addoption("--no-claims-report", action="store_true", help="write no report")
    g.addoption("--claims-report-scope", choices=SCOPES, default=None,
                help="the report dir's report: 'latest' (each test as the latest run that reached it saw it) "
                     "or 'run' (this run only); default: the claimcheck_report_scope ini option, else latest")
    parser.addini("claimcheck_registry", "the claim registry, relative to the rootdir; no registry, no plugin")
    parser.addini("claimcheck_report_dir", "where the report is written, relative to the rootdir", default="reports")
    parser.addini("claimcheck_title", "the report's title", default="Which claims hold")
    parser.addini("claimcheck_report_scope", "the report dir's report: latest (each test as the latest run "
                  "that reached it saw it) or run (this run only)", default="latest")
    parser.addini("claimcheck_tiers", "tiers, cheapest first: 'name: what it runs'", type="linelist")
    parser.addini("claimcheck_scales", "scales, lowest first: 'name (words): what it means'", type="linelist")
    parser.addini("claimcheck_default_scales", "the scale a tier's test measures at: 'tier: scale'",
                  type="linelist")
    parser.addini("claimcheck_slow_tiers", "tiers that run only with --runslow", type="linelist")
    g.addoption("--claims-pins", choices=verdict_pins.MODES, default="exact",
                help="compare each verdict with its pin (claimcheck_verdict_pins): exact (any move fails), loose "
                     "(only holds against diverges or fails), off")
    g.addoption("--claims-repin", action="store_true",
                help="write this run's verdicts into the claimcheck_verdict_pins file instead of comparing")
    parser.addini("claimcheck_verdict_pins", "a file of every claim's verdict per scale, relative to the rootdir; a "
                  "verdict that moves fails the run until the file changes (claimcheck/verdict_pins.py)")
    parser.addini("claimcheck_keep_runs", "finished runs' own reports kept under <report dir>/runs/, "
                  "newest first; 0 keeps every one", default="20")


def pytest_configure(config):
    root = Path(config.rootpath)
    reg = config.getoption("--claims-registry") or config.getini("claimcheck_registry")
    if not reg:  # installed, but this project keeps no registry: stay out of the way
        return
    if config.option.help or config.option.version:
        return
    settings = settings_from_ini(config)
    config.addinivalue_line("markers", "claim(*ids): the registry's claims this test proves")
    config.addinivalue_line("markers", "diagnosis(id): the test reports the claim's diagnosis grid; "
                            "it never changes the claim's verdict")
    config.addinivalue_line("markers", "scale(name): the scale the test measures at: " + ", ".join(settings.scales))
    for tier, doc in settings.tiers.items():
        config.addinivalue_line("markers", f"{tier}: {doc}")
    try:  # a missing text or a broken stamps file is one line now, not a lost report later
        registry = load_registry(root / reg, tuple(settings.tiers))
        texts = registry.texts()
        stamps = fingerprint.load_stamps(fingerprint.stamps_path(registry))
    except (RegistryError, ValueError) as e:
        raise pytest.UsageError(str(e)) from None
    # claimcheck check: the registry against its texts and the whole suite, before any test runs
    entries = read_suite(root, config.getini("testpaths"), tuple(settings.tiers),
                         tuple(config.getini("python_files")) or PYTHON_FILES)
    found = check.problems(registry, texts, entries)
    errors = [str(p) for p in found if p.error]
    if errors:
        raise pytest.UsageError(f"claimcheck check: {len(errors)} error(s) in the registry or the tests "
                                "(`claimcheck check` lists them without running pytest)\n" + "\n".join(errors))
    outdir = root / (config.getoption("--claims-report-dir") or config.getini("claimcheck_report_dir"))
    reporter = ClaimReporter(config, registry, outdir, settings)
    reporter.texts, reporter.stamps, reporter.entries = texts, stamps, entries
    reporter.notes += [str(p) for p in found if not p.error]
    reporter.keep_runs = _keep_runs(config)  # a bad value is one line now, not at the run's end
    reporter.scope = config.getoption("--claims-report-scope") or config.getini("claimcheck_report_scope")
    if reporter.scope not in SCOPES:
        raise pytest.UsageError(f"claimcheck_report_scope = {reporter.scope!r}: one of {', '.join(SCOPES)} expected")
    config.stash[_KEY] = reporter
    config.pluginmanager.register(reporter, "claimcheck-reporter")
    if not reporter.is_worker:  # a run that ends before its report (aborted, a usage error) leaves nothing
        config.add_cleanup(lambda: _drop_if_empty(reporter.run_dir))
    log = None if reporter.quiet else progress.register(config, reporter.run_dir)
    if log is not None:
        os.environ[progress.ENV] = str(log)  # before xdist starts its workers, so they inherit it
        config.add_cleanup(lambda: os.environ.pop(progress.ENV, None))


def _drop_if_empty(run_dir: Path) -> None:
    """Remove a run's folder that holds nothing but its progress log (the run stopped before
    writing anything); a folder with anything else in it (a report, a pin's values) stays."""
    try:
        if run_dir.is_dir() and {p.name for p in run_dir.iterdir()} <= {"progress.log"}:
            shutil.rmtree(run_dir, ignore_errors=True)
    except OSError:
        pass


def registry_of(config):
    return config.stash[_KEY].registry


def run_dir(config) -> Path:
    """The folder this run writes into (figures, pins' values, progress), moved whole into
    the report dir's ``runs/`` when the run ends."""
    return config.stash[_KEY].run_dir


def collected_claims(config) -> dict[str, list[str]]:
    """nodeid -> claim IDs for every collected test, deselected ones included."""
    return {n: t["claims"] for n, t in config.stash[_KEY].tests.items()}


def _jsonable(v):
    """Numbers from numpy/torch become plain floats; NaN and inf become strings."""
    if hasattr(v, "tolist"):
        v = v.tolist()
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return str(v)


def _claims_of(item) -> list[str]:
    return [cid for m in item.iter_markers("claim") for cid in m.args]


@pytest.fixture
def claim_record(request):
    """``claim_record(id, measured, expected=None, tolerance=None, label=None)``.

    Puts what a test measured beside what the document says, in the report. The ID must be
    one the test's ``claim`` marker names. A record with no ``label`` is the claim's own number:
    its ``expected`` defaults to the registry's ``value``, and one the value does not seem to state
    is a note of the run. A labelled record is a part (one seed, one width) with an ``expected`` of
    its own.
    """
    names = set(_claims_of(request.node))
    reporter = request.config.stash[_KEY]
    registry = reporter.registry

    def record(claim_id, measured, expected=None, tolerance=None, label=None):
        if claim_id not in names:
            raise ValueError(f"claim_record({claim_id!r}): this test's claim marker names "
                             f"{sorted(names) or 'no claim'}")
        if label is None and claim_id in registry:  # the claim's own number: the registry's
            why = check.expected_problem(registry[claim_id], expected)
            if why and why not in reporter.notes:
                reporter.notes.append(f"{request.node.nodeid}: {why}")
            expected = registry[claim_id].value if expected is None else expected
        request.node.user_properties.append(("claim_record", {
            "claim": claim_id, "label": label, "measured": _jsonable(measured),
            "expected": _jsonable(expected), "tolerance": tolerance}))
        return measured

    return record


@pytest.fixture
def claim_diagnosis(request):
    """``claim_diagnosis(id, {"fixed", "why", "grid": [...]})``: the claim's diagnosis, shown in
    its errata row. Only a test marked ``diagnosis(id)`` may report one."""
    names = {cid for m in request.node.iter_markers("diagnosis") for cid in m.args}

    def report(claim_id, diagnosis):
        if claim_id not in names:
            raise ValueError(f"claim_diagnosis({claim_id!r}): this test's diagnosis marker names "
                             f"{sorted(names) or 'no claim'}")
        request.node.user_properties.append(("claim_diagnosis", _jsonable(dict(diagnosis, claim=claim_id))))
        return diagnosis

    return report


@pytest.fixture
def claim_figure(request):
    """``claim_figure(id, name, draw)``: draw(fig) on a matplotlib figure saved under the report.

    matplotlib is optional: without it the figure is skipped and the test goes on.
    """
    names = set(_claims_of(request.node)) | {cid for m in request.node.iter_markers("diagnosis") for cid in m.args}
    outdir = run_dir(request.config)

    def figure(claim_id, name, draw):
        if claim_id not in names:
            raise ValueError(f"claim_figure({claim_id!r}): not named by this test's claim marker")
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            return None
        fig = plt.figure(figsize=(6, 4))
        try:
            draw(fig)
            path = outdir / "figures" / f"{name}.png"
            path.parent.mkdir(parents=True, exist_ok=True)
            fig.savefig(path, dpi=110, bbox_inches="tight")
        finally:
            plt.close(fig)
        request.node.user_properties.append(
            ("claim_figure", {"claim": claim_id, "path": f"figures/{name}.png"}))
        return path

    return figure


_TIER = pytest.StashKey[tuple]()  # (the tier a test runs in, the scale it measures at)


def _marked_tier(item) -> str:
    """The tier marker's tier; without one, the registry's tier of the claims the test names
    (a marker is needed only to override it), and "" for a test that names no claim."""
    reporter = item.config.stash[_KEY]
    tiers = [t for t in reporter.settings.tiers if item.get_closest_marker(t)]
    if tiers:
        return tiers[0] if len(tiers) == 1 else "?"
    claims = _claims_of(item)
    named = {reporter.registry[c].tier for c in claims if c in reporter.registry}
    if not claims:
        return ""
    return named.pop() if len(named) == 1 and named <= set(reporter.settings.tiers) else "?"


def _tier(item) -> str:
    return item.stash[_TIER][0] if _TIER in item.stash else _marked_tier(item)


def _scale(item) -> str | None:
    if _TIER in item.stash:
        return item.stash[_TIER][1]
    mark = item.get_closest_marker("scale")
    return item.config.stash[_KEY].settings.test_scale(_marked_tier(item), mark.args[0] if mark and mark.args else None)


def _settle_tier(item) -> None:
    """A document may move a test to another tier (pytest_claimcheck_tier); the test keeps its
    marker's scale, and carries the new tier's marker too, so ``-m <tier>`` selects it."""
    marked, scale = _marked_tier(item), _scale(item)
    if marked and not item.get_closest_marker(marked):  # the registry's tier: ``-m <tier>`` selects it
        item.add_marker(marked)
    moved = item.ihook.pytest_claimcheck_tier(item=item, tier=marked)  # the conftests above the test only
    if moved and moved != marked:
        if moved not in item.config.stash[_KEY].settings.tiers:
            raise pytest.UsageError(f"{item.nodeid}: pytest_claimcheck_tier moved it to {moved!r}, not a tier")
        item.add_marker(moved)
    item.stash[_TIER] = (moved or marked, scale)


def _check_item(item) -> str | None:
    """What is wrong with how a test declares its tier and verdict, in one line, or None."""
    reporter = item.config.stash[_KEY]
    settings, registry = reporter.settings, reporter.registry
    tiers = [t for t in settings.tiers if item.get_closest_marker(t)]
    if len(tiers) > 1:
        return (f"{item.nodeid}: a test carries at most one tier marker ({', '.join(settings.tiers)}); "
                f"it has {', '.join(tiers)}")
    unknown = [c for c in _claims_of(item) if c not in registry]
    if unknown:
        return (f"{item.nodeid}: names {', '.join(unknown)}, not in the registry {registry.path.name}; "
                "add a [[claim]] table or fix the ID")
    if _marked_tier(item) == "?":
        named = sorted({registry[c].tier for c in _claims_of(item)})
        return (f"{item.nodeid}: names claims of registry tier {', '.join(named)}, so it carries a tier marker "
                f"({', '.join(settings.tiers)})")
    mark = item.get_closest_marker("scale")
    if mark is not None and not settings.scales:
        return f"{item.nodeid}: @pytest.mark.scale(...), but this document names no scales (claimcheck_scales)"
    if mark is not None and (len(mark.args) != 1 or mark.args[0] not in settings.scales):
        return f"{item.nodeid}: scale must be one of {', '.join(settings.scales)}, got {mark.args}"
    if _claims_of(item) and _scale(item) is None:
        return (f"{item.nodeid}: a {_tier(item)}-tier test that names a claim declares its scale "
                f"(@pytest.mark.scale(...): {', '.join(settings.scales)})")
    for m in item.iter_markers("xfail"):
        if not is_divergence_mark(m):
            return (f"{item.nodeid}: an xfail here must be claimcheck.diverges(reason) "
                    "(strict, raises=AssertionError): only a failed assertion is a divergence")
    return None


def _reason(report) -> str:
    """One line: why a test was skipped, xfailed, or failed."""
    if getattr(report, "claimcheck_note", None):
        return report.claimcheck_note[:REASON_CHARS]
    if hasattr(report, "wasxfail") and report.skipped:
        return f"xfail: {report.wasxfail}"
    lr = report.longrepr
    if isinstance(lr, tuple):  # a skip: (path, lineno, "Skipped: reason")
        return lr[2].removeprefix("Skipped: ").removeprefix(f"{Undecided.__module__}.{Undecided.__qualname__}: ")
    crash = getattr(lr, "reprcrash", None)
    if crash is not None:
        return crash.message.splitlines()[0][:REASON_CHARS]
    text = str(lr).strip().splitlines()
    return (text[-1] if text else "failed")[:REASON_CHARS]


def _git_commit(root: Path) -> str:
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                             text=True, timeout=5).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=5).stdout.strip()
        return (sha + ("-dirty" if dirty else "")) if sha else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


_RUN_NAME = re.compile(r"\d{8}T\d{6}Z-\d+-[0-9a-f]{4}")
# the names a file defines, ``def test_x`` or ``test_x = ...``; lookaheads, so "def def test_x" gives both
_DEFINES = re.compile(r"(?m)\bdef (?=(\w+))|^(?=(\w+)\s*=)")


def _run_id() -> str:
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return f"{now}-{os.getpid()}-{uuid.uuid4().hex[:4]}"  # two runs in one second and process differ


class ClaimReporter:
    def __init__(self, config, registry, outdir: Path, settings):
        self.config, self.registry, self.outdir, self.settings = config, registry, outdir, settings
        self.tests: dict[str, dict] = {}
        self.is_worker = hasattr(config, "workerinput")
        self.doc = None
        self.notes: list[str] = []
        self.pin_moves: list[str] = []  # verdicts that moved from their pins (verdict_pins)
        self.pin_error = ""
        self.texts, self.stamps, self.entries = {}, None, []
        self.scope, self.built_from, self.interrupted = "latest", [], False
        self._defined: dict[str, tuple] = {}  # file -> (its source, the names it defines)
        self.usage_errors: list[str] = []
        self.keep_runs = 0
        # no report for a run that runs nothing: --co (an editor discovering tests), --fixtures
        self.quiet = bool(config.getoption("--no-claims-report") or config.option.collectonly
                          or getattr(config.option, "showfixtures", False))
        if self.is_worker and os.environ.get(RUN_ENV):
            self.run_dir = Path(os.environ[RUN_ENV])
        else:  # the controlling process, or a pytest run inside a test: a run of its own
            self.run_dir = outdir / "runs" / _run_id()
            previous = os.environ.get(RUN_ENV)
            os.environ[RUN_ENV] = str(self.run_dir)  # before xdist starts its workers
            config.add_cleanup(lambda: os.environ.pop(RUN_ENV, None) if previous is None
                               else os.environ.__setitem__(RUN_ENV, previous))

    # -- collection: every test and its claims, deselected ones too --------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items):
        problems = [p for p in map(_check_item, items) if p]
        if problems and self.is_worker:  # an xdist worker: it runs nothing, and the controller says why
            self.usage_errors = problems
            self.config.hook.pytest_deselected(items=list(items))
            items[:] = []
            return
        if problems:
            raise pytest.UsageError("\n".join(problems))  # every mistake, one line each
        for item in items:
            _settle_tier(item)
        need_slow = pytest.mark.skip(reason=TIER_SKIP)
        for item in items:
            if _tier(item) in self.settings.slow_tiers and not self.config.getoption("--runslow"):
                item.add_marker(need_slow)
            self.tests[item.nodeid] = {"outcome": "not-reported", "reason": "collected but never run",
                                       "tier": _tier(item), "scale": _scale(item),
                                       "claims": _claims_of(item), "records": [], "figures": [], "pins": []}

    def pytest_deselected(self, items):
        mark = self.config.getoption("markexpr", "")
        keyword = self.config.getoption("keyword", "")
        for item in items:
            t = self.tests.get(item.nodeid)
            if t is None:
                continue
            if mark:
                why = f"{t['tier'] + ' tier ' if t['tier'] else ''}not selected (-m {mark!r})"
            elif keyword:
                why = f"deselected by -k {keyword!r}"
            else:  # --deselect, --lf, another plugin
                why = "deselected"
            t.update(outcome="deselected", reason=why)

    def pytest_sessionfinish(self, session, exitstatus):
        self.interrupted = exitstatus == pytest.ExitCode.INTERRUPTED
        if self.is_worker:  # hand the collection over to the controller
            self.config.workeroutput["claimcheck_usage"] = json.dumps(self.usage_errors)
            self.config.workeroutput["claimcheck"] = json.dumps(
                {n: {k: t[k] for k in ("outcome", "reason", "tier", "scale", "claims")}
                 for n, t in self.tests.items() if t["outcome"] in ("deselected", "not-reported")})
            return
        if self.usage_errors:  # found by the xdist workers at collection: a usage error, as without xdist
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
            return
        if self.quiet or not self.tests:
            return
        self._write()
        if not self.interrupted:
            self._check_pins(session)

    def _check_pins(self, session):
        name = self.config.getini("claimcheck_verdict_pins")
        if not name:
            return
        path = Path(self.config.rootpath) / name
        try:
            if self.config.getoption("--claims-repin"):
                n = verdict_pins.write(self.doc, path)
                self.notes.append(f"{n} verdict pin(s) changed in {name}: commit it with the reason")
                return
            fails, notes = verdict_pins.moved(self.doc, verdict_pins.load(path), self.config.getoption("--claims-pins"))
        except ValueError as e:  # a broken pin file: its one line, and the run fails
            fails, notes, self.pin_error = [], [], str(e)
        self.notes += [f"verdict moved (a note under --claims-pins=loose): {n}" for n in notes]
        self.pin_moves = fails
        if (fails or self.pin_error) and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error):
        self.usage_errors += [p for p in json.loads(getattr(node, "workeroutput", {}).get("claimcheck_usage") or "[]")
                              if p not in self.usage_errors]  # every worker finds the same
        data = getattr(node, "workeroutput", {}).get("claimcheck")
        for nodeid, t in json.loads(data or "{}").items():
            if nodeid not in self.tests:  # each worker collects the same tests
                self.tests[nodeid] = dict(t, records=[], figures=[], pins=[])

    # -- outcomes ----------------------------------------------------------------------
    def pytest_runtest_logreport(self, report):
        if self.is_worker:
            return
        t = self.tests.setdefault(report.nodeid, {"outcome": "not-reported", "reason": "",
                                                  "tier": "?", "scale": None, "claims": [],
                                                  "records": [], "figures": [], "pins": []})
        for name, value in report.user_properties:
            if name == "claim_claims":
                t.update(value)
            elif name == "claim_record" and report.when == "call":
                t["records"].append(value)
            elif name == "claim_figure" and report.when == "call":
                t["figures"].append(value)
            elif name in (PIN_KEY, "claim_pin") and report.when == "call":
                t["pins"].append(value)
                self._old_key(name)
            elif name == "claim_diagnosis" and report.when == "call":
                t["diagnosis"] = value
            elif name in (EVIDENCE_KEY, "claim_evidence"):  # may come at teardown, once the test has read its runs
                t["evidence"] = value
                self._old_key(name)
        outcome = None
        if report.failed:
            outcome = "failed" if report.when == "call" else "error"
        elif report.skipped:
            outcome = ("xfailed" if hasattr(report, "wasxfail") else
                       "undecided" if ("claim_undecided", True) in report.user_properties else "skipped")
        elif report.when == "call":
            outcome = "xpassed" if hasattr(report, "wasxfail") else "passed"
        if outcome and not (t["outcome"] in ("failed", "error") and outcome != "error"):
            t.update(outcome=outcome, reason=_reason(report) if outcome != "passed" else "")
            if outcome == "undecided" and ("claim_at_cap", True) in report.user_properties:
                t["at_cap"] = True
        if report.when == "call":
            t["duration"] = round(report.duration, 3)

    def _old_key(self, name):
        new = {"claim_pin": "claimcheck.pin_checked", "claim_evidence": "claimcheck.evidence_note"}.get(name)
        note = f"the user_properties key {name!r} is read for now, and will not be: use {new}(request.node, ...)"
        if new and note not in self.notes:
            self.notes.append(note)

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)  # outermost: sees the xfail verdict
    def pytest_runtest_makereport(self, item, call):
        # Tell the controller (xdist) which claims, tier and scale this test has, once.
        if call.when == "setup":
            item.user_properties.append(("claim_claims", {"claims": _claims_of(item), "tier": _tier(item),
                                                          "scale": _scale(item)}))
        outcome = yield
        rep = outcome.get_result()
        if call.excinfo is not None and call.excinfo.errisinstance(Undecided):
            if call.when == "call":
                rep.user_properties.append(("claim_undecided", True))
                if getattr(call.excinfo.value, "final", False):
                    rep.user_properties.append(("claim_at_cap", True))
            else:  # a fixture cannot have measured the claim
                rep.outcome = "failed"
                rep.claimcheck_note = f"undecided() in {call.when} is not a verdict: {call.excinfo.value.msg}"[:REASON_CHARS]
            return
        if not hasattr(rep, "wasxfail"):
            return
        # Only an assertion that fails in the test's own call is a divergence; an expected
        # failure anywhere else (setup, teardown, pytest.xfail()) is a failure of the suite.
        marked = any(is_divergence_mark(m) for m in item.iter_markers("xfail"))
        asserted = call.excinfo is not None and call.excinfo.errisinstance(AssertionError)
        if call.when != "call" or not marked or not asserted:
            where = "in setup" if call.when == "setup" else "in teardown" if call.when == "teardown" \
                else "without claimcheck.diverges" if not marked else "by pytest.xfail(), not a failed assertion"
            rep.outcome = "failed"
            rep.claimcheck_note = f"an expected failure {where} is not a divergence: {rep.wasxfail or 'xfail'}"
            del rep.wasxfail

    # -- output ------------------------------------------------------------------------
    def _suspects(self, texts, quiet=False) -> dict:
        """The claims whose sentence changed since it was stamped; no stamps file, no check
        but 'quote not found', and a note that says how to stamp."""
        path, stamps = fingerprint.stamps_path(self.registry), self.stamps
        if quiet:
            return fingerprint.check(self.registry, texts, stamps)
        if stamps is None:
            self.notes.append(f"no fingerprints in {path.name}: changed sentences cannot be flagged; "
                              "run `claimcheck stamp` once the quotes are reviewed")
        unstamped = [cid for cid in self.registry if stamps is not None and cid not in stamps]
        if unstamped:
            self.notes.append(f"{len(unstamped)} claim(s) never stamped ({', '.join(unstamped[:5])}): "
                              "run `claimcheck stamp` once their quotes are reviewed")
        return fingerprint.check(self.registry, texts, stamps)

    def _write(self):
        run = {
            "generated": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "commit": _git_commit(Path(self.config.rootpath)),
            "tiers": [],
            "python": sys.version.split()[0],
            "args": " ".join(self.config.invocation_params.args),
            "run": self.run_dir.name,
        }
        info = {}
        for part in self.config.hook.pytest_claimcheck_run_info(config=self.config):
            info.update(part or {})
        run["info"] = {k: str(v) for k, v in info.items()}
        suite = {cid for e in self.entries for cid in e.claims}
        run["training"] = progress.finished(self.run_dir / "progress.log")
        texts = self.texts  # read at configure: the text the tests were judged against
        self.doc = report.build(self.registry, self.tests, [run], suite, self.settings,
                                self._suspects(texts), self.config.getini("claimcheck_title"), texts,
                                self.config.rootpath)
        self.doc["runs"][0]["tiers"] = self.doc["tiers"]
        if self.interrupted:  # Ctrl-C: a report of what ran, said to be partial
            self.doc["interrupted"] = self.doc["runs"][0]["interrupted"] = True
        self.doc["notes"] = self.notes  # claimcheck check's warnings and the run's notes
        try:
            own = report.write(self.doc, self.run_dir, texts)
            top, used = self._latest(suite, texts) if self.scope == "latest" else (None, set())
            if top is None:
                publish(self.run_dir, self.outdir)
            else:  # the run's figures and pins, then the merged report over the run's own
                publish(self.run_dir, self.outdir, skip={p.relative_to(self.run_dir) for p in own})
                with tempfile.TemporaryDirectory(dir=self.outdir, prefix=".latest-") as tmp:
                    report.write(top, Path(tmp), texts)
                    publish(Path(tmp), self.outdir)
                self.built_from = [(r.get("run"), r["tests"]) for r in top["runs"]]
            prune_runs(self.outdir / "runs", self.keep_runs, self.run_dir, protect=used)
        except OSError as e:
            self.doc["write_error"] = f"could not write the report to {self.outdir}: {e}"

    def _latest(self, suite, texts) -> tuple[dict | None, set[Path]]:
        """(the report of each test as the latest run that reached it saw it, the run folders it
        reads); the report is None when it is this run's own (no earlier run adds a test)."""
        docs = []
        for d in (self.outdir / "runs").iterdir() if (self.outdir / "runs").is_dir() else ():
            if d == self.run_dir or not _RUN_NAME.fullmatch(d.name) or not (d / "claims.json").is_file():
                continue
            try:
                docs.append(((d / "claims.json").stat().st_mtime, d,
                             json.loads((d / "claims.json").read_text("utf-8"))))
            except (OSError, ValueError):  # being pruned or written by another run: not a finished run
                continue
        docs.sort(key=lambda x: x[0])
        ordered = [doc for _, _, doc in docs] + [self.doc]
        tests, runs = report.latest_results(ordered, self._still_in_suite)
        names = {r.get("run") for r in runs}
        used = {d for _, d, doc in docs if (doc.get("runs") or [{}])[0].get("run") in names}
        if len(runs) < 2:
            return None, used
        top = report.build(self.registry, tests, runs, suite, self.settings, self._suspects(texts, quiet=True),
                           self.config.getini("claimcheck_title"), texts, self.config.rootpath)
        top["notes"] = self.notes
        return top, used

    def _still_in_suite(self, nodeid: str) -> bool:
        """Whether a test an earlier run saw is still in the suite: its file still defines it, with
        ``def`` or by assignment (``test_x = make_test(...)``)."""
        path, _, rest = nodeid.partition("::")
        name = rest.rsplit("::", 1)[-1].split("[", 1)[0]
        if path not in self._defined:  # each file read and scanned once, not once per test
            try:
                src = (Path(self.config.rootpath) / path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                src = None
            self._defined[path] = (src, None if src is None else {a or b for a, b in _DEFINES.findall(src)})
        src, names = self._defined[path]
        if not name or src is None:
            return False
        if re.fullmatch(r"\w+", name):  # the scan's names are whole \w runs
            return name in names
        # an identifier with a character \w lacks (U+00B7, a combining mark): read it alone
        return re.search(rf"(?m)\bdef {re.escape(name)}\b|^{re.escape(name)}\s*=", src) is not None

    def pytest_terminal_summary(self, terminalreporter):
        if self.usage_errors and not self.is_worker:
            for line in self.usage_errors:
                terminalreporter.write_line(f"ERROR: {line}", red=True)
            return
        if self.is_worker or self.doc is None:
            return
        tr = terminalreporter
        tr.section("claimcheck")
        for line in report.terminal_lines(self.doc):
            tr.write_line(line)
        unknown = unknown_ids(self.registry, self.tests)
        for cid, nodes in unknown.items():
            tr.write_line(f"  UNKNOWN   {cid} named by {nodes[0]} is not in the registry", red=True)
        for note in self.notes:
            tr.write_line(f"  note: {note}")
        if self.pin_error:
            tr.write_line(f"  ERROR: verdict pins: {self.pin_error}", red=True)
        for line in self.pin_moves:
            tr.write_line(f"  VERDICT MOVED {line}: if the move is right, run with --claims-repin and commit "
                          f"{self.config.getini('claimcheck_verdict_pins')} with the reason", red=True)
        tr.write_line(self.doc.get("write_error") or
                      f"report: {self.outdir}/index.html, claims.md, claims.json, badge.svg "
                      f"(this run's own: {self.run_dir})")
        if self.built_from and not self.doc.get("write_error"):
            tr.write_line("  it shows each test as the latest run that reached it: " + "; ".join(
                f"{run} ({n} tests)" for run, n in self.built_from) + " (--claims-report-scope=run: this run only)")


def _keep_runs(config) -> int:
    value = config.getini("claimcheck_keep_runs")
    try:
        keep = int(value)
    except ValueError:
        keep = -1
    if keep < 0:
        raise pytest.UsageError(f"claimcheck_keep_runs = {value!r}: a whole number expected, 0 to keep every run")
    return keep


def prune_runs(runs: Path, keep: int, current: Path | None = None, protect=frozenset()) -> list[Path]:
    """Delete all but the ``keep`` most recently finished runs under ``runs`` (by when their
    claims.json was written, not when they started: a long run that ends last is the newest);
    return what was deleted. A run still going has no claims.json yet and is never touched, nor
    is ``current`` (the run pruning), nor a run in ``protect`` (one the report dir's report still
    reads: the latest to reach some test), nor anything but a run's own folder (named by
    _run_id). ``keep`` 0 deletes nothing."""
    if keep <= 0 or not runs.is_dir():
        return []

    def finished_at(d: Path) -> float | None:
        try:
            return (d / "claims.json").stat().st_mtime
        except OSError:  # not finished, or pruned by another run meanwhile
            return None

    done = [(t, d) for d in runs.iterdir() if d.is_dir() and _RUN_NAME.fullmatch(d.name)
            and (t := finished_at(d)) is not None]
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
