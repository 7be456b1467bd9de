"""The run cache: each (config, seeds, data, code) is trained once, whoever asks for it.

Several claims read the same training runs, and pytest-xdist workers ask for them at the same
time. The unit is an arm: one config trained on several seeds side by side (``model.stack``).
Its records, one per seed, are stored as JSON under ``cache_dir()/runs/<key>.json``, keyed by
the model and training configs, the corpus and its slice, the seeds, the device type, torch's
version and a hash of the code. The seeds are part of the key because they are trained
together: seed 0 of a three-seed stack and of a twenty-seed stack may round differently, so
they are two runs. A file lock per key makes one process train it while the others wait.

Two levels, one way each:
  arms      ``ensure(specs)``: every arm's records, trained once among every process that asks;
            ``jobs(specs)``: the same arms as jobs, for a caller that mixes them with other work.
  jobs      a ``Job`` is any cached computation with a key and a rough size: ``memo_many(jobs)``
            reads or computes each, sharing them out; ``prefetch(jobs)`` is its first pass alone
            (train what nobody holds, wait for nothing); ``memo(key, compute)`` is one of them.
"""
import functools
import hashlib
import inspect
import json
import operator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, NamedTuple

import torch
from filelock import FileLock, Timeout

from .data import CORPORA, bpe_tokens, cache_dir, split, write_atomic
from model.gpt import GPT, GPTConfig
from .train import TrainConfig, train


@functools.cache
def code_version() -> str:
    """A hash of model/*.py and experiments/*.py: any change to either invalidates cached runs.
    Computed once per process, so the code that runs is the code that names its results."""
    h = hashlib.sha256()
    root = Path(__file__).resolve().parents[1]
    for p in sorted([*root.glob("model/*.py"), *root.glob("experiments/*.py")]):
        h.update(str(p.relative_to(root)).encode() + p.read_bytes())
    return h.hexdigest()[:12]


@dataclass(frozen=True)
class RunSpec:
    """Everything that determines an arm's result: one config, trained on each of ``seeds``."""

    model: GPTConfig
    train: TrainConfig
    seeds: tuple[int, ...] = (0,)
    corpus: str = "tinyshakespeare"
    vocab_size: int = 1024
    train_slice: float = 1.0  # the leading fraction of the training split to train on
    device: str = "cpu"
    step: str = "eager"  # experiments.train.STEPS: a compiled step rounds differently
    label: str = field(default="", compare=False)  # a name for humans; not part of the key

    def __post_init__(self):
        # numpy ints would reach the key as strings ("3", not 3): the same runs under two keys
        object.__setattr__(self, "seeds", tuple(operator.index(s) for s in self.seeds))  # refuses a float seed such as 2.7

    def key(self) -> str:
        d = asdict(self)
        d.pop("label")
        d.update(device=torch.device(self.device).type, corpus_sha=CORPORA[self.corpus].sha256,
                 torch=torch.__version__, code=code_version())
        return hashlib.sha256(json.dumps(d, sort_keys=True, default=str).encode()).hexdigest()[:20]

    def work(self) -> float:
        """A rough size: parameters x next-token predictions made in training, over the seeds."""
        return n_params(self.model) * self.train.predictions(self.model.block_size) * len(self.seeds)


def n_params(cfg: GPTConfig) -> int:
    """The model's parameter count, from a model built without memory."""
    with torch.device("meta"):
        return sum(p.numel() for p in GPT(cfg).parameters())


class Job(NamedTuple):
    """A cached computation: its key, how to compute it, and a rough size to order jobs by
    (multiply-adds, or anything proportional to them across jobs)."""
    key: str
    compute: Callable[[], dict]
    work: float = 0.0


def _paths(key: str) -> tuple[Path, Path]:
    d = cache_dir() / "runs"
    d.mkdir(parents=True, exist_ok=True)
    return d / f"{key}.json", d / f"{key}.lock"


def _train(spec: RunSpec, log, progress=None) -> dict:
    tokens, _ = bpe_tokens(spec.corpus, spec.vocab_size)
    tr, va = split(tokens)
    tr = tr[: int(spec.train_slice * len(tr))]
    recs = train(spec.model, spec.train, tr, va, seeds=spec.seeds, device=spec.device, log=log, step=spec.step,
                 progress=progress(spec.label or spec.key(), spec.train.steps) if progress else None)
    for rec in recs:
        rec.update(label=spec.label, key=spec.key(), train_slice=spec.train_slice,
                   torch=torch.__version__, code=code_version())
    return {"runs": recs}


def memo_key(kind: str, params: dict, source=None) -> str:
    """A cache key for any deterministic computation: what, with what, by which code. The code
    is model/ and experiments/, plus the module that defines ``source`` (a function or module)
    when the computation lives elsewhere, e.g. in a test file."""
    code = code_version()
    if source is not None:
        module = inspect.getmodule(source)
        code += hashlib.sha256(inspect.getsource(module).encode()).hexdigest()[:12]
    blob = json.dumps({"kind": kind, "params": params, "torch": torch.__version__, "code": code},
                      sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def _store(path: Path, compute) -> dict:
    """Compute and write atomically (the caller holds the lock)."""
    rec = compute()
    write_atomic(path, json.dumps(rec).encode())
    return rec


def memo(key: str, compute) -> dict:
    """``compute()``'s JSON record, computed by the first process that asks and read by the rest."""
    path, lock = _paths(key)
    with FileLock(str(lock)):
        if path.is_file():
            return json.loads(path.read_text())
        return _store(path, compute)


def _compute_unless_held(key: str, compute) -> None:
    """Compute and store the job unless it is stored, or another process holds it."""
    path, lock = _paths(key)
    if path.is_file():
        return
    try:
        with FileLock(str(lock), timeout=0):
            if not path.is_file():
                _store(path, compute)
    except Timeout:
        pass  # another process is on it


def memo_many(jobs: list) -> list[dict]:
    """Several (key, compute) jobs (or ``Job``s), shared out among the processes that ask for
    the same list, in its order: a job another process holds is skipped, then waited for at the
    end."""
    jobs = [(j[0], j[1]) for j in jobs]
    for key, compute in jobs:
        _compute_unless_held(key, compute)
    return [memo(key, compute) for key, compute in jobs]


def prefetch(jobs: list) -> list[str]:
    """``memo_many``'s first pass alone: compute, in order, each job that no process has stored
    or holds, and wait for none (whoever reads a job waits for it then). A job that raises is
    left to whoever reads it, who meets the error again and reports it; the keys of those that
    raised are returned."""
    failed = []
    for key, compute, *_ in jobs:
        try:
            _compute_unless_held(key, compute)
        except Exception:
            failed.append(key)
    return failed


def jobs(specs: list[RunSpec], log=print, progress=None) -> list[Job]:
    """Each spec's training, as a job of the run cache."""
    return [Job(s.key(), lambda s=s: _train(s, log, progress), s.work()) for s in specs]


def ensure(specs: list[RunSpec], log=print, progress=None) -> list[list[dict]]:
    """Every arm's records, one list per spec, trained once among every process that asks
    (pytest-xdist workers)."""
    return [r["runs"] for r in memo_many(jobs(specs, log, progress))]
