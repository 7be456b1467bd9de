"""The claim registry: the documents (``[[source]]``) and every claim quoted from them (``[[claim]]``).

Stored as TOML, one table per entry. A source's ``file`` is relative to the registry file. A
malformed registry raises ``RegistryError`` with one line that names the entry.

    [[source]]
    id = "IT"                     # what a claim's ``source`` names
    file = "chapters/ch1.txt"     # the text the quotes come from
    title = "Chapter 1: attention"
    language = "it"               # the text's language, for the page (lang="...")

    [[claim]]
    id = "ATT-01"  source = "IT"  quote = "..."  statement = "..."  value = "..."  kind = "exact"  tier = "fast"
"""
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

KIND_WORDS = ("exact", "numeric", "qualitative", "descriptive")
REQUIRED = ("id", "source", "quote", "statement", "value", "kind", "tier")
OPTIONAL = ("section", "where", "full_tier", "untestable", "correction", "replaces", "no_setting", "derived")
TABLES = ("setting_words",)  # optional fields that are tables of strings
SOURCE_FIELDS = ("id", "file", "title", "language")
QUOTE_JOIN = " […] "  # several quoted passages of one claim, as one string


class RegistryError(ValueError):
    pass


@dataclass(frozen=True)
class Source:
    id: str
    file: str
    title: str
    language: str
    path: Path  # the file, resolved against the registry's folder

    def text(self) -> str:
        try:
            return self.path.read_text(encoding="utf-8")
        except OSError as e:
            raise RegistryError(f"source {self.id}: cannot read {self.path} ({e.strerror or e}); fix its "
                                "file in the registry's [[source]] table") from None
        except UnicodeDecodeError as e:
            raise RegistryError(f"source {self.id}: {self.path} is not UTF-8 (byte 0x{e.object[e.start]:02x} at "
                                f"offset {e.start}); save it as UTF-8") from None


@dataclass(frozen=True)
class Claim:
    id: str
    source: str
    quote: str
    statement: str
    value: str
    kind: str
    tier: str
    section: str = ""
    where: str = ""
    full_tier: str | None = None
    untestable: str | None = None
    correction: str | list | None = None  # the sentence as it should read, a template (claimcheck.corrections)
    replaces: str | list | None = None  # the passage(s) the correction rewrites (default: the quote)
    no_setting: str | None = None  # why no unstated setting can change the value (an erratum then reads text)
    setting_words: dict | None = None  # grid point -> its words in the document's language
    derived: str | None = None  # how the value follows from the quote, when the quote does not write its number

    @property
    def descriptive(self) -> bool:
        return self.kind == "descriptive"

    @property
    def quotes(self) -> list[str]:
        return self.quote.split(QUOTE_JOIN)


class Registry(Mapping):
    """claim ID -> Claim, in file order, with the sources they quote."""

    def __init__(self, path: Path, sources: dict[str, Source], claims: dict[str, Claim]):
        self.path, self.sources, self.claims = path, sources, claims

    def __getitem__(self, cid):
        return self.claims[cid]

    def __iter__(self):
        return iter(self.claims)

    def __len__(self):
        return len(self.claims)

    def texts(self) -> dict[str, str]:
        """source ID -> its text; RegistryError names a source whose file cannot be read."""
        return {sid: source.text() for sid, source in self.sources.items()}


def _source(entry: dict, n: int, path: Path) -> Source:
    name = f"{path.name}: source #{n} ({entry.get('id', 'no id')})"
    missing = [k for k in SOURCE_FIELDS if not isinstance(entry.get(k), str) or not entry[k]]
    if missing:
        raise RegistryError(f"{name} is missing field(s) {', '.join(missing)}")
    unknown = set(entry) - set(SOURCE_FIELDS)
    if unknown:
        raise RegistryError(f"{name} has unknown field(s) {', '.join(sorted(unknown))}")
    return Source(**entry, path=(path.parent / entry["file"]).resolve())


