"""chapters/<source>.html: a source's own text with every quoted span highlighted in its claim's
verdict colour. A span links to the claim's row in index.html (the row links back to
``#q-<ID>``), and its hover gives the verdict, the document's value and ours."""
import html
import re

from markupsafe import Markup

from .fingerprint import is_markdown, places
from .fmt import fmt
from .html import templates
from . import tex
from .registry import QUOTE_JOIN
from .verdict import STATUSES, headline_value

COLOURS = {"holds": ("#1a7f37", "#dafbe1"), "fails": ("#cf222e", "#ffebe9"), "diverges": ("#9a6700", "#fff8c5"),
           "undecided": ("#0a6c74", "#d8f5f7"),
           "suspect": ("#8250df", "#fbefff"), "not-measured": ("#6e7781", "#f6f8fa"), "not-run": ("#59636e", "#eaeef2"),
           "untested": ("#818b98", "#f6f8fa"), "descriptive": ("#0969da", "#ddf4ff")}


def spans(text: str, claims: list[dict]) -> list[tuple[int, int, dict, int]]:
    """(start, end, claim, part) of every quoted passage found in ``text``, at its first place,
    found as the fingerprints find it (``fingerprint.places``: within a line, else across a
    hard-wrapped paragraph's line breaks). A passage that runs from one table row or list item
    into the next is left out: a mark across cells or items would break the page (``claimcheck
    check`` refuses such a quote)."""
    out = []
    for c in claims:
        for i, part in enumerate(c["quote"].split(QUOTE_JOIN)):
            found = places(text, part)
            if found and not found[0].crosses:
                out.append((found[0].start, found[0].end, c, i))
    return out


def _open(c: dict, part: int, cont: bool) -> str:
    doc_v, ours, _ = headline_value(c)
    said = fmt(doc_v) if doc_v != "" else "—"  # a claim whose document states no value
    hover = f"{c['id']}: {c.get('headline') or c['status']} · document: {said} · ours: {fmt(ours, doc_v)}"
    anchor = "" if cont or part else f' id="q-{html.escape(c["id"])}"'
    tag = "" if cont else f'<a class="tag" href="../index.html#{html.escape(c["id"])}">{html.escape(c["id"])}</a>'
    return (f'<mark{anchor} class="{c["status"]}{" cont" if cont else ""}" data-claim="{html.escape(c["id"])}" '
            f'data-status="{c["status"]}" title="{html.escape(hover)}">{tag}')


# Each mark's opening and its end travel through escaping or Markdown rendering as one private-use
# character each, and become HTML afterwards: a span keeps its place whatever the renderer does
# around it (a quote lies within one line or one paragraph, so within one block).
_OPEN, _CLOSE = 0xE000, 0xF8FF


def suggestion(c: dict) -> str:
    """An erratum's proposed correction under its sentence, like a review comment; or what is
    missing before one can be proposed. "" for a claim that is not an erratum."""
    p = c.get("correction_proposal")
    if not p:
        return ""
    if p.get("proposed"):
        body = (f'<span class="label">{html.escape(c["id"])} · suggested correction ({html.escape(p["kind"])})</span> '
                f'<span class="proposed">{tex.to_html(p["proposed"])}</span>')
    else:
        body = (f'<span class="label">{html.escape(c["id"])} · no correction yet ({html.escape(p["kind"])})</span> '
                f'<span class="missing">{html.escape(p.get("missing") or "")}</span>')
    return f'<span class="suggestion" data-claim="{html.escape(c["id"])}">{body}</span>'


def _emit(text: str, lo: int, hi: int, todo: list, tags: list) -> str:
    """text[lo:hi] with the spans in ``todo`` (all inside it) as nested marks, each written as a
    placeholder character (its opening tag appended to ``tags``); a span that crosses another's
    end is cut there and goes on as a continuation."""
    out, pos = [], lo
    todo = sorted(todo, key=lambda s: (s[0], -s[1]))
    while todo:
        (a, b, c, part, cont), rest = todo[0], todo[1:]
        inside, after = [], []
        for s in rest:
            if s[0] >= b:
                after.append(s)
            elif s[1] <= b:
                inside.append(s)
            else:
                inside.append((s[0], b, s[2], s[3], s[4]))
                after.append((b, s[1], s[2], s[3], True))
        tags.append(_open(c, part, cont))
        out += [text[pos:a], chr(_OPEN + len(tags) - 1), _emit(text, a, b, inside, tags), chr(_CLOSE)]
        pos = b
        todo = sorted(after, key=lambda s: (s[0], -s[1]))
    out.append(text[pos:hi])
    return "".join(out)


_SENTENCE_END = re.compile(r"[.!?…](?=[\s\"”»)]|$)")


def _sentence_end(text: str, b: int, markdown: bool) -> int:
    """Where the sentence that a quote ending at ``b`` sits in ends: its full stop, else the end
    of its line (a table row, a program's line, a heading) or, in a Markdown paragraph however
    it is wrapped, the end of the paragraph."""
    line_end = text.find("\n", b) % (len(text) + 1) if "\n" in text[b:] else len(text)
    line_start = text.rfind("\n", 0, b) + 1
    block = markdown and not re.match(r"\s*(?:[|#]|```|~~~)", text[line_start:])
    end = (text.find("\n\n", b) % (len(text) + 1) if "\n\n" in text[b:] else len(text)) if block else line_end
    m = _SENTENCE_END.search(text, b, end)
    return m.end() if m else end


