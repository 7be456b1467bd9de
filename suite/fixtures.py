"""This document's fixtures, a pytest plugin the root conftest registers: corpora, the run cache,
``runs_of`` (the runs of the scales of suite/catalogue.py a test declares with ``@reads``,
suite/reading.py), committed evidence, and pins with their provenance. The claim tests (claims/)
read the scales; the pin tests beside them (claims/) the same runs."""
import json
from dataclasses import asdict, is_dataclass
import platform
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest
import torch

from claimcheck import evidence_note, pin_checked
from claimcheck.session import run_dir
from claimcheck.progress import tracker
from suite import settings
from suite.settings import no_corpus
from suite.pins import PORTABLE_WHY, cpu_model, describe, tolerance
from experiments import runs
from experiments.data import CorpusUnavailable, bpe_tokens

PINS = Path(__file__).resolve().parents[1] / "fixtures" / "pins"
PIN_MESSAGE_CHARS = 120  # the first line of the comparison's message: enough to name the array and its worst element


@pytest.fixture(scope="session")
def shakespeare_tokens():
    """The BPE-1024 tokens of tiny Shakespeare, or a one-line skip saying why not."""
    try:
        return bpe_tokens("tinyshakespeare", 1024)[0]
    except CorpusUnavailable as e:
        no_corpus(e)


