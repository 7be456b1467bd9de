"""PL "Dlaczego to działa": the size of the tiny GPT, and Pythia's."""
import pytest
import torch

from claimcheck import diverges
from claimcheck.rules import word_band
from experiments.configs import tiny_lab_config
from model import GPT
from model.params import breakdown, count
from suite.reading import reads
from suite.catalogue import MIRROR_400, MIRROR_6400, TINY_LAB

# The per-tensor breakdown of the canonical 4,626-weight model (catalogue C39). Other
# configurations also sum to 4,626, so the breakdown, not the total, pins the architecture.
BREAKDOWN = {
    "token embedding": 544, "position embedding": 256, "W_q, W_k, W_v, W_o (bias-free)": 1024,
    "MLP 16 -> 64 -> 16 with biases": 2128, "two LayerNorms": 64, "final LayerNorm": 32,
    "output layer with bias": 578,
}
GROUPS = {"token embedding": ("tok.",), "position embedding": ("pos.",),
          "W_q, W_k, W_v, W_o (bias-free)": ("blocks.0.mix.",), "MLP 16 -> 64 -> 16 with biases": ("blocks.0.ff.",),
          "two LayerNorms": ("blocks.0.ln_",), "final LayerNorm": ("ln_f.",), "output layer with bias": ("head.",)}


@pytest.mark.fast
@pytest.mark.claim("TINY-19")
def test_the_tiny_gpt_has_4626_weights_in_the_canonical_breakdown(claim_record):
    m = GPT(tiny_lab_config())
    b = breakdown(m)
    got = {g: sum(n for k, n in b.items() if k.startswith(prefixes)) for g, prefixes in GROUPS.items()}
    assert sum(got.values()) == count(m)  # every tensor is in one group
    assert got == BREAKDOWN
    n = claim_record("TINY-19", count(m), expected=4626, tolerance="exact")
    assert n == 4626
    no_pe = claim_record("TINY-19", count(GPT(tiny_lab_config(positions="none"))), expected="4,370 (derived)",
                         tolerance="exact", label="without positional encoding")
    assert no_pe == 4626 - 256


def _neox_params(V, d, L, ff) -> int:
    """A GPT-NeoX (Pythia) model's weights: untied input and output embeddings, and per layer
    q, k, v and the output projection with biases, a two-matrix MLP with biases and two
    LayerNorms; one final LayerNorm."""
    layer = (3 * d * d + 3 * d) + (d * d + d) + (d * ff + ff) + (ff * d + d) + 2 * 2 * d
    return 2 * V * d + L * layer + 2 * d


PYTHIA = {"70M": dict(V=50304, d=512, L=6, ff=2048), "12B": dict(V=50688, d=5120, L=36, ff=20480)}  # config.json


@pytest.mark.fast
@pytest.mark.claim("TINY-20")
def test_pythia_70m_is_about_fifteen_thousand_toys(claim_record):
    """Three numbers: the smallest Pythia "70 mln", the largest "12 mld" (each half a unit of its
    printed digit), and "ok. 15 tys. razy" (the word table's about row, ± 10 %); the lab's printed
    15132x is 70,000,000 / 4,626."""
    assert f"{70_000_000 / 4626:.0f}" == "15132"  # the lab's printed ratio
    tf = pytest.importorskip("transformers", reason="transformers is not installed "
                             "(pip install -e '.[hf]'); the Pythia size comes from its config class")
    cfg = tf.GPTNeoXConfig(  # EleutherAI/pythia-70m's architecture, as published in its config.json
        vocab_size=50304, hidden_size=512, num_hidden_layers=6, num_attention_heads=8,
        intermediate_size=2048, max_position_embeddings=2048, rotary_pct=0.25,
        tie_word_embeddings=False, use_parallel_residual=True)
    with torch.device("meta"):
        n = count(tf.GPTNeoXForCausalLM(cfg))
    assert n == _neox_params(**PYTHIA["70M"])  # the formula is Hugging Face's count, so it serves for 12B
    small = claim_record("TINY-20", n, expected="70 mln", band=(69.5e6, 70.5e6),
                         tolerance="exact: half a unit of '70 mln' [69.5 M, 70.5 M]", label="Pythia-70M parameters")
    big = claim_record("TINY-20", _neox_params(**PYTHIA["12B"]), expected="12 mld", band=(11.5e9, 12.5e9),
                       tolerance="exact: half a unit of '12 mld' [11.5 B, 12.5 B]",
                       label="Pythia-12B parameters (its config.json, by the formula above)")
    kind, band = word_band(15_000, "ok. 15 tys.", "pl")
    ratio = claim_record("TINY-20", n / 4626, expected=15132, band=band,
                         tolerance=f"equivalence: 'ok. 15 tys.' ({kind}, ± 10 %) [{band[0]:,.0f}, {band[1]:,.0f}]",
                         label=f"Pythia-70M ({n:,} parameters) / 4,626")
    assert 69.5e6 <= small <= 70.5e6 and 11.5e9 <= big <= 12.5e9 and band[0] <= ratio <= band[1]


