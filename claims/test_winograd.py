"""IT 3.15 The Winograd toy task: the bag-of-words shortcut, the closed hole, the two-hop circuit."""

import numpy as np
import pytest
import torch

from model import GPT
from experiments.winograd import (ADJ_AT, ADJECTIVES, BATCH, CROSSED, CROSSER, NOUNS, QUERY_AT, REF_AT, X_AT, Y_AT,
                            Example, all_fixed_sentences, attention_rows, fixed_task, format_row,
                            leaky_task, model_config)
from claimcheck import diverges
from claimcheck.rules import (
    ALPHA,
    MAJORITY,
    MOST,
    TOST_LEVEL,
    judge_look,
    rate_text,
    sequential,
    starts,
    starts_joint,
    two_se,
)
from suite.catalogue import WINO_LOOKS, WINOGRAD
from suite.reading import reads

# ---- the generator: exact ------------------------------------------------------------------


@pytest.mark.fast
@pytest.mark.claim("WINO-01")
def test_each_pair_differs_in_one_word_and_that_word_moves_the_referent(claim_record):
    """"coppie di frasi identiche tranne che per una parola, dove quella parola decide a cosa si
    riferisce un pronome", on the task's generator: for every ordered pair of nouns and every
    crosser/crossed adjective, the two sentences as posed (up to the scored position) differ in
    the adjective alone, and the referent flips between the two nouns."""
    pairs = [(Example(x, y, a), Example(x, y, b)) for x in NOUNS for y in NOUNS if x != y
             for a in CROSSER for b in CROSSED]
    one_word = [sum(u != v for u, v in zip(e.words()[:QUERY_AT + 1], f.words()[:QUERY_AT + 1])) for e, f in pairs]
    flips = [{e.ref, f.ref} == {e.x, e.y} for e, f in pairs]
    n = claim_record("WINO-01", sum(d == 1 for d in one_word), expected=len(pairs), tolerance="exact",
                     label=f"pairs differing in exactly one word, of {len(pairs)}")
    k = claim_record("WINO-01", sum(flips), expected=len(pairs), tolerance="exact",
                     label=f"pairs whose one word moves the referent to the other noun, of {len(pairs)}")
    assert n == k == len(pairs) == 16 * 15 * 4 * 4


@pytest.mark.fast
@pytest.mark.claim("WINO-03")
def test_sixteen_nouns_fill_either_slot_and_adjectives_split_by_role(claim_record):
    assert len(NOUNS) == len(set(NOUNS)) == 16
    assert set(CROSSER) == {"tired", "scared", "slow", "weak"} and set(CROSSED) == {"wet", "wide", "busy", "steep"}
    every = all_fixed_sentences()
    assert all((e.ref == e.x) == (e.adj in CROSSER) for e in every)
    assert {e.x for e in every} == {e.y for e in every} == set(NOUNS)
    n = claim_record("WINO-03", len(set(every)), expected=1920, tolerance="exact", label="distinct sentences")
    assert n == 16 * 15 * 8 == 1920


@pytest.mark.fast
@pytest.mark.claim("WINO-04")
def test_the_template_and_the_scored_position(claim_record):
    e = Example("animal", "street", "tired")
    w = e.words()
    claim_record("WINO-04", {"words": len(w), "scored after": " ".join(w[REF_AT - 2: REF_AT]), "query at": QUERY_AT},
                 expected={"words": 18, "scored after": "so the", "query at": 14}, tolerance="exact",
                 label="template length, the two words before the scored one, the query position")
    assert " ".join(w) == "the animal did not cross the street because it was too tired , so the animal waited ."
    assert len(w) == 18 and (w[X_AT], w[Y_AT], w[ADJ_AT], w[REF_AT]) == ("animal", "street", "tired", "animal")
    assert w[REF_AT - 2: REF_AT] == ["so", "the"] and QUERY_AT == 14  # predicted from "the" at 14
    assert len(w[:QUERY_AT + 1]) == 15


@pytest.mark.fast
@pytest.mark.claim("WINO-05")
def test_held_out_pairs_are_reversals_of_training_pairs(claim_record):
    task = fixed_task()
    train = {(e.x, e.y) for e in task.train}
    held = {(e.x, e.y) for e in task.held_out}
    assert held and all((y, x) in train and (x, y) not in train for x, y in held)
    # a model that knows which two nouns and which adjective, but not their order, is fooled
    lookup = {(frozenset((e.x, e.y)), e.adj): e.ref for e in task.train}
    acc = np.mean([lookup[frozenset((e.x, e.y)), e.adj] == e.ref for e in task.held_out])
    claim_record("WINO-05", acc, expected="≤ 50 %", tolerance="exact: <= 0.5", label="order-blind lookup, held out")
    assert acc <= 0.5


@pytest.mark.fast
@pytest.mark.claim("WINO-06")
def test_chance_between_the_two_nouns_is_one_half(claim_record):
    every = all_fixed_sentences()
    claim_record("WINO-06", sum(e.ref == e.x for e in every) / len(every), expected=0.5, tolerance="exact",
                 label="share of all sentences whose referent is the first noun")
    assert sum(e.ref == e.x for e in every) / len(every) == 0.5  # 4 of 8 adjectives point at x
    for task in (fixed_task(), leaky_task()):
        assert sum(e.ref == e.x for e in task.held_out) / len(task.held_out) == 0.5


