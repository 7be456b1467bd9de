"""The measured evidence (suite/evidence/measured.py): every record is whole and made with its
scale's current settings; the fast tier reads it; with --runslow the fresh measurement agrees
with it within the scale's tolerance.

These test our own records and tools, not the document: no claim marker.
"""
import copy
import json

import pytest

from suite import catalogue
from suite.evidence import measured, store
from suite.reading import reads

RECORDS = measured.record_paths()


@pytest.mark.fast
@pytest.mark.parametrize("scale", catalogue.MEASURED, ids=lambda s: s.name)
def test_every_measured_scale_has_a_sound_record_at_its_path(scale):
    rec = store.read_or_fail(measured.path(scale), measured.COMMAND)
    assert rec["scale"] == scale.name, "a record lives at the path its scale names"
    assert measured.problems(rec) == []


@pytest.mark.fast
def test_every_record_belongs_to_a_measured_scale_and_each_scale_can_be_declared():
    assert sorted(p.stem for p in RECORDS) == sorted(s.name for s in catalogue.MEASURED)
    assert all(any(m is s for s in catalogue.SCALES) for m in catalogue.MEASURED)


def _sound() -> dict:
    return json.loads(measured.path(catalogue.COST_MEMORY_CI).read_text())


@pytest.mark.fast
@pytest.mark.parametrize("edit, field", [
    (lambda r: r.update(family="lab"), "family"),
    (lambda r: r.update(scale="cost-memory-full"), "scale"),
    (lambda r: r["config"].update(ns=[1, 2]), "config"),
    (lambda r: r.update(result={}), "result"),
    (lambda r: r["result"]["naive"][0].update(peak_bytes=float("nan")), "result.naive[0].peak_bytes"),
    (lambda r: r["result"]["tiled"][1].update(peak_bytes=None), "result.tiled[1].peak_bytes"),
    (lambda r: r["result"]["tiled"][0].update(peak_bytes=-4096), "result.tiled[0].peak_bytes"),
    (lambda r: r["result"]["naive"].pop(), "result: naive"),
    (lambda r: r["result"]["tiled"][2].update(n=513), "result: tiled"),
    (lambda r: r["provenance"].pop("commit"), "provenance.commit"),
])
def test_a_tampered_record_breaks_the_schema_naming_its_field(edit, field):
    rec = _sound()
    edit(rec)
    found = measured.problems(rec)
    assert found and any(p.startswith(field) for p in found), found


@pytest.mark.fast
@pytest.mark.parametrize("scale, edit, says", [
    (catalogue.MIRROR_400, lambda r: r["worst"].pop(), "per seed, one worst and 4 losses"),
    (catalogue.MIRROR_6400, lambda r: r["losses"][0].pop(), "per seed, one worst and 64 losses"),
    (catalogue.MIRROR_400, lambda r: r.update(seeds=[1, 2]), "seeds [1, 2, 3, 4, 5] expected"),
    (catalogue.NORM03_MORE, lambda r: r["real/torch"]["block"]["pre"].pop(), "real/torch.block: pre and post, each 20 seeds"),
    (catalogue.NORM03_GRADS, lambda r: r["real/torch"]["mlp"]["post"][0].pop(), "real/torch.mlp: pre and post"),
    (catalogue.NORM03_GRADS, lambda r: r.pop("mean8/torch"), "one key per (batch, init) setting"),
])
def test_a_result_of_the_wrong_shape_names_what_each_seed_should_hold(scale, edit, says):
    """A record with a seed too few would be judged on fewer seeds without a word (the rules zip
    seeds with values): its schema names the shape instead."""
    result = json.loads(measured.path(scale).read_text())["result"]
    assert scale.shape_problem(result) == ""
    edit(result)
    assert says in scale.shape_problem(result)


@pytest.mark.fast
def test_a_missing_record_skips_naming_the_command_and_a_broken_one_fails(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "EVIDENCE", tmp_path)
    scale = catalogue.MIRROR_400
    with pytest.raises(pytest.skip.Exception, match="python -m suite.evidence measured tiny-mirror-400"):
        measured.recorded_runs(scale)
    measured.path(scale).parent.mkdir(parents=True)
    measured.path(scale).write_text('{"family": "measured"')
    with pytest.raises(pytest.fail.Exception, match="is not JSON"):
        measured.recorded_runs(scale)


@pytest.mark.fast
def test_movement_is_the_largest_relative_difference_and_names_a_change_in_kind():
    a = {"worst": [1e-12, 2e-12], "losses": [[3.0, 2.0]], "ok": True}
    b = copy.deepcopy(a)
    assert measured.movement(a, b) == (0.0, [])
    b["losses"][0][1] = 2.002
    worst, other = measured.movement(a, b)
    assert worst == pytest.approx(0.002 / 2.002) and other == []
    b["ok"] = False
    assert measured.movement(a, b)[1] == ["result.ok: True against False"]
    b["losses"][0].append(1.0)
    assert measured.movement(a, b)[1] == ["result.losses[0][2]: in one only"]
    for bad in (float("nan"), float("inf")):  # max() would keep 0 over a NaN: named, never agreeing
        worst, other = measured.movement({"x": bad}, {"x": 1.0})
        assert other == [f"result.x: {bad!r} against 1.0"]


@pytest.mark.fast
def test_a_stale_record_is_one_line_saying_how_far_it_moved_and_how_to_refresh_it():
    scale = catalogue.COST_MEMORY_CI
    rec = _sound()
    fresh = copy.deepcopy(rec["result"])
    assert measured.stale(scale, fresh) == ""
    fresh["naive"][-1]["peak_bytes"] += 1024
    line = measured.stale(scale, fresh)
    assert "cost-memory-ci" in line and "past 0" in line and "python -m suite.evidence measured cost-memory-ci" in line
    assert "\n" not in line


@pytest.mark.fast
def test_the_mirror_is_checked_on_its_losses_not_on_its_rounding_differences():
    scale = catalogue.MIRROR_400
    fresh = copy.deepcopy(json.loads(measured.path(scale).read_text())["result"])
    fresh["worst"] = [w * 1.5 for w in fresh["worst"]]  # rounding moves between kernels: not a change
    assert measured.stale(scale, fresh) == ""
    fresh["losses"][0][-1] *= 1 + 1e-8  # inside the spread between machines: the same record
    assert measured.stale(scale, fresh) == ""
    fresh["losses"][0][-1] *= 1 + 1e-6  # past it: stale
    assert "past 3e-08" in measured.stale(scale, fresh) and "another x86-64 CPU" in measured.stale(scale, fresh)


@pytest.mark.slow
@pytest.mark.parametrize("scale", [pytest.param(s, marks=reads(s, fresh=True)) for s in catalogue.MEASURED],
                         ids=lambda s: s.name)
def test_a_fresh_measurement_agrees_with_its_record(scale, request, runs_of):
    """With --runslow ``runs_of`` measures afresh (suite/fixtures.py ``recorded``)."""
    assert request.config.getoption("--runslow")
    problem = measured.stale(scale, runs_of(scale))
    assert not problem, problem
