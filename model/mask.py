"""The causal mask, and the uniform averaging matrix it turns into.

The chapter's first identity: averaging a growing prefix is a loop, a matmul with a
lower-triangular row-stochastic matrix, and a softmax over a score matrix that is 0
where allowed and -inf where forbidden. Everything here is that one idea.
"""
import torch


def causal_mask(T: int, device=None) -> torch.Tensor:
    """(T, T) bool, True where position t may see position i (i <= t)."""
    return torch.tril(torch.ones(T, T, dtype=torch.bool, device=device))


def additive_mask(T: int, dtype=torch.float32, device=None) -> torch.Tensor:
    """(T, T) float: 0 on and below the diagonal, -inf above.

    -inf, not -1e9: it is the value the mask means, and softmax sends it to exactly 0.
    """
    m = torch.zeros(T, T, dtype=dtype, device=device)
    return m.masked_fill(~causal_mask(T, device), float("-inf"))


def averaging_matrix(T: int, dtype=torch.float32, device=None) -> torch.Tensor:
    """(T, T) causal mean: row t is 1/(t+1) on columns 0..t, 0 elsewhere."""
    A = causal_mask(T, device).to(dtype)
    return A / A.sum(1, keepdim=True)