@pytest.fixture
def pin(request, ndarrays_regression):
    """``pin(name, values, meaning, config)``: compare ``values`` (dict of arrays) with the
    committed pin fixtures/pins/<name>.npz, or write it (with a provenance file) when it is
    missing or regenerated. Each key's tolerance is ``suite.pins.tolerance(name, key)``.

    A pin is a regression check of its own, never part of a claim's test: a stale pin fails
    its test in one line and leaves every verdict as it is. Trained values move between x86
    CPUs (kernel rounding, amplified by training), so each tolerance is derived from measured
    movement (suite/pins.py), and pins skip when CLAIMS_SEED_OFFSET shifts the seeds.
    """
    assert not _claims_of_node(request.node), "a pin test names no claim"
    if problem := pin_problem(request.node):
        pytest.fail(problem, pytrace=False)

    def check(name, values, *, meaning, config):
        path = PINS / f"{name}.npz"
        arrays = {k: np.asarray(v, dtype=np.float64) for k, v in values.items()}
        _dump(request, name, arrays)
        per_key = {k: tolerance(name, k) for k in values}
        pin_checked(request.node, name, f"fixtures/pins/{name}.npz", describe(name, values), meaning)
        if settings.current().seed_offset:
            pytest.skip(f"pin {name}: CLAIMS_SEED_OFFSET={settings.current().seed_offset} shifts the seeds the pin was made with")
        regen = (not path.is_file() or request.config.getoption("force_regen")
                 or request.config.getoption("regen_all"))
        if regen:
            PINS.mkdir(parents=True, exist_ok=True)
            (PINS / f"{name}.provenance.json").write_text(json.dumps({
                "meaning": meaning, "produced_by": request.node.nodeid, "config": config,
                "tolerance": {"per_key": per_key, "why": PORTABLE_WHY}, "torch": torch.__version__,
                "device": str(config.get("device", "cpu")), "machine": platform.machine(),
                "cpu": cpu_model(), "threads": torch.get_num_threads(),
                "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            }, indent=1, default=lambda o: asdict(o) if is_dataclass(o) else str(o)) + "\n")
        try:
            ndarrays_regression.check(arrays, fullpath=path, tolerances=per_key)
        except AssertionError as e:
            if regen:
                raise
            first = str(e).strip().splitlines()
            pytest.fail(f"pin fixtures/pins/{name}.npz is stale: the measured values moved beyond "
                        f"their tolerance ({first[0][:PIN_MESSAGE_CHARS]}); if the change is intended, rerun with "
                        "--force-regen and commit the new pin", pytrace=False)

    return check


def _claims_of_node(node):
    return [cid for m in node.iter_markers("claim") for cid in m.args]


def _dump(request, name, arrays):
    """What a pin test measured, beside the report, so two machines' values can be compared
    (``python -m suite.pins movement A/ B/``) and tolerances derived from the movement."""
    out = run_dir(request.config)
    (out / "pins").mkdir(parents=True, exist_ok=True)
    (out / "pins" / f"{name}.json").write_text(json.dumps({k: v.tolist() for k, v in arrays.items()}))


from suite import catalogue  # noqa: E402
from suite.evidence import families as evidence  # noqa: E402
from suite.lab_rules import TEXT as LAB_TEXT  # noqa: E402
from suite.lab_scale import LabRuns  # noqa: E402
from suite.winograd_scale import WinogradRuns  # noqa: E402
from suite.scales import Runs, Scale, evidence_mode, train_up_front  # noqa: E402
from suite.devices import training_device  # noqa: E402
from suite.reading import Memo, RunsOf, declared, pin_problem  # noqa: E402


@pytest.fixture(autouse=True)
def _evidence_provenance(request):
    """A test that judged committed full-scale evidence says so in its verdict: on which device
    and when the numbers were recorded (read at teardown, once the test has read its arms)."""
    yield
    args = list((request.node.funcargs or {}).values())  # empty when the run was interrupted
    read = [v for a in args if isinstance(a, RunsOf) for v in a.read] + args
    seen = sorted({e for v in read if isinstance(v, (Runs, LabRuns, WinogradRuns)) for e in v.evidence})
    for scale in declared(request.node):  # a measurement read from its record (``recorded``)
        if _measured(scale) and recorded(scale, request.config):
            from suite.evidence.measured import provenance_line
            seen += [line] if (line := provenance_line(scale)) else []
    if seen:
        evidence_note(request.node, "evidence recorded on " + "; ".join(sorted(set(seen))))
    if any(isinstance(v, LabRuns) for v in read):  # the lab's claims are read on another text
        evidence_note(request.node, f"measured on {LAB_TEXT}")


# ---- the scales of suite/catalogue.py: declared by a test with @reads, read through runs_of -------

@pytest.fixture(scope="session", autouse=True)
def _ci_scales_up_front(request):
    """Before the first test, on each worker: every CPU scale that a test to be run
    declares, all its jobs in one list, the largest first (suite.scales.train_up_front). A scale that
    cannot list its jobs (a missing corpus), or a job that raises, is left to ``runs_of``, which
    meets the error again and reports it in its own tests; the rest still train."""
    needed = []
    for item in request.session.items:
        if not item.get_closest_marker("skip"):
            needed += [s for s in declared(item, up_front=True) if not any(s is n for n in needed)]
    train_up_front([s for s in catalogue.ci_scales(needed) if not recorded(s, request.config)])


def _measured(scale) -> bool:
    return any(scale is m for m in catalogue.MEASURED)


def recorded(scale, config) -> bool:
    """Whether a scale's runs are read from committed records, untrained: the Winograd task's and
    the Polish lab's stated runs, and the measurements of catalogue.MEASURED, in a run without
    --runslow (the fast tier's whole picture); --runslow trains or measures them afresh, and the
    slow tier replays the records' first steps or checks the records against the fresh values."""
    if config.getoption("--runslow"):
        return False
    return scale is catalogue.WINOGRAD or scale is catalogue.TINY_LAB or _measured(scale)


def _ensure(specs):
    """The run cache's records of ``specs``, trained once across tests and xdist workers, or a
    one-line skip when the corpus is missing."""
    try:
        bpe_tokens("tinyshakespeare", 1024)
    except CorpusUnavailable as e:
        no_corpus(e)
    quiet = not settings.current().train_log
    return runs.ensure(specs, log=(lambda *_: None) if quiet else print, progress=tracker)


def _runs(scale, config):
    """What a test reads of ``scale``: a CI scale's runs, trained up front on the CPU; a full
    scale's, trained on CUDA when read, or (no CUDA, and CLAIMS_DEVICE=cpu not set) its committed
    evidence; the lab's and Winograd's, trained with --runslow, else their committed records
    (``recorded``); the gradient norms' and the cost's own runs."""
    if recorded(scale, config):
        from suite.evidence import lab, measured, winograd
        if _measured(scale):
            return measured.recorded_runs(scale)
        return (winograd.stated_runs if scale is catalogue.WINOGRAD else lab.stated_runs)()
    if not isinstance(scale, Scale):
        return scale.runs()
    if not scale.ci and evidence_mode():
        return evidence.recorded_runs(scale)
    return scale.runs(_ensure, "cpu" if scale.ci else training_device())


@pytest.fixture(scope="session")
def _memo():
    return Memo()


@pytest.fixture
def runs_of(request, _memo):
    """``runs_of(scale)``: the runs of a scale the test declares with ``@reads(scale)``
    (suite/reading.py), each scale's fetched once a session."""
    return RunsOf(request.node, lambda scale: _memo.get((scale,), lambda: _runs(scale, request.config)))


@pytest.fixture
def ensure_runs():
    """``ensure_runs(specs)`` -> records, trained once across tests and xdist workers."""
    return _ensure


@pytest.fixture
def tiny_lab_main(runs_of, _memo):
    """The main excerpt's runs a lab verdict counts: the lab's seeds, then the recorded seeds of
    its later looks (catalogue.LAB_LOOKS, TINY_LAB_MORE; suite/evidence/lab.py main_runs). The
    test declares ``@reads(TINY_LAB)``."""
    from suite.evidence.lab import main_runs
    stated = runs_of(catalogue.TINY_LAB)
    return _memo.get((main_runs, catalogue.TINY_LAB), lambda: main_runs(stated))


@pytest.fixture
def winograd_looks(runs_of, _memo):
    """The starts a Winograd start count is judged on: the stated runs, then the recorded starts
    of its later looks (catalogue.WINO_LOOKS, WINOGRAD_MORE; suite/evidence/winograd.py). The
    test declares ``@reads(WINOGRAD)``."""
    from suite.evidence.winograd import looks_runs
    stated = runs_of(catalogue.WINOGRAD)
    return _memo.get((looks_runs, catalogue.WINOGRAD), lambda: looks_runs(stated))
