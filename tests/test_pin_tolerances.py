"""Pin tolerances (suite/pins.py): SAFETY times the measured movement, rounded up to one
significant figure, never below the floor of its kind of value; and the command that measures
the movement between two runs' pin values."""
import json

import pytest

from suite import pins
from suite.pins import FLOOR, MOVEMENT, SAFETY, _group, _round_up, cpu_model, describe, main, movement, tolerance

pytestmark = pytest.mark.fast


@pytest.mark.parametrize("x, up", [(0.0, 0.0), (-1e-3, 0.0), (1.0, 1), (10.0, 10), (15.0, 20), (0.15, 0.2),
                                   (7.05e-8, 8e-8), (3e-4, 3e-4), (3 * 1e-4, 3e-4), (2.07e-4, 3e-4),
                                   (9.5, 10), (0.1, 0.1)])
def test_round_up_to_one_significant_figure(x, up):
    assert _round_up(x) == pytest.approx(up, rel=1e-12, abs=0)


# movements of our own, so that the rule is checked apart from the values measured today
TOY = {"toy": [("nodiv-*/early", "rtol", 2.39e-03), ("nodiv-*", "rtol", 6.10e-02),
               ("*/early", "rtol", 9.02e-05), ("*", "rtol", 2.15e-02)],
       "tiny": [("*/early", "rtol", 2.35e-08), ("*", "rtol", 3.67e-07)],
       "one": [("*", "rtol", 8.52e-07)],
       "abs": [("rows/*", "atol", 5.15e-02), ("*", "atol", 8.59e-02)]}


@pytest.fixture
def toy(monkeypatch):
    for name, groups in TOY.items():
        monkeypatch.setitem(MOVEMENT, name, groups)


@pytest.mark.parametrize("name, key, group", [
    ("toy", "nodiv-4/early", ("nodiv-*/early", "rtol")),
    ("toy", "nodiv-4/ppl", ("nodiv-*", "rtol")),
    ("toy", "div-4/early", ("*/early", "rtol")),
    ("toy", "div-4/ppl", ("*", "rtol")),
    ("abs", "rows/0", ("rows/*", "atol")),
    ("abs", "ROWS/0", ("*", "atol")),  # patterns are case-sensitive
    ("new_pin", "a/early", ("*/early", "rtol")),  # a pin not measured yet groups its keys the same way
    ("new_pin", "a", ("*", "rtol")),
])
def test_a_key_takes_the_first_pattern_it_matches(toy, name, key, group):
    assert _group(name, key) == group


def test_a_key_no_pattern_matches_is_an_error_that_names_it(monkeypatch):
    monkeypatch.setitem(MOVEMENT, "partial", [("rows/*", "atol", 0.1)])
    with pytest.raises(KeyError, match=r"pin partial: key 'acc' matches no pattern of suite/pins.py MOVEMENT"):
        _group("partial", "acc")


def test_the_tolerance_is_safety_times_the_movement_rounded_up_and_floored_per_kind(toy):
    assert SAFETY == 3 and FLOOR == {"/early": 1e-6, "": 1e-4}
    # 2.35e-08 early and 3.67e-07 at the end: both under their floors
    assert tolerance("tiny", "d64/early") == {"rtol": 1e-6, "atol": 0.0}
    assert tolerance("tiny", "d64/ppl") == {"rtol": 1e-4, "atol": 0.0}
    # 9.02e-05 early -> 2.706e-4 -> 3e-4; 2.15e-02 at the end -> 6.45e-2 -> 7e-2
    assert tolerance("toy", "post/early") == pytest.approx({"rtol": 3e-4, "atol": 0.0}, rel=1e-12)
    assert tolerance("toy", "post/ppl") == pytest.approx({"rtol": 7e-2, "atol": 0.0}, rel=1e-12)
    # the undivided arm: its own groups, 2.39e-03 -> 8e-3 and 6.10e-02 -> 0.2
    assert tolerance("toy", "nodiv-1/early") == pytest.approx({"rtol": 8e-3, "atol": 0.0}, rel=1e-12)
    assert tolerance("toy", "nodiv-1") == pytest.approx({"rtol": 0.2, "atol": 0.0}, rel=1e-12)
    # one group for both kinds: 8.52e-07 -> 3e-6, over the early floor, under the end one
    assert tolerance("one", "a/early") == pytest.approx({"rtol": 3e-6, "atol": 0.0}, rel=1e-12)
    assert tolerance("one", "a") == {"rtol": 1e-4, "atol": 0.0}
    # absolute: 5.15e-02 -> 0.2, 8.59e-02 -> 0.3, no floor
    assert tolerance("abs", "rows/3") == pytest.approx({"rtol": 0.0, "atol": 0.2}, rel=1e-12)
    assert tolerance("abs", "acc") == pytest.approx({"rtol": 0.0, "atol": 0.3}, rel=1e-12)


def test_every_measured_pin_is_given_at_least_safety_times_its_movement():
    for name, groups in MOVEMENT.items():
        for pattern, kind, moved in groups:
            key = pattern.replace("*", "k")
            tol = tolerance(name, key)
            assert tol[kind] >= SAFETY * moved and tol["atol" if kind == "rtol" else "rtol"] == 0.0, (name, pattern)


def test_a_pin_without_measured_movement_has_no_tolerance():
    with pytest.raises(KeyError, match=r"pin new_pin: no measured movement in suite/pins.py MOVEMENT; run "
                                       r"`python -m suite.pins movement`"):
        tolerance("new_pin", "a")


