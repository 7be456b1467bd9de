"""What a training claim reads: a ``Scale`` (arms, training, seeds) and its ``Runs``.

A ``Scale`` names its arms (one model config each), the training, and the seeds; ``runs`` trains
them through the run cache and returns ``Runs``: a typed ``Run`` per (arm, seed), and numpy arrays
per arm across seeds, so a claim reads ``runs.val("4-heads") - runs.val("+mlp")``. The seeds of an
arm train one at a time or side by side, as one stack (``model.stack``). The scales of this
document are in suite/catalogue.py; the Polish lab's and the Winograd task's kinds of scale in
suite/lab_scale.py and suite/winograd_scale.py.
"""
from dataclasses import asdict, dataclass, field

import numpy as np
import pytest
import torch

from claimcheck.progress import tracker
from experiments import runs as run_cache
from experiments.configs import shakespeare_config
from experiments.cost import CORES, CostConfig, measure, peak_memory
from experiments.data import CORPORA, CorpusUnavailable, bpe_tokens
from experiments.grad_norms import BATCH, N_LAYER, REDUCTIONS, grad_norms
from experiments.runs import Job, RunSpec, memo_key, memo_many, n_params
from experiments.train import TrainConfig
from suite import settings
from claimcheck.rules import declared_prefix
from suite.settings import DeclaredSeeds, no_corpus


@dataclass(frozen=True)
class Scale(DeclaredSeeds):
    name: str
    arms: dict             # arm name -> GPTConfig
    train: TrainConfig
    declared_seeds: tuple[int, ...]  # ``seeds``: these, shifted by the seed offset when read
    train_slice: float = 1.0
    trains: dict = field(default_factory=dict)  # arm -> its own TrainConfig (e.g. a warmup)
    ci: bool = True        # CI scales train every arm up front (shared among xdist workers)
    stack: bool = False    # on the CPU: an arm's seeds side by side, or one by one (catalogue.py STACKING)
    family: str = ""       # full scales: the evidence family their records live in (suite/evidence/families.py)

    def groups(self, device="cpu") -> list[tuple[int, ...]]:
        """The seeds that train together: on CUDA all of them, in one stacked step (a step there is
        launch-bound: 12 stacked seeds made 114 model-steps/s on an H200, one seed 40); on
        the CPU all of them or one at a time, as the scale says (suite/catalogue.py STACKING)."""
        stacked = self.stack or torch.device(device).type == "cuda"
        return [self.seeds] if stacked else [(s,) for s in self.seeds]

    def spec(self, arm: str, seeds: tuple[int, ...], device="cpu") -> RunSpec:
        return RunSpec(self.arms[arm], self.trains.get(arm, self.train), seeds=seeds,
                       train_slice=self.train_slice, device=str(device), step=settings.current().step_for(device),
                       label=f"{self.name}/{arm}/seed{'s' if len(seeds) > 1 else ''} "
                             f"{','.join(map(str, seeds))}")

    def specs(self, arms=None, device="cpu") -> list[tuple[str, RunSpec]]:
        return [(a, self.spec(a, g, device)) for a in (arms or self.arms) for g in self.groups(device)]

    def jobs(self) -> list[Job]:
        """What a CI scale trains, as run-cache jobs (``train_up_front``)."""
        return run_cache.jobs([s for _, s in self.specs()], log=train_log() or (lambda *_: None), progress=tracker)

    def runs(self, ensure, device="cpu") -> "Runs":
        """The arms' runs through ``ensure(specs) -> records`` (the run cache): a CI scale trains
        every arm now, on the CPU; a full scale trains an arm on ``device`` when a test first
        reads it. (Where a full scale reads committed evidence instead: suite/evidence.)"""
        device = "cpu" if self.ci else str(device)

        def trained(arms):
            specs = self.specs(arms, device)
            out = {}
            for (arm, _), recs in zip(specs, ensure([s for _, s in specs])):
                out.setdefault(arm, []).extend(recs)  # the groups, in seed order
            return out
        runs = Runs(self, trained, self.seeds)
        return runs.prefetch() if self.ci else runs


def train_up_front(scales: list) -> list[str]:
    """Every job of these scales, the largest first, shared out among the processes that call it
    (xdist workers), waiting for none: the longest-processing-time rule. Were each scale to ask
    for its own jobs when its first test runs, one worker could be left alone at the end with a
    stack of 10 Winograd models while the other idles. A scale that cannot list its jobs (a
    missing corpus) or a job that raises is left to the fixture that reads it, which meets the
    error again and reports it in its own tests; the rest still train. Returns what was left so."""
    jobs, left = {}, []
    for scale in scales:
        try:
            jobs.update((j.key, j) for j in scale.jobs())  # scales share runs (NORM_EQ_CI's seeds 0-2 are NORM_CI's)
        except (Exception, pytest.skip.Exception, pytest.fail.Exception):
            left.append(getattr(scale, "name", repr(scale)))
    return left + run_cache.prefetch(sorted(jobs.values(), key=lambda j: -j.work))


