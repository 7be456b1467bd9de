"""The sequential design (suite.rules.Schedule, docs/reference/statistics.md): a claim looked at
on a declared schedule of seed counts, each look at its share of alpha, ends, and passes a false
claim (or accuses a true one) at most alpha of the time over all its looks together.

The simulation draws 10,000 null datasets per schedule at the least favourable point (the true
mean on the band's edge) and runs every look the schedule declares; a vectorised copy of the rule
is checked against ``sequential`` itself on the first datasets, so the figures are the code's."""
import numpy as np
import pytest
from scipy import stats

from suite import catalogue
from claimcheck.rules import (
    ALPHA,
    Look,
    Schedule,
    declared_prefix,
    interval_looks,
    judge_look,
    mean_interval,
    sequential,
    within,
)

N_NULL = 10_000
# Monte-Carlo allowance: three standard errors of a rate of ALPHA over N_NULL datasets. A design
# exactly at its level (one look at 90 %) reads ALPHA give or take this; a design above it by more
# fails.
MC = 3 * np.sqrt(ALPHA * (1 - ALPHA) / N_NULL)
SCHEDULES = {"ladder": catalogue.LADDER_LOOKS, "ABL-05": catalogue.ABL05_LOOKS, "one look": Schedule((3,))}
# The chapter's own value, the band and the pilot's spread of each scheduled claim (catalogue.py's
# power calculations): the power printed beside the level.
POWER_AT = {"ABL-02": (catalogue.LADDER_LOOKS, 3.0, (1.5, 4.5), 0.79),
            "ABL-05": (catalogue.ABL05_LOOKS, 1.8, (0.9, 2.7), 0.79),
            "AVG-09": (catalogue.LADDER_LOOKS, 60.45, (60.45 * 0.95, 60.45 * 1.05), 60.45 * 0.022)}


def _verdicts(x, schedule: Schedule, band) -> np.ndarray:
    """The schedule's verdict per dataset (rows of ``x``, seeds in order): 1 holds, -1 diverges,
    0 undecided at the cap. The first look that decides stops."""
    out = np.zeros(len(x), int)
    for n in schedule.looks:
        xs = x[:, :n]
        m, sd = xs.mean(1), xs.std(1, ddof=1)
        half = stats.t.ppf(0.5 + schedule.level / 2, n - 1) * sd / np.sqrt(n)
        lo, hi = m - half, m + half
        open_ = out == 0
        out[open_ & (lo >= band[0]) & (hi <= band[1])] = 1
        out[open_ & ((hi < band[0]) | (lo > band[1]))] = -1
    return out


def _draw(mean, sd, schedule, n=N_NULL, seed=0):
    return np.random.default_rng(seed).normal(mean, sd, (n, schedule.cap))


@pytest.mark.slow  # seconds, not milliseconds: it runs with --runslow
def test_the_vectorised_rule_is_the_codes():
    s, band = catalogue.LADDER_LOOKS, (1.0, 3.0)
    x = _draw(1.2, 0.6, s, n=200)
    mine = _verdicts(x, s, band)
    for row, v in zip(x, mine):
        look = sequential(s, s.cap, lambda n, level, _a: (within(*mean_interval(row[:n], level)[1:], band), None))
        assert {True: 1, False: -1, None: 0}[look.holds] == v


@pytest.mark.fast
@pytest.mark.parametrize("name", SCHEDULES)
def test_a_false_claim_passes_at_most_alpha_of_the_time_over_every_look(name):
    s, band = SCHEDULES[name], (0.0, 3.0)
    false_holds = (_verdicts(_draw(band[0] - 1e-9, 1.0, s), s, band) == 1).mean()  # just outside: the claim is false
    false_diverges = (_verdicts(_draw(band[0], 1.0, s, seed=1), s, band) == -1).mean()  # on the edge: it holds
    print(f"{name}: {s.text()}: false holds {false_holds:.4f}, false diverges {false_diverges:.4f} "
          f"over {N_NULL:,} null datasets")
    assert false_holds <= ALPHA + MC and false_diverges <= ALPHA + MC


