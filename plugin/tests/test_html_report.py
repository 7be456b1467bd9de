"""index.html: one row and one anchor per claim, statuses as in claims.json, nothing external."""
import json
import re
from collections import Counter
from html.parser import HTMLParser

import pytest

from claimcheck import report as render
from claimcheck.html import page
from claimcheck.marks import MarkSettings
from claimcheck.registry import Claim

pytestmark = pytest.mark.fast

# a document of three scales, as this repository's own (pyproject.toml)
SCALES3 = MarkSettings(scales={"analytic": ("analytic", ""), "ci": ("CI scale", ""), "full": ("full scale", "")},
                   default_scale={"fast": "analytic", "gpu": "full"})

QUOTE = 'La media <script>alert("x")</script> & co.'


def _claim(cid, source="IT", section="s1", kind="numeric", quote=None):
    return Claim(id=cid, source=source, section=section, where="L1", quote=quote or f"quote of {cid}",
                 statement=f"statement of {cid}", value=f"doc value of {cid}", kind=kind, tier="fast",
                 untestable="a definition" if kind == "descriptive" else None)


def _test(claims, outcome, scale="analytic", reason="", records=(), figures=(), pins=()):
    return {"outcome": outcome, "reason": reason, "tier": "slow" if scale == "ci" else "fast",
            "scale": scale, "claims": claims, "records": list(records), "figures": list(figures),
            "pins": list(pins)}


REGISTRY = {c.id: c for c in [
    _claim("P-01", quote=QUOTE), _claim("F-01", source="PL", section="lab"),
    _claim("X-01", section="s2"), _claim("S-01", section="s2"), _claim("U-01", section="s2"),
    _claim("D-01", kind="descriptive"), _claim("G-01", source="PL", section="lab")]}
TESTS = {
    "claims/t.py::test_p": _test(["P-01"], "passed", records=[
        {"claim": "P-01", "label": None, "measured": {"a": 0.123456, "b": [1.0, 2]}, "expected": 0.12,
         "tolerance": "±1 %"}], figures=[{"claim": "P-01", "path": "figures/p01.png"}]),
    "claims/t.py::test_f": _test(["F-01"], "failed", reason="assert 3.0 == 7.26"),
    "claims/t.py::test_x": _test(["X-01"], "xfailed", scale="ci", reason="xfail: too small at CI scale"),
    "claims/t.py::test_s": _test(["S-01"], "skipped", scale="ci", reason="no corpus"),
    "claims/t.py::test_g_ci": _test(["G-01"], "xfailed", scale="ci", reason="xfail: CI too short"),
    "claims/t.py::test_g_full": _test(["G-01"], "passed", scale="full", records=[
        {"claim": "G-01", "label": None, "measured": 8.1, "expected": None, "tolerance": "±0.5"}]),
    "claims/t.py::test_pin": _test([], "failed", reason="pin fixtures/pins/a.npz is stale",
                                   pins=[{"name": "a", "file": "fixtures/pins/a.npz", "tolerance": "rtol 1e-4",
                                          "meaning": "first losses"}]),
}
RUNS = [{"generated": "2026-01-01T00:00:00+00:00", "commit": "abc1234", "torch": "2.13.0+cpu",
         "device": "cpu", "tiers": ["fast", "slow"], "python": "3.11.7", "args": "--runslow -n 2"}]


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


@pytest.fixture(scope="module")
def doc():
    return render.build(REGISTRY, TESTS, RUNS, settings=SCALES3)


@pytest.fixture(scope="module")
def html(doc):
    return page(doc)


@pytest.fixture(scope="module")
def tags(html):
    p = _Tags()
    p.feed(html)
    return p.tags


def test_every_claim_has_one_row_with_its_anchor_and_its_status(doc, tags):
    rows = [a for t, a in tags if t == "tr" and "claim" in a.get("class", "").split()]
    assert sorted(r["id"] for r in rows) == sorted(REGISTRY)
    assert {r["id"]: r["data-status"] for r in rows} == {c["id"]: c["status"] for c in doc["claims"]}
    assert Counter(r["data-status"] for r in rows) == Counter(doc["summary"])
    ids = [a["id"] for _, a in tags if "id" in a]
    assert len(ids) == len(set(ids))


