"""The committed full-scale evidence (fixtures/evidence/): well-formed, made with the scales'
current configurations, and reproduced by the current code in its first steps.

These test our own records, not the document: no claim marker. The claims' full-scale tests
read the records through ``claims.scales.Scale.runs`` when there is no CUDA device.
"""
import json
from dataclasses import replace

import numpy as np
import pytest

from claims import evidence
from claims.scales import Scale, Runs
from experiments.train import FIRST_LOSSES, TrainConfig

RECORDS = sorted(evidence.EVIDENCE.glob("*/*.json"))
IDS = [str(p.relative_to(evidence.EVIDENCE)) for p in RECORDS]
FIELDS = {"val_ppl", "train_ppl", "curve", "trace", "val_ppl_at_length"}


def _records():
    if not RECORDS:
        pytest.skip("no full-scale evidence committed yet: `python -m claims.evidence run --family ladder`")
    return RECORDS


@pytest.mark.fast
@pytest.mark.parametrize("path", RECORDS or [None], ids=IDS or ["none"])
def test_every_evidence_record_is_whole_and_matches_its_scale(path):
    _records()
    rec = json.loads(path.read_text())
    assert path == evidence.path(rec["family"], rec["arm"], rec["seed"]), "a record lives at the path its fields name"
    scale = evidence.scale_of(rec["family"])
    assert rec["arm"] in scale.arms and rec["scale"] == scale.name
    assert rec["config"] == evidence.config_of(scale.spec(rec["arm"], (rec["seed"],))), (
        f"{path.name} was recorded with another configuration than {scale.name}'s: delete it and rerun "
        f"`python -m claims.evidence run --family {rec['family']}`")
    assert FIELDS <= set(rec["result"]) and len(rec["first_losses"]) == FIRST_LOSSES
    steps = scale.trains.get(rec["arm"], scale.train).steps
    assert rec["result"]["curve"]["step"][-1] == steps  # the whole run, not an interrupted one
    assert {"device", "device_name", "torch", "commit", "date", "wall_s"} <= set(rec["provenance"])


# ---- replay: the committed numbers come from this code and this configuration ----------------

# The steps retrained per record and their tolerance: claims/evidence.py (REPLAY_*).
@pytest.mark.slow
@pytest.mark.parametrize("path", RECORDS or [None], ids=IDS or ["none"])
def test_the_first_steps_of_every_evidence_run_replay(path, shakespeare_tokens):
    _records()
    rec = json.loads(path.read_text())
    if not rec["provenance"]["device"].startswith("cpu"):
        pytest.skip(f"{path.name} was recorded on {rec['provenance']['device']}: a CPU cannot replay its rounding")
    moved = evidence.replay_movement(rec, shakespeare_tokens)
    if moved > evidence.REPLAY_RTOL:
        pytest.fail(f"{path.relative_to(evidence.ROOT)} is stale: its first {evidence.REPLAY_STEPS} training losses "
                    f"moved by {moved:.1e} (relative; tolerance {evidence.REPLAY_RTOL:.0e}) under the current code; "
                    f"delete it and rerun `python -m claims.evidence run --family {rec['family']}`", pytrace=False)


# ---- the path from config to record to judge, at a smoke scale -------------------------------

@pytest.mark.slow
def test_a_recorded_run_has_every_field_the_full_scale_tests_read(tmp_path, monkeypatch, shakespeare_tokens):
    """Config -> training -> record -> Runs, on a few CPU steps: a full-scale test can then
    fail on its numbers only, never on a missing field."""
    from claims import scales
    smoke = Scale("smoke-full", {k: replace(c, d_model=16, block_size=16, n_positions=32)
                                 for k, c in scales.POS_FULL.arms.items()},
                  TrainConfig(steps=FIRST_LOSSES, batch_size=2, lr=1e-3, trace_every=5, attention_stats=True,
                              eval_every=10, eval_windows=4, eval_lengths=(16, 32)),
                  seeds=(0,), ci=False)
    monkeypatch.setattr(scales, "SMOKE_FULL", smoke, raising=False)
    monkeypatch.setitem(evidence.FAMILIES, "smoke", "SMOKE_FULL")
    monkeypatch.setattr(evidence, "EVIDENCE", tmp_path)
    written = evidence.run("smoke", [0], ["none", "rope"], device="cpu", log=lambda *_: None)
    assert [p.name for p in written] == ["none-seed0.json", "rope-seed0.json"]
    runs = Runs(smoke, smoke._recorded, smoke._recorded_seeds())
    assert runs.seeds == (0,)
    for arm in ("none", "rope"):
        assert np.isfinite(runs.val(arm)).all() and np.isfinite(runs.train(arm)).all()
        assert np.isfinite([runs.at_length(arm, L) for L in (16, 32)]).all()
        assert runs.run(arm, 0).trace["attention"] and runs.run(arm, 0).curve["step"][-1] == FIRST_LOSSES
    assert runs.evidence and all(e.count(",") >= 1 for e in runs.evidence)
    with pytest.raises(pytest.skip.Exception, match="no full-scale evidence for smoke-full/learned seed 0"):
        runs.val("learned")
