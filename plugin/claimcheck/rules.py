"""The verdict rules: how a measured value is judged against a sentence, as a public API.

Noise must make a pass harder, never easier: an interval passes only when it lies *inside* its
band. Five rules, one per kind of sentence (``RULES``; docs/reference/statistics.md):

- **exact**: a computed value; equality, or float rounding at a stated tolerance.
- **equivalence**: a stated number ("about 3 points"): the t interval of the seed mean inside the
  band the word table gives (``within``; Schuirmann's two one-sided tests at 5 % each pass exactly
  when the 90 % interval lies inside the band).
- **comparison**: a paired difference or ratio inside its band (``within``), or beyond a margin
  (``beyond``, ``above``, ``below``).
- **joint**: several parts in one sentence: every part passes at the claim's level; one part
  wholly outside at ``wide_level`` (Bonferroni over the k parts) diverges (``joint``).
- **start count**: "4 of 5 starts", "every start": a population rate against the line the
  sentence names (``EXISTS``, ``MAJORITY``, ``NEARLY_ALL``), two one-sided exact binomial tests
  (``starts``, ``starts_joint``).

Each answers True (holds), False (a measured disagreement) or None (undecided: more seeds decide,
never a wider band). ``Schedule`` declares when more seeds are looked at, each look with its
share of alpha and a cap, so a claim cannot be looked at until it passes (``sequential``).
``judge`` and ``judge_look`` turn an answer into the test's verdict; ``word_band``, ``gap_band``
and ``printed_band`` give a band from the sentence's words (``claimcheck/words.toml``).

Pure Python: no numpy or scipy (a sequence of numbers is any iterable; numpy arrays work).
"""
import math
import tomllib
from dataclasses import dataclass
from importlib import resources

from .marks import undecided

ALPHA = 0.05
TOST_LEVEL = 0.90  # two one-sided tests at 5 % each

__all__ = [
    "ALPHA", "TOST_LEVEL", "RULES", "EXISTS", "MAJORITY", "NEARLY_ALL", "LINES", "Schedule", "Look",
    "sequential", "declared_prefix", "mean_interval", "inside", "within", "beyond", "above", "below", "joint",
    "wide_level", "starts", "starts_joint", "rate_text", "start_rule", "rule_of", "check_tolerance", "judge",
    "judge_look", "decide", "decide_parts", "interval", "joint_record", "interval_looks", "joint_looks",
    "starts_looks", "two_se", "word_band", "gap_band", "printed_band", "times_band", "words", "t_ppf", "binom_tails", "MOST",
    "clopper_pearson",
]


# ---- distributions, in pure Python ----------------------------------------------------------

def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 1000):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-16:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    ln = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(ln) * _betacf(a, b, x) / a
    return 1.0 - math.exp(ln) * _betacf(b, a, 1.0 - x) / b


def _t_cdf(t: float, df: int) -> float:
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def _bisect(f, lo: float, hi: float) -> float:
    """The root of an increasing ``f`` between ``lo`` and ``hi``, to float precision."""
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
    return 0.5 * (lo + hi)


