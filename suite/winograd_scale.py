"""The Winograd task's kind of scale (IT 3.15): each (task, model) trains its seeds as one
stack; ``WinogradRuns`` reads their held-out scores and attention rows."""
from dataclasses import dataclass

import numpy as np

from claimcheck.progress import tracker
from experiments.runs import Job, memo_key, memo_many, n_params
from experiments.winograd import (
    ADJECTIVES,
    BATCH,
    FIXED_HELD_PAIRS,
    LEAKY_HELD_PAIRS,
    PREDICTIONS,
    Example,
    attention_rows,
    fixed_task,
    leaky_task,
    model_config,
    train_task,
)
from suite.scales import _checkpoint
from suite.settings import DeclaredSeeds

# ---- the Winograd task (IT 3.15) ------------------------------------------------------------

@dataclass(frozen=True)
class WinogradScale(DeclaredSeeds):
    """Each (task, model) trains its seeds as one stack, for its own number of steps; held-out
    accuracy is also read every 250 steps. The fields are what a diagnosis grid varies
    (suite/diagnosis_grids.py): each (task, model)'s runs are cached under their own settings only, so a
    point that changes one task retrains that task's models alone."""
    declared_seeds: tuple[int, ...]  # ``seeds``: these, shifted by the seed offset when read
    steps: int = 1500
    leaky_block_steps: int = 1000   # the leaky task's one block (our choice; the chapter states no steps)
    leaky_held_pairs: int = LEAKY_HELD_PAIRS
    fixed_held_pairs: int = FIXED_HELD_PAIRS
    lr: float = 3e-3
    d_model: int = 64
    name: str = "winograd"
    # Every evaluation also scores two halves of the held-out pairs (experiments.winograd.halves), so
    # a best checkpoint is chosen on one half and reported on the other (read.checkpoint=best).
    select_apart: bool = False
    # The leaky task's claims (WINO-02) compare the bag of words with one block; the chapter trains
    # no two-block model there, so neither do we (146 s of slow-tier training that no claim reads).
    models: tuple = (("leaky", "bag"), ("leaky", "1-block"), ("fixed", "bag"), ("fixed", "1-block"),
                     ("fixed", "2-blocks"))

    def arm_steps(self) -> dict:
        """(task, model) -> its training steps."""
        return {(t, k): self.leaky_block_steps if (t, k) == ("leaky", "1-block") else self.steps
                for t, k in self.models}

    def held_pairs(self, task: str) -> int:
        return {"leaky": self.leaky_held_pairs, "fixed": self.fixed_held_pairs}[task]

    def arm(self, task: str, kind: str) -> dict:
        """What determines one (task, model)'s runs: its cache key's and its evidence record's config."""
        return {"task": task, "kind": kind, "seeds": list(self.seeds), "steps": self.arm_steps()[task, kind],
                "held_pairs": self.held_pairs(task), "lr": self.lr, "d_model": self.d_model,
                **({"select_apart": True} if self.select_apart else {})}  # the records made before it: unchanged

    def jobs(self) -> list[Job]:
        """Each (task, model) on its seeds, one stack: a run-cache job each."""
        tasks = {"leaky": leaky_task(self.leaky_held_pairs), "fixed": fixed_task(self.fixed_held_pairs)}
        return [Job(memo_key("winograd", self.arm(t, k), source=WinogradScale),
                    lambda t=t, k=k: train_winograd(self.arm(t, k)),
                    # parameters x steps x predictions a step (train_task's batches) x seeds
                    n_params(model_config(tasks[t], k, self.d_model)) * self.arm_steps()[t, k] * BATCH * PREDICTIONS
                    * len(self.seeds)) for t, k in self.models]

    def runs(self) -> "WinogradRuns":
        return WinogradRuns(self, dict(zip(self.models, memo_many(self.jobs()))))


def train_winograd(arm: dict) -> dict:
    """One (task, model) on its seeds, stacked: per seed, its held-out curve, its final scores,
    its first training losses, and (two blocks, fixed task) the attention rows at "the" for the
    chapter's sentence (a training pair) and for the first held-out pair, with all 8 adjectives."""
    task = {"leaky": leaky_task, "fixed": fixed_task}[arm["task"]](held_pairs=arm["held_pairs"])
    first = []
    stack, curves = train_task(task, arm["kind"], steps=arm["steps"], seeds=arm["seeds"], lr=arm["lr"],
                               d_model=arm["d_model"], first_losses=first, select_apart=arm.get("select_apart", False),
                               progress=tracker(f"winograd/{arm['task']}/{arm['kind']}/{len(arm['seeds'])} seeds",
                                                arm["steps"]))
    recs = [{"seed": s, "curve": c, "final": c[-1], "first_losses": [f[m] for f in first]}
            for m, (s, c) in enumerate(zip(arm["seeds"], curves))]
    if arm["kind"] == "2-blocks" and arm["task"] == "fixed":
        held = task.held_out[0]
        for m, rec in enumerate(recs):
            for key, (x, y) in (("rows", ("animal", "street")), ("rows_held", (held.x, held.y))):
                rec[key] = {a: [r.tolist() for r in attention_rows(stack.model(m), task, Example(x, y, a))]
                            for a in ADJECTIVES}
            rec["held_pair"] = [held.x, held.y]
    return {"runs": recs}


class WinogradRuns:
    """A WinogradScale's runs (trained, or read from a grid point's evidence records)."""

    def __init__(self, scale: WinogradScale, records: dict, evidence=()):
        self.scale, self._records = scale, records
        self.seeds = tuple(scale.seeds)
        self.evidence = set(evidence)  # "<device>, <date>" of every evidence record read

    def record(self, task: str, kind: str, seed: int) -> dict:
        return self._records[task, kind]["runs"][self.seeds.index(seed)]

    def final(self, task: str, kind: str, key: str = "accuracy", checkpoint: str = "final") -> np.ndarray:
        """Held-out score per seed: at the last step, or (``checkpoint="best"``) at the evaluation
        where that seed's held-out accuracy is highest. With the scale's ``select_apart``, that
        evaluation is chosen on the select half and scored on the report half (its first, where
        several tie); without, on the whole held-out set, which flatters it."""
        _checkpoint(checkpoint)
        runs = self._records[task, kind]["runs"]
        if checkpoint == "final":
            return np.array([r["final"][key] for r in runs])
        if self.scale.select_apart:
            return np.array([max(r["curve"], key=lambda p: p["select"]["accuracy"])["report"][key] for r in runs])
        return np.array([max(r["curve"], key=lambda p: p["accuracy"])[key] for r in runs])

    def join(self, *more: "WinogradRuns") -> "WinogradRuns":
        """These runs, then each of ``more``'s seeds in order (the same models and settings): the
        starts a scheduled Winograd verdict counts (catalogue.WINO_LOOKS)."""
        out = WinogradRuns(self.scale, {m: {"runs": self._records[m]["runs"] + [r for o in more for r in o._records[m]["runs"]]}
                                        for m in self._records}, self.evidence.union(*(o.evidence for o in more)))
        out.seeds = self.seeds + tuple(s for o in more for s in o.seeds)
        return out

    def held_out(self, task: str, checkpoint: str = "final") -> int:
        """Held-out sentences a score counts: one per adjective for each held-out pair, or, for a
        best checkpoint chosen apart, for each pair of the report half (the second, fourth, ...)."""
        pairs = self.scale.held_pairs(task)
        return len(ADJECTIVES) * (pairs // 2 if checkpoint == "best" and self.scale.select_apart else pairs)
