"""One run's reporter: it hears every test's outcome (from xdist's workers too), and at the
run's end writes the report (``_write``), merged with earlier runs', and checks the verdict pins.
Registered as a plugin object by plugin.py's pytest_configure, where the plugin is on."""
import datetime as _dt
import json
import re
import sys
import tempfile
from pathlib import Path

import pytest

from . import fingerprint, progress, report, storage, verdict_pins
from .fmt import plural
from .items import check_item, claims_of, scale_of, settle_tier, tier_of
from .marks import EVIDENCE_KEY, PIN_KEY, TIER_SKIP, Undecided, is_divergence_mark
from .verdict import unknown_ids

KEY = pytest.StashKey["ClaimReporter"]()
REASON_CHARS = 300  # characters kept of a test's one-line reason in the report (skip, xfail, failure)
RUN_DIR_KEY = "claimcheck_run_dir"  # the controller's run folder, in each xdist worker's workerinput
# the names a file defines, ``def test_x`` or ``test_x = ...``; lookaheads, so "def def test_x" gives both
_DEFINES = re.compile(r"(?m)\bdef (?=(\w+))|^(?=(\w+)\s*=)")


def reporter_of(config) -> "ClaimReporter":
    return config.stash[KEY]


def registry_of(config):
    return reporter_of(config).registry


def run_dir(config) -> Path:
    """The folder this run writes into (figures, pins' values, progress), moved whole into
    the report dir's ``runs/`` when the run ends."""
    return reporter_of(config).run_dir


def collected_claims(config) -> dict[str, list[str]]:
    """nodeid -> claim IDs for every collected test, deselected ones included."""
    return {n: t["claims"] for n, t in reporter_of(config).tests.items()}


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
        given = getattr(config, "workerinput", {}).get(RUN_DIR_KEY)
        # an xdist worker writes into its controller's run; any other run (a pytest run inside a
        # test included) has a run of its own
        self.run_dir = Path(given) if given else outdir / "runs" / storage.run_id()

    @pytest.hookimpl(optionalhook=True)  # xdist's, in the controller, before each worker starts
    def pytest_configure_node(self, node):
        node.workerinput[RUN_DIR_KEY] = str(self.run_dir)

    # -- collection: every test and its claims, deselected ones too --------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items):
        problems = [p for p in (check_item(i, self.settings, self.registry) for i in items) if p]
        if problems and self.is_worker:  # an xdist worker: it runs nothing, and the controller says why
            self.usage_errors = problems
            self.config.hook.pytest_deselected(items=list(items))
            items[:] = []
            return
        if problems:
            raise pytest.UsageError("\n".join(problems))  # every mistake, one line each
        for item in items:
            settle_tier(item, self.settings, self.registry)
        need_slow = pytest.mark.skip(reason=TIER_SKIP)
        runslow = self.config.getoption("--claims-runslow")
        for item in items:
            tier = tier_of(item, self.settings, self.registry)
            if tier in self.settings.slow_tiers and not runslow:
                item.add_marker(need_slow)
            self.tests[item.nodeid] = {"outcome": "not-reported", "reason": "collected but never run",
                                       "tier": tier, "scale": scale_of(item, self.settings, self.registry),
                                       "claims": claims_of(item), "records": [], "figures": [], "pins": []}

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
            if outcome in ("failed", "error"):
                t["broken"] = ("claim_broken", True) in report.user_properties
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
            item.user_properties.append(("claim_claims", {
                "claims": claims_of(item), "tier": tier_of(item, self.settings, self.registry),
                "scale": scale_of(item, self.settings, self.registry)}))
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
        if rep.failed and call.excinfo is not None and not call.excinfo.errisinstance(AssertionError):
            # an exception, not a failed assertion: the test broke, the sentence was not judged
            rep.user_properties.append(("claim_broken", True))
        if rep.failed and call.when == "call" and call.excinfo is None and \
                any(is_divergence_mark(m) for m in item.iter_markers("xfail")):  # a strict xpass
            rep.claimcheck_note = ("marked claimcheck.diverges, but the test passed: the divergence did not show; "
                                   "if the sentence now holds, remove @diverges")
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
            "commit": storage.git_commit(Path(self.config.rootpath)),
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
                storage.publish(self.run_dir, self.outdir)
            else:  # the run's figures and pins, then the merged report over the run's own
                storage.publish(self.run_dir, self.outdir, skip={p.relative_to(self.run_dir) for p in own})
                with tempfile.TemporaryDirectory(dir=self.outdir, prefix=".latest-") as tmp:
                    report.write(top, Path(tmp), texts)
                    storage.publish(Path(tmp), self.outdir)
                self.built_from = [(r.get("run"), r["tests"]) for r in top["runs"]]
            storage.prune_runs(self.outdir / "runs", self.keep_runs, self.run_dir, protect=used)
        except OSError as e:
            self.doc["write_error"] = f"could not write the report to {self.outdir}: {e}"

    def _latest(self, suite, texts) -> tuple[dict | None, set[Path]]:
        """(the report of each test as the latest run that reached it saw it, the run folders it
        reads); the report is None when it is this run's own (no earlier run adds a test)."""
        docs = storage.finished_runs(self.outdir / "runs", self.run_dir)
        tests, runs = report.latest_results([doc for _, doc in docs] + [self.doc], self._still_in_suite)
        names = {r.get("run") for r in runs}
        used = {d for d, doc in docs if (doc.get("runs") or [{}])[0].get("run") in names}
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
                f"{run} ({plural(n, 'test')})" for run, n in self.built_from) + " (--claims-report-scope=run: this run only)")
