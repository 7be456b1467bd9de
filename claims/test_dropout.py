"""IT 3.12 Dropout: three sites, and determinism when it is off."""
import pytest
import torch

from model import GPT, GPTConfig

pytestmark = pytest.mark.fast


@pytest.mark.claim("DROP-01")
def test_dropout_sits_on_the_weights_the_sublayer_outputs_and_the_embedding_sum(claim_record):
    torch.manual_seed(0)
    m = GPT(GPTConfig(vocab_size=50, block_size=8, d_model=16, n_layer=1, n_head=2, dropout=0.1))
    seen = {}

    def hook(name):
        def record(mod, inputs, output):
            seen[name] = tuple(inputs[0].shape)
        return record

    for name, mod in m.named_modules():
        if isinstance(mod, torch.nn.Dropout):
            mod.register_forward_hook(hook(name))
    m(torch.randint(0, 50, (3, 8)))
    claim_record("DROP-01", seen, tolerance="exact", label="Dropout modules and the shapes they are given")
    assert seen == {
        "drop": (3, 8, 16),                      # the token + position sum
        "blocks.0.mix.attn_dropout": (3, 2, 8, 8),  # the attention weights, after the softmax
        "blocks.0.mix.resid_dropout": (3, 8, 16),   # attention's output, before the residual add
        "blocks.0.ff.dropout": (3, 8, 16),          # the MLP's output, before the residual add
    }


@pytest.mark.claim("DROP-01")
def test_without_dropout_the_model_is_deterministic():
    torch.manual_seed(0)
    x = torch.randint(0, 50, (3, 8))
    m = GPT(GPTConfig(vocab_size=50, block_size=8, d_model=16, n_layer=1, n_head=2, dropout=0.1))
    assert torch.equal(m.eval()(x), m(x))  # eval(): dropout off
    assert not torch.equal(m.train()(x), m(x))  # train() with p > 0: two passes differ
    m0 = GPT(GPTConfig(vocab_size=50, block_size=8, d_model=16, n_layer=1, n_head=2, dropout=0.0)).train()
    assert torch.equal(m0(x), m0(x))
