"""The registry read against its texts and its suite, before any test runs: ``claimcheck check``,
and the start of every pytest run.

Each problem is one line that names the file and line, the claim, what is wrong and how to fix
it. An error stops a pytest run before its first test (exit 4); a warning is printed and goes
into the report's notes.

    errors:   a quote not in its text (with the nearest passage), a quote that runs from one
              table row or list item into the next, a test naming a claim the registry lacks, a
              registry tier (or full_tier) no test of the claim carries, a test that names claims
              of different tiers and no tier marker (a tier the document does not declare stops
              the registry's loading, in ``claimcheck check`` as in a run)
    warnings: a quote found more than once (it binds to the first place), two claims with the same
              quote, a record's ``expected`` the registry's value does not state, a claim no test
              names
"""
import math
import re
from collections import defaultdict
from dataclasses import dataclass

from .fingerprint import is_markdown, nearest, places



@dataclass(frozen=True)
class Problem:
    where: str    # "claims.toml:12", "test_sort.py:40": the line to edit
    claim: str
    message: str  # what is wrong, then how to fix it
    error: bool = True

    def __str__(self):
        return f"{self.where}: {self.claim}: {self.message}"


def registry_lines(registry) -> dict[str, int]:
    """claim ID -> the line of its ``id = "..."`` in the registry file (the table's first line
    that names it)."""
    out = {}
    try:
        lines = registry.path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return out
    for n, line in enumerate(lines, 1):
        m = re.match(r"\s*id\s*=\s*[\"']([^\"']+)[\"']", line)
        if m and m.group(1) in registry and m.group(1) not in out:
            out[m.group(1)] = n
    return out


_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
# a number as a text writes it: 1,115,394 · 1.115.394 · 2,43 · .5 · 2.98e-08 · 5×10^-3 · 10^4 ·
# 124M · 50.7 % · 1/100 (a sign only where a word cannot end: "10-20" is 10 and 20, "top-5" is 5)
_NUM = re.compile(r"(?:(?<=[\s(=≈~:;,\[])|^)?(?P<sign>[-+−])?(?P<int>\d{1,3}(?:[,.  ]\d{3})+(?!\d)|\d+)?"
                  r"(?P<frac>[.,]\d+)?(?:[eE](?P<exp>[-+−]?\d+))?"
                  r"(?:\s*[×x·*]\s*10\^?(?P<pow>[-+−]?\d+))?(?P<suffix>\s*%|[kKMGB]\b)?")


def _numbers(text: str) -> set[float]:
    """Every number the text can be read as writing (each reading of an ambiguous one)."""
    return {x for x, _ in printed(text)}


def printed(text: str) -> list[tuple[float, float]]:
    """Every number the text can be read as writing, each with half a unit of its last printed
    digit (0 for a ratio or a power, which are exact): ("0.69" -> 0.69 ± 0.005, "124M" -> 1.24e8 ±
    5e5, "50.7 %" -> 50.7 ± 0.05 and 0.507 ± 0.0005)."""
    text = text.translate(_SUPERSCRIPT).replace("−", "-")
    out: list[tuple[float, float]] = []
    for m in _NUM.finditer(text):
        whole, frac = m["int"], m["frac"]
        if not whole and not frac:
            continue
        start = m.start("sign") if m["sign"] else m.start("int") if whole else m.start("frac")
        signed = m["sign"] == "-" and (start == 0 or not text[start - 1].isalnum())
        readings = []
        if whole and frac is None and re.fullmatch(r"\d{1,3}(?:[,.]\d{3})+", whole):
            readings += [whole.replace(",", "").replace(".", ""),           # thousands: 1,115,394
                         whole.replace(",", "."), whole.replace(".", "")]  # or a decimal: 2,430
            if whole.count(",") + whole.count(".") == 1:  # or a list: (128,256)
                readings += re.split(r"[,.]", whole)
        else:
            w = re.sub(r"[,.  ]", "", whole or "0")
            readings.append(w + ("." + frac[1:] if frac else ""))
        for r in readings:
            try:
                x = float(r)
            except ValueError:
                continue
            half = 0.5 * 10.0 ** -(len(r.split(".", 1)[1]) if "." in r else 0)
            for e in (m["exp"], m["pow"]):
                if e:
                    x, half = x * 10 ** int(e.replace("−", "-")), half * 10 ** int(e.replace("−", "-"))
            scale = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "B": 1e9}.get((m["suffix"] or "").strip(), 1)
            x, half = x * scale, half * scale
            x = -x if signed else x
            out.append((x, half))
            if (m["suffix"] or "").strip() == "%":
                out.append((x / 100, half / 100))
    for a, b in re.findall(r"(\d+(?:\.\d+)?)\s*/\s*(\d+(?:\.\d+)?)", text):  # 1/100, also as a ratio
        if float(b):
            out.append((float(a) / float(b), 0.0))
    for base, power in re.findall(r"(?<![\d.])(10|2)\s*\^\s*([-+]?\d+)", text):  # 10^4, 2^10
        out.append((float(base) ** int(power), 0.0))
    return out