def t_ppf(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom."""
    if not 0.0 < p < 1.0 or df < 1:
        raise ValueError(f"t_ppf({p}, {df}): 0 < p < 1 and df >= 1 expected")
    if p < 0.5:
        return -t_ppf(1.0 - p, df)
    hi = 1.0
    while _t_cdf(hi, df) < p:
        hi *= 2.0
    return _bisect(lambda t: _t_cdf(t, df) - p, 0.0, hi)


def binom_tails(k: int, n: int, p: float) -> tuple[float, float]:
    """(P[X >= k], P[X <= k]) for X ~ Binomial(n, p): the exact one-sided p-values of k."""
    if p <= 0.0 or p >= 1.0:
        at = 0 if p <= 0.0 else n
        return (1.0 if at >= k else 0.0), (1.0 if at <= k else 0.0)
    lp, lq = math.log(p), math.log1p(-p)

    def pmf(i):
        return math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp + (n - i) * lq)

    upper = math.fsum(pmf(i) for i in range(k, n + 1))
    lower = math.fsum(pmf(i) for i in range(0, k + 1))
    return min(1.0, upper), min(1.0, lower)


def clopper_pearson(k: int, n: int, level: float) -> tuple[float, float]:
    """The exact (Clopper-Pearson) two-sided interval of a rate from k of n, at ``level``."""
    a = (1.0 - level) / 2.0
    lo = 0.0 if k == 0 else _bisect(lambda x: _betainc(k, n - k + 1, x) - a, 0.0, 1.0)
    hi = 1.0 if k == n else _bisect(lambda x: _betainc(k + 1, n - k, x) - (1.0 - a), 0.0, 1.0)
    return lo, hi


# ---- intervals and the three answers ---------------------------------------------------------

def _floats(x) -> list[float]:
    """Any sequence of numbers (a numpy array, nested or not) as a flat list of floats."""
    if hasattr(x, "tolist"):
        x = x.tolist()
    if isinstance(x, (int, float)):
        return [float(x)]
    out = []
    for v in x:
        out += _floats(v) if not isinstance(v, (int, float)) else [float(v)]
    return out


def mean_interval(x, level: float = TOST_LEVEL) -> tuple[float, float, float]:
    """(mean, lo, hi): the t interval of the mean of ``x`` (seeds, paired differences) at ``level``."""
    x = _floats(x)
    if not x:
        raise ValueError("mean_interval() needs at least one value")
    m = math.fsum(x) / len(x)
    if any(math.isnan(v) for v in x):
        return m, math.nan, math.nan  # a run that blew up: within / beyond raise on it
    if len(x) < 2:
        return m, -math.inf, math.inf  # one seed bounds nothing
    sd = math.sqrt(math.fsum((v - m) ** 2 for v in x) / (len(x) - 1))
    half = t_ppf(0.5 + level / 2, len(x) - 1) * sd / math.sqrt(len(x))
    return m, m - half, m + half


def inside(lo: float, hi: float, band: tuple[float, float]) -> bool:
    """The whole interval inside the band (closed)."""
    return band[0] <= lo and hi <= band[1]


def _finite_bounds(lo: float, hi: float) -> None:
    """A NaN bound is a run that blew up, never a reason to measure more: it fails."""
    if math.isnan(lo) or math.isnan(hi):
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


def above(margin: float):
    """``check(lo, hi)`` for "more than ``margin``" (``beyond``)."""
    return lambda lo, hi: beyond(lo, hi, margin)


def below(margin: float):
    """``check(lo, hi)`` for "less than ``margin``": the interval wholly under it holds."""
    return lambda lo, hi: beyond(-hi, -lo, -margin)


def wide_level(level: float, k: int) -> float:
    """The interval level at which one of ``k`` parts may show a divergence (Bonferroni)."""
    return 1 - (1 - level) / k


def _side(v) -> bool | None:
    return None if v is None else bool(v)  # a numpy bool counts as the bool it is


def joint(parts, level: float = TOST_LEVEL) -> tuple[list[tuple[float, float, float]], bool | None]:
    """``parts``: ``(sample, check)`` pairs, ``check(lo, hi)`` a judgement of an interval (True /
    False / None, as ``within`` and ``beyond``). Returns each part's (mean, lo, hi) at ``level``,
    and the claim's verdict: True when every part passes at ``level`` (an intersection-union test
    keeps the false pass at one part's); False when some part's interval at ``wide_level(level,
    k)`` fails its check (Bonferroni over the k parts); else None."""
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


# ---- start counts ----------------------------------------------------------------------------

# The population rate a start-count sentence names: "a start", "sometimes" (> 0); "4 of 5", what
# one trained model shows (> 1/2); "5 of 5", "every start" (> 4/5).
EXISTS, MAJORITY, NEARLY_ALL = 0.0, 0.5, 0.8
LINES = {EXISTS: "some start (rate > 0)", MAJORITY: "most starts (rate > 1/2)",
         NEARLY_ALL: "nearly every start (rate > 4/5)"}


def starts(ok, line: float, alpha: float = ALPHA) -> dict:
    """K of N starts with the property, judged against the population ``line``: ``holds`` True
    when an exact one-sided binomial test shows the rate above it, False when one shows it
    below, None when neither does; ``p_above``/``p_below`` are the two tests' p, ``interval``
    the exact interval at 1 - 2 alpha that says the same thing."""
    if line not in LINES:
        raise ValueError(f"line {line!r}: a start count names one of {', '.join(map(str, LINES))} (claimcheck.rules)")
    ok = [bool(v) for v in _floats(ok)]
    K, N = sum(ok), len(ok)
    if N == 0:
        raise ValueError("starts() needs at least one start")
    if line == EXISTS:  # any start with the property shows the rate is above 0; none shows nothing
        p_above, p_below = (0.0 if K else 1.0), 1.0
    else:
        p_above, p_below = binom_tails(K, N, line)
    holds = True if p_above < alpha else False if p_below < alpha else None
    return {"K": K, "N": N, "line": line, "p_above": p_above, "p_below": p_below,
            "interval": clopper_pearson(K, N, 1 - 2 * alpha), "holds": holds}


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


# ---- the rules by name -----------------------------------------------------------------------

# By the name a judged record's tolerance starts with; a tolerance starting "reported" is shown
# and judged by nothing.
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
    """One line when a record's tolerance names no rule."""
    if rule_of(tolerance) is None:
        raise ValueError(f"claim_record({claim_id!r}): the tolerance {str(tolerance)[:60]!r} names no rule: start it "
                         f"with one of {', '.join(RULES)} (claimcheck.rules.RULES), or with 'reported'")


# ---- a verdict in the calling test ------------------------------------------------------------

def judge(claim_id: str, side, what: str) -> None:
    """Assert a rule's answer in the calling test: None is undecided (an interval across its
    band's edge or margin, one seed, or a start count neither test shows; more seeds or starts
    decide), False the failed assertion (a divergence under ``claimcheck.diverges``)."""
    if side is None:
        undecided(f"{claim_id}: {what}: the rule cannot decide: an interval crosses its band's edge or margin, or "
                  "one seed gives no interval, or a start count is shown neither above nor below its line; more "
                  "seeds decide")
    assert side, f"{claim_id}: {what}"


def decide(r: dict, what: str = "") -> None:
    """Assert one start count's verdict in the calling test (``judge``)."""
    judge(what or "start count", r["holds"], rate_text(r))


def decide_parts(claim_id: str, *parts) -> None:
    """Assert a claim of one or more start counts (``(ok, line)`` parts, ``starts_joint``)."""
    shown, holds = starts_joint(parts)
    judge(claim_id, holds, "; ".join(rate_text(r) for r in shown))


def _triple(m, lo, hi) -> list[float]:
    return [round(m, 4), round(lo, 4), round(hi, 4)]


def interval(claim_record, claim_id, x, check, tolerance: str, label: str, expected=None,
             level: float = TOST_LEVEL, subject: bool = False) -> bool | None:
    """Record the mean of ``x`` (seeds, paired differences or ratios) with its interval at
    ``level``, as the judged number (``subject``: the number the sentence is about, as in
    ``claim_record``), and return ``check(lo, hi)``: True, False or None."""
    m, lo, hi = mean_interval(x, level)
    claim_record(claim_id, _triple(m, lo, hi), expected=expected, tolerance=tolerance,
                 label=f"{label}: mean and {level * 100:g} % interval over {len(_floats(x))} seeds", subject=subject)
    return check(lo, hi)


def joint_record(claim_record, claim_id, parts, tolerance: str, level: float = TOST_LEVEL) -> bool | None:
    """``parts``: ``(label, x, check)``; each part's mean and interval recorded, the claim judged
    by ``joint`` (every part passes, or one fails at its Bonferroni level)."""
    parts = list(parts)
    shown, holds = joint([(x, check) for _, x, check in parts], level)
    for (label, x, _), (m, lo, hi) in zip(parts, shown):
        claim_record(claim_id, _triple(m, lo, hi), tolerance=tolerance,
                     label=f"{label}: mean and {level * 100:g} % interval over {len(_floats(x))} seeds")
    return holds


def two_se(p: float, n: int) -> float:
    """A share of ``n`` items near ``p``: the band the word table gives a percentage one model
    scored on n held-out items, two binomial standard errors."""
    return 2 * math.sqrt(p * (1 - p) / n)


# ---- a sequential design: declared looks, each with its share of alpha, and a cap -------------

@dataclass(frozen=True)
class Schedule:
    """A claim's declared looks: the seed counts at which it is judged, in order, the last its cap.

    Each look spends ``alpha / len(looks)`` of each side's alpha (Bonferroni over the looks), so
    a false *holds* (or a false *diverges*) over every look together has probability at most
    ``alpha`` however the looks fall. A look is taken on the first ``n`` declared seeds only; the
    claim's verdict is that of the first look that decides, and later records never change it.
    Undecided at the last look is final: *undecided at the cap*."""
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
    x = _floats(x)

    def at(n, level, _alpha):
        m, lo, hi = mean_interval(x[:n], level)
        return check(lo, hi), (m, lo, hi)

    look = sequential(schedule, available, at)
    if look.index:
        claim_record(claim_id, _triple(*look.shown), expected=expected,
                     tolerance=f"{tolerance}; sequential: {schedule.text()}",
                     label=f"{label}: mean and {schedule.level * 100:.4g} % interval over the first {look.n} seeds, "
                           f"look {look.index} of {len(schedule.looks)}")
    return look


def joint_looks(claim_record, claim_id, parts, tolerance: str, schedule: Schedule, available: int) -> Look:
    """``joint_record`` on a schedule: ``parts`` are ``(label, x, check)``, each ``x`` per declared
    seed in the declared order. Every part passes at the look's level, or one fails at its
    Bonferroni level within the look."""
    parts = [(label, _floats(x), check) for label, x, check in parts]

    def at(n, level, _alpha):
        shown, holds = joint([(x[:n], check) for _, x, check in parts], level)
        return holds, shown

    look = sequential(schedule, available, at)
    if look.index:
        for (label, _, _), shown in zip(parts, look.shown):
            claim_record(claim_id, _triple(*shown), tolerance=f"{tolerance}; sequential: {schedule.text()}",
                         label=f"{label}: mean and {schedule.level * 100:.4g} % interval over the first {look.n} "
                               f"seeds, look {look.index} of {len(schedule.looks)}")
    return look


def starts_looks(claim_record, claim_id: str, ok, line: float, schedule: Schedule, label: str, expected=None) -> Look:
    """``starts`` on a schedule: ``ok`` per start, in the declared order; each look's exact tests
    at the schedule's alpha per look. Records the deciding (or last) look's count."""
    ok = [bool(v) for v in _floats(ok)]

    def at(n, _level, alpha):
        r = starts(ok[:n], line, alpha)
        return r["holds"], r

    look = sequential(schedule, len(ok), at)
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
                      f"({s.text()})")
        shown = look.shown if isinstance(look.shown, tuple) else None
        outside = (f"; the {s.level * 100:.4g} % interval [{shown[1]:.4g}, {shown[2]:.4g}] rules out values below "
                   f"{shown[1]:.4g} and above {shown[2]:.4g}") if shown else ""
        if shown and doc is not None:
            outside += f"; the document's {doc:g} is {'inside' if shown[1] <= doc <= shown[2] else 'outside'} it"
        undecided(f"{claim_id}: {what}: {look.text()}{outside}", final=look.final)
    assert look.holds, f"{claim_id}: {what} ({look.text()})"


