"""How the Polish lab's runs are judged: statements about a population of starts.

The chapter states each claim on its own five starts of one text ("on 4 of 5 starts"). Our
starts are not its starts: its seeds drew its own numpy stream on its own text, ours draw
torch's on Pan Tadeusz. A count from five draws is mostly luck (at a per-start rate of 0.8,
"exactly 4 of 5" comes up 41 % of the time), so a five-start count can be no verdict here.

The quantity judged is p: the probability that the property holds for one random start (seed)
of the lab's setup (its model, optimizer and steps) on one text of the lab's size, as the
chapter's five starts are seeds on its one text. The sampling unit is the seed: runs that share an
excerpt are not independent starts (the excerpts differ far more than seeds do: TINY-16's per-
excerpt counts were 18, 6, 0, 0 and 20 of 20). So the verdict counts the seeds of one text, the
PRIMARY excerpt (the main one, fixed as the chapter's kind of observation before any lab run), on
the declared looks of catalogue.LAB_LOOKS (20, 80, 160 seeds; docs/reference/statistics.md, "a
sequential design"); the four other excerpts are reported beside it, per excerpt and pooled, as
how much the text matters, and decide nothing. Pooling them as 100 independent starts would pass a
false "nearly every start" far more often than alpha when the excerpts differ as they do
(tests/test_sequential.py simulates it).

THE RULE (docs/reference/statistics.md, "start counts"; suite/rules.py ``starts``), the one every start count
in the suite follows:
- *k of 5* names a population rate: more than 4/5 for k = 5 ("every start"), a majority for
  k = 3 or 4, some start for k = 1 or 2 (``line_of``). The claim holds when an exact one-sided
  binomial test shows our rate above that line, diverges when one shows it below, and is
  otherwise undecided (more runs decide). A sentence with two counts ("4 on 3,200 and the fifth
  on 6,400") is one claim of two parts (``starts_joint``).
- *at least one start* statements (TINY-11, TINY-17) are existence claims: some decided run shows it.
- A run whose outcome is decided by a relative margin inside rounding (ROUNDING) is undecided:
  neither a pass nor a failure, left out of K and N, and its count reported.
Beside the verdict, never deciding it: Fisher's exact p of the chapter's own k of 5 against our K
of N (how typical the chapter's starts were), how likely the chapter's k of 5 is at p-hat, and our
main excerpt's seeds 1-5 count, the chapter's own kind of observation. Seed labels do not carry
over, so "start 2" reads as one of the five starts.

Rounding cannot move a decided run: ROUNDING is the lab pin's tolerance for trained values,
3x the largest movement measured between two kernel settings (suite/pins.py). The main
excerpt's 10 runs alone move < 1e-5 in float64 (benchmarks/lab_rounding.py), but the 200
stacked runs of the slow tier move by up to 7.1e-4 under the AVX2 settings.
"""
import math
from dataclasses import dataclass

import numpy as np

from suite.catalogue import LAB_LOOKS
from suite.pins import tolerance
from claimcheck.rules import (
    EXISTS,
    MAJORITY,
    NEARLY_ALL,
    TOST_LEVEL,
    judge_look,
    rate_text,
    sequential,
    start_rule,
    starts,
    starts_joint,
)

TEXT = "Pan Tadeusz, not the lab's own text"
MAIN = "main excerpt, seeds 1-5"
PRIMARY = 0  # the excerpt whose seeds the verdict counts: the main one
# the relative margin a deciding comparison must clear: 3x what two kernel settings moved a
# trained lab perplexity (suite/pins.py MOVEMENT), the tolerance of the lab's own pin
ROUNDING = tolerance("tiny_lab", "pe_val")["rtol"]
CHAPTER_N = 5    # the chapter's starts


def line_of(k: int) -> float:
    """The population rate the chapter's "k of 5" names (docs/reference/statistics.md)."""
    if not 1 <= k <= CHAPTER_N:
        raise ValueError(f"k of {CHAPTER_N}: k from 1 to {CHAPTER_N}, got {k}")
    return NEARLY_ALL if k == CHAPTER_N else MAJORITY if 2 * k > CHAPTER_N else EXISTS


def per_run(*less):
    """Per (excerpt, seed) run: whether every ``a < b`` in ``less`` holds, and how firmly.

    A run's outcome is as firm as the comparison that decides it: the smallest relative gap if
    the run holds, the largest failing one if it does not.
    """
    a, b = (np.stack(np.broadcast_arrays(*xs)).astype(float) for xs in zip(*less))  # (K, excerpt, seed)
    ok = a < b
    gap = np.abs(a - b) / np.maximum(np.abs(a), np.abs(b))
    holds = ok.all(0)
    return holds, np.where(holds, gap.min(0), np.where(ok, 0.0, gap).max(0))


