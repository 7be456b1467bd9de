"""What each tier promises: `pytest -m fast` measures every analytic claim, so an analytic test
(no training) runs in the fast tier. CI's fast-against-full diff finds a slip after the slow tier;
this finds it in seconds."""
import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.fast

CLAIMS = Path(__file__).resolve().parents[1] / "claims"

# Analytic, but slow, each with its reason. The claim's headline comes from another scale.
SLOW_ANALYTIC = {
    # tokenises tiny Shakespeare (tens of seconds from a cold cache); AVG-03's headline is full scale
    "test_a_counted_token_bigram_lands_where_the_no_context_model_does",
}


def _marks(fn):
    """The `pytest.mark.<name>(...)` decorators of a test, as name -> first string argument."""
    out = {}
    for d in fn.decorator_list:
        call = d if isinstance(d, ast.Call) else None
        attr = call.func if call else d
        if isinstance(attr, ast.Attribute) and ast.unparse(attr.value) == "pytest.mark":
            args = call.args if call else []
            out[attr.attr] = args[0].value if args and isinstance(args[0], ast.Constant) else None
    return out


def _tests():
    for path in sorted(CLAIMS.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module = {m: a for node in tree.body if isinstance(node, ast.Assign)
                  and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets)
                  for m, a in [(ast.unparse(node.value), None)]}
        for fn in tree.body:
            if isinstance(fn, ast.FunctionDef) and fn.name.startswith("test_"):
                yield path.name, fn.name, _marks(fn), " ".join(module)


def test_every_analytic_test_runs_in_the_fast_tier_or_says_why_not():
    outside = [(f, name) for f, name, marks, module in _tests()
               if marks.get("scale") == "analytic" and not ("fast" in marks or "pytest.mark.fast" in module)]
    assert {name for _, name in outside} == SLOW_ANALYTIC, (
        "an analytic test is not marked fast: `pytest -m fast` promises every analytic claim; mark it fast, "
        f"or add it to SLOW_ANALYTIC with its reason: {outside}")


def test_the_scan_sees_the_tests_it_judges():
    """The scan reads decorators, not the collection: it must find the analytic tests it checks."""
    found = [(name, marks) for _, name, marks, _ in _tests()]
    assert len(found) > 100
    assert any(m.get("scale") == "analytic" and "fast" in m for _, m in found)
