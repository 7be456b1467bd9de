"""The Winograd diagnosis grid's committed records (suite/evidence/winograd.py): well-formed, made
with the points' current settings, and reproduced by the current code in their first steps.

These test our own records, not the document: no claim marker.
"""
import json

import pytest

from suite.evidence import store
from suite.evidence import winograd as we
from suite.evidence.store import InvalidRecord
from suite.diagnosis_grids import WINOGRAD_GRIDS
from suite.catalogue import WINOGRAD
from experiments.train import FIRST_LOSSES

RECORDS = we.record_paths()
IDS = [str(p.relative_to(store.EVIDENCE)) for p in RECORDS]


@pytest.mark.fast
@pytest.mark.parametrize("path", RECORDS or [None], ids=IDS or ["none"])
def test_every_winograd_record_is_whole_and_matches_its_point(path):
    if path is None:
        pytest.skip(f"no Winograd grid evidence committed yet: `{we.COMMAND}`")
    rec = store.read_or_fail(path, we.COMMAND)
    assert path == we.path(rec["point"], *rec["arm"].split("/")), "a record lives at the path its fields name"
    assert we.problems(rec) == []  # settings = the point's, scores in [0, 1], curve = final, provenance


@pytest.mark.fast
def test_a_point_trains_only_the_models_whose_settings_it_changes():
    by_name = {s.name: s for s in we.points()}
    assert all(we.changed(s) for s in by_name.values()), "a point that changes nothing trains nothing new"
    fixed = [m for m in WINOGRAD.models if m[0] == "fixed"]
    assert we.changed(by_name["winograd@scale.fixed_held_pairs=48"]) == fixed
    assert we.changed(by_name["winograd@scale.leaky_held_pairs=12"]) == [("leaky", "bag"), ("leaky", "1-block")]
    assert we.changed(by_name["winograd@scale.leaky_block_steps=1500"]) == [("leaky", "1-block")]
    assert we.changed(by_name["winograd@scale.lr=0.001"]) == list(WINOGRAD.models)


def _sound(point="winograd@scale.fixed_held_pairs=48", model=("fixed", "2-blocks")) -> dict:
    """A record that keeps the schema, made by hand (no training)."""
    scale = {s.name: s for s in we.points()}[point]
    cfg = we.recorded_arm(scale, *model)
    curve = [{"step": s, "accuracy": 0.5, "pair_accuracy": 0.5, "wrong_noun": 0.5}
             for s in range(250, cfg["steps"] + 1, 250)]
    rows = {a: [[1 / 15] * 15, [1 / 15] * 15] for a in ("tired", "scared", "slow", "weak", "wet", "wide", "busy", "steep")}
    runs = [{"seed": s, "curve": curve, "final": dict(curve[-1]), "first_losses": [3.0] * FIRST_LOSSES,
             "rows": rows, "rows_held": rows, "held_pair": ["a", "b"]} for s in cfg["seeds"]]
    return {"family": "winograd", "point": point, "arm": "/".join(model), "config": cfg, "result": {"runs": runs},
            "provenance": {"device": "cpu", "device_name": "x", "machine": "x86_64", "torch": "2", "commit": "abc",
                           "code": "abc", "date": "2026-12-02T00:00:00+00:00", "wall_s": 1.0}}


def _run0(rec):
    return rec["result"]["runs"][0]


@pytest.mark.fast
@pytest.mark.parametrize("edit, field", [
    (lambda r: r.update(family="ladder"), "family"),
    (lambda r: r.update(point="winograd@scale.d_model=7"), "point"),
    (lambda r: r.update(arm="leaky/bag"), "arm"),  # a model this point does not change
    (lambda r: r["config"].update(lr=0.5), "config"),
    (lambda r: r["result"]["runs"].pop(), "result.runs"),
    (lambda r: _run0(r)["curve"][-1].update(accuracy="NaN-ish"), "result.runs[0].curve"),
    (lambda r: _run0(r)["curve"][-1].update(accuracy=1.5), "result.runs[0].curve"),
    (lambda r: _run0(r)["curve"][0].update(accuracy=0.9), "result.runs[0].curve"),  # 345.6 of 384 sentences
    (lambda r: _run0(r)["curve"][0].update(wrong_noun=0.75), "result.runs[0].curve"),  # + accuracy > 1
    (lambda r: _run0(r)["curve"].pop(0), "result.runs[0].curve.step"),  # an evaluation missing
    (lambda r: _run0(r)["final"].update(accuracy=0.9), "result.runs[0].final"),
    (lambda r: _run0(r).update(curve=_run0(r)["curve"][:-1]), "result.runs[0].curve.step"),
    (lambda r: _run0(r).update(first_losses=[1.0]), "result.runs[0].first_losses"),
    (lambda r: _run0(r)["rows"]["wet"][1].__setitem__(0, [0.5] * 15), "result.runs[0].rows"),
    (lambda r: r["provenance"].pop("commit"), "provenance.commit"),
    (lambda r: r["provenance"].update(date="yesterday"), "provenance.date"),
    (lambda r: r["provenance"].update(date=20261202), "provenance.date"),
    (lambda r: r.update(point=["winograd@scale.lr=0.001"]), "point"),
])
def test_a_tampered_winograd_record_breaks_the_schema_naming_its_field(edit, field):
    assert we.problems(_sound()) == []
    rec = json.loads(json.dumps(_sound()))
    edit(rec)
    found = we.problems(rec)
    assert found and any(p.startswith(field) for p in found), found


