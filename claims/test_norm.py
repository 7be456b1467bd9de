"""IT 3.10 Normalisation: LayerNorm's properties, pre- vs post-norm, gradients at init."""
import numpy as np
import pytest
import torch
import torch.nn as nn

from model import MLP, Block, MultiHeadAttention
from claimcheck import diverges, undecided
from suite.catalogue import NORM07_LOOKS
from claimcheck.rules import (
    above,
    MAJORITY,
    MOST,
    TOST_LEVEL,
    beyond,
    decide,
    interval,
    interval_looks,
    joint,
    judge,
    judge_look,
    mean_interval,
    starts,
    wide_level,
    within,
)
from suite.rules import SECOND_LOOK
from suite.diagnosis import check_kind
from suite.catalogue import NORM03_GRADS, NORM03_MORE, NORM07_FULL, NORM_CI, NORM_EQ_CI, NORM_FULL, NORM_RATE_CI
from suite.reading import reads



@pytest.mark.fast
@pytest.mark.claim("NORM-01")
def test_layernorm_needs_no_batch_no_running_stats_and_no_length(claim_record):
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
    claim_record("NORM-01", {"batch": (ln(x)[:1] - ln(x[:1])).abs().max().item(), "buffers": len(list(ln.buffers())),
                             "train vs eval": (ln.train()(x) - ln.eval()(x)).abs().max().item(),
                             "cut to 4": (ln(seq)[:, :4] - ln(seq[:, :4])).abs().max().item()},
                 expected={"batch": 0, "buffers": 0, "train vs eval": 0, "cut to 4": 0},
                 tolerance="exact: bit-identical (torch.equal); no buffers",
                 label="LayerNorm: max |change| per property")


def _zeroed_block(norm):
    torch.manual_seed(0)
    blk = Block(MultiHeadAttention(16, 4), MLP(16), 16, norm=norm).double()
    with torch.no_grad():  # sub-layers whose output is 0
        for lin in (blk.mix.proj, blk.ff.proj):
            lin.weight.zero_()
            lin.bias.zero_()
    return blk


@pytest.mark.fast
@pytest.mark.claim("NORM-02")
def test_pre_norm_leaves_the_residual_path_unnormalised(claim_record):
    x = 3 + 2 * torch.randn(2, 6, 16, dtype=torch.float64)  # mean 3, std 2: visibly not normalised
    y = _zeroed_block("pre")(x)
    claim_record("NORM-02", (y - x).abs().max().item(), tolerance="exact: rtol 0, atol 0",
                 label="pre-norm, zeroed sub-layers: max |block(x) - x|")
    torch.testing.assert_close(y, x, rtol=0, atol=0)  # exactly the identity


@pytest.mark.fast
@pytest.mark.claim("NORM-02")
def test_post_norm_normalises_the_residual_path():
    x = 3 + 2 * torch.randn(2, 6, 16, dtype=torch.float64)
    blk = _zeroed_block("post")
    y = blk(x)
    torch.testing.assert_close(y, blk.ln_ff_out(blk.ln_mix_out(x)), rtol=0, atol=1e-12)  # LN(LN(x))
    torch.testing.assert_close(y, nn.functional.layer_norm(x, (16,)), rtol=0, atol=1e-4)  # ~ LN(x)
    assert not torch.allclose(y, x)


SEEDS = NORM03_GRADS.seeds  # the catalogue's five, averaged


def by_seed(measured: dict, seeds=SEEDS) -> dict:
    """experiments.grad_norms' result as reduction -> (norm, seed) -> the 12 per-block norms.

    The text states none of the measurement's settings; ours (the stated point of NORM-03's
    diagnosis) is the first batch a full-scale run of that seed would see (``batch="real"``),
    the norm over all of a block's parameters (reduction ``"block"``) and PyTorch's default
    inits. The grid's other values: ``batch="random"`` (uniform random tokens), ``"mean8"`` (the
    norm of the gradient averaged over 8 batches); reductions ``"attention"`` / ``"mlp"`` (one
    sub-layer's parameters, read from the same gradients); ``init="normal"`` / ``"gpt2"``
    (model/gpt.py's INITS)."""
    return {r: {(norm, s): v for norm, per_seed in by_norm.items() for s, v in zip(seeds, per_seed)}
            for r, by_norm in measured.items()}


@pytest.fixture
def grad_norms_by_reduction(runs_of):
    """NORM03_GRADS by reduction, then (norm, seed): the test declares ``@reads(NORM03_GRADS)``."""
    return by_seed(runs_of(NORM03_GRADS)["real", "torch"])


