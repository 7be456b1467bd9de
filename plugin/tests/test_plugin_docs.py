"""docs/reference/plugin.md documents every option, ini key, fixture, hook and public name of the
plugin, and no default names this repository's document."""
import ast
import re
from pathlib import Path

import pytest

import claimcheck
from claimcheck import hooks, marks

pytestmark = pytest.mark.fast

ROOT = Path(__file__).resolve().parents[2]  # the repository: docs/ and plugin/
DOC = (ROOT / "docs" / "reference" / "plugin.md").read_text(encoding="utf-8")
PLUGIN = (ROOT / "plugin" / "claimcheck" / "plugin.py").read_text(encoding="utf-8")  # the hooks and options
FIXTURES = (ROOT / "plugin" / "claimcheck" / "fixtures.py").read_text(encoding="utf-8")


def _fixtures() -> list[str]:
    tree = ast.parse(FIXTURES)
    return [f.name for f in tree.body if isinstance(f, ast.FunctionDef)
            and any("fixture" in ast.unparse(d) for d in f.decorator_list)]


def test_every_option_ini_key_fixture_hook_and_public_name_is_documented():
    options = re.findall(r'addoption\("(--[\w-]+)"', PLUGIN)
    inis = re.findall(r'addini\("(\w+)"', PLUGIN)
    hookspecs = [n for n in dir(hooks) if n.startswith("pytest_claimcheck_")]
    names = {"option": options, "ini key": inis, "fixture": _fixtures(), "hook": hookspecs,
             "public name": [n for n in claimcheck.__all__ if n != "__version__"]}
    assert len(options) >= 5 and len(inis) >= 9 and len(names["fixture"]) == 3 and len(hookspecs) == 2
    missing = [f"{kind} {n}" for kind, ns in names.items() for n in ns if f"`{n}" not in DOC]
    assert not missing, f"not in docs/reference/plugin.md: {missing}"


def test_no_default_or_help_text_names_this_repository_s_document():
    """A plain document (sorting, birthdays) sees the plugin's own words, not ours."""
    ours = re.compile(r"training|CI scale|claims/|transformer|chapter|CUDA", re.I)
    defaults = [*marks.TIERS.values(), *(w for w, _ in marks.SCALES.values())]
    helps = re.findall(r'help="([^"]*)"', PLUGIN) + re.findall(r'addini\("\w+", "([^"]*)"', PLUGIN)
    page = (ROOT / "plugin" / "claimcheck" / "templates" / "report.html.j2").read_text(encoding="utf-8")
    assert [t for t in defaults + helps if ours.search(t)] == []
    assert not re.search(r"claims/test_|tests/test_", page)
    assert marks.SCALES == {} and marks.DEFAULT_SCALE == {}  # a document that names no scales has none
