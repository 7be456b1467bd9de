"""One GPU per pytest-xdist worker: ``pytest -m gpu --runslow -n <number of GPUs>`` trains on
every card. xdist schedules the tests; this only says which card a worker's "cuda" is, and
which process runs no test at all."""
import re


def worker_gpu(worker: str | None, count: int) -> int | None:
    """The card of xdist worker ``gw<i>``: i mod ``count``. None outside xdist or with fewer than
    two cards (one card needs no pinning)."""
    m = re.fullmatch(r"gw(\d+)", worker or "")
    if m is None or count < 2:
        return None
    return int(m.group(1)) % count


def pin_worker_gpu(worker: str | None, cuda=None) -> int | None:
    """Make ``worker``'s current CUDA device its own card (``torch.cuda.set_device``), before
    anything trains; return the card, or None where nothing was pinned. ``cuda``: torch.cuda,
    or a stand-in for a test on a machine without one. Outside xdist torch is not even imported."""
    if re.fullmatch(r"gw\d+", worker or "") is None:
        return None
    if cuda is None:
        import torch
        cuda = torch.cuda
    if not cuda.is_available():
        return None
    gpu = worker_gpu(worker, cuda.device_count())
    if gpu is not None:
        cuda.set_device(gpu)
    return gpu


def xdist_controller(config) -> bool:
    """Whether this pytest process only hands tests to xdist workers (``-n N``, N > 0), rather than
    collecting them itself (``--co``, ``--fixtures``, ``--fixtures-per-test``): it needs no torch."""
    return (config.getoption("dist", "no") != "no" and bool(config.getoption("tx", None))
            and not any(config.getoption(o) for o in ("collectonly", "showfixtures", "show_fixtures_per_test")))


def training_device():
    """Where the gpu tier trains: CUDA (under xdist, the worker's own card: ``pin_worker_gpu``
    made it the current one), or the CPU when CLAIMS_DEVICE=cpu says so. Without either, the
    test that needs it skips; full-scale claims then judge the committed evidence instead
    (suite/evidence/families.py)."""
    import pytest
    import torch

    from suite import settings
    forced = settings.current().device
    if not forced and not torch.cuda.is_available():
        pytest.skip("gpu tier: no CUDA device (CLAIMS_DEVICE=cpu forces the full configuration onto the CPU)")
    if (forced or "cuda") == "cpu":
        return torch.device("cpu")
    return torch.device("cuda", torch.cuda.current_device())
