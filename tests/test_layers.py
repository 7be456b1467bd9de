"""The layers, read from the source: import-linter checks the contracts in pyproject.toml
([tool.importlinter]: suite above experiments above model, the plugin independent of all three,
no cycle inside a package, imports inside functions included); then two checks on names."""
import ast
import os
import re
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # seconds, not milliseconds: it runs with --runslow
def test_the_import_contracts_hold():
    try:
        lint = entry_points(group="console_scripts")["lint-imports"]
    except KeyError:
        pytest.fail("import-linter is not installed; it is in the test extra: pip install -e '.[test]'")
    # from the repository root: suite is found there, not installed; --no-cache writes no
    # .import_linter_cache into the tree; a wide console keeps each broken chain on one line
    run = subprocess.run(
        [sys.executable, "-c", f"from {lint.module} import {lint.attr} as main; main()", "--no-cache", "--no-logo"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "200"})
    if run.returncode:
        pytest.fail(f"lint-imports exited {run.returncode}:\n{run.stdout}{run.stderr}", pytrace=False)


# Kept by hand: what a source file names, not what it imports, which import-linter cannot see.
@pytest.mark.fast
def test_the_plugin_names_no_document():
    found = [f"{p.relative_to(ROOT)}:{i}" for p in (ROOT / "plugin" / "claimcheck").rglob("*")
             if p.is_file() and p.suffix in (".py", ".j2")
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"000_5fede|003_8557|Italian|Polish", line)]
    assert not found, found


@pytest.mark.fast
def test_model_holds_no_chapter_config():
    """The chapters' models live in experiments/configs.py; model/ is a network library."""
    names = {n.name for p in (ROOT / "model").glob("*.py")
             for n in ast.walk(ast.parse(p.read_text(encoding="utf-8"))) if isinstance(n, ast.FunctionDef)}
    assert not names & {"shakespeare_config", "ladder", "sqrt_dk_config", "tiny_lab_config"}
