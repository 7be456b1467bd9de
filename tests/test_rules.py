"""The suite's decision rules (suite/rules.py): an interval passes only inside its band, and a
trained outcome is a rate over starts that one stuck run cannot turn."""
import functools

import numpy as np
import pytest
from scipy import stats

from claimcheck import rules
from claimcheck.rules import (
    ALPHA,
    RULES,
    TOST_LEVEL,
    beyond,
    check_tolerance,
    inside,
    joint,
    mean_interval,
    rate_text,
    rule_of,
    starts,
    starts_joint,
    wide_level,
    within,
    EXISTS,
    MAJORITY,
    NEARLY_ALL,
)


@pytest.mark.fast
def test_the_mean_interval_is_the_t_interval():
    x = [1.0, 2.0, 4.0]
    m, lo, hi = mean_interval(x, 0.90)
    half = stats.t.ppf(0.95, 2) * np.std(x, ddof=1) / np.sqrt(3)
    assert (m, lo, hi) == pytest.approx((7 / 3, 7 / 3 - half, 7 / 3 + half))
    assert mean_interval([3.0])[1:] == (-np.inf, np.inf)  # one seed bounds nothing


@pytest.mark.fast
@pytest.mark.parametrize("lo, hi, ok", [(1.8, 2.0, True), (1.6, 2.0, False), (1.8, 2.3, False),
                                        (1.7, 2.2, True), (1.0, 3.0, False)])
def test_an_interval_passes_only_inside_its_band(lo, hi, ok):
    assert inside(lo, hi, (1.7, 2.2)) is ok


@pytest.mark.fast
@pytest.mark.parametrize("lo, hi, side", [(1.8, 2.0, True), (1.7, 2.2, True), (1.0, 1.69, False), (2.21, 3.0, False),
                                          (1.6, 2.0, None), (1.8, 2.3, None), (1.0, 3.0, None), (1.0, 1.7, None)])
def test_an_interval_is_within_a_band_outside_it_or_undecided(lo, hi, side):
    """Inside holds; wholly outside is a measured disagreement; touching or crossing an edge, or
    covering the whole band, decides nothing."""
    assert within(lo, hi, (1.7, 2.2)) is side


@pytest.mark.fast
def test_a_nan_interval_fails_it_is_never_undecided():
    """A run that blew up gives a NaN mean: that is a failure, not a reason to record more seeds."""
    m, lo, hi = mean_interval([1.0, float("nan"), 2.0])
    with pytest.raises(ValueError, match="not a number"):
        within(lo, hi, (0.9, 2.7))
    with pytest.raises(ValueError, match="not a number"):
        beyond(lo, hi, 0.02)
    assert within(*mean_interval([1.5])[1:], (0.9, 2.7)) is None  # one seed: infinite, undecided
    with pytest.raises(ValueError, match="not a number"):  # one seed that blew up still fails
        within(*mean_interval([float("nan")])[1:], (0.9, 2.7))


@pytest.mark.fast
@pytest.mark.parametrize("lo, hi, side", [(0.03, 0.09, True), (0.0, 0.02, False), (-0.01, 0.01, False),
                                          (0.013, 0.155, None), (0.02, 0.05, None), (0.0201, 0.03, True)])
def test_an_interval_is_beyond_a_margin_below_it_or_undecided(lo, hi, side):
    assert beyond(lo, hi, 0.02) is side


@pytest.mark.fast
def test_noise_turns_a_one_sided_pass_into_no_verdict_never_into_a_pass():
    """The same mean gap with a wider spread: decided above the margin when tight, undecided when
    loose; a loose interval is never read as beyond the margin."""
    tight, loose = [0.07, 0.08, 0.09, 0.08], [0.01, 0.16, 0.02, 0.13]
    assert beyond(*mean_interval(tight)[1:], 0.02) is True
    assert beyond(*mean_interval(loose)[1:], 0.02) is None


@pytest.mark.fast
def test_noise_makes_a_pass_harder():
    """The same mean with a wider spread: the narrow interval passes, the wide one cannot."""
    tight, loose = [1.9, 1.95, 2.0, 1.95], [1.5, 2.4, 1.6, 2.3]
    assert inside(*mean_interval(tight)[1:], (1.7, 2.2))
    assert not inside(*mean_interval(loose)[1:], (1.7, 2.2))


@pytest.mark.fast
def test_most_starts_needs_15_of_20_and_one_stuck_run_turns_nothing():
    assert [starts([True] * k + [False] * (20 - k), MAJORITY)["holds"] for k in (14, 15)] == [None, True]
    ok = np.ones(20, bool)
    ok[0] = False  # one start stuck on a plateau
    assert starts(ok, MAJORITY)["holds"] and starts(ok, MAJORITY)["K"] == 19


