"""The Polish lab's diagnosis grid records (suite/evidence/lab.py): well-formed, made with the
points' current settings, and reproduced by the current code in their first steps; and the
counting baseline's other smoothing (a read option of TINY-16's grid).

These test our own records and tools, not the document: no claim marker.
"""
import json

import numpy as np
import pytest

from suite.evidence import store
from suite.evidence import lab as le
from suite.evidence.store import InvalidRecord
from suite.diagnosis_grids import LAB_GRIDS
from suite.catalogue import SCHEDULED, TINY_LAB, TINY_LAB_MORE
from experiments.train import FIRST_LOSSES

RECORDS = le.record_paths()
IDS = [str(p.relative_to(store.EVIDENCE)) for p in RECORDS]
POINT = "tiny-lab@lab.lr=0.001"


@pytest.mark.fast
@pytest.mark.parametrize("path", RECORDS or [None], ids=IDS or ["none"])
def test_every_lab_record_is_whole_and_matches_its_point(path):
    if path is None:
        pytest.skip(f"no lab grid evidence committed yet: `{le.COMMAND}`")
    rec = store.read_or_fail(path, le.COMMAND)
    assert path == le.path(rec["point"], rec["arm"]), "a record lives at the path its point and arm name"
    assert le.problems(rec) == []


def _sound(point=POINT) -> dict:
    """A record that keeps the schema, made by hand (no training)."""
    scale = {s.name: s for s in le.points()}[point]
    cfg = le.config(scale, scale.texts(), "positions")
    runs = [[e, s] for e in range(len(cfg["excerpts"])) for s in cfg["seeds"]]
    curve = [[10.0] * len(cfg["lab"]["checkpoints"]) for _ in runs]
    return {"family": "lab", "point": point, "arm": "positions", "config": cfg,
            "result": {"runs": runs, "checkpoints": list(cfg["lab"]["checkpoints"]), "train": curve, "val": curve,
                       "test": curve, "first_losses": [[3.0] * FIRST_LOSSES for _ in runs]},
            "provenance": {"device": "cpu", "device_name": "x", "machine": "x86_64", "torch": "2", "commit": "abc",
                           "code": "abc", "date": "2026-12-02T00:00:00+00:00", "wall_s": 1.0}}


@pytest.mark.fast
@pytest.mark.parametrize("edit, field", [
    (lambda r: r.update(family="ladder"), "family"),
    (lambda r: r.update(point="tiny-lab@lab.lr=7"), "point"),
    (lambda r: r.update(arm="both"), "arm"),
    (lambda r: r["config"]["lab"].update(lr=0.5), "config"),
    (lambda r: r["config"]["excerpts"].pop(), "config"),
    (lambda r: r["result"]["runs"].pop(), "result.runs"),
    (lambda r: r["result"].update(checkpoints=[100]), "result.checkpoints"),
    (lambda r: r["result"].update(val=[[0.5] * 8] * len(r["result"]["runs"])), "result.val"),
    (lambda r: r["result"]["test"].pop(), "result.test"),
    (lambda r: r["result"].update(first_losses=[[1.0]]), "result.first_losses"),
    (lambda r: r["provenance"].pop("code"), "provenance.code"),
])
def test_a_tampered_lab_record_breaks_the_schema_naming_its_field(edit, field):
    assert le.problems(_sound()) == []
    rec = json.loads(json.dumps(_sound()))
    edit(rec)
    found = le.problems(rec)
    assert found and any(p.startswith(field) for p in found), found


@pytest.mark.fast
def test_a_missing_lab_point_skips_naming_the_command_and_another_points_record_fails(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "EVIDENCE", tmp_path)
    scale = {s.name: s for s in le.points()}[POINT]
    with pytest.raises(pytest.skip.Exception, match="python -m suite.evidence lab"):
        le.point_runs(scale, None)
    other = "tiny-lab@lab.lr=0.01"
    le.path(other, "positions").parent.mkdir(parents=True)
    le.path(other, "positions").write_text(json.dumps(_sound(POINT)))  # lr=0.001's record under lr=0.01's path
    with pytest.raises(InvalidRecord, match="the record's path"):
        le.load(other, "positions")


