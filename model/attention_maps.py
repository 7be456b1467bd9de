"""Read what attention did: its scores and weights, per layer, without recomputing them."""
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from .attention import MultiHeadAttention
from .metrics import entropy


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


@torch.no_grad()
def attention_summary(model, idx) -> dict:
    """The first attention layer on a batch: how peaked is it? (the sqrt(d_k) claims)

    score_std: std of the scores as the softmax sees them (divided or not), every entry;
    entropy: mean row entropy in nats; saturated: fraction of rows with max weight > 0.99.
    """
    was_training = model.training
    model.eval()
    with capture_attention(model) as maps:
        model(idx)
    model.train(was_training)
    s, w = maps[0].scores, maps[0].weights
    return {"score_std": s.std().item(), "entropy": entropy(w).mean().item(),
            "saturated": (w.max(-1).values > 0.99).double().mean().item()}