@pytest.mark.fast
def test_looking_at_every_look_at_90_percent_would_not_hold_its_level():
    """Why the looks share alpha: three looks each at 90 % pass a false claim more often than 5 %."""
    s, band = Schedule((3, 5, 10), alpha=3 * ALPHA), (0.0, 3.0)
    assert s.level == pytest.approx(0.90)
    assert (_verdicts(_draw(band[0] - 1e-9, 1.0, s), s, band) == 1).mean() > ALPHA


@pytest.mark.fast
@pytest.mark.parametrize("claim", POWER_AT)
def test_the_power_at_the_chapters_own_value_is_reported(claim):
    s, doc, band, sd = POWER_AT[claim]
    v = _verdicts(_draw(doc, sd, s, seed=2), s, band)
    print(f"{claim}: at the chapter's {doc:g} (sd {sd:.2f}), {s.text()}: holds {np.mean(v == 1):.3f}, "
          f"diverges {np.mean(v == -1):.3f}, undecided at the cap {np.mean(v == 0):.3f}")
    assert np.mean(v == -1) <= ALPHA + MC  # a true claim is accused at most alpha of the time


@pytest.mark.fast
def test_the_first_look_that_decides_is_the_verdict_and_later_seeds_never_change_it():
    s = Schedule((3, 5, 10))
    x = np.r_[[2.0, 2.1, 1.9], np.full(7, 9.0)]  # decides at 3; the later seeds would diverge
    look = sequential(s, 10, lambda n, level, _a: (within(*mean_interval(x[:n], level)[1:], (1.0, 3.0)), None))
    assert (look.index, look.n, look.holds, look.final) == (1, 3, True, True)


@pytest.mark.fast
def test_undecided_at_the_last_look_is_final_and_before_it_names_the_next_look():
    s = Schedule((3, 5))
    undecided = lambda n, level, _a: (None, (0.0, -1.0, 1.0))  # noqa: E731
    assert (sequential(s, 4, undecided).final, sequential(s, 4, undecided).next_n) == (False, 5)
    at_cap = sequential(s, 7, undecided)
    assert at_cap.final and at_cap.n == 5 and "undecided at the cap" in at_cap.text()
    assert sequential(s, 2, undecided).index == 0  # fewer seeds than the first look: no look taken


@pytest.mark.fast
def test_a_look_reads_only_the_declared_seeds_from_the_first():
    assert declared_prefix((0, 1, 2, 5), range(10)) == 3
    assert declared_prefix((1, 2, 3), range(10)) == 0  # seed 0 missing: no look
    assert declared_prefix((), range(3)) == 0


@pytest.mark.fast
@pytest.mark.parametrize("looks", [(), (5, 3), (3, 3), (0, 2)])
def test_a_schedule_is_increasing_seed_counts(looks):
    with pytest.raises(ValueError, match="increasing seed counts"):
        Schedule(looks)


@pytest.mark.fast
def test_a_judged_look_records_its_interval_and_reads_undecided_at_the_cap():
    from claimcheck.marks import Undecided
    got = []
    rec = lambda cid, value, **kw: got.append((cid, value, kw))  # noqa: E731
    s = Schedule((3, 5))
    look = interval_looks(rec, "X-01", [1.0, 2.0, 3.0, 2.5, 1.5], lambda lo, hi: within(lo, hi, (1.9, 2.1)),
                          "equivalence: inside 2 ± 5 %", "gap", s, 5, expected=2.0)
    assert isinstance(look, Look) and look.final and look.holds is None and look.n == 5
    assert got[0][2]["tolerance"].startswith("equivalence") and "look 2 of 2" in got[0][2]["label"]
    with pytest.raises(Undecided) as e:
        judge_look("X-01", look, "about 2", doc=2.0)
    assert e.value.final and "undecided at the cap" in str(e.value.msg) and "is inside it" in str(e.value.msg)


# ---- start counts on a schedule: the Winograd checks, SQRT-12, the lab ---------------------

