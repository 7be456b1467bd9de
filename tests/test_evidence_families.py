"""The committed full-scale evidence (fixtures/evidence/): well-formed, made with the scales'
current configurations, and reproduced by the current code in its first steps.

These test our own records, not the document: no claim marker. The claims' full-scale tests
read the records through ``suite.scales.Scale.runs`` when there is no CUDA device.
"""
import functools
import json
import re
import subprocess
import sys
import threading
import tomllib
from dataclasses import replace

import numpy as np
import pytest

from suite.evidence import families as evidence, recording, store
from suite.reading import reads
from suite.settings import seeds
from suite.scales import Runs, Scale
from experiments.train import FIRST_LOSSES

RECORDS = evidence.record_paths()  # the families' own records, then their grid points' (explore/)
IDS = [str(p.relative_to(store.EVIDENCE)) for p in RECORDS]
FIELDS = {"val_ppl", "train_ppl", "curve", "trace", "val_ppl_at_length"}


def _records():
    if not RECORDS:
        pytest.skip("no full-scale evidence committed yet: `python -m suite.evidence run --family ladder`")
    return RECORDS


@pytest.mark.fast
@pytest.mark.parametrize("path", RECORDS or [None], ids=IDS or ["none"])
def test_every_evidence_record_is_whole_and_matches_its_scale(path):
    _records()
    rec = store.read_or_fail(path, evidence.COMMAND)
    point = rec.get("point", "")
    assert path == evidence.path(rec["family"], rec["arm"], rec["seed"], point), "a record lives at the path its fields name"
    scale = evidence.family_scale(rec["family"], point)
    assert rec["arm"] in scale.arms and rec["scale"] == scale.name
    assert rec["config"] == evidence.config_of(scale.spec(rec["arm"], (rec["seed"],))), (
        f"{path.name} was recorded with another configuration than {scale.name}'s: delete it and rerun "
        f"`python -m suite.evidence run --family {rec['family']}`")
    assert FIELDS <= set(rec["result"]) and len(rec["first_losses"]) == FIRST_LOSSES
    assert evidence.problems(rec) == []  # types, ranges, curve = final values, whole run, provenance


# ---- the schema names the field a tampered record breaks -------------------------------------

def _tamper(edit):
    rec = json.loads(RECORDS[0].read_text()) if RECORDS else pytest.skip("no evidence committed")
    edit(rec)
    return rec


def _set(path, value):
    def edit(rec):
        *head, last = path.split(".")
        d = rec
        for k in head:
            d = d[k]
        d[last] = value
    return edit


def _drop(path):
    def edit(rec):
        *head, last = path.split(".")
        d = rec
        for k in head:
            d = d[k]
        del d[last]
    return edit


@pytest.mark.fast
@pytest.mark.parametrize("edit, field", [
    (_set("result.val_ppl", "NaN-ish"), "result.val_ppl"),
    (_set("result.val_ppl", float("nan")), "result.val_ppl"),
    (_set("result.train_ppl", 0.5), "result.train_ppl"),
    (_set("result.train_ppl", True), "result.train_ppl"),
    (lambda r: r["result"].update(val_ppl=r["result"]["val_ppl"] * 1.01), "result.val_ppl"),
    (lambda r: r["result"]["curve"]["val_ppl"].__setitem__(-1, 40.0), "result.val_ppl"),
    (lambda r: r["result"]["curve"]["step"].__setitem__(-1, 10), "result.curve.step"),
    (lambda r: r["result"]["curve"]["loss"].append(1.0), "result.curve"),
    (_set("result.curve", None), "result.curve"),
    (_set("result.trace", {"step": [0, 5], "loss": [None, float("inf")]}), "result.trace.loss"),
    (_set("result.trace", {"step": [0], "loss": [None], "attention": [{"score_std": 1, "entropy": 1,
                                                                        "saturated": 1.5}]}), "result.trace.attention[0].saturated"),
    (_set("result.val_ppl_at_length", {"64": "x"}), "result.val_ppl_at_length.64"),
    (_set("first_losses", [1.0]), "first_losses"),
    (_set("seed", -1), "seed"),
    (_set("family", "ladders"), "family"),
    (_set("arm", "no-such-arm"), "arm"),
    (_drop("provenance.commit"), "provenance.commit"),
    (_drop("provenance.date"), "provenance.date"),
    (_set("provenance.date", "yesterday"), "provenance.date"),
    (_set("provenance.wall_s", -3), "provenance.wall_s"),
    (_set("provenance.device_name", ""), "provenance.device_name"),
    (_drop("result"), "result"),
], ids=lambda x: x if isinstance(x, str) else "")
def test_a_tampered_record_breaks_the_schema_naming_its_field(edit, field):
    bad = evidence.problems(_tamper(edit))  # the field, or an item of it: "result.trace.loss[1]: ..."
    assert bad and any(re.match(rf"{re.escape(field)}(\[\d+\])?: ", b) for b in bad), bad


