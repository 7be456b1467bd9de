"""experiments/train.py's ``train`` record, field by field, on a run that learns.

tests/test_experiments_units.py checks ``train`` at lr 0, where every model stays at its
initialisation: there an evaluation at the wrong step, a warmup or a weight decay not passed
on, or attention statistics of the wrong model read the same. Here the model moves (AdamW
with a warmup, betas and weight decay of its own), and each number of the record is
recomputed from a run rebuilt from the literal settings: the same seed, batches and
optimizer, copies of the model at the steps that matter, scored with torch's own
cross-entropy. One model runs on PyTorch's plain path, so the rebuilt run's losses are the
same floats and the record's float64 means can be held to 1e-13 (a float32 sum is ~1e-7 off).
What needs a stack (model(m) picks model m's copy) runs two models at lr 0. What a CPU run
cannot show by its numbers (the device every piece is handed, the clock) is watched
directly. Last, the few lines of the Winograd task, the Polish lab's switch and its excerpt
cutter that no other fast test pins.
"""
import ast
import copy
import math
import random
from dataclasses import asdict, replace
from itertools import product
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from experiments import train as train_mod
from experiments.polish_text import EXCERPT_CHARS, FOOTER, POLISH_LETTERS, excerpts, poem
from experiments.polish_lab import LabConfig, with_positions
from experiments.train import FIRST_LOSSES, TrainConfig, _start, fit, replay, token_batches, train
from experiments.winograd import ADJECTIVES, ANIMALS, PLACES, leaky_task
from model.attention_maps import attention_summary
from model.gpt import GPT
from model.stack import Stack


SEED = 3
# the tiny GPT (7 symbols, windows of 4), its tokens and the hand-made windows scored with torch's
# own cross-entropy: the same helpers as the other experiments/ unit tests
from test_experiments_units import TINY, _hand_windows, _tokens  # noqa: E402,F401


@torch.no_grad()
def _ppl(model, tokens, L, n=0):
    """exp(mean cross-entropy) over the hand-made windows, in eval mode."""
    model.eval()
    x, y = _hand_windows(tokens, L, n)
    return math.exp(F.cross_entropy(model(x).flatten(0, 1).double(), y.flatten()).item())


# ---- train: every field of the record of a run that learns ---------------------------------------

# 22 steps: past FIRST_LOSSES; checkpoints every 7 and the last step (its interval only 1 long);
# a trace every 5 (the last 2 steps untraced); 20 held-out windows, more than the 16 the
# attention probe reads
STEPS, B, LR, WARMUP, WD, BETAS = 22, 3, 2e-2, 5, 0.3, (0.8, 0.95)
CHECKPOINTS, TRACED = [7, 14, 21, 22], [5, 10, 15, 20]
TR, VA = _tokens(90, seed=11), _tokens(81, seed=12)


@pytest.fixture(scope="module")
def run():
    """train's record, and the same run rebuilt by hand: its per-step losses (float64 of the
    model's float32 ones) and copies of the model at step 0 and at every step scored."""
    cfg = TrainConfig(steps=STEPS, batch_size=B, lr=LR, warmup=WARMUP, weight_decay=WD, betas=BETAS,
                      eval_every=7, eval_lengths=(8, 4, 2), attention_stats=True, trace_every=5,
                      log_every=6)
    logs, progress = [], []
    # int32 token arrays (as a tokenizer may store them): train must make them indices itself
    (rec,) = train(TINY, cfg, TR.numpy().astype(np.int32), VA.numpy().astype(np.int32), seeds=(SEED,),
                   log=logs.append, progress=progress.append)

    stack = Stack(TINY, (SEED,))
    opt = torch.optim.AdamW(stack.parameters(), lr=123.0, betas=BETAS, weight_decay=WD)  # the warmup sets it
    losses, snaps = [], {0: copy.deepcopy(stack.model(0))}

    def keep(step, loss):
        losses.append(loss.double().item())
        if step in CHECKPOINTS + TRACED:
            snaps[step] = copy.deepcopy(stack.model(0))

    fit(stack, opt, token_batches(TR, (SEED,), B, 4, "cpu"), STEPS, lr=lambda s: LR * min(1.0, s / WARMUP),
        hooks=(keep,))
    return SimpleNamespace(rec=rec, logs=logs, progress=progress, losses=np.array(losses), snaps=snaps, cfg=cfg)


