"""The diagnosis of a divergence: before a claim reads *diverges* as an erratum, the settings the
chapter leaves unstated are tried, one at a time, around the configuration it states.

A ``Grid`` names a claim, the Scale its verdict is judged on (the text's stated configuration),
and its axes: each an unstated setting, our value first, then the values tried, with one line of
reason. A point of the grid is that Scale with one setting changed, a named variant made with
``replace``. Its full-scale runs are evidence records like the verdict's, under
``fixtures/evidence/<family>/explore/<point>/`` (``python -m suite.evidence run --grid ID``).

The verdict is never judged here. The claim's own rule, applied to each point's runs, says whether
the claim would hold there, and the points together say which kind of erratum it is (``kind``).
Settings are named ``model.<GPTConfig field>``, ``train.<TrainConfig field>``, ``scale.<field of
the grid's own scale>`` (a WinogradScale's width, say), ``lab.<LabConfig field>`` (the Polish
lab's; all four change what is trained) or ``read.<option>`` (how the same runs are read, e.g.
``read.checkpoint=best``).
"""
import inspect
import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path

import numpy as np
import pytest

from claimcheck.verdict import erratum_kind
from experiments.polish_lab import SMOOTHINGS, LabConfig
from experiments.train import TrainConfig
from model.gpt import GPTConfig
from suite import settings
from suite.reading import reads
from claimcheck.rules import TOST_LEVEL, wide_level
from suite.rules import SECOND_LOOK
from suite.scales import Runs

# read options: how a point's runs are read (the Winograd maps: the chapter's sentence, a training
# pair, or a held-out one; the lab's counting baseline: its smoothing)
READ = {"checkpoint": ("final", "best"), "sentence": ("trained", "held-out"), "smoothing": SMOOTHINGS}


@dataclass(frozen=True)
class Axis:
    setting: str      # "model.dropout", "train.weight_decay", "read.checkpoint"
    values: tuple     # ours (the stated configuration's) first, then the values tried
    why: str          # one line: why the text leaves room for it

    def __post_init__(self):
        where, _, name = self.setting.partition(".")
        known = {"model": {f.name for f in fields(GPTConfig)}, "train": {f.name for f in fields(TrainConfig)},
                 "lab": {f.name for f in fields(LabConfig)}, "read": set(READ)}
        if where != "scale" and name not in known.get(where, ()):  # scale.<field>: checked by the Grid
            raise ValueError(f"axis {self.setting!r}: a setting is model.<GPTConfig field>, "
                             f"train.<TrainConfig field>, scale.<field>, lab.<LabConfig field> or "
                             f"read.<{'|'.join(READ)}>")
        if where == "read" and not set(self.values) <= set(READ[name]):
            raise ValueError(f"axis {self.setting!r}: values among {', '.join(map(str, READ[name]))}")
        if len(self.values) < 2:
            raise ValueError(f"axis {self.setting!r}: ours and at least one value to try")


@dataclass(frozen=True)
class Point:
    name: str         # "model.dropout=0.1": also its folder under explore/
    settings: dict    # {"model.dropout": 0.1}: what differs from the stated configuration
    scale: object     # the Scale its runs are trained (or recorded) under
    why: str = ""     # why this point is tried
    level: float = None   # a second look's interval level (MoreSeeds), given to the rule
    supersedes: str = ""  # the first look's point that this second look judges again

    @property
    def read(self) -> dict:
        """The rule's keyword options: the read.* settings, and a second look's level."""
        opts = {k.split(".", 1)[1]: v for k, v in self.settings.items() if k.startswith("read.")}
        return {**opts, "level": self.level} if self.level else opts

    def judged_at(self, bonferroni: float) -> dict:
        """The rule's options at a grid point: its reads, at the grid's Bonferroni level or its
        own second look's, whichever is stricter (the stated point at the verdict's own level)."""
        opts = self.read
        if self.name != "stated":
            opts["level"] = max(self.level or 0.0, bonferroni)
        return opts


