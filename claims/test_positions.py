"""IT 3.11 Position: equivariance without it, and the four schemes' exact properties."""
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model import GPT, GPTConfig, MultiHeadAttention
from model.positional import RoPE, alibi_slopes, build_positional, sinusoid_table
from claimcheck import diverges
from suite.reading import reads
from suite.catalogue import POS_CI, POS_FULL


seeds = st.integers(0, 2**31 - 1)


def _nope(n_layer=1, causal=True, d=16, T=12, V=20, **kw):
    return GPT(GPTConfig(vocab_size=V, block_size=T, d_model=d, n_layer=n_layer, n_head=2,
                         positions="none", causal=causal, **kw)).double().eval()


@pytest.mark.fast
@pytest.mark.claim("POS-02")
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])  # claim_record keeps no state
@given(T=st.integers(2, 16), seed=seeds)
def test_unmasked_attention_without_positions_is_permutation_equivariant(T, seed, claim_record):
    torch.manual_seed(seed)
    attn = MultiHeadAttention(16, 4, causal=False).double()
    x = torch.randn(2, T, 16, dtype=torch.float64)
    p = torch.randperm(T)
    a, b = attn(x[:, p]), attn(x)[:, p]
    claim_record("POS-02", (a - b).abs().max().item(), tolerance="exact: atol 1e-12, rtol 0 (float64)",
                 label=f"T={T}, seed={seed}: max |attn(permuted x) - permuted attn(x)|")
    torch.testing.assert_close(a, b, rtol=0, atol=1e-12)


@pytest.mark.fast
@pytest.mark.claim("POS-02")
@given(seed=seeds)
def test_a_whole_unmasked_block_without_positions_is_equivariant(seed):
    torch.manual_seed(seed)
    m = _nope(causal=False, T=10)
    x = torch.randint(0, 20, (1, 10))
    p = torch.randperm(10)
    with torch.no_grad():
        torch.testing.assert_close(m(x[:, p]), m(x)[:, p], rtol=0, atol=1e-12)


def _prefix_shuffled(x, t, g):
    y = x.clone()
    y[:, :t] = x[:, torch.randperm(t, generator=g)]
    return y


@pytest.mark.fast
@pytest.mark.claim("POS-03")
@given(t=st.integers(2, 11), seed=seeds)
def test_one_causal_block_cannot_see_order_inside_its_prefix(t, seed):
    torch.manual_seed(seed)
    m = _nope(n_layer=1)
    x = torch.randint(0, 20, (1, 12))
    y = _prefix_shuffled(x, t, torch.Generator().manual_seed(seed))
    with torch.no_grad():
        torch.testing.assert_close(m(y)[0, t], m(x)[0, t], rtol=0, atol=1e-12)


@pytest.mark.fast
@pytest.mark.claim("POS-03")
def test_two_causal_blocks_can_see_order_the_catalogues_caveat(claim_record):
    """Negative control: from the second layer on, the prefix's states carry their own prefixes."""
    torch.manual_seed(0)
    m = _nope(n_layer=2)
    x = torch.tensor([[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]])
    y = x.clone()
    y[0, [0, 1]] = y[0, [1, 0]]  # swap two earlier tokens
    with torch.no_grad():
        diff = (m(y)[0, 11] - m(x)[0, 11]).abs().max().item()
    claim_record("POS-03", diff, tolerance="exact: > 1e-4", label="2-block output change, swapped prefix")
    assert diff > 1e-4


@pytest.mark.fast
@pytest.mark.claim("POS-05")
def test_positions_never_seen_keep_their_initial_vector():
    torch.manual_seed(0)
    m = GPT(GPTConfig(vocab_size=64, block_size=64, n_positions=256, d_model=32, n_layer=1, n_head=2))
    init = m.pos.table.weight.detach().clone()
    opt = torch.optim.Adam(m.parameters(), lr=1e-2)
    for _ in range(20):
        x = torch.randint(0, 64, (4, 65))
        opt.zero_grad()
        m(x[:, :-1], x[:, 1:])[1].backward()
        opt.step()
    rows = m.pos.table.weight.detach()
    assert torch.equal(rows[64:], init[64:])  # bit-identical: position 100 was never in a batch
    assert not torch.equal(rows[:64], init[:64])