@pytest.mark.fast
def test_a_tampered_record_on_disk_fails_its_full_scale_test_naming_the_field(tmp_path, monkeypatch):
    """Read through a Scale, a broken record is a failure (never a skip, never a divergence)."""
    rec = json.loads(RECORDS[0].read_text()) if RECORDS else pytest.skip("no evidence committed")
    monkeypatch.setattr(store, "EVIDENCE", tmp_path)
    rec["result"]["val_ppl"] = "NaN-ish"
    out = evidence.path(rec["family"], rec["arm"], rec["seed"])
    out.parent.mkdir(parents=True)
    out.write_text(json.dumps(rec))
    scale = evidence.family_scale(rec["family"])
    runs = Runs(scale, functools.partial(evidence.read, scale), (rec["seed"],))
    with pytest.raises(pytest.fail.Exception, match=r"breaks its schema: result\.val_ppl: a number expected, got str 'NaN-ish'"):
        runs.val(rec["arm"])
    out.write_text("{not json")
    with pytest.raises(pytest.fail.Exception, match="is not JSON"):
        Runs(scale, functools.partial(evidence.read, scale), (rec["seed"],)).val(rec["arm"])


# ---- replay: the committed numbers come from this code and this configuration ----------------

# The steps retrained per record and their tolerance: suite/evidence/store.py (REPLAY_*). One record per
# configuration and code version stands for its seeds (``evidence.replay_groups``), so more seeds
# of a recorded configuration cost the slow tier nothing; `python -m suite.evidence replay` does all.
GROUPS = evidence.replay_groups(RECORDS)


@pytest.mark.slow
@pytest.mark.parametrize("group", GROUPS or [None],
                         ids=[str(g[0].relative_to(store.EVIDENCE)) for g in GROUPS] or ["none"])
def test_the_first_steps_of_every_evidence_configuration_replay(group, shakespeare_tokens):
    _records()
    path, *others = group
    rec = store.read_or_fail(path, evidence.COMMAND)
    problem = store.replay_problem(evidence.replay_movement(rec, shakespeare_tokens), store.replay_rtol(path))  # on the CPU
    if problem:
        also = f" (and, made by the same code, {', '.join(p.name for p in others)})" if others else ""
        pytest.fail(f"{path.relative_to(store.ROOT)}{also} is stale: {problem} under the current code "
                    f"(recorded on {rec['provenance']['device_name']}); delete it and rerun "
                    f"`python -m suite.evidence run --family {rec['family']}`", pytrace=False)


@pytest.mark.fast
def test_a_replay_is_stale_past_either_tolerance_and_says_which():
    """The loss at initialisation, a forward pass, has a tolerance of its own, far tighter than
    the trained steps', which amplify kernel rounding (suite/evidence/store.py: REPLAY_RTOL*)."""
    rec = [6.93, 6.90, 6.85, 6.80]
    assert store.movement(rec, rec) == (0.0, 0.0) and store.replay_problem((0.0, 0.0)) == ""
    assert store.REPLAY_RTOL_INIT < store.REPLAY_RTOL
    init = [rec[0] * (1 + 2 * store.REPLAY_RTOL_INIT), *rec[1:]]
    assert "loss at initialisation moved by" in store.replay_problem(store.movement(init, rec))
    rounding = [*rec[:3], rec[3] * (1 + store.REPLAY_RTOL / 2)]
    assert store.replay_problem(store.movement(rounding, rec)) == ""
    late = [*rec[:3], rec[3] * (1 + 2 * store.REPLAY_RTOL)]
    assert "first 4 training losses moved by" in store.replay_problem(store.movement(late, rec))
    # several runs at once, the step on the last axis: the largest movement of any run counts
    assert store.movement([rec, late], [rec, rec]) == (0.0, pytest.approx(2 * store.REPLAY_RTOL, rel=1e-9))


@pytest.mark.fast
def test_every_record_has_its_replay_spread_measured_under_other_kernels():
    """A record's trained steps replay at SAFETY x its configuration's own spread between kernel
    settings: a configuration with no measurement would replay at a tolerance taken
    from others, which the chaotic ones exceed 100-fold."""
    from suite.evidence import lab, winograd
    paths = [*evidence.record_paths(), *lab.record_paths(), *winograd.record_paths()]
    missing = [store.shown(p) for p in store.unmeasured(paths)]  # each seed: seeds of one configuration move apart
    assert not missing, (f"{len(missing)} record(s) have no replay spread, e.g. {missing[0]}: "
                         f"run `{store.SPREAD_COMMAND}`")
    settings = set(tomllib.loads(store.SPREAD.read_text())["measured"])  # parsed once, not once per row
    for row in store.spreads().values():
        assert row["measured"] and set(row["measured"]) <= settings


