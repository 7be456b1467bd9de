"""The Polish lab's verdict rule (claims/lab_report.py): a population rate judged against the
chapter's five starts by Fisher's exact test; runs decided inside rounding are undecided."""
import numpy as np
import pytest
from scipy import stats

from claims.lab_report import ALPHA, HALF_WIDTH, ROUNDING, exists, fisher, k_of_5, per_run, rate, wilson


def _record(claim_id, measured, **kw):
    return measured


def _runs(k, n, excerpts=5):
    """(holds, firm) of shape (excerpts, n // excerpts) with k holding runs, all decided."""
    holds = np.zeros(n, bool)
    holds[:k] = True
    return holds.reshape(excerpts, -1), np.full((excerpts, n // excerpts), 0.1)


@pytest.mark.fast
def test_a_run_is_as_firm_as_the_comparison_that_decides_it():
    a = np.array([[1.0, 1.0, 3.0]])  # (excerpt, seed)
    holds, firm = per_run((a, np.array([[2.0, 1.5, 2.0]])), (a, np.array([[4.0, 4.0, 4.0]])))
    assert holds.tolist() == [[True, True, False]]
    # holding runs: the smaller gap (1/2, 0.5/1.5); failing run: its failing gap (1/3)
    np.testing.assert_allclose(firm, [[0.5, 1 / 3, 1 / 3]])


@pytest.mark.fast
def test_runs_decided_inside_rounding_are_neither_passes_nor_failures():
    holds, firm = _runs(60, 100)
    firm[0, 0] = firm[4, 19] = ROUNDING / 2  # one holding, one failing run: both undecided
    r = rate(holds, firm)
    assert (r["K"], r["N"], r["undecided"]) == (59, 98, 2)


@pytest.mark.fast
def test_the_wilson_interval_matches_its_closed_form_and_100_runs_are_enough():
    lo, hi = wilson(50, 100)
    z = stats.norm.ppf(0.975)
    assert hi - lo == pytest.approx(2 * z * np.sqrt(0.25 / 100 + z * z / 40000) / (1 + z * z / 100))
    assert max((lambda i: i[1] - i[0])(wilson(k, 100)) for k in range(101)) / 2 <= HALF_WIDTH


@pytest.mark.fast
@pytest.mark.parametrize("k, K, N, verdict", [
    (4, 80, 100, "holds"),   # the chapter's 4 of 5 is a typical draw at p = 0.8
    (5, 100, 100, "holds"),
    (5, 40, 100, "diverges"),  # 5 of 5 is unlikely at p = 0.4
    (4, 5, 100, "diverges"),
    (1, 20, 100, "holds"),
])
def test_fisher_compares_the_chapters_five_with_our_hundred(k, K, N, verdict):
    p = fisher(k, rate(*_runs(K, N)))
    assert p == pytest.approx(stats.fisher_exact([[k, 5 - k], [K, N - K]])[1])
    assert ("holds" if p >= ALPHA else "diverges") == verdict


@pytest.mark.fast
def test_too_few_decided_runs_is_no_verdict():
    holds, firm = _runs(25, 50)
    with pytest.raises(pytest.fail.Exception, match="add seeds"):
        k_of_5(_record, "X", (holds, firm), "p", k=4)


@pytest.mark.fast
def test_an_existence_claim_holds_on_one_decided_run_and_not_on_an_undecided_one():
    holds, firm = _runs(1, 100)
    assert exists(_record, "X", (holds, firm), "p") == 1
    firm[0, 0] = ROUNDING / 2
    assert exists(_record, "X", (holds, firm), "p") == 0


@pytest.mark.fast
def test_the_excerpts_spread_is_reported_as_a_homogeneity_test():
    holds = np.zeros((5, 20), bool)
    holds[0] = True  # one excerpt holds everywhere, the others nowhere
    assert rate(holds, np.full(holds.shape, 0.1))["heterogeneity_p"] < 1e-6
    assert rate(*_runs(50, 100, excerpts=5))["per_excerpt"][0] == (20, 20)