@pytest.mark.fast
@pytest.mark.claim("POS-05")
def test_decoupled_weight_decay_rescales_the_unseen_rows(claim_record):
    torch.manual_seed(0)
    m = GPT(GPTConfig(vocab_size=64, block_size=64, n_positions=256, d_model=32, n_layer=1, n_head=2))
    init = m.pos.table.weight.detach().clone()
    lr, wd, steps = 1e-2, 0.1, 20
    opt = torch.optim.AdamW(m.parameters(), lr=lr, weight_decay=wd)
    for _ in range(steps):
        x = torch.randint(0, 64, (4, 65))
        opt.zero_grad()
        m(x[:, :-1], x[:, 1:])[1].backward()
        opt.step()
    factor = (1 - lr * wd) ** steps
    shrink = (m.pos.table.weight.detach()[64:] / init[64:]).mean().item()
    claim_record("POS-05", shrink, expected=factor, tolerance="exact: rtol 1e-5 (float32)",
                 label="unseen rows / init under AdamW")
    torch.testing.assert_close(m.pos.table.weight.detach()[64:], init[64:] * factor, rtol=1e-5, atol=0)


@pytest.mark.fast
@pytest.mark.claim("POS-06")
def test_sinusoids_are_computed_geometric_and_defined_anywhere(claim_record):
    pe = build_positional("sinusoidal", d_model=64, d_head=16, n_head=4, n_positions=64)
    assert list(pe.parameters()) == []  # nothing learned
    d = 64
    freq = 10000 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    ratios = freq[1:] / freq[:-1]
    spread = claim_record("POS-06", (ratios - ratios[0]).abs().max().item(), tolerance="exact: < 1e-12 (float64)",
                          label="max deviation of consecutive frequency ratios")
    assert spread < 1e-12  # geometric spacing
    table = sinusoid_table(1001, d, dtype=torch.float64)
    claim_record("POS-06", max((table[200, 0::2] - torch.sin(200 * freq)).abs().max().item(),
                               (table[200, 1::2] - torch.cos(200 * freq)).abs().max().item()),
                 tolerance="exact: atol 1e-12, rtol 0 (float64)", label="position 200: max |table - sin/cos|")
    torch.testing.assert_close(table[200, 0::2], torch.sin(200 * freq), rtol=0, atol=1e-12)
    torch.testing.assert_close(table[200, 1::2], torch.cos(200 * freq), rtol=0, atol=1e-12)
    assert torch.isfinite(table).all() and table.abs().max() <= 1


@pytest.mark.fast
@pytest.mark.claim("POS-08")
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])  # claim_record keeps no state
@given(offset=st.integers(0, 50), seed=seeds)
def test_rope_scores_depend_only_on_the_distance(offset, seed, claim_record):
    g = torch.Generator().manual_seed(seed)
    rope = RoPE(32)
    q, k = torch.randn(32, dtype=torch.float64, generator=g), torch.randn(32, dtype=torch.float64, generator=g)
    ts = torch.tensor([offset, offset + 7, offset + 60, offset + 200, offset + 1000])
    scores = (rope.apply(q.expand(5, 32), ts) * rope.apply(k.expand(5, 32), ts - offset)).sum(-1)
    spread = claim_record("POS-08", (scores - scores[0]).abs().max().item(),
                          tolerance="exact: < 1e-9, float64 trig at angles up to ~1000 rad",
                          label=f"t - i = {offset}, seed={seed}: max |score change| as t moves by up to 1000")
    assert spread < 1e-9  # float64 trig at angles up to ~1000 rad
    assert torch.allclose(rope.apply(q.expand(5, 32), ts).norm(dim=-1), q.norm().expand(5))


def _scores_are_relative(scheme, shift, seed):
    """As attention applies them: put the same tokens ``shift`` places later (after other
    tokens) and every score among them is unchanged, before the mask. Absolute schemes
    (learned, sinusoidal) would move them."""
    from model import capture_attention
    torch.manual_seed(seed)
    m = GPT(GPTConfig(vocab_size=50, block_size=64, d_model=32, n_head=4, n_layer=1, positions=scheme)).double().eval()
    x = torch.randint(0, 50, (1, 24))
    y = torch.cat([torch.randint(0, 50, (1, shift)), x], 1)
    with capture_attention(m) as maps, torch.no_grad():
        m(x)
        m(y)
    alone, later = maps[0].scores, maps[1].scores[..., shift:, shift:]  # (1, nh, 24, 24) each
    torch.testing.assert_close(later, alone, rtol=0, atol=1e-9)


@pytest.mark.fast
@pytest.mark.claim("POS-08")
@given(shift=st.integers(1, 20), seed=seeds)
def test_inside_attention_rope_scores_are_relative(shift, seed):
    _scores_are_relative("rope", shift, seed)