@pytest.fixture
def grad_norms(grad_norms_by_reduction):
    """The stated measurement (one real batch, every block parameter, PyTorch's inits)."""
    return grad_norms_by_reduction["block"]


@pytest.mark.slow
@pytest.mark.scale("full")
@pytest.mark.claim("NORM-03")
@reads(NORM03_GRADS)
def test_post_norm_gradients_exceed_pre_norms_and_rise_faster(grad_norms, claim_record, claim_figure):
    """Five random inits are a sample: each ordering is judged on the paired differences over the
    seeds, its 90 % interval above 0 (a one-sided test at 5 %), never on every seed."""
    pre = np.array([grad_norms["pre", s] for s in SEEDS])  # (seeds, 12 blocks)
    post = np.array([grad_norms["post", s] for s in SEEDS])
    lows = [mean_interval(post[:, b] - pre[:, b])[1] for b in range(pre.shape[1])]
    ratio_gap = post[:, -1] / post[:, 0] - pre[:, -1] / pre[:, 0]
    m, lo, hi = mean_interval(ratio_gap)
    claim_record("NORM-03", [round(x, 3) for x in (m, lo, hi)], expected="post's ratio > pre's (1.65 > 1.32)",
                 tolerance="comparison: 90 % interval above 0", label="post-norm's last/first ratio minus pre-norm's: mean, interval")
    for norm, doc in (("pre", [0.0498, 0.0657]), ("post", [0.0977, 0.1613])):
        first = sum(grad_norms[norm, s][0] for s in SEEDS) / len(SEEDS)
        last = sum(grad_norms[norm, s][-1] for s in SEEDS) / len(SEEDS)
        claim_record("NORM-03", [round(first, 4), round(last, 4)], expected=doc,
                     tolerance="reported: orderings only; absolute values depend on batch, init and reduction",
                     label=f"{norm}-norm block 1, block 12 (mean of {len(SEEDS)} seeds, a real batch)")

    def draw(fig):
        ax = fig.add_subplot()
        for norm, colour in (("pre", "tab:blue"), ("post", "tab:red")):
            for s in SEEDS:
                ax.plot(range(1, 13), grad_norms[norm, s], color=colour, alpha=0.6,
                        label=f"{norm}-norm" if s == 0 else None)
        ax.set(xlabel="block", ylabel="gradient norm at init", title="NORM-03: 12 blocks, d 128, a Shakespeare batch")
        ax.legend()

    claim_figure("NORM-03", "norm03_grad_norms_at_init", draw)
    assert min(lows) > 0, f"post-norm's gradient not above pre-norm's at every block (lowest bound {min(lows):.3g})"
    assert lo > 0, f"post-norm's ratio minus pre-norm's: mean {m:.3f}, 90 % interval [{lo:.3f}, {hi:.3f}]"


# The table's "ratio last/first 1.32" and "1.65": each a measured number printed bare (one init,
# one batch: one draw), so the word table's bare row, +-5 % of itself. (Before: (1.0, 1.7) and
# (1.2, 2.2), each containing both of the chapter's ratios.) That post's ratio exceeds pre's is
# judged beside it (test_post_norm_gradients_exceed_pre_norms_and_rise_faster).
RATIO_BANDS = {"pre": (1.32 * 0.95, 1.32 * 1.05), "post": (1.65 * 0.95, 1.65 * 1.05)}


def norm03_judge(gn, seeds=SEEDS, level=TOST_LEVEL) -> tuple[dict, bool | None]:
    """Per norm, the interval (at ``level``) of the mean last/first ratio over ``seeds`` inside its
    band, the two joined by suite/rules.py's ``joint``: ({norm: [mean, lo, hi]}, True / False / None)."""
    norms = ("pre", "post")
    shown, holds = joint([([gn[norm, s][-1] / gn[norm, s][0] for s in seeds],
                           (lambda band: lambda lo, hi: within(lo, hi, band))(RATIO_BANDS[norm]))
                          for norm in norms], level)
    return {norm: [round(x, 3) for x in mi] for norm, mi in zip(norms, shown)}, holds


@pytest.mark.slow
@pytest.mark.scale("full")
@pytest.mark.claim("NORM-03")
@diverges("the text's last/first ratios (pre 1.32, post 1.65) do not "
                   "reproduce at init with PyTorch's default inits; the measured ratios are in the report")
