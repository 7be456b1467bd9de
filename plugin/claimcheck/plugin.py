"""The claimcheck pytest plugin, loaded through its ``pytest11`` entry point.

It is configured by the registry file and ini options, never by code:

    [tool.pytest.ini_options]            # or pytest.ini's [pytest]
    claimcheck_registry = "claims.toml"  # the plugin is off in a project that names none
    claimcheck_report_dir = "reports"
    claimcheck_title = "Which claims of my chapter hold"
    claimcheck_tiers = ["fast: seconds", "slow: minutes; needs --claims-runslow"]
    claimcheck_scales = ["analytic: no training", "ci (CI scale): reduced", "full (full scale): the text's"]

Each test names its claims (``@pytest.mark.claim("ID")``), carries one tier marker, and records
what it measured (``claim_record``). Every run writes its report into a folder of its own,
``<report dir>/runs/<run>/``, and copies it to the report dir when it ends.

This module holds the hooks and options only, the plugin's surface: the run's reporter is
session.py, the report dir storage.py, the fixtures fixtures.py.
"""
from pathlib import Path

import pytest

from . import check, fingerprint, fixtures, hooks, progress, storage, verdict_pins
from .marks import settings_from_ini
from .registry import RegistryError, load_registry
from .session import KEY, ClaimReporter
from .suite import PYTHON_FILES
from .suite import read as read_suite

SCOPES = ("latest", "run")


def pytest_addhooks(pluginmanager):
    pluginmanager.add_hookspecs(hooks)


def pytest_addoption(parser):
    g = parser.getgroup("claimcheck")
    g.addoption("--claims-runslow", action="store_true", default=False,
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
    parser.addini("claimcheck_slow_tiers", "tiers that run only with --claims-runslow", type="linelist")
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
    # claimcheck check: the registry against its texts and the whole suite, before any test runs;
    # an xdist worker skips it: its controller checked before starting it, and writes the report
    worker = hasattr(config, "workerinput")
    entries = [] if worker else read_suite(root, config.getini("testpaths"), tuple(settings.tiers),
                                           tuple(config.getini("python_files")) or PYTHON_FILES)
    found = [] if worker else check.problems(registry, texts, entries)
    errors = [str(p) for p in found if p.error]
    if errors:
        raise pytest.UsageError(f"claimcheck check: {len(errors)} error(s) in the registry or the tests "
                                "(`claimcheck check` lists them without running pytest)\n" + "\n".join(errors))
    outdir = root / (config.getoption("--claims-report-dir") or config.getini("claimcheck_report_dir"))
    reporter = ClaimReporter(config, registry, outdir, settings)
    reporter.texts, reporter.stamps, reporter.entries = texts, stamps, entries
    reporter.notes += [str(p) for p in found if not p.error]
    reporter.keep_runs = storage.keep_runs(config)  # a bad value is one line now, not at the run's end
    reporter.scope = config.getoption("--claims-report-scope") or config.getini("claimcheck_report_scope")
    if reporter.scope not in SCOPES:
        raise pytest.UsageError(f"claimcheck_report_scope = {reporter.scope!r}: one of {', '.join(SCOPES)} expected")
    config.stash[KEY] = reporter
    config.pluginmanager.register(reporter, "claimcheck-reporter")
    config.pluginmanager.register(fixtures, "claimcheck-fixtures")
    if not reporter.is_worker:  # a run that ends before its report (aborted, a usage error) leaves nothing
        config.add_cleanup(lambda: storage.drop_if_empty(reporter.run_dir))
    if not reporter.quiet:
        progress.register(config, reporter.run_dir)