def _plain(v):
    """numpy and torch scalars and arrays as Python values."""
    return v.tolist() if hasattr(v, "tolist") else v


def stated(value: str, expected) -> bool:
    """Whether the registry's ``value`` states ``expected``: the same text, a number written in it
    (any of the ways ``_numbers`` reads), a list or dict of such, or words that it contains."""
    expected = _plain(expected)
    if expected is None:
        return True
    if isinstance(expected, dict):
        return all(stated(value, v) for v in expected.values())
    if isinstance(expected, (list, tuple)):
        return all(stated(value, v) for v in expected)
    if isinstance(expected, bool):
        return re.search(rf"\b{expected}\b", value, re.I) is not None
    if not isinstance(expected, (int, float)):
        text = str(expected).strip().lower()
        return text == value.strip().lower() if not text else text in value.lower()
    return any(math.isclose(float(expected), x, rel_tol=1e-9, abs_tol=0.0) for x in _numbers(value))


def expected_problem(claim, expected) -> str | None:
    """Why a record with no label may not carry this ``expected`` (it is the claim's own number,
    so the registry's value must state it), or None."""
    if stated(claim.value, expected):
        return None
    return (f"claim_record({claim.id!r}, expected={expected!r}): the registry's value is {claim.value!r}, "
            "which does not state it; drop expected= (it defaults to the registry's value), fix the "
            "registry's value, or give the record a label= if it measures something else")


def quote_problems(registry, texts: dict[str, str]) -> list[Problem]:
    """Quotes not in their text and quotes that run from one table row or list item into the next
    (errors), quotes found more than once and quotes two claims share (warnings)."""
    out, lines = [], registry_lines(registry)
    first: dict[tuple, str] = {}  # (source, the quote's words) -> the first claim that quotes it
    for c in registry.values():
        where = f"{registry.path.name}:{lines.get(c.id, '?')}"
        source = registry.sources[c.source]
        key = (c.source, *(" ".join(q.split()) for q in c.quotes))
        if key in first:  # the same passage(s): the same sentence, and the same place on the page
            out.append(Problem(where, c.id, f"quote {c.quote!r} is {first[key]}'s too ({registry.path.name}:"
                                            f"{lines.get(first[key], '?')}): fine if both claims are about that "
                                            "sentence; else quote the passage this claim is about", error=False))
        first.setdefault(key, c.id)
        for part in c.quotes:
            found = places(texts[c.source], part, is_markdown(source.file))
            if not found:
                near = nearest(texts[c.source], part)
                hint = (f"; nearest, line {near[0]} of {source.file}: {near[1]!r}" if near else "")
                out.append(Problem(where, c.id, f"quote {part!r} not found in {source.file}{hint}; "
                                                "copy the passage from the text into quote"))
                continue
            if found[0].crosses:
                one = found[0].crosses.removesuffix("s")  # "table row", "list item"
                out.append(Problem(where, c.id, f"quote {part!r} runs across {found[0].crosses} of {source.file} "
                                                f"(line {found[0].line}); quote a passage within one {one} (a claim "
                                                f"about several: quote = [one passage per {one}])"))
            elif len(found) > 1:
                at = ", ".join(str(p.line) for p in found)
                out.append(Problem(where, c.id, f"quote {part!r} found {len(found)} times in {source.file} "
                                                f"(lines {at}); it binds to line {found[0].line}: quote more "
                                                "of the sentence to make it unique", error=False))
    return out


