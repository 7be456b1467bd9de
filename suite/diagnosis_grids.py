"""The diagnosis grid of every full-scale training claim that diverges (suite/diagnosis.py),
declared before its results exist: which unstated settings are tried, and why each.

Each point is recorded by ``python -m suite.evidence grid <ID>`` under
``fixtures/evidence/<family>/explore/<point>/``; the claim's test module applies the claim's own
rule to every point (``suite.diagnosis``), beside the verdict and never instead of it. The
setup audit that found what is stated and what is not: docs/reference/setup-audit.md.

The Winograd grids (WINOGRAD_GRIDS) vary a WinogradScale and the Polish lab's (LAB_GRIDS) a
LabScale, whose stated runs the slow tier trains; their points are recorded by
``python -m suite.evidence winograd`` and ``python -m suite.evidence lab`` under
``fixtures/evidence/{winograd,lab}/explore/<point>/``. NORM-03's grid measures gradients at
initialisation (experiments/grad_norms.py; catalogue.NORM03_GRADS) and is declared in claims/test_norm.py.
"""

from dataclasses import replace

from suite.catalogue import (
                             DEPTH_FULL,
                             LADDER_FULL,
                             NORM_FULL,
                             SQRT09_FULL,
                             SQRT32_FULL,
                             SQRT1024_FULL,
                             SQRT_WORTH_FULL,
                             TINY_LAB,
                             WINOGRAD,
)
from suite.diagnosis import Axis, Grid, MoreSeeds

# ---- pre- vs post-norm: NORM-04 .. NORM-07 read the same four arms ---------------------------
# The stated configuration with a validation curve every 50 steps (the verdict's records have
# only the last step): evaluation draws no random numbers, so the runs are the same runs, and
# recording this point records the family's own seeds with it (suite/evidence/families.py same_run).
_NORM_CURVE = {"train.eval_every": 50}
_NORM_AXES = (
    Axis("read.checkpoint", ("final", "best"),
         "L148 prints one perplexity per arm, not whether from the last step or the best validation; "
         "our arms overfit (pre: train 9.6, val 53.1), where the two differ"),
    Axis("model.dropout", (0.0, 0.1),
         "L163 names dropout's sites but no rate; 1000 x 64 x 128 is 20 passes over the training "
         "split, where a rate guards against overfitting"),
    Axis("train.weight_decay", (0.01, 0.1),
         "'AdamW' only (L142 by way of L13): 0.01 is torch's default, 0.1 GPT-2's"),
)
# A second look (declared after seeds 0-2 were read, before seeds 3-9 ran): at the best checkpoint
# NORM-05's post / pre is 8.20 [7.66, 8.74] against [7.5, 8.5) and NORM-06's gap +0.0007
# [-0.0385, 0.0398] against +-0.03, both undecided on three seeds. Judged at 97.5 % on the fresh
# seeds alone (3-9), as every second look is; the arms are the ones the two rules read.
_MORE, _MORE_LEVEL = tuple(range(3, 10)), 0.975
_NORM_MORE = MoreSeeds(_MORE, ("pre", "post", "post+warmup"),
                       f"seeds 0-2 left the best checkpoint undecided; the fresh seeds {_MORE[0]}-{_MORE[-1]} (as "
                       f"declared), judged at a {_MORE_LEVEL * 100:g} % interval since this is a second look "
                       "(suite.diagnosis.MoreSeeds)",
                       level=_MORE_LEVEL)
NORM_GRIDS = {cid: Grid(cid, NORM_FULL, _NORM_AXES, base=_NORM_CURVE,
                        more_seeds=_NORM_MORE if cid in ("NORM-05", "NORM-06") else None)
              for cid in ("NORM-04", "NORM-05", "NORM-06", "NORM-07")}

# ---- two blocks overfit: DEPTH-01 ------------------------------------------------------------
# on the first look's three seeds, as declared before the verdict's schedule grew (catalogue.DEPTH_LOOKS)
DEPTH_GRID = Grid("DEPTH-01", replace(DEPTH_FULL, declared_seeds=DEPTH_FULL.declared_seeds[:3]), (
    Axis("read.checkpoint", ("final", "best"),
         "L252 gives one train and one val perplexity per model, not from which step; our two-block "
         "validation bottoms at step 2000 and then rises"),
    Axis("model.dropout", (0.0, 0.1),
         "the ladder states no dropout rate (L163 names the sites only); 3000 x 64 x 128 is 59 passes "
         "over the split, where dropout changes how far two blocks overfit"),
))

