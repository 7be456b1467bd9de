"""The verdict machinery itself (claimcheck/verdict.py): outcomes -> per-scale status -> headline.

Expected values are written out by hand from the module's docstring, never recomputed by it.
"""
import functools
from types import SimpleNamespace

import pytest

from claimcheck.marks import MarkSettings
from claimcheck.verdict import (plain, _value, claim_verdict, diff, figures, headline_text,
                            lower_scale_divergences, merge_test, pins, measured_scale, scale_verdict,
                            unknown_ids, verdicts)

pytestmark = pytest.mark.fast

# the logic is tested on a document of three scales, as this repository's own (pyproject.toml)
SCALES3 = MarkSettings(scales={"analytic": ("analytic", ""), "ci": ("CI scale", ""), "full": ("full scale", "")},
                   default_scale={"fast": "analytic", "gpu": "full"})

OUTCOMES = ("passed", "failed", "error", "xfailed", "undecided", "xpassed", "skipped", "deselected",
            "not-reported")
CLAIM = SimpleNamespace(descriptive=False, untestable=None)
DESCRIPTIVE = SimpleNamespace(descriptive=True, untestable="a definition, not a result")

# the status two tests at one scale give; h holds, f fails, d diverges, u undecided, n not-run.
# Full square, not a triangle, so that symmetry is checked rather than assumed.
PAIRS = """
              passed failed error xfailed undecided xpassed skipped deselected not-reported
passed        h      f      f     d       u         h       n       n          n
failed        f      f      f     f       f         f       f       f          f
error         f      f      f     f       f         f       f       f          f
xfailed       d      f      f     d       d         d       d       d          d
undecided     u      f      f     d       u         u       u       u          u
xpassed       h      f      f     d       u         h       n       n          n
skipped       n      f      f     d       u         n       n       n          n
deselected    n      f      f     d       u         n       n       n          n
not-reported  n      f      f     d       u         n       n       n          n
"""
WORD = {"h": "holds", "f": "fails", "d": "diverges", "u": "undecided", "n": "not-run"}
_head, *_rows = PAIRS.split("\n")[1:-1]
TABLE = {(row.split()[0], col): WORD[cell] for row in _rows
         for col, cell in zip(_head.split(), row.split()[1:])}


def t(outcome, scale="ci", reason=None, tier=None):
    return {"outcome": outcome, "reason": reason or f"{outcome} here", "scale": scale,
            "tier": tier or {"analytic": "fast", "ci": "slow", "full": "gpu"}[scale],
            "claims": ["X-01"]}


def test_the_pair_table_covers_every_pair_of_outcomes():
    assert set(TABLE) == {(a, b) for a in OUTCOMES for b in OUTCOMES}


@pytest.mark.parametrize("a, b", sorted(TABLE))
def test_two_tests_at_one_scale_give_the_tabled_status(a, b):
    status, reason, _ = scale_verdict([("c/t.py::a", t(a)), ("c/t.py::b", t(b))])
    assert status == TABLE[a, b], reason
    # xpassed counts as passed, but the report says an expected divergence did not show
    assert ("xpassed" in reason) == (status == "holds" and "xpassed" in (a, b))


def test_the_reasons_are_the_tests_sentences_and_the_details_name_the_tests():
    assert scale_verdict([("c/t.py::a", t("passed")), ("c/t.py::b", t("failed", reason="3 != 4"))]) \
        == ("fails", "3 != 4", ["c/t.py::b: failed"])
    assert scale_verdict([("c/t.py::a", t("passed")), ("c/t.py::b", t("skipped", reason="no corpus"))]) \
        == ("not-run", "1 of 2 tests not run: no corpus; the 1 that ran passed", ["c/t.py::b: skipped"])
    assert scale_verdict([("c/t.py::a", t("passed"))]) == ("holds", "1 test passed", ["c/t.py::a: passed"])


@pytest.mark.parametrize("test, scale", [
    ({"tier": "fast"}, "analytic"), ({"tier": "gpu"}, "full"),
    ({"tier": "slow"}, "ci"),  # slow has no default scale: an old record falls back to ci
    ({}, "ci"), ({"tier": "gpu", "scale": "ci"}, "ci"), ({"tier": "fast", "scale": None}, "analytic"),
])
def test_a_record_without_a_scale_gets_its_tiers(test, scale):
    assert measured_scale(test, SCALES3) == scale