@reads(NORM03_GRADS, later=(NORM03_MORE,))
def test_post_norm_gradient_grows_with_depth_as_the_text_reports(grad_norms, claim_record, runs_of):
    """Judged on the 90 % interval of the mean ratio over five seeds, inside its band."""
    for norm, doc in (("pre", 1.32), ("post", 1.65)):
        ratios = [grad_norms[norm, s][-1] / grad_norms[norm, s][0] for s in SEEDS]
        claim_record("NORM-03", [round(r, 3) for r in ratios], expected=doc, tolerance="reported",
                     label=f"{norm}-norm last/first, per seed (a real batch)")
    value, holds = norm03_judge(grad_norms)
    for norm, doc in (("pre", 1.32), ("post", 1.65)):
        claim_record("NORM-03", value[norm], expected=doc,
                     tolerance=f"joint: 90 % interval inside {[round(x, 4) for x in RATIO_BANDS[norm]]} (± 5 %, a "
                               f"measured number printed bare); outside only at "
                               f"{wide_level(TOST_LEVEL, 2) * 100:.3g} % (claimcheck.rules: joint)",
                     label=f"{norm}-norm last/first: mean and 90 % interval, seeds {SEEDS[0]}-{SEEDS[-1]} (first look)")
    if holds is None:  # the declared second look decides (catalogue.NORM03_MORE), on fresh seeds only
        more = NORM03_MORE.seeds
        gn = by_seed(runs_of(NORM03_MORE)["real", "torch"], more)["block"]
        value, holds = norm03_judge(gn, more, SECOND_LOOK)
        for norm, doc in (("pre", 1.32), ("post", 1.65)):
            claim_record("NORM-03", value[norm], expected=doc,
                         tolerance=f"joint, second look: {SECOND_LOOK * 100:g} % interval inside "
                                   f"{[round(x, 4) for x in RATIO_BANDS[norm]]} (± 5 %); outside only at "
                                   f"{wide_level(SECOND_LOOK, 2) * 100:.3g} % (docs/reference/statistics.md)",
                         label=f"{norm}-norm last/first: mean and {SECOND_LOOK * 100:g} % interval, fresh seeds "
                               f"{more[0]}-{more[-1]} (second look)")
    if holds is None:
        undecided(f"a ratio's interval crosses an edge of its band on both looks (pre {value['pre']}, post "
                  f"{value['post']})")
    assert holds, value


# NORM-03's diagnosis: the measurement's unstated settings, one at a time, judged by
# norm03_rule. Declared before its results; gradients at initialisation, so no evidence to record.
NORM03_AXES = (
    ("batch", ("real", "random", "mean8"),
     "L144 says 'at initialisation, before any step', not on what batch: uniform random tokens, or 8 batches averaged"),
    ("reduction", ("block", "attention", "mlp"),
     "'gradient norm per block' does not say over which parameters: the whole block, or one sub-layer"),
    ("init", ("torch", "normal", "gpt2"),
     "no init is stated; the chapter's code keeps PyTorch's, GPT-2's N(0, 0.02) and its scaled residual "
     "projections change how gradients scale with depth"),
)


@pytest.mark.slow
@pytest.mark.diagnosis("NORM-03")
@reads(NORM03_GRADS)
def test_norm03_diagnosis(runs_of, grad_norms_by_reduction, claim_diagnosis):
    norm03_grads = runs_of(NORM03_GRADS)
    points = [(setting, v, why) for setting, values, why in NORM03_AXES for v in values[1:]]
    level = wide_level(TOST_LEVEL, len(points))  # every point tried, at the grid's Bonferroni level
    value, holds = norm03_judge(grad_norms_by_reduction["block"])
    grid = [{"point": "stated", "settings": {}, "why": "our measurement: one real batch, every block "
             "parameter, PyTorch's inits", "value": value, "holds": holds, "seeds": list(SEEDS)}]
    for setting, v, why in points:
        measured = {"batch": (v, "torch"), "init": ("real", v)}.get(setting)
        gn = grad_norms_by_reduction[v] if setting == "reduction" else by_seed(norm03_grads[measured])["block"]
        value, holds = norm03_judge(gn, level=level)
        grid.append({"point": f"{setting}={v}", "settings": {setting: v}, "why": why, "value": value,
                     "holds": holds, "seeds": list(SEEDS), "level": level,
                     **({"state": "undecided", "missing": "an interval crosses its band's edge"} if holds is None else {})})
    report = {"claim": "NORM-03", "fixed": "", "grid": grid}
    claim_diagnosis("NORM-03", report)
    check_kind(report)


