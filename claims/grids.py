"""The diagnosis grid of every full-scale training claim that diverges (claims/diagnosis.py),
declared before its results exist: which unstated settings are tried, and why each.

Each point is recorded by ``python -m claims.evidence grid <ID>`` under
``fixtures/evidence/<family>/explore/<point>/``; the claim's test module applies the claim's own
rule to every point (``claims.diagnosis``), beside the verdict and never instead of it. The
setup audit that found what is stated and what is not: docs/setup-audit.md.

Not here yet: the Winograd (WINO-02, -07, -09, -10, -11) and Polish-lab (TINY-14, -16) grids,
which vary a WinogradScale or a LabScale, and NORM-03's, which measures gradients at
initialisation and is computed in claims/test_norm.py.
"""
from dataclasses import replace

from claims.diagnosis import Axis, Grid
from claims.scales import DEPTH_FULL, NORM_FULL, SQRT09_FULL, SQRT1024_FULL, SQRT32_FULL

# ---- pre- vs post-norm: NORM-04 .. NORM-07 read the same four arms ---------------------------
# The stated configuration with a validation curve every 50 steps (the verdict's records have
# only the last step): evaluation draws no random numbers, so the runs are the same runs.
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
NORM_GRIDS = {cid: Grid(cid, NORM_FULL, _NORM_AXES, base=_NORM_CURVE)
              for cid in ("NORM-04", "NORM-05", "NORM-06", "NORM-07")}

# ---- two blocks overfit: DEPTH-01 ------------------------------------------------------------
DEPTH_GRID = Grid("DEPTH-01", DEPTH_FULL, (
    Axis("read.checkpoint", ("final", "best"),
         "L252 gives one train and one val perplexity per model, not from which step; our two-block "
         "validation bottoms at step 2000 and then rises"),
    Axis("model.dropout", (0.0, 0.1),
         "the ladder states no dropout rate (L163 names the sites only); 3000 x 64 x 128 is 59 passes "
         "over the split, where dropout changes how far two blocks overfit"),
))

# ---- the undivided head runs away: SQRT-11 -----------------------------------------------------
SQRT11_GRID = Grid("SQRT-11", SQRT1024_FULL, (
    Axis("train.lr", (1e-3, 3e-3, 3e-4),
         "the short runs' rate is unstated (L112); how far q.k grows toward 5147 depends on the step size"),
    Axis("train.weight_decay", (0.01, 0.0),
         "'AdamW' only; decay pulls W_q and W_k back, capping how far the scores can grow"),
))

# ---- d_k = 32: SQRT-09 -------------------------------------------------------------------------
SQRT09_GRID = Grid("SQRT-09", SQRT09_FULL, (
    Axis("model.mlp", (False, True),
         "which 3000-step rung the table's d_k = 32 row used is unstated: 4-heads, or +mlp (still 4 x 32)"),
), fixed="d_k = 32 is the ladder's 4-heads rung (heads 32 wide) at the ladder's 3000 steps, batch 64; "
         "it was one 32-wide head at 1500 steps, batch 32 (docs/setup-audit.md §2)",
    alternatives=(("one head of 32, 1500 steps, batch 32",
                   "the table's other reading: 32 as a third short row (L112's 'una head')", SQRT32_FULL),))

GRIDS = {**NORM_GRIDS, "DEPTH-01": DEPTH_GRID, "SQRT-11": SQRT11_GRID, "SQRT-09": SQRT09_GRID}