def _count_verdicts(ok, schedule: Schedule, line: float, checks: int = 1) -> np.ndarray:
    """Per dataset (rows: starts in order): 1 holds, -1 diverges, 0 undecided at the cap; each look's
    exact one-sided tests at alpha / J, diverging at alpha / J over the claim's checks."""
    a = schedule.alpha_per_look
    out = np.zeros(len(ok), int)
    for n in schedule.looks:
        K = ok[:, :n].sum(1)
        open_ = out == 0
        out[open_ & (stats.binom.sf(K - 1, n, line) < a)] = 1
        out[open_ & (stats.binom.cdf(K, n, line) < a / checks)] = -1
    return out


COUNTS = {"Winograd check": (catalogue.WINO_LOOKS, 0.5, 2), "SQRT-12": (catalogue.SQRT12_LOOKS, 0.8, 1),
          "lab, most starts": (catalogue.LAB_LOOKS, 0.5, 1), "lab, nearly every start": (catalogue.LAB_LOOKS, 0.8, 1)}


@pytest.mark.fast
@pytest.mark.parametrize("name", COUNTS)
def test_a_start_count_on_its_schedule_passes_a_false_claim_at_most_alpha_of_the_time(name):
    s, line, checks = COUNTS[name]
    ok = np.random.default_rng(3).random((N_NULL, s.cap)) < line  # the rate on the line: least favourable
    v = _count_verdicts(ok, s, line, checks)
    print(f"{name}: {s.text()}: false holds {np.mean(v == 1):.4f}, false diverges {np.mean(v == -1):.4f}")
    assert np.mean(v == 1) <= ALPHA + MC and np.mean(v == -1) <= ALPHA + MC


@pytest.mark.slow  # seconds, not milliseconds: it runs with --runslow
def test_the_vectorised_count_rule_is_starts_looks():
    from claimcheck.rules import MAJORITY, starts_looks
    s = catalogue.WINO_LOOKS
    ok = np.random.default_rng(4).random((60, s.cap)) < 0.62
    mine = _count_verdicts(ok, s, MAJORITY)
    for row, v in zip(ok, mine):
        look = starts_looks(lambda *a, **k: None, "X", row, MAJORITY, s, "x")
        assert {True: 1, False: -1, None: 0}[look.holds] == v



# ---- the lab's sampling unit: the seeds of one text, not runs pooled over texts --------------

@pytest.mark.slow  # seconds, not milliseconds: it runs with --runslow
def test_the_vectorised_count_rule_is_the_labs_decide():
    from suite.lab_rules import LabPart, _judge_at
    from claimcheck.rules import NEARLY_ALL
    s = catalogue.LAB_LOOKS
    runs = np.random.default_rng(0).random((100, s.cap)) < 0.85
    firm = np.full(s.cap, 0.1)
    mine = _count_verdicts(runs, s, NEARLY_ALL)
    for row, v in zip(runs, mine):
        look = sequential(s, s.cap, lambda n, _l, a: _judge_at([LabPart(row, firm, NEARLY_ALL, "")], n, a))
        assert {True: 1, False: -1, None: 0}[look.holds] == v


@pytest.mark.fast
def test_pooling_excerpts_as_independent_starts_passes_a_false_claim_far_more_often_than_alpha():
    """Why the lab's unit is the seed of one text: with the excerpts as different as TINY-16's were
    (per-excerpt rates 0.90, 0.32, 0, 0, 1.00: a spread of 0.47), five excerpts of twenty seeds
    pooled as 100 starts and judged by the exact test at 0.05 pass "nearly every start" on texts
    whose mean rate is exactly 4/5 far more often than 5 %; here the excerpts' rates are drawn with
    a spread of 0.3 (Beta, mean 0.8), below the measured one. On one text's seeds the schedule
    holds its level (``test_a_start_count_on_its_schedule_...``, the lab's two lines)."""
    rng = np.random.default_rng(2)
    mean, sd = 0.8, 0.3
    ab = mean * (1 - mean) / sd ** 2 - 1
    rates = rng.beta(mean * ab, (1 - mean) * ab, (N_NULL, 5))
    K = rng.binomial(20, rates).sum(1)
    false_holds = np.mean(stats.binom.sf(K - 1, 100, mean) < ALPHA)
    print(f"pooled 5 x 20 at a text mean of 0.8, excerpt spread {sd}: false holds {false_holds:.3f}")
    assert false_holds > 0.2