def rate(holds: np.ndarray, firm: np.ndarray) -> dict:
    """K of N over the decided runs (excerpt, seed), its interval, and the excerpts' spread."""
    decided = firm > ROUNDING
    K, N = int((holds & decided).sum()), int(decided.sum())
    per_excerpt = [(int((h & d).sum()), int(d.sum())) for h, d in zip(holds, decided)]
    table = np.array([[k, n - k] for k, n in per_excerpt])
    table = table[:, table.sum(0) > 0]  # a column of zeros has no expected counts
    from scipy import stats  # here, not at import: scipy.stats costs a second of every collection
    het = float(stats.chi2_contingency(table)[1]) if table.shape[1] == 2 and (table.sum(1) > 0).all() else 1.0
    return {"K": K, "N": N, "undecided": int(holds.size - N), "p": K / N if N else float("nan"),
            "per_excerpt": per_excerpt, "heterogeneity_p": het}


def fisher(k: int, r: dict) -> float:
    """Two-sided Fisher's exact p of the chapter's k of 5 against our K of N: reported only."""
    from scipy import stats
    return float(stats.fisher_exact([[k, CHAPTER_N - k], [r["K"], r["N"] - r["K"]]])[1])


def decided(r: dict) -> np.ndarray:
    """Our decided runs as truth values, K of them true: what ``starts`` counts."""
    return np.arange(r["N"]) < r["K"]


def _main(holds, firm) -> str:
    h, d = holds[0, :CHAPTER_N], firm[0, :CHAPTER_N] > ROUNDING
    return f"{int((h & d).sum())} of {CHAPTER_N}" + (f" ({int((~d).sum())} undecided)" if (~d).any() else "")


@dataclass(frozen=True)
class LabPart:
    """One count of a lab sentence, on the PRIMARY excerpt's seeds in order: whether each run
    has the property, how firmly (a run inside rounding is left out of K and N), the line."""
    holds: np.ndarray
    firm: np.ndarray
    line: float
    label: str

    def at(self, n: int) -> np.ndarray:
        """The decided runs among the first ``n`` seeds, as truth values."""
        h, f = self.holds[:n], self.firm[:n]
        return h[f > ROUNDING]


def _record(claim_record, claim_id, runs, line, label, expected, k=None, main=None) -> LabPart:
    """What is reported beside the verdict (the runs over every excerpt, pooled and per excerpt:
    how much the text matters; the chapter's own kind of observation), and the verdict's part: the
    main excerpt's seeds, ``main`` (``per_run`` on ``LabRuns.main``) or else ``runs``' PRIMARY row."""
    r, five = rate(*runs), _main(*runs)
    if r["N"] == 0:
        raise ValueError(f"{claim_id}: no decided run ({r['undecided']} inside rounding): nothing to count")
    s = starts(decided(r), line)
    lo, hi = s["interval"]
    claim_record(claim_id, f"{r['K']} of {r['N']}, rate {r['p']:.2f} [{lo:.2f}, {hi:.2f}]", expected=expected,
                 tolerance="reported: how much the text matters; runs that share an excerpt are not independent "
                           "starts, so the pooled count decides nothing",
                 label=f"runs over {len(r['per_excerpt'])} excerpts x seeds ({TEXT}), pooled: {label}")
    claim_record(claim_id, {"per excerpt (K, N)": r["per_excerpt"], "chi-square p": round(r["heterogeneity_p"], 3),
                            "undecided": r["undecided"]},
                 tolerance=f"reported: runs decided inside rounding ({ROUNDING}) are undecided",
                 label=f"how the excerpts differ (the first is the verdict's): {label}")
    claim_record(claim_id, five, tolerance="reported: the chapter's own kind of observation, not the verdict",
                 label=f"{MAIN}: {label}")
    if k is not None:
        claim_record(claim_id, [round(fisher(k, r), 4), round(math.comb(CHAPTER_N, k) * r["p"] ** k * (1 - r["p"]) ** (CHAPTER_N - k), 3)],
                     tolerance="reported: how typical the chapter's starts were; no say in the verdict",
                     label=f"Fisher p of the chapter's {k} of {CHAPTER_N} against ours; its chance at p-hat: {label}")
    holds, firm = runs if main is None else main
    return LabPart(holds[PRIMARY], firm[PRIMARY], line, label)


def k_of_5(claim_record, claim_id, runs, label, k, main=None):
    """Record "k of the 5 starts" (see the rule above) and what is reported beside it; returns
    the ``LabPart`` that ``decide`` judges, so the verdict stays visible in the test."""
    return _record(claim_record, claim_id, runs, line_of(k), label, expected=f"{k} of {CHAPTER_N} (the chapter)", k=k,
                   main=main)