@pytest.mark.fast
@pytest.mark.claim("WINO-08")
def test_a_uniform_average_puts_0_067_on_each_of_15_tokens(claim_record):
    prefix = Example("animal", "street", "tired").words()[:QUERY_AT + 1]
    assert len(prefix) == 15
    assert round(claim_record("WINO-08", 1 / len(prefix), expected=0.067, tolerance="exact: rounds to 3 dp"), 3) == 0.067


@pytest.mark.fast
@pytest.mark.claim("WINO-13")
def test_the_maps_average_each_blocks_four_heads_at_the_referent_naming_position(claim_record):
    """"l'attention alla posizione che deve nominare il referente, mediata sulle quattro heads di
    ogni block": the maps' code (experiments.winograd.attention_rows) on a two-block model of the
    task, against the per-head weights it reads."""
    from model import capture_attention
    task = fixed_task()
    torch.manual_seed(0)
    m = GPT(model_config(task, "2-blocks")).double()
    e = Example("animal", "street", "tired")
    rows = attention_rows(m, task, e)
    with capture_attention(m) as maps, torch.no_grad():
        m.eval()
        m(task.encode([e])[:, :QUERY_AT + 1])
    heads = claim_record("WINO-13", [mp.weights.shape[1] for mp in maps], expected=[4, 4], tolerance="exact",
                         label="heads per block (2 blocks)")
    gap = claim_record("WINO-13", max((r - mp.weights[0, :, QUERY_AT, :].mean(0)).abs().max().item() for r, mp in zip(rows, maps)),
                       tolerance="exact: atol 1e-12 (float64)", label="the maps' row against the mean of the 4 heads' rows")
    named = claim_record("WINO-13", e.words()[QUERY_AT + 1], expected=e.ref, tolerance="exact",
                         label="the word predicted from the maps' position (the referent)")
    assert heads == [4, 4] and gap <= 1e-12 and named == e.ref


# The chapter's printed map (IT L224-233): (adjective, block) -> {token position: weight}, every
# cell it prints; the words are the sentence's up to the referent-naming position.
MAP_WORDS = {adj: Example("animal", "street", adj).words()[:QUERY_AT + 1] for adj in ("tired", "wet")}
PRINTED_MAP = {
    ("tired", 1): [0.00, 0.70, 0.00, 0.00, 0.00, 0.00, 0.06, 0.00, 0.00, 0.00, 0.00, 0.00, 0.05, 0.00, 0.19],
    ("tired", 2): [0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 1.00, 0.00, 0.00, 0.00],
    ("wet", 1): [0.00, 0.70, 0.00, 0.00, 0.00, 0.00, 0.06, 0.00, 0.00, 0.00, 0.00, 0.00, 0.05, 0.00, 0.19],
    ("wet", 2): [0.00, 0.00, 0.00, 0.00, 0.03, 0.00, 0.49, 0.00, 0.00, 0.00, 0.20, 0.03, 0.00, 0.00, 0.25],
}


@pytest.mark.fast
@pytest.mark.claim("WINO-14")
def test_the_printed_map_rows_are_averaged_softmax_rows_over_the_visible_tokens(request, claim_record):
    """The four printed rows, read as the maps' code prints them (format_row): one weight per visible
    token in the sentence's order, ending at the referent-naming "the" (position 14); each an average
    of four softmax rows, so summing to 1 within the print's rounding (15 cells, each to +-0.005)."""
    printed = {key: format_row(MAP_WORDS[key[0]], torch.tensor(row)) for key, row in PRINTED_MAP.items()}
    claim_record("WINO-14", {f"{adj}, block {b}": line for (adj, b), line in printed.items()},
                 tolerance="reported: one trained model's cells (no seed is printed, so another start's map differs "
                           "cell by cell); the text reads 0,70 (WINO-09), tired 1,00 and street 0,49 (WINO-10)",
                 label="the chapter's rows, as the maps' code prints them")
    sums = claim_record("WINO-14", {f"{adj}, block {b}": round(sum(row), 2) for (adj, b), row in PRINTED_MAP.items()},
                        expected=1.0, tolerance="exact: |sum - 1| <= 15 x 0.005, the rounding of 15 printed cells",
                        label="each printed row's sum")
    from claimcheck.session import registry_of
    chapter = " ".join(registry_of(request.config).sources["IT"].text().split())  # the print's own spacing aside
    assert all(f"blk {b} {line}" in chapter for (_, b), line in printed.items())  # the rows as typed here are the chapter's
    assert all(len(row) == len(MAP_WORDS[adj]) == QUERY_AT + 1 for (adj, _), row in PRINTED_MAP.items())
    assert all(MAP_WORDS[adj][QUERY_AT] == "the" for adj in MAP_WORDS)
    assert all(abs(x - 1) <= 15 * 0.005 for x in sums.values())


