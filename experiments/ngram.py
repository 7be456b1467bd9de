"""Counting models: n-grams with add-k smoothing, the baselines a network has to beat.

p(w | context) = (c(context, w) + k) / (c(context) + k V)

Counts are kept sparse (sorted unique keys), so a token bigram over 1,024 symbols and a
character trigram over 34 cost the same few lines.
"""
import math

import numpy as np


class NGram:
    def __init__(self, n: int, vocab_size: int, k: float = 1.0):
        if n < 1 or k <= 0:
            raise ValueError(f"an n-gram needs n >= 1 and k > 0, got n={n}, k={k}")
        if vocab_size ** n >= 2**62:
            raise ValueError(f"{vocab_size}^{n} contexts do not fit in int64 keys")
        self.n, self.V, self.k = n, vocab_size, k

    def _keys(self, tokens):
        """(context key, full key) for every position that has n-1 tokens before it."""
        t = np.asarray(tokens, dtype=np.int64)
        win = np.lib.stride_tricks.sliding_window_view(t, self.n)  # (N-n+1, n)
        weights = self.V ** np.arange(self.n - 1, -1, -1, dtype=np.int64)
        full = win @ weights
        ctx = full // self.V  # drop the last token
        return ctx, full

    def fit(self, tokens) -> "NGram":
        ctx, full = self._keys(tokens)
        self._full, self._full_c = np.unique(full, return_counts=True)
        self._ctx, self._ctx_c = np.unique(ctx, return_counts=True)
        return self

    @staticmethod
    def _lookup(keys, counts, q):
        i = np.searchsorted(keys, q).clip(max=len(keys) - 1)
        return np.where(keys[i] == q, counts[i], 0)

    def logprob(self, tokens) -> np.ndarray:
        """log p of every token that has a full context."""
        ctx, full = self._keys(tokens)
        c_full = self._lookup(self._full, self._full_c, full)
        c_ctx = self._lookup(self._ctx, self._ctx_c, ctx)
        return np.log((c_full + self.k) / (c_ctx + self.k * self.V))

    def perplexity(self, tokens) -> float:
        return math.exp(-self.logprob(tokens).mean())