@pytest.mark.fast
@pytest.mark.parametrize("K, N, line, verdict", [
    (1, 100, EXISTS, True), (0, 100, EXISTS, None),          # existence is shown by one start, never refuted
    (60, 100, MAJORITY, True), (55, 100, MAJORITY, None), (40, 100, MAJORITY, False),
    (46, 95, MAJORITY, None),                                # TINY-12's count under Fisher read "holds"
    (9, 10, MAJORITY, True), (1, 10, MAJORITY, False), (2, 10, MAJORITY, None),
    (88, 100, NEARLY_ALL, True), (80, 100, NEARLY_ALL, None), (72, 100, NEARLY_ALL, False),
    (10, 10, NEARLY_ALL, None),                              # ten starts cannot show "nearly every start"
])
def test_a_start_count_holds_above_its_line_diverges_below_and_is_otherwise_undecided(K, N, line, verdict):
    r = starts([True] * K + [False] * (N - K), line)
    assert r["holds"] is verdict
    lo, hi = r["interval"]
    # the exact interval at 1 - 2 alpha says the same as the two one-sided tests
    assert (lo > line) == (verdict is True) and (hi < line) == (verdict is False)


@pytest.mark.fast
def test_a_start_count_names_a_line_of_the_table():
    with pytest.raises(ValueError, match="names one of"):
        starts([True, False], 0.7)


@pytest.mark.fast
def test_a_claim_of_several_counts_diverges_only_at_the_bonferroni_level():
    # 41 of 100 is below 1/2 at 5 % (p 0.044) but not at 2.5 %: with a second part it is undecided
    low, fine = [True] * 41 + [False] * 59, [True] * 90 + [False] * 10
    assert starts(low, MAJORITY)["holds"] is False
    assert starts_joint([(low, MAJORITY), (fine, MAJORITY)])[1] is None
    assert starts_joint([(fine, MAJORITY), (fine, NEARLY_ALL)])[1] is True
    assert starts_joint([([True] * 20 + [False] * 80, MAJORITY), (fine, MAJORITY)])[1] is False


@pytest.mark.fast
def test_two_seeds_bound_the_mean_and_float32_seeds_are_averaged_in_float64():
    m, lo, hi = mean_interval([1.0, 3.0], 0.90)
    half = stats.t.ppf(0.95, 1) * np.sqrt(2) / np.sqrt(2)
    assert (m, lo, hi) == pytest.approx((2.0, 2.0 - half, 2.0 + half))
    # 1e8 + 1 rounds to 1e8 in float32: the mean of these float32 values is 1/3 only in float64
    assert mean_interval(np.float32([1e8, 1.0, -1e8]))[0] == pytest.approx(1 / 3)


@pytest.mark.fast
def test_a_start_count_reports_both_one_sided_p_and_its_interval():
    r = starts([True] * 15 + [False] * 5, MAJORITY)
    assert r["p_above"] == pytest.approx(stats.binom.sf(14, 20, 0.5))
    assert r["p_below"] == pytest.approx(stats.binom.cdf(15, 20, 0.5))
    assert r["holds"] is True and r["p_above"] < ALPHA
    assert starts([2, 0, 3.5], MAJORITY)["K"] == 2  # a start has the property or not: truth values
    assert rate_text(r) == "15 of 20 starts, rate 0.75 [0.54, 0.90] against most starts (rate > 1/2)"


@pytest.mark.fast
def test_a_joint_claim_holds_when_every_part_passes_at_the_claims_level():
    band = (9.0, 11.0)
    near = [9.9, 10.0, 10.1, 10.0, 9.95]
    shown, verdict = joint([(near, lambda lo, hi: within(lo, hi, band))] * 3)
    assert verdict is True and shown[0] == mean_interval(near)
    shown, verdict = joint([(near, lambda lo, hi: within(lo, hi, band)),
                            ([12.0, 12.1, 11.9], lambda lo, hi: beyond(lo, hi, 11.5))])
    assert verdict is True


@pytest.mark.fast
def test_a_joint_claim_diverges_only_on_a_part_wholly_outside_at_the_bonferroni_level():
    band = (9.0, 11.0)
    check = lambda lo, hi: within(lo, hi, band)  # noqa: E731
    ok = [10.0, 10.1, 9.9]
    # a part outside at 90 % but not at 1 - 0.1 / 4 = 97.5 %: four parts give noise four chances
    x = np.array([11.4, 11.8, 12.2])
    _, lo90, _ = mean_interval(x, TOST_LEVEL)
    _, lo_wide, _ = mean_interval(x, wide_level(TOST_LEVEL, 4))
    assert lo90 > band[1] >= lo_wide
    assert joint([(x, check)] + [(ok, check)] * 3)[1] is None
    assert joint([(x, check)])[1] is False  # alone, its 90 % interval decides
    far = [20.0, 20.1, 19.9]
    assert joint([(far, check)] + [(ok, check)] * 3)[1] is False


