"""IT 3.6 Why sqrt(d_k): the variance argument, saturation, and frozen gradients at init."""
import functools
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
import torch

from model import GPT, capture_attention
from experiments.configs import sqrt_dk_config
from model.metrics import effective_tokens, entropy, softmax_trace
from claimcheck import diverges, undecided
from suite.reading import reads
from suite.catalogue import SQRT09_FULL, SQRT1024_CI, SQRT12_FULL, SQRT_CI, SQRT_FULL


WIDTHS = (4, 16, 64, 256, 1024)
# The document's table: d -> (Var(q.k), std) over 20,000 random pairs
TABLE = {4: (3.975, 1.994), 16: (16.071, 4.009), 64: (64.249, 8.016),
         256: (253.065, 15.908), 1024: (1015.562, 31.868)}


@functools.cache
def _scores(d, rows=2000, keys=64):
    """Unscaled scores of one query against 64 keys, q, k ~ N(0, I_d); drawn once per width."""
    g = torch.Generator().manual_seed(d)
    chunks = []
    for _ in range(rows // 250):  # chunks keep the (250, 64, 1024) keys small
        q, k = torch.randn(250, 1, d, generator=g), torch.randn(250, keys, d, generator=g)
        chunks.append((q @ k.transpose(1, 2)).squeeze(1))  # (250, 64)
    return torch.cat(chunks)


def _rows(d, scale=False):
    """Softmax rows, with or without the division, over the same random draws."""
    s = _scores(d)
    return torch.softmax(s / math.sqrt(d) if scale else s, -1)


@pytest.mark.fast
@pytest.mark.claim("SQRT-01")
@pytest.mark.parametrize("d", [1, 2, 3, 4, 5])
def test_variance_of_the_dot_product_is_exactly_d(d, claim_record):
    """Exact moments over every sign vector: Rademacher entries have mean 0 and variance 1."""
    dots = [sum(a * b for a, b in zip(s[:d], s[d:])) for s in itertools.product((-1, 1), repeat=2 * d)]
    n = Fraction(len(dots))
    mean = sum(map(Fraction, dots)) / n
    var = sum((Fraction(x) - mean) ** 2 for x in dots) / n
    claim_record("SQRT-01", {"mean": float(mean), "var": float(var)}, expected={"mean": 0, "var": d},
                 tolerance="exact (Fraction arithmetic)", label=f"d={d}: moments of q.k over every sign vector")
    assert mean == 0 and var == d  # variances of independent products add up


def _var_se(d, n=20_000):
    """The standard error of a sample variance of q.k over n pairs: Var(q.k) = d, and the fourth
    moment of a sum of d products of standard normals is 3d² + 6d, so SE² = (2d² + 6d) / n."""
    return math.sqrt((2 * d * d + 6 * d) / n)


@pytest.mark.fast
@pytest.mark.claim("SQRT-02")
@pytest.mark.parametrize("d", WIDTHS)
def test_measured_variance_is_d_within_sampling_error(d, claim_record):
    """Our own draw of the table: a check of the harness (a draw of 20,000 pairs is a draw; 4 SE
    keeps a true harness from failing by chance), reported beside the document's row."""
    n = 20_000
    rng = np.random.default_rng(d)  # numpy's ziggurat draws 41M normals ~5x faster than torch
    q, k = (rng.standard_normal((n, d), dtype=np.float32) for _ in range(2))
    dots = torch.from_numpy((q.astype(np.float64) * k).sum(1))
    se = _var_se(d, n)
    var = claim_record("SQRT-02", dots.var().item(), expected=TABLE[d][0], tolerance="reported: our own draw of "
                       f"20,000 pairs (a harness check: |var - d| <= 4 SE, {4 * se:.3g})", label=f"d={d}: our draw")
    assert abs(var - d) <= 4 * se


@pytest.mark.fast
@pytest.mark.claim("SQRT-02")
def test_the_documents_table_is_consistent_with_theory(claim_record):
    """Each printed variance is a draw of 20,000 pairs whose exact value is d (SQRT-01): it is
    judged inside d ± 2 SE of its own count (the word table's row for a number measured on n
    items: its own sampling error, never narrower); each std is its row's square root to the
    printed precision (half a unit of the third decimal)."""
    for d, (var, std) in TABLE.items():
        band = (d - 2 * _var_se(d), d + 2 * _var_se(d))
        claim_record("SQRT-02", var, expected=var, band=band,
                     tolerance=f"exact: inside d ± 2 SE of 20,000 pairs [{band[0]:.4g}, {band[1]:.4g}]",
                     label=f"d={d}: the document's variance")
        claim_record("SQRT-02", round(math.sqrt(var), 4), expected=std, tolerance="exact: within 5e-4 (printed to 3 dp)",
                     label=f"d={d}: sqrt of the document's variance")
        assert band[0] <= var <= band[1]
        assert abs(math.sqrt(var) - std) <= 5e-4


@pytest.mark.fast
@pytest.mark.claim("SQRT-03")
def test_linear_layers_are_scale_equivariant_and_softmax_is_not(claim_record):
    lin = torch.nn.Linear(8, 8, bias=False).double()
    x = torch.randn(4, 8, dtype=torch.float64)
    torch.testing.assert_close(lin(2 * x), 2 * lin(x), rtol=0, atol=1e-14)
    biased = torch.nn.Linear(8, 8).double()
    assert not torch.allclose(biased(2 * x), 2 * biased(x))  # the claim needs bias-free layers
    s = torch.randn(100, 64, dtype=torch.float64)
    cs = torch.linspace(0.1, 20, 60, dtype=torch.float64)
    H = torch.stack([entropy(torch.softmax(c * s, -1)) for c in cs])  # (60, 100)
    assert (H[1:] <= H[:-1] + 1e-12).all()  # entropy never rises as the scores sharpen
    soft, hard = effective_tokens(torch.softmax(s, -1)), effective_tokens(torch.softmax(10 * s, -1))
    claim_record("SQRT-03", [soft.mean().item(), hard.mean().item()],
                 tolerance="exact: x10 cuts effective tokens by > 5x", label="effective tokens at x1, x10")
    assert (hard < soft / 5).all()


@pytest.mark.fast
@pytest.mark.claim("SQRT-04")
def test_effective_tokens_is_exp_entropy_from_n_to_one(claim_record):
    for n in (1, 2, 7, 64):
        e_n = claim_record("SQRT-04", effective_tokens(torch.full((n,), 1 / n, dtype=torch.float64)).item(),
                           expected=n, tolerance="exact: rel 1e-12 (float64)", label=f"uniform over {n}")
        assert e_n == pytest.approx(n, rel=1e-12)
    hot = claim_record("SQRT-04", effective_tokens(torch.tensor([0.0, 1.0, 0.0], dtype=torch.float64)).item(),
                       expected=1, tolerance="exact", label="one-hot")
    assert hot == 1.0
    w = torch.softmax(torch.randn(500, 64, dtype=torch.float64), -1)
    e = effective_tokens(w)
    assert ((e >= 1) & (e <= 64)).all()


def _rows_read(reading, d=256, rows=2000, keys=64):
    """Unscaled softmax rows of a fresh head at width d under one reading of how it is drawn:
    "gauss" (q, k ~ N(0, I_d): ``_rows``), "sign" (+-1 entries, SQRT-01's) or "linear"
    (q = x W_q, k = x W_k with PyTorch's Linear init on unit-variance inputs of width d)."""
    if reading == "gauss":
        return _rows(d)
    g = torch.Generator().manual_seed(d)
    if reading == "sign":
        q = torch.randint(0, 2, (rows, 1, d), generator=g).double() * 2 - 1
        k = torch.randint(0, 2, (rows, keys, d), generator=g).double() * 2 - 1
    else:
        x = torch.randn(rows, keys, d, generator=g)
        w_q, w_k = ((torch.rand(d, d, generator=g) * 2 - 1) / math.sqrt(d) for _ in range(2))  # nn.Linear's U(+-1/sqrt(d))
        q, k = x[:, -1:] @ w_q, x @ w_k  # (rows, 1, d), (rows, keys, d)
    return torch.softmax((q @ k.transpose(1, 2)).squeeze(1).float(), -1)  # (rows, keys)


# "esattamente a un token su 64": a row's effective tokens within the word table's exactly band
# (+-1 % of 1), on most rows of a fresh head (the weakest line a generic sentence allows). The
# readings of how the chapter drew its row, the stated one first.
SQRT05_EXACTLY = 0.01
SQRT05_READINGS = (
    ("stated", "q, k ~ N(0, I_d), as the chapter's variance table draws them", "gauss"),
    ("read.entries=sign", "+-1 entries, as the exact moments of SQRT-01", "sign"),
    ("read.head=initialised", "a freshly initialised head: q = x W_q, k = x W_k, PyTorch's Linear init", "linear"),
)


@pytest.mark.fast
@pytest.mark.claim("SQRT-05")
@pytest.mark.diagnosis("SQRT-05")
@diverges("a fresh unscaled head at 256 attends to one token of 64 to within 1 % on about a third of rows "
          "(median 1.07 effective tokens; about one row in four attends to two or more): 'esattamente' does "
          "not hold (counts in the report)")
def test_unscaled_fresh_head_at_256_attends_to_one_token_of_64(claim_record, claim_diagnosis):
    w_raw, w_div = _rows(256), _rows(256, scale=True)
    eff = effective_tokens(w_raw)
    claim_record("SQRT-05", round(eff.median().item(), 3), expected=1, tolerance="reported",
                 label="effective tokens, no division: median of 2000 rows", subject=True)
    claim_record("SQRT-05", round((eff < 1.5).double().mean().item(), 3), tolerance="reported",
                 label="rows whose effective tokens round to 1 (the weaker form: 'one token', not 'exactly')")
    mean_div = claim_record("SQRT-05", effective_tokens(w_div).mean().item(), expected="≈40 (derived)",
                            tolerance="exact: > 30", label="effective tokens, divided")
    assert mean_div > 30
    # "chosen by nothing but the draw": the winning key position is uniform over the 64
    counts = torch.bincount(w_raw.argmax(1), minlength=64).numpy()
    # an equivalence, not a test that fails to reject: the argmax's distribution over the 64
    # positions lies within 0.15 of uniform in total variation (sampling alone gives ~0.07 at 2000)
    tv = claim_record("SQRT-05", round(float(np.abs(counts / counts.sum() - 1 / 64).sum() / 2), 4), expected=0,
                      tolerance="exact: total-variation distance from uniform < 0.15", label="argmax position vs uniform")
    assert tv < 0.15
    grid = []
    for point, why, reading in SQRT05_READINGS:
        r = starts((effective_tokens(_rows_read(reading)) - 1).abs() <= SQRT05_EXACTLY, MAJORITY)
        grid.append({"point": point, "settings": {} if point == "stated" else dict([point.split("=")]), "why": why,
                     "value": rate_text(r).replace("starts", "rows"), "holds": r["holds"]})
    report = claim_diagnosis("SQRT-05", {"claim": "SQRT-05", "fixed": "", "grid": grid})
    check_kind(report)
    r = claim_record("SQRT-05", starts((eff - 1).abs() <= SQRT05_EXACTLY, MAJORITY), expected="exactly 1 of 64",
                     tolerance=f"{MOST}; per row: effective tokens within ± 1 % of 1 ('esattamente', the word table)",
                     label="rows attending to exactly one token (effective tokens within 1 % of 1)")
    decide(r, "SQRT-05: a fresh head attends to exactly one token on most rows")


@pytest.mark.fast
@pytest.mark.claim("SQRT-06")
def test_softmax_jacobian_diagonal_is_w_times_one_minus_w(claim_record):
    s = torch.randn(10, dtype=torch.float64)
    J = torch.autograd.functional.jacobian(lambda s: torch.softmax(s, -1), s)
    w = torch.softmax(s, -1)
    torch.testing.assert_close(J, torch.diag(w) - torch.outer(w, w), rtol=0, atol=1e-15)
    claim_record("SQRT-06", (J.diagonal() - w * (1 - w)).abs().max().item(),
                 tolerance="exact: atol 1e-15, rtol 0 (float64)", label="max |J_ii - w_i(1 - w_i)|")
    torch.testing.assert_close(J.diagonal(), w * (1 - w), rtol=0, atol=1e-15)
    assert J.trace().item() == pytest.approx(softmax_trace(w).item(), abs=1e-15)
    s_hot = torch.tensor([1e3, 0.0, 0.0, 0.0], dtype=torch.float64)  # one-hot limit
    J_hot = torch.autograd.functional.jacobian(lambda s: torch.softmax(s, -1), s_hot)
    hot = claim_record("SQRT-06", J_hot.diagonal().abs().max().item(), tolerance="exact: < 1e-6",
                       label="one-hot limit: max |J_ii|")
    assert hot < 1e-6  # zero at both ends: w = 1 and w = 0


@pytest.mark.fast
@pytest.mark.claim("SQRT-07")
def test_seven_in_ten_unscaled_rows_are_frozen_at_1024(claim_record):
    fracs = {}
    for d in WIDTHS:
        w = _rows(d)
        fracs[d] = ((softmax_trace(w) < 0.01).double().mean().item(),
                    (w.max(1).values > 0.99).double().mean().item())
    trace_frac, max_frac = fracs[1024]
    # "seven in ten" read as 0.65-0.75, widened by 5 binomial SEs (SE ~0.010 at 2000 rows)
    claim_record("SQRT-07", trace_frac, expected=0.7, tolerance="exact: [0.6, 0.8]", label="trace < 0.01")
    claim_record("SQRT-07", max_frac, expected=0.7, tolerance="exact: [0.6, 0.8]", label="max w > 0.99")
    assert 0.6 <= trace_frac <= 0.8 and 0.6 <= max_frac <= 0.8
    frozen = [fracs[d][0] for d in WIDTHS]
    assert frozen == sorted(frozen) and frozen[1] <= 0.02  # grows with d; nothing frozen at 16


@pytest.mark.fast
@pytest.mark.claim("SQRT-08")
def test_divided_gradient_quantity_is_flat_at_0_96(claim_record):
    means = {}
    for d in WIDTHS:
        tr = softmax_trace(_rows(d, scale=True))
        assert (tr < 0.01).sum() == 0  # nothing saturates
        means[d] = tr.mean().item()
    claim_record("SQRT-08", means, expected=0.96,
                 tolerance="exact: each in [0.95, 0.97] (0.96 rounded, ±5 SE); spread < 0.01")
    assert all(0.95 <= m <= 0.97 for m in means.values())
    assert max(means.values()) - min(means.values()) < 0.01


def _init_score_std(scale):
    """Score std of the S-SQ head at d_k=1024 on a fresh model: PyTorch default inits."""
    torch.manual_seed(0)
    m = GPT(sqrt_dk_config(1024, scale=scale)).eval()
    stds = []
    for _ in range(4):
        with capture_attention(m) as maps, torch.no_grad():
            m(torch.randint(0, 1024, (4, 128)))
        stds.append(maps[0].scores.std().item())
    return sum(stds) / len(stds)


@pytest.mark.fast
@pytest.mark.claim("SQRT-11")
def test_undivided_head_starts_with_score_std_21(claim_record):
    """(a) at initialisation. Token + position embeddings N(0,1) each, nn.Linear default init:
    Var q_j = 128 * 2 / (3 * 128) = 2/3, so std(q.k) = (2/3) sqrt(1024) = 21.33."""
    std = claim_record("SQRT-11", _init_score_std(scale=False), expected=21,
                       tolerance="exact: ±5 % of 21.33 (derived); 16 batches of 128x128 scores",
                       label="init score std, no division")
    assert std == pytest.approx(64 / 3, rel=0.05)
    assert round(std) == 21


@pytest.mark.fast
@pytest.mark.claim("SQRT-12")
def test_a_saturated_softmax_passes_almost_no_gradient(claim_record):
    s = torch.randn(64, dtype=torch.float64)
    target = torch.randn(64, dtype=torch.float64)

    def grad_norm(scale):
        x = (scale * s).requires_grad_()
        (torch.softmax(x, -1) @ target).backward()
        return x.grad.norm().item()

    ratio = claim_record("SQRT-12", grad_norm(1e3) / grad_norm(1.0), tolerance="exact: < 1e-6",
                         label="grad norm at scale 1e3 / scale 1")
    assert ratio < 1e-6


# ---- training with and without the division (SQRT-09 ... SQRT-13) ------------------------------
#
# CI scale (suite/scales.py SQRT_CI): one head on d_model 64, window 64, batch 16, 1000 steps at
# 3e-3, 3 seeds, head widths 32, 128, 256 and 1024. Full (SQRT_FULL): the document's 1500 steps
# at batch 32 on d_model 128. Attention statistics come from a fixed held-out batch, every 100
# steps (model.attention_maps.attention_summary).

from claimcheck.rules import (  # noqa: E402
    MAJORITY,
    MOST,
    NEARLY_ALL,
    Schedule,
    above,
    below,
    decide,
    gap_band,
    interval,
    joint,
    joint_record,
    judge,
    judge_look,
    mean_interval,
    rate_text,
    starts,
    starts_looks,
    two_se,
    within,
)
from suite.catalogue import SQRT12_LOOKS, SQRT_WIDTHS  # noqa: E402

DOC_WORTH = {32: "≈ 0 (no-division slightly ahead)", 256: 18, 1024: 17}


def _worth(runs, d):
    """Per-seed val perplexity lost by dropping the division at head width d."""
    return runs.val(f"nodiv-{d}") - runs.val(f"div-{d}")


def _attention(runs, rung, key, when):
    """Per-seed attention statistic at initialisation (when=0) or at the end (when=-1)."""
    return [runs.run(rung, s).trace["attention"][when][key] for s in runs.seeds]


def draw_sqrt(runs, title):
    def draw(fig):
        fig.set_size_inches(12, 4)
        axes = fig.subplots(1, 3)
        for scale, style in (("div", "-"), ("nodiv", "--")):
            for d, colour in zip(SQRT_WIDTHS, ("tab:blue", "tab:green", "tab:orange", "tab:red")):
                tr = runs.run(f"{scale}-{d}", runs.seeds[0]).trace
                for ax, key in zip(axes, ("score_std", "entropy", "saturated")):
                    ax.plot(tr["step"], [a[key] for a in tr["attention"]], style, color=colour,
                            label=f"{scale} d_k={d}")
        for ax, (key, scale) in zip(axes, (("score std", "log"), ("mean entropy (nats)", "linear"),
                                           ("rows with max weight > 0.99", "linear"))):
            ax.set(xlabel="step", ylabel=key, yscale=scale)
        axes[0].legend(fontsize=7, ncol=2)
        fig.suptitle(f"{title} (seed {runs.seeds[0]}; solid: divided, dashed: not)")
    return draw


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("SQRT-14")
@reads(SQRT_CI)
def test_the_division_is_worth_less_at_32_than_at_256(runs_of, claim_record, claim_figure):
    """"nulla a 32, tutto entro 256": the comparison of the two widths is SQRT-14's sentence."""
    sqrt_ci = runs_of(SQRT_CI)
    worth = {d: _worth(sqrt_ci, d) for d in SQRT_WIDTHS}
    for d in SQRT_WIDTHS:
        claim_record("SQRT-14", [round(w, 2) for w in worth[d]], expected=DOC_WORTH.get(d), tolerance="reported",
                     label=f"no division - division, d_k = {d} (CI), per seed")
    claim_figure("SQRT-14", "sqrt_dk_ci_attention", draw_sqrt(sqrt_ci, "sqrt(d_k), CI scale"))
    judge("SQRT-14", interval(claim_record, "SQRT-14", np.array(worth[256]) - np.array(worth[32]), above(0),
                              "comparison (CI scale: the first part only, 'nulla a 32' before 256; 'tutto entro "
                              "256' is judged at full scale): the 90 % interval of the mean paired difference "
                              "(worth at 256 - at 32) above 0", "CI: worth at 256 - worth at 32"),
          "the division is worth less at 32 than at 256")


@pytest.mark.slow
@reads(SQRT_CI, fresh=True)
def test_the_sqrt_dk_runs_match_their_pin(runs_of, pin):
    sqrt_ci = runs_of(SQRT_CI)
    vals = {rung: sqrt_ci.val(rung) for rung in sqrt_ci.scale.arms}
    vals.update({f"{rung}/early": [sqrt_ci.run(rung, s).trace["loss"][1:4] for s in sqrt_ci.seeds]
                 for rung in sqrt_ci.scale.arms})
    pin("sqrt_dk_ci", vals,
        meaning="per (division, head width): val perplexity (rows: seeds 0-2); /early: the first three "
                "traced training losses (steps 1-100, 101-200, 201-300)",
        config={"scale": sqrt_ci.scale.name, "train": sqrt_ci.scale.train, "widths": SQRT_WIDTHS})


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("SQRT-09")
@diverges("at CI scale dropping the division costs several points even at "
                   "d_k = 32 (values in the report); the text's 'worth nothing' is not reproduced")
@reads(SQRT_CI)
def test_at_32_the_division_is_worth_nothing(runs_of, claim_record):
    """"Worth nothing" is an equivalence: the 90 % interval of the mean effect (TOST at 5 %)
    inside +-2 points, the catalogue's bound for 'no meaningful effect'."""
    sqrt_ci = runs_of(SQRT_CI)
    m, lo, hi = mean_interval(_worth(sqrt_ci, 32))
    claim_record("SQRT-09", [round(m, 2), round(lo, 2), round(hi, 2)], expected=DOC_WORTH[32],
                 tolerance="comparison: the 90 % interval of the mean paired difference inside [-2, 2] (TOST; CI "
                           "scale: the catalogue's 2 points)",
                 label=f"no division - division, d_k = 32 (CI): mean and 90 % interval over {len(sqrt_ci.seeds)} seeds")
    side = within(lo, hi, (-2, 2))  # wholly outside is the divergence; across an edge decides nothing
    if side is None:
        undecided(f"the 90 % interval [{lo:.2f}, {hi:.2f}] over {len(sqrt_ci.seeds)} seeds crosses an edge of "
                  "[-2, 2]")
    assert side


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("SQRT-10")
@reads(SQRT_CI)
def test_at_256_and_1024_the_division_is_worth_many_points(runs_of, claim_record):
    sqrt_ci = runs_of(SQRT_CI)
    for d in (256, 1024):
        claim_record("SQRT-10", [round(w, 2) for w in _worth(sqrt_ci, d)], expected=DOC_WORTH[d], tolerance="reported",
                     label=f"no division - division, d_k = {d} (CI), per seed")
    judge("SQRT-10", joint_record(claim_record, "SQRT-10", [(f"CI: no division - division, d_k = {d}", _worth(sqrt_ci, d),
                                                               above(0)) for d in (256, 1024)],
                                  "joint (CI scale: the sign only): each 90 % interval of the mean paired gap above 0"),
          "the division helps at 256 and 1024")


# What the undivided head does in training is a claim about starts: each property below is
# judged per start, and the claim on the rate over ten starts (SQRT1024_CI; most starts, an exact
# binomial test: 9 of 10), so one start that escapes the runaway turns nothing.

@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("SQRT-11")
@reads(SQRT1024_CI, SQRT_CI)
def test_the_undivided_head_sharpens_and_saturates(runs_of, claim_record):
    sqrt1024_ci = runs_of(SQRT1024_CI)
    sqrt_ci = runs_of(SQRT_CI)
    runs = sqrt1024_ci
    std0, std1 = np.array(_attention(runs, "nodiv-1024", "score_std", 0)), np.array(_attention(runs, "nodiv-1024", "score_std", -1))
    ent = np.array(_attention(runs, "nodiv-1024", "entropy", -1))
    sat = np.array(_attention(runs, "nodiv-1024", "saturated", -1))
    div_ent = np.array(_attention(runs, "div-1024", "entropy", -1))
    claim_record("SQRT-11", [[round(a, 1), round(b, 1)] for a, b in zip(std0, std1)], expected=[21, 5147],
                 tolerance="start count, per start: grows", label="undivided d_k=1024: score std, init -> end, per seed (CI)")
    claim_record("SQRT-11", ent.round(3), expected=0, tolerance="start count, per start: < the divided head's, same seed",
                 label="undivided d_k=1024: mean entropy at the end (nats)")
    claim_record("SQRT-11", sat.round(3), expected=0.999, tolerance="start count, per start: > 0.5",
                 label="undivided d_k=1024: rows with max weight > 0.99")
    # a table of every width and variant, at initialisation and at the end (seed mean)
    claim_record("SQRT-11", {rung: {when: {k: round(float(np.mean(_attention(sqrt_ci, rung, k, i))), 3)
                                           for k in ("score_std", "entropy", "saturated")}
                                    for when, i in (("init", 0), ("end", -1))}
                             for rung in sqrt_ci.scale.arms},
                 tolerance="reported", label="score std, mean entropy (nats), rows > 0.99: init and end, mean of seeds 0-2")
    r = claim_record("SQRT-11", starts((std1 > std0) & (ent < div_ent) & (sat > 0.5), MAJORITY), expected="every row",
                     tolerance=MOST, label="starts whose undivided head sharpens, falls below the divided "
                                           "head's entropy and saturates > 0.5 of its rows")
    decide(r)


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("SQRT-11")
@diverges("at CI scale the undivided score std grows by about an order of "
                   "magnitude, short of the catalogue's x20 and far from the text's thousands, while entropy "
                   "and saturation do collapse (values in the report)")
@reads(SQRT1024_CI)
def test_the_undivided_head_runs_away_and_collapses_completely(runs_of, claim_record):
    sqrt1024_ci = runs_of(SQRT1024_CI)
    runs = sqrt1024_ci
    std0, std1 = np.array(_attention(runs, "nodiv-1024", "score_std", 0)), np.array(_attention(runs, "nodiv-1024", "score_std", -1))
    sat = np.array(_attention(runs, "nodiv-1024", "saturated", -1))
    ent = np.array(_attention(runs, "nodiv-1024", "entropy", -1))
    claim_record("SQRT-11", (std1 / std0).round(1), expected=round(5147 / 21), tolerance="start count, per start: > 20",
                 label="undivided d_k=1024: score std end / init, per seed (CI)")
    # the catalogue's reduced bounds: std x20, > 90 % of rows one-hot, entropy < 0.1 nats, per start
    r = claim_record("SQRT-11", starts((std1 > 20 * std0) & (sat > 0.9) & (ent < 0.1), MAJORITY), expected="collapse",
                     tolerance=MOST, label="starts that run away (std x20) and collapse (> 0.9 rows one-hot, "
                                           "entropy < 0.1 nats)")
    decide(r)


def sqrt12_rule(runs, claim_record, scale: str, schedule: Schedule, line: float = NEARLY_ALL) -> None:
    """Per start, the undivided d_k = 1024 head keeps at least 0.9 of its peak saturated fraction
    at the end (read to 3 decimals, as recorded). "Nulla la riporta indietro" is universal: nearly
    every start keeps it (the rate above 4/5, as "every start" reads), by exact binomial tests on
    ``schedule``'s looks; ``line`` MAJORITY is the weaker form a scale too small to show it reads."""
    kept = []
    for s in runs.seeds:
        sat = [a["saturated"] for a in runs.run("nodiv-1024", s).trace["attention"]]
        kept.append(sat[-1] / max(sat))
    kept = np.array(claim_record("SQRT-12", [round(k, 3) for k in kept], expected="nothing brings it back",
                                 tolerance="reported",
                                 label=f"undivided d_k=1024: saturated fraction at the end / its peak ({scale}), per seed"))
    look = starts_looks(claim_record, "SQRT-12", kept >= 0.9, line, schedule,
                        f"starts that keep >= 0.9 of their peak saturation at the end ({scale})",
                        expected="nothing brings it back")
    judge_look("SQRT-12", look, f"the collapse is stable on {'nearly every' if line == NEARLY_ALL else 'most'} start")


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("SQRT-12")
@reads(SQRT1024_CI)
def test_the_collapse_is_stable(runs_of, claim_record):
    # CI's ten starts cannot show "nearly every start" (10 of 10: p 0.107): the weaker form, most starts
    sqrt1024_ci = runs_of(SQRT1024_CI)
    sqrt12_rule(sqrt1024_ci, claim_record, "CI, the weaker form: most starts", Schedule((len(sqrt1024_ci.seeds),)),
                MAJORITY)


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("SQRT-13")
@reads(SQRT1024_CI)
def test_the_divided_head_stays_soft(runs_of, claim_record):
    sqrt1024_ci = runs_of(SQRT1024_CI)
    std = np.array(claim_record("SQRT-13", [round(x, 2) for x in _attention(sqrt1024_ci, "div-1024", "score_std", -1)],
                                expected=3.44, tolerance="start count, per start: < 10 (catalogue, reduced)",
                                label="divided d_k=1024: score std at the end"))
    sat = np.array(claim_record("SQRT-13", [round(x, 3) for x in _attention(sqrt1024_ci, "div-1024", "saturated", -1)],
                                tolerance="start count, per start: < 0.5", label="divided d_k=1024: rows with max weight > 0.99"))
    r = claim_record("SQRT-13", starts((std < 10) & (sat < 0.5), MAJORITY), expected="a soft mixture", tolerance=MOST,
                     label="starts whose divided head stays soft (std < 10, < 0.5 of rows one-hot)")
    decide(r)


def _worth_at_32_full(runs) -> np.ndarray:
    """Δ32 on the ladder's 4-heads rung (SQRT09_FULL), once all five seeds are recorded: one
    seed bounds nothing, and the sign is read over five."""
    worth = _worth(runs, 32)
    if len(worth) < len(runs.scale.seeds):
        pytest.skip(f"SQRT-09 is judged over {len(runs.scale.seeds)} seeds, and {len(worth)} of them are recorded: "
                    "run `python -m suite.evidence run --family sqrt-ladder --seeds 0,1,2,3,4`")
    return worth


# SQRT-09 is judged on the chapter's configuration: the ladder's 4-heads rung (heads 32 wide),
# 3000 steps, batch 64 (docs/reference/setup-audit.md §2). Its divergence is declared on its five
# recorded seeds, never before their records exist.
# "non vale nulla": the word table's +-3 % of the rung's perplexity (the 4-heads rung, 43.45)
SQRT09_NOTHING = (-0.03 * 43.45, 0.03 * 43.45)


def sqrt09_rule(runs, checkpoint="final", level=0.90):
    """"non vale nulla e la run senza è leggermente avanti": the mean paired effect's interval inside
    +-3 % of the rung's perplexity (TOST), and below 0 (the run without the division ahead),
    joined (``joint``, at ``level``)."""
    worth = _worth(runs, 32) if checkpoint == "final" else runs.val("nodiv-32", checkpoint) - runs.val("div-32", checkpoint)
    shown, holds = joint([(worth, lambda lo, hi: within(lo, hi, SQRT09_NOTHING)), (worth, below(0))], level)
    return [round(x, 2) for x in shown[0]], holds


@pytest.mark.gpu
@pytest.mark.claim("SQRT-09")
@reads(SQRT09_FULL)
def test_at_32_the_division_is_worth_nothing_at_full_scale(runs_of, claim_record):
    sqrt09_full = runs_of(SQRT09_FULL)
    worth = claim_record("SQRT-09", _worth_at_32_full(sqrt09_full).round(2), expected=DOC_WORTH[32],
                         tolerance="reported",
                         label=f"no division - division, 4 heads of 32 at 3000 steps (full), seeds {list(sqrt09_full.seeds)}")
    m, lo, hi = mean_interval(worth)
    claim_record("SQRT-09", [round(m, 2), round(lo, 2), round(hi, 2)], expected=DOC_WORTH[32],
                 tolerance=f"comparison: the 90 % interval of the mean paired difference inside ±{SQRT09_NOTHING[1]:.2f} "
                           "('non vale nulla': ±3 % of the rung's 43.45, docs/reference/statistics.md)",
                 label="d_k = 32 (full): mean effect and its 90 % interval")
    side = within(lo, hi, SQRT09_NOTHING)
    if side is None:
        undecided(f"the 90 % interval [{lo:.2f}, {hi:.2f}] over {len(worth)} seeds crosses an edge of "
                  f"±{SQRT09_NOTHING[1]:.2f}")
    assert side


@pytest.mark.gpu
@pytest.mark.claim("SQRT-09")
@diverges("on the chapter's configuration (4 heads of 32, 3000 steps, batch 64) the run without the division "
          "is behind, not ahead: the mean paired difference's interval lies above 0 (values in the report)")
@reads(SQRT09_FULL)
def test_at_32_the_run_without_the_division_is_slightly_ahead_at_full_scale(runs_of, claim_record):
    sqrt09_full = runs_of(SQRT09_FULL)
    worth = _worth_at_32_full(sqrt09_full)
    claim_record("SQRT-09", int((worth < 0).sum()), expected="no division ahead", tolerance="reported",
                 label="seeds where no division ends below division, 4 heads of 32 (full)")
    judge("SQRT-09", interval(claim_record, "SQRT-09", worth, below(0),
                              "comparison: the 90 % interval of the mean paired difference (no division - division) "
                              "below 0", "no division - division, 4 heads of 32 (full)", subject=True),
          "the run without the division is ahead")


@pytest.mark.gpu
@pytest.mark.claim("SQRT-10")
@reads(SQRT_FULL)
def test_at_256_and_1024_the_division_is_worth_many_points_at_full_scale(runs_of, claim_record):
    sqrt_full = runs_of(SQRT_FULL)
    for d in (128, 256, 1024):
        claim_record("SQRT-10", _worth(sqrt_full, d).round(2), expected=DOC_WORTH.get(d), tolerance="reported",
                     label=f"no division - division, d_k = {d} (full), per seed")
    # a gap between trained numbers: the word table's gap row. The chapter does not print the
    # operands (its table is stripped), so each is our seed mean of that arm, ± 5 %, in quadrature.
    parts, texts = [], []
    for d in (256, 1024):
        a, b = float(np.mean(sqrt_full.val(f"nodiv-{d}"))), float(np.mean(sqrt_full.val(f"div-{d}")))
        band = gap_band(DOC_WORTH[d], a, b, str(DOC_WORTH[d]))
        parts.append((f"no division - division, d_k = {d} (full)", _worth(sqrt_full, d),
                      (lambda b_: lambda lo, hi: within(lo, hi, b_))(band)))
        texts.append(f"{DOC_WORTH[d]} in ({band[0]:.2f}, {band[1]:.2f}] (our {a:.2f} and {b:.2f} ± 5 %)")
    judge("SQRT-10", joint_record(claim_record, "SQRT-10", parts,
        "joint: each 90 % interval of the mean paired gap inside its band (a gap between trained numbers; the "
        "operands are not printed, so ours: " + "; ".join(texts) + "; docs/reference/statistics.md)"),
          "the division is worth 18 and 17 points at 256 and 1024")


SQRT11_STD = (5147 * 0.95, 5147 * 1.05)  # a trained number printed bare: +-5 % (docs/reference/statistics.md)
# "99,9 % delle righe" of 16 x 128 probe rows: at least 99.9 % less 2 SE (a share cannot exceed 1,
# so the band is one-sided: the mean's interval above its lower edge)
SQRT11_SAT = (0.999 - two_se(0.999, 16 * 128), np.inf)
# "l'entropia dell'attention cade a zero": zero in words, read as the exactly row reads one token,
# a row's effective tokens within 1 % of 1, so the mean entropy below ln 1.01 nats
SQRT11_ENTROPY = math.log(1.01)


def sqrt11_rule(runs, checkpoint="final", level=0.90):
    """The undivided head's score std inside 5,147 +- 5 % and its saturated rows inside 99.9 % +- 2
    binomial SE at the end, each on the interval of the seed mean, joined (``joint``, at ``level``;
    the attention trace is read at the last step: ``checkpoint`` must be final)."""
    if checkpoint != "final":
        raise ValueError("SQRT-11 reads the attention trace at the last step")
    std = np.array(_attention(runs, "nodiv-1024", "score_std", -1))
    ent = np.array(_attention(runs, "nodiv-1024", "entropy", -1))
    sat = np.array(_attention(runs, "nodiv-1024", "saturated", -1))
    shown, holds = joint([(std, lambda lo, hi: within(lo, hi, SQRT11_STD)),
                          (ent, below(SQRT11_ENTROPY)),
                          (sat, lambda lo, hi: within(lo, hi, SQRT11_SAT))], level)
    return {"score std": [round(x, 1) for x in shown[0]], "entropy": [round(x, 4) for x in shown[1]],
            "saturated": [round(x, 4) for x in shown[2]]}, holds


@pytest.mark.gpu
@pytest.mark.claim("SQRT-11")
@diverges("the undivided head's score std ends far below the text's 5,147, and not every row "
          "saturates (values in the report)")
@reads(SQRT_FULL)
def test_the_undivided_head_runs_away_and_saturates_at_full_scale(runs_of, claim_record, claim_figure):
    sqrt_full = runs_of(SQRT_FULL)
    claim_figure("SQRT-11", "sqrt_dk_full_attention", draw_sqrt(sqrt_full, "sqrt(d_k), full scale"))
    claim_record("SQRT-11", np.round(_attention(sqrt_full, "nodiv-1024", "score_std", -1), 1), expected=5147,
                 tolerance="reported", label="undivided d_k=1024: score std at the end (full), per seed")
    claim_record("SQRT-11", np.round(_attention(sqrt_full, "nodiv-1024", "saturated", -1), 3),
                 expected=0.999, tolerance="reported",
                 label="undivided d_k=1024: rows with max weight > 0.99 at the end (full), per seed")
    claim_record("SQRT-11", np.round(_attention(sqrt_full, "nodiv-1024", "entropy", -1), 4), expected=0,
                 tolerance="reported", label="undivided d_k=1024: mean attention entropy at the end (full, nats), per seed")
    value, holds = sqrt11_rule(sqrt_full)
    claim_record("SQRT-11", value, expected={"score std": 5147, "entropy": 0, "saturated": 0.999},
                 tolerance=f"joint: each 90 % interval of the seed mean inside its band (score std "
                           f"[{SQRT11_STD[0]:.0f}, {SQRT11_STD[1]:.0f}], +-5 %; entropy below ln 1.01 = "
                           f"{SQRT11_ENTROPY:.4f} nats, 'a zero' as exactly one token; saturated above "
                           f"{SQRT11_SAT[0]:.4f}, 2 SE)",
                 label="undivided d_k=1024 at the end (full): mean, lo, hi", subject=True)
    judge("SQRT-11", holds, "the undivided head's score std reaches 5147, its entropy falls to zero and 99.9 % of rows saturate")


@pytest.mark.gpu
@pytest.mark.claim("SQRT-12")
@reads(SQRT12_FULL)
def test_the_collapse_is_stable_at_full_scale(runs_of, claim_record):
    """The CI test's rule (``sqrt12_rule``) on the document's configuration, at the looks of
    catalogue.SQRT12_LOOKS."""
    sqrt12_full = runs_of(SQRT12_FULL)
    sqrt12_rule(sqrt12_full.first(sqrt12_full.prefix()), claim_record, "full", SQRT12_LOOKS)


# "tutto entro 256": the division's worth is all in by 256, so 1024 adds nothing to it. How much a
# gap between the two worths may be and still read as nothing is the word table's gap row, on the
# chapter's own operands (18 at 256, 17 at 1024, each a trained gap printed bare, +-5 %, in
# quadrature): 1.24 points.
SQRT14_BEYOND = 0.05 * math.hypot(18, 17)


def sqrt14_rule(runs, checkpoint="final", level=0.90):
    """"nulla a 32, tutto entro 256", joined (``joint``, at ``level``): the division is worth more
    at 256 than at 32 (the interval of the mean paired difference above 0), and 1024 adds nothing
    beyond 256 (the interval of worth at 1024 - worth at 256 below SQRT14_BEYOND). Written with its
    grid (suite/diagnosis_grids.py SQRT14_GRID) before the grid's runs existed; the stated runs'
    worths were in SQRT-10's report (14.4 at 256, 19.1 at 1024)."""
    if checkpoint != "final":
        raise ValueError("SQRT-14 reads the last step")
    w = {d: np.asarray(_worth(runs, d)) for d in (32, 256, 1024)}
    shown, holds = joint([(w[256] - w[32], above(0)), (w[1024] - w[256], below(SQRT14_BEYOND))], level)
    return {"w256": float(w[256].mean()), "w1024": float(w[1024].mean()),
            "256 - 32": [round(x, 2) for x in shown[0]], "1024 - 256": [round(x, 2) for x in shown[1]]}, holds


@pytest.mark.gpu
@pytest.mark.claim("SQRT-14")
@diverges("on the chapter's short runs the division's worth still grows from 256 to 1024 (values in "
          "the report): 'tutto entro 256' does not hold")
@reads(SQRT_FULL)
def test_nothing_at_32_everything_by_256_at_full_scale(runs_of, claim_record):
    """"nulla a 32, tutto entro 256" on the document's configuration (one head of each width, 1500
    steps): ``sqrt14_rule``."""
    sqrt_full = runs_of(SQRT_FULL)
    for d in SQRT_WIDTHS:
        claim_record("SQRT-14", _worth(sqrt_full, d).round(2), expected=DOC_WORTH.get(d), tolerance="reported",
                     label=f"no division - division, d_k = {d} (full), per seed")
    value, holds = sqrt14_rule(sqrt_full)
    claim_record("SQRT-14", value, expected={"w256": 18, "w1024": 17, "256 - 32": "> 0", "1024 - 256": f"< {SQRT14_BEYOND:.2f}"},
                 tolerance=f"joint: the 90 % interval of worth at 256 - at 32 above 0; of worth at 1024 - at 256 "
                           f"below {SQRT14_BEYOND:.2f} ('tutto entro 256': the gap row's band on the chapter's 18 and "
                           "17, ± 5 % in quadrature)",
                 label="the division's worth (full): means at 256 and 1024; paired differences, mean and interval", subject=True)
    judge("SQRT-14", holds, "nothing at 32, everything by 256")


SQRT13_STD = (3.44 * 0.95, 3.44 * 1.05)  # a trained number printed bare: +-5 % (docs/reference/statistics.md)


def sqrt13_rule(runs, checkpoint="final", level=0.90):
    """The divided head's score std at the end: the interval of the seed mean (at ``level``) inside
    3.44 +- 5 % (the trace is read at the last step: ``checkpoint`` must be final)."""
    if checkpoint != "final":
        raise ValueError("SQRT-13 reads the attention trace at the last step")
    m, lo, hi = mean_interval(np.array(_attention(runs, "div-1024", "score_std", -1)), level)
    return [round(m, 2), round(lo, 2), round(hi, 2)], within(lo, hi, SQRT13_STD)


@pytest.mark.gpu
@pytest.mark.claim("SQRT-13")
@diverges("the divided head's score std ends well below the text's 3.44, outside its ±5 % (values in the report)")
@reads(SQRT_FULL)
def test_the_divided_head_stays_soft_at_full_scale(runs_of, claim_record):
    sqrt_full = runs_of(SQRT_FULL)
    claim_record("SQRT-13", np.round(_attention(sqrt_full, "div-1024", "score_std", -1), 2), expected=3.44,
                 tolerance="reported", label="divided d_k=1024: score std at the end (full), per seed")
    value, holds = sqrt13_rule(sqrt_full)
    claim_record("SQRT-13", value, expected=3.44, tolerance="equivalence: the 90 % interval of the seed mean inside "
                 "3.44 ± 5 % (a trained number printed bare)",
                 label=f"divided d_k=1024: score std at the end (full): mean and 90 % interval over {len(sqrt_full.seeds)} seeds", subject=True)
    judge("SQRT-13", holds, "the divided head stays at a score std of 3.44")


# ---- the diagnosis of each divergence: its rule at every point of its grid (suite/diagnosis_grids.py) ----

from suite.evidence.families import recorded_runs  # noqa: E402
from suite.diagnosis import check_kind, diagnosis_test  # noqa: E402
from suite.diagnosis_grids import SQRT09_GRID, SQRT11_GRID, SQRT13_GRID, SQRT14_GRID  # noqa: E402

test_sqrt09_diagnosis = diagnosis_test(SQRT09_GRID, sqrt09_rule, recorded_runs)
test_sqrt11_diagnosis = diagnosis_test(SQRT11_GRID, sqrt11_rule, recorded_runs)
test_sqrt13_diagnosis = diagnosis_test(SQRT13_GRID, sqrt13_rule, recorded_runs)
test_sqrt14_diagnosis = diagnosis_test(SQRT14_GRID, sqrt14_rule, recorded_runs)
