"""One test per claim of text.md. Tiers and scales are this document's own (pytest.ini):
fast tests compute by formula, slow ones (--claims-runslow) simulate random rooms."""
import math
import random
import statistics
from collections import Counter

import pytest

from claimcheck import diverges

DAYS = 365


def p_match(n: int) -> float:
    """P(at least two of n people share a birthday): one minus the chance that all differ."""
    return 1 - math.prod((DAYS - k) / DAYS for k in range(n))


@pytest.mark.fast
@pytest.mark.claim("BDAY-01")
def test_23_people_make_253_pairs(claim_record):
    assert claim_record("BDAY-01", math.comb(23, 2), expected=253) == 253


@pytest.mark.fast
@pytest.mark.claim("BDAY-02")
def test_expected_matching_pairs_by_formula(claim_record):
    mean = claim_record("BDAY-02", math.comb(23, 2) / DAYS, expected=0.69,
                        tolerance="exact: ±0.005, the text's two decimals", label="253/365")
    assert abs(mean - 0.69) <= 0.005


@pytest.mark.slow                # the same claim at a second scale: pytest.ini's "simulation"
@pytest.mark.claim("BDAY-02")
def test_expected_matching_pairs_by_simulation(claim_record):
    rng = random.Random(23)                         # pure Python: the plugin alone needs no numpy
    rooms = [Counter(rng.randrange(DAYS) for _ in range(23)) for _ in range(40_000)]
    pairs = [sum(c * (c - 1) // 2 for c in room.values()) for room in rooms]
    se = statistics.stdev(pairs) / math.sqrt(len(pairs))
    mean = claim_record("BDAY-02", statistics.fmean(pairs), expected=0.69, label="40,000 random rooms",
                        tolerance="equivalence: ±0.005 (two decimals) + 4 standard errors")
    assert abs(mean - 0.69) <= 0.005 + 4 * se


@pytest.mark.fast
@pytest.mark.claim("BDAY-03")
def test_the_chance_with_23_people_is_50_7_percent(claim_record):
    p = claim_record("BDAY-03", p_match(23), expected=0.507, tolerance="exact: ±0.0005, the text's 50.7 %")
    assert abs(p - 0.507) <= 0.0005


@pytest.mark.fast
@pytest.mark.claim("BDAY-04")
def test_23_is_the_smallest_group_past_one_half(claim_record):
    smallest = next(n for n in range(2, DAYS + 2) if p_match(n) > 0.5)
    assert claim_record("BDAY-04", smallest, expected=23) == 23


@pytest.mark.fast
@pytest.mark.claim("BDAY-05")
@diverges("40 people give an 89.1 % chance, short of 90 %; it takes 41 (90.3 %)")
def test_forty_people_give_a_90_percent_chance(claim_record):
    p = claim_record("BDAY-05", p_match(40), expected=0.90, tolerance="comparison: at least 0.90")
    assert p >= 0.90


@pytest.mark.fast
@pytest.mark.claim("BDAY-06")
def test_70_people_pass_99_9_percent(claim_record):
    p = claim_record("BDAY-06", p_match(70), expected=0.999, tolerance="comparison: more than 0.999")
    assert p > 0.999
