"""The suite's statistical decision rules, written once. Noise must make a pass harder, never
easier: an interval passes only when it lies *inside* its band.

- ``mean_interval``: the t interval of a mean over seeds (paired differences included). A
  claim "about X" is an equivalence: the two one-sided tests at 5 % pass exactly when the 90 %
  interval lies inside the band (Schuirmann's TOST).
- ``inside``: the interval, not the point, inside the band.
- ``within``: the three answers of an equivalence: inside the band (holds), wholly outside it (a
  measured disagreement), or across an edge: no verdict, which ``claimcheck.undecided`` reports.
- ``beyond``: a one-sided comparison with a margin ("worse by more than a machine moves a
  run"): above it, below it, or straddling it. A straddling interval is no verdict, neither a
  pass nor a divergence: the measurement is too small, and more seeds, not a wider band, decide.
- ``joint``: a claim made of several parts (four arms of a table, a ratio and a level): it holds
  when every part's interval passes, each at the claim's level (an intersection-union test keeps
  the false pass at one part's), and diverges only when one part's wider interval, at
  1 - (1 - level) / k for k parts, lies wholly outside (Bonferroni: k parts do not give noise k
  chances to accuse the text). Between the two it is undecided.
- ``starts``: the one rule for every sentence that counts starts ("4 of 5", "on every start",
  "at least one start") or says what training produces (one trained model's result, read as the
  typical start). Such a sentence names a population rate, a *line* the rate is above:
  ``EXISTS`` (> 0: "a start", "sometimes"), ``MAJORITY`` (> 1/2: "4 of 5", "3 of 5", what one
  trained model shows) or ``NEARLY_ALL`` (> 4/5: "5 of 5", "every start"; above the rate a
  "4 of 5" names, so "every start" says more than "4 of 5"). Three outcomes, from two one-sided
  exact binomial tests at ALPHA: *holds* when the rate is shown above the line, *diverges* when
  it is shown below it, else *undecided* (more starts decide). Equivalently, the exact
  (Clopper-Pearson) interval at 1 - 2 ALPHA lies above the line, below it, or across it. A test
  that fails to reject is never agreement: Fisher's test of the chapter's own k of 5 against
  ours is reported beside the verdict, as how typical the chapter's starts were, and decides
  nothing. ``starts_joint``: a claim of several counts, judged like ``joint`` (every part holds
  at ALPHA; one part shown below its line at ALPHA / k diverges).

docs/reference/statistics.md maps each kind of sentence to one of these rules.
"""
from dataclasses import dataclass

import numpy as np
from scipy import stats

from claimcheck import undecided

ALPHA = 0.05
TOST_LEVEL = 0.90  # two one-sided tests at 5 % each
# A look after a first one that could not decide (more seeds, added once a result was seen) is
# judged at 97.5 %: the two looks together pass a false claim at most 5 % + 1.25 % of the time.
# Claims with a declared ``Schedule`` no longer use it; those without one yet still do.
SECOND_LOOK = 0.975


@dataclass(frozen=True)
class Schedule:
    """A claim's declared looks: the seed counts at which it is judged, in order, the last its cap.

    Each look spends ``alpha / len(looks)`` of each side's alpha (Bonferroni over the looks), so
    a false *holds* (or a false *diverges*) over every look together has probability at most
    ``alpha`` however the looks fall (tests/test_sequential.py checks it by simulation). A look is
    taken on the first ``n`` declared seeds only, never on a part of them or on seeds beyond
    them; the claim's verdict is that of the first look that decides, and later records (which
    other claims sharing the evidence may need) never change it. Undecided at the last look is
    final: *undecided at the cap*."""
    looks: tuple[int, ...]
    alpha: float = ALPHA

    def __post_init__(self):
        if not self.looks or list(self.looks) != sorted(set(self.looks)) or self.looks[0] < 1:
            raise ValueError(f"Schedule{self.looks}: the looks are increasing seed counts, at least one")

    @property
    def cap(self) -> int:
        return self.looks[-1]

    @property
    def alpha_per_look(self) -> float:
        """Each side's alpha at one look."""
        return self.alpha / len(self.looks)

    @property
    def level(self) -> float:
        """The two-sided interval level at each look (TOST at ``alpha_per_look`` a side)."""
        return 1 - 2 * self.alpha_per_look

    def text(self) -> str:
        return (f"looks at {', '.join(map(str, self.looks))} seeds (cap {self.cap}), each at "
                f"{self.level * 100:.4g} % (alpha {self.alpha:g} a side split over {len(self.looks)} looks)")


