"""chapters/<source>.html (claimcheck/chapters.py): a source's text with every quote marked in its
claim's verdict colour; nested quotes nest, crossing quotes are cut into a continuation."""
import re
from html.parser import HTMLParser

import pytest

from claimcheck.chapters import COLOURS, annotate
from claimcheck.verdict import STATUSES

pytestmark = pytest.mark.fast

TEXT = ("Titolo <del capitolo> & co.\n"
        "La media di tutti i token pesa ogni posizione allo stesso modo. "
        "Poi: uno due tre quattro cinque, e basta.\n"
        "Un'altra   riga   con spazi & a capo < qui.\n")


def _claim(cid, quote, status, expected=None, measured=None, headline=None):
    return {"id": cid, "source": "S", "quote": quote, "status": status, "expected": expected,
            "measured": measured, "records": [], "headline": headline or status}


CLAIMS = [
    _claim("OUT-1", "La media di tutti i token pesa ogni posizione", "holds", 512, 511.75, "holds (CI scale)"),
    _claim("IN-1", "tutti i token", "fails", "3", 2.5),                 # nested in OUT-1
    _claim("CR-A", "uno due tre", "diverges", 0.1, 0.2),               # crossed by CR-B
    _claim("CR-B", "tre quattro cinque", "holds"),
    _claim("MULTI", "Poi: […] e basta", "not-run"),                   # two parts
    _claim("WS", "Un'altra riga con spazi & a capo < qui", "untested"),  # spaces differ
    _claim("GONE", "una frase che non c'è", "holds"),
    _claim("ESC", "<del capitolo> & co", "descriptive"),
]


def _doc(claims=CLAIMS):
    other = _claim("ELSE", "uno due tre", "fails")
    other["source"] = "T"
    return {"generated": "2026-12-02T12:00:00Z", "commit": "abc1234",
            "sources": [{"id": "S", "title": "Capitolo <1> & note", "language": "it", "file": "s.txt"},
                        {"id": "T", "title": "Other", "language": "pl", "file": "t.txt"}],
            "claims": [*claims, other]}


