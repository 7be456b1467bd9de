"""PL "Dlaczego to działa": the size of the tiny GPT, and Pythia's."""
import pytest
import torch

from model import GPT, tiny_lab_config
from model.params import breakdown, count


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


@pytest.mark.fast
@pytest.mark.claim("TINY-20")
def test_pythia_70m_is_about_fifteen_thousand_toys(claim_record):
    assert f"{70_000_000 / 4626:.0f}" == "15132"  # the lab's printed ratio
    tf = pytest.importorskip("transformers", reason="transformers is not installed "
                             "(pip install -e '.[hf]'); the Pythia size comes from its config class")
    cfg = tf.GPTNeoXConfig(  # EleutherAI/pythia-70m's architecture, as published in its config.json
        vocab_size=50304, hidden_size=512, num_hidden_layers=6, num_attention_heads=8,
        intermediate_size=2048, max_position_embeddings=2048, rotary_pct=0.25,
        tie_word_embeddings=False, use_parallel_residual=True)
    with torch.device("meta"):
        n = count(tf.GPTNeoXForCausalLM(cfg))
    ratio = claim_record("TINY-20", n / 4626, expected=15132, tolerance="≈15 thousand: in (14,000, 16,000)",
                         label=f"Pythia-70M ({n:,} parameters) / 4,626")
    assert 14_000 < ratio < 16_000


# ---- TINY-10: the hand-written numpy lab against a torch autograd mirror -------------------

import numpy as np  # noqa: E402

from model.tinylab import TinyLab, params_from_torch  # noqa: E402

LAB_LR = 1e-2  # the lab does not state its rate; Adam at 1e-2 trains this size in a few hundred steps


def _pair(seed):
    torch.manual_seed(seed)
    m = GPT(tiny_lab_config()).double()  # N(0, 0.02) weights, as the lab's
    return TinyLab(params_from_torch(m), lr=LAB_LR), m, torch.optim.Adam(m.parameters(), lr=LAB_LR)


def _batches(seed, steps):
    """The same windows for both: 8 random 17-character windows of a random 34-symbol text."""
    rng = np.random.default_rng(seed)
    text = rng.integers(0, 34, 6000)
    for _ in range(steps):
        ix = rng.integers(0, len(text) - 17, 8)
        yield text[ix[:, None] + np.arange(17)]


def _mirror(seed, steps):
    """Largest relative difference between the two implementations' losses over the run."""
    lab, m, opt = _pair(seed)
    worst = 0.0
    for w in _batches(seed, steps):
        ours = lab.train_step(w)
        wt = torch.from_numpy(w)
        _, loss = m(wt[:, :-1], wt[:, 1:])
        opt.zero_grad()
        loss.backward()
        opt.step()
        worst = max(worst, abs(ours - loss.item()) / loss.item())
    return worst


@pytest.mark.fast
@pytest.mark.claim("TINY-10")
def test_hand_written_gradients_match_autograd_and_finite_differences(claim_record):
    lab, m, _ = _pair(1)
    w = next(_batches(1, 1))
    wt = torch.from_numpy(w)
    _, loss = m(wt[:, :-1], wt[:, 1:])
    loss.backward()
    _, ours, cache = lab.forward(w[:, :-1], w[:, 1:])
    grads = lab.backward(cache)
    worst = max(np.abs(grads[k] - p.grad.numpy()).max() for k, p in m.named_parameters())
    claim_record("TINY-10", worst, tolerance="< 1e-12 (float64)", label="max |grad numpy - grad autograd|")
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
    claim_record("TINY-10", max(rel), tolerance="<= 1 (error / (1e-8 + 1e-6 |grad|))",
                 label="worst finite-difference error, in units of the tolerance")
    assert max(rel) <= 1


@pytest.mark.fast
@pytest.mark.claim("TINY-10")
def test_numpy_and_torch_give_the_same_losses_for_50_steps(claim_record):
    worst = claim_record("TINY-10", _mirror(1, 50), tolerance="< 1e-9 relative (float64)",
                         label="seed 1, 50 steps: max relative loss difference")
    assert worst < 1e-9


NEEDS_LAB_TEXT = pytest.mark.skip(reason="needs the lab's text (issue 8): on uniform random text the "
                                  "loss sits at ln 34 and last-bit differences between the two "
                                  "implementations grow chaotically past ~100 steps")


@pytest.mark.slow
@pytest.mark.claim("TINY-10")
@NEEDS_LAB_TEXT
def test_numpy_and_torch_agree_on_five_seeds_for_400_steps(claim_record):
    worst = claim_record("TINY-10", [_mirror(s, 400) for s in range(1, 6)], expected="the same numbers",
                         tolerance="< 1e-9 relative (float64)", label="seeds 1-5, 400 steps: max relative loss diff")
    assert max(worst) < 1e-9


@pytest.mark.slow
@pytest.mark.claim("TINY-10")
@NEEDS_LAB_TEXT
def test_numpy_and_torch_agree_on_seed_1_for_6400_steps(claim_record):
    worst = claim_record("TINY-10", _mirror(1, 6400), expected="the same numbers", tolerance="< 1e-9 relative",
                         label="seed 1, 6,400 steps: max relative loss difference")
    assert worst < 1e-9
