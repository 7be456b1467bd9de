"""What every kind of evidence record shares (suite/evidence/store.py): a broken file is one line
that names it and its field, never a traceback and never a divergence."""
import json
from pathlib import Path

import pytest

from suite.evidence import families, lab, store, winograd

pytestmark = pytest.mark.fast

KINDS = [  # a kind's path and load for one record
    pytest.param(lambda: families.path("ladder", "mean", 0), lambda: families.load("ladder", "mean", 0), id="families"),
    pytest.param(lambda: lab.path("tiny-lab@lab.lr=0.001", "positions"), lambda: lab.load("tiny-lab@lab.lr=0.001", "positions"), id="lab"),
    pytest.param(lambda: winograd.path("p", "fixed", "bag"), lambda: winograd.load("p", "fixed", "bag"), id="winograd"),
]


@pytest.mark.parametrize("where, load", KINDS)
def test_a_truncated_record_is_one_line_naming_its_file(where, load, tmp_path, monkeypatch):
    monkeypatch.setattr(store, "EVIDENCE", tmp_path)
    path = where()
    path.parent.mkdir(parents=True)
    path.write_text('{"family": "ladder", "arm": "me')
    with pytest.raises(store.InvalidRecord) as e:
        load()
    line = str(e.value)
    assert "\n" not in line and str(path) in line and "is not JSON" in line and "python -m suite.evidence" in line


@pytest.mark.parametrize("where, load", KINDS)
def test_a_record_that_is_not_there_reads_none(where, load, tmp_path, monkeypatch):
    monkeypatch.setattr(store, "EVIDENCE", tmp_path)
    assert load() is None


def test_a_record_that_breaks_its_schema_names_the_file_and_every_field(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"a": 1}))
    with pytest.raises(store.InvalidRecord, match=r"r.json breaks its schema: a: wrong; b: wrong; restore it"):
        store.read(path, lambda rec: ["a: wrong", "b: wrong"], "cmd")
    with pytest.raises(store.InvalidRecord, match=r"point: q expected \(the record's path\), got None"):
        store.read(path, lambda rec: [], "cmd", {"point": "q"})


def test_a_test_reading_a_broken_file_fails_in_its_one_line(tmp_path):
    path = tmp_path / "r.json"
    path.write_text("{")
    with pytest.raises(pytest.fail.Exception, match="r.json is not JSON"):
        store.read_or_fail(path, "cmd")


def test_the_provenance_names_each_missing_or_wrong_field():
    from suite.evidence import schema
    good = {"device": "cpu", "device_name": "x", "machine": "x86_64", "torch": "2", "commit": "abc", "code": "c",
            "date": "2026-12-01T00:00:00+00:00", "wall_s": 1.5}
    assert schema.problems(schema.Record, {"provenance": good}) == []
    assert schema.problems(schema.FamilyProvenance, good) == ["tokens_per_s: missing"]
    bad = {**good, "wall_s": -1, "date": "yesterday", "torch": "", "same_run_as": None}
    assert sorted(schema.problems(schema.Record, {"provenance": bad})) == [
        "provenance.date: an ISO date expected, got str 'yesterday'",
        "provenance.same_run_as: a string expected, got NoneType None",
        "provenance.torch: string should have at least 1 character, got str ''",
        "provenance.wall_s: input should be greater than 0, got int -1"]
    assert schema.problems(schema.Record, {"provenance": None}) == ["provenance: an object expected, got NoneType None"]
    assert schema.problems(schema.Record, []) == ["record: an object expected, got list []"]


def test_a_replay_group_of_an_unreadable_record_stands_alone(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text("{")
    assert families.replay_groups([path]) == [[path]]


def test_the_command_says_a_broken_record_in_one_line(tmp_path, monkeypatch):
    from suite.evidence import __main__ as cli
    monkeypatch.setattr(store, "EVIDENCE", tmp_path)
    (tmp_path / "ladder").mkdir()
    (tmp_path / "ladder" / "mean-seed0.json").write_text('{"family": "lad')
    with pytest.raises(SystemExit) as e:
        cli.main(["status"])
    line = str(e.value)
    assert line.startswith("error: ") and "mean-seed0.json is not JSON" in line and "\n" not in line


def test_every_kind_of_record_implements_one_interface_and_reads_its_own_records():
    """suite/evidence/store.py EvidenceKind: the command line loops over the kinds; each lists what
    it still needs as Pending, and reads and checks its committed records the same way."""
    from suite.evidence import __main__ as cli
    kinds = cli.all_kinds()
    assert [k.NAME for k in kinds] == ["families", "lab", "winograd", "measured"]
    for kind in kinds:
        assert isinstance(kind, store.EvidenceKind), kind.NAME
        assert all(isinstance(p, store.Pending) and p.command and p.kind for p in kind.pending()), kind.NAME
        paths = kind.record_paths()
        assert paths, f"{kind.NAME}: no committed record"
        for path in paths[::max(1, len(paths) // 4)]:  # a few of each kind, the fast tier's budget
            rec = kind.read_record(path)
            assert rec is not None and kind.problems(rec) == [], store.shown(path)
    assert [k.NAME for k in kinds if not k.REPLAYS] == ["measured"]


# What no run can produce, one per kind, each on a committed record: a perplexity below 1, an
# accuracy above 1, a negative byte count.
IMPOSSIBLE = {
    "families": ("norm/pre-seed0.json", lambda r: r["result"].update(val_ppl=0.5), "result.val_ppl"),
    "lab": ("lab/stated/positions.json", lambda r: r["result"]["val"][0].__setitem__(0, 0.5), "result.val"),
    "winograd": ("winograd/stated/fixed-bag.json", lambda r: r["result"]["runs"][0]["curve"][-1].update(accuracy=1.5),
                 "result.runs[0].curve"),
    "measured": ("measured/cost-memory-ci.json", lambda r: r["result"]["naive"][0].update(peak_bytes=-4096),
                 "result.naive[0].peak_bytes"),
}


@pytest.mark.parametrize("name", IMPOSSIBLE)
def test_every_kind_refuses_an_impossible_value_naming_the_file_and_the_field(name, tmp_path):
    from suite.evidence import __main__ as cli
    (kind,) = [k for k in cli.all_kinds() if k.NAME == name]
    where, edit, field = IMPOSSIBLE[name]
    rec = json.loads((store.EVIDENCE / where).read_text())
    assert kind.problems(rec) == []
    edit(rec)
    path = tmp_path / Path(where).name
    path.write_text(json.dumps(rec))
    with pytest.raises(store.InvalidRecord) as e:
        kind.read_record(path)
    line = str(e.value)
    assert "\n" not in line and str(path) in line and f"breaks its schema: {field}" in line, line