@dataclass(frozen=True)
class Look:
    """Where a schedule stands: ``holds`` True / False / None at look ``index`` (1-based) of
    ``schedule`` on its first ``n`` seeds; ``final`` when no later look can change it (decided, or
    undecided at the cap); ``shown`` what the deciding (or last) look measured."""
    schedule: Schedule
    index: int
    n: int
    holds: bool | None
    shown: object = None

    @property
    def final(self) -> bool:
        return self.holds is not None or self.n == self.schedule.cap

    @property
    def next_n(self) -> int | None:
        """The seeds the next look needs, or None when the claim is final."""
        return None if self.final else self.schedule.looks[self.index]

    def text(self) -> str:
        j = f"look {self.index} of {len(self.schedule.looks)} ({self.n} seeds, {self.schedule.level * 100:.4g} %)"
        if self.holds is not None:
            return j
        if self.final:
            return f"{j}: undecided at the cap"
        return f"{j}: undecided until look {self.index + 1} ({self.next_n} seeds)"


def sequential(schedule: Schedule, available: int, judge_at) -> Look:
    """Take ``schedule``'s looks in order on the first n of ``available`` seeds: ``judge_at(n,
    level, alpha)`` returns ``(holds, shown)`` for the first n seeds at a look's interval level
    (and a side's alpha, for start counts). The first look that decides is the verdict. With fewer
    seeds than the first look, no look is taken: index 0, undecided, not final."""
    last = Look(schedule, 0, 0, None)
    for i, n in enumerate(schedule.looks, 1):
        if n > available:
            break
        holds, shown = judge_at(n, schedule.level, schedule.alpha_per_look)
        last = Look(schedule, i, n, None if holds is None else bool(holds), shown)
        if holds is not None:
            break
    return last


def mean_interval(x, level: float = TOST_LEVEL) -> tuple[float, float, float]:
    """(mean, lo, hi): the t interval of the mean of ``x`` (seeds) at ``level``."""
    x = np.asarray(x, float)
    m = float(x.mean())
    if np.isnan(x).any():
        return m, np.nan, np.nan  # a run that blew up: within / beyond raise on it
    if len(x) < 2:
        return m, -np.inf, np.inf  # one seed bounds nothing
    half = float(stats.t.ppf(0.5 + level / 2, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x)))
    return m, m - half, m + half


def inside(lo: float, hi: float, band: tuple[float, float]) -> bool:
    """The whole interval inside the band (closed)."""
    return band[0] <= lo and hi <= band[1]


def _finite_bounds(lo: float, hi: float) -> None:
    """A NaN bound is a run that blew up, never a reason to measure more: it fails."""
    if np.isnan(lo) or np.isnan(hi):
        raise ValueError(f"the interval [{lo}, {hi}] is not a number: a run's value is NaN")


def within(lo: float, hi: float, band: tuple[float, float]) -> bool | None:
    """True when the interval lies inside the band, False when it lies wholly outside it, None
    when it crosses an edge (undecided: neither the claim nor its negation is shown)."""
    _finite_bounds(lo, hi)
    if inside(lo, hi, band):
        return True
    if hi < band[0] or lo > band[1]:
        return False
    return None


def beyond(lo: float, hi: float, margin: float) -> bool | None:
    """True when the whole interval lies above ``margin``, False when it lies wholly at or
    below it, None when it straddles it (undecided)."""
    _finite_bounds(lo, hi)
    if lo > margin:
        return True
    if hi <= margin:
        return False
    return None


