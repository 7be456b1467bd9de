"""The report in a real browser: headless Chromium shows examples/sorting's erratum with its proposed
correction, in the errata table and under its sentence on the annotated page. Without Chromium these
tests skip. The suite's own report in the browser (every claim of the chapters): tests/test_html_browser.py.

Marked slow (a run of the example and three browser starts, seconds): ``pytest`` here runs them,
``pytest -m fast`` leaves them out."""
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from claimcheck import browser

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]  # the repository: examples/, docs/images/


@pytest.fixture(scope="module")
def sorting_report(tmp_path_factory):
    """(chromium, folder): examples/sorting run from a copy; its erratum SORT-05 has a proposed
    correction, and the annotated page shows it under the sentence."""
    chromium = browser.chromium()
    if chromium is None:
        pytest.skip("no Chromium found: apt-get install chromium (Debian) to run the browser test")
    project = tmp_path_factory.mktemp("sorting")
    shutil.copytree(ROOT / "examples" / "sorting", project, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("reports", "__pycache__"))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=project,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-2000:]
    return chromium, project / "reports"


class _Texts(HTMLParser):
    """The text inside elements of a class, e.g. every ``td.proposed`` or ``.suggestion``."""

    def __init__(self, cls):
        super().__init__()
        self.cls, self.depth, self.found = cls, 0, []

    def handle_starttag(self, tag, attrs):
        if self.depth:
            self.depth += tag not in ("br", "img", "col")
        elif self.cls in (dict(attrs).get("class") or "").split():
            self.depth, self.found = 1, self.found + [""]

    def handle_endtag(self, tag):
        if self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            self.found[-1] += data


def test_chromium_shows_the_errata_with_their_proposed_corrections(sorting_report, tmp_path, pytestconfig):
    chromium, out = sorting_report
    shot = (ROOT / "docs" / "images" if pytestconfig.getoption("screenshots") else tmp_path) / "errata-corrections.png"
    dom = browser.dom(chromium, tmp_path / "profile", (out / "index.html").as_uri() + "#errata",
                      f"--screenshot={shot}", size="1280,800")
    cells = _Texts("proposed")
    cells.feed(dom)
    assert "Binary search finds any item among 1,000 sorted items in at most 10" in cells.found[0]
    assert 'href="corrections.md"' in dom
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_chromium_shows_the_suggestion_under_its_sentence_on_the_annotated_page(sorting_report, tmp_path, pytestconfig):
    chromium, out = sorting_report
    shot = (ROOT / "docs" / "images" if pytestconfig.getoption("screenshots") else tmp_path) / "annotated-suggestion.png"
    dom = browser.dom(chromium, tmp_path / "profile", (out / "chapters" / "SORT.html").as_uri(),
                      f"--screenshot={shot}", size="1000,900")
    notes = _Texts("suggestion")
    notes.feed(dom)
    assert len(notes.found) == 1
    assert notes.found[0] == ("SORT-05 · suggested correction (text) Binary search finds any item among 1,000 sorted items "
                              "in at most 10")
    # it sits after the erratum's sentence ("... in at most 9 / comparisons."), inside its paragraph
    assert re.search(r'data-claim="SORT-05"[^>]*>[^<]*(<a[^>]*>[^<]*</a>)?[^<]*</mark>\s*comparisons\.'
                     r'<span class="suggestion" data-claim="SORT-05">', dom), dom[dom.find("SORT-05"):][:600]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