@pytest.mark.fast
@pytest.mark.claim("WINO-14")
def test_the_printed_block_1_rows_keep_their_ratios_off_the_adjective(claim_record):
    """A first layer's query at 14 is the same for the pair, and so is every key but the adjective's
    (test_in_block_1_only_the_adjectives_own_key_can_differ): off the adjective, the two block-1
    rows are one row times a constant. The printed rows: the same cells, to the print's rounding."""
    off = [i for i in range(QUERY_AT + 1) if i != ADJ_AT]
    a, b = (np.array(PRINTED_MAP[(adj, 1)])[off] for adj in ("tired", "wet"))
    scale = b.sum() / a.sum()
    gap = claim_record("WINO-14", round(float(np.abs(b - scale * a).max()), 4), expected=0,
                       tolerance="exact: <= 0.01, the rounding of two printed cells",
                       label="block 1, wet's row against tired's off the adjective, rescaled: largest cell difference")
    assert gap <= 0.01


def _block1_rows():
    """Block 1's scores and weights at the scored position for "tired" and "wet", one
    random-weight two-block model in float64: ((scores, weights) per adjective, (heads, 15))."""
    task = fixed_task()
    torch.manual_seed(0)
    m = GPT(model_config(task, "2-blocks")).double().eval()
    from model import capture_attention
    rows = []
    for adj in ("tired", "wet"):
        with capture_attention(m) as maps, torch.no_grad():
            m(task.encode([Example("animal", "street", adj)])[:, :QUERY_AT + 1])
        rows.append((maps[0].scores[0, :, QUERY_AT], maps[0].weights[0, :, QUERY_AT]))
    return rows


@pytest.mark.fast
@pytest.mark.claim("WINO-09")
def test_in_block_1_only_the_adjectives_own_key_can_differ():
    """Any weights: layer 1's query at 14 depends on "the" and 14 alone, and every key but the
    adjective's is the same in both sentences. So per head, w_i / w_j is identical across the
    pair for i, j != 11; only the adjective's weight (and the renormalisation) can move."""
    (s1, w1), (s2, w2) = _block1_rows()
    keep = [i for i in range(QUERY_AT + 1) if i != ADJ_AT]
    assert torch.equal(s1[:, keep], s2[:, keep])  # the same query against the same keys
    r1, r2 = w1[:, keep] / w1[:, keep[:1]], w2[:, keep] / w2[:, keep[:1]]
    torch.testing.assert_close(r1, r2, rtol=1e-12, atol=0)


@pytest.mark.fast
@pytest.mark.claim("WINO-09")
@diverges("the first layer fixes the query, not the row: the adjective's own key moves its weight and, through "
          "the renormalisation, every other weight, so the architecture does not make block 1 'identico' for the "
          "pair (difference in the report)")
def test_in_block_1_the_pairs_rows_are_identical_to_two_decimals(claim_record):
    """"Il Block 1 è identico in entrambe le frasi": the largest difference between the pair's
    block-1 rows, at random weights, against the chapter's two decimals."""
    (_, w1), (_, w2) = _block1_rows()
    diff = claim_record("WINO-09", round((w1 - w2).abs().max().item(), 4), expected="identical to 2 decimals",
                        tolerance="exact: < 0.005, half a unit of the chapter's second decimal (docs/reference/statistics.md)",
                        label="block-1 row difference between the pair, random weights")
    assert diff < 0.005


# ---- training at the chapter's scale (slow) --------------------------------------------------
#
# The chapter reports one trained model of each kind. Whether a small model escapes a plateau is
# a coin that rounding can flip, so every sentence about what training produces is judged as a
# rate over 10 starts (claimcheck.rules: starts, most starts), never on every seed.

STEPS = WINOGRAD.arm_steps()

# Each check below is one test's rule as a function of the runs, so that the claim's diagnosis
# (suite/diagnosis_grids.py WINOGRAD_GRIDS) applies the same rule at every point of its grid. ``checkpoint``
# reads held-out scores at the last step or the best one; ``sentence`` reads the maps of the
# chapter's sentence (a training pair) or of a held-out one.


def bag_is_perfect(runs, checkpoint="final"):
    """starts where the bag of words is perfect (leaky)"""
    return runs.final("leaky", "bag", checkpoint=checkpoint) == 1.0


def bag_beats_one_block(runs, checkpoint="final"):
    """starts where the bag beats one block (leaky, same seed)"""
    return runs.final("leaky", "bag", checkpoint=checkpoint) > runs.final("leaky", "1-block", checkpoint=checkpoint)


def one_block_near_91_7(runs, checkpoint="final"):
    """starts where one block lands near 91.7 % (leaky)"""
    # the table's "91.7 %": one trained model's share of the held-out sentences, two binomial SE
    one = runs.final("leaky", "1-block", checkpoint=checkpoint)
    return np.abs(one - 0.917) <= two_se(0.917, runs.held_out("leaky", checkpoint))


def bag_at_chance_wrong_half(runs, checkpoint="final"):
    """starts at chance between the two nouns and wrong on half (fixed)"""
    pair = runs.final("fixed", "bag", "pair_accuracy", checkpoint)
    wrong = runs.final("fixed", "bag", "wrong_noun", checkpoint)
    n = runs.held_out("fixed", checkpoint)
    chance = pair <= 0.5 + two_se(0.5, n)  # no better than chance between the two
    half = np.abs(wrong - 0.5) <= two_se(0.5, n)  # "esattamente metà": a share of n items (docs/reference/statistics.md)
    return chance & half


def bag_scores_27_9(runs, checkpoint="final"):
    """starts within 2 binomial SE of 27.9 % (fixed, bag)"""
    return np.abs(runs.final("fixed", "bag", checkpoint=checkpoint) - 0.279) <= two_se(0.279, runs.held_out("fixed", checkpoint))