@pytest.mark.fast
def test_a_configurations_tolerance_is_three_times_its_own_spread_and_never_under_the_common_one(monkeypatch):
    seed2 = store.EVIDENCE / "sqrt" / "explore" / "sqrt1024-full@train.lr=0.03" / "nodiv-1024-seed2.json"
    assert store.configuration(seed2) == "sqrt/explore/sqrt1024-full@train.lr=0.03/nodiv-1024"
    assert store.configuration(store.EVIDENCE / "winograd/explore/w@x=1/fixed-bag.json") == "winograd/explore/w@x=1/fixed-bag"
    rows = {"sqrt/explore/sqrt1024-full@train.lr=0.03/nodiv-1024": {"trained": 4.29e-2},
            "norm/pre": {"trained": 6.7e-8}}
    monkeypatch.setattr(store, "spreads", lambda: rows)
    assert store.replay_rtol(seed2) == pytest.approx(0.13)  # 3 x 4.29e-2, rounded up
    assert store.replay_rtol(store.EVIDENCE / "norm" / "pre-seed1.json") == store.REPLAY_RTOL
    assert store.replay_rtol(store.EVIDENCE / "norm" / "post-seed1.json") == store.REPLAY_RTOL  # not measured
    assert store.replay_problem((0.0, 0.1), store.replay_rtol(seed2)) == ""
    problem = store.replay_problem((0.0, 0.2), store.replay_rtol(seed2))
    assert "tolerance 0.13, 3x this configuration's spread in fixtures/replay_spread.toml" in problem


@pytest.mark.fast
def test_the_spread_command_replays_new_configurations_under_other_kernels_and_merges_them(monkeypatch, tmp_path, capsys):
    import json
    from suite.evidence import __main__ as cli, lab, winograd
    spread = tmp_path / "replay_spread.toml"
    monkeypatch.setattr(store, "SPREAD", spread)
    store.spreads.cache_clear()
    paths = [store.EVIDENCE / "norm" / f"pre-seed{s}.json" for s in (0, 1)]
    monkeypatch.setattr(evidence, "record_paths", lambda explore=True: paths)
    monkeypatch.setattr(lab, "record_paths", lambda: [])
    monkeypatch.setattr(winograd, "record_paths", lambda: [])
    seen = {"kernels": []}

    def child(todo, out, kernels):  # the replay the command starts, under one setting of other kernels
        seen["kernels"].append(kernels)
        seen["argv"] = [str(p) for p in todo]
        # seed 1 moves most under the second setting: the largest movement over settings is kept
        big = 5e-3 if kernels == store.SPREAD_KERNELS["aten-scalar"] else 1e-3
        moves = {str(paths[0]): [0.0, 2e-7], str(paths[1]): [6e-8, big]}
        out.write_text(json.dumps({a: moves.get(a, [0.0, 1e-7]) for a in seen["argv"]
                                   if "seed3" not in a}))  # seed 3: the child stops before it
    monkeypatch.setattr(cli, "replay_elsewhere", child)
    try:
        assert cli.main(["spread"]) == 0
        assert seen["kernels"] == list(store.SPREAD_KERNELS.values())
        assert store.spreads()["norm/pre"]["trained"] == 5e-3 and store.spreads()["norm/pre"]["init"] == 6e-8
        assert store.replay_rtol(paths[0]) == pytest.approx(0.015)
        assert store.spreads()["norm/pre"]["records"] == {s: ["pre-seed0.json", "pre-seed1.json"]
                                                          for s in store.SPREAD_KERNELS}
        assert cli.main(["spread"]) == 0 and "every record's spread is in" in capsys.readouterr().out
        paths.append(store.EVIDENCE / "norm" / "pre-seed2.json")  # a later seed of a measured configuration
        assert cli.main(["spread"]) == 0 and seen["argv"] == [str(paths[-1])]
        assert "pre-seed2.json" in store.spreads()["norm/pre"]["records"]["avx2"] and store.unmeasured(paths) == []
        # a setting added later: only it replays, every record under it
        monkeypatch.setitem(store.SPREAD_KERNELS, "mkl-avx2", {"MKL_ENABLE_INSTRUCTIONS": "AVX2"})
        assert store.unmeasured(paths) == paths and store.unmeasured(paths, "avx2") == []
        seen["kernels"].clear()
        assert cli.main(["spread"]) == 0 and seen["kernels"] == [{"MKL_ENABLE_INSTRUCTIONS": "AVX2"}]
        assert len(tomllib.loads(spread.read_text())["measured"]) == len(store.SPREAD_KERNELS)  # one per setting, same day and code
        paths.extend(store.EVIDENCE / "norm" / f"pre-seed{s}.json" for s in (3, 4))  # the child measures 4 only
        assert cli.main(["spread"]) == 1 and "error: 1 record(s) not measured under ATEN_CPU_CAPABILITY=avx2" \
            in capsys.readouterr().out
    finally:
        store.spreads.cache_clear()


