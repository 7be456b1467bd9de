"""IT 3.8 The ablation ladder: its parameter arithmetic (its perplexities are the slow tier)."""

import numpy as np
import pytest

from experiments.configs import ladder
from model import GPT
from model.params import count
from suite.catalogue import ABL05_LOOKS, LADDER_LOOKS
from suite.rules import ladder_gap
from claimcheck.rules import beyond, interval, interval_looks, joint_looks, judge, judge_look, within
from suite.reading import reads
from suite.catalogue import LADDER_CI, LADDER_FULL, LADDER_LN_FULL

# At CI scale a gap's size is not the document's; only its sign is measured (the weaker form).
CI_SIGN = "comparison (CI scale: the sign only): the 90 % interval of the mean paired gap above 0"







@pytest.mark.fast
@pytest.mark.claim("ABL-02")
def test_four_heads_cost_one_output_projection(claim_record):
    r = ladder()
    extra = claim_record("ABL-02", count(GPT(r["4-heads"])) - count(GPT(r["head-added"])),
                         expected=16_512, tolerance="exact", label="extra parameters")
    assert extra == 128 * 128 + 128 == 16_512


@pytest.mark.fast
@pytest.mark.claim("ABL-05")
def test_layernorm_costs_768_parameters(claim_record):
    r = ladder()
    extra = claim_record("ABL-05", count(GPT(r["+layernorm"])) - count(GPT(r["+mlp"])),
                         expected=768, tolerance="exact", label="LayerNorm parameters")
    assert extra == 3 * 2 * 128 == 768  # ln1, ln2, ln_f: gain and bias each


@pytest.mark.fast
@pytest.mark.claim("ABL-06")
def test_the_shakespeare_model_is_about_half_a_million_parameters(claim_record):
    # "500.000" is a round figure: one significant digit, so half a unit of it is ± 50,000
    claim_record("ABL-06", count(GPT(ladder()["+layernorm"])), expected=500_000, band=(450_000, 550_000),
                 tolerance="exact: '500.000' read as a round figure, half a unit of its one significant digit")


# ---- training claims ----------------------------------------------------------------------



