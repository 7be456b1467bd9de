"""claimcheck.rules, the verdict rules as a public API: its pure-Python distributions against
scipy's (where scipy is installed), the word table, and the reference naming every public name."""
import math
import re
from pathlib import Path

import pytest

from claimcheck import rules

DOCS = Path(__file__).resolve().parents[2] / "docs" / "reference" / "plugin.md"


def test_t_quantiles_match_scipy():
    stats = pytest.importorskip("scipy.stats")
    for df in (1, 2, 3, 4, 9, 19, 59, 159):
        for level in (0.90, 0.95, 0.9667, 0.975, 0.99, 0.9983):
            p = 0.5 + level / 2
            assert rules.t_ppf(p, df) == pytest.approx(stats.t.ppf(p, df), rel=1e-9)
            assert rules.t_ppf(1 - p, df) == pytest.approx(stats.t.ppf(1 - p, df), rel=1e-9)


def test_binomial_tails_and_exact_intervals_match_scipy():
    stats = pytest.importorskip("scipy.stats")
    for n in (1, 5, 10, 20, 30, 60, 160):
        for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
            for line in (0.5, 0.8):
                up, down = rules.binom_tails(k, n, line)
                assert up == pytest.approx(stats.binomtest(k, n, line, alternative="greater").pvalue, rel=1e-9, abs=1e-15)
                assert down == pytest.approx(stats.binomtest(k, n, line, alternative="less").pvalue, rel=1e-9, abs=1e-15)
            for level in (0.9, 0.9667):
                ci = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
                assert rules.clopper_pearson(k, n, level) == pytest.approx((ci.low, ci.high), abs=1e-9)


def test_mean_interval_is_the_t_interval_and_one_seed_bounds_nothing():
    m, lo, hi = rules.mean_interval([1.0, 2.0, 3.0], 0.90)
    assert m == 2.0 and (hi - lo) / 2 == pytest.approx(2.919985580353724 * 1 / math.sqrt(3), rel=1e-12)
    assert rules.mean_interval([5.0]) == (5.0, -math.inf, math.inf)
    assert math.isnan(rules.mean_interval([1.0, float("nan")])[1])


def test_the_three_answers_and_a_start_count():
    assert rules.within(2.8, 3.2, (2.7, 3.3)) is True
    assert rules.within(3.4, 3.6, (2.7, 3.3)) is False
    assert rules.within(3.0, 3.6, (2.7, 3.3)) is None
    r = rules.starts([1] * 9 + [0], rules.MAJORITY)
    assert (r["K"], r["N"], r["holds"]) == (9, 10, True)
    assert rules.starts([1, 1, 1, 1, 0], rules.MAJORITY)["holds"] is None  # 4 of 5 shows nothing at 5 %


def test_the_word_table_gives_a_band_per_language():
    assert rules.word_band(3.0, "buys about 3 points")[0] == "about"
    assert rules.word_band(3.0, "compra circa 3 punti", "it") == ("about", pytest.approx((2.7, 3.3)))
    assert rules.word_band(40.0, "ok. 40 punktów", "pl")[0] == "about"
    assert rules.word_band(37.82, "37,82", "it") == ("bare", pytest.approx((37.82 * 0.95, 37.82 * 1.05)))
    assert rules.word_band(1.0, "esattamente 1", "it")[0] == "exactly"
    with pytest.raises(ValueError, match="built from its operands; use gap_band"):
        rules.word_band(10.0, "", kind="gap")
    with pytest.raises(ValueError, match="no word list for language 'xx'"):
        rules.word_band(1.0, "about 1", "xx")
    assert set(rules.words()["words"]) >= {"en", "it", "pl"}


def test_a_printed_number_is_read_to_half_its_last_digit():
    assert rules.printed_band("0,067", decimal=",") == pytest.approx((0.0665, 0.0675))
    assert rules.printed_band("5.147", decimal=",") == pytest.approx((5146.5, 5147.5))
    assert rules.printed_band("124") == (123.5, 124.5)
    assert rules.times_band(8) == (7.5, 8.5)
    with pytest.raises(ValueError, match="not a printed number"):
        rules.printed_band("about 3")


def test_a_schedule_spends_alpha_per_look_and_ends():
    s = rules.Schedule((3, 5, 10))
    assert s.cap == 10 and s.level == pytest.approx(1 - 2 * 0.05 / 3)
    look = rules.sequential(s, 10, lambda n, level, alpha: (None, n))
    assert look.final and look.n == 10 and look.holds is None
    with pytest.raises(ValueError, match="increasing"):
        rules.Schedule((5, 3))


def test_the_reference_names_every_public_name():
    text = DOCS.read_text(encoding="utf-8")
    missing = [n for n in rules.__all__ if not re.search(rf"`(rules\.)?{re.escape(n)}\b", text)]
    assert not missing, f"docs/reference/plugin.md does not name {missing}"


def test_a_gaps_band_comes_from_its_operands_and_keeps_its_sign():
    """Each operand +-5 %, in quadrature: 14 = 60.45 - 46.45 is read to +-3.81, not +-7 (+-50 %)."""
    lo, hi = rules.gap_band(14, 60.45, 46.45)
    assert (lo, hi) == pytest.approx((14 - 0.05 * math.hypot(60.45, 46.45), 14 + 0.05 * math.hypot(60.45, 46.45)))
    assert rules.gap_band(3, 46.45, 43.45)[0] == 0.0  # the band would cross 0: the stated sign holds it there
    assert rules.gap_band(-3, 43.45, 46.45)[1] == 0.0
    assert rules.gap_band(0.2, 1.0, 0.8, printed="0.2") == pytest.approx((0.2 - 0.05 * math.hypot(1.0, 0.8), 0.2 + 0.05 * math.hypot(1.0, 0.8)))
    assert rules.gap_band(200, 1.0, 0.5, printed="200")[1] - 200 == pytest.approx(0.5)  # the printed digit is wider