@dataclass(frozen=True)
class MoreSeeds(settings.DeclaredSeeds):
    """A second look at some points of a grid on fresh seeds, declared after the first look and
    before these seeds ran: the grid's readings of the stated runs (its ``read.*`` points), and the
    trained points named in ``points``. A point explains a divergence only when both looks hold
    (claimcheck.verdict.point_looks). Two looks give noise two chances to pass: with the second at
    ``level`` they are at most 5 % + (1 - level) / 2 (Bonferroni), so the second is judged stricter
    than the first. The rule receives ``level`` as a keyword."""
    declared_seeds: tuple[int, ...]  # fresh seeds, consecutive, all after the stated point's
    arms: tuple[str, ...]    # the arms the claim's rule reads: only these are trained
    why: str                 # why a second look, and what it can decide
    level: float = SECOND_LOOK
    points: tuple[str, ...] = ()  # trained points looked at again, by name ("model.dropout=0.1")


def vary(scale, setting: str, value):
    """``scale`` with one setting changed; read options change nothing that is trained, except a
    best checkpoint on a scale that can choose it apart from where it is reported (a
    WinogradScale's ``select_apart``: its evaluations score two halves of the held-out set)."""
    where, _, name = setting.partition(".")
    if (where, name, value) == ("read", "checkpoint", "best") and hasattr(scale, "select_apart"):
        return replace(scale, select_apart=True)
    if where == "model":
        return replace(scale, arms={a: replace(c, **{name: value}) for a, c in scale.arms.items()})
    if where == "train":
        return replace(scale, train=replace(scale.train, **{name: value}),
                       trains={a: replace(t, **{name: value}) for a, t in scale.trains.items()})
    if where == "scale":
        return replace(scale, **{name: value})
    if where == "lab":
        return replace(scale, config=replace(scale.config, **{name: value}))
    return scale


@dataclass(frozen=True)
class Grid:
    claim: str
    scale: object                 # the verdict's Scale: the text's stated configuration
    axes: tuple[Axis, ...]
    base: dict = None             # settings every point shares with the stated one (e.g. a curve)
    fixed: str = ""               # our setup was wrong and is fixed: what changed
    alternatives: tuple = ()      # (name, why, Scale): other readings of the text, whole configurations
    more_seeds: MoreSeeds = None  # a second look at some points, on fresh seeds
    checks: int = 1               # the claim's separate checks its rule joins (Winograd: two tests)

    def __post_init__(self):
        m = self.more_seeds
        reads = any(a.setting.startswith("read.") for a in self.axes)
        if m and not (tuple(m.seeds) == tuple(range(m.seeds[0], m.seeds[-1] + 1)) and m.seeds[0] > max(self.scale.seeds)
                      and set(m.arms) <= set(self.scale.arms) and (self.base or not reads)):
            raise ValueError(f"{self.claim}: a second look is on fresh seeds, consecutive and after the stated point's, "
                             "for arms it has (and a grid that reads the stated runs again has a base)")
        for axis in self.axes:
            where, _, name = axis.setting.partition(".")
            if where == "scale" and name not in {f.name for f in fields(self.scale)}:
                raise ValueError(f"axis {axis.setting!r}: {type(self.scale).__name__} has no field {name!r}")
            own = {"scale": lambda: getattr(self.scale, name), "lab": lambda: getattr(self.scale.config, name)}
            if where in own and axis.values[0] != own[where]():
                raise ValueError(f"axis {axis.setting!r}: its first value is ours, {own[where]()!r}, "
                                 f"not {axis.values[0]!r}")

    def stated(self) -> Point:
        """The stated configuration as the grid reads it: the verdict's own runs, or (with
        ``base``'s shared settings, e.g. a validation curve) runs of its own under explore/."""
        scale = self.scale
        for s, v in (self.base or {}).items():
            scale = vary(scale, s, v)
        return Point("stated", dict(self.base or {}),
                     replace(scale, name=f"{self.scale.name}@stated") if self.base else scale,
                     "the configuration the text states" + (", with " + ", ".join(f"{k}={v}" for k, v in
                                                                          self.base.items()) if self.base else ""))

    def points(self) -> list[Point]:
        """The stated configuration, each axis's other values one setting at a time, then the
        alternative readings."""
        stated, out = self.stated(), []
        for axis in self.axes:
            for v in axis.values[1:]:
                name = f"{axis.setting}={v}"
                scale = vary(stated.scale, axis.setting, v)  # a read option: the stated runs themselves
                scale = scale if scale is stated.scale else replace(scale, name=f"{self.scale.name}@{name}")
                out.append(Point(name, {**(self.base or {}), axis.setting: v}, scale, axis.why))
        for name, why, scale in self.alternatives:
            out.append(Point(name, {"reading": name}, scale, why))
        if m := self.more_seeds:  # each point's own folder, on its fresh seeds
            unknown = set(m.points) - {p.name for p in out}
            if unknown:
                raise ValueError(f"{self.claim}: a second look names points the grid does not have: {sorted(unknown)}")
            again = [p for p in out if (p.scale is stated.scale and p.read) or p.name in m.points]
            out += [Point(f"{p.name}, second look (seeds {m.seeds[0]}-{m.seeds[-1]})", p.settings,
                          replace(p.scale, arms={a: p.scale.arms[a] for a in m.arms}, declared_seeds=m.declared_seeds), m.why,
                          level=m.level, supersedes=p.name) for p in again]
        return [stated] + out

    def trained(self) -> list[Point]:
        """The points recorded under explore/ (read options reuse the stated point's runs, more
        seeds add to them, and an alternative reading is a Scale of its own family)."""
        seen, out = set(), []
        for p in self.points():
            key = (p.scale.name, tuple(getattr(p.scale, "arms", ())), tuple(p.scale.seeds))  # more seeds: one folder
            if "@" in p.scale.name and key not in seen:
                seen.add(key)
                out.append(p)
        return out


