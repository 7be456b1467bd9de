"""The layers, read from the source: the plugin knows no document, model/ knows no chapter, and
no two modules import each other (directly or round a longer loop), imports inside functions
included."""
import ast
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.fast

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("claimcheck", "claims", "model", "experiments")


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """The project modules ``path`` imports, anywhere in it (tests excluded by the caller)."""
    me = _module(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            names = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        out |= {n for n in names if n.split(".")[0] in PACKAGES}
    return out - {me}


def _graph() -> dict[str, set[str]]:
    files = [p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py") if not p.name.startswith("test_")
             and p.name != "conftest.py"]
    modules = {_module(p): p for p in files}

    def resolve(name):  # 'suite.scales.Runs' -> 'suite.scales'; a package -> its __init__
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name
    return {m: {r for r in map(resolve, _imports(p)) if r and r != m} for m, p in modules.items()}


def _cycles(graph) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_import_graph_has_no_cycle():
    graph = _graph()
    # package __init__ files re-export their own modules; a loop through one is no loop
    graph = {m: {d for d in deps if not (m.startswith(d + ".") )} for m, deps in graph.items()}
    assert not _cycles(graph), _cycles(graph)


def test_each_layer_imports_only_the_layers_below_it():
    below = {"claimcheck": set(), "model": set(), "experiments": {"model"},
             "claims": {"claimcheck", "model", "experiments"}}
    wrong = [f"{m} imports {d}" for m, deps in _graph().items() for d in deps
             if d.split(".")[0] != m.split(".")[0] and d.split(".")[0] not in below[m.split(".")[0]]]
    assert not wrong, wrong


def test_the_plugin_names_no_document():
    found = [f"{p.relative_to(ROOT)}:{i}" for p in (ROOT / "claimcheck").rglob("*")
             if p.is_file() and p.suffix in (".py", ".j2")
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"000_5fede|003_8557|Italian|Polish", line)]
    assert not found, found


def test_model_holds_no_chapter_config():
    """The chapters' models live in experiments/configs.py; model/ is a network library."""
    names = {n.name for p in (ROOT / "model").glob("*.py")
             for n in ast.walk(ast.parse(p.read_text(encoding="utf-8"))) if isinstance(n, ast.FunctionDef)}
    assert not names & {"shakespeare_config", "ladder", "sqrt_dk_config", "tiny_lab_config"}