def _place_notes(marked: str, notes: list[tuple[int, str]], tags: list) -> str:
    """Each (position in the text, HTML) note written into ``marked`` (the text with its marks'
    placeholders) at that position, or after it where a mark is still open there, so a note never
    sits inside a mark or between a mark and its continuation."""
    notes = sorted(notes, key=lambda n: n[0])
    out, pos, depth, i = [], 0, 0, 0
    for ch in marked:
        while i < len(notes) and depth == 0 and pos >= notes[i][0]:
            tags.append(notes[i][1])
            out.append(chr(_OPEN + len(tags) - 1))
            i += 1
        out.append(ch)
        code = ord(ch)
        if _OPEN <= code < _OPEN + len(tags) and tags[code - _OPEN].startswith("<mark"):
            depth += 1
        elif code == _CLOSE:
            depth -= 1
        elif not _OPEN <= code <= _CLOSE:
            pos += 1
    for _, note in notes[i:]:
        tags.append(note)
        out.append(chr(_OPEN + len(tags) - 1))
    return "".join(out)


def _clean(text: str) -> str:
    """The text without characters of the placeholders' range (none in a real chapter)."""
    return "".join(ch for ch in text if not _OPEN <= ord(ch) <= _CLOSE)


def _inside_markup(text: str, a: int, b: int) -> tuple[int, int]:
    """A span moved off the Markdown syntax at its edges (a heading's #, a table's pipes, a list's
    bullet, emphasis and link brackets), so its placeholders leave the syntax as it was."""
    line_start = lambda i: i == 0 or text[i - 1] == "\n"  # noqa: E731
    while a < b:
        m = re.match(r"(?:#{1,6}|[-+*>]|\d+[.)])[ \t]", text[a:b]) if line_start(a) else None
        if m:
            a += m.end()
        elif text[a] in " \t|*_`[":
            a += 1
        else:
            break
    while b > a and text[b - 1] in " \t|*_`]":
        b -= 1
    return a, b


def body_html(text: str, spans_: list, markdown: bool) -> str:
    """The text as HTML with its spans marked: escaped and shown as written, or, for a Markdown
    source, rendered by markdown-it-py (CommonMark with tables)."""
    if markdown:
        spans_ = [(*_inside_markup(text, a, b), c, i) for a, b, c, i in spans_]
    tags: list[str] = []
    last = {}  # each erratum's last passage: its suggestion goes after that sentence
    for a, b, c, i in spans_:
        if suggestion(c) and b >= last.get(c["id"], (-1, None))[0]:
            last[c["id"]] = (b, c)
    marked = _emit(text, 0, len(text), [(a, b, c, i, False) for a, b, c, i in spans_], tags)
    notes = [(_sentence_end(text, b, markdown), suggestion(c)) for b, c in last.values()]
    marked = _math(_place_notes(marked, notes, tags), tags)
    if markdown:
        from markdown_it import MarkdownIt
        rendered = MarkdownIt("commonmark", {"html": False}).enable("table").render(marked)
    else:
        rendered = _code_lines(html.escape(marked), tags)
    return "".join(tags[ord(ch) - _OPEN] if _OPEN <= ord(ch) < _OPEN + len(tags) else
                   "</mark>" if ord(ch) == _CLOSE else ch for ch in rendered)


def _math(marked: str, tags: list) -> str:
    """Each inline formula ($...$) that no mark's edge cuts, as a placeholder for its MathML."""
    out, pos = [], 0
    for m in tex.formulas(marked):
        if any(_OPEN <= ord(ch) <= _CLOSE for ch in m.group(0)) or (ml := tex.mathml(m.group(1))) is None:
            continue
        tags.append(f'<span class="tex" title="{html.escape(m.group(0))}">{ml}</span>')
        out += [marked[pos:m.start()], chr(_OPEN + len(tags) - 1)]
        pos = m.end()
    return "".join(out) + marked[pos:]


def _code_lines(escaped: str, tags: list) -> str:
    """A plain text's indented lines (a program and its output) as code, each line whose marks
    open and close within it (so the HTML stays nested)."""
    def balanced(line):
        depth = 0
        for ch in line:
            if _OPEN <= ord(ch) < _OPEN + len(tags) and tags[ord(ch) - _OPEN].startswith("<mark"):
                depth += 1
            elif ord(ch) == _CLOSE:
                depth -= 1
                if depth < 0:
                    return False
        return depth == 0
    return "".join(f'<code class="line">{line[:-1] if line.endswith(chr(10)) else line}</code>'
                   + ("\n" if line.endswith("\n") else "") if tex.is_code_line(line) and balanced(line) else line
                   for line in escaped.splitlines(keepends=True))


def _quotes(claims: list[dict], cid: str) -> list[str]:
    return next(c["quote"].split(QUOTE_JOIN) for c in claims if c["id"] == cid)


def annotate(doc: dict, source_id: str, text: str) -> str:
    source = next((s for s in doc.get("sources", []) if s["id"] == source_id), {"title": source_id, "language": ""})
    claims = [c for c in doc["claims"] if c["source"] == source_id]
    text = _clean(text)
    found = spans(text, claims)
    missing = sorted({c["id"] for c in claims} - {s[2]["id"] for s in found})
    counts = {s: sum(c["status"] == s for c in claims) for s in STATUSES}
    across = [cid for cid in missing if any(p and p[0].crosses for p in (places(text, q) for q in
                                                                          _quotes(claims, cid)))]
    missing = [cid for cid in missing if cid not in across]
    markdown = is_markdown(source.get("file") or "")
    return templates.get_template("chapter.html.j2").render(
        title=source["title"], colours=COLOURS, counts=counts, generated=str(doc.get("generated")),
        commit=str(doc.get("commit")), missing=missing, across=across, markdown=markdown,
        language=source.get("language") or "", body=Markup(body_html(text, found, markdown)))
