"""The claim registry: every catalogue claim, with its quote, value, kind and tier.

Stored as TOML (``fixtures/claims.toml``), one ``[[claim]]`` table per claim. A malformed
registry raises ``RegistryError`` with one line that names the entry.
"""
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .marks import TIERS as _TIERS

KIND_WORDS = ("exact", "numeric", "qualitative", "descriptive")
TIERS = (*_TIERS, "none")
REQUIRED = ("id", "source", "section", "where", "quote", "statement", "value", "kind", "tier")
SOURCES = {"IT": "fixtures/chapters/000_5fede232be7b7538.txt",
           "PL": "fixtures/chapters/003_855735bf322c23c8.txt"}


class RegistryError(ValueError):
    pass


@dataclass(frozen=True)
class Claim:
    id: str
    source: str
    section: str
    where: str
    quote: str
    statement: str
    value: str
    kind: str
    tier: str
    full_tier: str | None = None
    untestable: str | None = None

    @property
    def descriptive(self) -> bool:
        return self.kind == "descriptive"


def _claim(entry: dict, n: int, path: Path) -> Claim:
    name = f"{path.name}: claim #{n} ({entry.get('id', 'no id')})"
    missing = [k for k in REQUIRED if k not in entry]
    if missing:
        raise RegistryError(f"{name} is missing field(s) {', '.join(missing)}")
    unknown = set(entry) - set(REQUIRED) - {"full_tier", "untestable"}
    if unknown:
        raise RegistryError(f"{name} has unknown field(s) {', '.join(sorted(unknown))}")
    if entry["source"] not in SOURCES:
        raise RegistryError(f"{name}: source must be one of {', '.join(SOURCES)}, got {entry['source']!r}")
    if not all(w in KIND_WORDS for w in entry["kind"].split("+")):
        raise RegistryError(f"{name}: kind {entry['kind']!r} is not '+'-joined from {', '.join(KIND_WORDS)}")
    for key in ("tier", "full_tier"):
        if key in entry and entry[key] not in TIERS:
            raise RegistryError(f"{name}: {key} must be one of {', '.join(TIERS)}, got {entry[key]!r}")
    if (entry["kind"] == "descriptive") != ("untestable" in entry):
        raise RegistryError(f"{name}: a descriptive claim, and only one, says why it is untestable")
    quote = entry["quote"]
    quote = " […] ".join(quote) if isinstance(quote, list) else quote
    return Claim(**{**entry, "quote": quote})


def load_registry(path) -> dict[str, Claim]:
    """id -> Claim, in file order."""
    path = Path(path)
    if not path.is_file():
        raise RegistryError(f"claim registry {path} not found; run from the repository root "
                            "or pass --claims-registry")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise RegistryError(f"{path.name} is not valid TOML: {e}") from None
    claims: dict[str, Claim] = {}
    for n, entry in enumerate(data.get("claim", []), 1):
        c = _claim(entry, n, path)
        if c.id in claims:
            raise RegistryError(f"{path.name}: claim #{n} ({c.id}) is registered twice")
        claims[c.id] = c
    if not claims:
        raise RegistryError(f"{path.name} holds no [[claim]] tables")
    return claims
