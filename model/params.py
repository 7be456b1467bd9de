"""Parameter arithmetic: the chapter's formulas, and the count of a built module.

The claim is that the formula *is* the model, so every formula here has a twin count of
real tensors, and the claims compare the two.
"""
from dataclasses import dataclass

import torch.nn as nn

from .gpt import GPTConfig


def count(module: nn.Module) -> int:
    """Trainable parameters, each tensor once (tied weights are not counted twice)."""
    return sum(p.numel() for p in module.parameters())  # parameters() already deduplicates


def breakdown(module: nn.Module) -> dict[str, int]:
    """Parameter count per named tensor, shared tensors under their first name."""
    return {name: p.numel() for name, p in module.named_parameters()}


# ---- the chapter's formulas (d = width) ------------------------------------------------

def attention_params(d, *, n_head=1, d_head=None, qkv_bias=True, w_o=True, o_bias=True) -> int:
    """W_q, W_k, W_v (+ W_o): 4d^2 + 4d with biases on all four, as GPT-2 has them."""
    inner = n_head * (d_head if d_head is not None else d // n_head)
    qkv = 3 * d * inner + (3 * inner if qkv_bias else 0)
    out = (inner * d + (d if o_bias else 0)) if w_o else 0
    return qkv + out


def mlp_params(d, ratio=4, bias=True) -> int:
    """d -> ratio*d -> d: 8d^2 + 5d at ratio 4 with biases."""
    return 2 * ratio * d * d + ((ratio * d + d) if bias else 0)


def layernorm_params(d) -> int:
    """gain and bias: 2d."""
    return 2 * d


def gpt2_block_params(d) -> int:
    """The chapter's closed form for one GPT-2 block: 12d^2 + 13d."""
    return 12 * d * d + 13 * d


@dataclass(frozen=True)
class Breakdown:
    token: int
    positions: int
    blocks: int
    ln_f: int
    head: int

    @property
    def total(self) -> int:
        return self.token + self.positions + self.blocks + self.ln_f + self.head


def config_params(c: GPTConfig) -> Breakdown:
    """The analytic count of a GPTConfig, term by term, without building anything."""
    d = c.d_model
    per_block = 0
    if c.mixer == "attention":
        per_block += attention_params(d, n_head=c.n_head, d_head=c.head_width, qkv_bias=c.qkv_bias,
                                      w_o=c.w_o, o_bias=c.o_bias)
    if c.mlp:
        per_block += mlp_params(d, c.mlp_ratio, c.mlp_bias)
    if c.norm != "none":
        per_block += layernorm_params(d) * (2 if c.mlp else 1)
    return Breakdown(
        token=c.vocab_size * d,
        positions=(c.n_positions or c.block_size) * d if c.positions == "learned" else 0,
        blocks=c.n_layer * per_block,
        ln_f=layernorm_params(d) if c.ln_f else 0,
        head=(0 if c.tie_weights else c.vocab_size * d) + (c.vocab_size if c.head_bias else 0),
    )


def gpt2_small_table(V=50257, n_ctx=1024, d=768, L=12) -> dict[str, int]:
    """The chapter's GPT-2 small table, row by row (weights tied)."""
    rows = {
        "token embeddings": V * d,
        "position embeddings": n_ctx * d,
        "one block": gpt2_block_params(d),
        "12 blocks": L * gpt2_block_params(d),
        "final LayerNorm": layernorm_params(d),
    }
    rows["total (weights tied)"] = (rows["token embeddings"] + rows["position embeddings"]
                                    + rows["12 blocks"] + rows["final LayerNorm"])
    return rows
