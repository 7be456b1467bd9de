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


PYTHON_FILES = ("test_*.py", "*_test.py")  # pytest's default python_files


def files(root: Path, testpaths=(), patterns=PYTHON_FILES) -> list[Path]:
    """The test files under ``testpaths`` (files or folders, relative to ``root`` or absolute),
    named as ``patterns`` say; hidden and build folders are skipped."""
    root = Path(root).resolve()
    found = []
    for base in [(root / p).resolve() for p in testpaths] or [root]:
        paths = sorted({q for pat in patterns for q in base.rglob(pat)}) if base.is_dir() else [base]
        for path in paths:
            inside = path.relative_to(base).parts[:-1] if base.is_dir() else ()
            if path.is_file() and not any(part.startswith(".") or part in _SKIP_DIRS for part in inside):
                found.append(path)
    return list(dict.fromkeys(found))


def _name(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(Path(root).resolve()))
    except ValueError:  # a test file outside the rootdir
        return str(path)


def _tests(body, prefix=""):
    """(name, function node, class decorators and pytestmark) of every test function: module level,
    and methods of classes named Test* (pytest's default python_classes)."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            yield prefix + node.name, node, []
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            marks = list(node.decorator_list) + _module_marks(node)
            for name, func, inner in _tests(node.body, f"{prefix}{node.name}::"):
                yield name, func, marks + inner


def read(root: Path, testpaths=(), tiers=TIERS, patterns=PYTHON_FILES) -> list[Entry]:
    """Every test function of the suite (module level, and in Test* classes) with its tiers (the
    document's tier names), scale, claims and xfails, read from its marks as written: a mark a
    conftest adds, or one held in a variable, is not seen."""
    out = []
    for path in files(root, testpaths, patterns):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError):
            continue
        module = _marks(_module_marks(tree), tiers)
        for name, node, outer in _tests(tree.body):
            m = _marks(outer + node.decorator_list, tiers)
            out.append(Entry(_name(path, root), name,
                             tuple(m["tiers"] or module["tiers"]), m["scale"] or module["scale"],
                             tuple(module["claims"] + m["claims"]), tuple(module["xfails"] + m["xfails"]),
                             node.lineno, _records(node)))
    return out
