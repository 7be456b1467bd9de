"""The Polish lab's text: Pan Tadeusz reduced to the lab's 34 symbols, cut into excerpts.

The lab's own text (a Polish Atlas) is not available, so Pan Tadeusz stands in. The lab's
alphabet is the 32 Polish letters, space and full stop, lowercase, so the poem is mapped:

- letters are lowercased; the few foreign ones are spelled the Polish way (``FOREIGN``):
  v -> w, x -> ks, q -> k, é -> e, à -> a, æ -> e;
- a sentence end (. ! ? …) becomes a full stop;
- everything else (newlines, commas, ; : dashes, quotes «», brackets, *, digits, /) is a
  word break and becomes a space;
- runs of spaces become one, a space before a full stop goes, runs of stops become one.

An excerpt is the lab's split of one contiguous stretch: 5,775 training characters, then
500 for validation and 500 for test. Several disjoint excerpts, spread evenly over the
poem, show how much a verdict depends on where the text was cut.
"""
import hashlib
import re
from dataclasses import dataclass

import numpy as np

from .data import load_text

POLISH_LETTERS = "aąbcćdeęfghijklłmnńoóprsśtuwyzźż"
ALPHABET = POLISH_LETTERS + " ."
FOREIGN = {"v": "w", "x": "ks", "q": "k", "é": "e", "à": "a", "æ": "e"}
SENTENCE_END = ".!?…"

TRAIN_CHARS, VAL_CHARS, TEST_CHARS = 5775, 500, 500
EXCERPT_CHARS = TRAIN_CHARS + VAL_CHARS + TEST_CHARS
BODY_START = "Księga pierwsza"  # the poem proper; the title page comes before it
FOOTER = "\n-----\n"            # the edition's CC BY-SA footer follows this line


def normalise(text: str) -> str:
    """Map any text onto the 34-symbol alphabet (rules in the module docstring)."""
    out = []
    for ch in text.lower():
        if ch in POLISH_LETTERS:
            out.append(ch)
        elif ch in FOREIGN:
            out.append(FOREIGN[ch])
        elif ch in SENTENCE_END:
            out.append(".")
        else:
            out.append(" ")
    s = re.sub(r" +", " ", "".join(out))
    s = re.sub(r" ?\.[ .]*", lambda m: ". " if m.group().endswith(" ") else ".", s)
    s = re.sub(r"\.+", ".", s)
    return s.strip()


def poem(text: str | None = None) -> str:
    """The normalised poem, title page and licence footer left out."""
    text = load_text("pan-tadeusz") if text is None else text
    start, end = text.find(BODY_START), text.rfind(FOOTER)
    if start < 0 or end < 0:
        raise ValueError("pan-tadeusz.txt does not look like the Wolne Lektury edition: "
                         f"{BODY_START!r} or the footer line is missing")
    return normalise(text[start:end])


def encode(s: str) -> np.ndarray:
    lookup = {c: i for i, c in enumerate(ALPHABET)}
    return np.array([lookup[c] for c in s], dtype=np.int64)


def decode(ids) -> str:
    return "".join(ALPHABET[i] for i in ids)


@dataclass(frozen=True)
class Excerpt:
    """One contiguous stretch of the poem, split as the lab splits its text."""

    index: int
    offset: int
    text: str

    @property
    def train(self) -> str:
        return self.text[:TRAIN_CHARS]

    @property
    def val(self) -> str:
        return self.text[TRAIN_CHARS:TRAIN_CHARS + VAL_CHARS]

    @property
    def test(self) -> str:
        return self.text[TRAIN_CHARS + VAL_CHARS:]

    def ids(self, part: str) -> np.ndarray:
        return encode(getattr(self, part))

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()


def excerpts(n: int = 5, text: str | None = None) -> list[Excerpt]:
    """n disjoint excerpts at evenly spaced offsets; excerpt 0 opens the poem (the main one)."""
    p = poem(text)
    stride = len(p) // n
    if stride < EXCERPT_CHARS:
        raise ValueError(f"{n} excerpts of {EXCERPT_CHARS} characters do not fit in {len(p)}")
    return [Excerpt(i, i * stride, p[i * stride: i * stride + EXCERPT_CHARS]) for i in range(n)]
