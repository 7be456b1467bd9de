"""The Polish lab's verdict rule (suite/lab_rules.py): a population rate judged against the line
the chapter's k of 5 names (suite/rules.py starts); runs decided inside rounding are undecided."""
import numpy as np
import pytest
from scipy import stats

from suite import lab_rules as lab_report
from suite.lab_rules import (ROUNDING, draw_lab, exists, k_of_5, k_of_5_rule, line_of, per_run, rate)
from claimcheck.rules import EXISTS, MAJORITY, NEARLY_ALL, starts


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
@pytest.mark.parametrize("k, line", [(5, NEARLY_ALL), (4, MAJORITY), (3, MAJORITY), (2, EXISTS), (1, EXISTS)])
def test_the_chapters_k_of_5_names_a_population_line(k, line):
    assert line_of(k) == line
    with pytest.raises(ValueError, match="k from 1 to 5"):
        line_of(0)


@pytest.mark.fast
@pytest.mark.parametrize("k, K, N, verdict", [
    (4, 80, 100, True),      # most starts, shown
    (4, 46, 95, None),       # TINY-12's count: Fisher could not reject, and nothing is shown
    (4, 30, 100, False),     # fewer than half, shown
    (5, 95, 100, True),      # nearly every start, shown
    (5, 80, 100, None),
    (5, 60, 100, False),
    (1, 20, 100, True),      # some start
])
def test_a_k_of_5_holds_only_when_shown_and_fisher_has_no_say(k, K, N, verdict):
    value, holds = k_of_5_rule(_runs(K, N, excerpts=1), k)  # the primary excerpt's N seeds
    assert holds is verdict
    assert value["Fisher p (reported)"] == pytest.approx(stats.fisher_exact([[k, 5 - k], [K, N - K]])[1], abs=1e-4)


@pytest.mark.fast
def test_the_grids_bonferroni_level_makes_a_pass_harder():
    # 62 of 100 is above 1/2 at alpha 0.05 (p 0.01) but not at 0.05 / 6
    assert k_of_5_rule(_runs(62, 100, excerpts=1), 4)[1] is True
    assert k_of_5_rule(_runs(62, 100, excerpts=1), 4, level=1 - 0.10 / 6)[1] is None


@pytest.mark.fast
def test_a_grid_point_counts_the_primary_excerpts_seeds_and_reports_the_pooled_count():
    holds, firm = _runs(0, 100)
    holds[0] = True  # the main excerpt: 20 of 20; the four others: none
    value, holds_ = k_of_5_rule((holds, firm), 5)
    assert value["K of N (main excerpt)"] == "20 of 20" and value["pooled over excerpts (reported)"] == "20 of 100"
    assert holds_ is True  # 20 of 20 above 4/5: p = 0.8^20 = 0.012


@pytest.mark.fast
def test_an_existence_claim_holds_on_one_decided_run_and_not_on_an_undecided_one():
    holds, firm = _runs(1, 100)
    part = exists(_record, "X", (holds, firm), "p")
    assert part.line == EXISTS and starts(part.at(20), part.line)["holds"] is True
    firm[0, 0] = ROUNDING / 2
    part = exists(_record, "X", (holds, firm), "p")
    assert part.at(20).sum() == 0 and starts(part.at(20), part.line)["holds"] is None


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
    assert (r["K"], r["N"], r["undecided"], r["heterogeneity_p"]) == (0, 0, 100, 1.0)
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


SPREAD = ("X-01", {"per excerpt (K, N)": [(17, 18), (16, 20), (16, 20), (15, 20), (15, 20)], "chi-square p": 0.555,
                   "undecided": 2}, None, f"reported: runs decided inside rounding ({ROUNDING}) are undecided",
          "how the excerpts differ (the first is the verdict's): {}")
POOLED = ("reported: how much the text matters; runs that share an excerpt are not independent starts, so the pooled "
          "count decides nothing")
MAIN_COUNT = ("X-01", "4 of 5 (1 undecided)", None, "reported: the chapter's own kind of observation, not the verdict",
              "main excerpt, seeds 1-5: {}")


@pytest.mark.fast
def test_k_of_5_records_the_count_against_its_line_the_spread_and_fishers_p_beside_it():
    record, calls = _recorder()
    part = k_of_5(record, "X-01", _lab_runs(), "val lowest", k=3)
    ok = part.at(20)  # the verdict's: the main excerpt's decided seeds
    assert (ok.sum(), ok.size, part.line) == (17, 18, MAJORITY)
    pooled = np.arange(98) < 79
    lo, hi = starts(pooled, MAJORITY)["interval"]
    assert calls == [
        ("X-01", f"79 of 98, rate 0.81 [{lo:.2f}, {hi:.2f}]", "3 of 5 (the chapter)", POOLED,
         "runs over 5 excerpts x seeds (Pan Tadeusz, not the lab's own text), pooled: val lowest"),
        (*SPREAD[:4], SPREAD[4].format("val lowest")), (*MAIN_COUNT[:4], MAIN_COUNT[4].format("val lowest")),
        ("X-01", [round(stats.fisher_exact([[3, 2], [79, 19]])[1], 4), round(stats.binom.pmf(3, 5, 79 / 98), 3)],
         None, "reported: how typical the chapter's starts were; no say in the verdict",
         "Fisher p of the chapter's 3 of 5 against ours; its chance at p-hat: val lowest"),
    ]


@pytest.mark.fast
def test_exists_records_the_count_and_the_spread():
    record, calls = _recorder()
    part = exists(record, "X-01", _lab_runs(), "shows it")
    assert (part.at(20).sum(), part.line) == (17, EXISTS)
    assert calls[0][2:4] == (">= 1 start (an existence claim)", POOLED)
    assert calls[1:] == [(*SPREAD[:4], SPREAD[4].format("shows it")), (*MAIN_COUNT[:4], MAIN_COUNT[4].format("shows it"))]


@pytest.mark.fast
def test_no_decided_run_is_an_error_never_a_verdict():
    holds, firm = _runs(25, 50)
    with pytest.raises(ValueError, match="X-07: no decided run"):
        exists(_record, "X-07", (holds, np.zeros_like(firm)), "p")


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

