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

from . import progress, render
from .marks import DEFAULT_SCALE, SCALES, TIERS, is_divergence_mark
from .registry import RegistryError, load_registry
from .suite import claims_named
from .verdict import SCALE_WORDS, diff, merge_test, tiers_run, unknown_ids

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
    config.addinivalue_line("markers", "diagnosis(id): the test reports the claim's diagnosis grid; "
                            "it never changes the claim's verdict")
    config.addinivalue_line("markers", "scale(name): the scale the test measures at: "
                            + ", ".join(SCALES) + " (fast tests default to analytic, gpu to full)")
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
    progress.register(config, outdir)


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
    tiers = [t for t in TIERS if item.get_closest_marker(t)]
    return tiers[0] if len(tiers) == 1 else "?"


def _scale(item) -> str | None:
    mark = item.get_closest_marker("scale")
    return mark.args[0] if mark and mark.args else DEFAULT_SCALE.get(_tier(item))


def _check_item(item) -> str | None:
    """What is wrong with how a test declares its verdict, in one line, or None."""
    mark = item.get_closest_marker("scale")
    if mark is not None and (len(mark.args) != 1 or mark.args[0] not in SCALES):
        return f"{item.nodeid}: scale must be one of {', '.join(SCALES)}, got {mark.args}"
    if _claims_of(item) and _tier(item) == "slow" and _scale(item) is None:
        return (f"{item.nodeid}: a {_tier(item)}-tier test that names a claim declares its scale "
                f"(@pytest.mark.scale(...): {', '.join(SCALES)})")
    for m in item.iter_markers("xfail"):
        if not is_divergence_mark(m):
            return (f"{item.nodeid}: an xfail here must be claims.marks.diverges(reason) "
                    "(strict, raises=AssertionError): only a failed assertion is a divergence")
    return None


def _reason(report) -> str:
    """One line: why a test was skipped, xfailed, or failed."""
    if getattr(report, "claimcheck_note", None):
        return report.claimcheck_note[:300]
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
        problems = [p for p in map(_check_item, items) if p]
        if problems:
            raise pytest.UsageError(problems[0] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))
        for item in items:
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
            if keyword and not mark:
                why = f"deselected by -k {keyword!r}"
            else:
                why = f"{t['tier']} tier not selected" + (f" (-m {mark!r})" if mark else "")
            t.update(outcome="deselected", reason=why)

    def pytest_sessionfinish(self, session):
        if self.is_worker:  # hand the collection over to the controller
            self.config.workeroutput["claimcheck"] = json.dumps(
                {n: {k: t[k] for k in ("outcome", "reason", "tier", "scale", "claims")}
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
            elif name == "claim_pin" and report.when == "call":
                t["pins"].append(value)
            elif name == "claim_diagnosis" and report.when == "call":
                t["diagnosis"] = value
            elif name == "claim_evidence":  # added at teardown, once the test has read its runs
                t["evidence"] = value
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

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)  # outermost: sees the xfail verdict
    def pytest_runtest_makereport(self, item, call):
        # Tell the controller (xdist) which claims, tier and scale this test has, once.
        if call.when == "setup":
            item.user_properties.append(("claim_claims", {"claims": _claims_of(item), "tier": _tier(item),
                                                          "scale": _scale(item)}))
        outcome = yield
        rep = outcome.get_result()
        if not hasattr(rep, "wasxfail"):
            return
        # Only an assertion that fails in the test's own call is a divergence; an expected
        # failure anywhere else (setup, teardown, pytest.xfail()) is a failure of the suite.
        marked = any(is_divergence_mark(m) for m in item.iter_markers("xfail"))
        if call.when != "call" or not marked:
            where = "in setup" if call.when == "setup" else "in teardown" if call.when == "teardown" \
                else "without claims.marks.diverges"
            rep.outcome = "failed"
            rep.claimcheck_note = f"an expected failure {where} is not a divergence: {rep.wasxfail or 'xfail'}"
            del rep.wasxfail

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
        root = Path(self.config.rootpath)
        suite = claims_named(root, self.config.getini("testpaths"))
        run["training"] = progress.finished(self.outdir / "progress.log")
        self.doc = render.build(self.registry, self.tests, [run], suite)
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
        tr.write_line(self.doc.get("write_error") or f"report: {self.outdir}/index.html, claims.md, claims.json, badge.svg")


# ---- merging runs -------------------------------------------------------------------------

def merge(paths, registry) -> dict:
    """One report from several runs' claims.json files."""
    tests, runs, suite = {}, [], set()
    docs = sorted((_load(p) for p in paths), key=lambda d: d.get("generated") or "")
    for doc in docs:
        if "tests" not in doc:
            raise SystemExit("merge: a file has no 'tests' section; was it written by claimcheck?")
        runs += doc.get("runs", [])
        suite |= set(doc.get("suite", []))
        for nodeid, t in doc["tests"].items():
            tests[nodeid] = merge_test(tests.get(nodeid), t)
    return render.build(registry, tests, runs, suite)


def _load(path) -> dict:
    path = Path(path)
    if not path.is_file():
        raise SystemExit(f"no such report file: {path}")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise SystemExit(f"{path} is not a claimcheck report (invalid JSON: {e})") from None


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m claims.report")
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("merge", help="merge several runs' claims.json into one report")
    m.add_argument("files", nargs="+")
    m.add_argument("--out", default="reports")
    m.add_argument("--registry", default="fixtures/claims.toml")
    d = sub.add_parser("diff", help="list the claims two reports judge differently, at any scale; exit 1 "
                                    "when any does")
    d.add_argument("a")
    d.add_argument("b")
    d.add_argument("--measured", action="store_true",
                   help="exit 1 only when a scale both runs measured reads differently: for a run that "
                        "cannot measure a scale, e.g. CLAIMS_SEED_OFFSET's seeds have no full-scale evidence")
    args = ap.parse_args(argv)
    if args.cmd == "diff":
        a, b = _load(args.a), _load(args.b)
        rows = diff(a, b)
        words = lambda ss: ", ".join(SCALE_WORDS.get(s, s) for s in ss)  # noqa: E731
        for r in rows:
            why = (f"disagrees at {words(r['disagrees'])}" if r["disagrees"] else
                   f"agrees wherever both measured; {words(r['one_run'])} measured in one run only")
            print(f"{r['id']:10s} {r['a']:28s} -> {r['b']:28s} {why}")
        disagree = [r for r in rows if r["disagrees"]]
        print(f"{len(rows)} of {len(a['claims'])} claims differ between {args.a} and {args.b}: "
              f"{len(disagree)} disagree at a scale both runs measured, {len(rows) - len(disagree)} only "
              "where one run measured a scale the other did not")
        raise SystemExit(1 if disagree or (rows and not args.measured) else 0)
    try:
        registry = load_registry(args.registry)
    except RegistryError as e:
        raise SystemExit(f"merge: {e}") from None
    doc = merge(args.files, registry)
    render.write(doc, Path(args.out))
    print("\n".join(render.terminal_lines(doc)))
    print(f"merged {len(args.files)} run(s) into {args.out}/claims.md")


if __name__ == "__main__":
    main()
