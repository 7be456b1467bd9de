"""The fixtures a claim test uses to put what it measured in the report. Registered as a plugin
by plugin.py's pytest_configure, where the plugin is on; each writes into the test's
``user_properties``, which reach the controlling process under xdist too."""
import math

import pytest

from . import check
from .items import claims_of
from .session import reporter_of, run_dir


def _jsonable(v):
    """Numbers from numpy/torch become plain floats; NaN and inf become strings."""
    if hasattr(v, "tolist"):
        v = v.tolist()
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return str(v)


@pytest.fixture
def claim_record(request):
    """``claim_record(id, measured, expected=None, tolerance=None, label=None)``.

    Puts what a test measured beside what the document says, in the report. The ID must be
    one the test's ``claim`` marker names. A record with no ``label`` is the claim's own number:
    its ``expected`` defaults to the registry's ``value``, and one the value does not seem to state
    is a note of the run. A labelled record is a part (one seed, one width) with an ``expected`` of
    its own.
    """
    names = set(claims_of(request.node))
    reporter = reporter_of(request.config)
    registry = reporter.registry

    def record(claim_id, measured, expected=None, tolerance=None, label=None):
        if claim_id not in names:
            raise ValueError(f"claim_record({claim_id!r}): this test's claim marker names "
                             f"{sorted(names) or 'no claim'}")
        if label is None and claim_id in registry:  # the claim's own number: the registry's
            why = check.expected_problem(registry[claim_id], expected)
            if why and why not in reporter.notes:
                reporter.notes.append(f"{request.node.nodeid}: {why}")
            expected = registry[claim_id].value if expected is None else expected
        request.node.user_properties.append(("claim_record", {
            "claim": claim_id, "label": label, "measured": _jsonable(measured),
            "expected": _jsonable(expected), "tolerance": tolerance}))
        return measured

    return record


@pytest.fixture
def claim_diagnosis(request):
    """``claim_diagnosis(id, {"fixed", "why", "grid": [...]})``: the claim's diagnosis, shown in
    its errata row. Only a test marked ``diagnosis(id)`` may report one."""
    names = {cid for m in request.node.iter_markers("diagnosis") for cid in m.args}

    def report(claim_id, diagnosis):
        if claim_id not in names:
            raise ValueError(f"claim_diagnosis({claim_id!r}): this test's diagnosis marker names "
                             f"{sorted(names) or 'no claim'}")
        request.node.user_properties.append(("claim_diagnosis", _jsonable(dict(diagnosis, claim=claim_id))))
        return diagnosis

    return report


@pytest.fixture
def claim_figure(request):
    """``claim_figure(id, name, draw)``: draw(fig) on a matplotlib figure saved under the report.

    matplotlib is optional: without it the figure is skipped and the test goes on.
    """
    names = set(claims_of(request.node)) | {cid for m in request.node.iter_markers("diagnosis") for cid in m.args}
    outdir = run_dir(request.config)

    def figure(claim_id, name, draw):
        if claim_id not in names:
            raise ValueError(f"claim_figure({claim_id!r}): not named by this test's claim marker")
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            return None
        fig = plt.figure(figsize=(6, 4))
        try:
            draw(fig)
            path = outdir / "figures" / f"{name}.png"
            path.parent.mkdir(parents=True, exist_ok=True)
            fig.savefig(path, dpi=110, bbox_inches="tight")
        finally:
            plt.close(fig)
        request.node.user_properties.append(
            ("claim_figure", {"claim": claim_id, "path": f"figures/{name}.png"}))
        return path

    return figure
