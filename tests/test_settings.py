"""The suite's settings are read from the environment once, by an entry point (suite/settings.py);
a bad value is one usage line before any test runs, and nothing reads it."""
from pathlib import Path

import pytest

from suite import settings
from suite.settings import Settings

pytestmark = pytest.mark.fast


@pytest.mark.parametrize("var, value, line", [
    ("CLAIMS_SEED_OFFSET", "abc", "CLAIMS_SEED_OFFSET='abc': give an integer that shifts every training seed, "
                                  "or leave it unset"),
    ("CLAIMS_SEED_OFFSET", "1.5", "CLAIMS_SEED_OFFSET='1.5': give an integer"),
    ("CLAIMS_SEED_OFFSET", "--1", "CLAIMS_SEED_OFFSET='--1': give an integer"),
    ("CLAIMS_DEVICE", "tpu", "CLAIMS_DEVICE='tpu': use 'cpu' or 'cuda', or leave it unset"),
    ("CLAIMS_STEP", "jit", "CLAIMS_STEP='jit': use 'eager' or 'compiled', or leave it unset"),
])
def test_a_bad_variable_is_one_usage_line_and_never_read(var, value, line, pytestconfig, monkeypatch):
    s = Settings.read({var: value})
    assert len(s.problems) == 1 and s.problems[0].startswith(line) and "\n" not in s.problems[0]
    assert s.seed_offset == 0 and s.device is None  # nothing reads the bad value
    import conftest as root
    monkeypatch.setattr(root, "SETTINGS", s)
    with pytest.raises(pytest.UsageError, match="^" + line.split(":")[0]):
        root.pytest_configure(pytestconfig)
    with pytest.raises(SystemExit, match="^error: " + line.split(":")[0]):
        settings.exit_on_problem(s)


def test_good_variables_shift_the_seeds_and_name_the_device_and_folders(tmp_path):
    s = Settings.read({"CLAIMS_SEED_OFFSET": "100", "CLAIMS_DEVICE": "cpu", "CLAIMS_REQUIRE_DATA": "1",
                       "CLAIMS_DATA_DIR": str(tmp_path), "CLAIMS_CACHE_DIR": str(tmp_path / "c"),
                       "CLAIMS_COMMIT": "abc1234"})
    assert (s.problems, s.seed_offset, s.device, s.require_data) == ((), 100, "cpu", True)
    assert (s.data_dir, s.cache_dir, s.commit) == (tmp_path, tmp_path / "c", "abc1234")
    assert s.seeds(0, 1, 2) == (100, 101, 102)
    s = Settings.read({"CLAIMS_SEED_OFFSET": "-3", "CLAIMS_DEVICE": "", "CLAIMS_REQUIRE_DATA": "0",
                       "CLAIMS_CACHE_DIR": "", "CLAIMS_COMMIT": ""})
    assert (s.problems, s.seeds(5), s.device, s.require_data, s.cache_dir, s.commit) == ((), (2,), None, False,
                                                                                         None, None)


def test_the_data_folder_defaults_to_shared_data_beside_the_checkout_or_its_origin(tmp_path):
    here = tmp_path / "checkout"
    here.mkdir()
    assert settings.default_data_dir(here) is None
    (tmp_path / "shared" / "data").mkdir(parents=True)
    assert settings.default_data_dir(here) == tmp_path / "shared" / "data"


def test_load_hands_the_folders_to_experiments(tmp_path):
    from experiments import data
    before = settings.current()
    try:
        s = settings.load({"CLAIMS_DATA_DIR": str(tmp_path), "CLAIMS_CACHE_DIR": str(tmp_path / "c")})
        assert settings.current() is s
        assert data.places() == data.Places(tmp_path, tmp_path / "c") and data.cache_dir() == tmp_path / "c"
    finally:
        settings.use(before)
    assert data.places() == data.Places(before.data_dir, before.cache_dir)


def test_only_entry_points_read_or_write_the_environment():
    """experiments/, model/ and the plugin read no CLAIMS_* variable; the suite reads them in
    suite/settings.py alone; nothing in them writes os.environ (xdist workers learn the run's
    folder from workerinput, not from an inherited variable)."""
    root = Path(__file__).resolve().parents[1]
    dirs = {"experiments": root / "experiments", "model": root / "model", "claimcheck": root / "plugin" / "claimcheck",
            "suite": root / "suite"}
    assert all(d.is_dir() for d in dirs.values())
    for pkg in ("experiments", "model", "claimcheck"):
        for f in dirs[pkg].rglob("*.py"):
            assert "CLAIMS_" not in f.read_text(encoding="utf-8"), f
    for f in dirs["suite"].rglob("*.py"):
        if f.name != "settings.py":
            assert "os.environ" not in f.read_text(encoding="utf-8"), f
    writers = sorted(f.relative_to(root).as_posix() for d in dirs.values()
                     for f in d.rglob("*.py") if "os.environ[" in f.read_text(encoding="utf-8"))
    assert writers == []
