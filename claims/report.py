"""The claimcheck pytest plugin: the ``claim`` marker, ``claim_record``/``claim_figure``
fixtures, and a per-claim report written at the end of every run (xdist included).

Merge the per-run files of several runs (fast here, slow there, gpu elsewhere) with::

    python -m claims.report merge reports/runs/*.json --out reports
"""
import argparse
import datetime as _dt
import json
import math
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from . import render
from .registry import RegistryError, load_registry
from .verdict import merge_test, tiers_run, unknown_ids

TIER_MARKERS = ("fast", "slow", "gpu")
_KEY = pytest.StashKey["ClaimReporter"]()


def pytest_addoption(parser):
    g = parser.getgroup("claimcheck")
    g.addoption("--claims-registry", default=None,
                help="the claim registry (default: fixtures/claims.toml under the rootdir)")
    g.addoption("--claims-report-dir", default=None,
                help="where the report is written (default: reports/ under the rootdir)")
    g.addoption("--no-claims-report", action="store_true", help="write no report")


def pytest_configure(config):
    config.addinivalue_line("markers", "claim(*ids): the catalogue claims this test proves")
    root = Path(config.rootpath)
    reg_path = Path(config.getoption("--claims-registry") or root / "fixtures" / "claims.toml")
    try:
        registry = load_registry(reg_path)
    except RegistryError as e:
        raise pytest.UsageError(str(e)) from None
    outdir = Path(config.getoption("--claims-report-dir") or root / "reports")
    reporter = ClaimReporter(config, registry, outdir)
    config.stash[_KEY] = reporter
    config.pluginmanager.register(reporter, "claimcheck-reporter")