# ---- the undivided head runs away: SQRT-11 -----------------------------------------------------
SQRT11_GRID = Grid("SQRT-11", SQRT1024_FULL, (
    Axis("train.lr", (1e-3, 3e-3, 3e-4, 1e-2, 3e-2, 1e-1),
         "the short runs' rate is unstated (L112); how far q.k grows toward 5147 depends on the step size: the "
         "score std climbs with the rate (50 at 3e-4, 249 at 1e-3, 827 at 3e-3, seed 0), so the rate is raised "
         "by about 3x until the std reaches 5147 or the run breaks"),
    Axis("train.weight_decay", (0.01, 0.0),
         "'AdamW' only; decay pulls W_q and W_k back, capping how far the scores can grow"),
))

# ---- the divided head's 3.44: SQRT-13 ------------------------------------------------------------
# The same runs as SQRT-11's grid (the d_k = 1024 pair), read for the divided head: how far its
# scores grow depends on the same unstated rate and decay.
SQRT13_GRID = Grid("SQRT-13", SQRT1024_FULL, SQRT11_GRID.axes)

# ---- the division's worth across widths: SQRT-14 -------------------------------------------------
# Declared before the grid's runs exist, with the rule it judges (claims/test_sqrt_dk.py sqrt14_rule).
# The short rows' rate and decay are unstated (L112), and how much the division is worth at each
# width is how far 1500 steps take the undivided head, which the step size sets: the stated 1e-3
# first, then a factor of about 3 either way and 1e-2 (the runs break near 3e-2 at 1024, SQRT-11's
# grid); decay off, as with SQRT-11's.
SQRT14_GRID = Grid("SQRT-14", SQRT_WORTH_FULL, (
    Axis("train.lr", (1e-3, 3e-4, 3e-3, 1e-2),
         "the short runs' rate is unstated (L112); the worth of the division at each width is how far the "
         "undivided head runs away in 1500 steps, which the step size sets"),
    Axis("train.weight_decay", (0.01, 0.0),
         "'AdamW' only; decay pulls W_q and W_k back, and so the undivided head's growth at every width"),
))

# ---- d_k = 32: SQRT-09 -------------------------------------------------------------------------
_LN_RUNG = LADDER_FULL.arms["+layernorm"]
SQRT09_LN_FULL = replace(SQRT09_FULL, name=f"{SQRT09_FULL.name}@rung=+layernorm",
                         arms={"div-32": _LN_RUNG, "nodiv-32": replace(_LN_RUNG, scale_scores=False)})
SQRT09_GRID = Grid("SQRT-09", SQRT09_FULL, (
    Axis("model.mlp", (False, True),
         "which 3000-step rung the table's d_k = 32 row used is unstated: 4-heads, or +mlp (still 4 x 32)"),
), fixed="d_k = 32 is the ladder's 4-heads rung (heads 32 wide) at the ladder's 3000 steps, batch 64; "
         "it was one 32-wide head at 1500 steps, batch 32 (docs/reference/setup-audit.md §2)",
    alternatives=(("one head of 32, 1500 steps, batch 32",
                   "the table's other reading: 32 as a third short row (L112's 'una head')", SQRT32_FULL),
                  ("the +layernorm rung, 4 heads of 32, 3000 steps",
                   "'nessuna normalizzazione prima delle proiezioni' (L112) is named as what sets the short rows "
                   "apart, so the 3000-step rows likely had LayerNorm before the projections: the ladder's "
                   "+layernorm rung, still 4 x 32 (docs/reference/setup-audit.md §2)", SQRT09_LN_FULL)))

GRIDS = {**NORM_GRIDS, "DEPTH-01": DEPTH_GRID, "SQRT-11": SQRT11_GRID, "SQRT-13": SQRT13_GRID, "SQRT-14": SQRT14_GRID,
         "SQRT-09": SQRT09_GRID}

# ---- the Winograd task: WINO-02, -07, -09, -10, -11 ---------------------------------------------
# One set of points shared by the five claims (a point is one WinogradScale, trained once); each
# claim's grid takes the axes that can move it. The stated point is the verdict's own runs: the
# held-out sizes fixed by the setup audit (docs/reference/setup-audit.md §5), everything else our choice.
_WINO_STEPS = Axis("scale.steps", (1500, 3000),
                   "the chapter states no steps (IT L206-239); a model still improving at 1500 may close a gap "
                   "or open one")
