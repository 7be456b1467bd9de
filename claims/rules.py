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
- ``most_starts``: a claim about what training produces ("two blocks reach 100 %") is a
  statement about the population of random starts, not about every one of a few seeds: it
  holds when an exact one-sided binomial test shows that more than half of the starts have
  the property (H0: p <= 1/2, alpha = 0.05; 10 seeds need 9, 20 need 15). One run stuck on a plateau
  cannot turn it.
"""
import numpy as np
from scipy import stats

ALPHA = 0.05
TOST_LEVEL = 0.90  # two one-sided tests at 5 % each


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


def most_starts(ok) -> dict:
    """K of N starts with the property, the one-sided binomial p of H0 p <= 1/2, and whether
    the claim holds (p < ALPHA)."""
    ok = np.asarray(ok, bool).ravel()
    K, N = int(ok.sum()), ok.size
    p = float(stats.binomtest(K, N, 0.5, alternative="greater").pvalue)
    return {"K": K, "N": N, "p": p, "holds": p < ALPHA}


def rate_text(r: dict) -> str:
    return f"{r['K']} of {r['N']} seeds (binomial p = {r['p']:.2g})"


MOST = (f"most starts: exact binomial test of H0 p <= 1/2, one-sided, alpha {ALPHA} "
        "(claims/rules.py)")