def two_blocks_solve(runs, checkpoint="final"):
    """starts where two blocks reach 100 % (fixed)"""
    # "100 %" printed to the unit: at least 99.5 %, wider than two binomial SE of a count of 100 % (zero)
    return runs.final("fixed", "2-blocks", checkpoint=checkpoint) >= 0.995


def one_block_band(runs, checkpoint="final") -> float:
    return two_se(0.927, runs.held_out("fixed", checkpoint))


def one_block_short_near_92_7(runs, checkpoint="final"):
    """starts where one block falls short of two, near 92.7 % (fixed)"""
    one = runs.final("fixed", "1-block", checkpoint=checkpoint)
    two = runs.final("fixed", "2-blocks", checkpoint=checkpoint)
    return (one < two) & (np.abs(one - 0.927) <= one_block_band(runs, checkpoint))


def _rows(runs, adj, block, sentence="trained"):
    key = {"trained": "rows", "held-out": "rows_held"}[sentence]
    return np.array([runs.record("fixed", "2-blocks", s)[key][adj][block] for s in runs.seeds])  # (seeds, 15)


def block1_on_first_noun(runs, sentence="trained"):
    """starts whose block 1 puts 0.70 +- 0.15 on the first noun (tired)"""
    # "0,70 sul primo nome": one trained model's two decimals, read as block 2's 0.49 is (+-0.15)
    return np.abs(_rows(runs, "tired", 0, sentence)[:, X_AT] - 0.70) <= 0.15


def block1_rows_identical(runs, sentence="trained"):
    """starts whose block-1 rows agree to 2 decimals for every crosser/crossed pair"""
    return np.all([(_rows(runs, a, 0, sentence).round(2) == _rows(runs, b, 0, sentence).round(2)).all(-1)
                   for a, b in zip(CROSSER, CROSSED)], axis=0)


def block2_fetches_other_noun(runs, sentence="trained"):
    """starts whose block 2 puts 0.49 +- 0.15 on the other noun, its largest weight (wet)"""
    # the chapter's "wet" row: street 0.49, the largest weight. One trained model's two decimals:
    # another model with the same circuit splits the rest differently, so +-0.15 (30 %) around
    # 0.49, and the other noun must stay the row's largest weight, which is what "fetch" says
    rows = _rows(runs, "wet", 1, sentence)  # (seeds, 15): the chapter's printed row
    return (np.abs(rows[:, Y_AT] - 0.49) <= 0.15) & (rows.argmax(-1) == Y_AT)


def block2_reads_crosser_adjective(runs, sentence="trained"):
    """starts where every crosser adjective holds all of block 2's weight (>= 0.995)"""
    # "tutto il proprio peso sull'aggettivo", the map's "tired 1.00": all of it, to half a unit of
    # the printed second decimal (as WINO-11's "100 %" is read)
    on_adj = {a: _rows(runs, a, 1, sentence)[:, ADJ_AT] for a in CROSSER}
    return np.array([all(on_adj[a][i] >= 0.995 for a in CROSSER) for i in range(len(runs.seeds))])


def block2_rule_on_all_eight(runs, sentence="trained"):
    """starts where block 2's row follows the rule on all eight adjectives"""
    # "la stessa riga su tutti e otto gli aggettivi mostra la regola": every crossed adjective sends
    # block 2 to the other noun (more weight there than on the adjective), and the crossed ones put
    # more on the other noun than the crosser ones do (the crosser side, all of the weight on the
    # adjective, is block2_reads_crosser_adjective)
    on_adj = {a: _rows(runs, a, 1, sentence)[:, ADJ_AT] for a in ADJECTIVES}
    on_y = {a: _rows(runs, a, 1, sentence)[:, Y_AT] for a in ADJECTIVES}
    return np.array([all(on_y[a][i] > on_adj[a][i] for a in CROSSED)
                     and np.mean([on_y[a][i] for a in CROSSED]) > np.mean([on_y[a][i] for a in CROSSER])
                     for i in range(len(runs.seeds))])


# a claim's rule at a grid point: every one of its tests' checks holds there
CHECKS = {"WINO-02": (bag_is_perfect, bag_beats_one_block, one_block_near_91_7),
          "WINO-07": (bag_at_chance_wrong_half, bag_scores_27_9),
          "WINO-09": (block1_on_first_noun, block1_rows_identical),
          "WINO-10": (block2_fetches_other_noun, block2_reads_crosser_adjective, block2_rule_on_all_eight),
          "WINO-11": (two_blocks_solve, one_block_short_near_92_7)}


@pytest.mark.fast
def test_each_grid_splits_its_level_over_the_claims_checks():
    """A grid point is judged at 90 % over its points and its claim's checks (suite.diagnosis
    grid_level): each Winograd grid declares as many checks as its claim's rule joins."""
    assert {c: g.checks for c, g in WINOGRAD_GRIDS.items()} == {c: len(v) for c, v in CHECKS.items()}


def of_checks(claim: str) -> str:
    """A check's tolerance: the start count, and the Bonferroni split over the claim's checks."""
    n = len(CHECKS[claim])
    words = {1: "one check", 2: "two checks", 3: "three checks", 4: "four checks"}
    return f"{MOST}; shown below only at alpha / {n}, for the claim's {words.get(n, f'{n} checks')} (Bonferroni)"