def exists(claim_record, claim_id, runs, label, main=None):
    """Record "at least one start shows it", an existence claim; returns its ``LabPart``."""
    return _record(claim_record, claim_id, runs, EXISTS, label, expected=">= 1 start (an existence claim)", main=main)


def most(claim_record, claim_id, runs, label, main=None):
    """Record "most starts show it": one start's result offered as what the lab does (a try-it
    bullet, "the same on other starts"); returns its ``LabPart``."""
    return _record(claim_record, claim_id, runs, MAJORITY, label, expected="most starts (what training produces)",
                   main=main)


def _judge_at(parts, n, alpha):
    """The parts' counts on the first ``n`` primary seeds: each holds at alpha, one shown below
    its line at alpha / k diverges (``starts_joint``); no decided run in a part: undecided."""
    counts = [(p.at(n), p.line) for p in parts]
    if any(ok.size == 0 for ok, _ in counts):
        return None, None
    shown, holds = starts_joint(counts, alpha=alpha)
    return holds, shown


def decide(claim_record, claim_id: str, *parts: LabPart) -> None:
    """Judge a lab sentence on the PRIMARY excerpt's seeds, at catalogue.LAB_LOOKS's looks, and
    assert it in the calling test: each part's K of N at the deciding (or last) look recorded."""
    available = min(len(p.holds) for p in parts)
    look = sequential(LAB_LOOKS, available, lambda n, _level, alpha: _judge_at(parts, n, alpha))
    if look.shown:
        for p, r in zip(parts, look.shown):
            lo, hi = r["interval"]
            claim_record(claim_id, f"{r['K']} of {r['N']}, rate {r['K'] / r['N']:.2f} [{lo:.2f}, {hi:.2f}]",
                         tolerance=f"{start_rule(p.line)}; sequential: {LAB_LOOKS.text()}",
                         label=f"the main excerpt's first {look.n} seeds ({TEXT}), look {look.index} of "
                               f"{len(LAB_LOOKS.looks)}: {p.label}", subject=True)
    what = "; ".join(rate_text(r) for r in look.shown) if look.shown else "the main excerpt's seeds"
    judge_look(claim_id, look, what)


def k_of_5_rule(runs, k, level=TOST_LEVEL) -> tuple[dict, bool | None]:
    """The rule of ``k_of_5`` alone, for a diagnosis grid's point, at ``level``'s alpha (the
    grid's Bonferroni level), on the PRIMARY excerpt's seeds: the count, the rate against its
    line, the pooled count and Fisher's p (reported), and whether it holds (None: undecided)."""
    r = rate(*runs)
    part = LabPart(runs[0][PRIMARY], runs[1][PRIMARY], line_of(k), "")
    ok = part.at(len(part.holds))
    if ok.size == 0:  # every run inside rounding: nothing counted, nothing decided
        return {"K of N (main excerpt)": f"0 of 0 ({len(part.holds)} inside rounding)",
                "pooled over excerpts (reported)": f"{r['K']} of {r['N']}"}, None
    (s,), holds = starts_joint([(ok, part.line)], alpha=(1 - level) / 2)
    lo, hi = s["interval"]
    return ({"K of N (main excerpt)": f"{s['K']} of {s['N']}", "rate": [round(s["K"] / s["N"], 3), round(lo, 3), round(hi, 3)],
             "pooled over excerpts (reported)": f"{r['K']} of {r['N']}",
             "Fisher p (reported)": round(fisher(k, r), 4)}, holds)


def draw_lab(lab, positions=True):
    """Train/val/test curves of the main excerpt's first 5 seeds, with the n-gram baselines."""
    def draw(fig):
        fig.set_size_inches(13, 4)
        axes = fig.subplots(1, 3, sharey=True)
        for ax, part in zip(axes, ("train", "val", "test")):
            for s, curve in zip(lab.seeds[:CHAPTER_N], lab.ppl(part, positions)[0]):
                ax.plot(lab.steps, curve, marker="o", label=f"seed {s}")
            for n, style in ((2, ":"), (3, "--")):
                ax.axhline(lab.gram(n, part)[0, 0], color="k", ls=style, label=f"{n}-gram (add-k)")
            ax.set(xscale="log", xticks=lab.steps, xlabel="Adam steps", title=f"{part}",
                   ylabel="perplexity" if part == "train" else None)
            ax.set_xticklabels(lab.steps, rotation=45)
        axes[0].legend(fontsize=7)
        fig.suptitle(f"the tiny GPT {'with' if positions else 'without'} positions, main excerpt of Pan Tadeusz")
    return draw