@pytest.mark.fast
def test_a_missing_point_skips_naming_the_command_and_a_broken_one_fails(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "EVIDENCE", tmp_path)
    scale = {s.name: s for s in we.points()}["winograd@scale.leaky_block_steps=1500"]
    stated = _Stated()
    with pytest.raises(pytest.skip.Exception, match="python -m suite.evidence winograd"):
        we.point_runs(scale, stated)
    rec = _sound(scale.name, ("leaky", "1-block"))
    p = we.path(scale.name, "leaky", "1-block")
    p.parent.mkdir(parents=True)
    p.write_text(json.dumps(rec))
    runs = we.point_runs(scale, stated)  # the unchanged models come from the stated runs
    assert runs.final("leaky", "1-block").tolist() == [0.5] * len(WINOGRAD.seeds)
    assert runs.final("fixed", "bag").tolist() == [0.25] * len(WINOGRAD.seeds)
    assert runs.evidence == {"x, 2026-12-02"}
    rec["result"]["runs"][0]["final"]["accuracy"] = 0.7
    p.write_text(json.dumps(rec))
    with pytest.raises(pytest.fail.Exception, match=r"final: .* disagrees"):
        we.point_runs(scale, stated)
    p.write_text("{")
    with pytest.raises(InvalidRecord, match="is not JSON"):
        we.load(scale.name, "leaky", "1-block")


@pytest.mark.fast
def test_a_record_under_another_points_path_fails(tmp_path, monkeypatch):
    """A sound record copied to another point's folder is not that point's evidence."""
    monkeypatch.setattr(store, "EVIDENCE", tmp_path)
    rec = _sound("winograd@scale.fixed_held_pairs=48", ("fixed", "bag"))
    p = we.path("winograd@scale.fixed_held_pairs=60", "fixed", "bag")
    p.parent.mkdir(parents=True)
    p.write_text(json.dumps(rec))
    with pytest.raises(InvalidRecord, match="the record's path"):
        we.load("winograd@scale.fixed_held_pairs=60", "fixed", "bag")


@pytest.mark.fast
def test_an_unrecorded_point_reads_pending_in_the_diagnosis(tmp_path, monkeypatch):
    """No record: each trained point is reported missing, naming the command, and the grid's
    kind is pending; the stated point is judged on the stated runs."""
    from claimcheck.verdict import erratum_kind
    from suite.diagnosis import read_grid
    monkeypatch.setattr(store, "EVIDENCE", tmp_path)
    stated = _Stated()
    report, _ = read_grid(WINOGRAD_GRIDS["WINO-02"], lambda runs, **read: ("v", False),
                          lambda s: stated if s.name == WINOGRAD.name else we.point_runs(s, stated))
    trained = [e for e in report["grid"] if e["point"].startswith("scale.")]
    assert trained and all(e["holds"] is None and we.COMMAND in e["missing"] for e in trained)
    assert erratum_kind("diverges", report)["kind"] == "pending"


@pytest.mark.fast
@pytest.mark.parametrize("pairs", sorted({v for g in WINOGRAD_GRIDS.values() for a in g.axes
                                          if a.setting == "scale.fixed_held_pairs" for v in a.values}))
def test_the_maps_sentence_is_a_training_pair_at_every_held_out_size(pairs):
    """read.sentence=trained means what it says: (animal, street) is trained in both orders."""
    from experiments.winograd import fixed_task
    held = {(e.x, e.y) for e in fixed_task(held_pairs=pairs).held_out}
    assert ("animal", "street") not in held and ("street", "animal") not in held


class _Stated:
    seeds = WINOGRAD.seeds
    evidence = set()

    def record(self, task, kind, seed):
        return {"seed": seed, "final": {"accuracy": 0.25}, "curve": [{"accuracy": 0.25}]}


@pytest.mark.slow
@pytest.mark.parametrize("path", RECORDS or [None], ids=IDS or ["none"])
def test_the_first_steps_of_every_winograd_record_replay(path):
    if path is None:
        pytest.skip(f"no Winograd grid evidence committed yet: `{we.COMMAND}`")
    rec = store.read_or_fail(path, we.COMMAND)
    store.check_replay(path, rec, we.replay_movement(rec), we.COMMAND)