def check_rate(claim: str, ok, alpha: float = ALPHA) -> dict:
    """One of a claim's checks as a start count: it holds at alpha, and diverges only at alpha over
    the claim's checks (Bonferroni), as the claim's rule at a grid point judges it (``claim_rule``)."""
    r = starts(ok, MAJORITY, alpha)
    wide = starts(ok, MAJORITY, alpha / len(CHECKS[claim]))
    return dict(r, holds=True if r["holds"] else False if wide["holds"] is False else None)


def decide_check(claim_record, claim: str, check, runs, expected, tolerance: str | None = None) -> None:
    """One check of a claim on the starts of ``runs`` (``winograd_looks``), at the looks of
    catalogue.WINO_LOOKS: each look's count at alpha / J (to diverge, alpha / J over the claim's
    checks); the deciding (or last) look's count recorded, and asserted in the calling test."""
    ok = check(runs)
    look = sequential(WINO_LOOKS, len(ok), lambda n, _level, alpha: (lambda r: (r["holds"], r))(
        check_rate(claim, ok[:n], alpha)))
    tolerance = tolerance or of_checks(claim)
    if look.index:
        claim_record(claim, rate_text(look.shown), expected=expected, tolerance=f"{tolerance}; sequential: {WINO_LOOKS.text()}",
                     label=f"{check.__doc__}: the first {look.n} starts, look {look.index} of {len(WINO_LOOKS.looks)}")
    judge_look(claim, look, check.__doc__)


def read_options(claim: str) -> set:
    """The read options every check of the claim takes: what its rule passes on."""
    import inspect
    return set.intersection(*(set(inspect.signature(c).parameters) - {"runs"} for c in CHECKS[claim]))


def claim_rule(claim: str):
    """The claim's rule at a grid point: its checks as one start count of several parts
    (suite/rules.py starts_joint), at ``level``'s alpha (a grid's Bonferroni level)."""
    def rule(runs, level=TOST_LEVEL, **read):
        shown, holds = starts_joint([(check(runs, **read), MAJORITY) for check in CHECKS[claim]],
                                    alpha=(1 - level) / 2)
        return {check.__doc__: rate_text(r) for check, r in zip(CHECKS[claim], shown)}, holds
    return rule


@pytest.mark.slow
@pytest.mark.scale("full")
@pytest.mark.claim("WINO-02")
@diverges("the bag of words is near-perfect on the leaky task, not perfect: held-out accuracy "
          "below 100 % on most seeds (per-seed accuracies in the report)")
@reads(WINOGRAD)
def test_on_the_leaky_task_the_bag_of_words_is_perfect(runs_of, winograd_looks, claim_record):
    winograd = runs_of(WINOGRAD)
    claim_record("WINO-02", winograd.final("leaky", "bag"), expected=1.0, tolerance="reported",
                 label="bag of words, held out, per seed", subject=True)
    decide_check(claim_record, "WINO-02", bag_is_perfect, winograd_looks, expected="100 %")


@pytest.mark.slow
@pytest.mark.scale("full")
@pytest.mark.claim("WINO-02")
@diverges("one block also solves the leaky task, so 'the bag of words "
                   "beats the transformer' does not reproduce (per-seed accuracies in the report)")
@reads(WINOGRAD)
def test_on_the_leaky_task_the_bag_of_words_beats_one_block(runs_of, winograd_looks, claim_record):
    winograd = runs_of(WINOGRAD)
    claim_record("WINO-02", winograd.final("leaky", "1-block"), expected=0.917, tolerance="reported",
                 label="one block, held out, per seed")
    decide_check(claim_record, "WINO-02", bag_beats_one_block, winograd_looks, expected="bag > one block")


@pytest.mark.slow
@pytest.mark.scale("full")
@pytest.mark.claim("WINO-02")
@diverges("one block is not near the table's 91.7 % on the leaky task on most starts: it reaches 100 % "
          "on most (per-seed accuracies in the report)")
@reads(WINOGRAD)
def test_on_the_leaky_task_one_block_lands_near_91_7_percent(winograd_looks, claim_record):
    """The table's "one transformer block … 91.7 %": within two binomial SE of the held-out count
    (the word table's row for a percentage one trained model scored on n items), on most starts.
    Rule written before this check first ran; WINO-02's checks are now three (Bonferroni)."""
    decide_check(claim_record, "WINO-02", one_block_near_91_7, winograd_looks, expected=0.917)


@pytest.mark.slow
@pytest.mark.scale("full")
@pytest.mark.claim("WINO-07")
@reads(WINOGRAD)
def test_the_bag_of_words_cannot_order_the_pair(runs_of, winograd_looks, claim_record):
    winograd = runs_of(WINOGRAD)
    n = winograd.held_out("fixed")
    claim_record("WINO-07", winograd.final("fixed", "bag", "pair_accuracy"), expected=0.5,
                 tolerance=f"start count, per start: <= 0.5 + 2 SE per seed (n={n})", label="bag: correct noun of the pair, per seed")
    claim_record("WINO-07", winograd.final("fixed", "bag", "wrong_noun"), expected=0.5,
                 tolerance=f"start count, per start: within ±{two_se(0.5, n):.3f} of 1/2 per seed (2 binomial SE: 'esattamente metà', docs/reference/statistics.md)",
                 label="bag: answers the wrong noun of the pair, per seed")
    decide_check(claim_record, "WINO-07", bag_at_chance_wrong_half, winograd_looks, expected="half")


