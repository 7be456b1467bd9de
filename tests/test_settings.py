"""The suite's environment variables are read once, in suite/settings.py; a bad value is one usage
line before any test runs, never an ImportError from a module that read it first."""
import importlib

import pytest

from suite import settings as env

pytestmark = pytest.mark.fast


@pytest.fixture
def reread(monkeypatch):
    """suite.settings read again under the given variables; restored afterwards."""
    def read(**values):
        for k in ("CLAIMS_SEED_OFFSET", "CLAIMS_DEVICE"):  # the case's own variables alone, not the run's
            monkeypatch.delenv(k, raising=False)
        for k, v in values.items():
            monkeypatch.setenv(k, v)
        return importlib.reload(env)
    yield read
    monkeypatch.undo()
    importlib.reload(env)


@pytest.mark.parametrize("var, value, line", [
    ("CLAIMS_SEED_OFFSET", "abc", "CLAIMS_SEED_OFFSET='abc': give an integer that shifts every training seed, "
                                  "or leave it unset"),
    ("CLAIMS_SEED_OFFSET", "1.5", "CLAIMS_SEED_OFFSET='1.5': give an integer"),
    ("CLAIMS_SEED_OFFSET", "--1", "CLAIMS_SEED_OFFSET='--1': give an integer"),
    ("CLAIMS_DEVICE", "tpu", "CLAIMS_DEVICE='tpu': use 'cpu' or 'cuda', or leave it unset"),
])
def test_a_bad_variable_is_one_usage_line_and_never_read(reread, var, value, line, pytestconfig):
    e = reread(**{var: value})
    assert e.problem().startswith(line) and "\n" not in e.problem()
    assert e.SEED_OFFSET == 0 and e.DEVICE is None  # nothing reads the bad value
    import conftest as root
    with pytest.raises(pytest.UsageError, match="^" + line.split(":")[0]):
        root.pytest_configure(pytestconfig)
    with pytest.raises(SystemExit, match="^error: " + line.split(":")[0]):
        e.exit_on_problem()


def test_good_variables_shift_the_seeds_and_name_the_device(reread):
    e = reread(CLAIMS_SEED_OFFSET="100", CLAIMS_DEVICE="cpu", CLAIMS_REQUIRE_DATA="1")
    assert (e.problem(), e.SEED_OFFSET, e.DEVICE, e.REQUIRE_DATA) == (None, 100, "cpu", True)
    assert e.seeds(0, 1, 2) == (100, 101, 102)
    e = reread(CLAIMS_SEED_OFFSET="-3", CLAIMS_DEVICE="", CLAIMS_REQUIRE_DATA="0")
    assert (e.problem(), e.seeds(5), e.DEVICE, e.REQUIRE_DATA) == (None, (2,), None, False)
