"""How a collected test declares what it proves: its claims, its tier and its scale, and what
is wrong with a declaration. Read from its markers and the registry, at collection."""
import pytest

from .marks import is_divergence_mark

_TIER = pytest.StashKey[tuple]()  # (the tier a test runs in, the scale it measures at)


def claims_of(item) -> list[str]:
    return [cid for m in item.iter_markers("claim") for cid in m.args]


def marked_tier(item, settings, registry) -> str:
    """The tier marker's tier; without one, the registry's tier of the claims the test names
    (a marker is needed only to override it), and "" for a test that names no claim."""
    tiers = [t for t in settings.tiers if item.get_closest_marker(t)]
    if tiers:
        return tiers[0] if len(tiers) == 1 else "?"
    claims = claims_of(item)
    named = {registry[c].tier for c in claims if c in registry}
    if not claims:
        return ""
    return named.pop() if len(named) == 1 and named <= set(settings.tiers) else "?"


def tier_of(item, settings, registry) -> str:
    return item.stash[_TIER][0] if _TIER in item.stash else marked_tier(item, settings, registry)


def scale_of(item, settings, registry) -> str | None:
    if _TIER in item.stash:
        return item.stash[_TIER][1]
    mark = item.get_closest_marker("scale")
    return settings.test_scale(marked_tier(item, settings, registry), mark.args[0] if mark and mark.args else None)


def settle_tier(item, settings, registry) -> None:
    """A document may move a test to another tier (pytest_claimcheck_tier); the test keeps its
    marker's scale, and carries the new tier's marker too, so ``-m <tier>`` selects it."""
    marked, measured_at = marked_tier(item, settings, registry), scale_of(item, settings, registry)
    if marked and not item.get_closest_marker(marked):  # the registry's tier: ``-m <tier>`` selects it
        item.add_marker(marked)
    moved = item.ihook.pytest_claimcheck_tier(item=item, tier=marked)  # the conftests above the test only
    if moved and moved != marked:
        if moved not in settings.tiers:
            raise pytest.UsageError(f"{item.nodeid}: pytest_claimcheck_tier moved it to {moved!r}, not a tier")
        item.add_marker(moved)
    item.stash[_TIER] = (moved or marked, measured_at)


def check_item(item, settings, registry) -> str | None:
    """What is wrong with how a test declares its tier and verdict, in one line, or None."""
    tiers = [t for t in settings.tiers if item.get_closest_marker(t)]
    if len(tiers) > 1:
        return (f"{item.nodeid}: a test carries at most one tier marker ({', '.join(settings.tiers)}); "
                f"it has {', '.join(tiers)}")
    unknown = [c for c in claims_of(item) if c not in registry]
    if unknown:
        return (f"{item.nodeid}: names {', '.join(unknown)}, not in the registry {registry.path.name}; "
                "add a [[claim]] table or fix the ID")
    if marked_tier(item, settings, registry) == "?":
        named = sorted({registry[c].tier for c in claims_of(item)})
        return (f"{item.nodeid}: names claims of registry tier {', '.join(named)}, so it carries a tier marker "
                f"({', '.join(settings.tiers)})")
    mark = item.get_closest_marker("scale")
    if mark is not None and not settings.scales:
        return f"{item.nodeid}: @pytest.mark.scale(...), but this document names no scales (claimcheck_scales)"
    if mark is not None and (len(mark.args) != 1 or mark.args[0] not in settings.scales):
        return f"{item.nodeid}: scale must be one of {', '.join(settings.scales)}, got {mark.args}"
    if claims_of(item) and scale_of(item, settings, registry) is None:
        return (f"{item.nodeid}: a {tier_of(item, settings, registry)}-tier test that names a claim declares its scale "
                f"(@pytest.mark.scale(...): {', '.join(settings.scales)})")
    for m in item.iter_markers("xfail"):
        if not is_divergence_mark(m):
            return (f"{item.nodeid}: an xfail here must be claimcheck.diverges(reason) "
                    "(strict, raises=AssertionError): only a failed assertion is a divergence")
    return None
