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

from model import runs
from model.data import CorpusUnavailable, bpe_tokens

PINS = Path(__file__).resolve().parents[1] / "fixtures" / "pins"


@pytest.fixture(scope="session")
def shakespeare_tokens():
    """The BPE-1024 tokens of tiny Shakespeare, or a one-line skip saying why not."""
    try:
        return bpe_tokens("tinyshakespeare", 1024)[0]
    except CorpusUnavailable as e:
        pytest.skip(str(e))


@pytest.fixture(scope="session")
def ensure_runs(shakespeare_tokens):
    """``ensure_runs(specs)`` -> records, trained once across tests and xdist workers."""
    quiet = os.environ.get("CLAIMS_TRAIN_LOG") is None

    def ensure(specs):
        return runs.ensure(specs, log=(lambda *_: None) if quiet else print)

    return ensure


@pytest.fixture
def pin(request, ndarrays_regression):
    """``pin(name, values: dict[str, array], meaning, rtol, config)``: compare with the
    committed pin, or write it (with a provenance file) when it is missing or regenerated."""

    def check(name, values, *, meaning, rtol, config):
        path = PINS / f"{name}.npz"
        regen = (not path.is_file() or request.config.getoption("force_regen")
                 or request.config.getoption("regen_all"))
        if regen:
            PINS.mkdir(parents=True, exist_ok=True)
            (PINS / f"{name}.provenance.json").write_text(json.dumps({
                "meaning": meaning, "produced_by": request.node.nodeid, "config": config,
                "tolerance": {"rtol": rtol}, "torch": torch.__version__,
                "device": str(config.get("device", "cpu")), "machine": platform.machine(),
                "threads": torch.get_num_threads(),
                "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            }, indent=1, default=lambda o: asdict(o) if is_dataclass(o) else str(o)) + "\n")
        arrays = {k: np.asarray(v, dtype=np.float64) for k, v in values.items()}
        try:
            ndarrays_regression.check(arrays, fullpath=path, default_tolerance=dict(rtol=rtol, atol=0))
        except AssertionError as e:
            if regen:
                raise
            first = str(e).strip().splitlines()
            pytest.fail(f"pin fixtures/pins/{name}.npz is stale: the measured values moved beyond "
                        f"rtol {rtol} ({first[0][:120]}); if the change is intended, rerun with "
                        "--force-regen and commit the new pin", pytrace=False)

    return check


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
