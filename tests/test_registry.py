"""The claim registry itself: every marker names a known claim, and malformed files fail loudly."""
import hashlib
import re
from pathlib import Path

import pytest

from claimcheck.registry import RegistryError, load_registry
from claimcheck.session import collected_claims, registry_of

pytestmark = pytest.mark.fast

ROOT = Path(__file__).resolve().parents[1]
HEAD = '''[[source]]
id = "IT"
file = "it.txt"
title = "t"
language = "it"

[[source]]
id = "PL"
file = "pl.txt"
title = "t"
language = "pl"

'''
GOOD = '''[[claim]]
id = "X-01"
source = "IT"
section = "s"
where = "IT L1"
quote = "q"
statement = "s"
value = ""
kind = "exact"
tier = "fast"
'''


def test_every_claim_marker_names_a_registered_claim(request):
    registry = registry_of(request.config)
    unknown = {cid: n for n, ids in collected_claims(request.config).items() for cid in ids
               if cid not in registry}
    assert not unknown, f"claim markers name IDs the registry lacks: {unknown}"


def test_the_registry_holds_all_139_catalogue_claims(request):
    registry = registry_of(request.config)
    assert len(registry) == 139
    # the catalogue's 15 descriptive claims, and TINY-18, whose 5,775 characters are our setup's
    # definition and whose "counting suffices" is TINY-16's result, less SQRT-14, whose "nothing at
    # 32, all by 256" is a measured comparison, tested
    assert sum(c.descriptive for c in registry.values()) == 15


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


@pytest.mark.parametrize("text, message", [
    (GOOD + "\n" + GOOD, "claim #2 (X-01) is registered twice"),
    (GOOD.replace('value = ""\n', ""), "claim #1 (X-01) is missing field(s) value"),
    (GOOD.replace('kind = "exact"', 'kind = "vibes"'), "claim #1 (X-01): kind 'vibes'"),
    (GOOD.replace('kind = "exact"', 'kind = "descriptive"'), "says why it is untestable"),
    (GOOD + "[[claim", "is not valid TOML"),
    (GOOD.replace('kind = "exact"', 'kind = "exact"\ncorrection = "at most {value"'), "is not a template"),
    (GOOD.replace('kind = "exact"', 'kind = "exact"\ncorrection = ["a", "b"]'), "2 correction(s) for 1 passage(s)"),
    (GOOD.replace('quote = "q"', 'quote = ["a", "b"]\ncorrection = "c"'), "name the one(s) the correction rewrites"),
])
def test_a_malformed_registry_names_the_entry_in_one_line(tmp_path, text, message):
    path = tmp_path / "claims.toml"
    path.write_text(HEAD + text, encoding="utf-8")
    with pytest.raises(RegistryError) as e:
        load_registry(path)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_a_missing_registry_says_where_it_looked(tmp_path):
    with pytest.raises(RegistryError) as e:
        load_registry(tmp_path / "nope.toml")
    assert str(e.value) == (f"claim registry {tmp_path / 'nope.toml'} not found; run from the repository root "
                            "or pass --claims-registry")


@pytest.mark.parametrize("text, message", [
    (GOOD.replace('id = "X-01"\n', ""), "claims.toml: claim #1 (no id) is missing field(s) id"),
    (GOOD.replace('value = ""\n', "").replace('kind = "exact"\n', ""),
     "claims.toml: claim #1 (X-01) is missing field(s) value, kind"),
    (GOOD + 'zeta = 1\nalpha = 2\n', "claims.toml: claim #1 (X-01) has unknown field(s) alpha, zeta"),
    (GOOD.replace('source = "IT"', 'source = "XX"'), "claims.toml: claim #1 (X-01): source must be one of IT, PL, got 'XX'"),
    (GOOD.replace('kind = "exact"', 'kind = "exact+vibes"'),
     "claims.toml: claim #1 (X-01): kind 'exact+vibes' is not '+'-joined from exact, numeric, qualitative, descriptive"),
    (GOOD.replace('tier = "fast"', 'tier = "quick"'),
     "claims.toml: claim #1 (X-01): tier = 'quick' is not a tier this project declares; set it to one of fast, slow, "
     "gpu, none, or declare quick in claimcheck_tiers"),
    (GOOD + 'full_tier = "cuda"\n',
     "claims.toml: claim #1 (X-01): full_tier = 'cuda' is not a tier this project declares; set it to one of fast, "
     "slow, gpu, none, or declare cuda in claimcheck_tiers"),
    (GOOD + 'untestable = "why"\n', "claims.toml: claim #1 (X-01): a descriptive claim, and only one, says why it is untestable"),
    ("# no claims\n", "claims.toml holds no [[claim]] tables"),
    (GOOD.replace('kind = "exact"', 'kind = 1'), "claims.toml: claim #1 (X-01): kind must be a string, got int"),
    (GOOD.replace('quote = "q"', 'quote = ""'), "claims.toml: claim #1 (X-01): quote must be a non-empty string, or a list of them"),
    (GOOD.replace('quote = "q"', 'quote = ["q", 1]'), "claims.toml: claim #1 (X-01): quote must be a non-empty string, or a list of them"),
])
def test_each_malformation_has_its_own_message(tmp_path, text, message):
    path = tmp_path / "claims.toml"
    path.write_text(HEAD + text, encoding="utf-8")
    with pytest.raises(RegistryError) as e:
        load_registry(path)
    assert str(e.value) == message


def test_a_well_formed_registry_loads_in_file_order_with_its_quotes_joined(tmp_path):
    path = tmp_path / "claims.toml"
    path.write_text(HEAD + GOOD.replace('kind = "exact"', 'kind = "exact+numeric"').replace('quote = "q"', 'quote = "one quote"')
                    + 'full_tier = "gpu"\n'
                    + GOOD.replace("X-01", "X-02").replace('quote = "q"', 'quote = ["first part", "second – part"]')
                    .replace('kind = "exact"', 'kind = "descriptive"').replace('tier = "fast"', 'tier = "none"')
                    + 'untestable = "a definition"\n', encoding="utf-8")
    reg = load_registry(path)
    assert list(reg) == ["X-01", "X-02"]
    x1, x2 = reg.values()
    assert (x1.quote, x1.kind, x1.tier, x1.full_tier, x1.untestable, x1.descriptive) == \
        ("one quote", "exact+numeric", "fast", "gpu", None, False)  # a string quote is kept whole
    assert (x2.quote, x2.tier, x2.full_tier, x2.untestable, x2.descriptive) == \
        ("first part […] second – part", "none", None, "a definition", True)


def _suite():
    from claimcheck.suite import read
    return read(ROOT, ["claims", "tests"])


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
