"""A changed sentence is flagged: each claim's quote is fingerprinted by the sentence(s) it sits
in, read within its unit (a table row, a list item, or a paragraph however it is wrapped), and a
claim whose sentence no longer reads as stamped is *suspect*: editing one list item leaves the
other items' claims as they were.

The stamps live beside the registry (``claims.toml`` -> ``claims.stamps.json``): claim ID ->
the sentence(s) and their sha256. ``claimcheck stamp`` rewrites them after a review, as
Doorstop's ``clear`` does. A quote no longer found in its source is suspect whether or not it
was ever stamped (and ``claimcheck check`` makes it an error before a run).
"""
import difflib
import hashlib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .registry import QUOTE_JOIN

# a sentence ends at . ! ? or … followed by white space (1.115.394 and 2,43 are not ends)
_END = re.compile(r"(?<=[.!?…])\s+")


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


# what may stand between two words of a quote: white space within a line, or, when no line holds
# the quote, within a paragraph (a hard-wrapped one: single line breaks, no blank line)
_IN_LINE = r"[^\S\n]+"
_IN_PARAGRAPH = r"(?:[^\S\n]+\n?|\n)[^\S\n]*"
_BLANK = re.compile(r"\n[^\S\n]*\n")


@dataclass(frozen=True)
class Place:
    """Where a quote sits: ``start``/``end`` in the text, the 1-based ``line`` it starts on, and the
    whole sentence(s) it overlaps, white space collapsed. ``crosses``: "table rows" or "list items"
    where the quote runs from one row or item into the next (``claimcheck check`` refuses it), else
    None."""
    start: int
    end: int
    line: int
    sentence: str
    crosses: str | None = None


# a list item's first line: its bullet or number, then white space (or nothing: an empty item)
_ITEM = re.compile(r"[^\S\n]{0,3}(?:[-+*]|(?P<n>\d{1,9})[.)])(?:[^\S\n]+|$)", re.M)
_ROW = re.compile(r"[^\S\n]*\|")  # a table row: a line that starts with a pipe


def _sentences(text: str, lo: int, hi: int, a: int, b: int) -> str:
    """The sentences of text[lo:hi] (a line or a paragraph) that overlap text[a:b]."""
    unit, spans, start = text[lo:hi], [], 0
    for m in _END.finditer(unit):
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(unit)))
    return _norm(" ".join(unit[x:y] for x, y in spans if x < b - lo and y > a - lo))


@lru_cache(maxsize=16)  # each quote of a text reads the same lines
def _lines(text: str, markdown: bool) -> tuple[tuple[int, int, str], ...]:
    """(start, end, kind) of each line: ``blank``; ``own``, a unit of its own (a table row, and in
    Markdown a heading or a line of a fenced code block); ``item``, a list item's first line (a
    bullet, or a number where a list may start or goes on: after a blank line, within a list, or
    1, as CommonMark reads it, so a wrapped line that starts with "2023." stays prose); ``prose``,
    any other (a paragraph's, or a list item's continuation)."""
    spans, pos, fenced, prev = [], 0, False, "blank"
    for line in text.splitlines(keepends=True):
        bare = line.strip()
        fence = markdown and bare.startswith(("```", "~~~"))
        item = _ITEM.match(line)
        if not bare:
            kind = "blank"
        elif fence or fenced or _ROW.match(line) or (markdown and bare.startswith("#")):
            kind = "own"
        elif item and (not item["n"] or prev in ("blank", "own", "item", "list") or int(item["n"]) == 1):
            kind = "item"
        else:
            kind = "prose"
        fenced = fenced != fence
        spans.append((pos, pos + len(line.rstrip("\r\n")), kind))
        prev = "list" if kind == "prose" and prev in ("item", "list") else kind
        pos += len(line)
    return tuple(spans)


def _unit(text: str, a: int, markdown: bool) -> tuple[int, int]:
    """(lo, hi): the block around offset ``a`` whose sentences a quote there belongs to: a table
    row, and in Markdown a heading or a line of a fenced code block, on its own; a list item from
    its first line (its bullet included) to its last, however it is wrapped; else the paragraph,
    its prose lines joined however they are wrapped."""
    spans = _lines(text, markdown)
    if not spans:
        return 0, len(text)
    at = next((i for i, (lo, hi, _) in enumerate(spans) if lo <= a <= hi), len(spans) - 1)
    if spans[at][2] in ("own", "blank"):
        return spans[at][0], spans[at][1]
    first = last = at
    while spans[first][2] == "prose" and first > 0 and spans[first - 1][2] in ("prose", "item"):
        first -= 1
    while last + 1 < len(spans) and spans[last + 1][2] == "prose":
        last += 1
    return spans[first][0], spans[last][1]  # an item's bullet kept: its stamp reads as it did in its list


