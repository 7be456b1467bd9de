"""PL "Dlaczego to działa": the size of the tiny GPT, and Pythia's."""
import pytest
import torch

from model import GPT, tiny_lab_config
from model.params import breakdown, count

pytestmark = pytest.mark.fast

# The per-tensor breakdown of the canonical 4,626-weight model (catalogue C39). Other
# configurations also sum to 4,626, so the breakdown, not the total, pins the architecture.
BREAKDOWN = {
    "token embedding": 544, "position embedding": 256, "W_q, W_k, W_v, W_o (bias-free)": 1024,
    "MLP 16 -> 64 -> 16 with biases": 2128, "two LayerNorms": 64, "final LayerNorm": 32,
    "output layer with bias": 578,
}
GROUPS = {"token embedding": ("tok.",), "position embedding": ("pos.",),
          "W_q, W_k, W_v, W_o (bias-free)": ("blocks.0.mix.",), "MLP 16 -> 64 -> 16 with biases": ("blocks.0.ff.",),
          "two LayerNorms": ("blocks.0.ln_",), "final LayerNorm": ("ln_f.",), "output layer with bias": ("head.",)}


@pytest.mark.claim("TINY-19")
def test_the_tiny_gpt_has_4626_weights_in_the_canonical_breakdown(claim_record):
    m = GPT(tiny_lab_config())
    b = breakdown(m)
    got = {g: sum(n for k, n in b.items() if k.startswith(prefixes)) for g, prefixes in GROUPS.items()}
    assert sum(got.values()) == count(m)  # every tensor is in one group
    assert got == BREAKDOWN
    n = claim_record("TINY-19", count(m), expected=4626, tolerance="exact")
    assert n == 4626
    no_pe = claim_record("TINY-19", count(GPT(tiny_lab_config(positions="none"))), expected="4,370 (derived)",
                         tolerance="exact", label="without positional encoding")
    assert no_pe == 4626 - 256


@pytest.mark.claim("TINY-20")
def test_pythia_70m_is_about_fifteen_thousand_toys(claim_record):
    assert f"{70_000_000 / 4626:.0f}" == "15132"  # the lab's printed ratio
    tf = pytest.importorskip("transformers", reason="transformers is not installed "
                             "(pip install -e '.[hf]'); the Pythia size comes from its config class")
    cfg = tf.GPTNeoXConfig(  # EleutherAI/pythia-70m's architecture, as published in its config.json
        vocab_size=50304, hidden_size=512, num_hidden_layers=6, num_attention_heads=8,
        intermediate_size=2048, max_position_embeddings=2048, rotary_pct=0.25,
        tie_word_embeddings=False, use_parallel_residual=True)
    with torch.device("meta"):
        n = count(tf.GPTNeoXForCausalLM(cfg))
    ratio = claim_record("TINY-20", n / 4626, expected=15132, tolerance="≈15 thousand: in (14,000, 16,000)",
                         label=f"Pythia-70M ({n:,} parameters) / 4,626")
    assert 14_000 < ratio < 16_000