# ---- the word table: a band's width comes from the sentence's words ---------------------------

def words() -> dict:
    """The word table (claimcheck/words.toml): ``{"bands": {kind: {...}}, "words": {lang: {kind: [...]}}}``."""
    return tomllib.loads(resources.files(__package__).joinpath("words.toml").read_text(encoding="utf-8"))


def word_band(value: float, sentence: str = "", lang: str = "en", kind: str | None = None) -> tuple[str, tuple[float, float]]:
    """(the kind of words, the band around ``value``) a sentence's words give a trained number:
    the first kind whose word the sentence holds (``lang``'s list), else ``kind``, else ``bare``
    (a trained number printed bare). The band is ``value`` ± the kind's relative width."""
    table = words()
    if lang not in table["words"]:
        raise ValueError(f"word_band: no word list for language {lang!r}; claimcheck/words.toml has "
                         f"{', '.join(sorted(table['words']))}")
    low = f" {sentence.casefold()} "
    found = kind or next((k for k, ws in table["words"][lang].items()
                          if any(f" {w.casefold()}" in low for w in ws)), "bare")
    if found not in table["bands"]:
        raise ValueError(f"word_band: no band named {found!r}; claimcheck/words.toml has {', '.join(table['bands'])}")
    if "relative" not in table["bands"][found]:
        raise ValueError(f"word_band: a {found!r} band is built from its operands; use gap_band(gap, a, b)")
    r = table["bands"][found]["relative"]
    return found, tuple(sorted((value * (1 - r), value * (1 + r))))