# ---- applying the claim's rule at every point -------------------------------------------------

# A best checkpoint chosen on the split it is then reported on flatters it: such a reading is shown,
# never a pass or a failure, unless its records carry a split to report on apart from the one that
# chose it (the Winograd task's select_apart point). Without such records it is a reading that
# remains at the cap, not a look still to take: re-recording the norm family's curves with a split
# of their own would cost 26 CPU-hours, beyond the campaign's budget (docs/reference/statistics.md).
SELECTED_ON_REPORT = ("undecided at the cap: the best checkpoint would be chosen on the held-out split it is "
                      "reported on, and no records with a split of their own are declared (docs/reference/statistics.md)")


def bonferroni(grid: Grid) -> float:
    """The interval level every point tried is judged at: 90 % over its points and checks."""
    tried = [p for p in grid.points() if p.name != "stated" and not p.supersedes]
    return wide_level(TOST_LEVEL, max(1, len(tried) * grid.checks))


def model_steps(scale) -> int | None:
    """What a point costs to train: its arms' steps times its seeds; None where a scale has no
    such count (the lab's excerpts)."""
    seeds = len(getattr(scale, "seeds", ()) or ())
    if hasattr(scale, "arm_steps"):
        return sum(scale.arm_steps().values()) * seeds
    if hasattr(scale, "arms") and hasattr(scale, "train"):
        return sum(scale.trains.get(a, scale.train).steps for a in scale.arms) * seeds
    return None


def diagnose(grid: Grid, rule, recorded_runs) -> dict:
    """See ``read_grid``: the report alone."""
    return read_grid(grid, rule, recorded_runs)[0]