@pytest.mark.fast
def test_the_curve_scores_both_splits_at_every_eval_every_and_the_last_step(run):
    """At steps 7, 14, 21 and 22 (and only there): val perplexity on every held-out window and
    train perplexity on as many training windows, of the model as it stood at that step; the
    loss is the mean of the steps since the previous point (1 step for the last), summed in
    float64. The final val_ppl / train_ppl are the curve's last point."""
    c = run.rec["curve"]
    assert set(c) == {"step", "loss", "train_ppl", "val_ppl"} and c["step"] == CHECKPOINTS
    n_val = (len(VA) - 1) // 4
    assert n_val == 20
    val = [_ppl(run.snaps[s], VA, 4) for s in CHECKPOINTS]
    assert c["val_ppl"] == pytest.approx(val, rel=1e-6)
    assert c["train_ppl"] == pytest.approx([_ppl(run.snaps[s], TR, 4, n=n_val) for s in CHECKPOINTS], rel=1e-6)
    assert len(set(c["val_ppl"])) == 4  # the model moved: an evaluation at the wrong step would show
    bounds = [0] + CHECKPOINTS
    means = [np.mean(run.losses[a:b]) for a, b in zip(bounds, bounds[1:])]
    assert c["loss"] == pytest.approx(means, rel=1e-13, abs=0)  # a float32 sum would be ~1e-7 off
    assert run.rec["val_ppl"] == c["val_ppl"][-1] and run.rec["train_ppl"] == c["train_ppl"][-1]


@pytest.mark.fast
def test_the_trace_averages_each_interval_and_reads_the_attention_as_it_was(run):
    """Trace points at 0 (loss None, attention at initialisation), 5, 10, 15, 20: the mean loss
    of the 5 steps before, in float64, and layer 1's statistics of the model at that step on
    the first 16 held-out windows."""
    t = run.rec["trace"]
    assert set(t) == {"step", "loss", "attention"} and t["step"] == [0] + TRACED
    assert t["loss"][0] is None
    assert t["loss"][1:] == pytest.approx([np.mean(run.losses[s - 5:s]) for s in TRACED], rel=1e-13, abs=0)
    probe = _hand_windows(VA, 4)[0][:16]
    assert len(t["attention"]) == 5
    for got, s in zip(t["attention"], [0] + TRACED):
        assert got == pytest.approx(attention_summary(run.snaps[s], probe), rel=1e-6), s
    assert set(t["attention"][0]) == {"score_std", "entropy", "saturated"}
    assert t["attention"][0] != t["attention"][-1]


@pytest.mark.fast
def test_the_record_keeps_the_first_losses_scores_other_lengths_and_logs_every_log_every(run):
    """first_losses: the first FIRST_LOSSES (20) per-step losses, not the 22; the held-out
    split in windows of 8, 4 (the curve's final value) and 2, of the final model; log lines at
    steps 6, 12 and 18, the step right-aligned in 6, the loss to 4 decimals; progress at every
    step; and the run's settings."""
    rec, final = run.rec, run.snaps[STEPS]
    assert FIRST_LOSSES == 20 and run.progress == list(range(1, STEPS + 1))
    assert rec["first_losses"] == pytest.approx(run.losses[:20].tolist(), rel=1e-13, abs=0)
    at = rec["val_ppl_at_length"]
    assert list(at) == ["8", "4", "2"] and at["4"] == rec["curve"]["val_ppl"][-1]
    assert at["8"] == pytest.approx(_ppl(final, VA, 8), rel=1e-6)
    assert at["2"] == pytest.approx(_ppl(final, VA, 2), rel=1e-6)
    assert (rec["seed"], rec["stacked"], rec["device"]) == (SEED, 1, "cpu")
    assert rec["model"] == asdict(TINY) and rec["train"] == asdict(run.cfg)
    assert rec["params"] == sum(p.numel() for p in final.parameters())
    assert len(run.logs) == 3
    for line, step in zip(run.logs, (6, 12, 18)):
        head, _, tail = line.partition("  loss ")
        assert head == "step " + str(step).rjust(6)
        (logged,) = ast.literal_eval(tail)
        assert logged == round(logged, 4)  # no more than 4 decimals (none of these ends in a 0)
        assert logged == pytest.approx(round(run.losses[step - 1], 4), rel=0, abs=1e-12)


# ---- train and replay: what the numbers of a CPU run cannot show ---------------------------------

class _Moved(torch.Tensor):
    """A window tensor that notes where it is moved to (the list is set by the test)."""
    moves: list = []

    def to(self, *args, **kwargs):
        _Moved.moves.append(args[0] if args else kwargs.get("device"))
        return self.as_subclass(torch.Tensor).to(*args, **kwargs)


