"""Tiers, device and seeding for the claimcheck suite.

    pytest -m fast               every analytic claim, CPU, seconds
    pytest --runslow             + the training claims at CI scale (CPU, minutes)
    pytest -m gpu --runslow      the document's full configurations, on CUDA

Every test carries exactly one tier marker; a test without one is a collection error.
"""
import os
import random

import numpy as np
import pytest

from claims.marks import TIERS

pytest_plugins = ["claims.report", "pytester"]


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False,
                     help="run the slow and gpu tiers (training claims)")


def pytest_configure(config):
    for tier, doc in TIERS.items():
        config.addinivalue_line("markers", f"{tier}: {doc}")
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if workers:  # xdist: share the cores instead of every worker spinning up all of them
        import torch
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // int(workers)))
    forced = os.environ.get("CLAIMS_DEVICE")
    if forced not in (None, "", "cpu", "cuda"):
        raise pytest.UsageError(f"CLAIMS_DEVICE={forced!r}: use 'cpu' or 'cuda', or leave it unset")
    offset = os.environ.get("CLAIMS_SEED_OFFSET") or "0"
    if not offset.lstrip("-").isdigit():
        raise pytest.UsageError(f"CLAIMS_SEED_OFFSET={offset!r}: give an integer that shifts every "
                                "training seed, or leave it unset")


def _cuda_available() -> bool:
    import torch
    return torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    runslow = config.getoption("--runslow")
    forced = os.environ.get("CLAIMS_DEVICE") or None
    if forced == "cuda" and not _cuda_available():
        raise pytest.UsageError("CLAIMS_DEVICE=cuda, but torch sees no CUDA device; "
                                "unset it or install a CUDA build of torch")
    need_slow = pytest.mark.skip(reason="slow tier: needs --runslow")
    for item in items:
        tiers = [t for t in TIERS if item.get_closest_marker(t)]
        if len(tiers) != 1:
            raise pytest.UsageError(f"{item.nodeid}: a test carries exactly one tier marker "
                                    f"(fast, slow or gpu); it has {', '.join(tiers) or 'none'}")
        if tiers[0] in ("slow", "gpu") and not runslow:
            item.add_marker(need_slow)


@pytest.fixture(scope="session")
def device():
    """Where the gpu tier trains: CUDA, or the CPU when CLAIMS_DEVICE=cpu says so. Without
    either, a test that must train at full scale skips; full-scale claims then judge the
    committed evidence instead (claims/evidence.py), and never ask for a device."""
    import torch
    forced = os.environ.get("CLAIMS_DEVICE")
    if not forced and not torch.cuda.is_available():
        pytest.skip("gpu tier: no CUDA device (CLAIMS_DEVICE=cpu forces the full configuration onto the CPU)")
    if (forced or "cuda") == "cpu":
        return torch.device("cpu")
    # under pytest-xdist each worker takes its own card (gw0 -> cuda:0, gw1 -> cuda:1, ...)
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
    return torch.device("cuda", worker % torch.cuda.device_count())


@pytest.fixture(autouse=True)
def _seed_everything():
    """Every test starts from the same RNG state, whatever ran before it (xdist included)."""
    import torch
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    yield


try:  # property tests: deterministic, no example database on disk, no deadline on CPU
    from hypothesis import settings

    settings.register_profile("claimcheck", max_examples=25, deadline=None, derandomize=True,
                              database=None, print_blob=True)
    settings.register_profile("thorough", max_examples=500, deadline=None, database=None)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "claimcheck"))
except ImportError:  # hypothesis is a test extra; its tests import it and say so
    pass