# ---- training: pre- vs post-norm, with and without warmup (NORM-04 ... NORM-07) ---------------
#
# CI scale (suite/scales.py NORM_CI): 6 blocks at d 64, 300 steps at 6e-3, 3 seeds, warmup 20 %
# of the steps (the document's 200 of 1000) and, beside it, 50 %. Full scale (NORM_FULL): the
# document's 12 blocks at d 128, 1000 steps at 3e-3, 200 warmup steps, on the gpu tier.

DOC_NORM = {"pre": 37.82, "pre+warmup": 37.62, "post": 308.05, "post+warmup": 37.88}
# the word table (docs/reference/statistics.md): "eguaglia esattamente" (NORM-06) within 1 %; "barely"
# (the catalogue's word for NORM-07's "non è una buona pratica generale") within 3 %
EXACTLY, BARELY = 0.01, 0.03
ARMS = tuple(DOC_NORM)


def draw_norm(scale_runs, title):
    def draw(fig):
        fig.set_size_inches(7, 4)
        ax = fig.add_subplot()
        for arm, colour in zip(scale_runs.scale.arms, ("tab:blue", "tab:cyan", "tab:red", "tab:orange",
                                                        "tab:pink")):
            for s in scale_runs.seeds:
                c = scale_runs.run(arm, s).trace
                ax.plot(c["step"][1:], c["loss"][1:], color=colour, marker="o", alpha=0.7,
                        label=arm if s == scale_runs.seeds[0] else None)
        ax.set(xlabel="step", ylabel="training loss (mean since the last point)", title=title)
        ax.legend(fontsize=8)
    return draw


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("NORM-04")
@reads(NORM_CI)
def test_the_four_norm_arms_land_where_the_text_orders_them(runs_of, claim_record, claim_figure):
    norm_ci = runs_of(NORM_CI)
    vals = {arm: norm_ci.val(arm) for arm in norm_ci.scale.arms}
    for arm in ARMS:
        claim_record("NORM-04", [round(v, 2) for v in vals[arm]], expected=DOC_NORM[arm],
                     tolerance="reported", label=f"{arm} (CI, seeds 0-2)")
    claim_record("NORM-04", [round(v, 2) for v in vals["post+warmup50"]], tolerance="reported",
                 label="post+warmup 50 % (CI, seeds 0-2)")
    claim_figure("NORM-04", "norm_ci_loss_curves", draw_norm(norm_ci, "pre vs post-norm, CI scale"))
    # what shows at CI scale: post-norm without warmup is worse than both pre-norm arms (where
    # post+warmup lands is NORM-06's question), each a paired comparison, joined
    shown, holds = joint([(vals["post"] - vals[arm], lambda lo, hi: beyond(lo, hi, 0)) for arm in ("pre", "pre+warmup")])
    for arm, mi in zip(("pre", "pre+warmup"), shown):
        claim_record("NORM-04", [round(x, 2) for x in mi], tolerance="joint (CI scale: the ordering only): the 90 % "
                     "interval of the mean paired gap above 0", label=f"post - {arm} (CI): mean and 90 % interval")
    judge("NORM-04", holds, "post-norm without warmup is worse than both pre-norm arms")


@pytest.mark.slow
@reads(NORM_CI, fresh=True)
def test_the_norm_runs_match_their_pin(runs_of, pin):
    norm_ci = runs_of(NORM_CI)
    vals = {f"{arm}": norm_ci.val(arm) for arm in norm_ci.scale.arms}
    vals.update({f"{arm}/early": [norm_ci.run(arm, s).trace["loss"][1:4] for s in norm_ci.seeds]
                 for arm in norm_ci.scale.arms})
    pin("norm_ci", vals,
        meaning="per arm: val perplexity (rows: seeds 0-2); /early: the first three traced training "
                "losses (steps 1-20, 21-40, 41-60)",
        config={"scale": norm_ci.scale.name, "train": norm_ci.scale.train, "arms": list(norm_ci.scale.arms)})


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("NORM-05")
@reads(NORM_RATE_CI)
def test_post_norm_without_warmup_is_several_times_worse(runs_of, claim_record):
    """Whether post-norm fails without warmup is a coin per start: a rate over ten starts."""
    norm_rate_ci = runs_of(NORM_RATE_CI)
    ratio = claim_record("NORM-05", (norm_rate_ci.val("post") / norm_rate_ci.val("pre")).round(2),
                         expected=8.15, tolerance="reported", label="post / pre, per seed (CI scale)")
    r = claim_record("NORM-05", starts(ratio > 3, MAJORITY), expected="8x worse",
                     tolerance=f"start count, per start: CI scale: post / pre > 3 ('several times'); {MOST}",
                     label="starts where post-norm without warmup is > 3x worse than pre-norm")
    decide(r)


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("NORM-06")
@diverges("at CI scale a 20 % warmup does not bring post-norm to pre-norm: the mean gap is far "
          "outside the 1 % that 'esattamente' allows (values in the report; the 50 % arm beside it)")
