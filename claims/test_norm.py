"""IT 3.10 Normalisation: LayerNorm's properties, pre- vs post-norm, gradients at init."""
import pytest
import torch
import torch.nn as nn

from model import GPT, MLP, Block, MultiHeadAttention, shakespeare_config

pytestmark = pytest.mark.fast


@pytest.mark.claim("NORM-01")
def test_layernorm_needs_no_batch_no_running_stats_and_no_length():
    torch.manual_seed(0)
    ln, bn = nn.LayerNorm(16), nn.BatchNorm1d(16)
    x = torch.randn(8, 16)
    # (a) an example's output does not depend on the rest of the batch
    assert torch.equal(ln(x)[:1], ln(x[:1]))
    assert not torch.allclose(bn.train()(x)[:1], bn.train()(torch.cat([x[:1], 5 + x[1:]]))[:1])
    # (b) no running buffers
    assert list(ln.buffers()) == [] and len(list(bn.buffers())) > 0
    # (c) identical in training and inference
    assert torch.equal(ln.train()(x), ln.eval()(x))
    bn.train()(x)
    assert not torch.allclose(bn.train()(x), bn.eval()(x))
    # (d) a token's output does not change when the sequence is cut or extended
    seq = torch.randn(1, 10, 16)
    assert torch.equal(ln(seq)[:, :4], ln(seq[:, :4]))


def _zeroed_block(norm):
    torch.manual_seed(0)
    blk = Block(MultiHeadAttention(16, 4), MLP(16), 16, norm=norm).double()
    with torch.no_grad():  # sub-layers whose output is 0
        for lin in (blk.mix.proj, blk.ff.proj):
            lin.weight.zero_()
            lin.bias.zero_()
    return blk


@pytest.mark.claim("NORM-02", "TINY-01")
def test_pre_norm_leaves_the_residual_path_unnormalised():
    x = 3 + 2 * torch.randn(2, 6, 16, dtype=torch.float64)  # mean 3, std 2: visibly not normalised
    torch.testing.assert_close(_zeroed_block("pre")(x), x, rtol=0, atol=0)  # exactly the identity


@pytest.mark.claim("NORM-02")
def test_post_norm_normalises_the_residual_path():
    x = 3 + 2 * torch.randn(2, 6, 16, dtype=torch.float64)
    blk = _zeroed_block("post")
    y = blk(x)
    torch.testing.assert_close(y, blk.ln_ff_out(blk.ln_mix_out(x)), rtol=0, atol=1e-12)  # LN(LN(x))
    torch.testing.assert_close(y, nn.functional.layer_norm(x, (16,)), rtol=0, atol=1e-4)  # ~ LN(x)
    assert not torch.allclose(y, x)


SEEDS = (0, 1, 2)


@pytest.fixture(scope="module")
def grad_norms():
    """Per-block gradient norm at initialisation, before any step: 12 blocks, d 128, window 128.

    One batch of 4 random token windows, mean cross-entropy, PyTorch default inits.
    """
    out = {}
    for norm in ("pre", "post"):
        for seed in SEEDS:
            torch.manual_seed(seed)
            m = GPT(shakespeare_config(n_layer=12, norm=norm))
            x = torch.randint(0, 1024, (4, 129))
            m(x[:, :-1], x[:, 1:])[1].backward()
            out[norm, seed] = [torch.sqrt(sum((p.grad ** 2).sum() for p in b.parameters())).item()
                               for b in m.blocks]
    return out


@pytest.mark.claim("NORM-03")
def test_post_norm_gradients_exceed_pre_norms_and_rise_faster(grad_norms, claim_record, claim_figure):
    for seed in SEEDS:
        pre, post = grad_norms["pre", seed], grad_norms["post", seed]
        assert all(b > a for a, b in zip(pre, post)), seed  # post > pre at every block
        assert post[-1] / post[0] > pre[-1] / pre[0], seed  # the text's ordering of the ratios
    for norm, doc in (("pre", [0.0498, 0.0657]), ("post", [0.0977, 0.1613])):
        first = sum(grad_norms[norm, s][0] for s in SEEDS) / len(SEEDS)
        last = sum(grad_norms[norm, s][-1] for s in SEEDS) / len(SEEDS)
        claim_record("NORM-03", [round(first, 4), round(last, 4)], expected=doc,
                     tolerance="orderings only; absolute values depend on batch, init and reduction",
                     label=f"{norm}-norm block 1, block 12 (mean of {len(SEEDS)} seeds)")

    def draw(fig):
        ax = fig.add_subplot()
        for norm, colour in (("pre", "tab:blue"), ("post", "tab:red")):
            for s in SEEDS:
                ax.plot(range(1, 13), grad_norms[norm, s], color=colour, alpha=0.6,
                        label=f"{norm}-norm" if s == 0 else None)
        ax.set(xlabel="block", ylabel="gradient norm at init", title="NORM-03: 12 blocks, d 128")
        ax.legend()

    claim_figure("NORM-03", "norm03_grad_norms_at_init", draw)


@pytest.mark.claim("NORM-03")
@pytest.mark.xfail(strict=True, reason="the text's last/first ratios (pre 1.32, post 1.65) do not "
                   "reproduce at init with PyTorch's default inits; the measured ratios are in the report")
def test_post_norm_gradient_grows_with_depth_as_the_text_reports(grad_norms, claim_record):
    ratios = {norm: [grad_norms[norm, s][-1] / grad_norms[norm, s][0] for s in SEEDS]
              for norm in ("pre", "post")}
    claim_record("NORM-03", [round(r, 3) for r in ratios["pre"]], expected=1.32,
                 tolerance="[0.7, 1.7] (Xiong: about flat)", label="pre-norm last/first, per seed")
    claim_record("NORM-03", [round(r, 3) for r in ratios["post"]], expected=1.65,
                 tolerance="[1.2, 2.2] (1.65 ± 0.55)", label="post-norm last/first, per seed")
    assert all(0.7 <= r <= 1.7 for r in ratios["pre"])
    assert all(1.2 <= r <= 2.2 for r in ratios["post"])
