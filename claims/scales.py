"""The two scales of every training claim: ``ci`` (CPU, minutes, several seeds) and ``full``
(the document's configuration, the gpu tier). A test is the same code at both scales; only
the config and the strength of the assertion differ.

``CLAIMS_SEED_OFFSET=k`` shifts every training seed of the suite by k, so that anyone can check
that no verdict depends on the seeds it happens to run (pins, generated at 0, then skip).
"""
import os
from dataclasses import dataclass, field, replace

from model import ladder, shakespeare_config, sqrt_dk_config
from experiments.runs import RunSpec
from experiments.polish_lab import LabConfig
from experiments.train import SHAKESPEARE_FULL, TrainConfig


def seed_offset() -> int:
    """CLAIMS_SEED_OFFSET as an int (0 when unset); the root conftest rejects anything else."""
    return int(os.environ.get("CLAIMS_SEED_OFFSET") or 0)


def seeds(*base: int) -> tuple[int, ...]:
    """The seeds a family trains, shifted by CLAIMS_SEED_OFFSET."""
    return tuple(s + seed_offset() for s in base)


@dataclass(frozen=True)
class Scale:
    name: str
    rungs: dict            # rung name -> GPTConfig
    train: TrainConfig
    seeds: tuple[int, ...]
    train_slice: float = 1.0
    trains: dict = field(default_factory=dict)  # rung -> its own TrainConfig (e.g. a warmup)

    def spec(self, rung: str, seed: int, device="cpu") -> RunSpec:
        return RunSpec(self.rungs[rung], self.trains.get(rung, self.train), seed=seed, train_slice=self.train_slice,
                       device=str(device), label=f"{self.name}/{rung}/seed{seed}")

    def specs(self, rungs=None, device="cpu") -> list[RunSpec]:
        return [self.spec(r, s, device) for s in self.seeds for r in (rungs or self.rungs)]


# CI scale: half the width and window, a third of the steps at 3x the rate, a quarter of the
# batch. 1000 x 16 x 64 = 1.0 M predictions (the document: 24.6 M). Three seeds.
LADDER_CI = Scale("ladder-ci", ladder(shakespeare_config(d_model=64, block_size=64)),
                  TrainConfig(steps=1000, batch_size=16, lr=3e-3, eval_every=250),
                  seeds=seeds(0, 1, 2))

# The document's own: width 128, window 128, 3000 AdamW steps at 1e-3, batch 64.
LADDER_FULL = Scale("ladder-full", ladder(shakespeare_config()),
                    replace(SHAKESPEARE_FULL, log_every=500), seeds=seeds(0))

# DEPTH-01 at CI scale: the document's 3000 steps make ~59 passes over the corpus, which is
# where two blocks overfit. 1.0 M predictions over a 10 % slice make ~25 passes.
DEPTH_CI = replace(LADDER_CI, name="depth-ci", rungs={k: LADDER_CI.rungs[k] for k in ("+layernorm", "2-blocks")},
                   train_slice=0.1)


# The document's ladder (IT L13-28, L124-132), as the catalogue reconstructs the stripped
# table (§2a): rung -> (validation perplexity, derived?). Derived values carry ±0.5 per
# rounded difference used; L8 and L9 are tentative.
DOC_LADDER = {
    "no-context": (59.71, False), "mean": (248.45, True), "mean+positions": (246.31, True),
    "mean+residual": (60.45, False), "head-replacing": (55.45, True), "head-added": (46.45, True),
    "4-heads": (43.45, True), "+mlp": (39.87, True), "+layernorm": (38.07, True),
    "2-blocks": (40.57, False),
}


# The Polish lab at its own, full scale (it fits the CPU slow tier): 6,400 Adam steps of 8
# windows, seeds 1-5 as the lab numbers them, on 5 disjoint excerpts of Pan Tadeusz. The
# lab does not state its learning rate; 1e-3, 3e-3 and 1e-2 gave the same mean best
# validation on the main excerpt (10.41 each, seeds 1-5), and 3e-3 is the middle one.
TINY_LAB = LabConfig(lr=3e-3)
TINY_LAB_SEEDS = seeds(1, 2, 3, 4, 5)
TINY_LAB_EXCERPTS = 5



# ---- training dynamics (issue 6) ----------------------------------------------------------

# sqrt(d_k), S-SQ: one head, no normalisation before the projections, with and without the
# division, at four head widths. The document: 1500 steps, batch 32, d_model 128.
SQRT_WIDTHS = (32, 128, 256, 1024)


def _sqrt_rungs(**kw):
    return {f"{'div' if scale else 'nodiv'}-{d}": sqrt_dk_config(d, scale=scale, **kw)
            for d in SQRT_WIDTHS for scale in (True, False)}