@reads(NORM_CI)
def test_post_norm_with_warmup_matches_pre_norm(runs_of, claim_record):
    norm_ci = runs_of(NORM_CI)
    pre, post_wu = norm_ci.val("pre"), norm_ci.val("post+warmup")
    claim_record("NORM-06", ((post_wu - pre) / pre).round(3), expected="0.0016 (37.88 vs 37.82)",
                 tolerance="reported", label="(post+warmup - pre) / pre, per seed, warmup 20 %")
    claim_record("NORM-06", ((norm_ci.val("post+warmup50") - pre) / pre).round(3),
                 tolerance="reported", label="(post+warmup - pre) / pre, per seed, warmup 50 %")
    value, side = norm06_rule(norm_ci)  # the full scale's rule: a 90 % interval inside +-1 %
    claim_record("NORM-06", value, expected="0.0016 (37.88 vs 37.82)",
                 tolerance=f"comparison: 90 % interval inside ±{EXACTLY} ('esattamente', TOST)",
                 label="(post+warmup - pre) / pre, warmup 20 %: mean and 90 % interval over the paired seeds")
    if side is None:
        undecided(f"NORM-06 (CI): the 90 % interval {value[1:]} crosses an edge of ±{EXACTLY}")
    assert side, value


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("NORM-07")
@reads(NORM_EQ_CI)
def test_warmup_barely_matters_for_pre_norm(runs_of, claim_record):
    """An equivalence test (TOST): the 90 % interval of the mean paired effect of warmup on
    pre-norm lies inside the catalogue's +-3 % margin (the document's effect: -0.5 %)."""
    norm_eq_ci = runs_of(NORM_EQ_CI)
    pre, pre_wu = norm_eq_ci.val("pre"), norm_eq_ci.val("pre+warmup")
    effect = (pre_wu - pre) / pre
    _, lo, hi = mean_interval(effect)  # the 90 % t interval (TOST_LEVEL)
    claim_record("NORM-07", [round(x, 3) for x in effect], tolerance="reported",
                 label=f"pre-norm: (warmup - none) / none, {len(effect)} seeds")
    claim_record("NORM-07", [round(lo, 4), round(hi, 4)], expected=-0.005,
                 tolerance="comparison: 90 % interval inside [-0.03, 0.03] (TOST at 5 %)",
                 label="pre-norm: 90 % interval of the mean effect of warmup")
    side = within(lo, hi, (-BARELY, BARELY))
    if side is None:
        undecided(f"the 90 % interval [{lo:.4f}, {hi:.4f}] crosses an edge of ±{BARELY}")
    assert side, f"90 % interval [{lo:.4f}, {hi:.4f}] lies outside +-{BARELY}"


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("NORM-07")
@diverges("at CI scale a 20 % warmup leaves post-norm failed, so its effect is "
                   "not shown to be 10x pre-norm's; 50 % does rescue it (values in the report)")
@reads(NORM_CI)
def test_warmup_is_the_patch_that_rescues_post_norm(runs_of, claim_record):
    norm_ci = runs_of(NORM_CI)
    pre, pre_wu = norm_ci.val("pre"), norm_ci.val("pre+warmup")
    post = norm_ci.val("post")
    d_pre = (pre_wu - pre) / pre
    d_post = claim_record("NORM-07", ((norm_ci.val("post+warmup") - post) / post).round(3),
                          expected=-0.877, tolerance="reported",
                          label="post-norm: (warmup - none) / none, per seed, warmup 20 %")
    claim_record("NORM-07", ((norm_ci.val("post+warmup50") - post) / post).round(3),
                 tolerance="reported", label="post-norm: (warmup - none) / none, per seed, warmup 50 %")
    # "a patch for post-norm": warmup's effect on post-norm is more than ten times its effect on
    # pre-norm, as a paired comparison (log of the ratio of the two effects' sizes, above log 10)
    judge("NORM-07", interval(claim_record, "NORM-07", np.log10(np.abs(d_post) / np.abs(d_pre)),
                              lambda lo, hi: beyond(lo, hi, 1.0),
                              "comparison: the 90 % interval of the mean log10 ratio of |effect| on post-norm to "
                              "|effect| on pre-norm above 1 (ten times)", "CI scale: log10 |post effect| / |pre effect|"),
          "warmup matters ten times more for post-norm")