# --- merge_test: one test seen by two runs -------------------------------------------------

@pytest.mark.parametrize("ran, other", [
    ("failed", "passed"), ("error", "passed"), ("xfailed", "passed"), ("failed", "xfailed"),
    ("passed", "skipped"), ("passed", "deselected"), ("passed", "not-reported"),
    ("failed", "skipped"), ("xfailed", "not-reported"), ("xpassed", "skipped"),
    ("skipped", "deselected"), ("skipped", "not-reported"), ("deselected", "not-reported"),
    ("xfailed", "undecided"), ("undecided", "passed"), ("undecided", "skipped"), ("failed", "undecided"),
])
def test_merge_keeps_the_worse_run_or_the_one_that_ran_in_either_order(ran, other):
    a, b = t(ran, reason="kept"), t(other, reason="dropped")
    assert merge_test(a, b) is a
    assert merge_test(b, a) is a
    assert merge_test(None, b) is b


def test_a_rank_tie_breaks_the_same_way_in_either_order():
    # failed/error and passed/xpassed share a rank: the tie breaks on the outcome, then the reason
    for a, b in (("failed", "error"), ("passed", "xpassed")):
        assert merge_test(t(a), t(b))["outcome"] == merge_test(t(b), t(a))["outcome"]
    x, y = t("failed", reason="x"), t("failed", reason="y")
    assert merge_test(x, y) is merge_test(y, x)


def test_an_unknown_outcome_is_an_error_not_a_pass():
    with pytest.raises(ValueError, match="unknown test outcome 'xfail'"):
        scale_verdict([("c/t.py::a", t("xfail"))])
    with pytest.raises(ValueError, match="unknown test outcome"):
        merge_test(None, t("xfail"))


# worst first; outcomes within one group tie (and give the same status)
WORST_FIRST = [{"failed", "error"}, {"xfailed"}, {"undecided"}, {"passed", "xpassed"}, {"skipped"},
               {"deselected"}, {"not-reported"}]


def test_merge_order_does_not_matter():
    """A property test. hypothesis is a test extra (plugin/pyproject.toml's ``test``): where the plugin
    alone is installed it skips. Deterministic, with no example database on disk and no deadline, as
    the suite's hypothesis profile ran it."""
    st = pytest.importorskip("hypothesis.strategies")
    from hypothesis import given, settings

    @settings(max_examples=200, derandomize=True, database=None, deadline=None)
    @given(st.lists(st.sampled_from(OUTCOMES), min_size=1, max_size=8).flatmap(
        lambda outs: st.tuples(st.just(outs), st.permutations(outs))))
    def merge_order_does_not_matter(case):
        outs, shuffled = case
        merged = [functools.reduce(merge_test, [t(o) for o in seq], None)["outcome"]
                  for seq in (outs, shuffled)]
        worst = next(g for g in WORST_FIRST if g & set(outs))
        assert set(merged) <= worst
        # the status the merged record gives never depends on order
        assert len({scale_verdict([("c/t.py::a", t(m))])[0] for m in merged}) == 1
        assert merged[0] == merged[1]  # ties break on the outcome itself

    merge_order_does_not_matter()


# --- claim_verdict: the headline across scales ---------------------------------------------

def verdict(*tests, claim=CLAIM, in_suite=False):
    return claim_verdict(claim, [(f"c/t.py::t{i}", x) for i, x in enumerate(tests)], in_suite, SCALES3)


def test_a_full_scale_pass_over_a_ci_divergence_holds_at_full():
    v = verdict(t("xfailed", "ci", "too small to show it"), t("passed", "full"))
    assert (v["status"], v["scale"]) == ("holds", "full")
    assert {s: x["status"] for s, x in v["scales"].items()} == {"ci": "diverges", "full": "holds"}
    assert lower_scale_divergences(v) == ["ci"]
    assert headline_text(v, SCALES3.words) == "holds (full scale); diverges at CI scale"