@pytest.mark.fast
def test_the_replay_command_names_a_stale_record_and_exits_nonzero(monkeypatch, capsys, tmp_path):
    import json
    from suite.evidence import __main__ as cli, lab, winograd
    paths = []
    for arm, name in (("pre", "cpu A"), ("post", "cpu B")):
        paths.append(tmp_path / f"{arm}.json")
        paths[-1].write_text(json.dumps({"family": "norm", "arm": arm, "seed": 0, "provenance": {"device_name": name}}))
    monkeypatch.setattr(evidence, "record_paths", lambda explore=True: paths)
    monkeypatch.setattr(lab, "record_paths", lambda: [])
    monkeypatch.setattr(winograd, "record_paths", lambda: [])
    moves = {"pre": (0.0, 1e-7), "post": (0.0, 2 * store.REPLAY_RTOL)}
    monkeypatch.setattr(evidence, "replay", lambda rec: moves[rec["arm"]])
    assert cli.main(["replay"]) == 1
    out = capsys.readouterr().out
    assert f"{paths[0]}: at initialisation 0.00e+00, trained 1.00e-07 (cpu A)\n" in out
    assert f"{paths[1]}: at initialisation" in out and ": STALE, its first 4 training losses moved by" in out
    assert "1 stale record(s)" in out
    moves["post"] = (0.0, 0.0)
    assert cli.main(["replay"]) == 0
    assert "every record replays within its tolerances" in capsys.readouterr().out


@pytest.mark.fast
def test_replay_groups_hold_every_record_once_each_group_one_configuration_and_code(tmp_path):
    groups = evidence.replay_groups(RECORDS)
    assert sorted(p for g in groups for p in g) == sorted(RECORDS)
    for g in groups:
        recs = [json.loads(p.read_text()) for p in g]
        assert len({json.dumps(r["config"], sort_keys=True) for r in recs}) == 1
        assert len({(r["provenance"]["code"], r["provenance"]["device"].split(":")[0], r["provenance"]["torch"])
                    for r in recs}) == 1
        assert [r["seed"] for r in recs] == sorted((r["seed"] for r in recs), reverse=True)  # highest first
    # a seed made by other code, on another device or torch is a group of its own
    rec = json.loads(RECORDS[0].read_text()) if RECORDS else pytest.skip("no evidence committed")
    a = tmp_path / "a.json"
    a.write_text(json.dumps(rec))
    for i, change in enumerate(({"code": "0" * 12}, {"device": "cuda:0"}, {"torch": "0.0"}, {})):
        b = tmp_path / f"b{i}.json"
        b.write_text(json.dumps({**rec, "seed": rec["seed"] + 1, "provenance": {**rec["provenance"], **change}}))
        assert sorted(map(len, evidence.replay_groups([a, b]))) == ([1, 1] if change else [2])


# ---- the path from config to record to judge, at a smoke scale -------------------------------

def _smoke(family: str) -> Scale:
    """The family's full scale, shrunk to a few CPU steps: the same arms, options and fields."""
    full = evidence.family_scale(family)

    def train(t):
        return replace(t, steps=FIRST_LOSSES, batch_size=2, warmup=min(t.warmup, 5), eval_windows=4,
                       eval_every=10 if t.eval_every else 0, trace_every=5 if t.trace_every else 0)
    return replace(full, name=f"smoke-{family}", declared_seeds=(0,), train=train(full.train),
                   trains={k: train(t) for k, t in full.trains.items()},
                   arms={k: replace(c, d_model=16, block_size=16, n_head=min(c.n_head, 2),
                                    d_head=None if c.d_head is None else min(c.d_head, 64))
                         for k, c in full.arms.items()})