@pytest.mark.fast
@pytest.mark.claim("POS-10")
@given(shift=st.integers(1, 20), seed=seeds)
def test_inside_attention_alibi_scores_are_relative(shift, seed):
    _scores_are_relative("alibi", shift, seed)


@pytest.mark.fast
@pytest.mark.claim("POS-10")
def test_alibi_is_a_linear_distance_penalty_with_one_slope_per_head(claim_record):
    pe = build_positional("alibi", d_model=64, d_head=8, n_head=8, n_positions=64)
    b = pe.bias(1024, dtype=torch.float64)  # defined at any distance: no table
    assert b.shape == (8, 1024, 1024)
    slopes = alibi_slopes(8)
    claim_record("POS-10", slopes.tolist(), expected=[2.0 ** -k for k in range(1, 9)], tolerance="exact",
                 label="slopes of the 8 heads")
    assert torch.equal(slopes, torch.tensor([2.0 ** -k for k in range(1, 9)]))  # 1/2 ... 1/256
    assert len(set(slopes.tolist())) == 8
    t, i = 1000, torch.arange(1001)
    claim_record("POS-10", (b[:, t, : t + 1] - -slopes[:, None].double() * (t - i)).abs().max().item(),
                 tolerance="exact: atol 1e-9, rtol 0 (float64)", label="t=1000: max |bias - (-slope (t - i))|")
    torch.testing.assert_close(b[:, t, : t + 1], -slopes[:, None].double() * (t - i), rtol=0, atol=1e-9)
    assert torch.isfinite(b).all()


# ---- training: five schemes trained at window 64, scored at 64, 128 and 256 --------------------
#
# CI scale (suite/scales.py POS_CI): 2 blocks at d 64, 600 steps, 3 seeds. Full (POS_FULL): the
# ladder's width 128 and 3000 steps at window 64. Weight decay is off in both, so the learned
# table's rows 64..255 are exactly their initial random vectors when scored (POS-05).

import numpy as np  # noqa: E402

from claimcheck.rules import above, below, interval, joint_record, judge, within  # noqa: E402
from suite.catalogue import POS_LENGTHS, POS_SCHEMES  # noqa: E402

DOC_ALIBI = (44.95, 42.49)  # ALiBi at 64 and at the longest window (IT L159)


def _table(runs):
    return {p: np.stack([runs.at_length(p, L) for L in POS_LENGTHS], 1) for p in POS_SCHEMES}  # (seeds, lengths)


def draw_positions(runs, title):
    def draw(fig):
        ax = fig.add_subplot()
        for p, t in _table(runs).items():
            ax.errorbar(POS_LENGTHS, t.mean(0), yerr=[t.mean(0) - t.min(0), t.max(0) - t.mean(0)],
                        marker="o", capsize=3, label=p)
        ax.set_xscale("log", base=2)
        ax.minorticks_off()
        ax.set(xticks=POS_LENGTHS, xlabel="evaluation window (trained at 64)", ylabel="val perplexity", title=title)
        ax.set_xticklabels(POS_LENGTHS)
        ax.legend(fontsize=8)
    return draw


def _record_table(claim_record, claim_id, runs, scheme):
    claim_record(claim_id, np.round(_table(runs)[scheme], 2).tolist(), tolerance="reported: per seed, windows 64/128/256",
                 label=f"{scheme}: val perplexity at 64, 128, 256 ({runs.scale.name})")


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("POS-01")
@reads(POS_CI)
def test_without_positions_the_model_still_trains(runs_of, shakespeare_tokens, claim_record, claim_figure):
    pos_ci = runs_of(POS_CI)
    from experiments.data import split
    from experiments.ngram import NGram
    tr, va = split(shakespeare_tokens)
    unigram = NGram(1, 1024, k=1.0).fit(tr).perplexity(va)
    ppl = claim_record("POS-01", np.round(pos_ci.at_length("none", 64), 2).tolist(), expected="still trains",
                       tolerance="reported", label="no positions, val at 64, per seed")
    losses = np.array([pos_ci.run("none", s).curve["loss"][-1] for s in pos_ci.seeds])
    claim_figure("POS-01", "positions_ci_by_window", draw_positions(pos_ci, "positions, CI scale"))
    # it trains: below the unigram (it learned context, not only token frequencies), and its loss
    # well below the uniform start
    judge("POS-01", joint_record(claim_record, "POS-01", [
        ("no positions: val at 64 below the unigram's", np.array(ppl) - unigram, below(0)),
        ("no positions: final loss below 0.8 ln 1024", losses - 0.8 * np.log(1024), below(0))],
        f"joint: each 90 % interval below 0 (the unigram's {unigram:.1f}; 0.8 ln 1024)"), "trains without positions")