def test_a_full_scale_divergence_over_a_ci_pass_diverges_at_full():
    v = verdict(t("passed", "ci"), t("xfailed", "full", "the text is wrong"))
    assert (v["status"], v["scale"], v["reason"]) == ("diverges", "full", "the text is wrong")
    assert v["scales"]["ci"]["status"] == "holds"
    assert lower_scale_divergences(v) == []  # only a holding headline has lower divergences
    assert headline_text(v, SCALES3.words) == "diverges (full scale); holds at CI scale"


@pytest.mark.parametrize("bad, text", [
    ("analytic", "fails (analytic); holds at CI scale; holds at full scale"),
    ("ci", "fails (CI scale); holds at analytic; holds at full scale"),
    ("full", "fails (full scale); holds at analytic; holds at CI scale"),
])
def test_a_failure_at_any_scale_makes_the_headline_fail(bad, text):
    v = verdict(*[t("failed" if s == bad else "passed", s) for s in ("analytic", "ci", "full")])
    assert (v["status"], v["scale"]) == ("fails", bad)
    assert lower_scale_divergences(v) == []
    assert headline_text(v, SCALES3.words) == text


def test_an_analytic_only_claim_holds_at_analytic():
    v = verdict(t("passed", "analytic"), t("passed", "analytic"))
    assert (v["status"], v["scale"], v["reason"]) == ("holds", "analytic", "2 tests passed")
    assert headline_text(v, SCALES3.words) == "holds (analytic)"
    assert lower_scale_divergences(v) == []


def test_an_undecided_full_scale_is_the_headline_over_a_ci_pass_and_a_ci_divergence():
    """The highest scale that measured decides the headline, undecided included: a full-scale
    rule that cannot decide is not overruled by a weaker CI-scale check."""
    for ci in ("passed", "xfailed"):
        v = verdict(t(ci, "ci"), t("undecided", "full", reason="undecided: the interval straddles 0.9"))
        assert (v["status"], v["scale"]) == ("undecided", "full")
        assert v["reason"] == "the interval straddles 0.9"
        # a CI divergence under an undecided headline is still listed (a lower-scale divergence)
        assert lower_scale_divergences(v) == (["ci"] if ci == "xfailed" else [])
    v = verdict(t("undecided", "ci"), t("skipped", "full"))
    assert (v["status"], v["scale"]) == ("undecided", "ci")
    v = verdict(t("undecided", "full"), t("failed", "ci"))
    assert (v["status"], v["scale"]) == ("fails", "ci")


def test_a_skipped_full_scale_leaves_the_headline_at_ci():
    v = verdict(t("passed", "ci"), t("skipped", "full", reason="no CUDA"))
    assert (v["status"], v["scale"]) == ("holds", "ci")
    assert headline_text(v, SCALES3.words) == "holds (CI scale); not-run at full scale"


def test_everything_skipped_is_not_run_at_no_scale():
    v = verdict(t("skipped", "ci", "no corpus"), t("deselected", "full", "not selected"))
    assert (v["status"], v["scale"]) == ("not-run", None)
    assert v["reason"] == ("CI scale: 1 of 1 tests not run: no corpus; "
                           "full scale: 1 of 1 tests not run: not selected")
    assert set(v["scales"]) == {"ci", "full"}
    assert headline_text(v, SCALES3.words) == "not-run"
    assert lower_scale_divergences(v) == []


@pytest.mark.parametrize("claim, in_suite, status, reason", [
    (CLAIM, False, "untested", "no test names this claim"),
    (DESCRIPTIVE, False, "descriptive", "a definition, not a result"),
    (CLAIM, True, "not-run", "not collected: no test selected in this run names it"),
    (DESCRIPTIVE, True, "not-run", "not collected: no test selected in this run names it"),
])
def test_a_claim_no_collected_test_names(claim, in_suite, status, reason):
    v = verdict(claim=claim, in_suite=in_suite)
    assert v == {"status": status, "scale": None, "reason": reason, "scales": {}}
    assert headline_text(v, SCALES3.words) == status
    assert lower_scale_divergences(v) == []