# Each full-scale rule is a function of the runs, so that the diagnosis grid (suite/diagnosis_grids.py)
# judges every point by the verdict's own rule: (value, holds), holds True / False / None
# (claimcheck.rules: an interval inside its band, wholly outside it, or across an edge).
# ``checkpoint``: how a run is read. The intervals are over the declared seeds (NORM_FULL: 3):
# one seed bounds nothing.

HEALTHY = ("pre", "pre+warmup", "post+warmup")
# each printed number of the table, a trained number printed bare: +-5 % of its own value
# (docs/reference/statistics.md), 308.05 included
NORM04_BANDS = {arm: (v * 0.95, v * 1.05) for arm, v in DOC_NORM.items()}
NORM05_RATIO = (7.5, np.nextafter(8.5, 0))   # "otto volte": the ratio rounds to 8, [7.5, 8.5)
NORM05_POST = NORM04_BANDS["post"]


def norm04_rule(runs, checkpoint="final", level=TOST_LEVEL):
    """The table: each arm's mean over the seeds within 5 % of its own printed number (37.82,
    37.62, 308.05, 37.88), each on its 90 % interval (``level``: a grid's second look,
    suite.diagnosis.MoreSeeds), the four joined by suite/rules.py's ``joint`` (one arm outside
    decides only at its Bonferroni level): ({arm: [mean, lo, hi]}, holds). The order of the
    healthy arms, 0.5 % apart, is not the table's to state: NORM-06 and NORM-07 judge it in words."""
    arms = (*HEALTHY, "post")
    shown, holds = joint([(runs.val(arm, checkpoint), (lambda b: lambda lo, hi: within(lo, hi, b))(NORM04_BANDS[arm]))
                          for arm in arms], level)
    return {arm: [round(x, 2) for x in mi] for arm, mi in zip(arms, shown)}, holds


def norm05_rule(runs, checkpoint="final", level=TOST_LEVEL):
    """"otto volte": the mean paired ratio post / pre rounds to 8, and post within 5 % of
    308.05, each on its 90 % interval (``level``, as in norm04_rule), joined as there:
    ({"post / pre": [mean, lo, hi], "post": [...]}, holds)."""
    pre, post = runs.val("pre", checkpoint), runs.val("post", checkpoint)
    (ratio, failed), holds = joint([(post / pre, lambda lo, hi: within(lo, hi, NORM05_RATIO)),  # paired by seed
                                    (post, lambda lo, hi: within(lo, hi, NORM05_POST))], level)
    return {"post / pre": [round(x, 2) for x in ratio], "post": [round(x, 2) for x in failed]}, holds


def _gap_rule(arm, margin, word):
    def rule(runs, checkpoint="final", level=TOST_LEVEL):
        pre, other = runs.val("pre", checkpoint), runs.val(arm, checkpoint)
        m, lo, hi = mean_interval((other - pre) / pre, level)  # paired by seed
        return [round(x, 4) for x in (m, lo, hi)], within(lo, hi, (-margin, margin))
    rule.__doc__ = (f"({arm} - pre) / pre, paired by seed: its 90 % interval (``level``, as in norm04_rule) inside "
                    f"+-{margin} ({word} as an equivalence, TOST): ([mean, lo, hi], holds)")
    return rule


norm06_rule = _gap_rule("post+warmup", EXACTLY, "'esattamente'")
norm07_rule = _gap_rule("pre+warmup", BARELY, "the catalogue's 'barely'")


def _declared(claim, runs):
    """A full-scale NORM verdict is given on its declared seeds, never on part of them (that would
    be peeking): until they are recorded, the test skips and names the command."""
    if len(runs.seeds) < len(runs.scale.seeds):
        pytest.skip(f"{claim} is judged on the {len(runs.scale.seeds)} declared seeds of NORM_FULL and "
                    f"{len(runs.seeds)} are recorded: run `python -m suite.evidence run --family norm --point "
                    f"'norm-full@stated' --seeds {','.join(map(str, runs.scale.seeds))}` (the grid's stated point "
                    "records the family's seeds too)")