SQRT_FULL = Scale("sqrt-full", _sqrt_rungs(),
                  TrainConfig(steps=1500, batch_size=32, lr=1e-3, trace_every=100, attention_stats=True),
                  seeds=seeds(0, 1, 2))
# CI: width 64, window 32, batch 16, 1000 steps at 3e-3 (at 300 steps nothing separates). The
# window is halved from the 64 first tried to keep issue 6's CI share within 10 minutes; at 64
# the same orderings held on seeds 0-2.
SQRT_CI = Scale("sqrt-ci", _sqrt_rungs(d_model=64, block_size=32),
                TrainConfig(steps=1000, batch_size=16, lr=3e-3, trace_every=100, attention_stats=True),
                seeds=seeds(0, 1, 2))

# Pre- vs post-norm, S-NORM: 12 blocks, 1000 steps at 3e-3, warmup 0 or 200 steps.
_NORM_FULL_TRAIN = TrainConfig(steps=1000, batch_size=64, lr=3e-3, trace_every=50)
NORM_FULL = Scale("norm-full", {"pre": shakespeare_config(n_layer=12, norm="pre"),
                                "pre+warmup": shakespeare_config(n_layer=12, norm="pre"),
                                "post": shakespeare_config(n_layer=12, norm="post"),
                                "post+warmup": shakespeare_config(n_layer=12, norm="post")},
                  _NORM_FULL_TRAIN, seeds=seeds(0, 1, 2),
                  trains={k: replace(_NORM_FULL_TRAIN, warmup=200) for k in ("pre+warmup", "post+warmup")})
# CI: 6 blocks at d 64, window 32, batch 16, 300 steps at 6e-3, where post-norm without warmup
# still fails (at 3e-3 it needs 12 blocks). Warmup keeps the document's share, 20 %; a 50 %
# warmup is run beside it, because at this size 20 % may not be enough. The window is halved
# from 64 for time; at 64, post/pre fell just under 3 on one seed of three.
_NORM_CI_TRAIN = TrainConfig(steps=300, batch_size=16, lr=6e-3, trace_every=20)
_norm_ci = {k: replace(c, n_layer=6, d_model=64, block_size=32) for k, c in NORM_FULL.rungs.items()}
NORM_CI = Scale("norm-ci", {**_norm_ci, "post+warmup50": _norm_ci["post"]}, _NORM_CI_TRAIN, seeds=seeds(0, 1, 2),
                trains={"pre+warmup": replace(_NORM_CI_TRAIN, warmup=60),
                        "post+warmup": replace(_NORM_CI_TRAIN, warmup=60),
                        "post+warmup50": replace(_NORM_CI_TRAIN, warmup=150)})
# NORM-07's "barely matters for pre-norm" is an equivalence: the catalogue's margin, |effect| <
# 3 %, must hold for the 90 % interval of the mean paired effect (two one-sided tests at 5 %).
# The paired effect's seed spread is about 2.6 %, and its mean moves by a percent with the seeds:
# twenty seeds keep the interval's half-width near 1 % (ten left it 0.1 % inside the margin at
# CLAIMS_SEED_OFFSET=100). Seeds 0-2 are NORM_CI's own runs.
NORM_EQ_CI = replace(NORM_CI, name="norm-eq-ci", rungs={k: NORM_CI.rungs[k] for k in ("pre", "pre+warmup")},
                     seeds=seeds(*range(20)))

# Positions, S-POS: trained on windows of 64, scored at 64, 128 and 256. The learned table
# has 256 rows, so rows 64..255 exist but are never trained; weight decay is off, so they
# stay exactly at their initial random values (the text's reading; POS-05 checks both cases).
POS_SCHEMES = ("none", "learned", "sinusoidal", "rope", "alibi")
POS_LENGTHS = (64, 128, 256)
POS_FULL = Scale("pos-full", {p: shakespeare_config(block_size=64, positions=p, n_positions=256)
                              for p in POS_SCHEMES},
                 replace(SHAKESPEARE_FULL, eval_every=0, weight_decay=0.0, eval_lengths=POS_LENGTHS),
                 seeds=seeds(0, 1, 2))
# CI: 2 blocks at d 64, batch 16, 600 steps at 3e-3.
POS_CI = Scale("pos-ci", {p: shakespeare_config(block_size=64, d_model=64, n_layer=2, positions=p,
                                                n_positions=256) for p in POS_SCHEMES},
               TrainConfig(steps=600, batch_size=16, lr=3e-3, weight_decay=0.0,
                           eval_lengths=POS_LENGTHS), seeds=seeds(0, 1, 2))
