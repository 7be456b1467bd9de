"""One test per claim of text.md, judged through claimcheck.rules (pure Python: no numpy).

DART-02 is a Monte-Carlo estimate over throws, on a declared schedule: looks at 30 and 10,000
throws, each at its share of alpha. At 30 throws the interval (about ± 0.019) cannot fit inside
the printed 3.14's band (± 0.005): undecided, by design, until the second look. The fast tier has
30 throws; the slow tier (--claims-runslow) has 10,000 (ten million darts, seconds).

(A first design judged another sentence, "on average about 0.04 from π", at 10 then 30 throws: on
throws 0-29 its interval lay below its band, a false divergence of a true sentence: a throw's
error is skewed, and the first throws happened to be close. The sentence was dropped, not the
throws; README.md tells it.)"""
import math
import random

import pytest

from claimcheck import diverges
from claimcheck.rules import MAJORITY, Schedule, interval_looks, judge, judge_look, printed_band, starts_looks, within

DARTS = 1_000
LOOKS = Schedule((30, 10_000))  # the cap is the last look
P = math.pi / 4                # the share of darts inside the quarter circle


def estimate(seed: int, darts: int = DARTS) -> float:
    """Four times the share of ``darts`` uniform darts inside the quarter circle: one throw."""
    rng = random.Random(seed)
    inside = sum(rng.random() ** 2 + rng.random() ** 2 <= 1.0 for _ in range(darts))
    return 4 * inside / darts


@pytest.mark.fast
@pytest.mark.claim("DART-01")
def test_the_quarter_circle_covers_78_5_percent(claim_record):
    band = printed_band("78.5")  # the text rounded 100 π/4 to one decimal
    share = claim_record("DART-01", 100 * P, tolerance="exact: half a unit of the printed 78.5")
    judge("DART-01", within(share, share, band), f"100 π/4 = {share:.4f} against {band}")


def _average(claim_record, throws: int):
    estimates = [estimate(seed) for seed in range(throws)]
    band = printed_band("3.14")  # two printed decimals: [3.135, 3.145]
    look = interval_looks(claim_record, "DART-02", estimates, lambda lo, hi: within(lo, hi, band),
                          "equivalence: the mean estimate inside the printed 3.14's half unit", "estimate",
                          LOOKS, available=throws, expected=3.14)
    judge_look("DART-02", look, "1,000-dart throws average 3.14", doc=3.14)


@pytest.mark.fast
@pytest.mark.scale("few")
@pytest.mark.claim("DART-02")
def test_the_throws_average_3_14_first_look(claim_record):
    _average(claim_record, 30)


@pytest.mark.slow
@pytest.mark.scale("many")
@pytest.mark.claim("DART-02")
def test_the_throws_average_3_14(claim_record):
    _average(claim_record, 10_000)


@pytest.mark.fast
@pytest.mark.scale("few")
@pytest.mark.claim("DART-03")
@diverges("about one throw in seven lands within 0.01 of π, not most (the count is in the report)")
def test_most_throws_land_within_0_01(claim_record):
    within_001 = [abs(estimate(seed) - math.pi) <= 0.01 for seed in range(100, 300)]  # 200 throws of their own
    look = starts_looks(claim_record, "DART-03", within_001, MAJORITY, Schedule((200,)), "within 0.01 of π")
    judge_look("DART-03", look, "most 1,000-dart throws land within 0.01 of π")


@pytest.mark.fast
@pytest.mark.claim("DART-04")
def test_a_hundred_times_the_darts_divide_the_error_by_ten(claim_record):
    sd = lambda n: 4 * math.sqrt(P * (1 - P) / n)  # noqa: E731  the estimate's standard deviation
    ratio = claim_record("DART-04", (sd(DARTS) / sd(100 * DARTS)) ** 2, tolerance="exact: float rounding")
    assert ratio == pytest.approx(100, rel=1e-12)
