"""The claim registry's reading (claimcheck/registry.py): a well-formed file loads in file order, and
every malformed one fails loudly, in one line naming the entry. This document's own registry
against its chapters and its tests: tests/test_registry.py."""
import pytest

from claimcheck.registry import RegistryError, load_registry

pytestmark = pytest.mark.fast

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


def test_a_file_that_is_not_utf8_is_one_line_naming_it(tmp_path):
    """A chapter saved as Latin-1: the file, the byte and the fix, not a codec
    traceback that names no file."""
    (tmp_path / "it.txt").write_bytes("perché".encode("latin-1"))
    (tmp_path / "pl.txt").write_text("", encoding="utf-8")
    path = tmp_path / "claims.toml"
    path.write_text(HEAD + GOOD, encoding="utf-8")
    with pytest.raises(RegistryError) as e:
        load_registry(path).texts()
    assert str(e.value) == f"source IT: {tmp_path / 'it.txt'} is not UTF-8 (byte 0xe9 at offset 5); save it as UTF-8"
    path.write_bytes((HEAD + GOOD).replace('title = "t"', 'title = "perché"').encode("latin-1"))
    with pytest.raises(RegistryError) as e:
        load_registry(path)
    assert str(e.value).startswith(f"{path} is not UTF-8 (byte 0xe9 at offset ") and "\n" not in str(e.value)


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
    (GOOD + 'subject = "gap"\n', "claims.toml: claim #1 (X-01): 'subject' is not a registry field; mark the record "
     "the sentence is about in its test: claim_record(..., subject=True)"),
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
