"""The report in a real browser: headless Chromium shows every claim and the summary's counts on
index.html, and every claim's quote marked in its verdict's colour on chapters/<source>.html. The
plugin's own browser tests (an example's errata and suggestions): plugin/tests/test_html_browser.py."""
import json
import re
import struct
from html.parser import HTMLParser
from pathlib import Path

import pytest

from claimcheck import browser
from claimcheck import report as render
from claimcheck.chapters import COLOURS, spans
from claimcheck.verdict import AT_CAP, STATUSES
from claimcheck.registry import load_registry
from claimcheck.suite import read

pytestmark = pytest.mark.slow  # a browser: seconds, not milliseconds

ROOT = Path(__file__).resolve().parents[1]


def _fast_run_of_the_suite(registry) -> dict:
    """The report of a `pytest -m fast` run, without running it: fast tests pass (or diverge
    where marked), the others are skipped. Enough to fill all 142 rows with several statuses."""
    tests = {}
    for t in read(ROOT, ["claims", "tests"]):
        fast = t.tiers == ("fast",)
        outcome = ("xfailed" if t.xfails else "passed") if fast else "skipped"
        tests[f"{t.path}::{t.name}"] = {
            "outcome": outcome, "reason": {"passed": "", "xfailed": "xfail: marked diverges"}.get(
                outcome, f"{t.tiers[0]} tier: needs --claims-runslow"),
            "tier": t.tiers[0], "scale": t.scale, "claims": list(t.claims), "records": [],
            "figures": [], "pins": []}
    return render.build(registry, tests, [{"generated": "now", "commit": "test"}],
                        {c for t in tests.values() for c in t["claims"]})


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """(chromium, registry, doc, folder): the report of a fast run, written once with its chapters."""
    chromium = browser.chromium()
    if chromium is None:
        pytest.skip("no Chromium found: apt-get install chromium (Debian) to run the browser test")
    registry = load_registry(ROOT / "fixtures" / "claims.toml")
    doc = _fast_run_of_the_suite(registry)
    out = tmp_path_factory.mktemp("report")
    render.write(doc, out, texts=registry.texts())
    return chromium, registry, doc, out


def test_chromium_shows_every_claim_row_and_the_summary_counts(written, tmp_path):
    chromium, registry, doc, out = written
    shot = ROOT / "reports" / "report-screenshot.png"
    shot.parent.mkdir(exist_ok=True)
    shot.unlink(missing_ok=True)
    # One headless run dumps the DOM after the page's script ran and takes the screenshot.
    dom = browser.dom(chromium, tmp_path / "profile", (out / "index.html").as_uri(), f"--screenshot={shot}")
    shown = re.search(r'<output id="row-count" data-by-status="([^"]*)">(\d+)</output>', dom)
    assert shown, "the page's script did not count the rows (is JavaScript running?)"
    assert int(shown[2]) == len(registry)  # every claim a row; the count itself is tests/test_registry.py's
    by_status = dict((s, int(n)) for s, n in (kv.split(":") for kv in shown[1].split()))
    # the page's script counts rows by status; "undecided at the cap" is a subset of undecided
    assert by_status == {s: doc["summary"][s] for s in STATUSES if doc["summary"][s]}
    assert len(by_status) >= 3  # holds, diverges, descriptive, not-run: the colours are exercised
    counts = re.findall(r'<li class="[^"]*" data-status="([\w-]+)"><b>(\d+)</b>', dom)
    assert {s: int(n) for s, n in counts} == {s: doc["summary"][s] for s in STATUSES}
    if doc["summary"][AT_CAP]:
        assert f'({doc["summary"][AT_CAP]} at the cap)' in dom
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# what the test adds to a copy of a chapter page: each mark's computed colours, as attributes the
# dumped DOM carries (the page itself has no script)
_COMPUTED = """<script>
for (const m of document.querySelectorAll("mark")) {
  const s = getComputedStyle(m);
  m.dataset.bg = s.backgroundColor;
  m.dataset.fg = s.borderBottomColor;
}
document.body.dataset.computed = document.querySelectorAll("mark").length;
</script>"""


class _Marks(HTMLParser):
    """Every <mark>'s attributes, and the text of every <style>."""

    def __init__(self):
        super().__init__()
        self.marks, self.css, self._style, self.body = [], "", False, {}

    def handle_starttag(self, tag, attrs):
        if tag == "mark":
            self.marks.append(dict(attrs))
        elif tag == "style":
            self._style = True
        elif tag == "body":
            self.body = dict(attrs)

    def handle_endtag(self, tag):
        if tag == "style":
            self._style = False

    def handle_data(self, data):
        if self._style:
            self.css += data


def _rgb(hexc: str) -> str:
    r, g, b = (int(hexc[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


def test_chromium_shows_every_claims_quote_marked_in_its_verdicts_colour(written, tmp_path, pytestconfig):
    chromium, registry, doc, out = written
    status = {c["id"]: c["status"] for c in json.loads((out / "claims.json").read_text(encoding="utf-8"))["claims"]}
    assert set(registry.sources) == {"IT", "PL"}
    shot = (ROOT / "docs" / "images" if pytestconfig.getoption("screenshots") else tmp_path) / "annotated-chapter.png"
    shot.unlink(missing_ok=True)
    texts = registry.texts()
    for sid in registry.sources:
        page = out / "chapters" / f"{sid}.html"
        probe = page.with_name(f"{sid}.probe.html")  # beside it: same folder, same relative links
        probe.write_text(page.read_text(encoding="utf-8").replace("</body>", _COMPUTED + "\n</body>"),
                         encoding="utf-8")
        p = _Marks()
        # the IT page's first screen is docs/images/annotated-chapter.png under --screenshots (the
        # probe's script only sets attributes: the page looks the same)
        extra = [f"--screenshot={shot}"] if sid == "IT" else []
        p.feed(browser.dom(chromium, tmp_path / "profile", probe.as_uri(), *extra, size="1280,900"))
        assert p.body.get("data-computed") == str(len(p.marks)), "the probe's script did not run"
        # a quote missing from the chapter is test_registry's to report; here, every claim whose
        # quote opens in the chapter (the anchor sits on its first part) is marked in its colour
        found = {s[2]["id"] for s in spans(texts[sid], [{"id": c.id, "quote": c.quote} for c in registry.values()
                                                         if c.source == sid]) if s[3] == 0}
        checkable = [c for c in registry.values() if c.source == sid and not c.descriptive and c.id in found]
        assert len(checkable) > 10
        for c in checkable:
            anchored = [m for m in p.marks if m.get("id") == f"q-{c.id}"]
            assert len(anchored) == 1, f"{sid}: {c.id} has {len(anchored)} mark(s) with id q-{c.id}"
            m = anchored[0]
            assert m["class"] == status[c.id] == m["data-status"], c.id
            assert m["data-claim"] == c.id
            assert re.search(rf"(^|\n)\.{re.escape(status[c.id])} \{{ --fg: #[0-9a-f]{{6}}; --bg: #[0-9a-f]{{6}}; \}}",
                             p.css), f"the page's CSS has no rule for .{status[c.id]}"
            fg, bg = COLOURS[status[c.id]]
            assert (m["data-bg"], m["data-fg"]) == (_rgb(bg), _rgb(fg)), f"{c.id}: computed colours"
        # the page shows several verdicts' colours, not one
        assert len({m["class"] for m in p.marks}) >= 3

    png = shot.read_bytes()  # the IT page's first screen, as the probe run saw it
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", png[16:24]) == (1280, 900)
