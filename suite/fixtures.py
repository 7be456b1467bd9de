"""This document's fixtures, a pytest plugin the root conftest loads: corpora, the run cache, the
scales of suite/catalogue.py (one session fixture each), committed evidence, and pins with their
provenance. The claim tests (claims/) read the scales; the pin tests beside them (claims/) the same runs."""
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


@pytest.fixture(scope="session")
def ensure_runs(shakespeare_tokens):
    """``ensure_runs(specs)`` -> records, trained once across tests and xdist workers."""
    quiet = not settings.current().train_log

    def ensure(specs):
        return runs.ensure(specs, log=(lambda *_: None) if quiet else print, progress=tracker)

    return ensure


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


@pytest.fixture(autouse=True)
def _evidence_provenance(request):
    """A test that judged committed full-scale evidence says so in its verdict: on which device
    and when the numbers were recorded (read at teardown, once the test has read its arms)."""
    yield
    args = (request.node.funcargs or {}).values()  # None when the run was interrupted
    seen = sorted({e for v in args if isinstance(v, (Runs, LabRuns, WinogradRuns)) for e in v.evidence})
    for name in request.fixturenames:  # a measurement read from its record (``recorded``), asked
        scale = catalogue.FIXTURES.get(name)  # for by argument or by getfixturevalue
        if _measured(scale) and recorded(scale, request.config):
            from suite.evidence.measured import provenance_line
            seen += [line] if (line := provenance_line(scale)) else []
    if seen:
        evidence_note(request.node, "evidence recorded on " + "; ".join(sorted(set(seen))))
    if any(isinstance(v, LabRuns) for v in args):  # the lab's claims are read on another text
        evidence_note(request.node, f"measured on {LAB_TEXT}")


# ---- the scales of suite/catalogue.py: one session fixture each, named in catalogue.FIXTURES -------

@pytest.fixture(scope="session", autouse=True)
def _ci_scales_up_front(request):
    """Before the first test, on each worker: every CPU scale that a test to be run
    reads, all its jobs in one list, the largest first (suite.scales.train_up_front). A scale that
    cannot list its jobs (a missing corpus), or a job that raises, is left to the scale's own
    fixture, which meets the error again and reports it in its own tests; the rest still train."""
    needed = {name for item in request.session.items if not item.get_closest_marker("skip")
              for name in getattr(item, "fixturenames", ())}
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
    return getattr(scale, "name", None) in (catalogue.WINOGRAD.name, catalogue.TINY_LAB.name) \
        or _measured(scale)


def _runs(scale, request):
    """What a test reads of ``scale``: a CI scale's runs, trained up front on the CPU; a full
    scale's, trained on CUDA when read, or (no CUDA, and CLAIMS_DEVICE=cpu not set) its committed
    evidence; the lab's and Winograd's, trained with --runslow, else their committed records
    (``recorded``); the gradient norms' and the cost's own runs."""
    if recorded(scale, request.config):
        from suite.evidence import lab, measured, winograd
        if _measured(scale):
            return measured.recorded_runs(scale)
        return {catalogue.WINOGRAD.name: winograd.stated_runs, catalogue.TINY_LAB.name: lab.stated_runs}[scale.name]()
    if not isinstance(scale, Scale):
        return scale.runs()
    if not scale.ci and evidence_mode():
        return evidence.recorded_runs(scale)
    device = "cpu" if scale.ci else request.getfixturevalue("device")
    return scale.runs(request.getfixturevalue("ensure_runs"), device)


def _scale_fixture(name, scale):
    @pytest.fixture(scope="session", name=name)
    def fixture(request):
        return _runs(scale, request)
    fixture.__doc__ = f"The runs of {getattr(scale, 'name', name)} (suite/catalogue.py)."
    return fixture


# pytest finds a fixture as a module attribute: one per entry of the catalogue's table
for _name, _scale in catalogue.FIXTURES.items():
    globals()[f"_fixture_{_name}"] = _scale_fixture(_name, _scale)


@pytest.fixture(scope="session")
def evidence_runs():
    """``scale -> runs`` for a full-scale diagnosis grid: a point's committed records."""
    return evidence.recorded_runs


@pytest.fixture(scope="session")
def lab_point_runs(tiny_lab):
    """``scale -> runs`` for a Polish-lab diagnosis grid: the stated scale's are the verdict's own
    runs, a point's its committed record (suite/evidence/lab.py)."""
    from suite.evidence.lab import point_runs
    return lambda scale: tiny_lab if scale.name == catalogue.TINY_LAB.name else point_runs(scale, tiny_lab)


@pytest.fixture(scope="session")
def tiny_lab_main(tiny_lab):
    """The main excerpt's runs a lab verdict counts: the lab's seeds, then the recorded seeds of
    its later looks (catalogue.LAB_LOOKS, TINY_LAB_MORE; suite/evidence/lab.py main_runs)."""
    from suite.evidence.lab import main_runs
    return main_runs(tiny_lab)


@pytest.fixture(scope="session")
def winograd_looks(winograd):
    """The starts a Winograd start count is judged on: the stated runs, then the recorded starts
    of its later looks (catalogue.WINO_LOOKS, WINOGRAD_MORE; suite/evidence/winograd.py)."""
    from suite.evidence.winograd import looks_runs
    return looks_runs(winograd)


@pytest.fixture(scope="session")
def winograd_point_runs(winograd):
    """``scale -> runs`` for a Winograd diagnosis grid: the stated scale's are the verdict's own
    runs, a point's are its committed records (suite/evidence/winograd.py)."""
    from suite.evidence.winograd import point_runs
    return lambda scale: winograd if scale.name == catalogue.WINOGRAD.name else point_runs(scale, winograd)