@pytest.mark.fast
def test_a_stacked_run_hands_the_device_to_every_piece_and_reads_each_models_attention(monkeypatch):
    """On one CPU, "cpu:0" and a dropped device (None: the default) compute the same numbers,
    so the pieces are watched: the models, the batches and every evaluation window are put on
    the device asked for; only lengths other than the training one are cut again (n=0: all).
    The clock is fit's: wall_s and tokens_per_s (M x steps x batch x window per second) come
    from its two readings. At lr 0 the two stacked models stay at their initialisation, so
    each one's attention statistics at every trace point, and its first losses, are those of
    its seed's model."""
    seen = {"stack": [], "batches": [], "windows": []}
    monkeypatch.setattr(_Moved, "moves", [])
    real_stack, real_batches, real_windows = train_mod.Stack, train_mod.token_batches, train_mod.windows

    def stack(cfg, seeds, **kw):
        seen["stack"].append(kw.get("device"))
        return real_stack(cfg, seeds, **kw)

    def batches(tokens, seeds, batch_size, T, device, steps):
        seen["batches"].append((device, steps))
        return real_batches(tokens, seeds, batch_size, T, device, steps)

    def windows(tokens, block, n):
        seen["windows"].append((len(tokens), block, n))
        return tuple(t.as_subclass(_Moved) for t in real_windows(tokens, block, n))

    monkeypatch.setattr(train_mod, "Stack", stack)
    monkeypatch.setattr(train_mod, "token_batches", batches)
    monkeypatch.setattr(train_mod, "windows", windows)
    clock = iter([50.0, 50.4321])
    monkeypatch.setattr(train_mod, "time", SimpleNamespace(perf_counter=lambda: next(clock)))
    tr = _tokens(40, seed=1)
    cfg = TrainConfig(steps=2, batch_size=2, lr=0.0, eval_lengths=(4, 2), attention_stats=True, trace_every=1)
    recs = train(TINY, cfg, tr.numpy(), VA.numpy(), seeds=(0, 1), device="cpu:0", log=None)
    here = torch.device("cpu:0")
    assert seen["stack"] == [here] and seen["batches"] == [(here, 2)]  # every step's starts drawn up front
    assert seen["windows"] == [(81, 4, 0), (40, 4, 20), (81, 2, 0)]  # val, as many train (9 fit), length 2
    assert _Moved.moves == [here] * 6
    probe = _hand_windows(VA, 4)[0][:16]
    batch = real_batches(tr, (0, 1), 2, 4, "cpu")
    xy = [batch(step) for step in (1, 2)]
    for m, (seed, rec) in enumerate(zip((0, 1), recs)):
        assert (rec["seed"], rec["stacked"], rec["device"]) == (seed, 2, "cpu:0")
        assert rec["wall_s"] == 0.43 and rec["tokens_per_s"] == round(2 * 2 * 2 * 4 / 0.4321)  # 74
        torch.manual_seed(seed)
        init = GPT(TINY)
        assert rec["trace"]["attention"] == [pytest.approx(attention_summary(init, probe), rel=1e-6)] * 3
        with torch.no_grad():  # each model's losses on its own batches, not model 0's
            losses = [F.cross_entropy(init(x[m]).flatten(0, 1), y[m].flatten()).item() for x, y in xy]
        assert rec["first_losses"] == pytest.approx(losses, rel=1e-5)
    assert recs[0]["trace"]["attention"][0] != recs[1]["trace"]["attention"][0]

    seen["stack"].clear(), seen["batches"].clear()
    clock = iter([0.0, 1.0])
    replay(TINY, cfg, tr.numpy(), seeds=(0, 1), steps=1, device="cpu:0")
    assert seen["stack"] == [here] and [(torch.device(d), n) for d, n in seen["batches"]] == [(here, 1)]


