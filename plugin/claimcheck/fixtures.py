"""The fixtures a claim test uses to put what it measured in the report. Registered as a plugin
by plugin.py's pytest_configure, where the plugin is on; each writes into the test's
``user_properties``, which reach the controlling process under xdist too."""
import math

import pytest

from . import check
from .rules import RULES, judge, rule_of, within
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


class ClaimRecorder:
    """What ``claim_record`` gives a test: ``claim_record(id, measured, expected=None, tolerance=None,
    label=None, band=None, subject=False)`` puts what the test measured beside what the document says, in the
    report, and checks it, in one call (as a snapshot fixture records and compares at once).
    ``claim_record.value(measured, ...)`` is the same for a test whose ``claim`` marker names one
    claim: the ID is written once, on the marker. Both return ``measured``.

    - The ID must be one the test's ``claim`` marker names.
    - A record with no ``label`` is the claim's own number: its ``expected`` defaults to the
      registry's ``value``, and one the value does not state is a note of the run. A labelled
      record is a part (one seed, one width), with an ``expected`` of its own.
    - ``tolerance`` names the rule that judges the record (``claimcheck.rules.RULES``: it starts
      with exact, equivalence, comparison, joint or start count), or starts with ``reported`` (shown,
      judged by the test's own assertion); None reads as reported. Anything else is refused.
    - Under ``exact``, the claim's own number must lie within half a unit of the last digit of a
      number its ``expected`` prints, or the call fails the test's assertion: a value that
      contradicts the registry's cannot read *holds*.
    - ``band=(lo, hi)``: the record is judged inside it (``claimcheck.rules.within``), a number
      or a ``[mean, lo, hi]`` interval: wholly outside fails the assertion (a divergence under
      ``claimcheck.diverges``); across an edge is *undecided*.
    - ``subject=True`` marks the record the sentence is about: the errata row shows it, and the
      registry's ``correction`` is filled from its value (``claimcheck.corrections``). With none
      marked, the row shows the last record a rule judged, and the correction the claim's own
      number.

    A test's own ``assert`` can make a claim stricter than its record, never looser.
    """

    def __init__(self, item, reporter):
        self._item, self._reporter = item, reporter
        self._names = list(dict.fromkeys(claims_of(item)))  # a class's and a function's marker may repeat an ID

    def __call__(self, claim_id, measured, expected=None, tolerance=None, label=None, band=None,
                 subject=False):
        if claim_id not in self._names:
            raise ValueError(f"claim_record({claim_id!r}): this test's claim marker names "
                             f"{sorted(set(self._names)) or 'no claim'}; fix the ID or the marker")
        rule = rule_of(tolerance)
        if rule is None or (band is not None and rule == "reported"):
            raise ValueError(f"claim_record({claim_id!r}): the tolerance {str(tolerance)[:60]!r} names no rule"
                             f"{' to judge the band' if rule == 'reported' else ''}: start it with one of "
                             f"{', '.join(RULES)} (claimcheck.rules.RULES){', or with reported' * (band is None)}")
        registry = self._reporter.registry
        stated = None  # what the document states: an own number under exact is judged against it
        if label is None and claim_id in registry:  # the claim's own number: the registry's
            why = check.expected_problem(registry[claim_id], expected)
            note = f"{self._item.nodeid}: {why}"
            if why and note not in self._reporter.notes:
                self._reporter.notes.append(note)
            stated = registry[claim_id].value
            expected = stated if expected is None else expected
        self._item.user_properties.append(("claim_record", {
            "claim": claim_id, "label": label, "measured": _jsonable(measured), "expected": _jsonable(expected),
            "tolerance": tolerance, **({"band": list(band)} if band is not None else {}),
            **({"subject": True} if subject else {})}))
        if band is not None:
            _judge_band(claim_id, measured, band)
        elif rule == "exact" and label is None:
            # the registry's value where it prints a number, so a test's own expected cannot loosen it
            _judge_exact(claim_id, measured, stated if stated and check.printed(stated) else expected)
        return measured

    def value(self, measured, expected=None, tolerance=None, label=None, band=None, subject=False):
        """``claim_record(id, ...)`` with the ID of the test's one ``claim`` marker."""
        if len(self._names) != 1:
            raise ValueError(f"claim_record.value(...): this test's claim marker names {len(self._names)} claims "
                             f"({', '.join(self._names) or 'none'}); name the one meant: claim_record(id, ...)")
        return self(self._names[0], measured, expected, tolerance, label, band, subject)


def _number(v) -> float | None:
    v = v.tolist() if hasattr(v, "tolist") else v
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _judge_exact(claim_id, measured, expected) -> None:
    """The claim's own computed number against the document's: every number a text ``expected``
    prints, each to half a unit of its last digit; a number ``expected`` (a test's own, with no
    printed precision) to float rounding. Nothing to judge when either side is not a number; a
    measurement that is NaN or infinite against a number contradicts it."""
    m = _number(measured)
    if m is None:
        return
    e = _number(expected)
    printed = [(e, abs(e) * 1e-9)] if e is not None else check.printed(str(expected or ""))
    if not printed:
        return
    if not math.isfinite(m) or not any(abs(m - x) <= half * (1 + 1e-9) or math.isclose(m, x, rel_tol=1e-9)
                                       for x, half in printed):
        shown = ", ".join(f"{x:g} ± {half:g}" for x, half in printed[:3])
        raise AssertionError(f"{claim_id}: measured {m:.10g} contradicts the document's {expected!r} under the rule "
                             f"exact (within half a unit of its last printed digit: {shown})")


def _judge_band(claim_id, measured, band) -> None:
    lo_hi = measured.tolist() if hasattr(measured, "tolist") else measured
    if (isinstance(lo_hi, (list, tuple)) and len(lo_hi) == 3 and all(_number(x) is not None for x in lo_hi)
            and lo_hi[1] <= lo_hi[0] <= lo_hi[2]):
        lo, hi = float(lo_hi[1]), float(lo_hi[2])
    elif _number(lo_hi) is not None:
        lo = hi = _number(lo_hi)
    else:
        raise ValueError(f"claim_record({claim_id!r}, band=...): a band judges a number or a [mean, lo, hi] "
                         f"interval with lo <= mean <= hi, not {str(lo_hi)[:60]}")
    judge(claim_id, within(lo, hi, (float(band[0]), float(band[1]))),
          f"[{lo:g}, {hi:g}] against the band [{band[0]:g}, {band[1]:g}]")


@pytest.fixture
def claim_record(request) -> ClaimRecorder:
    """Record what the test measured for its claims, and check it (``ClaimRecorder``)."""
    return ClaimRecorder(request.node, reporter_of(request.config))


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