def gap_band(gap: float, a: float, b: float, printed: str | None = None, decimal: str = ".") -> tuple[float, float]:
    """A gap between two trained numbers printed bare ("buys 1.8 points", ``gap`` = ``a`` - ``b``):
    each operand is one draw carrying the bare band (± its relative width of itself), and two
    independent draws add in quadrature, so the half-width is ``r * sqrt(a**2 + b**2)``; or half a
    unit of the gap's ``printed`` digit, whichever is wider. The sign is stated exactly, so the band
    stops at 0 on the far side (an interval must also show the sign to lie inside it)."""
    table = words()["bands"]
    r = table[table["gap"]["operands"]]["relative"]
    half = r * math.hypot(a, b)
    if printed is not None:
        lo, hi = printed_band(printed, decimal)
        half = max(half, (hi - lo) / 2)
    lo, hi = gap - half, gap + half
    return (max(lo, 0.0), hi) if gap > 0 else (lo, min(hi, 0.0))


def printed_band(printed: str, decimal: str = ".") -> tuple[float, float]:
    """A computed number as printed ("0.067", "124", "5,147" in English; "0,067" and "5.147" with
    ``decimal=","``): half a unit of its last printed digit either side, the text having rounded
    it. The other mark is a thousands separator."""
    if decimal not in ".,":
        raise ValueError(f"printed_band: the decimal mark is '.' or ',', not {decimal!r}")
    text = printed.strip().replace("\u00a0", "").replace("\u202f", "").replace(" ", "")
    text = text.replace("." if decimal == "," else ",", "").replace(decimal, ".")
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"printed_band: {printed!r} is not a printed number") from None
    decimals = len(text.split(".", 1)[1]) if "." in text else 0
    half = 0.5 * 10 ** -decimals
    return value - half, value + half


def times_band(n: float) -> tuple[float, float]:
    """"N times" ("otto volte"): the ratio rounds to N, so [N - 1/2, N + 1/2)."""
    return n - 0.5, n + 0.5
