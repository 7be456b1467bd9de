"""One GPU per xdist worker (suite/devices.py), checked on the CPU with a stand-in for torch.cuda."""
import pytest

from suite.devices import pin_worker_gpu, worker_gpu

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
