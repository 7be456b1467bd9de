"""The Polish lab's verdict rule (claims/lab_report.py): a population rate judged against the
chapter's five starts by Fisher's exact test; runs decided inside rounding are undecided."""
import numpy as np
import pytest
from scipy import stats

from claims import lab_report
from claims.lab_report import (ALPHA, HALF_WIDTH, ROUNDING, draw_lab, exists, fisher, k_of_5, per_run, rate,
                               wilson)


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


@pytest.mark.fast
def test_a_tie_is_no_pass_and_each_failing_run_is_as_firm_as_its_own_failing_comparison():
    # runs (one excerpt, four seeds): tie; fails by 0.5; fails by 0.25 although its other comparison
    # holds by 0.75; holds
    holds, firm = per_run((np.array([[2.0, 2.0, 4.0, 1.0]]), np.array([[2.0, 1.0, 3.0, 2.0]])),
                          (np.array([[1.0, 1.0, 1.0, 1.0]]), np.array([[2.0, 2.0, 4.0, 4.0]])))
    assert holds.tolist() == [[False, False, False, True]]
    np.testing.assert_allclose(firm, [[0.0, 0.5, 0.25, 0.5]])


@pytest.mark.fast
@pytest.mark.parametrize("k, n", [(0, 10), (3, 10), (79, 98), (100, 100)])
def test_the_wilson_bounds_are_the_roots_of_the_score_equation(k, n):
    """Wilson's interval: the p with (k/n - p)^2 = z^2 p (1 - p) / n, written out, not re-derived."""
    lo, hi = wilson(k, n)
    z = stats.norm.ppf(0.975)
    for p in (lo, hi):
        assert (k / n - p) ** 2 == pytest.approx(z * z * p * (1 - p) / n, abs=1e-12)
    assert 0 <= lo <= k / n <= hi <= 1 and lo < hi


@pytest.mark.fast
def test_a_run_decided_exactly_at_the_rounding_margin_is_undecided():
    holds, firm = _runs(60, 100)
    firm[0, 0] = ROUNDING
    assert (rate(holds, firm)["N"], rate(holds, firm)["p"]) == (99, 59 / 99)
    holds, firm = np.ones((1, 5), bool), np.array([[ROUNDING, 0.1, 0.1, 0.1, 0.1]])
    assert lab_report._main(holds, firm) == "4 of 5 (1 undecided)"


@pytest.mark.fast
def test_no_decided_run_gives_no_rate_and_the_whole_interval():
    holds, firm = _runs(60, 100)
    r = rate(holds, np.zeros_like(firm))
    assert (r["K"], r["N"], r["undecided"], r["interval"], r["heterogeneity_p"]) == (0, 0, 100, (0.0, 1.0), 1.0)
    assert np.isnan(r["p"])


@pytest.mark.fast
def test_the_homogeneity_test_runs_only_on_a_table_it_can_judge():
    def het(holds, firm=None):
        return rate(holds, np.full(holds.shape, 0.1) if firm is None else firm)["heterogeneity_p"]

    assert het(np.ones((5, 20), bool)) == 1.0  # every run holds: one column, nothing to compare
    one = np.ones((5, 20), bool)
    one[2, 0] = False  # a single failing run is a column still
    assert het(one) == pytest.approx(stats.chi2_contingency([[20, 0], [20, 0], [19, 1], [20, 0], [20, 0]])[1])
    assert het(one) < 1.0
    holds, firm = _runs(50, 100)
    firm[3] = 0.0  # an excerpt without a decided run has no expected counts: no test
    assert het(holds, firm) == 1.0
    firm[3, 0] = 0.1  # ... one decided run is enough
    assert het(holds, firm) == pytest.approx(
        stats.chi2_contingency([[20, 0], [20, 0], [10, 10], [0, 1], [0, 20]])[1])


@pytest.mark.fast
def test_the_main_excerpts_count_is_its_first_five_seeds():
    holds = np.zeros((2, 20), bool)
    holds[0, [0, 2, 3, 7]] = True  # main excerpt: 3 of its first 5 seeds
    holds[1, :5] = True
    firm = np.full((2, 20), 0.1)
    firm[1, :5] = 0.0  # the other excerpt's undecided seeds are not the main excerpt's
    assert lab_report._main(holds, firm) == "3 of 5"
    firm[0, 2] = 0.0
    assert lab_report._main(holds, firm) == "2 of 5 (1 undecided)"


def _recorder():
    calls = []

    def claim_record(claim_id, measured, expected=None, tolerance=None, label=None):
        calls.append((claim_id, measured, expected, tolerance, label))
        return measured
    return claim_record, calls


def _lab_runs():
    """79 of 98 decided runs over 5 excerpts; the main excerpt's seed 1 (holding) and seed 20
    (failing) undecided."""
    holds = np.zeros((5, 20), bool)
    for e, k in enumerate([18, 16, 16, 15, 15]):
        holds[e, :k] = True
    firm = np.full((5, 20), 0.1)
    firm[0, 0] = firm[0, 19] = ROUNDING / 2
    return holds, firm


RATE_RECORDS = [
    ("X-01", [0.806, 0.717, 0.872], None, "reported; the verdict needs a half-width <= 0.1",
     "p-hat and its 95 % Wilson interval: {}"),
    ("X-01", {"per excerpt (K, N)": [(17, 18), (16, 20), (16, 20), (15, 20), (15, 20)], "chi-square p": 0.555,
              "undecided": 2}, None, f"reported: runs decided inside rounding ({ROUNDING}) are undecided",
     "how the excerpts differ: {}"),
    ("X-01", "4 of 5 (1 undecided)", None, "reported: the chapter's own kind of observation, not the verdict",
     "main excerpt, seeds 1-5: {}"),
]