def _claim(entry: dict, n: int, path: Path, sources: dict, tiers) -> Claim:
    name = f"{path.name}: claim #{n} ({entry.get('id', 'no id')})"
    missing = [k for k in REQUIRED if k not in entry]
    if missing:
        raise RegistryError(f"{name} is missing field(s) {', '.join(missing)}")
    if "subject" in entry:  # the record the sentence is about is marked where it is recorded
        raise RegistryError(f"{name}: 'subject' is not a registry field; mark the record the sentence is about "
                            "in its test: claim_record(..., subject=True)")
    unknown = set(entry) - set(REQUIRED) - set(OPTIONAL) - set(TABLES)
    if unknown:
        raise RegistryError(f"{name} has unknown field(s) {', '.join(sorted(unknown))}")
    for key in (*REQUIRED, *OPTIONAL):
        if key in ("correction", "replaces") and isinstance(entry.get(key), list) \
                and all(isinstance(x, str) for x in entry[key]):
            continue  # a correction of several passages: one template for each
        if key in entry and key != "quote" and not isinstance(entry[key], str):
            raise RegistryError(f"{name}: {key} must be a string, got {type(entry[key]).__name__}")
    for key in TABLES:
        if key in entry and not (isinstance(entry[key], dict) and all(isinstance(v, str) for v in entry[key].values())):
            raise RegistryError(f"{name}: {key} must be a table of strings (point = \"words\")")
    parts = entry["quote"] if isinstance(entry["quote"], list) else [entry["quote"]]
    if not parts or not all(isinstance(q, str) and q.strip() for q in parts):
        raise RegistryError(f"{name}: quote must be a non-empty string, or a list of them")
    if entry["source"] not in sources:
        raise RegistryError(f"{name}: source must be one of {', '.join(sources) or 'the [[source]] ids'}, "
                            f"got {entry['source']!r}")
    if not all(w in KIND_WORDS for w in entry["kind"].split("+")):
        raise RegistryError(f"{name}: kind {entry['kind']!r} is not '+'-joined from {', '.join(KIND_WORDS)}")
    for key in ("tier", "full_tier"):
        if tiers is not None and key in entry and entry[key] not in (*tiers, "none"):
            raise RegistryError(f"{name}: {key} = {entry[key]!r} is not a tier this project declares; set it to one "
                                f"of {', '.join((*tiers, 'none'))}, or declare {entry[key]} in claimcheck_tiers")
    if (entry["kind"] == "descriptive") != ("untestable" in entry):
        raise RegistryError(f"{name}: a descriptive claim, and only one, says why it is untestable")
    if "correction" in entry:
        _check_correction(name, entry)
    quote = entry["quote"]
    quote = QUOTE_JOIN.join(quote) if isinstance(quote, list) else quote
    return Claim(**{**entry, "quote": quote})


def _check_correction(name: str, entry: dict) -> None:
    """A correction template string.Formatter can read, one for each passage it rewrites, and a
    passage named where the quote has several."""
    import string
    templates = entry["correction"] if isinstance(entry["correction"], list) else [entry["correction"]]
    passages = entry.get("replaces", entry["quote"] if not isinstance(entry["quote"], list) else None)
    if passages is None:
        raise RegistryError(f"{name}: its quote has several passages; name the one(s) the correction rewrites "
                            "(replaces = ...)")
    passages = passages if isinstance(passages, list) else [passages]
    if len(templates) != len(passages):
        raise RegistryError(f"{name}: {len(templates)} correction(s) for {len(passages)} passage(s) in replaces; "
                            "give one each")
    for t in templates:
        try:
            list(string.Formatter().parse(t))
        except ValueError as e:
            raise RegistryError(f"{name}: correction {t[:40]!r} is not a template: {e} (a literal brace is {{{{ or }}}})") \
                from None


def load_registry(path, tiers=("fast", "slow", "gpu")) -> Registry:
    """The registry at ``path``; ``tiers``: the tier names a claim may give (None: any, for a
    command that does not know the document's ini)."""
    path = Path(path)
    if not path.is_file():
        raise RegistryError(f"claim registry {path} not found; run from the repository root "
                            "or pass --claims-registry")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise RegistryError(f"{path.name} is not valid TOML: {e}") from None
    except UnicodeDecodeError as e:
        raise RegistryError(f"{path} is not UTF-8 (byte 0x{e.object[e.start]:02x} at offset {e.start}); "
                            "save it as UTF-8") from None
    sources: dict[str, Source] = {}
    for n, entry in enumerate(data.get("source", []), 1):
        s = _source(entry, n, path)
        if s.id in sources:
            raise RegistryError(f"{path.name}: source #{n} ({s.id}) is registered twice")
        sources[s.id] = s
    claims: dict[str, Claim] = {}
    for n, entry in enumerate(data.get("claim", []), 1):
        c = _claim(entry, n, path, sources, tiers)
        if c.id in claims:
            raise RegistryError(f"{path.name}: claim #{n} ({c.id}) is registered twice")
        claims[c.id] = c
    if not claims:
        raise RegistryError(f"{path.name} holds no [[claim]] tables")
    return Registry(path, sources, claims)