# ---- TINY-10: the hand-written numpy lab against a torch autograd mirror -------------------


import numpy as np  # noqa: E402

from experiments.numpy_gpt import mirror, torch_twin  # noqa: E402
from experiments.polish_lab import batches  # noqa: E402
from suite.lab_rules import MAIN, TEXT, decide, draw_lab, exists, k_of_5, k_of_5_rule, most, per_run
from claimcheck.rules import TOST_LEVEL  # noqa: E402


def _pair(seed):
    return torch_twin(seed, TINY_LAB.config.lr)


def _random_batches(seed, steps):
    """8 random 17-character windows of a random 34-symbol text (no corpus needed)."""
    yield from batches(np.random.default_rng(seed).integers(0, 34, 6000), seed, steps)


def _mirror(seed, windows):
    """Largest relative difference between the two implementations' losses over the run."""
    return mirror(seed, windows, TINY_LAB.config.lr)["worst"]


@pytest.mark.fast
@pytest.mark.claim("TINY-10")
def test_hand_written_gradients_match_autograd_and_finite_differences(claim_record):
    lab, m, _ = _pair(1)
    w = next(_random_batches(1, 1))
    wt = torch.from_numpy(w)
    _, loss = m(wt[:, :-1], wt[:, 1:])
    loss.backward()
    _, ours, cache = lab.forward(w[:, :-1], w[:, 1:])
    grads = lab.backward(cache)
    worst = max(np.abs(grads[k] - p.grad.numpy()).max() for k, p in m.named_parameters())
    claim_record("TINY-10", worst, tolerance="exact: < 1e-12 (float64)", label="max |grad numpy - grad autograd|")
    assert abs(ours - loss.item()) < 1e-12 and worst < 1e-12
    rng, h, rel = np.random.default_rng(0), 1e-6, []
    for k in grads:  # central differences on 12 coordinates of every tensor
        for flat in rng.choice(lab.p[k].size, min(12, lab.p[k].size), replace=False):
            i = np.unravel_index(flat, lab.p[k].shape)
            old = lab.p[k][i]
            lab.p[k][i] = old + h
            up = lab.forward(w[:, :-1], w[:, 1:])[1]
            lab.p[k][i] = old - h
            down = lab.forward(w[:, :-1], w[:, 1:])[1]
            lab.p[k][i] = old
            fd = (up - down) / (2 * h)
            rel.append(abs(fd - grads[k][i]) / (1e-8 + 1e-6 * abs(grads[k][i])))
    # central differences at h = 1e-6: truncation ~h^2, round-off ~eps * loss / h ~ 4e-10,
    # so each error must be below 1e-8 absolute + 1e-6 relative
    claim_record("TINY-10", max(rel), tolerance="exact: <= 1 (error / (1e-8 + 1e-6 |grad|))",
                 label="worst finite-difference error, in units of the tolerance")
    assert max(rel) <= 1


@pytest.mark.fast
@pytest.mark.claim("TINY-10")
def test_numpy_and_torch_give_the_same_losses_for_50_steps(claim_record):
    worst = claim_record("TINY-10", _mirror(1, _random_batches(1, 50)), tolerance="exact: < 1e-9 relative (float64)",
                         label="seed 1, 50 steps on random text: max relative loss difference")
    assert worst < 1e-9


@pytest.mark.fast
@pytest.mark.claim("TINY-10")
def test_stacked_training_equals_single_runs():
    """The curves train many labs at once (experiments.polish_lab); each must follow its own path exactly."""
    from experiments.polish_lab import LabConfig, train_runs
    from experiments.polish_text import Excerpt
    rng = np.random.default_rng(0)
    fake = [Excerpt(i, 0, "".join(rng.choice(list("abc ."), 6775))) for i in range(2)]
    cfg = LabConfig(steps=30, lr=TINY_LAB.config.lr, checkpoints=(30,), dtype="float64")
    rec = train_runs(cfg, [(fake[0], 1), (fake[1], 2)], keep_loss=True)
    for (ex, seed), losses in zip([(fake[0], 1), (fake[1], 2)], rec["loss"]):
        lab, _, _ = _pair(seed)
        alone = [lab.train_step(w) for w in batches(ex.ids("train"), seed, 30)]
        # float64 throughout; vmap batches the same operations, so only summation order differs
        np.testing.assert_allclose(losses, alone, rtol=1e-12)


