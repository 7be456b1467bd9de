"""docs/reference/architecture.md follows NORM-05 hop by hop: every hop it names still exists."""
import ast
import importlib
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "reference" / "architecture.md"
HOP = re.compile(r"^\| (\d+) \| `([^`]+)`(?:: `([^`]+)`)? ")  # | 12 | `path:symbol` | or | 1 | `file.toml`: `KEY` |


def hops() -> list[tuple[int, str, str]]:
    """(row, file, symbol) for each row of the page's table."""
    rows = [HOP.match(line) for line in PAGE.read_text(encoding="utf-8").splitlines()]
    out = []
    for m in filter(None, rows):
        where, key = m.group(2), m.group(3)
        path, _, symbol = where.partition(":") if key is None else (where, "", key)
        out.append((int(m.group(1)), path, symbol))
    return out


def _module(path: str) -> str:
    """plugin/claimcheck/verdict.py -> claimcheck.verdict; suite/evidence/store.py -> suite.evidence.store."""
    parts = Path(path).with_suffix("").parts
    return ".".join(parts[1:] if parts[0] == "plugin" else parts)


def _defined_in_source(path: Path, dotted: str) -> bool:
    """``Class.method`` or ``name`` defined at the top of the file (conftest.py is pytest's, not importable)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    first, _, rest = dotted.partition(".")
    for node in tree.body:
        names = ([node.name] if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else
                 [t.id for t in getattr(node, "targets", []) if isinstance(t, ast.Name)])
        if first in names:
            return not rest or any(getattr(n, "name", None) == rest for n in getattr(node, "body", []))
    return False


def _exists(path: str, symbol: str) -> bool:
    file = ROOT / path
    if file.suffix == ".toml":  # a claim's table: [[claim]] id = ..., or [ID] / ["ID"]
        data = tomllib.loads(file.read_text(encoding="utf-8"))
        return symbol in data or any(c.get("id") == symbol for c in data.get("claim", []))
    if path == "conftest.py":
        return _defined_in_source(file, symbol)
    obj = importlib.import_module(_module(path))
    for name in symbol.split("."):
        obj = getattr(obj, name, None)
    return obj is not None


@pytest.mark.fast
def test_the_page_names_every_hop_in_order():
    rows = hops()
    assert [r for r, _, _ in rows] == list(range(1, len(rows) + 1)) and len(rows) >= 40


@pytest.mark.fast
def test_every_hop_on_norm05s_path_still_exists():
    missing = [(row, path, symbol) for row, path, symbol in hops() if not _exists(path, symbol)]
    assert missing == [], "docs/reference/architecture.md names hops that no longer exist: update the page"