def joint(parts, level: float = TOST_LEVEL) -> tuple[list[tuple[float, float, float]], bool | None]:
    """``parts``: ``(sample, check)`` pairs, ``check(lo, hi)`` a judgement of an interval (True /
    False / None, as ``within`` and ``beyond``). Returns each part's (mean, lo, hi) at ``level``,
    and the claim's verdict: True when every part passes at ``level``; False when some part's
    interval at ``wide_level(level, k)`` fails its check (Bonferroni over the k parts); else None."""
    parts = list(parts)
    if not parts:
        raise ValueError("joint() needs at least one part")
    wide = wide_level(level, len(parts))
    shown, passes, fails = [], [], []
    for x, check in parts:
        m, lo, hi = mean_interval(x, level)
        shown.append((m, lo, hi))
        passes.append(_side(check(lo, hi)) is True)
        fails.append(_side(check(*mean_interval(x, wide)[1:])) is False)
    return shown, (True if all(passes) else False if any(fails) else None)


def _side(v) -> bool | None:
    return None if v is None else bool(v)  # a numpy bool counts as the bool it is


def wide_level(level: float, k: int) -> float:
    """The interval level at which one of ``k`` parts may show a divergence (Bonferroni)."""
    return 1 - (1 - level) / k


# The rules of docs/reference/statistics.md, by the name a judged record's tolerance starts with. A record
# whose tolerance starts with "reported" is shown and judged by nothing.
RULES = {
    "exact": "a computed value: equality, or float rounding at a stated tolerance",
    "equivalence": "a stated number: the interval of the seed mean inside the word table's band (TOST)",
    "comparison": "a paired difference or ratio: its interval inside its band, or beyond its margin",
    "joint": "several parts in one sentence: every part passes; one fails only at its Bonferroni level",
    "start count": "a population rate against the line the sentence names: exact one-sided binomial tests",
}


def rule_of(tolerance) -> str | None:
    """The rule a record's tolerance names ("reported" for a record no rule judges), or None."""
    text = str(tolerance or "reported").lstrip()
    return next((r for r in ("reported", *RULES) if text.startswith(r)), None)


def check_tolerance(claim_id: str, tolerance) -> None:
    """One line when a record's tolerance names no rule of docs/reference/statistics.md."""
    if rule_of(tolerance) is None:
        raise ValueError(f"claim_record({claim_id!r}): the tolerance {str(tolerance)[:60]!r} names no rule: start it "
                         f"with one of {', '.join(RULES)} (docs/reference/statistics.md), or with 'reported'")


# The population rate a start-count sentence names (docs/reference/statistics.md, "start counts").
EXISTS, MAJORITY, NEARLY_ALL = 0.0, 0.5, 0.8
LINES = {EXISTS: "some start (rate > 0)", MAJORITY: "most starts (rate > 1/2)",
         NEARLY_ALL: "nearly every start (rate > 4/5)"}


def starts(ok, line: float, alpha: float = ALPHA) -> dict:
    """K of N starts with the property, judged against the population ``line``: ``holds`` True
    when an exact one-sided binomial test shows the rate above it, False when one shows it
    below, None when neither does; ``p_above``/``p_below`` are the two tests' p, ``interval``
    the exact interval at 1 - 2 alpha that says the same thing."""
    if line not in LINES:
        raise ValueError(f"line {line!r}: a start count names one of {', '.join(map(str, LINES))} (suite/rules.py)")
    ok = np.asarray(ok, bool).ravel()
    K, N = int(ok.sum()), ok.size
    if N == 0:
        raise ValueError("starts() needs at least one start")
    if line == EXISTS:  # any start with the property shows the rate is above 0; none shows nothing
        p_above, p_below = (0.0 if K else 1.0), 1.0
    else:
        p_above = float(stats.binomtest(K, N, line, alternative="greater").pvalue)
        p_below = float(stats.binomtest(K, N, line, alternative="less").pvalue)
    ci = stats.binomtest(K, N).proportion_ci(confidence_level=1 - 2 * alpha, method="exact")
    holds = True if p_above < alpha else False if p_below < alpha else None
    return {"K": K, "N": N, "line": line, "p_above": p_above, "p_below": p_below,
            "interval": (float(ci.low), float(ci.high)), "holds": holds}