@pytest.mark.slow
@pytest.mark.scale("full")
@pytest.mark.claim("TINY-10")
@reads(MIRROR_400)
def test_numpy_and_torch_agree_on_five_seeds_for_400_steps(runs_of, claim_record):
    mirror_400 = runs_of(MIRROR_400)
    worst = claim_record("TINY-10", mirror_400["worst"], expected="the same numbers",
                         tolerance="exact: < 1e-9 relative (float64)",
                         label=f"seeds 1-5, 400 steps of the lab on {TEXT}: max relative loss difference")
    assert max(worst) < 1e-9


@pytest.mark.slow
@pytest.mark.scale("full")
@pytest.mark.claim("TINY-10")
@reads(MIRROR_6400)
def test_numpy_and_torch_agree_on_seed_1_for_6400_steps(runs_of, claim_record):
    mirror_6400 = runs_of(MIRROR_6400)
    worst = claim_record("TINY-10", mirror_6400["worst"][0], expected="the same numbers",
                         tolerance="exact: < 1e-9 relative (float64)",
                         label=f"seed 1, 6,400 steps of the lab on {TEXT}: max relative loss difference")
    assert worst < 1e-9


# ---- the curves: TINY-11 ... TINY-18 ----------------------------------------------------------
#
# The lab's numbers belong to its own text. On Pan Tadeusz each "k of 5 starts" is judged as a
# statement about the population of starts: our K of 100 runs against the rate the chapter's k of 5
# names; "a start shows it" is an existence claim (suite/lab_rules.py, docs/reference/statistics.md).



@pytest.mark.fast
@pytest.mark.claim("TINY-15")
def test_the_step_is_chosen_on_validation_and_test_is_read_once(claim_record):
    from experiments.polish_lab import best_val_test
    calls = []
    val = {100: 14.0, 1600: 10.5, 3200: 9.9, 6400: 10.2}
    step, test = best_val_test(val, lambda s: calls.append(s) or 11.0)
    claim_record("TINY-15", {"step": step, "test read at": calls}, expected={"step": 3200, "test read at": [3200]},
                 tolerance="exact", label="step chosen on val (lowest at 3200), steps whose test was read")
    assert step == 3200 and test == 11.0 and calls == [3200]


def _steps(lab, *steps):
    return [list(lab.steps).index(s) for s in steps]


def _lowest_at(va, i):
    """``a < b`` pairs saying that checkpoint i has the run's lowest validation."""
    return [(va[..., i], va[..., c]) for c in range(va.shape[-1]) if c != i]


@pytest.mark.slow
@pytest.mark.scale("full")
@pytest.mark.claim("TINY-11")
@reads(TINY_LAB)
def test_a_start_bottoms_at_3200_and_then_validation_rises_while_training_falls(runs_of, tiny_lab_main, claim_record,
                                                                                claim_figure):
    tiny_lab = runs_of(TINY_LAB)
    tr, va = (tiny_lab.ppl(p) for p in ("train", "val"))  # (excerpt, seed, checkpoint)
    i, j = _steps(tiny_lab, 3200, 6400)

    def shows(lab):  # "start 1" is one of the chapter's five starts (seed labels do not carry over):
        tr, va = (lab.ppl(p) for p in ("train", "val"))  # the claim is that a start shows it
        return per_run(*_lowest_at(va, i), (tr[..., j], tr[..., i]))
    k = exists(claim_record, "TINY-11", shows(tiny_lab), "validation lowest at 3,200 and higher at 6,400 while train falls",
               main=shows(tiny_lab_main))
    claim_record("TINY-11", [round(va[0, 0, i], 2), round(va[0, 0, j], 2), round(tr[0, 0, i], 2),
                             round(tr[0, 0, j], 2)], expected="val 8.86 -> 9.54; train 6.34 -> 5.30",
                 tolerance="reported: another text and RNG",
                 label=f"our seed {tiny_lab.seeds[0]} ({TEXT}): val at 3,200, 6,400; train at 3,200, 6,400")
    claim_figure("TINY-11", "tiny_lab_curves", draw_lab(tiny_lab))
    decide(claim_record, "TINY-11", k)


