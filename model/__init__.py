"""claimcheck's shared, device-agnostic model package.

Parts to whole: ``mask`` -> ``positional`` -> ``attention`` -> ``blocks`` -> ``gpt``;
``params`` counts them, ``attention_maps`` reads attention maps out of a forward pass.
"""
from .attention import LearnedMixing, MultiHeadAttention, UniformMean, attend
from .blocks import MLP, Block
from .gpt import GPT, GPTConfig, gpt2_small_config
from .attention_maps import capture_attention
from .mask import additive_mask, averaging_matrix, causal_mask

__all__ = ["GPT", "GPTConfig", "MLP", "Block", "MultiHeadAttention", "UniformMean", "LearnedMixing",
           "attend", "capture_attention", "causal_mask", "additive_mask", "averaging_matrix",
           "gpt2_small_config"]