def _judge(claim, runs, side, what):
    """Undecided when an interval crosses an edge (or, for a claim of several parts, lies outside
    only at 90 %, not at its Bonferroni level), else the assertion."""
    if side is None:
        undecided(f"{claim} (full): over {len(runs.seeds)} seeds a 90 % interval crosses an edge of its band, or "
                  "a part's lies outside it but not at its Bonferroni level; more seeds would be a new rule, declared before they run")
    assert side, what


@pytest.mark.gpu
@pytest.mark.claim("NORM-04")
@diverges("at full scale the three healthy arms end well above the text's 37.8 (values in the report); "
          "post-norm without warmup stalls near the unigram's perplexity, as the text's 308.05 does")
@reads(NORM_FULL)
def test_the_norm_table_at_full_scale(runs_of, claim_record, claim_figure):
    norm_full = runs_of(NORM_FULL)
    claim_figure("NORM-04", "norm_full_loss_curves", draw_norm(norm_full, "pre vs post-norm, full scale"))
    for arm in ARMS:
        claim_record("NORM-04", norm_full.val(arm).round(2), expected=DOC_NORM[arm],
                     tolerance="reported", label=f"{arm} (full, per seed)")
    _declared("NORM-04", norm_full)
    value, side = norm04_rule(norm_full)
    claim_record("NORM-04", value, expected=DOC_NORM,
                 tolerance=f"joint: 90 % intervals of the seed means, each inside its printed number ± 5 % (bare); "
                           f"an arm outside only at {wide_level(TOST_LEVEL, 4) * 100:.3g} % (claimcheck.rules: joint)",
                 label="the four arms (full): mean and 90 % interval over the seeds", subject=True)
    _judge("NORM-04", norm_full, side, value)


@pytest.mark.gpu
@pytest.mark.claim("NORM-05")
@diverges("at full scale post-norm without warmup fails as the text's does, near 308, but pre-norm ends "
          "well above 37.8, so post is well short of eight times worse (values in the report)")
@reads(NORM_FULL)
def test_post_norm_without_warmup_is_eight_times_worse_at_full_scale(runs_of, claim_record):
    norm_full = runs_of(NORM_FULL)
    pre, post = norm_full.val("pre"), norm_full.val("post")
    claim_record("NORM-05", post.round(2), expected=DOC_NORM["post"], tolerance="reported",
                 label="post-norm without warmup (full, per seed)")
    # "otto volte": eight, so the ratio rounds to 8; 308.05, a trained number printed bare, +-5 %.
    # (308.05 is about the unigram's perplexity, 306.6 on our split: the failed run predicts
    # frequencies only.)
    claim_record("NORM-05", (post / pre).round(2), expected=8.15, tolerance="reported", label="post / pre (full, per seed)")
    _declared("NORM-05", norm_full)
    value, side = norm05_rule(norm_full)
    claim_record("NORM-05", value, expected={"post / pre": 8.15, "post": DOC_NORM["post"]},
                 tolerance=f"joint: 90 % intervals: the mean paired ratio inside [7.5, 8.5), post inside 308.05 ± 5 %; "
                           f"either outside only at {wide_level(TOST_LEVEL, 2) * 100:.3g} % (claimcheck.rules: joint)",
                 label="post / pre and post (full): mean and 90 % interval", subject=True)
    _judge("NORM-05", norm_full, side, value)


@pytest.mark.gpu
@pytest.mark.claim("NORM-06")
@diverges("at full scale post-norm with warmup ends well below pre-norm without it, not level with it "
          "(values in the report)")
@reads(NORM_FULL)
def test_post_norm_with_warmup_matches_pre_norm_at_full_scale(runs_of, claim_record):
    norm_full = runs_of(NORM_FULL)
    _declared("NORM-06", norm_full)
    value, side = norm06_rule(norm_full)
    claim_record("NORM-06", value, expected="0.0016 (37.88 vs 37.82)",
                 tolerance=f"comparison: 90 % interval inside ±{EXACTLY} ('esattamente', TOST)",
                 label="(post+warmup - pre) / pre (full): mean and 90 % interval over the paired seeds", subject=True)
    _judge("NORM-06", norm_full, side, value)