@pytest.mark.fast
def test_the_later_looks_are_pending_in_order_and_join_the_stated_starts(tmp_path, monkeypatch):
    """catalogue.WINO_LOOKS: look 2's starts (every model) are pending first; look 3's only once
    look 2 is recorded; the starts a verdict counts are the stated ones, then each recorded look's."""
    from suite.catalogue import SCHEDULED, WINO_LOOKS, WINOGRAD_MORE
    from suite.winograd_scale import WinogradRuns
    monkeypatch.setattr(store, "EVIDENCE", tmp_path)
    monkeypatch.setattr(store, "VERDICTS", tmp_path / "verdicts.toml")  # none: every claim undecided
    look2, look3 = WINOGRAD_MORE
    names = lambda: {s.name for s, _ in we.todo()}  # noqa: E731
    assert look2.name in names() and look3.name not in names()
    assert len(look2.seeds) == WINO_LOOKS.looks[1] - WINO_LOOKS.looks[0]
    assert look2.seeds[0] == WINOGRAD.seeds[-1] + 1  # the starts after the stated ones (any seed offset)
    for m in we.changed(look2):
        we.path(look2.name, *m).parent.mkdir(parents=True, exist_ok=True)
        we.path(look2.name, *m).write_text("{}")
    assert look3.name in names() and look2.name not in names()
    (tmp_path / "verdicts.toml").write_text("".join(f'["{c}"]\n"full" = "holds"\n' for c in SCHEDULED[WINOGRAD.name][1]))
    assert look3.name not in names()  # every claim decided at an earlier look: look 3 would train for nothing
    runs = lambda scale: WinogradRuns(scale, {m: {"runs": [{"seed": s} for s in scale.seeds]}  # noqa: E731
                                              for m in scale.models})
    joined = runs(WINOGRAD).join(runs(look2))
    assert joined.seeds == WINOGRAD.seeds + look2.seeds
    assert [r["seed"] for r in joined._records["fixed", "2-blocks"]["runs"]] == list(joined.seeds)


def _halves(acc_select, acc_report, pairs):
    return {"select": {"accuracy": acc_select, "pair_accuracy": 0.5, "wrong_noun": 0.0},
            "report": {"accuracy": acc_report, "pair_accuracy": 0.5, "wrong_noun": 0.0}}


@pytest.mark.fast
def test_a_best_checkpoint_point_records_two_halves_that_add_up_to_the_whole():
    """read.checkpoint=best trains its own records (WinogradScale.select_apart): each evaluation
    scores the select and the report half, counts over 8 x 22 and 8 x 21 of the 43 pairs."""
    rec = _sound("winograd@read.checkpoint=best", ("fixed", "bag"))
    assert rec["config"]["select_apart"] is True
    for r in rec["result"]["runs"]:
        for p in r["curve"]:
            p.update(accuracy=(88 + 84) / 344, **_halves(88 / 176, 84 / 168, 43))
        r["final"] = dict(r["curve"][-1])
    assert we.problems(rec) == []
    _run0(rec)["curve"][0]["report"]["accuracy"] = 85 / 168  # no longer the whole set's count
    assert any("do not add up to the whole held-out set's" in x for x in we.problems(rec))
    _run0(rec)["curve"][0]["report"]["accuracy"] = 0.3  # not a count over 168
    assert any("report: accuracy, pair_accuracy, wrong_noun expected, each a count over its 168 sentences" in x
               for x in we.problems(rec))
    del _run0(rec)["curve"][0]["select"]
    assert any("select:" in x for x in we.problems(rec))
    plain = _sound()
    _run0(plain)["curve"][0].update(_halves(0.5, 0.5, 48))
    assert any("halves of a point that does not score them" in x for x in we.problems(plain))


@pytest.mark.fast
def test_a_best_checkpoint_chosen_apart_is_read_on_the_report_half():
    from suite.winograd_scale import WinogradRuns
    scale = {s.name: s for s in we.points()}["winograd@read.checkpoint=best"]
    curve = [{"step": 250, "accuracy": 0.5, "select": {"accuracy": 0.9}, "report": {"accuracy": 0.2}},
             {"step": 500, "accuracy": 0.9, "select": {"accuracy": 0.5}, "report": {"accuracy": 0.7}}]
    runs = WinogradRuns(scale, {("fixed", "bag"): {"runs": [{"seed": 0, "curve": curve, "final": curve[-1]}]}})
    assert runs.final("fixed", "bag", checkpoint="best").tolist() == [0.2]  # chosen on select, not on the whole set
    assert runs.final("fixed", "bag").tolist() == [0.9]
    assert runs.held_out("fixed", "best") == 8 * 21 and runs.held_out("fixed") == 8 * 43
    stated = WinogradRuns(WINOGRAD, {("fixed", "bag"): {"runs": [{"seed": 0, "curve": curve, "final": curve[-1]}]}})
    assert stated.final("fixed", "bag", checkpoint="best").tolist() == [0.9] and stated.held_out("fixed", "best") == 8 * 43