def stops_falling_while_training_falls(lab):
    """Per run: validation's lowest point comes before the slider's end and ends above it, while
    training at the end is below where it stood at that point ("przestaje spadać": a lasting
    turn, not one checkpoint's rise), and how firmly."""
    tr, va = (lab.ppl(p) for p in ("train", "val"))  # (excerpt, seed, checkpoint)
    best = va[..., :-1].argmin(-1)[..., None]  # (excerpt, seed, 1): the lowest point before the end
    return per_run((np.take_along_axis(va, best, -1)[..., 0], va[..., -1]),
                   (tr[..., -1], np.take_along_axis(tr, best, -1)[..., 0]))


@pytest.mark.slow
@pytest.mark.scale("full")
@pytest.mark.claim("TINY-30")
@reads(TINY_LAB)
def test_the_step_slider_shows_validation_stop_falling_while_training_falls(runs_of, tiny_lab_main, claim_record):
    """"Gdzie walidacja przestaje spadać, choć trening dalej spada?": the question presupposes that
    the slider (100 to 6,400 steps) shows such a step on the start the widget has loaded, so on most
    starts (the word table: one trained model's result). Which step is TINY-11's and TINY-12's."""
    tiny_lab = runs_of(TINY_LAB)
    p = most(claim_record, "TINY-30", stops_falling_while_training_falls(tiny_lab),
             "validation lowest before the slider's end and higher at its end, while training falls past it",
             main=stops_falling_while_training_falls(tiny_lab_main))
    decide(claim_record, "TINY-30", p)


@pytest.mark.slow
@reads(TINY_LAB, fresh=True)
def test_the_lab_runs_match_their_pin(runs_of, pin):
    tiny_lab = runs_of(TINY_LAB)
    vals = {}
    for pe in (True, False):
        for part in ("train", "val", "test"):
            ppl = tiny_lab.ppl(part, pe)  # (excerpt, seed, checkpoint)
            vals[f"{'pe' if pe else 'nope'}_{part}/early"] = ppl[..., :1]
            vals[f"{'pe' if pe else 'nope'}_{part}"] = ppl[..., 1:]
    pin("tiny_lab", vals,
        meaning=f"perplexity of the tiny GPT on Pan Tadeusz, (excerpt, seed {tiny_lab.seeds[0]}-{tiny_lab.seeds[-1]}, "
                "checkpoint 200..6400), "
                "with positions (pe) and without (nope); /early: at the first checkpoint, step 100",
        config={"lab": TINY_LAB.config, "seeds": tiny_lab.seeds, "excerpts": [e.offset for e in tiny_lab.excerpts]})


@pytest.mark.slow
@pytest.mark.scale("full")
@pytest.mark.claim("TINY-12")
@reads(TINY_LAB)
def test_validation_is_lowest_at_3200_on_4_of_5_starts_and_at_6400_on_the_fifth(runs_of, tiny_lab_main, claim_record):
    tiny_lab = runs_of(TINY_LAB)
    va = tiny_lab.ppl("val")
    i, j = _steps(tiny_lab, 3200, 6400)
    lowest = lambda lab, c: per_run(*_lowest_at(lab.ppl("val"), c))  # noqa: E731
    p_3200 = k_of_5(claim_record, "TINY-12", lowest(tiny_lab, i), "validation lowest at 3,200", k=4,
                    main=lowest(tiny_lab_main, i))
    p_6400 = k_of_5(claim_record, "TINY-12", lowest(tiny_lab, j), "validation lowest at 6,400", k=1,
                    main=lowest(tiny_lab_main, j))
    claim_record("TINY-12", tiny_lab.steps[va[0, :5].argmin(-1)].tolist(), expected="3200 on 4 starts; start 2 at 6400",
                 tolerance="reported: seed labels do not carry over", label=f"{MAIN}: step of the lowest validation")
    decide(claim_record, "TINY-12", p_3200, p_6400)


@pytest.mark.slow
@pytest.mark.scale("full")
@pytest.mark.claim("TINY-13")
@reads(TINY_LAB)
def test_the_held_out_gap_grows_at_every_checkpoint_from_1600_on_every_start(runs_of, tiny_lab_main, claim_record):
    tiny_lab = runs_of(TINY_LAB)
    late = np.flatnonzero(tiny_lab.steps >= 1600)

    def grows(lab):
        tr = lab.ppl("train")
        return per_run(*[(lab.ppl(part)[..., c] - tr[..., c], lab.ppl(part)[..., d] - tr[..., d])
                         for part in ("val", "test") for c, d in zip(late, late[1:])])
    p = k_of_5(claim_record, "TINY-13", grows(tiny_lab), "val and test gaps grow at every checkpoint from 1,600", k=5,
               main=grows(tiny_lab_main))
    decide(claim_record, "TINY-13", p)