@pytest.mark.slow
@pytest.mark.scale("full")
@pytest.mark.claim("WINO-07")
@diverges("the bag's accuracy over the whole vocabulary is not 27.9 %: "
                   "it puts its answer on one of the two nouns (per-seed accuracies in the report)")
@reads(WINOGRAD)
def test_the_bag_of_words_scores_27_9_percent(runs_of, winograd_looks, claim_record):
    winograd = runs_of(WINOGRAD)
    claim_record("WINO-07", winograd.final("fixed", "bag"), expected=0.279,
                 tolerance=f"start count, per start: ±{two_se(0.279, winograd.held_out('fixed')):.3f} per seed (2 binomial SE of 27.9 %, docs/reference/statistics.md)",
                 label="bag: accuracy over the vocabulary, per seed", subject=True)
    decide_check(claim_record, "WINO-07", bag_scores_27_9, winograd_looks, expected=0.279)


@pytest.mark.slow
@pytest.mark.scale("full")
@pytest.mark.claim("WINO-11")
@reads(WINOGRAD)
def test_two_blocks_solve_the_fixed_task(runs_of, winograd_looks, claim_record, claim_figure):
    winograd = runs_of(WINOGRAD)
    claim_record("WINO-11", winograd.final("fixed", "2-blocks"), expected=1.0, tolerance="start count, per start: >= 0.995 ('100 %' to half a unit of its digit)",
                 label="two blocks, held out, per seed")
    claim_figure("WINO-11", "winograd_accuracy_vs_steps", _draw_curves(winograd))
    decide_check(claim_record, "WINO-11", two_blocks_solve, winograd_looks, expected="100 %")


@pytest.mark.slow
@pytest.mark.scale("full")
@pytest.mark.claim("WINO-11")
@diverges("one block reaches 100 % on some seeds: it does not fall short of two blocks on most starts, "
          "nor land near 92.7 % (per-seed accuracies in the report)")
@reads(WINOGRAD)
def test_one_block_falls_short_of_two_near_92_7_percent(runs_of, winograd_looks, claim_record):
    winograd = runs_of(WINOGRAD)
    claim_record("WINO-11", winograd.final("fixed", "1-block"), expected=0.927,
                 tolerance=f"start count, per start: below two blocks and within ±{one_block_band(winograd):.3f} (2 binomial SE)",
                 label="one block, held out, per seed", subject=True)
    decide_check(claim_record, "WINO-11", one_block_short_near_92_7, winograd_looks, expected=0.927)


def _draw_curves(winograd):
    def draw(fig):
        axes = fig.subplots(1, 2, sharey=True)
        fig.set_size_inches(11, 4)
        for ax, task in zip(axes, ("leaky", "fixed")):
            for kind, colour in (("bag", "tab:gray"), ("1-block", "tab:blue"), ("2-blocks", "tab:red")):
                if (task, kind) not in STEPS:  # no two-block model on the leaky task, as in the chapter
                    continue
                for s in WINOGRAD.seeds:
                    c = winograd.record(task, kind, s)["curve"]
                    ax.plot([p["step"] for p in c], [p["accuracy"] for p in c], color=colour, alpha=0.6,
                            label=kind if s == WINOGRAD.seeds[0] else None)
            ax.axhline(0.5, color="k", lw=0.5, ls=":")
            ax.set(title=f"{task} task, held out", xlabel="step", ylabel="accuracy")
            ax.legend()
    return draw


def _printed(winograd, block, claim_id, claim_record):
    """The chapter's print, token:weight, for "tired" and "wet" on every seed."""
    for i, s in enumerate(WINOGRAD.seeds):
        for adj in ("tired", "wet"):
            words = Example("animal", "street", adj).words()[:QUERY_AT + 1]
            claim_record(claim_id, format_row(words, torch.tensor(_rows(winograd, adj, block)[i])),
                         label=f"seed {s}, {adj}, block {block + 1}")


@pytest.mark.slow
@pytest.mark.scale("full")
@pytest.mark.claim("WINO-09")
@diverges("in our trained models block 1 does not concentrate on the "
                   "first noun at the scored position (per-seed rows in the report)")
@reads(WINOGRAD)
def test_block_1_carries_the_first_noun_forward(runs_of, winograd_looks, claim_record, claim_figure):
    winograd = runs_of(WINOGRAD)
    claim_record("WINO-09", _rows(winograd, "tired", 0)[:, X_AT].round(2).tolist(), expected=0.70, tolerance="start count, per start: 0.70 ± 0.15",
                 label="block 1, weight on the first noun (tired), per seed", subject=True)
    _printed(winograd, 0, "WINO-09", claim_record)
    claim_figure("WINO-09", "winograd_maps", _draw_maps(winograd))
    decide_check(claim_record, "WINO-09", block1_on_first_noun, winograd_looks, expected=0.70)


@pytest.mark.slow
@pytest.mark.scale("full")
@pytest.mark.claim("WINO-09")
@diverges("block 1's row differs between 'tired' and 'wet': the query is "
                   "the same, but the adjective's own key moves its weight (rows in the report)")
