"""Attention: the uniform causal mean, and the learned heads that replace its weights.

Score, mask, normalise, mix. Everything else is a projection.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from .mask import averaging_matrix, causal_mask
from .positional import NoPosition


def attend(q, k, v, *, causal=True, scale=True, bias=None, probe=None, dropout=None):
    """softmax(q k^T / sqrt(d_k) + bias + M) v for (..., T, hs) tensors.

    ``probe(scores, weights)``, when given, sees the scores (after scaling and bias,
    before the mask) and the weights: the attention maps and the sqrt(d_k) statistics
    are read from here, never recomputed.
    """
    T, hs = q.shape[-2], q.shape[-1]
    s = q @ k.transpose(-2, -1)  # (..., T, T)
    if scale:
        s = s / math.sqrt(hs)
    if bias is not None:
        s = s + bias
    seen = s if probe is not None else None  # keep the unmasked scores only when someone reads them
    if causal:
        s = s.masked_fill(~causal_mask(T, q.device), float("-inf"))  # rebinding frees the unmasked copy
    w = F.softmax(s, dim=-1)
    del s  # at most two n x n tensors live at once: the scores, then the weights
    if probe is not None:
        probe(seen, w)
    if dropout is not None:
        w = dropout(w)  # dropout site 1: the attention weights, after the softmax
    return w @ v  # (..., T, hs)


class UniformMean(nn.Module):
    """The causal mean of the prefix: attention whose every allowed score is equal."""

    def forward(self, x):  # (B, T, d)
        return averaging_matrix(x.shape[1], x.dtype, x.device) @ x


class MultiHeadAttention(nn.Module):
    """h heads of width d_head over one fused q, k, v projection, then an optional W_o.

    With ``w_o=False`` the concatenated heads are the output, so their total width must be
    d_model (the chapter's "one head" rungs). Invalid combinations fail here.
    """

    def __init__(self, d_model, n_head, d_head=None, *, qkv_bias=False, w_o=True, o_bias=True,
                 scale=True, causal=True, positional=None, dropout=0.0):
        super().__init__()
        d_head = d_head if d_head is not None else d_model // n_head
        if d_head < 1 or (d_head * n_head != d_model and not w_o):
            raise ValueError(f"{n_head} heads of width {d_head} give {n_head * d_head}, not "
                             f"d_model={d_model}; add an output projection (w_o=True)")
        self.n_head, self.d_head, self.scale, self.causal = n_head, d_head, scale, causal
        self.qkv = nn.Linear(d_model, 3 * n_head * d_head, bias=qkv_bias)
        self.proj = nn.Linear(n_head * d_head, d_model, bias=o_bias) if w_o else nn.Identity()
        self.positional = positional if positional is not None else NoPosition()
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        self.probe = None  # set by model.attention_maps.capture_attention

    def forward(self, x):
        B, T, _ = x.shape
        q, k, v = self.qkv(x).split(self.n_head * self.d_head, dim=2)  # 3 x (B, T, nh*hs)
        q, k, v = (t.view(B, T, self.n_head, self.d_head).transpose(1, 2) for t in (q, k, v))  # (B, nh, T, hs)
        q, k = self.positional.rotate(q, k)                             # RoPE site
        bias = self.positional.bias(T, x.device, x.dtype)               # ALiBi site, (nh, T, T)
        y = attend(q, k, v, causal=self.causal, scale=self.scale, bias=bias,
                   probe=self.probe, dropout=self.attn_dropout)         # (B, nh, T, hs)
        y = y.transpose(1, 2).reshape(B, T, self.n_head * self.d_head)  # (B, T, nh*hs)
        return self.resid_dropout(self.proj(y))                         # dropout site 2


class LearnedMixing(nn.Module):
    """A free T x T score matrix: weights that are parameters, identical for every input.

    It can say "look four tokens back", never "look at the noun this pronoun refers to".
    """

    def __init__(self, block_size):
        super().__init__()
        self.scores = nn.Parameter(torch.zeros(block_size, block_size))

    def weights(self, T):
        s = self.scores[:T, :T].masked_fill(~causal_mask(T, self.scores.device), float("-inf"))
        return F.softmax(s, dim=-1)  # (T, T), no input anywhere

    def forward(self, x):  # (B, T, d)
        return self.weights(x.shape[1]) @ x


def tiled_attention(q, k, v, *, causal=True, scale=True, tile=128, probe=None):
    """The same result as ``attend``, computed a tile of keys at a time (FlashAttention's idea).

    For each tile of queries, a running maximum ``m``, a running normaliser ``l`` and a running
    weighted sum ``acc`` are rescaled whenever a new key tile raises the maximum (the "online
    softmax"). No more than one (tile x tile) block of scores exists at any moment: memory is
    linear in n. ``probe(scores_block)`` sees every block, for the claims that count them.
    """
    T, hs, Tk = q.shape[-2], q.shape[-1], k.shape[-2]
    if causal and Tk != T:
        raise ValueError(f"causal attention needs as many keys as queries, got {Tk} keys for {T} queries")
    s_scale = 1 / math.sqrt(hs) if scale else 1.0
    out = torch.empty_like(q)
    for i0 in range(0, T, tile):
        qi = q[..., i0:i0 + tile, :]                                   # (..., tq, hs)
        m = torch.full(qi.shape[:-1], float("-inf"), dtype=q.dtype, device=q.device)  # (..., tq)
        l = torch.zeros_like(m)
        acc = torch.zeros_like(qi)
        for j0 in range(0, (i0 + qi.shape[-2]) if causal else Tk, tile):
            s = (qi @ k[..., j0:j0 + tile, :].transpose(-2, -1)) * s_scale  # (..., tq, tk)
            if causal and j0 + s.shape[-1] > i0:  # the block crosses the diagonal
                rows = torch.arange(i0, i0 + s.shape[-2], device=q.device)[:, None]
                cols = torch.arange(j0, j0 + s.shape[-1], device=q.device)[None, :]
                s = s.masked_fill(cols > rows, float("-inf"))
            if probe is not None:
                probe(s)
            m_new = torch.maximum(m, s.amax(-1))
            p = torch.exp(s - m_new[..., None])
            correction = torch.exp(m - m_new)
            l = l * correction + p.sum(-1)
            acc = acc * correction[..., None] + p @ v[..., j0:j0 + tile, :]
            m = m_new
        out[..., i0:i0 + tile, :] = acc / l[..., None]
    return out
