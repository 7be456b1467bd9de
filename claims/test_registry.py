"""The claim registry itself: every marker names a known claim, and malformed files fail loudly."""
import re
from pathlib import Path

import pytest

from claims.registry import SOURCES, RegistryError, load_registry
from claims.report import collected_claims, registry_of

pytestmark = pytest.mark.fast

ROOT = Path(__file__).resolve().parents[1]
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
    assert sum(c.descriptive for c in registry.values()) == 15


def test_the_registry_quotes_are_verbatim_from_the_chapters(request):
    seeds = ROOT.parent / "shared"
    if not (seeds / SOURCES["IT"]).is_file():
        pytest.skip(f"the chapters are not at {seeds}/seeds; quotes cannot be checked here")
    text = {s: re.sub(r"\s+", " ", (seeds / p).read_text(encoding="utf-8")) for s, p in SOURCES.items()}
    for c in registry_of(request.config).values():
        for part in c.quote.split(" […] "):
            assert re.sub(r"\s+", " ", part) in text[c.source], c.id


@pytest.mark.parametrize("text, message", [
    (GOOD + "\n" + GOOD, "claim #2 (X-01) is registered twice"),
    (GOOD.replace('value = ""\n', ""), "claim #1 (X-01) is missing field(s) value"),
    (GOOD.replace('kind = "exact"', 'kind = "vibes"'), "claim #1 (X-01): kind 'vibes'"),
    (GOOD.replace('kind = "exact"', 'kind = "descriptive"'), "says why it is untestable"),
    (GOOD + "[[claim", "is not valid TOML"),
])
def test_a_malformed_registry_names_the_entry_in_one_line(tmp_path, text, message):
    path = tmp_path / "claims.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RegistryError) as e:
        load_registry(path)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_a_missing_registry_says_where_it_looked(tmp_path):
    with pytest.raises(RegistryError, match="not found"):
        load_registry(tmp_path / "nope.toml")
