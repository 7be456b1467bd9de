"""Numbers read off a distribution: perplexity, entropy, effective tokens, softmax gradients."""
import math

import torch
import torch.nn.functional as F


def perplexity(logits: torch.Tensor, targets: torch.Tensor) -> float:
    """exp(mean cross-entropy) over every position: how many equally likely choices."""
    return math.exp(F.cross_entropy(logits.flatten(0, -2), targets.flatten()).item())


def entropy(w: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """-sum w log w, with 0 log 0 = 0 (masked positions carry exactly 0)."""
    return -(w * torch.where(w > 0, w.log(), torch.zeros_like(w))).sum(dim)


def effective_tokens(w: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """exp(entropy): over how many positions a row really averages. Uniform n -> n, one-hot -> 1."""
    return entropy(w, dim).exp()


def softmax_trace(w: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Trace of the softmax Jacobian, sum w_i (1 - w_i) = 1 - sum w^2: 0 when saturated."""
    return 1 - (w * w).sum(dim)
