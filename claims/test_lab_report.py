"""The Polish lab's verdict rule (claims/lab_report.py): counts on the main excerpt, margins
that must clear rounding."""
import numpy as np
import pytest

from claims.lab_report import ROUNDING, main_count, per_run


def _record(claim_id, measured, **kw):
    return measured


@pytest.mark.fast
def test_a_run_is_as_firm_as_the_comparison_that_decides_it():
    a = np.array([[1.0, 1.0, 3.0]])  # (excerpt, seed)
    holds, firm = per_run((a, np.array([[2.0, 1.5, 2.0]])), (a, np.array([[4.0, 4.0, 4.0]])))
    assert holds.tolist() == [[True, True, False]]
    # holding runs: the smaller gap (1/2, 0.5/1.5); failing run: its failing gap (1/3)
    np.testing.assert_allclose(firm, [[0.5, 1 / 3, 1 / 3]])


@pytest.mark.fast
def test_the_count_is_the_main_excerpts_and_a_close_call_fails():
    holds = np.array([[True, True, False], [False, False, False]])
    assert main_count(_record, "X", (holds, np.full(holds.shape, 0.1)), "p", expected=2) == 2
    firm = np.full(holds.shape, 0.1)
    firm[0, 2] = ROUNDING / 2  # one main-excerpt run decided inside rounding
    with pytest.raises(pytest.fail.Exception, match="coin toss"):
        main_count(_record, "X", (holds, firm), "p", expected=2)
    firm[0, 2], firm[1, 0] = 0.1, ROUNDING / 2  # another excerpt's close call is only reported
    assert main_count(_record, "X", (holds, firm), "p", expected=2) == 2
