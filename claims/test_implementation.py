"""IT 3.16 The implementation check: ours against PyTorch's attention, weights copied."""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from model import MultiHeadAttention, causal_mask
from suite.reading import reads
from suite.catalogue import DEPTH_CI, DEPTH_FULL



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
    tol = "exact: < 1e-6: float32 reordering on outputs of mean |y| ~0.15"
    claim_record("IMPL-01", d_mha, expected=1.79e-7, tolerance=tol, label="ours vs nn.MultiheadAttention")
    claim_record("IMPL-01", d_sdpa, expected=1.79e-7, tolerance=tol, label="ours vs SDPA")
    assert d_mha < 1e-6 and d_sdpa < 1e-6
    claim_record("IMPL-01", {T: round(_mean_magnitude(T), 3) for T in (12, 16, 32, 128)}, expected=0.159,
                 tolerance="reported: the mean magnitude is set by the input's length, which the chapter does not "
                           "state; 0.159 is one draw near 12-16 tokens (seed means of 5 draws under PyTorch's init)",
                 label="mean |output| by input length, nn.MultiheadAttention's weights, causal")


def _mean_magnitude(T, seeds=range(5)) -> float:
    """Mean |output| of nn.MultiheadAttention at d 128, 4 heads, causal, on x ~ N(0, 1) of length T
    (the chapter copied PyTorch's weights into its own), averaged over ``seeds``."""
    out = []
    for seed in seeds:
        torch.manual_seed(seed)
        ref = nn.MultiheadAttention(128, 4, batch_first=True)
        x = torch.randn(1, T, 128)
        with torch.no_grad():
            out.append(ref(x, x, x, attn_mask=~causal_mask(T), need_weights=False)[0].abs().mean().item())
    return sum(out) / len(out)


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

from claimcheck import undecided  # noqa: E402
from suite.catalogue import DEPTH_LOOKS  # noqa: E402
from claimcheck.rules import TOST_LEVEL, beyond, joint, judge_look, sequential, wide_level, within  # noqa: E402
from suite.rules import SECOND_LOOK  # noqa: E402

# A trained value moves by up to 2 % between two machines: a gap smaller than that is no verdict
MACHINE_MOVE = 0.02

def _gaps(runs, checkpoint="final") -> dict:
    """Two blocks' relative train gain and validation loss over one block, paired by seed."""
    t1, t2 = runs.train("+layernorm", checkpoint), runs.train("2-blocks", checkpoint)
    v1, v2 = runs.val("+layernorm", checkpoint), runs.val("2-blocks", checkpoint)
    return {"train gain": (t1 - t2) / t1, "val loss": (v2 - v1) / v1}


def _above_machine(lo, hi):
    return beyond(lo, hi, MACHINE_MOVE)


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("DEPTH-01")
@reads(DEPTH_CI)
def test_two_blocks_train_lower_and_validate_no_better(runs_of, claim_record):
    """Overfitting, as at full scale: two blocks better on train and worse on validation, each by
    more than a machine moves a run (2 %), judged on the 90 % interval of the mean paired
    relative gap over the seeds: both lower ends above 2 % hold (one-sided tests at 5 %); a gap
    whose 95 % interval lies at or below 2 % fails (a disagreement, to review: two gaps, so
    Bonferroni, claimcheck.rules: joint); anything else is undecided."""
    depth_ci = runs_of(DEPTH_CI)
    gains = _gaps(depth_ci)
    # seeds 3-7 are a second look, declared once seeds 0-2 could not decide: judged at 97.5 %
    shown, holds = joint([(g, _above_machine) for g in gains.values()], SECOND_LOOK)
    for (label, g), doc, mi in zip(gains.items(), ((18.77 - 14.49) / 18.77, (40.57 - 38.07) / 38.07), shown):
        claim_record("DEPTH-01", [round(x, 4) for x in mi], expected=round(doc, 4),
                     tolerance=f"joint, second look: {SECOND_LOOK * 100:g} % interval above {MACHINE_MOVE}; at or "
                               f"below it only at {wide_level(SECOND_LOOK, 2) * 100:.3g} % (docs/reference/statistics.md)",
                     label=f"CI scale (10 % slice, {len(g)} seeds): 2 blocks' {label}, relative: mean and "
                           f"{SECOND_LOOK * 100:g} % interval")
    if holds is None:
        undecided(f"DEPTH-01 (CI): a gap's {SECOND_LOOK * 100:g} % interval straddles the {MACHINE_MOVE:.0%} margin, "
                  f"or lies below it but not at {wide_level(SECOND_LOOK, 2) * 100:.3g} %, over {len(depth_ci.seeds)} "
                  "seeds; a larger DEPTH_CI would be a third look, declared first")
    assert holds, {label: [round(x, 4) for x in mi] for label, mi in zip(gains, shown)}


DOC_DEPTH = {"+layernorm": (18.77, 38.07), "2-blocks": (14.49, 40.57)}  # (train, val), IT L252


