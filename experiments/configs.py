"""The documents' model configurations: the Italian chapter's Shakespeare models and ablation
ladder, its one-head sqrt(d_k) models, and the Polish lab's tiny GPT. ``model/`` is a network
library with no document in it; what a chapter trains is named here.
"""
from dataclasses import replace

from model import GPTConfig


def shakespeare_config(**kw) -> GPTConfig:
    """S-IT: width 128, window 128, BPE vocab 1024; the full pre-norm block."""
    return replace(GPTConfig(vocab_size=1024, block_size=128, d_model=128), **kw)


def ladder(base: GPTConfig | None = None) -> dict[str, GPTConfig]:
    """The ablation ladder: each rung adds one piece to the rung above it."""
    base = base or shakespeare_config()
    rungs = {}
    # no-context carries the bare block's settings; with n_layer=0 they are unused
    c = rungs["no-context"] = replace(base, n_layer=0, positions="none", ln_f=False, mixer="mean",
                                      residual=False, mlp=False, norm="none", n_head=1, w_o=False)
    c = rungs["mean"] = replace(c, n_layer=1)
    c = rungs["mean+positions"] = replace(c, positions="learned")
    c = rungs["mean+residual"] = replace(c, residual=True)
    c = rungs["head-replacing"] = replace(c, mixer="attention", residual=False)
    c = rungs["head-added"] = replace(c, residual=True)
    c = rungs["4-heads"] = replace(c, n_head=4, w_o=True)
    c = rungs["+mlp"] = replace(c, mlp=True)
    c = rungs["+layernorm"] = replace(c, norm="pre", ln_f=True)
    c = rungs["2-blocks"] = replace(c, n_layer=2)
    return rungs


def tiny_lab_config(**kw) -> GPTConfig:
    """The Polish lab's tiny GPT: 34 symbols, window 16, d 16, one pre-norm block.

    Bias-free q, k, v and W_o; MLP 16 -> 64 -> 16 with biases; untied output with bias.
    The head count does not change the weight count; one head is the lab's simplest reading.
    """
    return replace(GPTConfig(vocab_size=34, block_size=16, d_model=16, n_layer=1, n_head=1,
                             qkv_bias=False, o_bias=False, norm="pre", ln_f=True,
                             positions="learned", tie_weights=False, head_bias=True,
                             init="normal"), **kw)


def sqrt_dk_config(d_head: int, scale: bool = True, **kw) -> GPTConfig:
    """S-SQ: one head of width d_head on d_model 128, no normalisation before the projections."""
    return replace(shakespeare_config(), n_layer=1, n_head=1, d_head=d_head, w_o=True,
                   scale_scores=scale, norm="none", ln_f=False, mlp=False, **kw)