@pytest.mark.fast
def test_every_trained_lab_point_differs_from_the_stated_lab_in_one_setting():
    names = {s.name for s in le.points()}
    assert names == {"tiny-lab@lab.lr=0.001", "tiny-lab@lab.lr=0.01"}
    for s in le.points():
        assert s.config != TINY_LAB.config and s.seeds == TINY_LAB.seeds and s.excerpts == TINY_LAB.excerpts
    assert [a.setting for a in LAB_GRIDS["TINY-16"].axes] == ["read.smoothing", "lab.lr"]


@pytest.mark.fast
def test_the_interpolated_3gram_is_a_mix_chosen_on_validation_and_add_k_is_unchanged():
    """add-k is the lab's baseline as before (one model, weight 1); the interpolated one mixes the
    1-, 2- and 3-gram with weights on a 0.1 grid of the simplex, chosen on validation, so its
    validation perplexity is at most any single order's."""
    from experiments.polish_lab import ngram_scores
    ex = TINY_LAB.texts()[0]
    add_k, mix = ngram_scores(ex, 3), ngram_scores(ex, 3, "interpolated")
    assert "weights" not in add_k and isinstance(add_k["k"], float)
    w = np.array(mix["weights"])
    assert len(w) == 3 and abs(w.sum() - 1) < 1e-9 and np.allclose(w * 10, np.round(w * 10))
    assert mix["val"] <= add_k["val"] + 1e-12  # (0, 0, 1) is on the grid: the add-k 3-gram itself
    with pytest.raises(ValueError, match="unknown smoothing 'kn'"):
        ngram_scores(ex, 3, "kn")


@pytest.mark.slow
@pytest.mark.parametrize("path", RECORDS or [None], ids=IDS or ["none"])
def test_the_first_steps_of_every_lab_record_replay(path):
    if path is None:
        pytest.skip(f"no lab grid evidence committed yet: `{le.COMMAND}`")
    rec = store.read_or_fail(path, le.COMMAND)
    store.check_replay(path, rec, le.replay_movement(rec), le.COMMAND)


@pytest.mark.fast
def test_pending_lists_every_point_without_a_record_file(tmp_path, monkeypatch):
    """What ``python -m suite.evidence pending`` prints and ``record`` trains: a point drops
    off once its record file exists; ``names`` narrows the list."""
    monkeypatch.setattr(store, "EVIDENCE", tmp_path)
    monkeypatch.setattr(store, "VERDICTS", tmp_path / "verdicts.toml")  # none: every claim undecided
    look2, look3 = (m.name for m in TINY_LAB_MORE)
    both = lambda name: [(name, "positions"), (name, "no-positions")]  # noqa: E731
    want = both(TINY_LAB.name) + both(look2) + [w for s in le.points() for w in both(s.name)]  # TINY-27 reads no-positions
    assert [(s.name, a) for s, a in le.todo()] == want and (POINT, "positions") in want
    for arm in ("positions", "no-positions"):
        le.path(POINT, arm).parent.mkdir(parents=True, exist_ok=True)
        le.path(POINT, arm).write_text("{}")
    assert [(s.name, a) for s, a in le.todo()] == [w for w in want if w[0] != POINT]
    assert le.todo((POINT,)) == []
    # the main excerpt's third look is pending once its second is recorded, both arms
    for arm in ("positions", "no-positions"):
        le.path(look2, arm).parent.mkdir(parents=True, exist_ok=True)
        le.path(look2, arm).write_text("{}")
    assert [(s.name, a) for s, a in le.todo()][2:4] == both(look3)
    # once the committed verdicts decide every claim the looks serve, no later look is wanted
    (tmp_path / "verdicts.toml").write_text("".join(f'["{c}"]\n"full" = "holds"\n' for c in SCHEDULED[TINY_LAB.name][1]))
    assert all(s not in TINY_LAB_MORE for s, _ in le.todo())