def tiny14_runs(lab):
    """Per run: test falls from 3,200 to 6,400."""
    return per_run((lab.at("test", 6400), lab.at("test", 3200)))


def tiny16_runs(lab, smoothing="add-k"):
    """Per run: the 3-gram beats the net on test, the net read at its best-validation step."""
    _, net = lab.best_val_test()
    return per_run((lab.gram(3, "test", smoothing), net))


def tiny14_rule(lab, level=TOST_LEVEL):
    return k_of_5_rule(tiny14_runs(lab), k=4, level=level)


def tiny16_rule(lab, smoothing="add-k", level=TOST_LEVEL):
    return k_of_5_rule(tiny16_runs(lab, smoothing), k=5, level=level)


@pytest.mark.slow
@pytest.mark.scale("full")
@pytest.mark.claim("TINY-14")
@diverges("test perplexity falls from 3,200 to 6,400 on fewer than half of our starts, where the chapter's "
          "4 of 5 names most starts (exact binomial test; K of N and the interval in the report)")
@reads(TINY_LAB)
def test_test_perplexity_falls_from_3200_to_6400_on_4_of_5_starts(runs_of, tiny_lab_main, claim_record):
    tiny_lab = runs_of(TINY_LAB)
    p = k_of_5(claim_record, "TINY-14", tiny14_runs(tiny_lab), "test falls 3,200 -> 6,400", k=4,
               main=tiny14_runs(tiny_lab_main))
    decide(claim_record, "TINY-14", p)


@pytest.mark.slow
@pytest.mark.scale("full")
@pytest.mark.claim("TINY-16")
@reads(TINY_LAB)
def test_the_3gram_beats_the_net_on_test_at_its_best_validation_step_on_every_start(runs_of, tiny_lab_main,
                                                                                    claim_record):
    tiny_lab = runs_of(TINY_LAB)
    _, net = tiny_lab.best_val_test()
    tri = tiny_lab.gram(3, "test")
    p = k_of_5(claim_record, "TINY-16", tiny16_runs(tiny_lab), "the 3-gram beats the net on test", k=5,
               main=tiny16_runs(tiny_lab_main))
    claim_record("TINY-16", [round(net[0, :5].min(), 2), round(net[0, :5].max(), 2)], expected=[9.32, 10.17],
                 tolerance="reported: another text", label=f"{MAIN}: net's test at its best-val step, range")
    claim_record("TINY-16", round(tri[0, 0], 2), expected=8.26, tolerance="reported: another text",
                 label=f"main excerpt: 3-gram test (add-k, k = {tiny_lab.grams[3][0]['k']} chosen on validation)")
    decide(claim_record, "TINY-16", p)


@pytest.mark.slow
@pytest.mark.scale("full")
@pytest.mark.claim("TINY-17")
@reads(TINY_LAB)
def test_on_validation_the_nets_best_point_sometimes_beats_the_3gram(runs_of, tiny_lab_main, claim_record):
    tiny_lab = runs_of(TINY_LAB)
    below = lambda lab: per_run((lab.ppl("val").min(-1), lab.gram(3, "val")))  # noqa: E731
    k = exists(claim_record, "TINY-17", below(tiny_lab), "best validation below the 3-gram's", main=below(tiny_lab_main))
    decide(claim_record, "TINY-17", k)


# ---- the diagnosis: each claim's rule at every point of its grid ----------------------------
# suite/diagnosis_grids.py LAB_GRIDS, declared before their results; the points' runs are committed records
# (python -m suite.evidence lab), the stated point the verdict's own runs.

from suite.evidence.lab import point_runs as lab_point_runs  # noqa: E402
from suite.diagnosis import diagnosis_test  # noqa: E402
from suite.diagnosis_grids import LAB_GRIDS  # noqa: E402

test_tiny14_diagnosis = diagnosis_test(LAB_GRIDS["TINY-14"], tiny14_rule, lab_point_runs, "slow", stated=True)
test_tiny16_diagnosis = diagnosis_test(LAB_GRIDS["TINY-16"], tiny16_rule, lab_point_runs, "slow", stated=True)
