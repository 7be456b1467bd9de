"""The Polish lab's kind of scale: every (excerpt, seed) of a ``LabConfig``, with and without
positions, each set one stack; ``LabRuns`` reads its perplexities and the counting baselines."""
import functools
from dataclasses import asdict, dataclass

import numpy as np
import pytest

from claimcheck.progress import tracker
from experiments.data import CORPORA, CorpusUnavailable
from experiments.numpy_gpt import mirror
from experiments.polish_lab import (
    LabConfig,
    batches,
    best_val_test,
    ngram_scores,
    train_runs,
    with_positions,
)
from experiments.polish_text import excerpts
from experiments.runs import Job, memo_key, memo_many, n_params
from suite.scales import train_log
from suite.settings import DeclaredSeeds, no_corpus


@dataclass(frozen=True)
class MirrorScale:
    """TINY-10: the numpy lab against its torch twin, step for step on the lab's own batches of
    the main excerpt, per seed (experiments.numpy_gpt.mirror). Recorded as measured evidence
    (suite/evidence/measured.py), so the fast tier reads it."""
    seeds: tuple[int, ...]
    steps: int
    lr: float
    name: str
    # A fresh measurement is checked against its record on the lab's losses only, at a tolerance
    # from the spread between machines (docs/reference/replay.md): training amplifies the kernels'
    # rounding with the steps. ``worst`` (numpy against torch in one run, 1e-16 to 1e-14) stays at
    # machine precision, and TINY-10 judges it within the run, never against a record.
    rtol: float = 1e-13
    rtol_why: str = ""
    compared = ("losses",)

    def runs(self) -> dict:
        """{"seeds", "worst": per seed, "losses": per seed, the lab's loss every 100 steps}."""
        try:
            ids = _excerpts(1)[0].ids("train")
        except CorpusUnavailable as e:
            no_corpus(e)
        out = [mirror(s, batches(ids, s, self.steps), self.lr) for s in self.seeds]
        return {"seeds": list(self.seeds), "worst": [o["worst"] for o in out], "losses": [o["losses"] for o in out]}

    measure = runs  # nothing cached

    def config(self) -> dict:
        return {"seeds": list(self.seeds), "steps": self.steps, "lr": self.lr, "excerpt": 0,
                "corpus": CORPORA["pan-tadeusz"].sha256}

    def shape_problem(self, result: dict) -> str:
        """'' when ``result`` holds, per seed, one ``worst`` and the lab's loss every 100 steps."""
        n = len(self.seeds)
        if result.get("seeds") != list(self.seeds):
            return f"seeds {list(self.seeds)} expected, got {result.get('seeds')!r:.40}"
        losses = result.get("losses")
        if not (isinstance(result.get("worst"), list) and len(result["worst"]) == n and isinstance(losses, list)
                and len(losses) == n and all(isinstance(x, list) and len(x) == self.steps // 100 for x in losses)):
            return f"per seed, one worst and {self.steps // 100} losses (every 100 steps), expected"
        return ""


@dataclass(frozen=True)
class LabScale(DeclaredSeeds):
    """The Polish lab: every (excerpt, seed), with and without positions, each set one stack."""
    config: LabConfig
    declared_seeds: tuple[int, ...]  # ``seeds``: these, shifted by the seed offset when read
    excerpts: int
    name: str = "tiny-lab"  # a diagnosis grid's point is "tiny-lab@<setting>=<value>"

    def texts(self) -> list:
        """The excerpts (a missing corpus: one line, through no_corpus)."""
        try:
            return _excerpts(self.excerpts)
        except CorpusUnavailable as e:
            no_corpus(e)

    def jobs(self) -> list[Job]:
        """Every (excerpt, seed) with and without positions: two stacks, two run-cache jobs."""
        exs = self.texts()
        pairs = [(ex, s) for ex in exs for s in self.seeds]
        jobs = []
        for pe in (True, False):
            cfg = with_positions(self.config, pe)
            key = memo_key("tiny-lab", {"config": asdict(cfg), "seeds": self.seeds,
                                        "excerpts": [ex.sha256 for ex in exs]})
            label = f"tiny-lab/{'positions' if pe else 'no-positions'}/{len(pairs)} runs"
            work = n_params(cfg.model()) * cfg.steps * cfg.batch * cfg.model().block_size * len(pairs)
            jobs.append(Job(key, lambda cfg=cfg, label=label: train_runs(
                cfg, pairs, log=train_log(), progress=tracker(label, cfg.steps)), work))
        return jobs

    def runs(self) -> "LabRuns":
        with_pe, without_pe = memo_many(self.jobs())
        return self.read(self.texts(), {True: with_pe, False: without_pe})

    def read(self, exs, records: dict) -> "LabRuns":
        """LabRuns of ``records`` ({positions: train_runs' result}), with the counting baselines."""
        grams = {n: [ngram_scores(ex, n) for ex in exs] for n in (2, 3)}
        return LabRuns(exs, self.seeds, self.config, records, grams)


@functools.cache
def _excerpts(n: int) -> list:
    """The corpus is read and hashed once per process (a failure is not cached)."""
    return excerpts(n)


class LabRuns:
    """The Polish lab's runs: ``ppl(part, positions)`` -> array (excerpt, seed, checkpoint).

    Excerpt 0 opens the poem and is the main one, where the chapter's own 5-seed claims are
    read; the others show how far a verdict depends on the excerpt.
    """

    def __init__(self, excerpts, seeds, cfg, records, grams, evidence=()):
        self.excerpts, self.seeds, self.cfg, self.grams = excerpts, seeds, cfg, grams
        self.evidence = set(evidence)  # "<device>, <date>" of every grid record read (suite/evidence/lab.py)
        self._smoothed = {}
        self.steps = np.array(cfg.checkpoints)
        E, S = len(excerpts), len(seeds)
        self._ppl = {pe: {part: np.array(rec[part]).reshape(E, S, -1) for part in ("train", "val", "test")}
                     for pe, rec in records.items()}

    def ppl(self, part, positions=True):
        if positions not in self._ppl:  # a grid point records only the arms its grids read
            raise pytest.skip.Exception(f"no lab evidence {'with' if positions else 'without'} positions for "
                                        f"{self.cfg}: run `python -m suite.evidence lab`", _use_item_location=True)
        return self._ppl[positions][part]

    def main(self, *more: "LabRuns") -> "LabRuns":
        """The main excerpt's runs: this lab's seeds, then each of ``more``'s in order (labs of the
        main excerpt alone, the same config): the seeds a lab verdict counts (suite/lab_rules.py)."""
        out = LabRuns.__new__(LabRuns)
        out.excerpts, out.cfg, out.steps, out._smoothed = self.excerpts[:1], self.cfg, self.steps, {}
        out.seeds = tuple(self.seeds) + tuple(s for m in more for s in m.seeds)
        out.grams = {n: g[:1] for n, g in self.grams.items()}
        out.evidence = set(self.evidence).union(*(m.evidence for m in more))
        out._ppl = {pe: {part: np.concatenate([a[:1]] + [m._ppl[pe][part][:1] for m in more], axis=1)
                         for part, a in parts.items()} for pe, parts in self._ppl.items()}
        return out

    def at(self, part, step, positions=True):
        """(excerpt, seed) perplexities at one checkpoint."""
        return self.ppl(part, positions)[..., list(self.steps).index(step)]

    def gram(self, n, part, smoothing="add-k"):
        """The n-gram's perplexity on each excerpt, shape (excerpt, 1) to broadcast over seeds;
        add-k as the lab's baseline, or another smoothing (experiments.polish_lab.SMOOTHINGS)."""
        if smoothing == "add-k":
            return np.array([g[part] for g in self.grams[n]])[:, None]
        if (n, smoothing) not in self._smoothed:
            self._smoothed[n, smoothing] = [ngram_scores(ex, n, smoothing) for ex in self.excerpts]
        return np.array([g[part] for g in self._smoothed[n, smoothing]])[:, None]

    def best_val_test(self, positions=True):
        """(excerpt, seed) arrays of the step chosen on validation and of test at that step,
        through the lab's protocol (test is read once per run)."""
        val, test = self.ppl("val", positions), self.ppl("test", positions)
        steps, tests = np.zeros(val.shape[:2], int), np.zeros(val.shape[:2])
        for e, s in np.ndindex(*val.shape[:2]):
            steps[e, s], tests[e, s] = best_val_test(
                dict(zip(self.steps.tolist(), val[e, s])),
                lambda step: test[e, s, list(self.steps).index(step)])
        return steps, tests