class _Marks(HTMLParser):
    """Every <mark>: its attributes, the data-claim of the marks around it, and its text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.marks, self.open, self.in_tag = [], [], 0

    def handle_starttag(self, tag, attrs):
        if tag == "mark":
            m = {"attrs": dict(attrs), "parents": [o["attrs"]["data-claim"] for o in self.open], "text": ""}
            self.marks.append(m)
            self.open.append(m)
        elif tag == "a" and self.open:
            self.in_tag += 1

    def handle_endtag(self, tag):
        if tag == "mark":
            self.open.pop()
        elif tag == "a" and self.in_tag:
            self.in_tag -= 1

    def handle_data(self, data):
        if not self.in_tag:
            for m in self.open:
                m["text"] += data


def _parse(page):
    p = _Marks()
    p.feed(page)
    assert not p.open, "every <mark> is closed"
    return p.marks


def _of(marks, cid):
    return [m for m in marks if m["attrs"]["data-claim"] == cid]


def _body(page):
    return page.split('<div class="text"', 1)[1]


def test_nested_quotes_nest():
    marks = _parse(annotate(_doc(), "S", TEXT))
    outer, = _of(marks, "OUT-1")
    inner, = _of(marks, "IN-1")
    assert outer["parents"] == [] and inner["parents"] == ["OUT-1"]
    assert outer["text"] == "La media di tutti i token pesa ogni posizione"
    assert inner["text"] == "tutti i token"
    assert inner["attrs"]["class"] == "fails" and outer["attrs"]["class"] == "holds"


def test_crossing_quotes_are_cut_into_a_continuation():
    marks = _parse(annotate(_doc(), "S", TEXT))
    a, = _of(marks, "CR-A")
    first, cont = _of(marks, "CR-B")
    assert a["text"] == "uno due tre" and a["attrs"]["class"] == "diverges"
    assert first["parents"][-1] == "CR-A" and first["text"] == "tre"
    assert "CR-A" not in cont["parents"] and cont["text"] == " quattro cinque"
    assert first["attrs"]["class"] == "holds" and cont["attrs"]["class"] == "holds cont"
    assert first["attrs"]["id"] == "q-CR-B" and "id" not in cont["attrs"]
    assert first["text"] + cont["text"] == "tre quattro cinque"
    assert cont["attrs"]["data-status"] == "holds"
    # a continuation carries no second tag link
    page = annotate(_doc(), "S", TEXT)
    assert page.count('href="../index.html#CR-B"') == 1


def test_each_found_claim_has_exactly_one_anchor_and_one_tag():
    page = annotate(_doc(), "S", TEXT)
    marks = _parse(page)
    for c in CLAIMS:
        n = 0 if c["id"] == "GONE" else 1
        assert page.count(f'id="q-{c["id"]}"') == n, c["id"]
        # a tag on every part of the quote found, none on a continuation
        parts = 0 if c["id"] == "GONE" else len(c["quote"].split(" […] "))
        assert page.count(f'<a class="tag" href="../index.html#{c["id"]}">{c["id"]}</a>') == parts, c["id"]
        anchored = [m for m in _of(marks, c["id"]) if m["attrs"].get("id")]
        assert len(anchored) == n
    multi = _of(marks, "MULTI")
    assert [m["text"] for m in multi] == ["Poi:", "e basta"]
    assert multi[0]["attrs"]["id"] == "q-MULTI" and "id" not in multi[1]["attrs"]
    assert "ELSE" not in page  # another source's claim stays off this page


def test_text_is_escaped_and_white_space_may_differ():
    page = annotate(_doc(), "S", TEXT)
    body = _body(page)
    assert "ESC</a>&lt;del capitolo&gt; &amp; co</mark>." in body
    assert "<del" not in body and "< qui" not in body and " & " not in body
    assert "<title>Capitolo &lt;1&gt; &amp; note: annotated</title>" in page
    marks = _parse(page)
    esc, = _of(marks, "ESC")
    assert esc["text"] == "<del capitolo> & co" and esc["attrs"]["class"] == "descriptive"
    ws, = _of(marks, "WS")
    assert ws["text"] == "Un'altra   riga   con spazi & a capo < qui"
    # the whole text survives, marks and tags aside
    p = _Marks()
    p.open = [{"attrs": {"data-claim": "all"}, "text": ""}]
    p.feed(body.split(">", 1)[1].rsplit("</div>", 1)[0])
    assert p.open[0]["text"] == TEXT


def test_the_hover_gives_the_verdict_the_documents_value_and_ours():
    marks = _parse(annotate(_doc(), "S", TEXT))
    outer, = _of(marks, "OUT-1")
    assert outer["attrs"]["title"] == "OUT-1: holds (CI scale) · document: 512 · ours: 511.75"
    inner, = _of(marks, "IN-1")
    assert inner["attrs"]["title"] == "IN-1: fails · document: 3 · ours: 2.5"
    gone_value, = _of(marks, "CR-B")[:1]
    assert gone_value["attrs"]["title"] == "CR-B: holds · document: — · ours: —"
    # a record judged at the headline scale is the value shown
    rec = _claim("REC", "pesa ogni posizione", "diverges", 1, 2)
    rec.update(scale="ci", records=[{"scale": "ci", "expected": 10, "measured": 12.5, "tolerance": "5%"}])
    r, = _of(_parse(annotate(_doc([rec]), "S", TEXT)), "REC")
    assert r["attrs"]["title"] == "REC: diverges · document: 10 · ours: 12.5"


def test_a_suspect_claim_is_marked_suspect():
    sus = _claim("SUS", "allo stesso modo", "suspect", headline="suspect (was holds)")
    m, = _of(_parse(annotate(_doc([sus]), "S", TEXT)), "SUS")
    assert m["attrs"]["class"] == "suspect" and m["attrs"]["title"].startswith("SUS: suspect (was holds)")


def test_a_quote_not_found_is_listed_and_the_legend_counts_statuses():
    page = annotate(_doc(), "S", TEXT)
    note = next(line for line in page.splitlines() if "Quotes not found" in line)
    assert "GONE" in note and "OUT-1" not in note
    assert 'data-claim="GONE"' not in page
    assert '<span class="holds pill">3 holds</span>' in page
    assert '<span class="fails pill">1 fails</span>' in page
    assert '<span class="suspect pill">' not in page  # no claim has it
    found_all = annotate(_doc([c for c in CLAIMS if c["id"] != "GONE"]), "S", TEXT)
    assert "Quotes not found" not in found_all


def test_every_status_has_a_colour_rule():
    page = annotate(_doc(), "S", TEXT)
    assert set(COLOURS) == set(STATUSES)
    for s in STATUSES:
        fg, bg = COLOURS[s]
        assert f".{s} {{ --fg: {fg}; --bg: {bg}; }}" in page


def test_a_quote_across_a_line_break_is_found_on_the_page_as_in_its_fingerprint():
    """The page and the fingerprint agree: a hard-wrapped paragraph's quote is found across its
    line break, and a quote across a blank line (two paragraphs) is found by neither."""
    from claimcheck import fingerprint
    text = "Prima riga che finisce\ne la seconda riga.\n\nUn altro paragrafo.\n"
    doc = {"claims": [_claim("BR", "finisce e la seconda", "holds"), _claim("NO", "riga. Un altro", "holds")],
           "sources": [], "generated": "now", "commit": "c"}
    page = annotate(doc, "S", text)
    assert 'data-claim="BR"' in page and fingerprint.sentences_of(text, "finisce e la seconda")
    assert "Quotes not found in this text: NO" in page and fingerprint.sentences_of(text, "riga. Un altro") is None


def test_a_markdown_source_is_rendered_as_markdown_with_its_spans_kept():
    """A .md source's page shows headings, emphasis and tables rendered (markdown-it-py), not a
    literal "# Counting"; a quote inside a wrapped paragraph or a table cell keeps its mark."""
    text = ("# Counting the pairs\n\nA group of *twenty-three* people makes\n253 pairs, said **often**.\n\n"
            "| n | pairs |\n|---|---|\n| 23 | 253 |\n\nSome `code <b>` here.\n")
    claims = [_claim("P1", "people makes 253 pairs", "holds"), _claim("P2", "| 23 | 253 |", "fails")]
    doc = {"generated": "g", "commit": "c", "claims": claims,
           "sources": [{"id": "S", "title": "Birthday", "language": "en", "file": "text.md"}]}
    page = annotate(doc, "S", text)
    body = page.split('<div class="md" lang="en">', 1)[1]
    assert "<h1>Counting the pairs</h1>" in body and "# Counting" not in body
    assert "<em>twenty-three</em>" in body and "<strong>often</strong>" in body
    assert "<code>code &lt;b&gt;</code>" in body  # raw HTML in the source stays text
    assert re.search(r'<mark id="q-P1" class="holds" data-claim="P1"[^>]*>.*people makes\n253 pairs</mark>', body, re.S)
    assert "<table>" in body and 'data-claim="P2"' in body  # the row's quote: its mark wraps the cells' text
    assert "Quotes not found" not in page


def test_a_plain_text_source_is_shown_as_written():
    page = annotate(_doc(), "S", TEXT)
    assert '<div class="text" lang="it">' in page and "<h1>" not in page.split('<div class="text"', 1)[1]


@pytest.mark.parametrize("text, quote, kept", [
    ("| n | pairs |\n|---|---|\n| 10 | 45 |\n", "| 10 | 45 |", ["<td>", "45</mark></td>"]),
    ("# Counting pairs\n\nText.\n", "# Counting pairs", ["<h1><mark"]),
    ("- a bullet item\n- another\n", "- a bullet item", ["<li><mark"]),
    ("See [the book](http://x.org) now.\n", "See [the book]", ['<a href="http://x.org">']),
    ("It makes _at most_ 45.\n", "_at most_ 45", ["<em>"]),
])
def test_a_quote_at_markdown_syntax_leaves_the_syntax_as_it_was(text, quote, kept):
    doc = {"generated": "g", "commit": "c", "claims": [_claim("Q", quote, "holds")],
           "sources": [{"id": "S", "title": "T", "language": "en", "file": "t.md"}]}
    body = annotate(doc, "S", text).split('<div class="md" lang="en">', 1)[1]
    assert 'data-claim="Q"' in body and all(k in body for k in kept), body


def test_a_suggestion_waits_until_no_mark_is_open():
    """An erratum C whose quote ends inside another claim D's: its suggestion comes after D's
    mark ends, never between D's mark and its continuation."""
    from claimcheck.chapters import body_html
    text = "one two three four five six"
    c = {"id": "C-01", "status": "diverges", "quote": "one two three", "records": [], "expected": "",
         "correction_proposal": {"kind": "text", "proposed": "uno due tre", "missing": None}}
    d = {"id": "D-01", "status": "holds", "quote": "two three four five", "records": [], "expected": ""}
    page = body_html(text, [(0, 13, c, 0), (4, 23, d, 0)], False)
    assert page.index('class="suggestion"') > page.rindex("</mark>")
    assert page.count('<span class="suggestion"') == 1


@pytest.mark.parametrize("text, quote, markdown, after", [
    ("It is 9 and more. Next one.", "It is 9", False, "It is 9 and more."),
    ("at most 9\ncomparisons. Next.\n", "at most 9", True, "at most 9\ncomparisons."),  # a wrapped paragraph
    ("at most 9\ncomparisons. Next.\n", "at most 9", False, "at most 9"),  # a plain text's line
    ("| a | 9 |\n| b | 10 |\n", "9", True, "| a | 9 |"),                     # a table row: its line
    ("  perplexity   37.82\n  next\n", "37.82", False, "  perplexity   37.82"),
])
def test_a_suggestion_goes_after_its_sentence(text, quote, markdown, after):
    from claimcheck.chapters import _sentence_end
    b = text.index(quote) + len(quote)
    assert text[:_sentence_end(text, b, markdown)] == after
