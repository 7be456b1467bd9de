"""Read what attention did: its scores and weights, per layer, without recomputing them."""
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from .attention import MultiHeadAttention


@dataclass
class AttentionRecord:
    scores: torch.Tensor   # (B, nh, T, T), scaled and biased, before the mask
    weights: torch.Tensor  # (B, nh, T, T), after the softmax


@contextmanager
def capture_attention(model):
    """``with capture_attention(model) as maps: model(idx)`` -> one record per attention layer."""
    layers = [m for m in model.modules() if isinstance(m, MultiHeadAttention)]
    records: list[AttentionRecord] = []

    def probe(s, w):
        records.append(AttentionRecord(s.detach(), w.detach()))

    for m in layers:
        m.probe = probe
    try:
        yield records
    finally:
        for m in layers:
            m.probe = None