def _crosses(text: str, a: int, b: int, markdown: bool) -> str | None:
    """Whether text[a:b] runs from one table row, or one list item, into the next: "table rows",
    "list items", or None (one line, or a paragraph's or an item's own line breaks)."""
    if "\n" not in text[a:b]:
        return None
    touched = [(lo, kind) for lo, hi, kind in _lines(text, markdown) if hi >= a and lo < b]
    if any(_ROW.match(text, lo) for lo, _ in touched):
        return "table rows"
    if any(kind == "item" for _, kind in touched[1:]):
        return "list items"
    return None


def places(text: str, quote: str, markdown: bool = False) -> list[Place]:
    """Every place the quote is found. Spaces may differ from the text's. A quote is looked for
    within single lines first (prose one paragraph per line; a table row or a line of program
    output is a unit of its own); when no line holds it, within paragraphs, so a hard-wrapped
    paragraph's quote is found across its line breaks. Its sentence is read from its unit
    (``_unit``): a table row, a list item, or the paragraph, however it is wrapped; in a plain text
    whose quote lies within one line, from that line. A place that runs from one table row or list
    item into the next says so (``crosses``)."""
    words = quote.split()
    if not words:
        return []
    for sep, wrapped in ((_IN_LINE, False), (_IN_PARAGRAPH, True)):
        found = []
        for m in re.finditer(sep.join(map(re.escape, words)), text):
            a, b = m.span()
            if markdown or wrapped:
                lo, hi = _unit(text, a, markdown)
                hi = max(hi, b)
            else:
                lo, hi = text.rfind("\n", 0, a) + 1, text.find("\n", b)
                hi = len(text) if hi < 0 else hi
            found.append(Place(a, b, text.count("\n", 0, a) + 1, _sentences(text, lo, hi, a, b),
                               _crosses(text, a, b, markdown) if wrapped else None))
        if found:
            return found
    return []


def nearest(text: str, quote: str) -> tuple[int, str] | None:
    """(line, passage): the passage of the text most like a quote that is not in it, as many
    words long, for a message that says what the text reads instead."""
    words = quote.split()
    best, where = 0.0, None
    for n, line in enumerate(text.splitlines(), 1):
        have = line.split()
        for i in range(max(1, len(have) - len(words) + 1)):
            cand = " ".join(have[i:i + len(words)])
            sm = difflib.SequenceMatcher(None, " ".join(words), cand, autojunk=False)
            if sm.real_quick_ratio() > best and sm.quick_ratio() > best and sm.ratio() > best:
                best, where = sm.ratio(), (n, cand)
    return where if best >= 0.5 else None


def sentences_of(text: str, quote: str, markdown: bool = False) -> str | None:
    """The whole sentence(s) of ``text`` that the quote overlaps at its first place, white space
    collapsed; None when the quote is not in the text."""
    found = places(text, quote, markdown)
    return found[0].sentence if found else None


def is_markdown(file: str) -> bool:
    """Whether a source is Markdown, by its file name."""
    return str(file).lower().endswith((".md", ".markdown"))


def stamp_of(claim, text: str, markdown: bool = False) -> dict:
    """``{sentence, fingerprint}`` for one claim; sentence None when a quote is not found."""
    parts = [sentences_of(text, q, markdown) for q in claim.quotes]
    if any(p is None for p in parts):
        return {"sentence": None, "fingerprint": None}
    sentence = QUOTE_JOIN.join(dict.fromkeys(parts))
    return {"sentence": sentence, "fingerprint": hashlib.sha256(sentence.encode("utf-8")).hexdigest()[:16]}


def stamps_path(registry) -> Path:
    return registry.path.with_name(registry.path.stem + ".stamps.json")


def stamp(registry, texts: dict[str, str]) -> dict:
    """Every claim's stamp, now. A claim whose quote is not found cannot be stamped: it is left
    out, and stays suspect until its quote is fixed."""
    out = {}
    for c in registry.values():
        s = stamp_of(c, texts[c.source], is_markdown(registry.sources[c.source].file))
        if s["fingerprint"]:
            out[c.id] = s
    return out


def load_stamps(path: Path) -> dict | None:
    """The stamps file, or None when there is none yet."""
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{path} is not valid JSON ({e}); restore it or run `claimcheck stamp`") from None
    return data.get("claims", {})


def save_stamps(path: Path, stamps: dict) -> None:
    path.write_text(json.dumps({"about": "the sentence each claim quotes, as last reviewed; "
                                         "`claimcheck stamp` rewrites this file",
                                "claims": stamps}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def check(registry, texts: dict[str, str], stamps: dict | None) -> dict[str, dict]:
    """claim ID -> ``{why, old, new}`` for every suspect claim: its quote is not found, or the
    sentence it sits in is not the one stamped. Claims never stamped are not suspect."""
    out = {}
    for c in registry.values():
        now = stamp_of(c, texts[c.source], is_markdown(registry.sources[c.source].file))
        old = (stamps or {}).get(c.id)
        if now["sentence"] is None:
            out[c.id] = {"why": "quote not found in the source",
                         "old": old and old["sentence"], "new": None}
        elif old and old["fingerprint"] != now["fingerprint"]:
            out[c.id] = {"why": "the sentence changed since it was stamped", "old": old["sentence"],
                         "new": now["sentence"]}
    return out
