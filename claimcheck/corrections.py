"""What each erratum's sentence should read: a proposed correction, made from the measured values.

The registry gives a claim a ``correction``: the sentence as it should read, in the document's
language, with ``{placeholders}`` for our numbers. It is a template, never a typed-in result: it
is filled from the record the sentence is about (the claim's ``subject``), so it follows the
numbers when they move. The placeholders, for a record whose measured value is

    a number                        {value}
    [mean, lo, hi] (an interval)    {mean} {lo} {hi}
    a dict of either                {key} or {key.mean} {key.lo} {key.hi}

each with an optional format spec (``{mean:.1f}``, ``{value:,.0f}``), written in the document's
number style: "1,05" and "5.147" in Italian, "1.05" and "5,147" in English (``NUMBER_STYLE``).

What is proposed depends on the erratum's kind (``verdict.erratum_kind``):

    text      the sentence rewritten with our value: the filled ``correction``
    unstated  the sentence with the setting that explains it added: ``setting_words`` gives the
              words for each grid point, in the document's language
    pending   nothing yet: what measurement is missing, and what it costs

Pure functions; the report writes their results (the errata table, corrections.md, a patch per
source and a suggestion on the annotated page).
"""
import difflib
import math
import string

from .fingerprint import places
from .registry import QUOTE_JOIN

# language -> (decimal mark, thousands separator); a language not here reads like English
NUMBER_STYLE = {
    "it": (",", "."), "pl": (",", "\u00a0"), "de": (",", "."), "es": (",", "."), "fr": (",", "\u00a0"),
    "pt": (",", "."), "nl": (",", "."), "en": (".", ","),
}


class CorrectionError(ValueError):
    """A correction that cannot be made from these records: one line says why."""


def number(x: float, spec: str, language: str) -> str:
    """``x`` formatted by ``spec`` (default: 4 significant digits) in the language's style."""
    if not math.isfinite(x):
        raise CorrectionError("one seed: no interval to write")
    text = format(float(x), spec or ".4g")
    if "e" in text and not spec:
        text = format(float(x), ",.0f")
    decimal, thousands = NUMBER_STYLE.get(language, NUMBER_STYLE["en"])
    return text.replace(",", "\0").replace(".", decimal).replace("\0", thousands)


def is_interval(v) -> bool:
    """[mean, lo, hi] with lo <= mean <= hi (bounds may be infinite: one seed)."""
    return (isinstance(v, list) and len(v) == 3 and all(isinstance(x, (int, float)) for x in v)
            and v[1] <= v[0] <= v[2])


def _fields(measured) -> dict[str, object]:
    """Placeholder name -> number, from a record's measured value."""
    if isinstance(measured, (int, float)) and not isinstance(measured, bool):
        return {"value": measured}
    if is_interval(measured):
        return dict(zip(("mean", "lo", "hi"), measured))
    if isinstance(measured, dict):
        out = {}
        for k, v in measured.items():
            for name, x in _fields(v).items():
                out[k if name == "value" else f"{k}.{name}"] = x
        return out
    raise CorrectionError(f"the subject's value {measured!r} is not a number, an interval, or a dict of them")


def fill(template: str, measured, language: str) -> str:
    """The template with its placeholders written from ``measured`` in the language's style."""
    fields = _fields(measured)
    out = []
    for literal, name, spec, conv in string.Formatter().parse(template):
        out.append(literal)
        if name is None:
            continue
        if name not in fields:
            raise CorrectionError(f"the correction names {{{name}}}, and its subject records only "
                                  + ", ".join(f"{{{k}}}" for k in fields))
        out.append(number(fields[name], spec or "", language))
    return "".join(out)


def _subject(claim: dict) -> dict | None:
    from .verdict import subject_record
    return subject_record(claim)


def _cost(diagnosis: dict) -> str:
    """What the open grid points cost to measure, from the model-steps each declares."""
    steps = sum(e.get("model_steps") or 0 for e in diagnosis.get("grid", [])
                if e.get("holds") is None and e.get("point") != "stated")
    return f"about {steps:,} model-steps of training" if steps else "its cost is not declared"


def propose(claim: dict, language: str) -> dict | None:
    """For an erratum (a claim that diverges): ``{kind, proposed, missing, draft, replaces}``.
    ``proposed``: the corrected sentence (kinds text and unstated), else None and ``missing``
    says what measurement would decide and what it costs. ``draft``: the text correction filled
    from our numbers, for a pending erratum, shown as what it would read if the missing
    measurement explains nothing. ``replaces``: the passage of the source it rewrites."""
    if claim.get("status") != "diverges":
        return None
    d = claim.get("diagnosis") or {}
    kind = d.get("kind")
    template, replaces = claim.get("correction"), claim.get("replaces") or claim["quote"].split(QUOTE_JOIN)[0]
    out = {"kind": kind or "unclassified", "proposed": None, "missing": None, "draft": None, "replaces": replaces}

    def filled():
        if not template:
            raise CorrectionError("the registry gives this claim no correction template (`correction = ...`)")
        rec = _subject(claim)
        if rec is None:
            raise CorrectionError("no record of its subject at the headline scale")
        return fill(template, rec["measured"], language)

    try:
        if kind == "text":
            out["proposed"] = filled()
        elif kind == "unstated":
            points = d.get("points") or []
            words = claim.get("setting_words") or {}
            lacking = [p for p in points if p not in words]
            if lacking:
                raise CorrectionError("the registry gives no words for the setting " + ", ".join(lacking)
                                      + " (`setting_words`)")
            out["proposed"] = f"{replaces} ({'; '.join(words[p] for p in points)})"
        elif kind == "pending":
            out["missing"] = f"{d.get('reason') or 'a grid point is open'}; {_cost(d)}"
            if template:
                out["draft"] = filled()
        else:
            out["missing"] = ("no diagnosis grid: the settings the text leaves unstated have not been tried, so "
                              "the text is not yet shown wrong")
    except CorrectionError as e:
        out["missing"] = "; ".join(filter(None, [out["missing"], str(e)]))
    return out


def patch(path: str, text: str, claims: list[dict]) -> str:
    """A unified diff of the source at ``path`` (as ``git apply`` and ``patch -p1`` read it)
    with each proposed correction in place of the passage it replaces; "" when none is proposed."""
    edits = []
    for c in claims:
        p = c.get("correction_proposal") or {}
        if not p.get("proposed"):
            continue
        found = places(text, p["replaces"])
        if not found:
            raise CorrectionError(f"{c['id']}: the passage it corrects is not in {path}: {p['replaces'][:60]!r}")
        edits.append((found[0].start, found[0].end, p["proposed"]))
    if not edits:
        return ""
    new, last = [], 0
    for a, b, repl in sorted(edits):
        if a < last:
            raise CorrectionError(f"two corrections rewrite the same passage of {path}")
        new += [text[last:a], repl]
        last = b
    new.append(text[last:])
    diff = difflib.unified_diff(text.splitlines(keepends=True), "".join(new).splitlines(keepends=True),
                                f"a/{path}", f"b/{path}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in diff)