def read_grid(grid: Grid, rule, recorded_runs) -> tuple[dict, dict]:
    """The claim's ``rule(runs, checkpoint=...) -> (value, holds)`` at every point of the grid,
    on the committed evidence (never trained here): ``recorded_runs(scale) -> Runs`` reads a
    point's runs (``diagnosis_test``). A point not recorded on all its seeds is
    reported with what there is, and decides nothing (holds: None). A second look (MoreSeeds)
    names the point it supersedes and its level; that point names it (``superseded_by``), and the
    erratum's kind no longer reads it."""
    entries, read = [], {}
    points = grid.points()
    superseded = {p.supersedes: p.name for p in points if p.supersedes}
    level = bonferroni(grid)
    for p in points:
        entry = {"point": p.name, "settings": p.settings, "why": p.why, "value": None, "holds": None}
        whole = False
        if p.supersedes:
            entry.update(supersedes=p.supersedes, level=p.level)
        if p.name in superseded:
            entry["superseded_by"] = superseded[p.name]
        try:  # a point's runs may be read when asked for (Runs) or at once (Winograd records)
            runs = recorded_runs(p.scale)
            value, holds = rule(runs, **p.judged_at(level))
        except pytest.skip.Exception as e:  # not recorded: the evidence command is in the message
            entry["missing"] = str(e)
            if (cost := model_steps(p.scale)) is not None:
                entry["model_steps"] = cost
        else:
            whole = len(runs.seeds) == len(p.scale.seeds)
            read[p.name] = runs
            entry.update(value=value, holds=None if holds is None or not whole else bool(holds),
                         seeds=list(runs.seeds), evidence=sorted(runs.evidence))
            if holds is None:
                entry.update(state="undecided",
                             missing="an interval crosses the rule's band or margin at the declared seeds, or, "
                                     "for a claim of several parts, lies outside it only short of its "
                                     "Bonferroni level (claimcheck.rules: joint)")
            if not whole:
                if (cost := model_steps(p.scale)) is not None:
                    entry["model_steps"] = cost * (len(p.scale.seeds) - len(runs.seeds)) // len(p.scale.seeds)
                entry.pop("state", None)
                entry["missing"] = (f"{len(runs.seeds)} of its {len(p.scale.seeds)} seeds recorded: "
                                    f"`python -m suite.evidence grid {grid.claim}`")
        if p.settings.get("read.checkpoint") == "best" and entry["value"] is not None \
                and not getattr(p.scale, "select_apart", False):  # read, but chosen on what it reports
            entry.update(holds=None, selected_on_report=True)
            if whole:  # every declared seed read: a reading that remains at the cap
                entry.update(state="undecided", missing=SELECTED_ON_REPORT)
        if p.name in superseded:
            entry["missing"] = "; ".join(filter(None, [entry.get("missing"), "judged again by its second look"]))
        if p.name != "stated":
            entry["level"] = p.judged_at(level)["level"]
        entries.append(entry)
    return {"claim": grid.claim, "fixed": grid.fixed, "grid": entries}, read


def _recorded_arms(runs) -> dict:
    """arm -> its runs, for the arms of a point that are recorded: a point read by a rule that
    reads two of its arms may lack the others, and a missing arm is left out of the figure,
    never a skip of the whole diagnosis."""
    out = {}
    for arm in runs.scale.arms:
        try:
            out[arm] = runs.runs(arm)
        except pytest.skip.Exception:
            continue
    return out


def draw_curves(read: dict):
    """``draw(fig)``: validation perplexity against step, per point and arm (seed mean), for the
    points whose runs were evaluated along the way; None when no point has a curve."""
    curved = {}
    for name, runs in read.items():
        if not name.startswith("read.") and isinstance(runs, Runs):
            arms = _recorded_arms(runs)
            if any(len(rs[0].curve["step"]) > 1 for rs in arms.values()):
                curved[name] = arms
    if not curved:
        return None

    def draw(fig):
        arms = list(next(iter(read[name] for name in curved)).scale.arms)
        axes = np.atleast_1d(fig.subplots(1, len(arms), sharey=True))
        fig.set_size_inches(3.2 * len(arms), 3.4)
        for ax, arm in zip(axes, arms):
            for name, by_arm in curved.items():
                if arm in by_arm:
                    rs = by_arm[arm]
                    ax.plot(rs[0].curve["step"], np.mean([r.curve["val_ppl"] for r in rs], 0), label=name)
            ax.set(title=arm, xlabel="step", yscale="log")
        axes[0].set_ylabel("val perplexity (seed mean)")
        [ax for ax in axes if ax.lines][-1].legend(fontsize=7)  # on a panel with curves: an arm may lack records
    return draw


KINDS_TOML = Path(__file__).resolve().parents[1] / "fixtures" / "kinds.toml"