def starts_joint(parts, alpha: float = ALPHA) -> tuple[list[dict], bool | None]:
    """``parts``: ``(ok, line)`` pairs, the counts one sentence makes. Each part's ``starts`` at
    ``alpha``; the claim holds when every part holds, diverges when some part is shown below its
    line at alpha / k (Bonferroni over the k parts), else it is undecided."""
    parts = list(parts)
    if not parts:
        raise ValueError("starts_joint() needs at least one part")
    shown = [starts(ok, line, alpha) for ok, line in parts]
    wide = [starts(ok, line, alpha / len(parts)) for ok, line in parts]
    return shown, (True if all(r["holds"] is True for r in shown) else
                   False if any(r["holds"] is False for r in wide) else None)


def rate_text(r: dict) -> str:
    lo, hi = r["interval"]
    return (f"{r['K']} of {r['N']} starts, rate {r['K'] / r['N']:.2f} [{lo:.2f}, {hi:.2f}] against "
            f"{LINES[r['line']]}")


def start_rule(line: float) -> str:
    """The tolerance a start-count record names."""
    return (f"start count: {LINES[line]}, exact one-sided binomial tests at alpha {ALPHA} "
            "(holds above, diverges below, else undecided; docs/reference/statistics.md)")


MOST = start_rule(MAJORITY)


def decide(r: dict, what: str = "") -> None:
    """Assert one start count's verdict in the calling test (``judge``)."""
    judge(what or "start count", r["holds"], rate_text(r))


def decide_parts(claim_id: str, *parts) -> None:
    """Assert a claim of one or more start counts (``(ok, line)`` parts, ``starts_joint``) in the
    calling test (``judge``)."""
    shown, holds = starts_joint(parts)
    judge(claim_id, holds, "; ".join(rate_text(r) for r in shown))


def two_se(p: float, n: int) -> float:
    """A share of ``n`` items near ``p``: the band the word table gives a percentage one model
    scored on n held-out items, two binomial standard errors (docs/reference/statistics.md)."""
    return 2 * float(np.sqrt(p * (1 - p) / n))


def interval(claim_record, claim_id, x, check, tolerance: str, label: str, expected=None,
             level: float = TOST_LEVEL) -> bool | None:
    """Record the mean of ``x`` (seeds, paired differences or ratios) with its interval at
    ``level``, as the judged number, and return ``check(lo, hi)``: True, False or None."""
    m, lo, hi = mean_interval(x, level)
    claim_record(claim_id, [round(m, 4), round(lo, 4), round(hi, 4)], expected=expected, tolerance=tolerance,
                 label=f"{label}: mean and {level * 100:g} % interval over {len(np.ravel(x))} seeds")
    return check(lo, hi)


def judge(claim_id: str, side, what: str) -> None:
    """Assert a rule's answer in the calling test: None is undecided (an interval across its
    band's edge or margin, one seed, or a start count neither test shows; more seeds or starts
    decide), False the failed assertion (a divergence under ``diverges``)."""
    if side is None:
        undecided(f"{claim_id}: {what}: the rule cannot decide: an interval crosses its band's edge or margin, or "
                  "one seed gives no interval, or a start count is shown neither above nor below its line; more "
                  "seeds decide")
    assert side, f"{claim_id}: {what}"


def above(margin: float):
    """``check(lo, hi)`` for "more than ``margin``" (``beyond``)."""
    return lambda lo, hi: beyond(lo, hi, margin)


def below(margin: float):
    """``check(lo, hi)`` for "less than ``margin``": the interval wholly under it holds."""
    return lambda lo, hi: beyond(-hi, -lo, -margin)


def joint_record(claim_record, claim_id, parts, tolerance: str, level: float = TOST_LEVEL) -> bool | None:
    """``parts``: ``(label, x, check)``; each part's mean and interval recorded, the claim judged
    by ``joint`` (every part passes, or one fails at its Bonferroni level)."""
    parts = list(parts)
    shown, holds = joint([(x, check) for _, x, check in parts], level)
    for (label, x, _), (m, lo, hi) in zip(parts, shown):
        claim_record(claim_id, [round(m, 4), round(lo, 4), round(hi, 4)], tolerance=tolerance,
                     label=f"{label}: mean and {level * 100:g} % interval over {len(np.ravel(x))} seeds")
    return holds


# ---- a claim judged on its schedule's looks ------------------------------------------------

