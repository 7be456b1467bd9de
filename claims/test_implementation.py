"""IT 3.16 The implementation check: ours against PyTorch's attention, weights copied."""
import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from claims.marks import diverges
from model import MultiHeadAttention, causal_mask



def _pair(d, h, dtype):
    ours = MultiHeadAttention(d, h, qkv_bias=True, o_bias=True).to(dtype)
    ref = nn.MultiheadAttention(d, h, batch_first=True).to(dtype)
    with torch.no_grad():  # copy weights: q, k, v stacked in one matrix in both
        ref.in_proj_weight.copy_(ours.qkv.weight)
        ref.in_proj_bias.copy_(ours.qkv.bias)
        ref.out_proj.weight.copy_(ours.proj.weight)
        ref.out_proj.bias.copy_(ours.proj.bias)
    return ours, ref


def _sdpa(ours, x):
    B, T, d = x.shape
    h = ours.n_head
    q, k, v = (t.view(B, T, h, d // h).transpose(1, 2) for t in ours.qkv(x).split(d, 2))
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return ours.proj(y.transpose(1, 2).reshape(B, T, d))


@pytest.mark.fast
@pytest.mark.claim("IMPL-01")
def test_ours_matches_pytorch_at_the_chapters_size(claim_record):
    torch.manual_seed(0)
    ours, ref = _pair(128, 4, torch.float32)
    x = torch.randn(1, 128, 128)
    with torch.no_grad():
        y = ours(x)
        d_mha = (y - ref(x, x, x, attn_mask=~causal_mask(128), need_weights=False)[0]).abs().max().item()
        d_sdpa = (y - _sdpa(ours, x)).abs().max().item()
    tol = "< 1e-6: float32 reordering on outputs of mean |y| ~0.15"
    claim_record("IMPL-01", d_mha, expected=1.79e-7, tolerance=tol, label="ours vs nn.MultiheadAttention")
    claim_record("IMPL-01", d_sdpa, expected=1.79e-7, tolerance=tol, label="ours vs SDPA")
    claim_record("IMPL-01", y.abs().mean().item(), expected=0.159, label="mean |output|")
    assert d_mha < 1e-6 and d_sdpa < 1e-6


@pytest.mark.fast
@pytest.mark.claim("IMPL-01")
@given(T=st.integers(1, 40), h=st.sampled_from([1, 2, 4, 8]), hs=st.integers(1, 12), seed=st.integers(0, 2**31 - 1))
def test_ours_matches_pytorch_in_float64_for_any_shape(T, h, hs, seed):
    torch.manual_seed(seed)
    ours, ref = _pair(h * hs, h, torch.float64)
    x = torch.randn(2, T, h * hs, dtype=torch.float64)
    with torch.no_grad():
        y = ours(x)
        torch.testing.assert_close(y, ref(x, x, x, attn_mask=~causal_mask(T), need_weights=False)[0],
                                   rtol=0, atol=1e-12)  # same arithmetic, another order
        torch.testing.assert_close(y, _sdpa(ours, x), rtol=0, atol=1e-12)


# ---- DEPTH-01: two blocks overfit ---------------------------------------------------------

from claims.rules import beyond, mean_interval  # noqa: E402

# A trained value moves by up to 2 % between two machines: a gap smaller than that is no verdict
MACHINE_MOVE = 0.02

@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("DEPTH-01")
def test_two_blocks_train_lower_and_validate_no_better(depth_ci, claim_record):
    """Overfitting, as at full scale: two blocks better on train and worse on validation, each by
    more than a machine moves a run (2 %), judged on the 90 % interval of the mean paired
    relative gap over the seeds: its lower end above 2 % holds (a one-sided test at 5 %), its
    upper end at or below 2 % is a divergence, and an interval across 2 % is no verdict."""
    t1, t2 = depth_ci.train("+layernorm"), depth_ci.train("2-blocks")
    v1, v2 = depth_ci.val("+layernorm"), depth_ci.val("2-blocks")
    gains = {"train gain": (t1 - t2) / t1, "val loss": (v2 - v1) / v1}
    side = {}
    for (label, g), doc in zip(gains.items(), ((18.77 - 14.49) / 18.77, (40.57 - 38.07) / 38.07)):
        m, lo, hi = mean_interval(g)
        claim_record("DEPTH-01", [round(x, 4) for x in (m, lo, hi)], expected=round(doc, 4),
                     tolerance=f"90 % interval above {MACHINE_MOVE}",
                     label=f"CI scale (10 % slice, {len(g)} seeds): 2 blocks' {label}, relative: mean and 90 % interval")
        side[label] = beyond(lo, hi, MACHINE_MOVE)
    undecided = [label for label, s in side.items() if s is None]
    if undecided:
        pytest.fail(f"DEPTH-01 (CI): no verdict: the 90 % interval of the {' and '.join(undecided)} straddles the "
                    f"{MACHINE_MOVE:.0%} margin over {len(depth_ci.seeds)} seeds; add seeds to DEPTH_CI "
                    "(claims/rules.py: beyond)", pytrace=False)
    assert all(side.values()), side


@pytest.mark.gpu
@pytest.mark.claim("DEPTH-01")
@diverges("at full scale two blocks end level with one on validation, inside what two machines can "
          "move a trained value, where the text's are clearly worse: the overfitting shows on train "
          "only (values in the report)")
def test_two_blocks_overfit_at_the_documents_scale(ladder_full, claim_record):
    """±10 %: one run per model; the catalogue's band for these four numbers. Overfitting: two
    blocks better on train and worse on validation, each by more than a machine moves a run."""
    (t1,), (t2,) = ladder_full.train("+layernorm"), ladder_full.train("2-blocks")
    (v1,), (v2,) = ladder_full.val("+layernorm"), ladder_full.val("2-blocks")
    for label, got, doc in (("1 block train", t1, 18.77), ("2 blocks train", t2, 14.49),
                            ("1 block val", v1, 38.07), ("2 blocks val", v2, 40.57)):
        claim_record("DEPTH-01", got, expected=doc, tolerance="±10 %", label=f"full scale: {label}")
    gaps = claim_record("DEPTH-01", [round((t1 - t2) / t1, 4), round((v2 - v1) / v1, 4)],
                        expected=[round((18.77 - 14.49) / 18.77, 4), round((40.57 - 38.07) / 38.07, 4)],
                        tolerance=f"> {MACHINE_MOVE} each", label="full scale: 2 blocks' train gain, val loss (relative)")
    assert [t1, t2, v1, v2] == pytest.approx([18.77, 14.49, 38.07, 40.57], rel=0.10)
    assert gaps[0] > MACHINE_MOVE and gaps[1] > MACHINE_MOVE
