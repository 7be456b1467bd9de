"""Tiers, scales, the one way to record a divergence, and the one way to say a rule cannot decide.

A test carries one **tier** marker (what it costs to run) and measures at one **scale** (how
close to the document's configuration it is). Both lists are ini options, so a document names
its own; these are the defaults:

    @pytest.mark.slow
    @pytest.mark.scale("ci")
    @pytest.mark.claim("NORM-06")
    @diverges("at CI scale a 20 % warmup leaves post-norm failed")
    def test_...(...):
        ...
        assert measured_agrees_with_the_text   # only this AssertionError is a divergence
"""
from dataclasses import dataclass, field

import pytest

# tier -> what it runs; the order is the order of cost
TIERS = {
    "fast": "seconds: run by plain pytest",
    "slow": "minutes; needs --claims-runslow",
    "gpu": "needs a GPU; needs --claims-runslow",
}

# scale -> (words in a verdict, what it means), from the lowest to the highest; a claim's
# headline verdict is read at the highest scale where its tests ran. A document names its own
# (claimcheck_scales); one that names none has none, and its verdicts name no scale.
SCALES: dict = {}

# the scale a tier's test measures at unless it says otherwise; a tier not named here must say
DEFAULT_SCALE: dict = {}

# tiers that run only with --claims-runslow
SLOW_TIERS = ("slow", "gpu")

NO_SCALE = ""  # the one scale of a document that names none
TIER_SKIP = "slow tier: needs --claims-runslow"  # the skip of a slow tier's test in a run without --claims-runslow


@dataclass(frozen=True)
class MarkSettings:
    """What a document configures through ini options (``claimcheck_tiers``, ...)."""
    tiers: dict = field(default_factory=lambda: dict(TIERS))
    scales: dict = field(default_factory=lambda: dict(SCALES))
    default_scale: dict = field(default_factory=lambda: dict(DEFAULT_SCALE))
    slow_tiers: tuple = SLOW_TIERS

    @property
    def words(self) -> dict[str, str]:
        return {s: w for s, (w, _) in self.scales.items()} or {NO_SCALE: NO_SCALE}

    def test_scale(self, tier: str, declared: str | None) -> str | None:
        """The scale a test of this tier measures at: the one it declares, or the tier's default;
        NO_SCALE where the document names no scales."""
        if not self.scales:
            return NO_SCALE
        return declared or self.default_scale.get(tier)


DEFAULT = MarkSettings()


def _pairs(lines, what) -> dict[str, str]:
    out = {}
    for line in lines:
        name, sep, doc = line.partition(":")
        if not sep or not name.strip():
            raise pytest.UsageError(f"{what}: {line!r} is not 'name: what it means'")
        out[name.strip()] = doc.strip()
    return out


def settings_from_ini(config) -> MarkSettings:
    """The tiers and scales from the ini file; an option left out keeps its default. Lines:

        claimcheck_tiers          = name: what it runs            (cheapest first)
        claimcheck_scales         = name (words): what it means   (lowest first)
        claimcheck_default_scales = tier: scale
        claimcheck_slow_tiers     = tier names that need --claims-runslow
    """
    tiers = _pairs(config.getini("claimcheck_tiers"), "claimcheck_tiers") or dict(TIERS)
    scales = {}
    for name, doc in _pairs(config.getini("claimcheck_scales"), "claimcheck_scales").items():
        words = name[name.find("(") + 1:name.rfind(")")] if "(" in name and name.endswith(")") else None
        name = name.split("(")[0].strip()
        scales[name] = (words or name, doc)
    scales = scales or dict(SCALES)
    default = _pairs(config.getini("claimcheck_default_scales"), "claimcheck_default_scales") \
        if config.getini("claimcheck_default_scales") else {t: s for t, s in DEFAULT_SCALE.items()
                                                             if t in tiers and s in scales}
    slow = tuple(config.getini("claimcheck_slow_tiers") or [t for t in SLOW_TIERS if t in tiers])
    for tier, scale in default.items():
        if tier not in tiers or scale not in scales:
            raise pytest.UsageError(f"claimcheck_default_scales: {tier}: {scale} names an unknown tier or scale")
    for tier in slow:
        if tier not in tiers:
            raise pytest.UsageError(f"claimcheck_slow_tiers: {tier!r} is not one of claimcheck_tiers")
    return MarkSettings(tiers, scales, default, slow)


def diverges(reason: str):
    """Mark a test whose failed assertion records that our reproduction departs from the text.

    Strict, and only for ``AssertionError``: a crash (KeyError, a fixture error, ...) is a
    failure of the suite, never a divergence, and a divergence that disappears fails.
    """
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason)


class Undecided(pytest.skip.Exception):
    """What ``undecided`` raises: pytest reports it as a skip, the plugin as ``undecided``."""


def undecided(reason: str, final: bool = False):
    """Call in a test whose rule cannot decide on what was measured: an interval straddles its
    band or margin. It is neither a pass nor a divergence; more data (seeds), not a wider band,
    decides. The claim reads ``undecided`` at the test's scale. ``final``: the claim's declared
    looks are spent, and no more data will be taken: it reads *undecided at the cap*. Only from
    the test's own call: raised in a fixture it is a failure of the suite."""
    e = Undecided(f"undecided{' at the cap' * final}: {reason}", _use_item_location=True)
    e.final = final
    raise e


def is_divergence_mark(mark) -> bool:
    """Whether an ``xfail`` mark is the one ``diverges`` makes (the plugin refuses others)."""
    raises = mark.kwargs.get("raises")
    return (mark.name == "xfail" and mark.kwargs.get("strict") is True and not mark.args
            and isinstance(raises, type) and issubclass(raises, AssertionError)
            and bool(mark.kwargs.get("reason")))


# What a test adds to its report besides its records, through pytest's user_properties: the keys
# are the plugin's, the two functions below the documented way to write them.
EVIDENCE_KEY, PIN_KEY = "claimcheck_evidence", "claimcheck_pin"


def evidence_note(node, text: str) -> None:
    """Say what a test's verdict rests on ("evidence recorded on <device>, <date>", "measured on
    another text"): the claim's reason ends with it. Callable from a fixture, teardown included;
    ``node`` is ``request.node``."""
    node.user_properties.append((EVIDENCE_KEY, str(text)))


def pin_checked(node, name: str, file: str, tolerance: str, meaning: str) -> None:
    """Report a regression pin the test checks (a stored value it compares with): listed in the
    report's Pins table, fresh when the test passes and stale when it fails. A pin never changes
    a claim's verdict: a test that checks one names no claim."""
    node.user_properties.append((PIN_KEY, {"name": name, "file": file, "tolerance": tolerance, "meaning": meaning}))