def test_describe_gives_each_group_once_in_the_order_its_keys_come(toy):
    assert describe("abs", ["acc", "rows/0", "rows/1", "acc2"]) == "*: atol 0.3, rows/*: atol 0.2"
    assert describe("tiny", ["a/early", "a", "b/early"]) == "*/early: rtol 1e-06, *: rtol 0.0001"


def _write(folder, name, values):
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(values))


@pytest.fixture
def runs(tmp_path, toy):
    a, b = tmp_path / "a", tmp_path / "b"
    _write(a, "tiny", {"x/early": [1.0, 2.0], "y/early": [4.0], "x": [10.0, 0.0], "only_a": [1.0]})
    _write(b, "tiny", {"x/early": [1.0, 2.002], "y/early": [4.001], "x": [10.5, 0.0], "only_b": [1.0]})
    _write(a, "abs", {"rows/0": [0.5, 0.25], "acc": []})
    _write(b, "abs", {"rows/0": [0.25, 0.25], "acc": []})
    _write(a, "one", {"x": [1.0]})  # not in b: left out
    return a, b


def test_movement_is_the_largest_relative_or_absolute_difference_per_group(runs):
    moved = movement(*runs)
    assert moved == {
        "tiny": [("*", "rtol", 0.0476), ("*/early", "rtol", 0.000999)],  # 0.5 / 10.5, 0.002 / 2.002
        "abs": [("*", "atol", 0.0), ("rows/*", "atol", 0.25)],
    }


def test_movement_divides_by_the_second_runs_value(tmp_path, toy):
    a, b = tmp_path / "a", tmp_path / "b"
    _write(a, "tiny", {"x": [3.0]})
    _write(b, "tiny", {"x": [2.0]})
    assert movement(a, b) == {"tiny": [("*", "rtol", 0.5)]}
    _write(b, "tiny", {"x": [0.0]})  # a zero never divides by zero
    assert movement(a, b) == {"tiny": [("*", "rtol", 3e300)]}


def test_the_movement_command_prints_each_group_and_a_movement_table_to_paste(runs, capsys):
    main(["movement", str(runs[0]), str(runs[1])])
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[:4] == [
        "abs            *                atol moved 0.00e+00 -> 0e+00",  # pins in file-name order
        "abs            rows/*           atol moved 2.50e-01 -> 8e-01",
        "tiny           *                rtol moved 4.76e-02 -> 2e-01",
        "tiny           */early          rtol moved 9.99e-04 -> 3e-03",
    ]
    table = out.split("MOVEMENT = ", 1)[1]
    assert json.loads(table) == {"tiny": [["*", "rtol", 0.0476], ["*/early", "rtol", 0.000999]],
                                 "abs": [["*", "atol", 0.0], ["rows/*", "atol", 0.25]]}
    assert table.startswith('{\n "abs": [\n  [\n   "*",')  # indented, to paste into MOVEMENT


def test_the_movement_command_refuses_a_missing_folder(tmp_path, runs):
    with pytest.raises(SystemExit) as e:
        main(["movement", str(runs[0]), str(tmp_path / "nope")])
    assert str(e.value) == (f"movement: {tmp_path / 'nope'} is not a folder of pin values "
                            "(reports/pins after a run)")
    with pytest.raises(SystemExit) as e:
        main(["movement", str(tmp_path / "nope"), str(runs[1])])
    assert str(tmp_path / "nope") in str(e.value)
    with pytest.raises(SystemExit) as e:  # a subcommand is required
        main([])
    assert e.value.code == 2


def test_the_command_names_itself_and_says_what_movement_measures(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m suite.pins [-h] {movement}")
    assert "largest movement per pin and key group between two runs' reports/pins folders" in " ".join(out.split())
    with pytest.raises(SystemExit):
        main([])
    assert "the following arguments are required: cmd" in capsys.readouterr().err


def test_float_noise_in_the_division_does_not_round_a_figure_up():
    # 2e-4 / 1e-4 is 2.0000000000000004 in floats: still 2e-4, not 3e-4; a real excess past
    # nine digits is rounded away too, one inside them is not
    assert _round_up(2e-4) == pytest.approx(2e-4, rel=1e-12)
    assert _round_up(2.0000000004e-4) == pytest.approx(2e-4, rel=1e-12)  # the tenth digit
    assert _round_up(2.000000004e-4) == pytest.approx(3e-4, rel=1e-12)


class _Path:
    """Stands in for pathlib.Path in suite.pins: every path reads ``text``, or raises."""
    text = None

    def __init__(self, path):
        assert path == "/proc/cpuinfo"

    def read_text(self):
        if self.text is None:
            raise OSError("no /proc here")
        return self.text


def test_the_cpu_model_comes_from_proc_cpuinfo_or_else_from_platform(monkeypatch):
    monkeypatch.setattr(pins, "Path", _Path)
    monkeypatch.setattr(_Path, "text", "processor\t: 0\nvendor_id\t: AuthenticAMD\n"
                                       "model name\t: AMD EPYC 7B13 64-Core: Processor\nmodel name\t: second\n")
    assert cpu_model() == "AMD EPYC 7B13 64-Core: Processor"
    monkeypatch.setattr(_Path, "text", "processor\t: 0\n")  # no model name line
    monkeypatch.setattr(pins.platform, "processor", lambda: "x86_64 (processor)")
    assert cpu_model() == "x86_64 (processor)"
    monkeypatch.setattr(_Path, "text", None)
    assert cpu_model() == "x86_64 (processor)"
    monkeypatch.setattr(pins.platform, "processor", lambda: "")
    monkeypatch.setattr(pins.platform, "machine", lambda: "aarch64")
    assert cpu_model() == "aarch64"