def test_a_claim_is_untested_unless_said_to_be_in_the_suite():
    assert claim_verdict(CLAIM, [])["status"] == "untested"  # in_suite defaults to False


def test_each_scale_lists_the_tests_that_measured_it():
    v = verdict(t("passed", "ci"), t("passed", "full"), t("skipped", "full"))
    assert {s: x["tests"] for s, x in v["scales"].items()} == {"ci": ["c/t.py::t0"],
                                                               "full": ["c/t.py::t1", "c/t.py::t2"]}


def test_a_scale_that_agrees_with_the_headline_is_not_repeated():
    v = verdict(t("passed", "analytic"), t("passed", "ci"), t("xfailed", "full", "no"))
    assert headline_text(v, SCALES3.words) == "diverges (full scale); holds at analytic; holds at CI scale"
    v = verdict(t("passed", "ci"), t("passed", "full"))
    assert headline_text(v, SCALES3.words) == "holds (full scale)"


def test_the_reasons_join_every_divergence_and_skip_and_the_details_hold_tests_and_evidence():
    ev = dict(t("xfailed", reason="xfail: a"), evidence="evidence recorded on X, 2026-01-01")
    assert scale_verdict([("c/t.py::a", ev), ("c/t.py::b", t("xfailed", reason="xfail: b")),
                          ("c/t.py::c", dict(t("xfailed", reason="c"), evidence="evidence recorded on Y"))]) \
        == ("diverges", "a; b; c", ["c/t.py::a: xfailed", "c/t.py::b: xfailed", "c/t.py::c: xfailed",
                                    "evidence recorded on X, 2026-01-01", "evidence recorded on Y"])
    assert scale_verdict([("c/t.py::a", t("skipped", reason="no corpus")), ("c/t.py::b", t("skipped", reason="no corpus")),
                          ("c/t.py::c", t("deselected", reason="tier not selected"))])[:2] \
        == ("not-run", "3 of 3 tests not run: no corpus; tier not selected")
    assert scale_verdict([("c/t.py::a", t("passed")), ("c/t.py::b", t("xpassed"))])[:2] \
        == ("holds", "2 tests passed (an expected divergence did not show: xpassed)")


@pytest.mark.parametrize("reason, plain_", [
    ("xfail: AB-01: the text's 9 is 10", "the text's 9 is 10"),
    ("undecided: AB-01 (full): the interval crosses its band", "the interval crosses its band"),
    ("undecided: AB-012: not this claim", "AB-012: not this claim"),
    ("AB-01 and AB-02: both", "AB-01 and AB-02: both"),
])
def test_a_reason_reads_without_pytests_prefix_or_its_own_claim_id(reason, plain_):
    assert plain(reason, "AB-01") == plain_


def test_no_reason_starts_with_a_node_id_or_ends_with_provenance():
    ev = dict(t("xfailed", reason="xfail: AB-01: 9 is 10"), evidence="evidence recorded on X, 2026-01-01")
    for tests in ([("c/t.py::a", ev)], [("c/t.py::a", dict(t("undecided", reason="undecided: AB-01: one seed"),
                                                            evidence="measured on another text"))]):
        _, reason, details = scale_verdict(tests, "AB-01")
        assert "t.py::" not in reason and "evidence recorded" not in reason and "measured on" not in reason, reason
        assert details[0] == "c/t.py::a: " + tests[0][1]["outcome"] and details[1] == tests[0][1]["evidence"]


def test_an_unknown_outcome_names_the_known_ones():
    with pytest.raises(ValueError, match="expected one of failed, error, xfailed, undecided, xpassed, passed, skipped, "
                                         "deselected, not-reported$"):
        scale_verdict([("c/t.py::a", t("xfail"))])


def test_several_records_of_one_value_are_labelled_and_never_overwrite_each_other():
    records = [{"measured": 1, "label": "d 64", "test": "c/t.py::T::test_a[x]"},
               {"measured": 2, "test": "c/t.py::T::test_a[y z]"},
               {"measured": 3, "label": "d 64", "test": "c/t.py::test_b"},
               {"measured": 4, "label": "d 64", "test": "c/t.py::test_b"},
               {"measured": None, "label": "none", "test": "c/t.py::test_c"}]
    assert _value(records, "measured") == {"d 64": 1, "test_a[y z]": 2, "d 64'": 3, "d 64''": 4}
    assert _value(records[:1], "measured") == 1
    assert _value(records[4:], "measured") is None