@pytest.mark.slow
@reads(POS_CI, fresh=True)
def test_the_position_runs_match_their_pin(runs_of, pin):
    pos_ci = runs_of(POS_CI)
    pin("positions_ci", {p: t for p, t in _table(pos_ci).items()},
        meaning="val perplexity (seed, window 64/128/256) per positional scheme",
        config={"scale": pos_ci.scale.name, "train": pos_ci.scale.train, "schemes": POS_SCHEMES})


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("POS-04")
@diverges("at CI scale learned positions are not the best scheme at the "
                   "training length: RoPE, ALiBi and sinusoids beat them (values in the report)")
@reads(POS_CI)
def test_learned_positions_win_at_the_training_length(runs_of, claim_record):
    pos_ci = runs_of(POS_CI)
    _record_table(claim_record, "POS-04", pos_ci, "learned")
    judge("POS-04", joint_record(claim_record, "POS-04", _wins(_table(pos_ci)), PARTS),
          "learned positions win at the training length")


# Each rule as its parts, (label, per-seed values, check), joined by suite/rules.py's joint, so a
# claim judged at CI and at full scale, alone or with its other half, is one sentence of k parts.

def _wins(t):
    # "vincono": below every other scheme at the training length, on the paired ratio (a tie is not a win)
    best_other = np.min([t[p][:, 0] for p in ("sinusoidal", "rope", "alibi")], axis=0)
    return [("learned / best other scheme at 64", t["learned"][:, 0] / best_other, below(1.0))]


def _collapses(t):
    return [("learned: ppl(256) / ppl(64)", t["learned"][:, 2] / t["learned"][:, 0], above(1.5)),
            ("learned - alibi at 256", t["learned"][:, 2] - t["alibi"][:, 2], above(0)),
            ("learned: ppl(128) - ppl(64)", t["learned"][:, 1] - t["learned"][:, 0], above(0))]


def _sinusoids_degrade(t):
    return [("sinusoidal: ppl(256) - ppl(64)", t["sinusoidal"][:, 2] - t["sinusoidal"][:, 0], above(0)),
            ("sinusoidal: ppl(128) - ppl(64)", t["sinusoidal"][:, 1] - t["sinusoidal"][:, 0], above(0))]


def _rope_degrades_less(t):
    # "degrada, ma degrada": it rises beyond the training length, less than the absolute schemes do
    return [("rope: ppl(256) - ppl(64)", t["rope"][:, 2] - t["rope"][:, 0], above(0)),
            ("min(learned, sinusoidal) - rope at 256",
             np.minimum(t["learned"][:, 2], t["sinusoidal"][:, 2]) - t["rope"][:, 2], above(0))]


def _alibi_improves(t):
    return [("alibi: ppl(64) - ppl(128)", t["alibi"][:, 0] - t["alibi"][:, 1], above(0)),
            ("alibi: ppl(128) - ppl(256)", t["alibi"][:, 1] - t["alibi"][:, 2], above(0))]


PARTS = ("joint: each part's 90 % interval past its margin (a ratio under 1 or over 1.5, a gap above 0); "
         "one part outside only at its Bonferroni level")


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("POS-04")
@reads(POS_CI)
def test_learned_positions_collapse_beyond_the_training_length(runs_of, claim_record):
    pos_ci = runs_of(POS_CI)
    t = _table(pos_ci)
    claim_record("POS-04", np.round(t["learned"][:, 2] / t["learned"][:, 0], 2).tolist(), expected="collapses",
                 tolerance="reported", label="learned: ppl(256) / ppl(64), per seed")
    judge("POS-04", joint_record(claim_record, "POS-04", _collapses(t), PARTS),
          "learned positions collapse beyond the training length")


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("POS-07")
@reads(POS_CI)
def test_sinusoids_do_not_extrapolate(runs_of, claim_record):
    pos_ci = runs_of(POS_CI)
    _record_table(claim_record, "POS-07", pos_ci, "sinusoidal")
    judge("POS-07", joint_record(claim_record, "POS-07", _sinusoids_degrade(_table(pos_ci)), PARTS),
          "sinusoids do not extrapolate")


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("POS-09")
@reads(POS_CI)
def test_rope_degrades_beyond_the_training_length(runs_of, claim_record):
    pos_ci = runs_of(POS_CI)
    _record_table(claim_record, "POS-09", pos_ci, "rope")
    judge("POS-09", joint_record(claim_record, "POS-09", _rope_degrades_less(_table(pos_ci)), PARTS),
          "RoPE degrades, less than the absolute schemes")


