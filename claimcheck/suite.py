"""The suite as written, read from the test files' source without importing or collecting them.

What a run did not collect (``pytest claims/test_mask.py``, ``-k``) is still part of the
suite: a claim that some uncollected test names is *not collected*, not *untested*. The same
reading lets fast tests check the registry's tiers and the divergence marks of every test.
"""
import ast
from dataclasses import dataclass, field
from pathlib import Path

from .marks import TIERS

_SKIP_DIRS = {"node_modules", "site-packages", "build", "dist", "__pycache__"}


@dataclass(frozen=True)
class Entry:
    path: str
    name: str
    tiers: tuple[str, ...]
    scale: str | None
    claims: tuple[str, ...]
    xfails: tuple[dict, ...] = field(default=())  # keyword arguments of each xfail mark, as source text
    line: int = 0                                  # the line of its ``def``
    records: tuple[tuple, ...] = field(default=())  # (claim, expected, line) of each unlabelled
    # claim_record call whose claim and expected are literals: what ``claimcheck check`` can read


def _mark_name(node) -> str | None:
    """'slow' for pytest.mark.slow / pytest.mark.slow(...); 'diverges' for diverges(...)."""
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Attribute):
        return target.attr
    if isinstance(target, ast.Name):
        return target.id
    return None


def _strings(call) -> tuple[str, ...]:
    return tuple(a.value for a in getattr(call, "args", []) if isinstance(a, ast.Constant) and isinstance(a.value, str))


def _marks(nodes, tiers) -> dict:
    out = {"tiers": [], "scale": None, "claims": [], "xfails": []}
    for node in nodes:
        name = _mark_name(node)
        if name in tiers:
            out["tiers"].append(name)
        elif name == "scale":
            out["scale"] = (_strings(node) or (None,))[0]
        elif name == "claim":
            out["claims"] += _strings(node)
        elif name == "xfail":
            out["xfails"].append({k.arg: ast.unparse(k.value) for k in getattr(node, "keywords", [])})
        elif name == "diverges":
            out["xfails"].append({"strict": "True", "raises": "AssertionError", "reason": "diverges(...)"})
    return out


def _records(func) -> tuple[tuple, ...]:
    out = []
    for node in ast.walk(func):
        if not (isinstance(node, ast.Call) and _mark_name(node) == "claim_record" and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            continue
        kw = {k.arg: k.value for k in node.keywords}
        if "expected" not in kw or ("label" in kw and not (isinstance(kw["label"], ast.Constant)
                                                           and kw["label"].value is None)):
            continue
        try:
            out.append((node.args[0].value, ast.literal_eval(kw["expected"]), node.lineno))
        except ValueError:  # not a literal: the fixture checks it when the test runs
            continue
    return tuple(out)


def _module_marks(tree) -> list:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "pytestmark" for t in node.targets):
            v = node.value
            return list(v.elts) if isinstance(v, (ast.List, ast.Tuple)) else [v]
    return []


def files(root: Path, testpaths=()) -> list[Path]:
    root = Path(root)
    files = []
    for base in [root / p for p in testpaths] or [root]:
        for path in sorted(base.rglob("test_*.py")) if base.is_dir() else [base]:
            if not any(p.startswith(".") or p in _SKIP_DIRS for p in path.relative_to(root).parts[:-1]):
                files.append(path)
    return files


def read(root: Path, testpaths=(), tiers=TIERS) -> list[Entry]:
    """Every module-level test function of the suite with its tiers (the document's tier names),
    scale, claims and xfails."""
    out = []
    for path in files(root, testpaths):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError):
            continue
        module = _marks(_module_marks(tree), tiers)
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
                m = _marks(node.decorator_list, tiers)
                out.append(Entry(str(path.relative_to(root)), node.name,
                                   tuple(m["tiers"] or module["tiers"]), m["scale"] or module["scale"],
                                   tuple(module["claims"] + m["claims"]), tuple(module["xfails"] + m["xfails"]),
                                   node.lineno, _records(node)))
    return out


def claims_named(root: Path, testpaths=(), tiers=TIERS) -> set[str]:
    return {cid for t in read(root, testpaths, tiers) for cid in t.claims}