def declared_prefix(recorded, declared) -> int:
    """How many of the declared seeds, from the first, are recorded: the seeds a look may read
    (a gap in the declared order stops the count, so a look never reads a part of its seeds)."""
    have, n = set(recorded), 0
    for s in declared:
        if s not in have:
            break
        n += 1
    return n


def interval_looks(claim_record, claim_id, x, check, tolerance: str, label: str, schedule: Schedule,
                   available: int, expected=None) -> Look:
    """``interval`` on a schedule: ``x`` per declared seed, in the declared order (its first
    ``available`` are read). Records the deciding (or last) look's mean and interval."""
    x = np.asarray(x, float)

    def at(n, level, _alpha):
        m, lo, hi = mean_interval(x[:n], level)
        return check(lo, hi), (m, lo, hi)

    look = sequential(schedule, available, at)
    if look.index:
        m, lo, hi = look.shown
        claim_record(claim_id, [round(m, 4), round(lo, 4), round(hi, 4)], expected=expected,
                     tolerance=f"{tolerance}; sequential: {schedule.text()}",
                     label=f"{label}: mean and {schedule.level * 100:.4g} % interval over the first {look.n} seeds, "
                           f"look {look.index} of {len(schedule.looks)}")
    return look


def joint_looks(claim_record, claim_id, parts, tolerance: str, schedule: Schedule, available: int) -> Look:
    """``joint_record`` on a schedule: ``parts`` are ``(label, x, check)``, each ``x`` per declared
    seed in the declared order. Every part passes at the look's level, or one fails at its
    Bonferroni level within the look."""
    parts = [(label, np.asarray(x, float), check) for label, x, check in parts]

    def at(n, level, _alpha):
        shown, holds = joint([(x[:n], check) for _, x, check in parts], level)
        return holds, shown

    look = sequential(schedule, available, at)
    if look.index:
        for (label, _, _), (m, lo, hi) in zip(parts, look.shown):
            claim_record(claim_id, [round(m, 4), round(lo, 4), round(hi, 4)],
                         tolerance=f"{tolerance}; sequential: {schedule.text()}",
                         label=f"{label}: mean and {schedule.level * 100:.4g} % interval over the first {look.n} "
                               f"seeds, look {look.index} of {len(schedule.looks)}")
    return look


def starts_looks(claim_record, claim_id: str, ok, line: float, schedule: Schedule, label: str, expected=None) -> Look:
    """``starts`` on a schedule: ``ok`` per start, in the declared order; each look's exact tests
    at the schedule's alpha per look. Records the deciding (or last) look's count."""
    ok = np.asarray(ok, bool)
    look = sequential(schedule, len(ok), lambda n, _level, alpha: (lambda r: (r["holds"], r))(starts(ok[:n], line, alpha)))
    if look.index:
        claim_record(claim_id, rate_text(look.shown), expected=expected,
                     tolerance=f"{start_rule(line)}; sequential: {schedule.text()}",
                     label=f"{label}: the first {look.n} starts, look {look.index} of {len(schedule.looks)}")
    return look


def judge_look(claim_id: str, look: Look, what: str, doc: float | None = None) -> None:
    """Assert a scheduled claim's verdict in the calling test: the deciding look's answer; else
    *undecided* until the next look (naming its seeds), or *undecided at the cap*, with what the
    last interval rules out and whether the document's value ``doc`` is inside it."""
    s = look.schedule
    if look.holds is None:
        if look.index == 0:
            undecided(f"{claim_id}: {what}: fewer than the first look's {s.looks[0]} declared seeds are recorded "
                      f"({s.text()}); `python -m suite.evidence pending` lists them")
        shown = look.shown if isinstance(look.shown, tuple) else None
        outside = (f"; the {s.level * 100:.4g} % interval [{shown[1]:.4g}, {shown[2]:.4g}] rules out values below "
                   f"{shown[1]:.4g} and above {shown[2]:.4g}") if shown else ""
        if shown and doc is not None:
            outside += f"; the document's {doc:g} is {'inside' if shown[1] <= doc <= shown[2] else 'outside'} it"
        undecided(f"{claim_id}: {what}: {look.text()}{outside}", final=look.final)
    assert look.holds, f"{claim_id}: {what} ({look.text()})"
