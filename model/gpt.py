"""A GPT built from a frozen config, able to express every rung of the chapter's ladder.

    tokens -> embeddings -> positions -> [block] x n_layer -> (final LN) -> logits

``n_layer=0`` is the no-context model: token embedding straight into the output layer,
in effect a learned token bigram.
"""
import math
from dataclasses import dataclass, replace

import torch.nn as nn
import torch.nn.functional as F

from .attention import MultiHeadAttention, UniformMean
from .blocks import GELUS, MLP, NORMS, Block
from .positional import build_positional

MIXERS = ("mean", "attention")
INITS = ("torch", "normal", "gpt2")


@dataclass(frozen=True)
class GPTConfig:
    vocab_size: int = 1024
    block_size: int = 128           # the training window
    d_model: int = 128
    n_layer: int = 1
    mixer: str = "attention"        # "mean" (uniform causal average) or "attention"
    n_head: int = 4
    d_head: int | None = None       # default d_model // n_head
    w_o: bool = True                # output projection after the heads
    qkv_bias: bool = False          # the chapter's heads are bias-free; GPT-2's are not
    o_bias: bool = True
    scale_scores: bool = True       # divide the scores by sqrt(d_head)
    causal: bool = True
    residual: bool = True
    mlp: bool = True
    mlp_ratio: int = 4
    mlp_bias: bool = True
    gelu: str = "exact"             # the MLP's GELU: "exact" (erf) or "tanh" (GPT-2's approximation)
    norm: str = "pre"               # "none", "pre" or "post"
    ln_f: bool = True               # final LayerNorm before the output layer
    positions: str = "learned"      # "none", "learned", "sinusoidal", "rope", "alibi"
    n_positions: int | None = None  # learned table size; default block_size
    tie_weights: bool = False
    head_bias: bool = True
    dropout: float = 0.0
    # "torch": PyTorch's default inits (the chapter's code); "normal": N(0, 0.02) weights and zero
    # biases (the Polish lab); "gpt2": "normal" with the residual projections at 0.02/sqrt(2 n_layer)
    init: str = "torch"

    @property
    def head_width(self) -> int:
        return self.d_head if self.d_head is not None else self.d_model // self.n_head

    def validate(self) -> "GPTConfig":
        """Raise ValueError, with the reason, for a combination that means nothing."""
        checks = [
            (self.mixer in MIXERS, f"mixer must be one of {MIXERS}, got {self.mixer!r}"),
            (self.norm in NORMS, f"norm must be one of {NORMS}, got {self.norm!r}"),
            (self.init in INITS, f"init must be one of {INITS}, got {self.init!r}"),
            (self.gelu in GELUS, f"gelu must be one of {tuple(GELUS)}, got {self.gelu!r}"),
            (self.n_layer >= 0, f"n_layer must be >= 0, got {self.n_layer}"),
            (not (self.mixer == "mean" and self.positions in ("rope", "alibi")),
             f"{self.positions} acts on attention scores; the uniform mean has none"),
            (not (self.n_layer == 0 and self.positions in ("rope", "alibi")),
             f"{self.positions} needs at least one attention layer"),
            (0.0 <= self.dropout < 1.0, f"dropout must be in [0, 1), got {self.dropout}"),
        ]
        for ok, msg in checks:
            if not ok:
                raise ValueError(f"GPTConfig: {msg}")
        return self


class GPT(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        c = self.config = config.validate()
        self.tok = nn.Embedding(c.vocab_size, c.d_model)
        self.pos = build_positional(c.positions, d_model=c.d_model, d_head=c.head_width,
                                    n_head=c.n_head, n_positions=c.n_positions or c.block_size)
        self.drop = nn.Dropout(c.dropout)
        self.blocks = nn.ModuleList([self._block() for _ in range(c.n_layer)])
        self.ln_f = nn.LayerNorm(c.d_model) if c.ln_f else nn.Identity()
        self.head = nn.Linear(c.d_model, c.vocab_size, bias=c.head_bias)
        if c.init in ("normal", "gpt2"):
            for m in _post_order(self):  # nn.Module.apply's order (the lab's weights depend on it);
                _normal_init(m)          # not apply itself, which RoPE.apply shadows
        if c.init == "gpt2":
            # GPT-2 paper, 2.3: each of the 2 n_layer sub-layers adds its output to the residual
            # stream; scaling what writes into it keeps the stream's variance from growing with depth
            for m in self._residual_projections():
                nn.init.normal_(m.weight, 0.0, 0.02 / math.sqrt(2 * c.n_layer))
        if c.tie_weights:
            self.head.weight = self.tok.weight

    def _block(self):
        c = self.config
        if c.mixer == "mean":
            mix = UniformMean()
        else:
            mix = MultiHeadAttention(c.d_model, c.n_head, c.d_head, qkv_bias=c.qkv_bias, w_o=c.w_o,
                                     o_bias=c.o_bias, scale=c.scale_scores, causal=c.causal,
                                     positional=self.pos if c.positions in ("rope", "alibi") else None,
                                     dropout=c.dropout)  # only score-site schemes enter attention
        ff = MLP(c.d_model, c.mlp_ratio, c.mlp_bias, c.dropout, gelu=c.gelu) if c.mlp else None
        return Block(mix, ff, c.d_model, norm=c.norm, residual=c.residual)

    def _residual_projections(self):
        """The Linears whose output is added to the residual stream: W_o and the MLP's way back."""
        for block in self.blocks:
            for m in (getattr(block.mix, "proj", None), block.ff.proj if block.ff is not None else None):
                if isinstance(m, nn.Linear):  # w_o=False leaves an Identity; the mean has no proj
                    yield m

    def forward(self, idx, targets=None):
        """idx (B, T) -> logits (B, T, V); with targets also the mean cross-entropy."""
        x = self.drop(self.pos.embed(self.tok(idx)))  # (B, T, d); dropout site 3: the embedding sum
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))  # (B, T, V)
        if targets is None:
            return logits
        loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        return logits, loss


def _post_order(m):
    """Children before their parent, as nn.Module.apply visits them."""
    for child in m.children():
        yield from _post_order(child)
    yield m


def _normal_init(m):
    if isinstance(m, (nn.Linear, nn.Embedding)):
        nn.init.normal_(m.weight, 0.0, 0.02)
    if isinstance(m, nn.Linear) and m.bias is not None:
        nn.init.zeros_(m.bias)


# ---- a named configuration of the literature ------------------------------------------

def gpt2_small_config(**kw) -> GPTConfig:
    """GPT-2 small: d 768, 12 blocks, 12 heads, vocab 50,257, context 1,024, tied output.

    GPT-2's tanh GELU and initialisation too: its weights, copied in, give its logits.
    """
    return replace(GPTConfig(vocab_size=50257, block_size=1024, d_model=768, n_layer=12, n_head=12,
                             qkv_bias=True, o_bias=True, norm="pre", ln_f=True, positions="learned",
                             tie_weights=True, head_bias=False, gelu="tanh", init="gpt2"), **kw)