@pytest.mark.slow  # seconds, not milliseconds: it runs with --runslow
def test_a_run_evaluated_more_often_is_the_same_run_bit_for_bit():
    """What lets a grid point that adds a validation curve stand for its family's own run
    (suite/evidence/families.py same_run): evaluation draws no random numbers and leaves the weights
    alone, so the run scored every 5 steps ends on the same floats as the run scored at its
    end, dropout on (its mask comes from the global generator, which an evaluation must not
    touch). Only the last curve point's loss is summed in another order (1e-13)."""
    from suite.evidence.families import evaluated_at_end
    cfg = TrainConfig(steps=STEPS, batch_size=B, lr=LR, warmup=WARMUP, weight_decay=WD, trace_every=5)
    tiny = replace(TINY, dropout=0.1)
    (once,) = train(tiny, cfg, TR, VA, seeds=(SEED,))
    (often,) = train(tiny, replace(cfg, eval_every=5), TR, VA, seeds=(SEED,))
    assert often["curve"]["step"] == [5, 10, 15, 20, 22] and once["curve"]["step"] == [22]
    assert often["first_losses"] == once["first_losses"] and often["trace"] == once["trace"]
    assert (often["val_ppl"], often["train_ppl"]) == (once["val_ppl"], once["train_ppl"])
    cut = evaluated_at_end(often)["curve"]
    assert {k: cut[k] for k in ("step", "train_ppl", "val_ppl")} == {k: once["curve"][k] for k in ("step", "train_ppl", "val_ppl")}
    assert cut["loss"] == pytest.approx(once["curve"]["loss"], rel=1e-13, abs=0)
    (other,) = train(tiny, replace(cfg, eval_every=5), TR, VA, seeds=(SEED + 1,))
    assert other["val_ppl"] != often["val_ppl"]  # the check can see a different run
    # seeds side by side (a lent GPU's way, `--stack`): the same again, model by model
    once2, often2 = (train(tiny, c, TR, VA, seeds=(SEED, SEED + 1)) for c in (cfg, replace(cfg, eval_every=5)))
    for a, b in zip(once2, often2):
        assert (a["first_losses"], a["trace"], a["val_ppl"], a["train_ppl"]) == (
            b["first_losses"], b["trace"], b["val_ppl"], b["train_ppl"])


@pytest.mark.slow  # seconds, not milliseconds: it runs with --runslow
def test_train_reads_the_losses_back_only_where_it_keeps_a_value(monkeypatch):
    """No host sync per step: the losses are summed on the device, and read back at the
    first FIRST_LOSSES steps, a trace, a log line and a checkpoint only. Counted as the host reads
    (``tolist``, ``item``, ``cpu``) of a 1-D float64 tensor: the losses' dtype, not the model's."""
    reads = []

    def counting(name):
        real = getattr(torch.Tensor, name)

        def read(t, *a, **k):
            if t.dtype == torch.float64 and t.dim() == 1:
                reads.append(name)
            return real(t, *a, **k)
        return read

    for name in ("tolist", "item", "cpu"):
        monkeypatch.setattr(torch.Tensor, name, counting(name))
    steps = FIRST_LOSSES + 30  # then 30 steps: one trace at 40, one log line at 45, checkpoints at 25 and 50
    cfg = TrainConfig(steps=steps, batch_size=B, lr=LR, eval_every=25, trace_every=40, log_every=45)
    train(TINY, cfg, TR, VA, seeds=(SEED, SEED + 1), log=lambda *_: None)
    # per checkpoint: the summed loss, and the two splits' perplexities
    assert reads == ["tolist"] * (FIRST_LOSSES + 1 + 1 + 2 * 3)


@pytest.mark.fast
def test_train_and_replay_read_any_integer_token_array():
    """int32 ids (torch's cross-entropy refuses them as targets) train as the int64 ones do;
    and a trace without attention statistics carries no attention entry."""
    tr, va = _tokens(40, seed=1), _tokens(25, seed=2)
    cfg = TrainConfig(steps=2, batch_size=2, lr=1e-2, trace_every=1)
    wide = replay(TINY, cfg, tr.numpy(), seeds=(1,), steps=2)
    assert replay(TINY, cfg, tr.numpy().astype(np.int32), seeds=(1,), steps=2) == wide
    (rec,) = train(TINY, cfg, tr.numpy().astype(np.int32), va.numpy().astype(np.int32), seeds=(1,), log=None)
    assert [rec["first_losses"]] == wide
    assert set(rec["trace"]) == {"step", "loss"} and rec["trace"]["step"] == [0, 1, 2]


@pytest.mark.fast
def test_fit_flushes_denormal_floats_while_it_trains_and_only_then():
    """Inside fit a denormal float reads as zero (a saturated softmax is full of them, and x86
    computes them slowly); before and after, the thread computes with them as usual."""
    if not torch.set_flush_denormal(False):
        pytest.skip("this CPU cannot flush denormals; fit trains with them")
    tiny = torch.tensor([1e-39])  # below float32's smallest normal, 1.18e-38
    seen = []
    stack = Stack(TINY, (SEED,))
    fit(stack, torch.optim.AdamW(stack.parameters()), token_batches(TR, (SEED,), B, 4, "cpu"), 2,
        hooks=(lambda step, loss: seen.append((tiny * 1).item()),))
    assert seen == [0.0, 0.0]
    assert (tiny * 1).item() == pytest.approx(1e-39)