def pinned_kinds(path: Path = KINDS_TOML) -> dict:
    """claim ID -> {kind, reason}: the kind each diagnosis grid gives, committed."""
    try:
        kinds = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ValueError(f"{path}: {e}; restore it from git") from None
    bad = [cid for cid, v in kinds.items() if not isinstance(v, dict) or set(v) != {"kind", "reason"}
           or v["kind"] not in ("unstated", "text", "pending", "undecided at the cap")]
    if bad:
        raise ValueError(f"{path}: {', '.join(bad)}: each entry is kind = unstated|text|pending|undecided at the cap, "
                         "reason = \"...\"")
    return kinds


def check_kind(report: dict, path: Path = KINDS_TOML) -> str:
    """The kind the grid gives (as if its claim diverged), against its pin: a kind that moves
    fails until fixtures/kinds.toml changes in the same commit. Under a seed offset the declared
    seeds' evidence is not read, so nothing is compared."""
    got = erratum_kind("diverges", report)
    cid = report["claim"]
    if settings.current().seed_offset:
        return got["kind"]
    pin = pinned_kinds(path).get(cid)
    if pin is None:
        pytest.fail(f"{cid}: its grid gives the kind {got['kind']!r} and fixtures/kinds.toml has no entry for it: add "
                    f"[\"{cid}\"] with kind and reason", pytrace=False)
    if pin["kind"] != got["kind"]:
        pytest.fail(f"{cid}: its grid now gives the kind {got['kind']!r} ({got['reason']}), fixtures/kinds.toml pins "
                    f"{pin['kind']!r}: change the pin in the same commit, with its reason", pytrace=False)
    return got["kind"]


def diagnosis_test(grid: Grid, rule, read, tier: str = "gpu", accepts=None, stated: bool = False):
    """The test that reports ``grid``: the claim's rule at every point, beside its verdict. It
    names no claim, so it never changes one; a crash in it is a failure of the suite.
    ``read(scale) -> runs`` reads a point's runs: for a grid around a full scale, every point (the
    stated one too) from its committed records (suite/evidence/families.py ``recorded_runs``).
    ``stated=True``: the grid is around a scale the test declares it reads (``@reads(grid.scale)``:
    the lab's and the Winograd task's), the stated point is that scale's runs, and a point's are
    ``read(scale, stated_runs)``. ``tier`` is its mark: the evidence of full scales is judged where
    the full scale is, and a grid around a scale the slow tier trains beside it. ``accepts``: the
    read options a rule that takes ``**read`` passes on (by default, the rule's own keyword
    parameters). A rule that cannot take a point's read options, or a level, fails here, when the
    test is made, not when it runs."""
    params = inspect.signature(rule).parameters
    if "level" not in params:
        raise TypeError(f"{grid.claim}: a grid's rule takes level= (its points are judged at the grid's Bonferroni "
                        "level)")
    if accepts is None:
        if any(p.kind is p.VAR_KEYWORD for p in params.values()):
            raise TypeError(f"{grid.claim}: a rule that takes **read names what it accepts (accepts=...)")
        accepts = set(list(params)[1:]) - {"level"}
    for point in grid.points():
        unknown = set(point.read) - set(accepts) - {"level"}  # every rule takes level
        if unknown:
            raise TypeError(f"{grid.claim}: point {point.name} reads {', '.join(sorted(unknown))}, which its rule "
                            f"does not take (it takes {', '.join(sorted(accepts)) or 'none'})")

    def test(claim_diagnosis, claim_figure, runs_of):
        if stated:
            base = runs_of(grid.scale)
            report, got = read_grid(grid, rule, lambda s: base if s.name == grid.scale.name else read(s, base))
        else:
            report, got = read_grid(grid, rule, read)
        claim_diagnosis(grid.claim, report)
        draw = draw_curves(got)
        if draw:  # "with the curve where one exists"
            claim_figure(grid.claim, f"diagnosis_{grid.claim}", draw)
        check_kind(report)

    test = getattr(pytest.mark, tier)(pytest.mark.diagnosis(grid.claim)(test))
    if stated:
        test = reads(grid.scale)(test)
    test.__doc__ = f"{grid.claim}: the diagnosis grid of suite/diagnosis_grids.py, judged by the claim's own rule."
    return test
