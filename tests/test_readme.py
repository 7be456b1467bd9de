"""The README stays one screen: at most 8 KB, its layout names what the tree holds,
docs/README.md indexes every page under docs/, and their relative links resolve."""
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.fast, pytest.mark.skipif(
    not (ROOT / "docs" / "README.md").is_file(), reason="a copy of the tests without the docs (mutmut's)")]


def _read(page: str) -> str:
    return (ROOT / page).read_text(encoding="utf-8")


def _layout() -> list[str]:
    """The first word of each line of the code block under '## Layout': a path."""
    block = re.search(r"^## Layout\n.*?^```\n(.*?)^```", _read("README.md"), re.S | re.M)
    assert block, "README.md has no ## Layout section with a code block"
    return [line.split()[0] for line in block.group(1).splitlines() if line.strip()]


def _tracked_top_level_folders() -> set[str]:
    try:
        files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return {f.split("/")[0] + "/" for f in files.splitlines() if "/" in f and not f.startswith(".")}


def test_the_readme_is_at_most_8_kb():
    assert (ROOT / "README.md").stat().st_size <= 8192


def test_every_path_the_layout_names_exists():
    assert [p for p in _layout() if not (ROOT / p).exists()] == []


def test_the_layout_names_every_top_level_folder_git_tracks():
    assert sorted(_tracked_top_level_folders() - set(_layout())) == []


def test_docs_readme_lists_every_page_and_image_under_docs():
    pages = [p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*")
             if p.suffix in (".md", ".png") and p.name != "README.md"]
    assert [p for p in pages if f"]({p})" not in _read("docs/README.md")] == []


@pytest.mark.parametrize("page", ["README.md", "docs/README.md"])
def test_relative_links_resolve(page):
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", _read(page))
    base = (ROOT / page).parent
    assert [l for l in links if "://" not in l and not (base / l).exists()] == []