def draw_ladder(ladder, title):
    """Bar chart, document beside measured, and the validation curve of every rung."""
    from suite.catalogue import DOC_LADDER

    def draw(fig):
        names = list(ladder.scale.arms)
        ax1, ax2 = fig.subplots(1, 2)
        fig.set_size_inches(12, 4.5)
        x = np.arange(len(names))
        doc = [DOC_LADDER[n][0] for n in names]
        vals = np.array([ladder.val(n) for n in names])  # (rungs, seeds)
        ax1.bar(x - 0.2, doc, 0.4, label="document (full scale; hatched: derived)", color="tab:gray",
                hatch=None)
        for i, n in enumerate(names):
            if DOC_LADDER[n][1]:
                ax1.bar(x[i] - 0.2, doc[i], 0.4, color="none", edgecolor="white", hatch="//")
        ax1.bar(x + 0.2, vals.mean(1), 0.4, yerr=[vals.mean(1) - vals.min(1), vals.max(1) - vals.mean(1)],
                label=f"measured ({ladder.scale.name}, {len(ladder.seeds)} seeds)", color="tab:blue")
        ax1.set(xticks=x, ylabel="validation perplexity", title=title, yscale="log")
        ax1.set_xticklabels(names, rotation=45, ha="right")
        ax1.legend(fontsize=8)
        for n in names:
            curve = ladder.run(n, ladder.seeds[0]).curve
            ax2.plot(curve["step"], curve["val_ppl"], marker="o", label=n)
        ax2.set(xlabel="step", ylabel="val perplexity (seed %d)" % ladder.seeds[0], yscale="log")
        ax2.legend(fontsize=7, ncol=2)

    return draw


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("ABL-01")
@reads(LADDER_CI)
def test_learned_weights_beat_uniform_weights(runs_of, claim_record, claim_figure):
    ladder_ci = runs_of(LADDER_CI)
    gap = claim_record("ABL-01", ladder_ci.val("mean+residual") - ladder_ci.val("head-added"),
                       expected=14, tolerance="reported", label="CI scale: uniform - learned, per seed")
    claim_figure("ABL-01", "ladder_ci", draw_ladder(ladder_ci, "the ablation ladder, CI scale"))
    judge("ABL-01", interval(claim_record, "ABL-01", gap, lambda lo, hi: beyond(lo, hi, 0), CI_SIGN, "CI scale: uniform - learned",
                             expected=14), "learned weights beat uniform")


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("ABL-02")
@reads(LADDER_CI)
def test_four_heads_beat_one(runs_of, claim_record):
    ladder_ci = runs_of(LADDER_CI)
    gap = claim_record("ABL-02", ladder_ci.val("head-added") - ladder_ci.val("4-heads"),
                       expected=3, tolerance="reported", label="CI scale: 1 head - 4 heads, per seed")
    judge("ABL-02", interval(claim_record, "ABL-02", gap, lambda lo, hi: beyond(lo, hi, 0), CI_SIGN, "CI scale: 1 head - 4 heads",
                             expected=3), "four heads beat one")


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("ABL-03")
@reads(LADDER_CI)
def test_a_head_added_beats_the_same_head_replacing(runs_of, claim_record):
    ladder_ci = runs_of(LADDER_CI)
    gap = claim_record("ABL-03", ladder_ci.val("head-replacing") - ladder_ci.val("head-added"),
                       expected=9, tolerance="reported", label="CI scale: replacing - added, per seed")
    judge("ABL-03", interval(claim_record, "ABL-03", gap, lambda lo, hi: beyond(lo, hi, 0), CI_SIGN, "CI scale: replacing - added",
                             expected=9), "a head added beats the same head replacing")


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("ABL-04")
@reads(LADDER_CI)
def test_the_residual_matters_far_more_for_the_mean_than_for_a_head(runs_of, claim_record):
    ladder_ci = runs_of(LADDER_CI)
    mean_gain = ladder_ci.val("mean") - ladder_ci.val("mean+residual")
    head_gain = ladder_ci.val("head-replacing") - ladder_ci.val("head-added")
    ratio = claim_record("ABL-04", mean_gain / head_gain, expected=188 / 9, tolerance="reported",
                         label="CI scale: residual's gain, mean / head, per seed")
    judge("ABL-04", interval(claim_record, "ABL-04", ratio, lambda lo, hi: beyond(lo, hi, 5),
                             "comparison (CI scale: 'far more' only): the 90 % interval of the mean paired ratio above 5",
                             "CI scale: residual's gain, mean / head", expected=188 / 9),
          "the residual's gain for the mean is more than 5x a head's")


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("ABL-05")
@reads(LADDER_CI)
def test_layernorm_helps_a_little(runs_of, claim_record):
    ladder_ci = runs_of(LADDER_CI)
    gap = claim_record("ABL-05", ladder_ci.val("+mlp") - ladder_ci.val("+layernorm"),
                       expected=1.8, tolerance="reported", label="CI scale: without - with LN, per seed")
    judge("ABL-05", interval(claim_record, "ABL-05", gap, lambda lo, hi: beyond(lo, hi, 0), CI_SIGN, "CI scale: without - with LN",
                             expected=1.8), "LayerNorm helps")


@pytest.mark.slow
@reads(LADDER_CI, fresh=True)
def test_the_ci_ladder_matches_its_pin(runs_of, pin):
    """Per-seed perplexities of every rung, and the first logged training loss."""
    ladder_ci = runs_of(LADDER_CI)
    values = {f"{r}/val": ladder_ci.val(r) for r in LADDER_CI.arms}
    values.update({f"{r}/train": ladder_ci.train(r) for r in LADDER_CI.arms})
    values.update({f"{r}/early": [ladder_ci.run(r, s).curve["loss"][0] for s in LADDER_CI.seeds]
                   for r in LADDER_CI.arms})
    pin("ladder_ci", values, meaning="val and train perplexity per rung "
        "(rows: seeds 0, 1, 2) of the ablation ladder at CI scale; /early: mean training loss over "
        "its first 250 steps", config={"scale": LADDER_CI.name, "train": LADDER_CI.train,
                                                       "arms": list(LADDER_CI.arms), "seeds": LADDER_CI.seeds})


# Full scale. A gap between two trained numbers is judged by the word table's row for gaps
# (suite.rules.ladder_gap), on the interval of the mean paired gap over the first seeds of each
# declared look (catalogue.LADDER_LOOKS, a sequential design).

def _full_gap(claim_record, cid, gap, doc, without, with_, label, available):
    band, text = ladder_gap(doc, without, with_)
    claim_record(cid, gap.round(2), expected=doc, tolerance="reported", label=f"{label}, per seed")
    return interval_looks(claim_record, cid, gap, lambda lo, hi: within(lo, hi, band),
                          f"equivalence: the interval of the mean paired gap inside {text}",
                          label, LADDER_LOOKS, available, expected=doc)