def test_the_headline_counts_and_the_badge_are_on_the_page(doc, html):
    shown = re.findall(r'<li class="[^"]*" data-status="([\w-]+)"><b>(\d+)</b>', html)
    assert {s: int(n) for s, n in shown} == {k: v for k, v in doc["summary"].items() if k != "undecided at the cap"}
    label, message, _, _ = render.badge_text(doc)
    assert f"{label}: {message}" in html


def test_errata_come_first_with_the_lower_scale_group(html):
    errata, chapters = html.split('<section id="chapter-IT">')
    assert '<a href="#F-01">' in errata and '<a href="#X-01">' in errata
    lower = errata.split("Divergences at a lower scale only")[1]
    assert '<a href="#G-01">' in lower and "CI too short" in lower
    assert "holds</span> <small>(full scale); diverges at CI scale</small>" in chapters


def test_quotes_are_escaped_and_values_formatted_like_the_markdown(html):
    assert "<script>alert" not in html
    assert "La media &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; co." in html
    assert "a: 0.123456<br>b: [1, 2]" in html  # render._fmt per dict entry, at the precision recorded


def test_nothing_is_loaded_from_elsewhere_and_figures_are_relative_links(tags):
    links = [a[k] for _, a in tags for k in ("src", "href") if k in a]
    assert not [u for u in links if re.match(r"\s*(https?:)?//", u)]
    assert ("a", {"class": "fig", "href": "figures/p01.png"}) in tags
    assert any(t == "img" and a["src"] == "figures/p01.png" for t, a in tags)


def test_the_runs_and_pins_are_listed(html):
    assert "<code>abc1234</code>" in html and "pytest --runslow -n 2" in html
    assert "<code>fixtures/pins/a.npz</code>" in html and "pin fixtures/pins/a.npz is stale" in html


def test_every_report_writes_index_html_beside_claims_md(doc, tmp_path):
    names = {p.name for p in render.write(doc, tmp_path)}
    assert {"index.html", "claims.md", "claims.json"} <= names
    assert json.loads((tmp_path / "claims.json").read_text(encoding="utf-8"))["summary"] == doc["summary"]
    assert (tmp_path / "index.html").read_text(encoding="utf-8") == page(doc)


def test_a_claim_without_a_section_goes_under_other_and_sections_never_split():
    """One claim with a section among claims without one: two headings, "s" then "Other", each
    once, and no empty heading."""
    from claimcheck.markdown import markdown
    registry = {c.id: c for c in [_claim("A-01", section=""), _claim("B-01", section="s"), _claim("C-01", section="")]}
    tests = {f"t.py::{cid}": _test([cid], "passed", records=[{"claim": cid, "label": None, "measured": 1,
                                                            "expected": None, "tolerance": None}])
             for cid in registry}
    doc = render.build(registry, tests, RUNS, texts={"IT": "x\nquote of B-01. quote of A-01.\nquote of C-01\n"})
    md = markdown(doc)
    assert [line for line in md.splitlines() if line.startswith("### ")] == ["### s", "### Other"]
    html = page(doc)
    assert re.findall(r"<h3>([^<]*)</h3>", html) == ["s", "Other"]
    # every row says where: the annotated page, the source's line and the registry's where
    assert "[IT:2](chapters/IT.html#q-B-01) · L1" in md and "[IT:3](chapters/IT.html#q-C-01)" in md
    assert '<a href="chapters/IT.html#q-A-01">in the text: IT:2</a>' in html
    assert "[The text, annotated with every verdict](chapters/IT.html)" in md


def test_no_pins_no_pins_section(doc):
    assert 'id="pins"' in page(doc)  # this report checked one
    assert 'id="pins"' not in page(dict(doc, pins=[])) and 'href="#pins"' not in page(dict(doc, pins=[]))


def test_a_report_missing_a_field_every_page_needs_stops_instead_of_rendering_it_blank(doc):
    """The templates are strict (jinja2.StrictUndefined): a field the report always carries, such
    as the commit, cannot go missing into an empty cell; an optional one (notes, pins) may."""
    import jinja2
    from claimcheck.markdown import corrections_md, markdown
    slim = {k: v for k, v in doc.items() if k not in ("notes", "pins", "interrupted")}
    assert page(slim) and markdown(slim) and corrections_md(slim)
    broken = {k: v for k, v in doc.items() if k != "commit"}
    for render_page in (page, markdown):
        with pytest.raises(jinja2.UndefinedError, match="commit"):
            render_page(broken)
