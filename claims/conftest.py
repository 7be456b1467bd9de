"""Fixtures for the training claims: corpora, the run cache, and pins with provenance."""
import json
from dataclasses import asdict, is_dataclass
import os
import platform
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest
import torch

from claims.marks import no_corpus
from claims.pins import PORTABLE_WHY, describe, tolerance
from claims.progress import tracker
from experiments import runs
from experiments.data import CorpusUnavailable, bpe_tokens

PINS = Path(__file__).resolve().parents[1] / "fixtures" / "pins"


@pytest.fixture(scope="session")
def shakespeare_tokens():
    """The BPE-1024 tokens of tiny Shakespeare, or a one-line skip saying why not."""
    try:
        return bpe_tokens("tinyshakespeare", 1024)[0]
    except CorpusUnavailable as e:
        no_corpus(e)


@pytest.fixture(scope="session")
def ensure_runs(shakespeare_tokens):
    """``ensure_runs(specs)`` -> records, trained once across tests and xdist workers."""
    quiet = os.environ.get("CLAIMS_TRAIN_LOG") is None

    def ensure(specs):
        return runs.ensure(specs, log=(lambda *_: None) if quiet else print, progress=tracker)

    return ensure


@pytest.fixture
def pin(request, ndarrays_regression):
    """``pin(name, values, meaning, config)``: compare ``values`` (dict of arrays) with the
    committed pin fixtures/pins/<name>.npz, or write it (with a provenance file) when it is
    missing or regenerated. Each key's tolerance is ``claims.pins.tolerance(name, key)``.

    A pin is a regression check of its own, never part of a claim's test: a stale pin fails
    its test in one line and leaves every verdict as it is. Trained values move between x86
    CPUs (kernel rounding, amplified by training), so each tolerance is derived from measured
    movement (claims/pins.py), and pins skip when CLAIMS_SEED_OFFSET shifts the seeds.
    """
    assert not _claims_of_node(request.node), "a pin test names no claim"

    def check(name, values, *, meaning, config):
        from claims.scales import seed_offset
        path = PINS / f"{name}.npz"
        arrays = {k: np.asarray(v, dtype=np.float64) for k, v in values.items()}
        _dump(request, name, arrays)
        per_key = {k: tolerance(name, k) for k in values}
        request.node.user_properties.append(("claim_pin", {
            "name": name, "file": f"fixtures/pins/{name}.npz", "meaning": meaning,
            "tolerance": describe(name, values)}))
        if seed_offset():
            pytest.skip(f"pin {name}: CLAIMS_SEED_OFFSET={seed_offset()} shifts the seeds the pin was made with")
        regen = (not path.is_file() or request.config.getoption("force_regen")
                 or request.config.getoption("regen_all"))
        if regen:
            PINS.mkdir(parents=True, exist_ok=True)
            (PINS / f"{name}.provenance.json").write_text(json.dumps({
                "meaning": meaning, "produced_by": request.node.nodeid, "config": config,
                "tolerance": {"per_key": per_key, "why": PORTABLE_WHY}, "torch": torch.__version__,
                "device": str(config.get("device", "cpu")), "machine": platform.machine(),
                "cpu": _cpu_model(), "threads": torch.get_num_threads(),
                "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            }, indent=1, default=lambda o: asdict(o) if is_dataclass(o) else str(o)) + "\n")
        try:
            ndarrays_regression.check(arrays, fullpath=path, tolerances=per_key)
        except AssertionError as e:
            if regen:
                raise
            first = str(e).strip().splitlines()
            pytest.fail(f"pin fixtures/pins/{name}.npz is stale: the measured values moved beyond "
                        f"their tolerance ({first[0][:120]}); if the change is intended, rerun with "
                        "--force-regen and commit the new pin", pytrace=False)

    return check


def _claims_of_node(node):
    return [cid for m in node.iter_markers("claim") for cid in m.args]


def _dump(request, name, arrays):
    """What a pin test measured, beside the report, so two machines' values can be compared
    (``python -m claims.pins movement A/ B/``) and tolerances derived from the movement."""
    out = Path(request.config.getoption("--claims-report-dir") or Path(request.config.rootpath) / "reports")
    (out / "pins").mkdir(parents=True, exist_ok=True)
    (out / "pins" / f"{name}.json").write_text(json.dumps({k: v.tolist() for k, v in arrays.items()}))


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


class Ladder:
    """One scale's ladder runs: ``val("mean")`` -> per-seed validation perplexities.

    Runs are fetched from the run cache when first read, so a test pays only for its rungs.
    """

    def __init__(self, scale, get, device="cpu"):
        self.scale, self._get, self.device = scale, get, device
        self.records = {}  # (rung, seed) -> record

    def record(self, rung, seed):
        if (rung, seed) not in self.records:
            self.records[rung, seed] = self._get([self.scale.spec(rung, seed, self.device)])[0]
        return self.records[rung, seed]

    def prefetch(self):
        """Every run of the scale, shared out among the processes that ask (xdist)."""
        specs = self.scale.specs(device=self.device)
        for spec, rec in zip(specs, self._get(specs)):
            self.records[spec.label.split("/")[1], spec.seed] = rec
        return self

    def val(self, rung):
        return [self.record(rung, s)["val_ppl"] for s in self.scale.seeds]

    def train(self, rung):
        return [self.record(rung, s)["train_ppl"] for s in self.scale.seeds]


@pytest.fixture(scope="session")
def ladder_ci(ensure_runs):
    from claims.scales import LADDER_CI
    return Ladder(LADDER_CI, ensure_runs).prefetch()


@pytest.fixture(scope="session")
def depth_ci(ensure_runs):
    from claims.scales import DEPTH_CI
    return Ladder(DEPTH_CI, ensure_runs).prefetch()


@pytest.fixture(scope="session")
def ladder_full(ensure_runs, device):
    from claims.scales import LADDER_FULL
    return Ladder(LADDER_FULL, ensure_runs, str(device))  # lazy: each test trains what it reads


class TinyLabRuns:
    """The Polish lab's runs: ``ppl(part, positions)`` -> array (excerpt, seed, checkpoint).

    Excerpt 0 opens the poem and is the main one, where the chapter's own 5-seed claims are
    read; the others show how far a verdict depends on the excerpt.
    """

    def __init__(self, excerpts, seeds, cfg, records, grams):
        self.excerpts, self.seeds, self.cfg, self.grams = excerpts, seeds, cfg, grams
        self.steps = np.array(cfg.checkpoints)
        E, S = len(excerpts), len(seeds)
        self._ppl = {pe: {part: np.array(rec[part]).reshape(E, S, -1) for part in ("train", "val", "test")}
                     for pe, rec in records.items()}

    def ppl(self, part, positions=True):
        return self._ppl[positions][part]

    def at(self, part, step, positions=True):
        """(excerpt, seed) perplexities at one checkpoint."""
        return self.ppl(part, positions)[..., list(self.steps).index(step)]

    def gram(self, n, part):
        """The n-gram's perplexity on each excerpt, shape (excerpt, 1) to broadcast over seeds."""
        return np.array([g[part] for g in self.grams[n]])[:, None]

    def best_val_test(self, positions=True):
        """(excerpt, seed) arrays of the step chosen on validation and of test at that step,
        through the lab's protocol (test is read once per run)."""
        from experiments.polish_lab import best_val_test
        val, test = self.ppl("val", positions), self.ppl("test", positions)
        steps, tests = np.zeros(val.shape[:2], int), np.zeros(val.shape[:2])
        for e, s in np.ndindex(*val.shape[:2]):
            steps[e, s], tests[e, s] = best_val_test(
                dict(zip(self.steps.tolist(), val[e, s])),
                lambda step: test[e, s, list(self.steps).index(step)])
        return steps, tests


@pytest.fixture(scope="session")
def tiny_lab():
    """Every lab run: excerpts x seeds, with and without positions, trained once (xdist-shared)."""
    from claims.scales import TINY_LAB, TINY_LAB_EXCERPTS, TINY_LAB_SEEDS
    from experiments.polish_lab import ngram_scores, train_runs, with_positions
    from experiments.polish import excerpts
    try:
        exs = excerpts(TINY_LAB_EXCERPTS)
    except CorpusUnavailable as e:
        no_corpus(e)
    pairs = [(ex, s) for ex in exs for s in TINY_LAB_SEEDS]
    quiet = os.environ.get("CLAIMS_TRAIN_LOG") is None
    jobs = []
    for pe in (True, False):
        cfg = with_positions(TINY_LAB, pe)
        key = runs.memo_key("tiny-lab", {"config": asdict(cfg), "seeds": TINY_LAB_SEEDS,
                                         "excerpts": [ex.sha256 for ex in exs]})
        label = f"tiny-lab/{'positions' if pe else 'no-positions'}/{len(pairs)} runs"
        jobs.append((key, lambda cfg=cfg, label=label: train_runs(
            cfg, pairs, log=None if quiet else print, progress=tracker(label, cfg.steps))))
    with_pe, without_pe = runs.memo_many(jobs)
    grams = {n: [ngram_scores(ex, n) for ex in exs] for n in (2, 3)}
    return TinyLabRuns(exs, TINY_LAB_SEEDS, TINY_LAB, {True: with_pe, False: without_pe}, grams)


def _scale_fixture(name, ci):
    """A session fixture for one issue-6 scale: CI scales prefetch every run (shared among
    xdist workers); full scales train lazily, on the test's device."""
    if ci:
        def fixture(ensure_runs):
            from claims import scales
            return Ladder(getattr(scales, name), ensure_runs).prefetch()
    else:
        def fixture(ensure_runs, device):
            from claims import scales
            return Ladder(getattr(scales, name), ensure_runs, str(device))
    return pytest.fixture(scope="session", name=name.lower())(fixture)


sqrt_ci = _scale_fixture("SQRT_CI", ci=True)
sqrt_full = _scale_fixture("SQRT_FULL", ci=False)
norm_ci = _scale_fixture("NORM_CI", ci=True)
norm_full = _scale_fixture("NORM_FULL", ci=False)
norm_eq_ci = _scale_fixture("NORM_EQ_CI", ci=True)
pos_ci = _scale_fixture("POS_CI", ci=True)
pos_full = _scale_fixture("POS_FULL", ci=False)
