"""Byte-level byte-pair encoding, GPT-2 style, written to be read (after minGPT's bpe.py).

The algorithm in four stages, each a function whose output can be inspected:

1. ``pretokenize``: split the text with GPT-2's regex into words, numbers, punctuation runs and
   whitespace. Merges never cross these boundaries, so " the" and "the" stay separate tokens and
   the vocabulary is not spent on fragments like "e t".
2. ``word_counts``: count the *unique* pre-tokens. Tiny Shakespeare has ~300,000 pre-tokens but
   only ~15,000 distinct ones; training works on the distinct ones, weighted by their counts.
3. ``train_bpe``: start from the 256 bytes and repeatedly merge the most frequent adjacent pair
   into a new symbol. Counting every pair again after each merge would cost the whole corpus
   per merge; instead pair counts are kept and updated only in the words that contain the pair.
4. ``BPE.encode``: apply the learned merges to each distinct pre-token once, lowest rank
   first (the order they were learned in), and reuse the result for every occurrence.
"""
import heapq
import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import cached_property

import regex

# GPT-2's pre-tokenisation pattern: contractions, letters, numbers, other symbols, whitespace.
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
_PAT = regex.compile(GPT2_PATTERN)


def pretokenize(text: str) -> list[str]:
    """Stage 1. The pieces concatenate back to the text exactly."""
    return _PAT.findall(text)


def word_counts(text: str) -> Counter:
    """Stage 2. Distinct pre-tokens as UTF-8 byte strings, with their counts."""
    return Counter(w.encode("utf-8") for w in pretokenize(text))


@dataclass(frozen=True)
class BPE:
    """A trained byte-level BPE: token i < 256 is byte i; token 256 + r is merge r."""

    merges: tuple[tuple[int, int], ...]
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def vocab_size(self) -> int:
        return 256 + len(self.merges)

    @cached_property
    def ranks(self) -> dict[tuple[int, int], int]:
        return {pair: r for r, pair in enumerate(self.merges)}

    @cached_property
    def vocab(self) -> list[bytes]:
        """Token id -> the bytes it stands for."""
        v = [bytes([i]) for i in range(256)]
        for a, b in self.merges:
            v.append(v[a] + v[b])
        return v

    def encode_word(self, word: bytes) -> list[int]:
        """Stage 4 for one pre-token: merge the lowest-ranked adjacent pair until none is known."""
        ids = list(word)
        while len(ids) > 1:
            rank, pair = min((self.ranks.get(p, 1 << 30), p) for p in zip(ids, ids[1:]))
            if rank == 1 << 30:
                break
            ids = _merge(ids, pair, 256 + rank)
        return ids

    def encode(self, text: str) -> list[int]:
        out = []
        for w in pretokenize(text):
            ids = self._cache.get(w)
            if ids is None:
                ids = self._cache[w] = self.encode_word(w.encode("utf-8"))
            out.extend(ids)
        return out

    def decode(self, ids) -> str:
        return b"".join(self.vocab[i] for i in ids).decode("utf-8", errors="replace")

    def to_json(self) -> str:
        return json.dumps({"merges": self.merges})

    @classmethod
    def from_json(cls, s: str) -> "BPE":
        return cls(tuple(tuple(p) for p in json.loads(s)["merges"]))


def _merge(ids: list[int], pair: tuple[int, int], new: int) -> list[int]:
    """Replace every non-overlapping occurrence of ``pair``, left to right."""
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def _pairs(ids):
    return zip(ids, ids[1:])


def train_bpe(text: str, vocab_size: int, trace=None) -> BPE:
    """Stage 3. ``trace(rank, pair, count)``, if given, sees every merge as it is made.

    Ties between equally frequent pairs go to the smallest pair (a, b): deterministic.
    """
    if vocab_size < 256:
        raise ValueError(f"a byte-level vocabulary has at least 256 tokens, got {vocab_size}")
    counts = word_counts(text)
    words = [list(w) for w in counts]
    freq = list(counts.values())
    pair_count: dict[tuple[int, int], int] = defaultdict(int)
    where: dict[tuple[int, int], set[int]] = defaultdict(set)  # pair -> words that contain it
    for i, w in enumerate(words):
        for p in _pairs(w):
            pair_count[p] += freq[i]
            where[p].add(i)
    heap = [(-c, p) for p, c in pair_count.items()]
    heapq.heapify(heap)
    merges = []
    while len(merges) < vocab_size - 256 and heap:
        negc, pair = heapq.heappop(heap)
        if pair_count.get(pair, 0) != -negc or negc == 0:
            continue  # a stale entry: the count changed since it was pushed
        new = 256 + len(merges)
        merges.append(pair)
        if trace:
            trace(len(merges) - 1, pair, -negc)
        touched = set()
        for i in list(where[pair]):
            old, f = words[i], freq[i]
            for p in _pairs(old):  # take the word's pairs out ...
                pair_count[p] -= f
                touched.add(p)
            words[i] = _merge(old, pair, new)
            for p in _pairs(words[i]):  # ... and put the merged word's pairs back in
                pair_count[p] += f
                where[p].add(i)
                touched.add(p)
        del pair_count[pair], where[pair]
        touched.discard(pair)
        for p in touched:
            if pair_count[p] > 0:
                heapq.heappush(heap, (-pair_count[p], p))
    return BPE(tuple(merges))