@pytest.mark.slow
@pytest.mark.scale("ci")
@pytest.mark.claim("POS-11")
@reads(POS_CI)
def test_alibi_improves_as_the_window_grows(runs_of, claim_record):
    pos_ci = runs_of(POS_CI)
    t = _table(pos_ci)
    _record_table(claim_record, "POS-11", pos_ci, "alibi")
    claim_record("POS-11", np.round(t["alibi"][:, 2] / t["alibi"][:, 0], 4).tolist(),
                 expected=round(DOC_ALIBI[1] / DOC_ALIBI[0], 4), tolerance="reported", label="alibi: ppl(256) / ppl(64)")
    judge("POS-11", joint_record(claim_record, "POS-11", _alibi_improves(t), PARTS), "ALiBi improves as the window grows")


# Full scale: one test per claim, the same rules on POS_FULL's declared seeds.

@pytest.mark.gpu
@pytest.mark.claim("POS-01")
@reads(POS_FULL)
def test_without_positions_the_model_still_trains_at_full_scale(runs_of, shakespeare_tokens, claim_record):
    pos_full = runs_of(POS_FULL)
    from experiments.data import split
    from experiments.ngram import NGram
    tr, va = split(shakespeare_tokens)
    unigram = NGram(1, 1024, k=1.0).fit(tr).perplexity(va)
    t = _table(pos_full)
    claim_record("POS-01", np.round(t["none"][:, 0], 2).tolist(), expected="still trains", tolerance="reported",
                 label="no positions, val at 64 (full), per seed")
    judge("POS-01", interval(claim_record, "POS-01", t["none"][:, 0] - unigram, below(0),
                             f"comparison: the 90 % interval of the mean gap to the unigram's {unigram:.1f} below 0",
                             "no positions: val at 64 - unigram (full)"), "trains without positions")


@pytest.mark.gpu
@pytest.mark.claim("POS-04")
@reads(POS_FULL)
def test_learned_positions_win_then_collapse_at_full_scale(runs_of, claim_record, claim_figure):
    pos_full = runs_of(POS_FULL)
    t = _table(pos_full)
    claim_figure("POS-04", "positions_full_by_window", draw_positions(pos_full, "positions, full scale"))
    for p in POS_SCHEMES:
        _record_table(claim_record, "POS-04", pos_full, p)
    judge("POS-04", joint_record(claim_record, "POS-04", _wins(t) + _collapses(t), PARTS),
          "learned positions win at the training length and collapse beyond it")


@pytest.mark.gpu
@pytest.mark.claim("POS-07")
@reads(POS_FULL)
def test_sinusoids_do_not_extrapolate_at_full_scale(runs_of, claim_record):
    pos_full = runs_of(POS_FULL)
    judge("POS-07", joint_record(claim_record, "POS-07", _sinusoids_degrade(_table(pos_full)), PARTS),
          "sinusoids do not extrapolate")


@pytest.mark.gpu
@pytest.mark.claim("POS-09")
@reads(POS_FULL)
def test_rope_degrades_beyond_the_training_length_at_full_scale(runs_of, claim_record):
    pos_full = runs_of(POS_FULL)
    judge("POS-09", joint_record(claim_record, "POS-09", _rope_degrades_less(_table(pos_full)), PARTS),
          "RoPE degrades, less than the absolute schemes")


@pytest.mark.gpu
@pytest.mark.claim("POS-11")
@reads(POS_FULL)
def test_alibi_at_full_scale(runs_of, claim_record):
    pos_full = runs_of(POS_FULL)
    t = _table(pos_full)
    # each a trained number printed bare: the word table's +-5 % (docs/reference/statistics.md)
    near = [(f"alibi at {w} (full)", t["alibi"][:, i], (lambda doc: lambda lo, hi: within(lo, hi, (0.95 * doc, 1.05 * doc)))(doc))
            for w, i, doc in ((64, 0, DOC_ALIBI[0]), (256, 2, DOC_ALIBI[1]))]
    judge("POS-11", joint_record(claim_record, "POS-11", near + _alibi_improves(t),
                                 f"joint: each 90 % interval inside its number ± 5 % ({DOC_ALIBI[0]}, {DOC_ALIBI[1]}), "
                                 "each gap's above 0; one part outside only at its Bonferroni level"),
          "ALiBi near the text's numbers and improving with the window")
