"""What a test reads, declared: ``@reads(NORM_FULL)`` on the test, ``runs_of(NORM_FULL)`` in it.

The declaration is the one place the suite learns which scales a test needs: the tier hook
(conftest.py) moves a test whose every scale is read from committed records, and the CI scales
that tests to be run declare train up front (suite/fixtures.py). A test that reads a scale it
did not declare fails in one line, so the declaration cannot drift from the body.
"""
import pytest

MARK_DOC = ("reads(*scales, later=(), fresh=False): the scales of suite/catalogue.py whose runs the test reads "
            "(runs_of); later: read only if an earlier look leaves the claim undecided, so never trained up front; "
            "fresh: it checks a fresh measurement against the records, so it never runs on the records alone")


def reads(*scales, later: tuple = (), fresh: bool = False):
    """The marker: ``@reads(LADDER_CI)``, or ``pytest.param(scale, marks=reads(scale))``.
    ``later``: scales the test reads only when its first look leaves the claim undecided (a
    declared second look): allowed to ``runs_of``, never trained before the test asks.
    ``fresh=True``: the test compares what is measured now with the committed records, so the
    tier hook never moves it to the fast tier, where the records stand in for the measurement."""
    if not scales:
        raise TypeError("reads() names at least one scale of suite/catalogue.py")
    return pytest.mark.reads(*scales, later=tuple(later), fresh=fresh)


def declared(node, up_front: bool = False) -> list:
    """The scales a test declares, in order, each once (the marker may sit on the test, its
    class, its module or a parameter); ``up_front``: only those it reads whatever happens, not
    its ``later`` ones."""
    out = []
    for mark in node.iter_markers("reads"):
        for scale in [*mark.args, *(() if up_front else mark.kwargs.get("later", ()))]:
            if not any(scale is o for o in out):
                out.append(scale)
    return out


def fresh(node) -> bool:
    """Whether a test declares that it reads fresh measurements (``reads(..., fresh=True)``)."""
    return any(m.kwargs.get("fresh") for m in node.iter_markers("reads"))


def pin_problem(node) -> str:
    """Why a pin test is declared wrong, or "": a pin checks what is measured now, so a test that
    declares scales must declare them ``fresh``, or the tier hook would read records in its place."""
    if declared(node) and not fresh(node):
        return f"{node.nodeid}: a pin checks what is measured now; declare its scales with @reads(..., fresh=True)"
    return ""


class RunsOf:
    """``runs_of(scale)``: the runs of a declared scale, fetched once a session (``fetch``)."""

    def __init__(self, node, fetch):
        self._node, self._fetch = node, fetch
        self.declared = declared(node)
        self.read: list = []  # what the test has read, for its evidence line (suite/fixtures.py)

    def __call__(self, scale):
        if not any(scale is s for s in self.declared):
            names = ", ".join(getattr(s, "name", "?") for s in self.declared) or "none"
            pytest.fail(f"{self._node.nodeid} reads {getattr(scale, 'name', scale)!r} but declares only {names}: "
                        f"add it to the test's @reads(...)", pytrace=False)
        runs = self._fetch(scale)
        self.read.append(runs)
        return runs


class Memo:
    """A session's fetched values, keyed by the objects they were made from (a scale, or a
    function and a scale), by identity: a scale holds dicts, so it has no hash. Errors are kept
    too: a scale that skipped or failed once does so for every test that reads it, as a session
    fixture's error does, without fetching again."""

    def __init__(self):
        self._got: dict = {}

    def get(self, of: tuple, make):
        key = tuple(map(id, of))
        if key not in self._got:
            try:
                got = (True, make())
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as e:  # pytest's skip and fail are BaseExceptions
                got = (False, e)
            self._got[key] = (of, *got)  # ``of`` held, so no id is reused while the session lasts
        _, ok, value = self._got[key]
        if not ok:
            raise value
        return value
