"""This document's claim registry (fixtures/claims.toml): every marker names a known claim, its
quotes are verbatim from the chapters, and its tiers agree with the tests' markers. How the plugin
reads a registry, and fails on a malformed one: plugin/tests/test_registry.py."""
import functools
import hashlib
import re
from pathlib import Path

import pytest

from claimcheck.session import collected_claims, registry_of


ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.fast
def test_every_claim_marker_names_a_registered_claim(request):
    registry = registry_of(request.config)
    unknown = {cid: n for n, ids in collected_claims(request.config).items() for cid in ids
               if cid not in registry}
    assert not unknown, f"claim markers name IDs the registry lacks: {unknown}"


@pytest.mark.fast
def test_the_registry_holds_the_catalogues_139_claims_and_the_sentences_registered_since(request):
    registry = registry_of(request.config)
    assert len(registry) == 139 + 9  # ARCH-03 (IT L250), WINO-13 (IT L221), COST-10 (IT L167), COST-11 (IT L169-176), WINO-14 (IT L224-233), AVG-10 (IT L11), IMPL-02 (IT L68, L243), TINY-30 and TINY-31 (PL L7, L8): the strength audit's
    # the catalogue's 15 descriptive claims, and TINY-18, whose 5,775 characters are our setup's
    # definition and whose "counting suffices" is TINY-16's result, less SQRT-14, whose "nothing at
    # 32, all by 256" is a measured comparison, tested
    assert sum(c.descriptive for c in registry.values()) == 15 - 9  # ARCH-01, WINO-01, MHA-01, DEPTH-02, HIST-04, NORM-08, COST-08, TINY-29, WINO-12 now tested


@pytest.mark.fast
def test_the_registry_quotes_are_verbatim_from_the_chapters(request):
    sums = {name: digest for digest, name in (line.split() for line in (
        ROOT / "fixtures" / "chapters" / "SHA256SUMS").read_text(encoding="utf-8").splitlines())}
    text = {}
    for sid, source in registry_of(request.config).sources.items():
        data = source.path.read_bytes()
        if hashlib.sha256(data).hexdigest() != sums.get(source.path.name):
            pytest.fail(f"{source.file}: its sha256 does not match fixtures/chapters/SHA256SUMS", pytrace=False)
        text[sid] = re.sub(r"\s+", " ", data.decode("utf-8"))
    for c in registry_of(request.config).values():
        for part in c.quote.split(" […] "):
            assert re.sub(r"\s+", " ", part) in text[c.source], c.id


@functools.cache  # the whole suite's source, parsed once for the tests that read it (a second each)
def _suite():
    from claimcheck.suite import read
    return tuple(read(ROOT, ["claims", "tests"]))


@pytest.mark.slow  # seconds, not milliseconds: it runs with --runslow
def test_the_registry_tiers_agree_with_the_test_markers(request):
    """tier: the cheapest tier of a test naming the claim; full_tier: the tier of its tests at
    the document's full configuration, where that differs. One source: the markers."""
    from claimcheck.marks import settings_from_ini
    settings = settings_from_ini(request.config)  # this document's tiers and scales (pyproject.toml)
    order, DEFAULT_SCALE = list(settings.tiers), settings.default_scale
    naming = {}
    for t in _suite():
        for cid in t.claims:
            naming.setdefault(cid, []).append(t)
    wrong = []
    for c in registry_of(request.config).values():
        tests = naming.get(c.id, [])
        if not tests:
            if c.tier != "none":
                wrong.append(f"{c.id}: no test names it, so its tier is 'none', not {c.tier!r}")
            continue
        cheapest = min((t.tiers[0] for t in tests), key=order.index)
        full = [t.tiers[0] for t in tests if (t.scale or DEFAULT_SCALE.get(t.tiers[0])) == "full"]
        full_tier = max(full, key=order.index) if full else None
        full_tier = None if full_tier == cheapest else full_tier
        if (c.tier, c.full_tier) != (cheapest, full_tier):
            wrong.append(f"{c.id}: registry ({c.tier}, {c.full_tier}), markers ({cheapest}, {full_tier})")
    assert not wrong, "; ".join(wrong)


@pytest.mark.fast
def test_every_test_has_one_tier_and_every_divergence_is_strict_and_for_assertions_only(request):
    """The plugin refuses these at collection; this reads the source, so a file that no run
    collects is checked too."""
    from claimcheck.marks import settings_from_ini
    SCALES = settings_from_ini(request.config).scales  # this document's (pyproject.toml)
    tests = _suite()
    assert len(tests) > 200
    assert not [t.name for t in tests if len(t.tiers) != 1]
    assert not [t.name for t in tests if t.scale is not None and t.scale not in SCALES]
    assert not [t.name for t in tests if t.claims and t.tiers == ("slow",) and t.scale is None]
    loose = [f"{t.path}::{t.name}" for t in tests for x in t.xfails
             if x.get("strict") != "True" or x.get("raises") != "AssertionError"]
    assert not loose, f"xfail that is not claimcheck.diverges (strict, raises=AssertionError): {loose}"
    assert any(t.xfails for t in tests)  # the scan sees the divergences it is meant to check


@pytest.mark.fast
def test_every_claim_test_names_one_claim():
    """Each claim's verdict rests on its own assertion: a test that names two claims would fail
    both when one part fails. A property two chapters state runs once under each claim."""
    import ast
    several = []
    for path in sorted((Path(__file__).resolve().parents[1] / "claims").glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "claim"
                    and len(node.args) > 1):
                several.append(f"{path.name}:{node.lineno}")
    assert not several, f"tests naming several claims: {several}"