@pytest.mark.gpu
@pytest.mark.claim("NORM-07")
# No ``diverges`` mark: the recorded seeds leave NORM-07 undecided, and a mark is for a divergence
# the evidence shows. A rerun that decides against the text reads *fails* until it is recorded.
@reads(NORM07_FULL)
def test_warmup_barely_matters_for_pre_norm_at_full_scale(runs_of, claim_record):
    """``norm07_rule``'s quantity at the looks of catalogue.NORM07_LOOKS (its grid keeps NORM_FULL's
    three seeds)."""
    norm07_full = runs_of(NORM07_FULL)
    pre, pre_wu = norm07_full.val("pre"), norm07_full.val("pre+warmup")
    look = interval_looks(claim_record, "NORM-07", (pre_wu - pre) / pre, lambda lo, hi: within(lo, hi, (-BARELY, BARELY)),
                          f"comparison: the interval inside ±{BARELY} (the catalogue's 'barely', TOST)",
                          "(pre+warmup - pre) / pre (full), paired by seed", NORM07_LOOKS, norm07_full.prefix(),
                          expected=-0.005)
    judge_look("NORM-07", look, "warmup barely matters for pre-norm", doc=-0.005)


# ---- the diagnosis of each divergence: its rule at every point of its grid (suite/diagnosis_grids.py) ----

from suite.evidence.families import recorded_runs  # noqa: E402
from suite.diagnosis import diagnosis_test  # noqa: E402
from suite.diagnosis_grids import NORM_GRIDS  # noqa: E402

test_norm04_diagnosis = diagnosis_test(NORM_GRIDS["NORM-04"], norm04_rule, recorded_runs)
test_norm05_diagnosis = diagnosis_test(NORM_GRIDS["NORM-05"], norm05_rule, recorded_runs)
test_norm06_diagnosis = diagnosis_test(NORM_GRIDS["NORM-06"], norm06_rule, recorded_runs)
test_norm07_diagnosis = diagnosis_test(NORM_GRIDS["NORM-07"], norm07_rule, recorded_runs)


# ---- NORM-08: how the gradient at initialisation scales with depth ----------------------------

NORM08_DEPTHS = (2, 16)


def _last_block_grad(norm: str, n_layer: int, seed: int) -> float:
    """The last block's gradient norm at initialisation, one batch of 16 windows of 32 uniform
    random tokens, the chapter's width (128)."""
    from dataclasses import replace
    from experiments.configs import shakespeare_config
    from model import GPT
    cfg = replace(shakespeare_config(n_layer=n_layer, norm=norm), block_size=32)
    g = torch.Generator().manual_seed(seed)
    w = torch.randint(cfg.vocab_size, (16, 33), generator=g)
    torch.manual_seed(seed)
    model = GPT(cfg)
    # Only the last block's gradients are read: the backward pass stops there, with the same values
    # (bit for bit: nothing above the last block depends on what below it requires a gradient).
    model.requires_grad_(False)
    model.blocks[-1].requires_grad_(True)
    model(w[:, :-1], w[:, 1:])[1].backward()
    return torch.sqrt(sum((p.grad ** 2).sum() for p in model.blocks[-1].parameters())).item()


@pytest.mark.fast
@pytest.mark.scale("analytic")
@pytest.mark.claim("NORM-08")
def test_post_norms_gradient_at_init_scales_with_depth_as_pre_norms_does_not(claim_record):
    """"il gradiente all'inizializzazione, che in una rete post-norm è scalato male con la
    profondità" (Xiong et al.: pre-norm's last-layer gradient shrinks with depth, post-norm's does
    not): per seed, log(post / pre) of the last block's gradient norm grows from 2 to 16 blocks;
    the 90 % interval of the mean paired growth above 0 (comparison). The rule was written
    before the sweep first ran."""
    from suite.settings import seeds
    r = {L: np.array([np.log(_last_block_grad("post", L, s) / _last_block_grad("pre", L, s)) for s in seeds(*range(5))])
         for L in NORM08_DEPTHS}
    for L in NORM08_DEPTHS:
        claim_record("NORM-08", np.round(np.exp(r[L]), 3), tolerance="reported",
                     label=f"post / pre, the last block's gradient norm at init, {L} blocks, per seed")
    judge("NORM-08", interval(claim_record, "NORM-08", r[16] - r[2], above(0),
                              "comparison: the 90 % interval of the mean paired growth of log(post / pre) "
                              "from 2 to 16 blocks above 0", "log(post / pre) at 16 blocks - at 2"),
          "post-norm's gradient at init scales worse with depth than pre-norm's")