@pytest.mark.slow  # seconds, not milliseconds: it runs with --runslow
def test_a_joint_claims_false_divergence_stays_at_one_parts_rate(monkeypatch):
    """Four true parts, each at its band's upper edge: the chance that any shows wholly outside
    is at most one part's 5 %, where joining four 90 % intervals would give about 19 %."""
    # 4,000 trials ask for two t quantiles about 47,000 times; rules.t_ppf bisects each afresh (about
    # 20 s on one core). It is a pure function of (p, df): remembered, the same numbers in 0.3 s.
    monkeypatch.setattr(rules, "t_ppf", functools.lru_cache(maxsize=None)(rules.t_ppf))
    rng = np.random.default_rng(0)
    band = (-10.0, 0.0)
    check = lambda lo, hi: within(lo, hi, band)  # noqa: E731
    n, false = 4000, 0
    naive = 0
    for _ in range(n):
        parts = [(rng.normal(0.0, 1.0, 3), check) for _ in range(4)]
        false += joint(parts)[1] is False
        naive += any(within(*mean_interval(x)[1:], band) is False for x, _ in parts)
    assert false / n <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / n)
    assert naive / n > 0.15


# ---- every judged number names its rule (docs/reference/statistics.md) -----------------------------------

def _literal_tolerances(with_claim=False):
    """(file:line, text) of every literal ``tolerance=`` given to ``claim_record`` in claims/; an
    f-string's text is its whole literal part. A computed tolerance (a name, a call) is left to
    the suite's ``claim_record``, which checks every call when it runs. ``with_claim``: (file:line,
    claim ID or None, text)."""
    import ast
    from pathlib import Path
    out = []
    for f in sorted((Path(__file__).resolve().parents[1] / "claims").glob("*.py")):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "claim_record":
                cid = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else None
                for kw in node.keywords:
                    v, text = kw.value, None
                    if kw.arg == "tolerance" and isinstance(v, ast.JoinedStr) and isinstance(v.values[0], ast.Constant):
                        text = "".join(x.value if isinstance(x, ast.Constant) else "{}" for x in v.values)
                    elif kw.arg == "tolerance" and isinstance(v, ast.Constant) and v.value is not None:
                        text = v.value
                    if text is not None:
                        out.append((f"{f.name}:{node.lineno}", cid, text) if with_claim else (f"{f.name}:{node.lineno}", text))
    return out


# Where a judged band may come from (docs/reference/statistics.md): a row of the word table, the
# precision of the arithmetic, or equality. A band from none of them names its claim in the band
# audit's "Not changed, with the reason".
TABLE_ROWS = ("± 5 %", "bare", "± 10 %", "about", "± 3 %", "barely", "± 1 %", "exactly", "esattamente",
              "rounds to", "half a unit", "printed", "N volte", "[7.5, 8.5)", "[3.5, 4.5)", "gap", "quadrature",
              "binomial SE", "2 SE", "sampling error", "prints as")
PRECISION = ("atol", "rtol", "float", "bit-identical", "Fraction", "== ", "ulps", "np.allclose", "relative (float64)")


def _band_source(text: str) -> bool:
    import re
    if text.strip() in ("exact", "exact (float64)", "exact, rounded to 3 dp"):
        return True  # equality
    text = re.sub(r"±(?=\S)", "± ", text)
    return (any(m in text for m in TABLE_ROWS + PRECISION) or "CI scale" in text  # CI: the weaker form, said so
            or re.search(r"\de-\d", text) is not None)  # a threshold at the arithmetic's precision


@pytest.mark.fast
def test_every_judged_band_follows_the_word_table_or_names_its_reason():
    """Each judged record's band comes from a row of the word table or the arithmetic's
    precision, or its claim is named in the band audit with the reason it differs."""
    from pathlib import Path
    doc = (Path(__file__).resolve().parents[1] / "docs" / "reference" / "statistics.md").read_text(encoding="utf-8")
    audit = doc.split("Not changed, with the reason:")[1].split("## ")[0]
    found = [(w, c, t) for w, c, t in _literal_tolerances(with_claim=True) if rule_of(t) not in (None, "reported")]
    assert len(found) > 100
    unexplained = [(w, c, t[:80]) for w, c, t in found
                   if not _band_source(t) and not (c and c in audit)]
    assert unexplained == []


@pytest.mark.fast
def test_every_judged_record_names_one_of_the_rules():
    found = _literal_tolerances()
    assert len(found) > 100  # the scan reads the claim tests, not nothing
    assert [(where, text) for where, text in found if rule_of(text) is None] == []


@pytest.mark.fast
def test_every_rule_is_a_row_of_docs_statistics_and_a_bad_tolerance_is_one_line():
    from pathlib import Path
    doc = (Path(__file__).resolve().parents[1] / "docs" / "reference" / "statistics.md").read_text(encoding="utf-8")
    assert all(f"**{rule}" in doc for rule in RULES), [r for r in RULES if f"**{r}" not in doc]
    assert rule_of("exact: rounds to 3 dp") == "exact" and rule_of(None) == "reported"
    assert rule_of("start count, per start: > 0.4") == "start count" and rule_of("> 0 on every seed") is None
    with pytest.raises(ValueError, match=r"claim_record\('X-01'\): the tolerance '> 0 on every seed' names no rule"):
        check_tolerance("X-01", "> 0 on every seed")
