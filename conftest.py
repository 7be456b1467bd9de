"""This document's side of the claimcheck plugin: environment, device and seeding.

    pytest -m fast               every analytic claim, CPU, seconds
    pytest --runslow             + the training claims at CI scale (CPU, minutes)
    pytest -m gpu --runslow      the document's full configurations, on CUDA

The plugin (``claimcheck``, loaded through its entry point) reads the registry, tiers and scales
from pyproject.toml; every test carries exactly one tier marker.
"""
import os
import platform
import random
import sys

import numpy as np
import pytest

from suite import settings
from suite.devices import xdist_controller

# The entry point: the environment is read and validated here, once, before anything uses it.
SETTINGS = settings.load()

pytest_plugins = ["pytester"]


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", help="the suite's name for --claims-runslow")
    parser.addoption("--screenshots", action="store_true",
                     help="the browser test writes its screenshot of the annotated chapter into docs/images/")


@pytest.hookimpl(tryfirst=True)  # the fixtures in place before any other plugin's configure
def pytest_configure(config):
    if SETTINGS.problems:
        raise pytest.UsageError(SETTINGS.problems[0])
    # --runslow and the plugin's --claims-runslow are one switch (the plugin reads it at collection)
    if config.option.runslow or getattr(config.option, "claims_runslow", False):
        config.option.runslow = config.option.claims_runslow = True
    # The verdict pins (fixtures/verdicts.toml) hold the declared seeds' verdicts on committed
    # evidence: a seed offset judges other seeds, so nothing is compared; --runslow trains here,
    # where a verdict near its band's edge may move to or from undecided with the kernels.
    if SETTINGS.seed_offset:
        config.option.claims_pins = "off"
    elif config.getoption("--runslow") and config.getoption("--claims-pins") == "exact":
        config.option.claims_pins = "loose"
    from suite.reading import MARK_DOC
    config.addinivalue_line("markers", MARK_DOC)
    if not xdist_controller(config):  # the controller runs no test: it imports no torch (2 s)
        from suite import fixtures  # the scales, run cache, evidence and pins
        config.pluginmanager.register(fixtures, "suite.fixtures")
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if workers:  # xdist: share the cores instead of every worker spinning up all of them
        import torch
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // int(workers)))
    if SETTINGS.device != "cpu":  # -n <GPUs>: each worker trains on a card of its own
        from suite.devices import pin_worker_gpu
        pin_worker_gpu(os.environ.get("PYTEST_XDIST_WORKER"))


def _cuda_available() -> bool:
    import torch
    return torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    if SETTINGS.device == "cuda" and not _cuda_available():
        raise pytest.UsageError("CLAIMS_DEVICE=cuda, but torch sees no CUDA device; "
                                "unset it or install a CUDA build of torch")


def pytest_claimcheck_tier(item, tier):
    """Without CUDA (and unless CLAIMS_DEVICE=cpu asks to train the full configurations on the
    CPU), a gpu-tier test that never asks for a device only judges committed evidence
    (fixtures/evidence/): milliseconds, so it runs in the fast tier, and ``pytest -m fast``
    shows the full-scale verdicts too. It still measures at the full scale. Likewise, without
    --runslow, a slow-tier test whose every declared scale (``@reads``, suite/reading.py) is read
    from committed records (the Winograd task's and the Polish lab's stated runs,
    catalogue.MEASURED's measurements: suite/fixtures.py ``recorded``) runs in the fast tier, unless it
    declares that it checks a fresh measurement against them (``reads(..., fresh=True)``), as every
    pin test does (the ``pin`` fixture refuses one that does not)."""
    if tier == "gpu" and "device" not in item.fixturenames:
        from suite.scales import evidence_mode
        if evidence_mode():
            return "fast"
    if tier == "slow" and not item.config.getoption("--runslow"):
        from suite.fixtures import recorded
        from suite.reading import declared, fresh
        scales = [] if fresh(item) else declared(item)
        if scales and all(recorded(s, item.config) for s in scales):
            return "fast"
    return None


