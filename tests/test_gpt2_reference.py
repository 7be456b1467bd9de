"""gpt2_small_config is GPT-2: our own model against Hugging Face's (no claim; the parameter
claims, claims/test_params.py, stand on it)."""
import pytest
import torch

from experiments.configs import shakespeare_config, tiny_lab_config
from model import GPT, GPTConfig, gpt2_small_config

pytestmark = pytest.mark.fast


def _hf():
    return pytest.importorskip("transformers", reason="transformers is not installed "
                               "(pip install -e '.[hf]'); the Hugging Face cross-check needs it")


HF_SIZES = dict(vocab_size=100, n_positions=32, n_embd=64, n_layer=2, n_head=4)


def _load_hf_gpt2(hf, n_layer):
    """Our GPT(gpt2_small_config) state dict from a GPT2LMHeadModel's.

    HF's Conv1D keeps its weight as (in, out), nn.Linear as (out, in): one transpose each.
    c_attn's 3d outputs are [q | k | v], each heads-contiguous, as our qkv's rows: no reshuffle.
    """
    sd = {k.removeprefix("transformer."): v for k, v in hf.state_dict().items()}
    ours = {"tok.weight": sd["wte.weight"], "pos.table.weight": sd["wpe.weight"],
            "head.weight": sd["lm_head.weight"],  # tied to wte in both
            "ln_f.weight": sd["ln_f.weight"], "ln_f.bias": sd["ln_f.bias"]}
    conv1d = {"mix.qkv": "attn.c_attn", "mix.proj": "attn.c_proj",
              "ff.fc": "mlp.c_fc", "ff.proj": "mlp.c_proj"}
    norms = {"ln_mix_in": "ln_1", "ln_ff_in": "ln_2"}
    for i in range(n_layer):
        for o, h in conv1d.items():
            ours[f"blocks.{i}.{o}.weight"] = sd[f"h.{i}.{h}.weight"].T  # (in, out) -> (out, in)
            ours[f"blocks.{i}.{o}.bias"] = sd[f"h.{i}.{h}.bias"]
        for o, h in norms.items():
            for p in ("weight", "bias"):
                ours[f"blocks.{i}.{o}.{p}"] = sd[f"h.{i}.{h}.{p}"]
    return ours


def test_gpt2_small_config_computes_hugging_faces_gpt2_logits():
    tf = _hf()
    torch.manual_seed(0)
    hf = tf.GPT2LMHeadModel(tf.GPT2Config(**HF_SIZES, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                                          bos_token_id=0, eos_token_id=0)).eval()  # ids inside vocab 100
    with torch.no_grad():
        # At HF's own N(0, 0.02) init the GELU inputs are so small that the exact GELU is also
        # within 1e-5; noise of 0.1 on every tensor (LayerNorms too) makes the logits O(1) and a
        # mismatched tensor or GELU show. Measured, seeds 0-4: tanh 1.6-1.9e-6, exact 0.7-1.1e-3
        for p in hf.parameters():
            p.add_(0.1 * torch.randn_like(p))
    state = _load_hf_gpt2(hf, HF_SIZES["n_layer"])
    sizes = dict(vocab_size=100, block_size=32, d_model=64, n_layer=2, n_head=4)
    ours = GPT(gpt2_small_config(**sizes)).eval()
    ours.load_state_dict(state)  # strict: every tensor of ours comes from HF
    exact = GPT(gpt2_small_config(**sizes, gelu="exact")).eval()
    exact.load_state_dict(state)
    x = torch.randint(0, 100, (4, 32))
    with torch.no_grad():
        ref = hf(x).logits  # (4, 32, 100)
        diff = (ours(x) - ref).abs().max().item()
        diff_exact = (exact(x) - ref).abs().max().item()
    assert diff < 1e-5, f"max |logit difference| {diff:.2e} vs transformers {tf.__version__}"
    assert diff_exact > 1e-4  # the comparison can see the GELU: it is not passing by insensitivity


def test_gpt2_init_scales_the_residual_projections():
    torch.manual_seed(0)
    m = GPT(gpt2_small_config(n_layer=12, d_model=64, n_head=4, vocab_size=100, block_size=32))
    # The sample std of n N(0, s) draws has relative standard error 1/sqrt(2n); the smallest
    # tensor here (pos, 32 x 64) has 1.6 %, so 10 % is > 6 standard errors, and it still tells
    # 0.02 from 0.02/sqrt(24) (a factor 4.9) or from 0.02/sqrt(12) (a factor 1.4).
    def near(t, s):
        return abs(t.std().item() / s - 1) < 0.10

    resid = 0.02 / (2 * 12) ** 0.5
    for i, b in enumerate(m.blocks):
        assert near(b.mix.proj.weight, resid) and near(b.ff.proj.weight, resid), f"block {i}"
        assert near(b.mix.qkv.weight, 0.02) and near(b.ff.fc.weight, 0.02), f"block {i}"
        assert b.ff.act.approximate == "tanh"  # GPT-2's GELU
    assert near(m.tok.weight, 0.02) and near(m.pos.table.weight, 0.02)
    assert m.head.weight is m.tok.weight
    assert all(not l.bias.any() for l in m.modules() if isinstance(l, torch.nn.Linear) and l.bias is not None)
    # the other configs keep their own: the exact GELU, and the lab's unscaled N(0, 0.02)
    assert GPT(shakespeare_config(n_layer=1)).blocks[0].ff.act.approximate == "none"
    lab = GPT(tiny_lab_config()).blocks[0]
    proj = torch.cat([lab.mix.proj.weight.flatten(), lab.ff.proj.weight.flatten()])  # 1,280 draws: SE 2 %
    assert near(proj, 0.02)  # 0.02/sqrt(2) would be 29 % off


def test_a_gelu_outside_the_two_is_refused():
    with pytest.raises(ValueError, match=r"^GPTConfig: gelu must be one of \('exact', 'tanh'\), got 'relu'$"):
        GPTConfig(gelu="relu").validate()