REGISTRY = {"X-01": SimpleNamespace(id="X-01", source="IT", section="s", quote="q", statement="st", value="v",
                                    tier="fast", descriptive=False, untestable=None)}


def test_a_claims_row_joins_its_tolerances_and_tolerates_tests_without_records():
    rec = lambda m, tol: {"claim": "X-01", "measured": m, "expected": None, "tolerance": tol, "label": str(m)}  # noqa: E731
    tests = {"c/t.py::a": dict(t("passed", "analytic"), records=[rec(1, "rtol 1e-3"), rec(2, None)]),
             "c/t.py::b": dict(t("passed", "analytic"), records=[rec(3, "rtol 1e-3"), rec(4, "exact")]),
             "c/t.py::c": t("passed", "analytic")}  # a record of an older run: no "records"
    row, = verdicts(REGISTRY, tests, settings=SCALES3)
    assert row["tolerance"] == "rtol 1e-3; exact"
    assert row["measured"] == {"1": 1, "2": 2, "3": 3, "4": 4}
    assert row["expected"] == "v"  # no record says what the document expects: the registry's value
    assert row["tests"] == ["c/t.py::a", "c/t.py::b", "c/t.py::c"]
    row, = verdicts(REGISTRY, {"c/t.py::c": t("passed", "analytic")}, settings=SCALES3)
    assert row["tolerance"] is None and row["measured"] is None


def test_each_record_in_a_row_names_its_test_and_the_scale_it_measured_at():
    rec = {"claim": "X-01", "measured": 1, "expected": 2, "tolerance": "exact", "label": "m"}
    tests = {"c/t.py::a": dict(t("passed", "ci"), records=[rec]),
             "c/t.py::b": dict(t("passed", "ci"), tier="gpu", scale=None, records=[rec])}  # an old record: its tier's
    row, = verdicts(REGISTRY, tests, settings=SCALES3)
    assert [(r["test"], r["scale"]) for r in row["records"]] == [("c/t.py::a", "ci"), ("c/t.py::b", "full")]


def test_pins_are_fresh_when_their_test_passed_and_stale_when_it_failed_or_errored():
    pin = {"name": "a", "file": "fixtures/pins/a.npz"}
    tests = {f"c/t.py::{o}": dict(t(o, reason=o), pins=[pin]) for o in ("passed", "failed", "error", "skipped")}
    tests["c/t.py::old"] = t("passed")  # no "pins": an older run
    assert [(p["test"], p["status"], p["reason"]) for p in pins(tests)] == [
        ("c/t.py::error", "stale", "error"), ("c/t.py::failed", "stale", "failed"),
        ("c/t.py::passed", "fresh", "passed"), ("c/t.py::skipped", "not-run", "skipped")]
    assert all(p["name"] == "a" for p in pins(tests))


def test_figures_name_their_test():
    fig = {"claim": "X-01", "path": "figures/a.png"}
    assert figures({"c/t.py::b": dict(t("passed"), figures=[fig]), "c/t.py::a": t("passed")}) == [
        dict(fig, test="c/t.py::b")]


def _c(cid, **scales):
    """A claim of a report with these per-scale statuses, its headline computed as the plugin's."""
    sc = {s: {"status": v} for s, v in scales.items()}
    ran = [s for s in ("analytic", "ci", "full") if sc.get(s, {}).get("status") in ("holds", "diverges", "fails")]
    fails = [s for s in ran if sc[s]["status"] == "fails"]
    head = (fails or ran or [None])[-1]
    return {"id": cid, "status": sc[head]["status"] if head else "not-run", "scale": head, "scales": sc}


