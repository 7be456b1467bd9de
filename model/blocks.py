"""The MLP and the block. Norm placement is a choice of which slots hold a LayerNorm.

    pre-norm  (GPT-2):  x = x + f(LN(x))       slots before each sub-layer
    post-norm (2017):   x = LN(x + f(x))       slots after each residual sum
"""
import torch.nn as nn

NORMS = ("none", "pre", "post")
GELUS = {"exact": "none", "tanh": "tanh"}  # our name -> nn.GELU's ``approximate``; GPT-2 used tanh


class MLP(nn.Module):
    """Per-position feed-forward: widen by ``ratio``, GELU, come back. Never mixes positions."""

    def __init__(self, d_model, ratio=4, bias=True, dropout=0.0, gelu="exact"):
        super().__init__()
        if gelu not in GELUS:
            raise ValueError(f"gelu must be one of {tuple(GELUS)}, got {gelu!r}")
        self.fc = nn.Linear(d_model, ratio * d_model, bias=bias)
        self.act = nn.GELU(approximate=GELUS[gelu])
        self.proj = nn.Linear(ratio * d_model, d_model, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):  # (B, T, d) -> (B, T, d)
        return self.dropout(self.proj(self.act(self.fc(x))))  # dropout site 2


def _slot(filled, d_model):
    return nn.LayerNorm(d_model) if filled else nn.Identity()


class Block(nn.Module):
    """One mixing sub-layer and an optional MLP, each with its residual and norm slots.

    ``residual=False`` makes a sub-layer *replace* its input (the ladder's "replacing" rungs).
    """

    def __init__(self, mix, ff, d_model, *, norm="pre", residual=True):
        super().__init__()
        if norm not in NORMS:
            raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
        if norm != "none" and not residual:
            raise ValueError(f"{norm}-norm is defined around a residual sum; "
                             "use residual=True or norm='none'")
        self.mix, self.ff, self.residual = mix, ff, residual
        self.ln_mix_in, self.ln_mix_out = _slot(norm == "pre", d_model), _slot(norm == "post", d_model)
        self.ln_ff_in = _slot(norm == "pre" and ff is not None, d_model)
        self.ln_ff_out = _slot(norm == "post" and ff is not None, d_model)

    def _join(self, x, y):
        return x + y if self.residual else y

    def forward(self, x):
        x = self.ln_mix_out(self._join(x, self.mix(self.ln_mix_in(x))))
        if self.ff is not None:
            x = self.ln_ff_out(self._join(x, self.ff(self.ln_ff_in(x))))
        return x
