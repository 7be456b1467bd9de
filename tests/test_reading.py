"""What a test reads, declared (suite/reading.py): the marker, runs_of's refusal of an undeclared
scale, the session's memo, and the tier hook and up-front training reading the declaration."""
import ast
from pathlib import Path
from types import SimpleNamespace

import pytest

from suite import catalogue
from suite.reading import Memo, RunsOf, declared, fresh, pin_problem, reads

pytestmark = pytest.mark.fast

ROOT = Path(__file__).resolve().parents[1]
A, B, C = catalogue.LADDER_CI, catalogue.NORM_CI, catalogue.NORM03_MORE


class Node:
    """A test item's stand-in: its markers, nearest first, as pytest's ``iter_markers`` gives them."""

    def __init__(self, *marks, nodeid="claims/test_x.py::test_x"):
        self.marks, self.nodeid = marks, nodeid

    def iter_markers(self, name):
        return (m.mark for m in self.marks if m.mark.name == name)


def test_declared_gives_each_scale_once_in_order_with_later_ones_only_when_asked():
    node = Node(reads(A, B, A, later=(C,)), reads(B))
    assert declared(node) == [A, B, C]
    assert declared(node, up_front=True) == [A, B]
    assert declared(Node()) == [] and not fresh(node) and fresh(Node(reads(A, fresh=True)))


def test_reads_names_at_least_one_scale():
    with pytest.raises(TypeError, match="at least one scale"):
        reads()


def test_runs_of_reads_a_declared_scale_and_refuses_another_in_one_line():
    got = RunsOf(Node(reads(A, later=(C,))), lambda scale: f"runs of {scale.name}")
    assert got(A) == "runs of ladder-ci" and got(C) == "runs of norm03-grads-more"
    assert got.read == ["runs of ladder-ci", "runs of norm03-grads-more"]
    with pytest.raises(pytest.fail.Exception) as e:
        got(B)
    assert str(e.value) == ("claims/test_x.py::test_x reads 'norm-ci' but declares only ladder-ci, "
                            "norm03-grads-more: add it to the test's @reads(...)")


def test_the_memo_fetches_once_and_keeps_an_error_as_a_session_fixture_does():
    memo, calls = Memo(), []

    def skip():
        calls.append("skip")
        pytest.skip("no corpus")

    assert memo.get((A,), lambda: calls.append("a") or 1) == 1
    assert memo.get((A,), lambda: calls.append("again") or 2) == 1
    for _ in range(2):
        with pytest.raises(pytest.skip.Exception, match="no corpus"):
            memo.get((B,), skip)
    assert calls == ["a", "skip"]
    assert memo.get((len, A), lambda: 3) == 3  # a function of a scale's runs is its own key


def _config(runslow=False):
    return SimpleNamespace(getoption=lambda name: runslow if name == "--runslow" else None)


def _item(*marks, fixturenames=("runs_of",), runslow=False):
    node = Node(*marks)
    node.fixturenames, node.config = list(fixturenames), _config(runslow)
    return node


def test_the_tier_hook_moves_a_slow_test_only_when_every_declared_scale_is_read_from_records():
    """No guess from fixture names: the declaration decides (conftest.py pytest_claimcheck_tier)."""
    import conftest
    lab, wino = catalogue.TINY_LAB, catalogue.WINOGRAD
    assert conftest.pytest_claimcheck_tier(_item(reads(lab, wino)), "slow") == "fast"
    assert conftest.pytest_claimcheck_tier(_item(reads(lab, A)), "slow") is None  # LADDER_CI trains
    assert conftest.pytest_claimcheck_tier(_item(), "slow") is None  # reads nothing declared
    assert conftest.pytest_claimcheck_tier(_item(reads(lab, fresh=True)), "slow") is None
    assert conftest.pytest_claimcheck_tier(_item(reads(lab), runslow=True), "slow") is None


def test_no_fixture_is_made_through_globals_or_looked_up_by_a_string():
    """The suite's own code and tests name what they read: no ``globals()[...] =`` and no
    ``getfixturevalue`` (the plugin's tests exercise pytest itself, and are not scanned)."""
    found = []
    for folder in ("suite", "claims", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            if "getfixturevalue" not in text and "globals" not in text:  # parse only where it could be
                continue
            for node in ast.walk(ast.parse(text)):
                name = getattr(getattr(node, "func", None), "attr", getattr(getattr(node, "func", None), "id", ""))
                if isinstance(node, ast.Call) and name in ("getfixturevalue", "globals"):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}")
    assert found == []


def test_every_claim_test_that_reads_a_scale_declares_it():
    """A claim test's ``runs_of(X)`` names a scale its ``@reads`` declares (runs_of refuses
    the rest when the test runs; this finds it without running)."""
    undeclared = []
    for path in sorted((ROOT / "claims").glob("test_*.py")):
        for fn in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(fn, ast.FunctionDef) or not fn.name.startswith("test_"):
                continue
            marked = {ast.unparse(a) for d in fn.decorator_list if isinstance(d, ast.Call)
                      and ast.unparse(d.func) == "reads" for a in [*d.args, *(k.value for k in d.keywords)]}
            marked |= {e for m in list(marked) if m.startswith("(") for e in m.strip("(),").split(", ")}
            read = {ast.unparse(c.args[0]) for c in ast.walk(fn) if isinstance(c, ast.Call)
                    and isinstance(c.func, ast.Name) and c.func.id == "runs_of" and c.args}
            undeclared += [f"{path.name}::{fn.name} reads {r}" for r in sorted(read - marked)]
    assert undeclared == []


def test_a_pin_test_that_reads_scales_declares_them_fresh():
    """Else the tier hook would move it to the fast tier, where records stand in for training."""
    assert pin_problem(Node(reads(A, fresh=True))) == "" and pin_problem(Node()) == ""
    assert pin_problem(Node(reads(A))) == ("claims/test_x.py::test_x: a pin checks what is measured now; "
                                           "declare its scales with @reads(..., fresh=True)")