@pytest.mark.slow
@pytest.mark.parametrize("family", list(evidence.FAMILIES))
def test_every_full_scale_family_runs_from_config_to_record_to_judge(family, tmp_path, monkeypatch,
                                                                    shakespeare_tokens):
    """Config -> training -> evidence record -> Runs, at a smoke scale on the CPU: every field a
    full-scale test reads is there, so a first run on CUDA can fail on its numbers only, never
    on a KeyError. The thresholds are not checked here."""
    smoke = _smoke(family)
    monkeypatch.setitem(evidence.FAMILIES, f"smoke-{family}", smoke)
    monkeypatch.setattr(store, "EVIDENCE", tmp_path)
    seed = smoke.seeds[0]  # 0, shifted by CLAIMS_SEED_OFFSET
    written = recording.run(f"smoke-{family}", [seed], device="cpu", log=lambda *_: None)
    assert len(written) == len(smoke.arms)
    runs = evidence.recorded_runs(smoke)
    assert runs.seeds == (seed,)
    for arm in smoke.arms:
        t = smoke.trains.get(arm, smoke.train)
        run = runs.run(arm, seed)
        assert np.isfinite(runs.val(arm)).all() and np.isfinite(runs.train(arm)).all()
        assert run.curve["step"][-1] == t.steps and len(run.curve["val_ppl"]) == len(run.curve["step"])
        assert np.isfinite([runs.at_length(arm, L) for L in t.eval_lengths]).all()
        if t.trace_every:
            assert runs.trace(arm).shape == (1, t.steps // t.trace_every + 1)
        if t.attention_stats:
            assert {"score_std", "entropy", "saturated"} <= set(run.trace["attention"][-1])
    assert runs.evidence and all("," in e for e in runs.evidence)  # "<device>, <date>" for the verdict


@pytest.mark.fast
def test_an_arm_without_evidence_skips_naming_the_command(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "EVIDENCE", tmp_path)
    scale = evidence.family_scale("ladder")
    runs = evidence.recorded_runs(scale)
    first = scale.seeds[0]  # 0, shifted by CLAIMS_SEED_OFFSET
    with pytest.raises(pytest.skip.Exception, match=rf"no full-scale evidence for ladder-full/mean seed {first}\b.*"
                                                     r"python -m suite.evidence run --family ladder"):
        runs.val("mean")


# ---- with CUDA: the GPU's fresh runs against the CPU's evidence ------------------------------

CROSS_DEVICE_FLOOR = 0.03  # relative; a one-seed family has no spread of its own (see below)


@pytest.mark.gpu
@pytest.mark.parametrize("family", [pytest.param(f, marks=reads(evidence.family_scale(f))) for f in evidence.FAMILIES])
def test_fresh_gpu_runs_agree_with_the_cpu_evidence(family, device, runs_of):
    """A claim about our code, not the text: the same configuration and seed on a GPU lands
    within the seed spread of the CPU's record. Floats round differently on the two, and
    training amplifies it; the spread of the GPU's own seeds is the scale of that noise (three
    times its std), floored at 3 % for the ladder's single seed, above the 0.1-2 % that the
    same run moves between two x86 CPUs."""
    scale = evidence.family_scale(family)
    if device.type != "cuda":
        pytest.skip("the cross-device check compares a CUDA run with the CPU evidence")
    fresh = runs_of(scale)
    recorded = [r for r in evidence.records() if r["family"] == family and r["provenance"]["device"] == "cpu"]
    if not recorded:
        pytest.skip(f"no CPU evidence for {family} to compare with")
    far = []
    for rec in recorded:
        if rec["seed"] not in fresh.seeds:
            continue
        gpu = fresh.val(rec["arm"])
        spread = 3 * np.std(gpu, ddof=1) / np.mean(gpu) if len(gpu) > 1 else 0.0
        moved = abs(fresh.run(rec["arm"], rec["seed"]).val_ppl / rec["result"]["val_ppl"] - 1)
        if moved > max(spread, CROSS_DEVICE_FLOOR):
            far.append(f"{rec['arm']}: {moved:.1%} (allowed {max(spread, CROSS_DEVICE_FLOOR):.1%})")
    assert not far, f"{family}: GPU and CPU evidence differ beyond the seed spread: {'; '.join(far)}"


# ---- what is pending, and recording it inside a budget (tools/device_evidence.sh) ------------

@pytest.mark.slow  # seconds, not milliseconds: it runs with --runslow
def test_pending_lists_what_a_scale_or_grid_declares_and_no_record_holds(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "EVIDENCE", tmp_path)
    todo = evidence.todo()
    first = [(f, p, a) for f, p, a, _ in todo[:2]]
    assert first == [("sqrt-ladder", "", "div-32"), ("sqrt-ladder", "", "nodiv-32")]  # FIRST's order
    each = [(f, p, a, seed) for f, p, a, s in todo for seed in s]
    assert len(set(each)) == len(each)  # a run once, whichever scales share it
    stated = seeds(0, 1, 2)  # the norm family's seeds, shifted by CLAIMS_SEED_OFFSET
    norm = {}
    for f, p, a, s in todo:
        if f == "norm" and p == "norm-full@stated":
            norm[a] = norm.get(a, ()) + s
    more = seeds(*range(3, 10))  # NORM-05/06's second look at the best checkpoint, fresh seeds (suite/diagnosis_grids.py)
    # the second look's fresh seeds first (it decides most), then the first look's
    assert norm == {"pre+warmup": stated, **{a: more + stated for a in ("pre", "post", "post+warmup")}}
    assert not [t for t in todo if t[0] == "norm" and not t[1]]  # the stated point records them (same_run)
    assert ("norm", "norm-full@model.dropout=0.1", "post", stated) in todo
    # a recorded seed is no longer pending
    rec = json.loads(RECORDS[0].read_text()) if RECORDS else pytest.skip("no evidence committed")
    out = evidence.path(rec["family"], rec["arm"], rec["seed"], rec.get("point", ""))
    out.parent.mkdir(parents=True)
    out.write_text(json.dumps(rec))
    assert all(not (f == rec["family"] and p == rec.get("point", "") and a == rec["arm"] and rec["seed"] in s)
               for f, p, a, s in evidence.todo())


@pytest.mark.fast
def test_a_scheduled_scale_is_pending_up_to_its_next_look_and_never_past_it(tmp_path, monkeypatch):
    """catalogue.SCHEDULED: the ladder's eight claims look at 3, 5, 10 seeds. With nothing recorded
    pending asks for the first look's seeds only; once every arm has them, the second look's; once
    the committed verdicts decide every claim, none."""
    from suite import catalogue
    monkeypatch.setattr(store, "EVIDENCE", tmp_path)
    monkeypatch.setattr(store, "VERDICTS", tmp_path / "verdicts.toml")  # none yet: every claim undecided
    scale = catalogue.LADDER_FULL
    assert evidence.wanted(scale) == scale.seeds[:3]
    assert evidence.claims_of(scale) == catalogue.SCHEDULED[scale.name][1]  # none pinned: every one open
    monkeypatch.setattr(evidence, "load", lambda fam, arm, seed, point="": {} if seed in scale.seeds[:3] else None)
    assert evidence.wanted(scale) == scale.seeds[:5]
    (tmp_path / "verdicts.toml").write_text("".join(f'["{c}"]\n"full" = "holds"\n' for c in catalogue.SCHEDULED[scale.name][1][:-1]))
    assert evidence.wanted(scale) == scale.seeds[:5]  # one claim still undecided keeps the look open
    (tmp_path / "verdicts.toml").write_text("".join(f'["{c}"]\n"full" = "diverges"\n' for c in catalogue.SCHEDULED[scale.name][1]))
    assert evidence.wanted(scale) == ()  # every claim decided at look 1: no later look is wanted
    (tmp_path / "verdicts.toml").unlink()
    monkeypatch.setattr(evidence, "load", lambda fam, arm, seed, point="": {})
    assert evidence.wanted(scale) == ()  # the cap reached: nothing more, ever
    assert evidence.wanted(catalogue.SQRT32_FULL) == catalogue.SQRT32_FULL.seeds  # no schedule: every seed
    assert evidence.claims_of(catalogue.SQRT32_FULL) == ()


@pytest.mark.fast
def test_a_point_that_only_adds_a_curve_records_the_familys_own_run_too(tmp_path, monkeypatch):
    """The norm grid's stated point is the family's configuration evaluated every 50 steps: the
    same run (tests/test_experiments_train.py proves it bit for bit), so recording it also
    records the family's own seed, cut to its last evaluation and naming the record it came
    from. A point that changes the run (dropout) records only itself."""
    from experiments import runs
    monkeypatch.setattr(store, "EVIDENCE", tmp_path)
    stated, dropout = "norm-full@stated", "norm-full@model.dropout=0.1"
    seed = evidence.family_scale("norm").seeds[1]
    assert evidence.same_run("norm", stated, "post", seed)
    assert not evidence.same_run("norm", dropout, "post", seed) and not evidence.same_run("norm", "", "post", seed)
    assert not evidence.same_run("norm", stated, "post", seed + 1000)  # a seed the family does not declare
    steps = list(range(50, 1001, 50))
    losses = [5.0 - 0.1 * i for i in range(len(steps))]

    def ensure(specs, log, progress):
        (spec,) = specs
        return [[{"val_ppl": 60.0 + s, "train_ppl": 12.0, "val_ppl_at_length": {}, "trace": None,
                 "curve": {"step": steps, "train_ppl": [12.0] * 20, "val_ppl": [70.0] * 19 + [60.0 + s],
                           "loss": losses}, "first_losses": [5.5] * FIRST_LOSSES, "wall_s": 90.0,
                 "tokens_per_s": 1000} for s in spec.seeds]]
    monkeypatch.setattr(runs, "ensure", ensure)
    written = recording.run("norm", [seed], ["post"], point=stated, log=lambda *_: None)
    assert written == [evidence.path("norm", "post", seed, stated), evidence.path("norm", "post", seed)]
    own = evidence.load("norm", "post", seed)  # schema-checked on load
    assert own["scale"] == "norm-full" and "point" not in own
    assert own["config"] == evidence.config_of(evidence.family_scale("norm").spec("post", (seed,)))
    assert own["result"]["curve"] == {"step": [1000], "train_ppl": [12.0], "val_ppl": [60.0 + seed],
                                      "loss": [pytest.approx(np.mean(losses), rel=1e-13)]}
    assert own["provenance"]["same_run_as"] == str(evidence.path("norm", "post", seed, stated))
    assert recording.run("norm", [seed], ["post"], point=dropout, log=lambda *_: None) == [
        evidence.path("norm", "post", seed, dropout)]
    # a point record whose family record is gone (deleted as stale, say): pending lists the family's
    # seed, since recording the point again would skip it
    evidence.path("norm", "post", seed).unlink()
    assert ("norm", "", "post", (seed,)) in evidence.todo()


class _OtherProcess:
    """Another process holding the claim on a record until ``release()``."""

    def __init__(self, record):
        code = ("import sys; from filelock import FileLock; lock = FileLock(sys.argv[1]); lock.acquire(); "
                "print('held', flush=True); sys.stdin.read()")
        self.proc = subprocess.Popen([sys.executable, "-c", code, str(recording.claim_path(record))],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline() == "held\n"

    def release(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def _fake_ensure(trained, during=None):
    """runs.ensure that trains nothing: it checks the seeds it is asked for are claimed, notes
    them, and calls ``during(seeds)`` as if the training took that long."""
    def ensure(specs, log, progress):
        (spec,) = specs
        for s in spec.seeds:  # held while it trains: no other process can take it
            assert recording._claim(evidence.path("norm", "post", s), wait=False) is None
        trained.append(spec.seeds)
        if during:
            during(spec.seeds)
        return [[{"val_ppl": 60.0 + s, "train_ppl": 12.0, "val_ppl_at_length": {}, "trace": None,
                  "curve": {"step": [1000], "train_ppl": [12.0], "val_ppl": [60.0 + s], "loss": [4.0]},
                  "first_losses": [5.5] * FIRST_LOSSES, "wall_s": 90.0, "tokens_per_s": 1000} for s in spec.seeds]]
    return ensure


@pytest.fixture
def claims_apart(tmp_path, monkeypatch):
    """Records and claims in tmp_path; the norm family's first three seeds."""
    monkeypatch.setattr(store, "EVIDENCE", tmp_path / "evidence")
    monkeypatch.setattr(recording, "cache_dir", lambda: tmp_path / "cache")
    return evidence.family_scale("norm").seeds[:3]


@pytest.mark.fast
def test_a_record_another_process_holds_is_passed_over_and_not_trained_twice(claims_apart, monkeypatch):
    """A record another process is training is passed over, and at the end of the row found
    recorded by it: trained once in all."""
    from experiments import runs
    first, second, _ = claims_apart
    other, trained, said = _OtherProcess(evidence.path("norm", "post", first)), [], []

    def during(seeds):  # meanwhile the other process records `first` and lets go
        if seeds == (second,):
            other.release()
            assert recording.run("norm", [first], ["post"], log=lambda *_: None) == [
                evidence.path("norm", "post", first)]
    monkeypatch.setattr(runs, "ensure", _fake_ensure(trained, during))
    assert recording.run("norm", [first, second], ["post"], log=said.append) == [evidence.path("norm", "post", second)]
    assert trained == [(second,), (first,)]  # `first` by the other process, once
    assert f"  post seeds [{first}]: another process is recording them; back to them at the end of this row" in said


@pytest.mark.fast
def test_a_record_still_held_at_the_end_is_waited_for_then_trained_if_missing(claims_apart, monkeypatch):
    from experiments import runs
    first, *_ = claims_apart
    other, trained = _OtherProcess(evidence.path("norm", "post", first)), []
    monkeypatch.setattr(runs, "ensure", _fake_ensure(trained))

    def log(line):  # the other process lets go 0.5 s into the wait, its record unwritten
        if "waiting for the process recording them" in line:
            threading.Timer(0.5, other.release).start()
    assert recording.run("norm", [first], ["post"], log=log) == [evidence.path("norm", "post", first)]
    assert trained == [(first,)]


@pytest.mark.fast
def test_pending_comes_back_to_what_another_process_held_after_every_other_row(claims_apart, monkeypatch):
    """`pending --record` with a second worker: a row another process holds is come back to
    after the rows behind it, not waited for."""
    from experiments import runs
    first, second, _ = claims_apart
    other, trained = _OtherProcess(evidence.path("norm", "post", first)), []
    monkeypatch.setattr(recording, "ranked_rows", lambda: [((), 0.0, None, "norm", "", "post", (first,)),
                                                           ((), 0.0, None, "norm", "", "post", (second,))])
    monkeypatch.setattr(runs, "ensure", _fake_ensure(trained, lambda seeds: seeds == (second,) and other.release()))
    written = recording.record_pending("cpu", budget_s=1e6, stack=False, log=lambda *_: None)
    assert trained == [(second,), (first,)]
    assert written == [evidence.path("norm", "post", second), evidence.path("norm", "post", first)]


@pytest.mark.fast
def test_record_pending_fills_the_budget_from_measured_step_rates(monkeypatch):
    """A group that would overrun, predicted from the step rate measured on the groups before it,
    is passed over for a later one that fits (the old rule stopped at the first large
    group with 89 s of 150 left)."""
    clock = [0.0]
    monkeypatch.setattr(recording.time, "perf_counter", lambda: clock[0])
    groups = [("norm", "", "pre", (1, 2)), ("norm", "", "post", (1, 2)), ("ladder", "", "mean", (1,)),
              ("norm", "", "post+warmup", (1, 2)), ("ladder", "", "+mlp", (1,))]
    steps = {"pre": 1000, "post": 1000, "mean": 3000, "post+warmup": 1000, "+mlp": 300}
    rate = {"norm": 0.1, "ladder": 0.05}  # seconds per step, as this fake machine trains
    monkeypatch.setattr(recording, "ranked_rows", lambda: [((), 0.0, None, *g) for g in groups])
    monkeypatch.setattr(recording, "steps_of", lambda fam, point, arm: steps[arm])
    trained, said = [], []

    def run(fam, seeds, arms, device, log, point, stack, held):
        trained.append(arms[0])
        clock[0] += rate[fam] * steps[arms[0]]
        return []
    monkeypatch.setattr(recording, "run", run)
    recording.record_pending("cuda", budget_s=320, stack=True, log=said.append)
    # 100 + 100 s; ladder/mean, predicted at norm's rate (300 s), does not fit the 120 s left;
    # norm/post+warmup (100 s) does; then ladder/+mlp at the slowest rate seen (30 s > 20 s left) not
    assert trained == ["pre", "post", "post+warmup"]
    assert said[-1].startswith("budget: 20 s left, 2 group(s) not started (predicted from the step rates measured "
                               "here): ladder/-/mean seeds [1] (~300 s); ladder/-/+mlp seeds [1] (~30 s)")


@pytest.mark.fast
def test_record_pending_trains_in_the_order_pending_prints():
    """`pending` prints most claims decided per CPU-hour first, a look's rows together; `--record`
    trains in that order, and over the same rows."""
    ranked = evidence.ranked_rows()
    per_look = {}
    for claims, hours, *_ in ranked:
        per_look[claims] = per_look.get(claims, 0.0) + hours
    keys = [-(len(c) / per_look[c]) if c and per_look[c] else 0.0 for c, *_ in ranked]
    assert keys == sorted(keys)
    assert sorted(map(repr, (r[2:] for r in ranked))) == sorted(map(repr, evidence.pending_rows()))


@pytest.mark.fast
def test_recording_a_grid_trains_each_point_on_its_own_arms_and_seeds(monkeypatch):
    """A second look (MoreSeeds) shares the stated point's folder but trains only its rule's arms."""
    calls = []
    monkeypatch.setattr(recording, "run", lambda fam, seeds, arms, **kw: calls.append((kw["point"], arms, seeds)) or [])
    recording.record_grid("NORM-05")
    more = [c for c in calls if c[0] == "norm-full@stated" and len(c[2]) > 3]
    assert more == [("norm-full@stated", ["pre", "post", "post+warmup"], list(seeds(*range(3, 10))))]
    assert ("norm-full@stated", ["pre", "pre+warmup", "post", "post+warmup"], list(seeds(0, 1, 2))) in calls