@dataclass(frozen=True)
class Run:
    """One trained model of an arm: its final numbers, curves and traces."""
    arm: str
    seed: int
    val_ppl: float
    train_ppl: float
    curve: dict                     # step, loss, train_ppl, val_ppl at each evaluation
    trace: dict | None              # step, loss (and attention statistics) every trace_every steps
    val_ppl_at_length: dict         # window length (int) -> validation perplexity
    wall_s: float                   # of the whole stack it trained in
    device: str

    @classmethod
    def of(cls, arm: str, rec: dict) -> "Run":
        return cls(arm, rec["seed"], rec["val_ppl"], rec["train_ppl"], rec["curve"], rec["trace"],
                   {int(k): v for k, v in rec["val_ppl_at_length"].items()}, rec["wall_s"], rec["device"])


class Runs:
    """A scale's runs, fetched when an arm is first read (from the run cache, or from the
    full-scale evidence), so a test pays only for the arms it reads. Arrays run over
    ``seeds``, in order: the scale's, or those recorded as evidence."""

    def __init__(self, scale: Scale, fetch, seeds):
        self.scale, self._records, self._seeds = scale, fetch, tuple(seeds)
        self._arms: dict[str, list[Run]] = {}
        self.evidence: set[str] = set()  # "<device>, <date>" of every evidence record read

    @property
    def seeds(self) -> tuple[int, ...]:
        return self._seeds

    def prefix(self) -> int:
        """How many of the scale's declared seeds, from the first, are here: the seeds a declared
        look may read (suite.rules.Schedule)."""
        return declared_prefix(self._seeds, self.scale.seeds)

    def first(self, n: int) -> "Runs":
        """The same runs over the first ``n`` seeds only: what a declared look reads."""
        fetch = self._records
        view = Runs(self.scale, lambda arms: {a: recs[:n] for a, recs in fetch(arms).items()}, self._seeds[:n])
        view._arms = {a: runs[:n] for a, runs in self._arms.items()}
        view.evidence = self.evidence  # one set: what the view reads is the scale's evidence too
        return view

    def _fetch(self, arms) -> None:
        for arm, recs in self._records(arms).items():
            self._arms[arm] = [Run.of(arm, r) for r in recs]
            self.evidence.update(r["evidence"] for r in recs if "evidence" in r)

    def prefetch(self) -> "Runs":
        """Every arm of the scale, shared out among the processes that ask (xdist)."""
        self._fetch(list(self.scale.arms))
        return self

    def runs(self, arm: str) -> list[Run]:
        if arm not in self._arms:
            self._fetch([arm])
        return self._arms[arm]

    def run(self, arm: str, seed: int) -> Run:
        return self.runs(arm)[self.seeds.index(seed)]

    def val(self, arm: str, checkpoint: str = "final") -> np.ndarray:
        """Per seed: validation perplexity at the last step, or (``checkpoint="best"``) at the
        evaluation where that run's validation is lowest."""
        _checkpoint(checkpoint)
        return np.array([r.val_ppl if checkpoint == "final" else min(r.curve["val_ppl"]) for r in self.runs(arm)])

    def train(self, arm: str, checkpoint: str = "final") -> np.ndarray:
        """Per seed: training perplexity at the last step, or at the best-validation evaluation."""
        _checkpoint(checkpoint)
        return np.array([r.train_ppl if checkpoint == "final" else
                         r.curve["train_ppl"][int(np.argmin(r.curve["val_ppl"]))] for r in self.runs(arm)])

    def at_length(self, arm: str, length: int) -> np.ndarray:
        return np.array([r.val_ppl_at_length[length] for r in self.runs(arm)])

    def trace(self, arm: str, key: str = "loss") -> np.ndarray:
        """(seeds, trace points); step 0 of the loss trace (no loss yet) is NaN."""
        return np.array([[np.nan if v is None else v for v in r.trace[key]] for r in self.runs(arm)])


def _checkpoint(name: str) -> None:
    if name not in ("final", "best"):
        raise ValueError(f"checkpoint {name!r}: 'final' (the last step) or 'best' (the best evaluation)")


def evidence_mode() -> bool:
    """Full-scale tests judge the committed evidence: there is no CUDA device, and
    CLAIMS_DEVICE=cpu does not ask for the full configurations to be trained on the CPU."""
    return not torch.cuda.is_available() and settings.current().device != "cpu"


def train_log():
    """``print`` when CLAIMS_TRAIN_LOG asks for the training runs' log lines, else None."""
    return print if settings.current().train_log else None