def test_diff_names_claims_present_in_only_one_run_as_absent():
    a = {"scales": SCALES3.words, "claims": [{"id": "A", "status": "holds", "scale": "ci"}, {"id": "B", "status": "untested"},
                    {"id": "C", "status": "fails", "scale": "full"}]}
    b = {"scales": SCALES3.words, "claims": [{"id": "B", "status": "untested", "scale": None}, {"id": "C", "status": "holds", "scale": "full"},
                    {"id": "D", "status": "not-run"}]}
    assert [(r["id"], r["a"], r["b"]) for r in diff(a, b)] == [
        ("A", "holds (CI scale)", "absent"), ("C", "fails (full scale)", "holds (full scale)"), ("D", "absent", "not-run")]
    assert [r["disagrees"] for r in diff(a, b)] == [["registry"], ["headline"], ["registry"]]  # no scales recorded
    assert diff(a, b)[0] == {"id": "A", "a": "holds (CI scale)", "b": "absent", "disagrees": ["registry"], "one_run": []}
    assert diff(a, a) == []


def test_diff_compares_every_scale_and_tells_a_disagreement_from_a_scale_one_run_did_not_measure():
    a = {"scales": SCALES3.words, "claims": [_c("SAME", ci="holds", full="holds"), _c("LOWER", ci="holds", full="holds"),
                    _c("GONE", ci="diverges", full="holds"), _c("BOTH", ci="holds", full="holds"),
                    _c("KINDS"), _c("FAIL", ci="holds")]}
    b = {"scales": SCALES3.words, "claims": [_c("SAME", ci="holds", full="holds"), _c("LOWER", ci="diverges", full="holds"),
                    _c("GONE", ci="diverges", full="not-run"), _c("BOTH", ci="diverges", full="not-run"),
                    dict(_c("KINDS"), status="descriptive"), _c("FAIL", ci="fails")]}
    rows = {r["id"]: r for r in diff(a, b)}
    assert list(rows) == ["LOWER", "GONE", "BOTH", "KINDS", "FAIL"]
    # the same headline, but the CI scale reads otherwise: a disagreement the headline alone hides
    assert rows["LOWER"]["a"] == rows["LOWER"]["b"] == "holds (full scale)" and rows["LOWER"]["disagrees"] == ["ci"]
    # the headline moved only because b could not measure full scale: nothing both measured disagrees
    assert rows["GONE"] == {"id": "GONE", "a": "holds (full scale)", "b": "diverges (CI scale)",
                            "disagrees": [], "one_run": ["full"]}
    assert rows["BOTH"]["disagrees"] == ["ci"] and rows["BOTH"]["one_run"] == ["full"]
    assert rows["KINDS"]["disagrees"] == ["headline"]  # not-run against descriptive: no scale explains it
    assert rows["FAIL"]["disagrees"] == ["ci"]  # a failure is a measurement that reads differently
    assert diff(b, a)[1]["one_run"] == ["full"] and diff(b, b) == []


def test_diff_shows_an_erratum_whose_kind_moved():
    def c(kind):
        return dict(_c("X", full="diverges"), status="diverges", scale="full",
                    **({"diagnosis": {"kind": kind}} if kind else {}))
    (row,) = diff({"scales": SCALES3.words, "claims": [c("unstated")]}, {"scales": SCALES3.words, "claims": [c("pending")]})
    assert row == {"id": "X", "a": "diverges (full scale) [unstated]", "b": "diverges (full scale) [pending]",
                   "disagrees": ["kind"], "one_run": []}
    assert diff({"scales": SCALES3.words, "claims": [c("text")]}, {"scales": SCALES3.words, "claims": [c("text")]}) == []
    # a kind only one report gives comes with a headline that moved, which the row already shows
    (row,) = diff({"scales": SCALES3.words, "claims": [c(None)]}, {"scales": SCALES3.words, "claims": [c("pending")]})
    assert row["disagrees"] == ["headline"]


def test_unknown_ids_name_the_tests_that_use_them():
    tests = {"c/t.py::a": dict(t("passed"), claims=["X-01", "Y-09"]), "c/t.py::b": dict(t("passed"), claims=["Y-09"])}
    assert unknown_ids(REGISTRY, tests) == {"Y-09": ["c/t.py::a", "c/t.py::b"]}
