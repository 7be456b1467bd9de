"""One GPU per xdist worker (suite/devices.py), checked on the CPU with a stand-in for torch.cuda."""
import pytest

from suite.devices import pin_worker_gpu, worker_gpu, xdist_controller

pytestmark = pytest.mark.fast


class FakeCuda:
    def __init__(self, count):
        self.count, self.current = count, None

    def is_available(self):
        return self.count > 0

    def device_count(self):
        return self.count

    def set_device(self, i):
        assert 0 <= i < self.count
        self.current = i


@pytest.mark.parametrize("worker, count, card", [
    ("gw0", 4, 0), ("gw3", 4, 3), ("gw5", 4, 1),  # more workers than cards: they share, round robin
    ("gw1", 1, None), ("gw0", 0, None),             # one card or none: nothing to pin
    (None, 4, None), ("master", 4, None),           # not an xdist worker
])
def test_worker_gw_i_gets_card_i_mod_the_count(worker, count, card):
    assert worker_gpu(worker, count) == card
    cuda = FakeCuda(count)
    assert pin_worker_gpu(worker, cuda) == card and cuda.current == card


def test_every_card_is_used_once_by_as_many_workers():
    assert sorted(worker_gpu(f"gw{i}", 8) for i in range(8)) == list(range(8))


class FakeConfig:
    def __init__(self, **options):
        self.options = {"dist": "no", "tx": [], "collectonly": False, "showfixtures": False,
                        "show_fixtures_per_test": False, **options}
        self.options = {k: v for k, v in self.options.items() if v is not None}  # None: no such option

    def getoption(self, name, default=None):
        return self.options.get(name, default)


@pytest.mark.parametrize("options, controller", [
    ({}, False),                                            # a serial run collects and runs its tests
    ({"dist": "load", "tx": ["popen"] * 2}, True),          # -n 2: the controller only hands them out
    ({"dist": "load", "tx": ["popen"] * 2, "collectonly": True}, False),  # --co -n 2 collects here
    ({"dist": "load", "tx": ["popen"] * 2, "showfixtures": True}, False),
    ({"dist": "load", "tx": ["popen"] * 2, "show_fixtures_per_test": True}, False),
    ({"dist": "no", "tx": []}, False),                      # -n 0, or a worker (xdist sets dist "no" there)
    ({"dist": None, "tx": None}, False),                    # -p no:xdist: no such options
])
def test_only_the_xdist_controller_goes_without_the_fixtures(options, controller):
    assert xdist_controller(FakeConfig(**options)) is controller


def test_the_report_names_the_device_the_xdist_workers_trained_on(monkeypatch):
    """The controller imports no torch: each worker says what it trained on as it ends."""
    import conftest as root
    monkeypatch.setattr(root, "_WORKERS_TRAINED_ON", [])
    session = type("Session", (), {"config": type("Config", (), {"workeroutput": {}})()})()
    root.pytest_sessionfinish(session)  # on a worker
    assert session.config.workeroutput["claims_trained_on"] == root._trained_on()
    node = type("Node", (), {"workeroutput": {"claims_trained_on": "cuda (NVIDIA H200)"}})()
    root.pytest_testnodedown(node, None)  # on the controller
    assert root.pytest_claimcheck_run_info(None)["device"] == "cuda (NVIDIA H200)"


def test_an_xdist_run_none_of_whose_workers_finished_does_not_guess_its_device(monkeypatch):
    import conftest as root
    monkeypatch.setattr(root, "_WORKERS_TRAINED_ON", [])
    controller = FakeConfig(dist="load", tx=["popen"] * 2)
    assert root.pytest_claimcheck_run_info(controller)["device"] == "not known: no xdist worker finished"
    assert root.pytest_claimcheck_run_info(FakeConfig())["device"] == root._trained_on()  # a serial run asks itself