@pytest.mark.gpu
@pytest.mark.claim("ABL-01")
@reads(LADDER_FULL)
def test_learned_weights_beat_uniform_by_14_at_full_scale(runs_of, claim_record, claim_figure):
    ladder_full = runs_of(LADDER_FULL)
    claim_figure("ABL-01", "ladder_full", draw_ladder(ladder_full, "the ablation ladder, full scale"))
    gap = ladder_full.val("mean+residual") - ladder_full.val("head-added")
    judge_look("ABL-01", _full_gap(claim_record, "ABL-01", gap, 14, "mean+residual", "head-added",
                                   "full scale: uniform - learned", ladder_full.prefix()), "14 points", doc=14)


def _ladder_gap(ladder_full, claim_record, cid, without, with_, doc):
    gap = ladder_full.val(without) - ladder_full.val(with_)
    judge_look(cid, _full_gap(claim_record, cid, gap, doc, without, with_, f"full scale: {without} - {with_}",
                              ladder_full.prefix()), f"{doc} points", doc=doc)


@pytest.mark.gpu
@pytest.mark.claim("ABL-02")
@reads(LADDER_FULL)
def test_four_heads_buy_3_points_at_full_scale(runs_of, claim_record):
    ladder_full = runs_of(LADDER_FULL)
    _ladder_gap(ladder_full, claim_record, "ABL-02", "head-added", "4-heads", 3)


@pytest.mark.gpu
@pytest.mark.claim("ABL-03")
@reads(LADDER_FULL)
def test_the_residual_is_worth_9_for_a_head_at_full_scale(runs_of, claim_record):
    ladder_full = runs_of(LADDER_FULL)
    _ladder_gap(ladder_full, claim_record, "ABL-03", "head-replacing", "head-added", 9)


@pytest.mark.gpu
@pytest.mark.claim("ABL-04")
@reads(LADDER_FULL)
def test_the_residual_is_worth_188_for_the_mean_at_full_scale(runs_of, claim_record):
    """"valgono 188 punti di perplexity per la media e 9 per una head": both gaps, jointly."""
    ladder_full = runs_of(LADDER_FULL)
    pairs = {188: ("mean", "mean+residual"), 9: ("head-replacing", "head-added")}
    parts = []
    for doc, (without, with_) in pairs.items():
        gap = ladder_full.val(without) - ladder_full.val(with_)
        claim_record("ABL-04", gap.round(2), expected=doc, tolerance="reported",
                     label=f"full scale: {without} - {with_}, per seed")
        band, _ = ladder_gap(doc, without, with_)
        parts.append((f"full scale: {without} - {with_}", gap, (lambda b: lambda lo, hi: within(lo, hi, b))(band)))
    texts = "; ".join(ladder_gap(doc, *pair)[1] for doc, pair in pairs.items())
    judge_look("ABL-04", joint_looks(claim_record, "ABL-04", parts, f"joint: each interval of the mean paired gap "
                                     f"inside its band: {texts}", LADDER_LOOKS, ladder_full.prefix()),
               "188 points for the mean and 9 for a head")


@pytest.mark.gpu
@pytest.mark.claim("ABL-05")
@reads(LADDER_LN_FULL)
def test_layernorm_buys_1_8_at_full_scale(runs_of, claim_record):
    """1.8 by the word table's gap row (the chapter's +mlp and +layernorm rungs, derived, each ± 5 %,
    in quadrature); the effect is small beside the seed spread, so it is the mean paired gap over
    the declared looks' seeds (catalogue.ABL05_LOOKS), whose interval must lie inside the band."""
    ladder_ln_full = runs_of(LADDER_LN_FULL)
    gap = ladder_ln_full.val("+mlp") - ladder_ln_full.val("+layernorm")  # paired by seed
    claim_record("ABL-05", gap.round(2), expected=1.8, tolerance="reported",
                 label=f"full scale: without - with LN, seeds {list(ladder_ln_full.seeds)}")
    band, text = ladder_gap(1.8, "+mlp", "+layernorm")
    look = interval_looks(claim_record, "ABL-05", gap, lambda lo, hi: within(lo, hi, band),
                          f"equivalence: the interval of the mean paired gap inside {text}",
                          "full scale: without - with LN", ABL05_LOOKS, ladder_ln_full.prefix(), expected=1.8)
    judge_look("ABL-05", look, "1.8 points", doc=1.8)
