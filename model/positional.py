"""Positional schemes, one small module each (after x-transformers).

Position can enter at one of three sites:
  * ``embed``  - added to the token embeddings (learned absolute, sinusoidal);
  * ``rotate`` - rotating q and k inside attention (RoPE);
  * ``bias``   - added to the attention logits (ALiBi).
``NoPosition`` is the null object: every site is the identity, so the model code never
branches on "is there a positional scheme".
"""
import torch
import torch.nn as nn


class NoPosition(nn.Module):
    """The null scheme: order enters only through the causal mask."""

    def embed(self, x):  # x: (B, T, d)
        return x

    def rotate(self, q, k):  # (B, nh, T, hs)
        return q, k

    def bias(self, T, device=None, dtype=None):  # -> (nh, T, T) or None
        return None


class LearnedPosition(NoPosition):
    """One trained vector per absolute position, added to the token. A finite table."""

    def __init__(self, n_positions: int, d_model: int):
        super().__init__()
        self.table = nn.Embedding(n_positions, d_model)

    def embed(self, x):
        T = x.shape[1]
        if T > self.table.num_embeddings:
            raise ValueError(f"learned positions: window {T} exceeds the table's "
                             f"{self.table.num_embeddings} rows; build with a larger n_positions")
        return x + self.table(torch.arange(T, device=x.device))  # (B, T, d)


def sinusoid_table(T: int, d: int, base: float = 10000.0, dtype=torch.float32, device=None):
    """PE(p, 2i) = sin(p * base^(-2i/d)), PE(p, 2i+1) = cos(...): computed, never learned."""
    pos = torch.arange(T, dtype=torch.float64, device=device)[:, None]
    freq = base ** (-torch.arange(0, d, 2, dtype=torch.float64, device=device) / d)  # geometric
    pe = torch.zeros(T, d, dtype=torch.float64, device=device)
    pe[:, 0::2] = torch.sin(pos * freq)
    pe[:, 1::2] = torch.cos(pos * freq[: d // 2])
    return pe.to(dtype)


class SinusoidalPosition(NoPosition):
    """The 2017 choice: defined at every position, with no parameters."""

    def __init__(self, d_model: int, base: float = 10000.0):
        super().__init__()
        if d_model % 2:
            raise ValueError(f"sinusoidal positions need an even width, got {d_model}")
        self.d_model, self.base = d_model, base

    def embed(self, x):
        return x + sinusoid_table(x.shape[1], self.d_model, self.base, x.dtype, x.device)


class RoPE(NoPosition):
    """Rotate each 2-D section of q and k by an angle proportional to the position.

    Rotating both sides of a dot product alike leaves it unchanged, so the score depends
    on t - i only: relative position for free, and no table that can run out.
    """

    def __init__(self, d_head: int, base: float = 10000.0):
        super().__init__()
        if d_head % 2:
            raise ValueError(f"RoPE needs an even head width, got {d_head}")
        self.d_head, self.base = d_head, base

    def angles(self, positions: torch.Tensor) -> torch.Tensor:
        """(T,) positions -> (T, d_head/2) angles theta_j * p."""
        theta = self.base ** (-torch.arange(0, self.d_head, 2, dtype=torch.float64,
                                            device=positions.device) / self.d_head)
        return positions.to(torch.float64)[:, None] * theta

    def apply(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """Rotate x (..., T, d_head) at the given positions."""
        a = self.angles(positions)
        cos, sin = a.cos().to(x.dtype), a.sin().to(x.dtype)  # (T, hs/2)
        x1, x2 = x[..., 0::2], x[..., 1::2]
        out = torch.empty_like(x)
        out[..., 0::2] = x1 * cos - x2 * sin
        out[..., 1::2] = x1 * sin + x2 * cos
        return out

    def rotate(self, q, k):
        pos = torch.arange(q.shape[-2], device=q.device)
        return self.apply(q, pos), self.apply(k, pos)


def alibi_slopes(n_head: int, device=None) -> torch.Tensor:
    """The original geometric slopes m_h = 2^(-8h/H), h = 1..H, made on ``device`` (in float64, then
    rounded: the same float32 numbers as Python's floats, for H = 1..32)."""
    h = torch.arange(1, n_head + 1, dtype=torch.float64, device=device)
    return (2.0 ** (-8.0 * h / n_head)).float()


class ALiBi(NoPosition):
    """A linear penalty on the score, -m_h * (t - i), with one slope per head."""

    def __init__(self, n_head: int):
        super().__init__()
        self.n_head = n_head  # the slopes are made where they are used: a stack's vmap leaves them unbatched

    def bias(self, T, device=None, dtype=None):
        t = torch.arange(T, device=device)
        dist = (t[:, None] - t[None, :]).clamp(min=0)  # (T, T); future entries are masked anyway
        slopes = alibi_slopes(self.n_head, device)  # float32, as the buffer they replace was made
        return -slopes.to(dtype or slopes.dtype)[:, None, None] * dist  # (nh, T, T), in the model's dtype


def build_positional(kind: str, *, d_model: int, d_head: int, n_head: int, n_positions: int):
    """The scheme named in a config. Unknown names fail here, at construction."""
    if kind == "none":
        return NoPosition()
    if kind == "learned":
        return LearnedPosition(n_positions, d_model)
    if kind == "sinusoidal":
        return SinusoidalPosition(d_model)
    if kind == "rope":
        return RoPE(d_head)
    if kind == "alibi":
        return ALiBi(n_head)
    raise ValueError(f"unknown positional scheme {kind!r}; "
                     "choose one of none, learned, sinusoidal, rope, alibi")


__all__ = ["NoPosition", "LearnedPosition", "SinusoidalPosition", "RoPE", "ALiBi",
           "sinusoid_table", "alibi_slopes", "build_positional"]