def registry_of(config):
    return config.stash[_KEY].registry


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
    one the test's ``claim`` marker names.
    """
    names = set(_claims_of(request.node))

    def record(claim_id, measured, expected=None, tolerance=None, label=None):
        if claim_id not in names:
            raise ValueError(f"claim_record({claim_id!r}): this test's claim marker names "
                             f"{sorted(names) or 'no claim'}")
        request.node.user_properties.append(("claim_record", {
            "claim": claim_id, "label": label, "measured": _jsonable(measured),
            "expected": _jsonable(expected), "tolerance": tolerance}))
        return measured

    return record


@pytest.fixture
def claim_figure(request):
    """``claim_figure(id, name, draw)``: draw(fig) on a matplotlib figure saved under the report.

    matplotlib is optional: without it the figure is skipped and the test goes on.
    """
    names = set(_claims_of(request.node))
    outdir = request.config.stash[_KEY].outdir

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


def _tier(item) -> str:
    tiers = [t for t in TIER_MARKERS if item.get_closest_marker(t)]
    return tiers[0] if len(tiers) == 1 else "?"


def _reason(report) -> str:
    """One line: why a test was skipped, xfailed, or failed."""
    if hasattr(report, "wasxfail") and report.skipped:
        return f"xfail: {report.wasxfail}"
    lr = report.longrepr
    if isinstance(lr, tuple):  # a skip: (path, lineno, "Skipped: reason")
        return lr[2].removeprefix("Skipped: ")
    crash = getattr(lr, "reprcrash", None)
    if crash is not None:
        return crash.message.splitlines()[0][:300]
    text = str(lr).strip().splitlines()
    return (text[-1] if text else "failed")[:300]


def _git_commit(root: Path) -> str:
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                             text=True, timeout=5).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=5).stdout.strip()
        return (sha + ("-dirty" if dirty else "")) if sha else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _device() -> str:
    forced = os.environ.get("CLAIMS_DEVICE")
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and forced != "cpu":
        return f"cuda ({torch.cuda.get_device_name(0)})"
    return forced or "cpu"


def _version(dist) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


class ClaimReporter:
    def __init__(self, config, registry, outdir: Path):
        self.config, self.registry, self.outdir = config, registry, outdir
        self.tests: dict[str, dict] = {}
        self.is_worker = hasattr(config, "workerinput")
        self.doc = None

    # -- collection: every test and its claims, deselected ones too --------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items):
        for item in items:
            self.tests[item.nodeid] = {"outcome": "not-reported", "reason": "collected but never run",
                                       "tier": _tier(item), "claims": _claims_of(item),
                                       "records": [], "figures": []}

    def pytest_deselected(self, items):
        expr = self.config.getoption("markexpr", "") or self.config.getoption("keyword", "")
        for item in items:
            t = self.tests.get(item.nodeid)
            if t is not None:
                t.update(outcome="deselected", reason=f"{t['tier']} tier not selected"
                         + (f" (-m/-k {expr!r})" if expr else ""))

    def pytest_sessionfinish(self, session):
        if self.is_worker:  # hand the collection over to the controller
            self.config.workeroutput["claimcheck"] = json.dumps(
                {n: {k: t[k] for k in ("outcome", "reason", "tier", "claims")}
                 for n, t in self.tests.items() if t["outcome"] in ("deselected", "not-reported")})
            return
        if self.config.getoption("--no-claims-report") or not self.tests:
            return
        self._write()

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error):
        data = getattr(node, "workeroutput", {}).get("claimcheck")
        for nodeid, t in json.loads(data or "{}").items():
            if nodeid not in self.tests:  # each worker collects the same tests
                self.tests[nodeid] = dict(t, records=[], figures=[])

    # -- outcomes ----------------------------------------------------------------------
    def pytest_runtest_logreport(self, report):
        if self.is_worker:
            return
        t = self.tests.setdefault(report.nodeid, {"outcome": "not-reported", "reason": "",
                                                  "tier": "?", "claims": [], "records": [],
                                                  "figures": []})
        for name, value in report.user_properties:
            if name == "claim_claims":
                t["claims"], t["tier"] = value["claims"], value["tier"]
            elif name == "claim_record" and report.when == "call":
                t["records"].append(value)
            elif name == "claim_figure" and report.when == "call":
                t["figures"].append(value)
        outcome = None
        if report.failed:
            outcome = "failed" if report.when == "call" else "error"
        elif report.skipped:
            outcome = "xfailed" if hasattr(report, "wasxfail") else "skipped"
        elif report.when == "call":
            outcome = "xpassed" if hasattr(report, "wasxfail") else "passed"
        if outcome and not (t["outcome"] in ("failed", "error") and outcome != "error"):
            t.update(outcome=outcome, reason=_reason(report) if outcome != "passed" else "")
        if report.when == "call":
            t["duration"] = round(report.duration, 3)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        # Tell the controller (xdist) which claims and tier this test has, once.
        if call.when == "setup":
            item.user_properties.append(("claim_claims", {"claims": _claims_of(item),
                                                          "tier": _tier(item)}))
        yield

    # -- output ------------------------------------------------------------------------
    def _write(self):
        run = {
            "generated": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "commit": _git_commit(Path(self.config.rootpath)),
            "torch": _version("torch"),
            "device": _device(),
            "tiers": tiers_run(self.tests),
            "python": sys.version.split()[0],
            "args": " ".join(self.config.invocation_params.args),
        }
        self.doc = render.build(self.registry, self.tests, [run])
        try:
            render.write(self.doc, self.outdir)
            runs = self.outdir / "runs"
            runs.mkdir(parents=True, exist_ok=True)
            stamp = run["generated"].replace(":", "").replace("+0000", "Z")
            (runs / f"run-{stamp}-{os.getpid()}.json").write_text(
                json.dumps(self.doc, ensure_ascii=False, default=str), encoding="utf-8")
        except OSError as e:
            self.doc["write_error"] = f"could not write the report to {self.outdir}: {e}"

    def pytest_terminal_summary(self, terminalreporter):
        if self.is_worker or self.doc is None:
            return
        tr = terminalreporter
        tr.section("claimcheck")
        for line in render.terminal_lines(self.doc):
            tr.write_line(line)
        unknown = unknown_ids(self.registry, self.tests)
        for cid, nodes in unknown.items():
            tr.write_line(f"  UNKNOWN   {cid} named by {nodes[0]} is not in the registry", red=True)
        tr.write_line(self.doc.get("write_error") or f"report: {self.outdir}/claims.md, claims.json, badge.svg")


# ---- merging runs -------------------------------------------------------------------------

def merge(paths, registry) -> dict:
    """One report from several runs' claims.json files."""
    tests, runs = {}, []
    docs = sorted((json.loads(Path(p).read_text(encoding="utf-8")) for p in paths),
                  key=lambda d: d.get("generated") or "")
    for doc in docs:
        if "tests" not in doc:
            raise SystemExit("merge: a file has no 'tests' section; was it written by claimcheck?")
        runs += doc.get("runs", [])
        for nodeid, t in doc["tests"].items():
            tests[nodeid] = merge_test(tests.get(nodeid), t)
    return render.build(registry, tests, runs)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m claims.report")
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("merge", help="merge several runs' claims.json into one report")
    m.add_argument("files", nargs="+")
    m.add_argument("--out", default="reports")
    m.add_argument("--registry", default="fixtures/claims.toml")
    args = ap.parse_args(argv)
    try:
        registry = load_registry(args.registry)
    except RegistryError as e:
        raise SystemExit(f"merge: {e}") from None
    missing = [f for f in args.files if not Path(f).is_file()]
    if missing:
        raise SystemExit(f"merge: no such report file: {missing[0]}")
    doc = merge(args.files, registry)
    render.write(doc, Path(args.out))
    print("\n".join(render.terminal_lines(doc)))
    print(f"merged {len(args.files)} run(s) into {args.out}/claims.md")


if __name__ == "__main__":
    main()