@reads(WINOGRAD)
def test_block_1_rows_are_identical_for_the_pair_to_two_decimals(winograd_looks, claim_record):
    decide_check(claim_record, "WINO-09", block1_rows_identical, winograd_looks, expected="identical to 2 decimals")


@pytest.mark.slow
@pytest.mark.scale("full")
@pytest.mark.claim("WINO-10")
@diverges("block 2 does not put about 0.49 on the other noun, as its largest weight, on most starts: "
          "the chapter's one model is not what training typically produces (rate and rows in the report)")
@reads(WINOGRAD)
def test_block_2_fetches_the_other_noun_for_a_crossed_adjective(runs_of, winograd_looks, claim_record):
    winograd = runs_of(WINOGRAD)
    _printed(winograd, 1, "WINO-10", claim_record)
    claim_record("WINO-10", _rows(winograd, "wet", 1)[:, Y_AT].round(2).tolist(), expected=0.49,
                 tolerance="start count, per start: ±0.15, and the row's largest", label="block 2, weight on the other noun (wet), per seed")
    decide_check(claim_record, "WINO-10", block2_fetches_other_noun, winograd_looks, expected=0.49)


@pytest.mark.slow
@pytest.mark.scale("full")
@pytest.mark.claim("WINO-10")
@reads(WINOGRAD)
def test_block_2_follows_the_rule_on_all_eight_adjectives(winograd_looks, claim_record):
    """"la stessa riga su tutti e otto gli aggettivi mostra la regola trovata dal modello": the rule
    on every adjective of the task, on most starts (block2_rule_on_all_eight). Judged from this
    commit; it was recorded before as \"reported: the rule over all 8 adjectives\"."""
    decide_check(claim_record, "WINO-10", block2_rule_on_all_eight, winograd_looks, expected="the rule on all eight")


@pytest.mark.slow
@pytest.mark.scale("full")
@pytest.mark.claim("WINO-10")
@diverges("for crosser adjectives block 2 does not put all its weight on the adjective on most "
          "starts (counts and rows in the report), although two blocks reach 100 %")
@reads(WINOGRAD)
def test_block_2_reads_the_adjective_for_a_crosser_adjective(runs_of, winograd_looks, claim_record):
    winograd = runs_of(WINOGRAD)
    weight = np.mean([_rows(winograd, a, 1)[:, ADJ_AT] for a in CROSSER], 0)  # (seeds,)
    claim_record("WINO-10", weight.round(3).tolist(), expected=1.0, tolerance="reported: what the correction reads",
                 label="block 2, weight on the adjective (crosser adjectives, mean), per seed", subject=True)
    decide_check(claim_record, "WINO-10", block2_reads_crosser_adjective, winograd_looks, expected="all its weight",
                 tolerance=f"{of_checks('WINO-10')}; per start: weight >= 0.995 on every crosser adjective "
                           "('tutto il proprio peso', the map's 1.00 at half a unit)")


def _draw_maps(winograd):
    def draw(fig):
        words = Example("animal", "street", "ADJ").words()[:QUERY_AT + 1]
        axes = fig.subplots(2, 1)
        fig.set_size_inches(10, 6)
        for block, ax in enumerate(axes):
            m = np.array([_rows(winograd, adj, block)[0] for adj in ADJECTIVES])  # seed 0
            ax.imshow(m, cmap="viridis", vmin=0, vmax=1, aspect="auto")
            ax.set(yticks=range(8), xticks=range(15), title=f"block {block + 1}, row at 'the' (14), seed {WINOGRAD.seeds[0]}")
            ax.set_yticklabels(ADJECTIVES)
            ax.set_xticklabels(words, rotation=45, ha="right")
        fig.tight_layout()
    return draw


@pytest.mark.slow
@reads(WINOGRAD, fresh=True)
def test_the_winograd_runs_match_their_pin(runs_of, pin):
    """Means over the 10 starts of the held-out scores and of the attention rows: a per-seed pin
    would pin the machine (one start escapes its plateau on one CPU and not on another), a mean of
    10 moves by at most 1/10 of a turned start. Any change to the task, the models or the trainer
    moves them further."""
    winograd = runs_of(WINOGRAD)
    values = {f"{t}/{k}/{m}": winograd.final(t, k, m).mean() for (t, k) in STEPS
              for m in ("accuracy", "pair_accuracy", "wrong_noun")}
    for adj in ("tired", "wet"):
        for block in (0, 1):
            values[f"rows/{adj}/block{block + 1}"] = _rows(winograd, adj, block).mean(0)
    pin("winograd", values, meaning=f"held-out accuracy per (task, model), mean over seeds {WINOGRAD.seeds[0]}-{WINOGRAD.seeds[-1]}; "
        "head-averaged attention rows at position 14 of the 2-block model, the chapter's sentence, mean over seeds",
        config={"steps": {f"{t}/{k}": v for (t, k), v in STEPS.items()}, "seeds": WINOGRAD.seeds,
                "d_model": WINOGRAD.d_model, "lr": WINOGRAD.lr, "batch": BATCH,
                "held_pairs": {t: WINOGRAD.held_pairs(t) for t in ("leaky", "fixed")}})


# ---- the diagnosis: the same checks at every point of each claim's grid ---------------------
# suite/diagnosis_grids.py WINOGRAD_GRIDS, declared before their results; the points' runs are committed
# records (python -m suite.evidence winograd), the stated point the verdict's own runs.