@pytest.mark.fast
def test_the_denormal_setting_is_restored_as_it_was_nested_or_already_on():
    if not torch.set_flush_denormal(False):
        pytest.skip("this CPU cannot flush denormals")
    try:
        with train_mod.flushed_denormals():
            with train_mod.flushed_denormals():
                pass
            assert train_mod.flushing_denormals()  # the inner block left the outer one's setting
        assert not train_mod.flushing_denormals()
        torch.set_flush_denormal(True)
        with train_mod.flushed_denormals():
            pass
        assert train_mod.flushing_denormals()
    finally:
        torch.set_flush_denormal(False)


@pytest.mark.fast
def test_start_builds_the_models_their_adamw_and_the_warmup_from_the_config():
    """The stack of the seeds on the device asked for ("meta": not the default), AdamW with the
    config's rate, betas and weight decay over every weight, and the schedule fit sets before
    step s (1, 2, ...): lr * min(1, s / warmup); without a warmup none (the rate is left alone)."""
    cfg = TrainConfig(steps=9, batch_size=1, lr=0.03, warmup=4, weight_decay=0.2, betas=(0.7, 0.9))
    for seeds in ((3,), (3, 5)):
        stack, opt, schedule = _start(TINY, cfg, seeds, torch.device("meta"))
        assert stack.seeds == seeds and len(stack) == len(seeds)
        assert all(p.device.type == "meta" for p in stack.parameters())
        assert isinstance(opt, torch.optim.AdamW) and len(opt.param_groups) == 1
        group = opt.param_groups[0]
        assert (group["lr"], group["betas"], group["weight_decay"]) == (0.03, (0.7, 0.9), 0.2)
        assert {id(p) for p in group["params"]} == {id(p) for p in stack.parameters()}
        assert [schedule(s) for s in range(1, 7)] == pytest.approx([0.0075, 0.015, 0.0225, 0.03, 0.03, 0.03])
    assert _start(TINY, TrainConfig(steps=9, batch_size=1, lr=0.03), (3,), torch.device("meta"))[2] is None


# ---- winograd.leaky_task, polish_lab.with_positions, polish.excerpts --------------------------------

@pytest.mark.fast
def test_the_leaky_task_holds_out_whole_animal_place_pairs_drawn_by_its_seed():
    """The 64 (animal, place) pairs with all 8 adjectives each, split into 49 to train on and
    15 held out, the held-out ones in sorted order; the draw is random.Random(seed)'s, seed 0
    by default, the same at every call."""
    task = leaky_task()
    assert task.name == "leaky"
    pairs = list(product(ANIMALS, PLACES))
    held = sorted(random.Random(0).sample(pairs, 15))
    assert [(e.x, e.y) for e in task.held_out[::8]] == held
    assert [e.adj for e in task.held_out[:8]] == list(ADJECTIVES)
    assert {(e.x, e.y) for e in task.train} == set(pairs) - set(held)
    assert len(task.train) == 49 * 8 and len(set(task.train)) == 49 * 8
    assert leaky_task(seed=0) == task and leaky_task() == task
    other = leaky_task(held_pairs=4, seed=1)
    assert [(e.x, e.y) for e in other.held_out[::8]] == sorted(random.Random(1).sample(pairs, 4))


@pytest.mark.fast
def test_with_positions_switches_the_learned_table_off_and_back_on():
    """positions is the flag asked for (not merely a falsy one), and the model follows it."""
    off = with_positions(LabConfig(), False)
    on = with_positions(off, True)
    assert off.positions is False and on.positions is True and on == LabConfig()
    assert (off.model().positions, on.model().positions) == ("none", "learned")


@pytest.mark.fast
def test_excerpts_fit_exactly_when_the_poem_is_n_excerpts_long():
    """A poem of exactly 2 x 6,775 characters holds two excerpts, the second ending at its last
    character; one character less and it does not."""
    body = (POLISH_LETTERS * 500)[:2 * EXCERPT_CHARS - len("księga pierwsza ")]
    text = f"Księga pierwsza\n{body}{FOOTER}Licencja\n"
    p = poem(text)
    assert len(p) == 2 * EXCERPT_CHARS
    exs = excerpts(2, text)
    assert [ex.offset for ex in exs] == [0, EXCERPT_CHARS] and exs[1].text == p[EXCERPT_CHARS:]
    with pytest.raises(ValueError, match=f"2 excerpts of 6775 characters do not fit in {2 * EXCERPT_CHARS - 1}"):
        excerpts(2, f"Księga pierwsza\n{body[:-1]}{FOOTER}")
