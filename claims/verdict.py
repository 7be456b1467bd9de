"""From test outcomes to one verdict per claim. Pure functions: the plugin and the merge
command share them, so a merged report is computed exactly like a single run's.

A test's outcome is one of: passed, failed, error, xfailed, xpassed, skipped, deselected,
not-reported. A claim's status is, in this order of precedence:

    fails        a test that names it failed or errored (a strict xfail that passed included)
    diverges     a test recorded, as an xfail, that our reproduction disagrees with the text
    not-run      some test that names it was skipped, deselected or never reported
    holds        every test that names it ran and passed
    untested     no test names it
    descriptive  the catalogue marks it untestable, and no test names it
"""
from collections import defaultdict

STATUSES = ("holds", "fails", "diverges", "not-run", "untested", "descriptive")
RAN = ("passed", "failed", "error", "xfailed", "xpassed")
_RANK = {"failed": 5, "error": 5, "xfailed": 4, "xpassed": 3, "passed": 3,
         "skipped": 2, "deselected": 1, "not-reported": 0}
_TIER_ORDER = ("fast", "slow", "gpu")


def merge_test(a: dict | None, b: dict) -> dict:
    """One test seen by two runs: keep the one that ran; among two that ran, the worse."""
    if a is None:
        return b
    return b if _RANK[b["outcome"]] >= _RANK[a["outcome"]] else a


def tiers_run(tests: dict) -> list[str]:
    ran = {t["tier"] for t in tests.values() if t["outcome"] in RAN}
    return [t for t in _TIER_ORDER if t in ran]


def _value(records, key):
    vals = [r for r in records if r.get(key) is not None]
    if not vals:
        return None
    if len(vals) == 1:
        return vals[0][key]
    out = {}
    for r in vals:
        label = r.get("label") or r["test"].rsplit("::", 1)[-1]
        while label in out:
            label += "'"
        out[label] = r[key]
    return out


def _short(nodeid):
    return nodeid.rsplit("/", 1)[-1]


def claim_verdict(claim, tests: list[tuple[str, dict]]) -> tuple[str, str]:
    """(status, one-line reason) for one claim from the tests that name it."""
    if not tests:
        if claim.descriptive:
            return "descriptive", claim.untestable
        return "untested", "no test names this claim"
    by = defaultdict(list)
    for nodeid, t in tests:
        by[t["outcome"]].append((nodeid, t))
    if by["failed"] or by["error"]:
        nodeid, t = (by["failed"] + by["error"])[0]
        return "fails", f"{_short(nodeid)}: {t['reason']}"
    if by["xfailed"]:
        return "diverges", "; ".join(f"{_short(n)}: {t['reason']}" for n, t in by["xfailed"])
    missing = by["skipped"] + by["deselected"] + by["not-reported"]
    if missing:
        reasons = list(dict.fromkeys(t["reason"] for _, t in missing))
        ran = len(tests) - len(missing)
        tail = f"; the {ran} that ran passed" if ran else ""
        return "not-run", f"{len(missing)} of {len(tests)} tests not run: {'; '.join(reasons)}{tail}"
    note = " (an expected divergence did not show: xpassed)" if by["xpassed"] else ""
    return "holds", f"{len(tests)} test{'s' * (len(tests) > 1)} passed{note}"


def verdicts(registry: dict, tests: dict) -> list[dict]:
    """The report's ``claims`` list, in registry order."""
    naming = defaultdict(list)
    for nodeid, t in sorted(tests.items()):
        for cid in t["claims"]:
            naming[cid].append((nodeid, t))
    out = []
    for c in registry.values():
        ts = naming.get(c.id, [])
        status, reason = claim_verdict(c, ts)
        records = [dict(r, test=n) for n, t in ts for r in t.get("records", []) if r["claim"] == c.id]
        expected = _value(records, "expected")
        tolerances = list(dict.fromkeys(r["tolerance"] for r in records if r.get("tolerance")))
        out.append({
            "id": c.id, "source": c.source, "section": c.section, "quote": c.quote,
            "statement": c.statement, "expected": expected if expected is not None else c.value,
            "measured": _value(records, "measured"), "tolerance": "; ".join(tolerances) or None,
            "tier": c.tier, "status": status, "reason": reason, "tests": [n for n, _ in ts],
        })
    return out


def figures(tests: dict) -> list[dict]:
    """Every figure the tests attached: {claim, path, test}."""
    return [dict(f, test=n) for n, t in sorted(tests.items()) for f in t.get("figures", [])]


def summary(claims: list[dict]) -> dict[str, int]:
    counts = {s: 0 for s in STATUSES}
    for c in claims:
        counts[c["status"]] += 1
    return counts


def unknown_ids(registry: dict, tests: dict) -> dict[str, list[str]]:
    """Claim IDs named by tests but absent from the registry -> the tests naming them."""
    out = defaultdict(list)
    for nodeid, t in tests.items():
        for cid in t["claims"]:
            if cid not in registry:
                out[cid].append(nodeid)
    return dict(out)