from suite.evidence.winograd import point_runs as winograd_point_runs  # noqa: E402
from suite.diagnosis import diagnosis_test  # noqa: E402
from suite.diagnosis_grids import WINOGRAD_GRIDS  # noqa: E402

test_wino02_diagnosis = diagnosis_test(WINOGRAD_GRIDS["WINO-02"], claim_rule("WINO-02"), winograd_point_runs, "slow",
                                       stated=True, accepts=read_options("WINO-02"))
test_wino07_diagnosis = diagnosis_test(WINOGRAD_GRIDS["WINO-07"], claim_rule("WINO-07"), winograd_point_runs, "slow",
                                       stated=True, accepts=read_options("WINO-07"))
test_wino09_diagnosis = diagnosis_test(WINOGRAD_GRIDS["WINO-09"], claim_rule("WINO-09"), winograd_point_runs, "slow",
                                       stated=True, accepts=read_options("WINO-09"))
test_wino10_diagnosis = diagnosis_test(WINOGRAD_GRIDS["WINO-10"], claim_rule("WINO-10"), winograd_point_runs, "slow",
                                       stated=True, accepts=read_options("WINO-10"))
test_wino11_diagnosis = diagnosis_test(WINOGRAD_GRIDS["WINO-11"], claim_rule("WINO-11"), winograd_point_runs, "slow",
                                       stated=True, accepts=read_options("WINO-11"))


# ---- WINO-12: the induction circuit, built by hand ----------------------------------------------

def _induction(x: torch.Tensor, V: int, beta: float = 30.0, with_prev: bool = True):
    """A two-layer attention-only circuit on tokens ``x`` (B, T), written by hand with the suite's
    ``attend``: the residual stream is [token | position | previous token], one-hot blocks.
    Layer 1, the previous-token head: position t's query names position t - 1, every key is its
    own position, the value its token, written into the previous-token block. Layer 2: t's query
    is its token, each key the previous-token block, the value the token; the logits read it.
    Returns (logits (B, T, V), layer 1's weights, layer 2's weights), each (B, T, T)."""
    from model.attention import attend
    B, T = x.shape
    tok = torch.nn.functional.one_hot(x, V).double()                                # (B, T, V)
    pos = torch.eye(T, dtype=torch.float64).expand(B, T, T)                         # (B, T, T)
    maps = []
    probe = lambda s, w: maps.append(w)  # noqa: E731
    q1 = beta * torch.roll(pos, -1, dims=-1)  # t's query: one-hot of t - 1 (t = 0 names T - 1, masked)
    prev = attend(q1, pos, tok, scale=False, probe=probe)                           # (B, T, V)
    if not with_prev:
        prev = torch.zeros_like(prev)  # layer 1 ablated: nothing reaches layer 2's keys
    out = attend(beta * tok, prev, tok, scale=False, probe=probe)                   # (B, T, V)
    return out, maps[0], maps[1]


@pytest.mark.fast
@pytest.mark.scale("analytic")
@pytest.mark.claim("WINO-12")
def test_a_previous_token_head_feeding_a_head_in_the_next_layer_completes_the_pattern(claim_record):
    """"una previous-token head che alimenta una head nel layer successivo che completa il pattern
    [A][B] … [A] → [B]": the circuit the sentence describes, built by hand (no training: that
    trained models form it, and where in pretraining, is the literature's, not tested). On 1,000
    sequences of a start token, 12 distinct tokens of 24, then the same 12, at every position of the
    repeat whose next token is in the sequence: with the previous-token head, the argmax is the
    next token on every one ("completa": exact); with layer 1's output zeroed, on fewer than half
    ("alimenta": the second head needs the first). Rule written before the test first ran."""
    V, half, n = 24, 12, 1000
    g = torch.Generator().manual_seed(0)
    first = torch.stack([torch.randperm(V, generator=g)[:half] for _ in range(n)])  # (n, half)
    start = torch.full((n, 1), V)  # token V: position 0 has no previous token, so one it never matches
    x = torch.cat([start, first, first], 1)                                         # (n, 1 + 2 half)
    at = torch.arange(half + 1, 2 * half)  # [A] at t repeats t - half; its [B] is x[t + 1]
    logits, w1, w2 = _induction(x, V + 1)
    hit = (logits[:, at].argmax(-1) == x[:, at + 1]).double().mean().item()
    ablated = (_induction(x, V + 1, with_prev=False)[0][:, at].argmax(-1) == x[:, at + 1]).double().mean().item()
    t = torch.arange(1, 2 * half + 1)
    claim_record("WINO-12", round(w1[:, t, t - 1].mean().item(), 6), tolerance="reported: the construction's",
                 label="layer 1: mean weight on the previous token")
    claim_record("WINO-12", round(w2[:, at, at - half + 1].mean().item(), 6), tolerance="reported: the construction's",
                 label="layer 2: mean weight on the token after [A]'s earlier occurrence")
    hit = claim_record("WINO-12", hit, expected=1.0, tolerance="exact",
                       label="[B] predicted after the repeated [A], previous-token head in place")
    ablated = claim_record("WINO-12", ablated, expected="< 0.5", tolerance="exact: below 1/2, the previous-token "
                           "head's output zeroed", label="[B] predicted with layer 1 ablated")
    assert hit == 1.0 and ablated < 0.5