@pytest.mark.fast
def test_k_of_5_records_the_count_the_interval_the_spread_and_fishers_p():
    record, calls = _recorder()
    p = k_of_5(record, "X-01", _lab_runs(), "val lowest", k=3)
    assert p == pytest.approx(stats.fisher_exact([[3, 2], [79, 19]])[1])
    assert calls == [
        ("X-01", "79 of 98", "3 of 5 (the chapter)", "Fisher's exact test, chapter 3/5 vs ours: p >= 0.05 (two-sided)",
         "runs over 5 excerpts x seeds (Pan Tadeusz, not the lab's own text): val lowest"),
        *[(*r[:4], r[4].format("val lowest")) for r in RATE_RECORDS],
        ("X-01", [0.2687, 0.197], None, "holds when p >= 0.05",
         "Fisher p; and how likely the chapter's 3 of 5 is at p-hat: val lowest"),
    ]
    assert calls[-1][1][1] == round(stats.binom.pmf(3, 5, 79 / 98), 3)


@pytest.mark.fast
def test_exists_records_the_count_the_interval_and_the_spread():
    record, calls = _recorder()
    assert exists(record, "X-01", _lab_runs(), "shows it") == 79
    assert calls == [
        ("X-01", "79 of 98", ">= 1 start (an existence claim)", "some decided run shows it",
         "runs over 5 excerpts x seeds (Pan Tadeusz, not the lab's own text): shows it"),
        *[(*r[:4], r[4].format("shows it")) for r in RATE_RECORDS],
    ]


@pytest.mark.fast
def test_too_few_runs_fails_in_one_line_and_an_interval_at_the_limit_is_enough(monkeypatch):
    holds, firm = _runs(25, 50)
    lo, hi = wilson(25, 50)
    with pytest.raises(pytest.fail.Exception) as e:
        exists(_record, "X-07", (holds, firm), "p")
    assert e.value.pytrace is False
    assert str(e.value) == (f"X-07: only 50 decided runs (0 undecided): the interval on p is +-{(hi - lo) / 2:.3f}, "
                            f"wider than {HALF_WIDTH}; add seeds to TINY_LAB, no verdict")
    assert f"+-{(hi - lo) / 2:.3f}" == "+-0.134"
    monkeypatch.setattr(lab_report, "HALF_WIDTH", (hi - lo) / 2)
    assert exists(_record, "X-07", (holds, firm), "p") == 25


class _Lab:
    """A lab of 2 excerpts x 6 seeds x 3 checkpoints whose every number says where it comes from."""
    seeds = [11, 12, 13, 14, 15, 16]
    steps = [100, 200, 400]
    PART = {"train": 1000, "val": 2000, "test": 3000}

    def ppl(self, part, positions):
        return (self.PART[part] + 500 * (not positions) + 100 * np.arange(2)[:, None, None]
                + 10 * np.arange(6)[None, :, None] + np.arange(3)[None, None, :])

    def gram(self, n, part):
        return np.array([[n * 10_000 + self.PART[part], -1.0], [-2.0, -3.0]])


@pytest.mark.fast
@pytest.mark.parametrize("positions", [True, False])
def test_the_lab_figure_shows_five_seeds_and_both_baselines_per_part(positions):
    Figure = pytest.importorskip("matplotlib.figure").Figure
    lab, fig = _Lab(), Figure()
    draw_lab(lab, positions)(fig)
    assert tuple(fig.get_size_inches()) == (13, 4)
    assert fig._suptitle.get_text() == (f"the tiny GPT {'with' if positions else 'without'} positions, "
                                        "main excerpt of Pan Tadeusz")
    axes = fig.axes
    assert len(axes) == 3 and all(axes[0].get_shared_y_axes().joined(axes[0], ax) for ax in axes)
    for ax, part in zip(axes, ("train", "val", "test")):
        assert (ax.get_title(), ax.get_xscale(), ax.get_xlabel()) == (part, "log", "Adam steps")
        assert ax.get_ylabel() == ("perplexity" if part == "train" else "")
        assert list(ax.get_xticks()) == lab.steps
        assert [(t.get_text(), t.get_rotation()) for t in ax.get_xticklabels()] == [("100", 45), ("200", 45), ("400", 45)]
        *seeds, bigram, trigram = ax.get_lines()
        assert [line.get_label() for line in seeds] == ["seed 11", "seed 12", "seed 13", "seed 14", "seed 15"]
        assert {line.get_marker() for line in seeds} == {"o"}
        for line, curve in zip(seeds, lab.ppl(part, positions)[0]):
            assert list(line.get_xdata()) == lab.steps and list(line.get_ydata()) == list(curve)
        for line, n, style in ((bigram, 2, ":"), (trigram, 3, "--")):
            assert (line.get_label(), line.get_color(), line.get_linestyle()) == (f"{n}-gram (add-k)", "k", style)
            assert list(line.get_ydata()) == [n * 10_000 + _Lab.PART[part]] * 2
    legend = axes[0].get_legend()
    assert [t.get_text() for t in legend.get_texts()][-2:] == ["2-gram (add-k)", "3-gram (add-k)"]
    assert legend.get_texts()[0].get_fontsize() == 7
    assert axes[1].get_legend() is None and axes[2].get_legend() is None
    # one row of three panels, left to right
    boxes = [ax.get_position() for ax in axes]
    assert len({round(b.y0, 6) for b in boxes}) == 1 and boxes[0].x0 < boxes[1].x0 < boxes[2].x0


@pytest.mark.fast
def test_the_lab_figure_shows_the_model_with_positions_unless_told_otherwise():
    Figure = pytest.importorskip("matplotlib.figure").Figure
    fig = Figure()
    draw_lab(_Lab())(fig)
    assert fig._suptitle.get_text().startswith("the tiny GPT with positions")
