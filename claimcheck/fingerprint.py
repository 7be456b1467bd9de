"""A changed sentence is flagged: each claim's quote is fingerprinted by the sentence(s) it sits
in, and a claim whose sentence no longer reads as stamped is *suspect*.

The stamps live beside the registry (``claims.toml`` -> ``claims.stamps.json``): claim ID ->
the sentence(s) and their sha256. ``claimcheck stamp`` rewrites them after a review, as
Doorstop's ``clear`` does. A quote no longer found in its source is suspect whether or not it
was ever stamped.
"""
import functools
import hashlib
import json
import re
from pathlib import Path

from .registry import QUOTE_JOIN

# a sentence ends at . ! ? or … followed by white space (1.115.394 and 2,43 are not ends)
_END = re.compile(r"(?<=[.!?…])\s+")


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@functools.lru_cache(maxsize=8)
def _lines(text: str) -> tuple[str, ...]:
    """The text's lines, white space collapsed: once per text, not once per quote."""
    return tuple(_norm(line) for line in text.splitlines())


def sentences_of(text: str, quote: str) -> str | None:
    """The whole sentence(s) of ``text`` that the quote overlaps, white space collapsed; None when
    the quote is not in the text. A quote lies within one line: prose is one paragraph per line,
    and a line of a table or of program output is a unit of its own (a hard-wrapped paragraph
    has to be unwrapped first: its quotes read "quote not found")."""
    q = _norm(quote)
    for line in _lines(text):
        at = line.find(q)
        if at < 0:
            continue
        start = 0
        spans = []
        for m in _END.finditer(line):
            spans.append((start, m.start()))
            start = m.end()
        spans.append((start, len(line)))
        end = at + len(q)
        return " ".join(line[a:b] for a, b in spans if a < end and b > at)
    return None


def stamp_of(claim, text: str) -> dict:
    """``{sentence, fingerprint}`` for one claim; sentence None when a quote is not found."""
    parts = [sentences_of(text, q) for q in claim.quotes]
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
        s = stamp_of(c, texts[c.source])
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
        now = stamp_of(c, texts[c.source])
        old = (stamps or {}).get(c.id)
        if now["sentence"] is None:
            out[c.id] = {"why": "quote not found in the source (a quote lies within one line)",
                         "old": old and old["sentence"], "new": None}
        elif old and old["fingerprint"] != now["fingerprint"]:
            out[c.id] = {"why": "the sentence changed since it was stamped", "old": old["sentence"],
                         "new": now["sentence"]}
    return out
