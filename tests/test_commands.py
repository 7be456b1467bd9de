"""Every `python -m <module>` the README, the reference and how-to pages, the scripts and the
messages name is a command that exists: a module that runs as a script."""
import importlib.util
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.fast

ROOT = Path(__file__).resolve().parents[1]
WHERE = ["README.md", "docs/reference", "docs/howto", "tools", ".ci", "suite", "claims", "benchmarks"]
OUTSIDE = {"pip", "venv"}


def _named() -> dict[str, str]:
    out = {}
    for where in WHERE:
        base = ROOT / where
        for p in [base] if base.is_file() else [f for f in base.rglob("*") if f.is_file()]:
            if p.suffix in (".md", ".py", ".sh", "") and "__pycache__" not in p.parts:
                for m in re.findall(r"python3? -m ([A-Za-z_][\w.]*)", p.read_text(encoding="utf-8", errors="ignore")):
                    out.setdefault(m, str(p.relative_to(ROOT)))
    return {m: f for m, f in out.items() if m.split(".")[0] not in OUTSIDE}


@pytest.mark.parametrize("module, where", sorted(_named().items()))
def test_a_named_command_runs_as_a_script(module, where):
    spec = importlib.util.find_spec(module)
    assert spec is not None, f"{where} names `python -m {module}`, which does not exist"
    if spec.submodule_search_locations:  # a package runs through its __main__
        assert importlib.util.find_spec(f"{module}.__main__"), f"{where}: {module} has no __main__.py"
    else:
        assert 'if __name__ == "__main__"' in Path(spec.origin).read_text(encoding="utf-8"), (
            f"{where} names `python -m {module}`, which does nothing when run")