def _trained_on() -> str:
    """The device this process's tests train on, as the report names it."""
    torch = sys.modules.get("torch")  # imported wherever a test ran (suite.fixtures)
    if torch is not None and torch.cuda.is_available() and SETTINGS.device != "cpu":
        n = torch.cuda.device_count()
        return f"cuda ({torch.cuda.get_device_name(0)}{f', {n} cards, one per xdist worker' if n > 1 else ''})"
    return SETTINGS.device or "cpu"


_WORKERS_TRAINED_ON: list[str] = []  # the xdist controller's: what its workers said


@pytest.hookimpl(trylast=True)  # after the plugin has written the report it reads
def pytest_sessionfinish(session):
    if hasattr(session.config, "workeroutput"):  # an xdist worker tells the controller, which imports no torch
        session.config.workeroutput["claims_trained_on"] = _trained_on()
        return
    unbuilt = _unbuilt_corrections(getattr(session.config.pluginmanager.get_plugin("claimcheck-reporter"), "doc", None))
    if unbuilt:  # the registry's template for an erratum of this run could not be filled: a defect, said once each
        session.config.get_terminal_writer().line("\n" + "\n".join(unbuilt), red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _unbuilt_corrections(doc) -> list[str]:
    """Each erratum whose registry row gives a correction template that this run could not build
    into a proposal or a draft, with why (reports/corrections.md shows the same)."""
    return [f"correction not built: {c['id']}: {c['correction_proposal'].get('missing')}"
            for c in (doc or {}).get("claims", []) if c.get("correction") and c.get("correction_proposal")
            and not (c["correction_proposal"].get("proposed") or c["correction_proposal"].get("draft"))]


@pytest.hookimpl(optionalhook=True)  # xdist's hook: the controller hears from each worker as it ends
def pytest_testnodedown(node, error):
    said = getattr(node, "workeroutput", {}).get("claims_trained_on")
    if said:
        _WORKERS_TRAINED_ON.append(said)


def pytest_claimcheck_run_info(config):
    """What the report says of the machine: torch, the device trained on, the CPU."""
    from importlib import metadata

    from suite.pins import cpu_model
    if _WORKERS_TRAINED_ON:
        device = _WORKERS_TRAINED_ON[0]
    else:  # a controller none of whose workers finished (Ctrl-C) has no torch to ask
        device = "not known: no xdist worker finished" if xdist_controller(config) else _trained_on()
    try:
        version = metadata.version("torch")
    except metadata.PackageNotFoundError:
        version = "not installed"
    info = {"torch": version, "device": device, "cpu": f"{cpu_model()} ({platform.machine()})"}
    if SETTINGS.seed_offset:
        info["seed offset"] = SETTINGS.seed_offset
    return info


@pytest.fixture
def places(monkeypatch):
    """``places(data_dir=..., cache_dir=...)``: experiments.data's folders, for one test."""
    from dataclasses import replace
    from experiments import data

    def use(**folders):
        monkeypatch.setattr(data, "_places", replace(data.places(), **folders))
    return use


@pytest.fixture(scope="session")
def device():
    """Where the gpu tier trains (suite.devices.training_device), or a skip saying why not."""
    from suite.devices import training_device
    return training_device()


@pytest.fixture(autouse=True)
def _seed_everything():
    """Every test starts from the same RNG state, whatever ran before it (xdist included)."""
    import torch
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    yield


try:  # property tests: deterministic, no example database on disk, no deadline on CPU
    from hypothesis import settings as hypothesis_settings

    hypothesis_settings.register_profile("claimcheck", max_examples=25, deadline=None, derandomize=True,
                              database=None, print_blob=True)
    hypothesis_settings.register_profile("thorough", max_examples=500, deadline=None, database=None)
    hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "claimcheck"))
except ImportError:  # hypothesis is a test extra; its tests import it and say so
    pass