@dataclass(frozen=True)
class GradNormScale:
    """Gradient norms at initialisation (experiments/grad_norms.py), 12 blocks at d 128: each
    (batch, init) setting is one run-cache job over the seeds; the reductions are read from the
    same gradients."""
    seeds: tuple[int, ...]
    settings: tuple = (("real", "torch"), ("random", "torch"), ("mean8", "torch"),
                       ("real", "normal"), ("real", "gpt2"))
    name: str = "norm03-grads"

    def jobs(self) -> list[Job]:
        cfg = shakespeare_config(n_layer=N_LAYER)
        size = n_params(cfg) * BATCH * cfg.block_size * 2 * len(self.seeds)  # one pass per norm and seed
        corpus, vocab = "tinyshakespeare", 1024
        data = {"corpus": CORPORA[corpus].sha256, "vocab_size": vocab}  # the key names the tokens it reads
        return [Job(memo_key("grad-norms", {"batch": b, "init": i, "seeds": self.seeds, **data}),
                    lambda b=b, i=i: grad_norms(bpe_tokens(corpus, vocab)[0], self.seeds, b, i),
                    size * (8 if b == "mean8" else 1)) for b, i in self.settings]

    # measured evidence (suite/evidence/measured.py): a forward and backward at initialisation, in
    # float32; under AVX2 kernels and two threads against the one-thread record they moved 2.2e-7
    rtol = 1e-6
    rtol_why = "float32 gradients at init: 3x the 2.2e-7 they moved under AVX2 kernels and two threads, rounded up"

    def runs(self) -> dict:
        """(batch, init) -> grad_norms' result."""
        try:
            return dict(zip(self.settings, memo_many(self.jobs())))
        except CorpusUnavailable as e:
            no_corpus(e)

    def measure(self) -> dict:
        """``runs()``, computed here and now (never read from the run cache)."""
        try:
            return dict(zip(self.settings, (job.compute() for job in self.jobs())))
        except CorpusUnavailable as e:
            no_corpus(e)

    def config(self) -> dict:
        return {"seeds": list(self.seeds), "settings": [list(s) for s in self.settings], "blocks": N_LAYER,
                "batch": BATCH, "corpus": CORPORA["tinyshakespeare"].sha256, "vocab_size": 1024}

    def shape_problem(self, result: dict) -> str:
        """'' when ``result`` (``to_json``'s) holds, per setting, reduction and norm, one list of
        N_LAYER block norms per seed."""
        if sorted(result) != sorted(self.to_json(dict.fromkeys(self.settings))):
            return f"one key per (batch, init) setting expected, {sorted(self.to_json(dict.fromkeys(self.settings)))}"
        for key, by_reduction in result.items():
            if not isinstance(by_reduction, dict) or sorted(by_reduction) != sorted(REDUCTIONS):
                return f"{key}: one entry per reduction expected, {sorted(REDUCTIONS)}"
            for r, by_norm in by_reduction.items():
                ok = isinstance(by_norm, dict) and sorted(by_norm) == ["post", "pre"] and all(
                    isinstance(v, list) and len(v) == len(self.seeds)
                    and all(isinstance(b, list) and len(b) == N_LAYER for b in v) for v in by_norm.values())
                if not ok:
                    return f"{key}.{r}: pre and post, each {len(self.seeds)} seeds of {N_LAYER} block norms, expected"
        return ""

    @staticmethod
    def to_json(runs: dict) -> dict:
        return {f"{b}/{i}": v for (b, i), v in runs.items()}

    @staticmethod
    def from_json(data: dict) -> dict:
        return {tuple(k.split("/")): v for k, v in data.items()}


# ---- the cost of attention (IT 3.12) ---------------------------------------------------------

@dataclass(frozen=True)
class CostScale:
    """Time and peak memory of each attention core over sequence lengths: measured afresh
    every session (a timing is not a result to cache), on the CPU."""
    ns: tuple[int, ...]
    config: CostConfig

    def runs(self) -> dict:
        return {kind: [measure(n, kind, self.config, torch.device("cpu")) for n in self.ns] for kind in CORES}


@dataclass(frozen=True)
class MemoryScale:
    """Peak memory of each attention core over sequence lengths, on the CPU, without timings
    (COST-09): allocation sizes, the same on every machine with this torch, so it is recorded as
    measured evidence (suite/evidence/measured.py) and the fast tier reads it."""
    ns: tuple[int, ...]
    config_: CostConfig
    name: str = "cost-memory-ci"
    rtol = 0.0
    rtol_why = "allocation sizes: exact for a torch version (no byte moved under AVX2 kernels and two threads)"

    def runs(self) -> dict:
        """core -> [{"n", "peak_bytes"}] over ``ns`` (the rows ``CostScale`` gives, memory only)."""
        return {kind: [{"n": n, "peak_bytes": peak_memory(n, kind, self.config_, "cpu")} for n in self.ns]
                for kind in CORES}

    measure = runs  # nothing cached

    def config(self) -> dict:
        """What sets the allocations (the timing's repeats and warmup do not)."""
        shape = {k: v for k, v in asdict(self.config_).items() if k not in ("repeats", "warmup")}
        return {"ns": list(self.ns), "cores": list(CORES), **shape}

    def shape_problem(self, result: dict) -> str:
        """'' when ``result`` holds, per core, one positive integer of bytes per length of ``ns``."""
        for kind in CORES:
            rows = result.get(kind)
            if not (isinstance(rows, list) and [r.get("n") if isinstance(r, dict) else None for r in rows] == list(self.ns)
                    and all(isinstance(r.get("peak_bytes"), int) and r["peak_bytes"] > 0 for r in rows)):
                return f"{kind}: one row per length {list(self.ns)}, each a positive integer peak_bytes, expected"
        return "" if sorted(result) == sorted(CORES) else f"one entry per core expected, {list(CORES)}"