def entry_tiers(entry, registry) -> tuple[str, ...]:
    """The tiers a test runs in: its markers', or else its claims' registry tier."""
    if entry.tiers:
        return entry.tiers
    tiers = {registry[c].tier for c in entry.claims if c in registry}
    return tuple(tiers) if len(tiers) == 1 and tiers != {"none"} else ()


def suite_problems(registry, entries) -> list[Problem]:
    """What the tests, read from their source (``suite.read``), say against the registry."""
    out, lines = [], registry_lines(registry)
    tiers_of = defaultdict(set)
    for e in entries:
        where = f"{e.path}:{e.line}"
        for cid in e.claims:
            if cid not in registry:
                out.append(Problem(where, cid, f"{e.name} names a claim the registry lacks; add a [[claim]] "
                                               f"table for {cid} or fix the ID"))
        tiers = entry_tiers(e, registry)
        if e.claims and not tiers:
            named = sorted({registry[c].tier for c in e.claims if c in registry})
            if named:
                out.append(Problem(where, ", ".join(e.claims), f"{e.name} names claims of registry tier "
                                                               f"{', '.join(named)} and carries no tier marker; add one"))
        for cid in e.claims:
            tiers_of[cid] |= set(tiers)
        for cid, expected, line in e.records:
            if cid in registry and (why := expected_problem(registry[cid], expected)):
                out.append(Problem(f"{e.path}:{line}", cid, why, error=False))
    for c in registry.values():
        where = f"{registry.path.name}:{lines.get(c.id, '?')}"
        have = tiers_of.get(c.id)
        if not have:
            if not c.descriptive:
                out.append(Problem(where, c.id, "no test names this claim: it reads untested; write its test "
                                                f"(@pytest.mark.claim({c.id!r}))", error=False))
            continue
        for key in ("tier", "full_tier"):
            tier = getattr(c, key)
            if tier and tier != "none" and tier not in have:
                out.append(Problem(where, c.id, f"{key} = {tier!r}, but its tests are marked "
                                                f"{', '.join(sorted(have))}: in a {tier} run it would read not-run; "
                                                f"set {key} to the tier of a test, or mark a test {tier}"))
    return out


def value_problems(registry, skip=frozenset()) -> list[Problem]:
    """A claim whose ``value`` writes a number that its quote does not (a registry "763" for a
    sentence saying 762), unless the claim says how it is derived (``derived = "..."``). Claims in
    ``skip`` (a quote with an error: not found, or across table rows or list items; that error comes
    first, and the value is judged once it is fixed) are left out."""
    out, lines = [], registry_lines(registry)
    for c in registry.values():
        wrote = printed(c.value or "")
        if c.derived or not wrote or c.id in skip:
            continue
        said = printed(" ".join(c.quotes))  # either may round the other: to the coarser's last digit
        if not any(abs(x - y) <= max(hx, hy) * (1 + 1e-9) for x, hx in wrote for y, hy in said):
            out.append(Problem(f"{registry.path.name}:{lines.get(c.id, '?')}", c.id,
                               f"value {c.value!r} writes no number its quote writes ({', '.join(sorted({f'{y:g}' for y, _ in said})[:4]) or 'none'}): "
                               "copy the number from the sentence, or say how the value follows from it: "
                               'derived = "..." (the sentence says it in words, or it is computed from it)',
                               error=False))
    return out


def problems(registry, texts: dict[str, str], entries) -> list[Problem]:
    """Every problem, errors first, each in registry or file order."""
    quoted = quote_problems(registry, texts)
    unquoted = frozenset(p.claim for p in quoted if p.error)
    found = quoted + value_problems(registry, unquoted) + suite_problems(registry, entries)
    return [p for p in found if p.error] + [p for p in found if not p.error]