_WINO_LR = Axis("scale.lr", (3e-3, 1e-3), "the chapter states no learning rate")
_WINO_WIDTH = Axis("scale.d_model", (64, 32, 128),
                   "the chapter states no width; a narrower model may not fit the task, a wider one fits it sooner")
_WINO_BEST = Axis("read.checkpoint", ("final", "best"),
                  "one accuracy per model is printed, not from which step; 'best' is the 250-step evaluation with "
                  "the highest accuracy on half the held-out pairs (the first, third, ...), scored on the other "
                  "half: how a text might read its one model, chosen apart from where it is reported")
_WINO_SENTENCE = Axis("read.sentence", ("trained", "held-out"),
                      "the maps' sentence is 'the animal did not cross the street' (L223); whether it was held out "
                      "is unstated, and ours is a training pair in both orders")
_WINO_FIXED_SIZE = Axis("scale.fixed_held_pairs", (43, 48, 60),
                        "92.7 % and 27.9 % (L239, L219) are counts over 344, 384 or 480 held-out sentences "
                        "(43, 48 or 60 pairs); ours is the smallest of them")
_WINO_LEAKY_SIZE = Axis("scale.leaky_held_pairs", (15, 12),
                        "91.7 % (L209) is 110/120 or 88/96: 15 or 12 held-out pairs")
_WINO_LEAKY_STEPS = Axis("scale.leaky_block_steps", (1000, 1500),
                         "our leaky one block trains 1000 steps and the bag 1500; the chapter states neither")
WINOGRAD_GRIDS = {
    "WINO-02": Grid("WINO-02", WINOGRAD, (_WINO_BEST, _WINO_LEAKY_SIZE, _WINO_LEAKY_STEPS, _WINO_STEPS, _WINO_LR,
                                          _WINO_WIDTH), checks=3),
    "WINO-07": Grid("WINO-07", WINOGRAD, (_WINO_BEST, _WINO_FIXED_SIZE, _WINO_STEPS, _WINO_LR, _WINO_WIDTH), checks=2),
    "WINO-09": Grid("WINO-09", WINOGRAD, (_WINO_SENTENCE, _WINO_FIXED_SIZE, _WINO_STEPS, _WINO_LR, _WINO_WIDTH), checks=2),
    "WINO-10": Grid("WINO-10", WINOGRAD, (_WINO_SENTENCE, _WINO_FIXED_SIZE, _WINO_STEPS, _WINO_LR, _WINO_WIDTH), checks=3),
    "WINO-11": Grid("WINO-11", WINOGRAD, (_WINO_BEST, _WINO_FIXED_SIZE, _WINO_STEPS, _WINO_LR, _WINO_WIDTH), checks=2),
}

# ---- the Polish lab: TINY-14, -16, -27 ----------------------------------------------------------------
# Each is a rate over the lab's 100 starts (suite/lab_rules.py), read with positions (TINY-27 without). The lab's
# text is a substitute (docs/reference/setup-audit.md §6), so no point can make ours the chapter's own runs.
_LAB_LR = Axis("lab.lr", (3e-3, 1e-3, 1e-2),
               "the lab states no learning rate (PL); how far training goes by 3,200 and 6,400 steps, and so "
               "whether test still falls between them and where validation bottoms, depends on it")
_LAB_SMOOTHING = Axis("read.smoothing", ("add-k", "interpolated"),
                      "the 3-gram's smoothing is unstated (L25 gives only its 8.26); ours is add-k with k chosen on "
                      "validation, and a mix of the 1-, 2- and 3-gram (weights chosen on validation) counts better")
LAB_GRIDS = {
    "TINY-14": Grid("TINY-14", TINY_LAB, (_LAB_LR,)),
    "TINY-16": Grid("TINY-16", TINY_LAB, (_LAB_SMOOTHING, _LAB_LR)),
    # read without positions, and the smoothing is the 2-gram's
    "TINY-27": Grid("TINY-27", TINY_LAB, (_LAB_SMOOTHING, _LAB_LR)),
}
# Which of the lab's two arms each grid reads at its trained points (the stated runs have both).
LAB_GRID_ARMS = {"TINY-14": ("positions",), "TINY-16": ("positions",), "TINY-27": ("no-positions",)}