def depth01_rule(runs, checkpoint="final", level=TOST_LEVEL):
    """The four numbers within ±10 % (the catalogue's band; their 90 % intervals inside it), and
    overfitting as at CI scale: two blocks better on train and worse on validation, each by more
    than a machine moves a run (2 %), on the 90 % interval of the mean paired relative gap over
    the seeds. The six parts joined by suite/rules.py's ``joint``: ({part: [mean, lo, hi]},
    True / False / None). The verdict and every point of its grid are judged by it."""
    bands = {f"{arm} {what}": (getattr(runs, what)(arm, checkpoint),
                               lambda lo, hi, doc=doc: within(lo, hi, (0.9 * doc, 1.1 * doc)))
             for arm, docs in DOC_DEPTH.items() for what, doc in zip(("train", "val"), docs)}
    gaps = {label: (g, _above_machine) for label, g in _gaps(runs, checkpoint).items()}
    parts = {**gaps, **bands}
    shown, holds = joint(parts.values(), level)
    return {label: [round(x, 4 if label in gaps else 2) for x in mi] for label, mi in zip(parts, shown)}, holds


@pytest.mark.gpu
@pytest.mark.claim("DEPTH-01")
@reads(DEPTH_FULL)
def test_two_blocks_overfit_at_the_documents_scale(runs_of, claim_record):
    """Judged by ``depth01_rule`` over paired seeds at the looks of catalogue.DEPTH_LOOKS: the
    full-scale gap on seed 0 (0.7 % on validation) is inside what seeds move a rung, so one seed
    decides nothing."""
    depth_full = runs_of(DEPTH_FULL)
    for arm, (doc_t, doc_v) in DOC_DEPTH.items():
        claim_record("DEPTH-01", [depth_full.train(arm).round(2).tolist(), depth_full.val(arm).round(2).tolist()],
                     expected=[doc_t, doc_v], tolerance="reported",
                     label=f"full scale: {arm} train, val per seed {list(depth_full.seeds)}")
    look = sequential(DEPTH_LOOKS, depth_full.prefix(),
                      lambda n, level, _a: depth01_rule(depth_full.first(n), level=level)[::-1])
    if look.index:
        claim_record("DEPTH-01", look.shown,
                     expected={"train gain": round((18.77 - 14.49) / 18.77, 4), "val loss": round((40.57 - 38.07) / 38.07, 4),
                               **{f"{arm} {what}": doc for arm, docs in DOC_DEPTH.items()
                                  for what, doc in zip(("train", "val"), docs)}},
                     tolerance=f"joint: intervals inside ±10 % of the four numbers; each gap's above {MACHINE_MOVE}; "
                               f"a part outside only at its Bonferroni level (claimcheck.rules: joint); sequential: "
                               f"{DEPTH_LOOKS.text()}",
                     label=f"full scale: 2 blocks' train gain and val loss (relative), and the four perplexities: mean "
                           f"and {DEPTH_LOOKS.level * 100:.4g} % interval over the first {look.n} seeds, look "
                           f"{look.index} of {len(DEPTH_LOOKS.looks)}")
    judge_look("DEPTH-01", look, "two blocks better on train, worse on validation, near the four numbers")


from suite.evidence.families import recorded_runs  # noqa: E402
from suite.diagnosis import diagnosis_test  # noqa: E402
from suite.diagnosis_grids import DEPTH_GRID  # noqa: E402

test_depth01_diagnosis = diagnosis_test(DEPTH_GRID, depth01_rule, recorded_runs)


@pytest.mark.fast
@pytest.mark.claim("IMPL-02")
def test_the_printed_head_fits_thirty_lines_and_twenty_shapes(request, claim_record):
    """"In codice sono trenta righe, venti delle quali sono forme" (L68), and "Le trenta righe sopra"
    (L243), counted on the Head our copy prints. The copy strips comments: 7 lines end in the
    blanks an inline shape comment leaves, and a comment-only line leaves nothing. So only the upper
    bounds can be judged: what is printed fits in thirty lines, and the lines marked by a stripped
    comment fit in twenty."""
    from claimcheck.session import registry_of
    text = registry_of(request.config).sources["IT"].path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(text) if line.startswith("class Head("))
    end = next(i for i in range(start, len(text)) if text[i].startswith("Score, mask"))
    code = text[start:end]
    while not code[-1].strip():
        code.pop()
    printed = claim_record("IMPL-02", len(code), expected=30,
                           tolerance="exact (weaker form: our copy strips the code's comments): <= 30",
                           label="lines of the printed Head, blanks included")
    marked = claim_record("IMPL-02", sum(1 for line in code if line.strip() and line != line.rstrip()), expected=20,
                          tolerance="exact (weaker form: a comment-only line leaves no trace in our copy): <= 20",
                          label="lines ending in the blanks a stripped inline comment leaves")
    assert printed <= 30 and marked <= 20
