"""What each erratum's sentence should read: a proposed correction, made from the measured values.

The registry gives a claim a ``correction``: the sentence as it should read, in the document's
language, with ``{placeholders}`` for our numbers. It is a template, never a typed-in result: it
is filled from the record the sentence is about (the one its test recorded with
``claim_record(..., subject=True)``, or the claim's own number), so it follows the
numbers when they move. The placeholders, for a record whose measured value is

    a number                        {value}
    [mean, lo, hi] (an interval)    {mean} {lo} {hi}
    a list of numbers (per seed)    {mean} {median} {min} {max} {n}
    a start count ("K of N ...")    {K} {N} {rate}, and {lo} {hi} where an interval follows
    a dict of numbers or intervals  {key} or {key.mean} {key.lo} {key.hi}

(a list whose record's label says "per seed" is always a list; any other list of three numbers in
the order lo <= first <= hi reads as an interval)

each with an optional format spec (``{mean:.1f}``, ``{value:,.0f}``, ``{value:.1%}``), written in
the document's number style: "1,05", "5.147" and "27,9 %" where language = "it", "1.05", "5,147" and "27.9%"
in English (``NUMBER_STYLE``); ``!c`` writes a number as code does ("37.82" in a program's
output, whatever the language). A sentence the correction rewrites in several places (table
rows) gives ``replaces`` and ``correction`` as lists of equal length.

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
import re
import string
from decimal import Decimal

from .fingerprint import places
from .fmt import is_interval
from .registry import QUOTE_JOIN
from .verdict import UNCLASSIFIED, _last, headline_records, marked_record, point_looks

# languages whose style puts a (no-break) space before the percent sign
SPACED_PERCENT = {"it", "fr", "de", "es"}
# language -> (decimal mark, thousands separator); a language not here reads like English
NUMBER_STYLE = {
    "it": (",", "."), "pl": (",", "\u00a0"), "de": (",", "."), "es": (",", "."), "fr": (",", "\u00a0"),
    "pt": (",", "."), "nl": (",", "."), "en": (".", ","),
}


class CorrectionError(ValueError):
    """A correction that cannot be made from these records: one line says why."""


def number(x: float, spec: str, language: str, code: bool = False) -> str:
    """``x`` formatted by ``spec`` (default: 4 significant digits) in the language's style, or,
    with ``code``, as a program prints it."""
    if not math.isfinite(x):
        raise CorrectionError("one seed: no interval to write")
    try:
        text = format(float(x), spec or ".4g")
    except ValueError as e:  # a spec float formatting does not know ("d", ".1q")
        raise CorrectionError(f"the format spec {spec!r} does not format a number: {e}") from None
    if "e" in text and not spec:  # 4 significant digits, never in exponent form
        text = format(Decimal(text), ",f") if abs(x) < 1e4 else format(float(x), ",.0f")
    if code:
        return text
    decimal, thousands = NUMBER_STYLE.get(language, NUMBER_STYLE["en"])
    text = text.replace("-", "\u2212")  # prose takes the minus sign, not the hyphen
    if text.endswith("%") and language in SPACED_PERCENT:  # "27,9 %" there; "32%" elsewhere
        text = text[:-1] + "\u00a0%"
    return text.replace(",", "\0").replace(".", decimal).replace("\0", thousands)


# what claimcheck.rules.rate_text writes: "25 of 77 starts, rate 0.32 [0.21, 0.45] against ..."
_COUNT = re.compile(r"(\d+) of (\d+)\b(?:[^\[]*\[([-\d.]+), ([-\d.]+)\])?")


def _fields(measured, per_seed: bool = False) -> dict[str, object]:
    """Placeholder name -> number, from a record's measured value; ``per_seed``: a list is one
    number per seed, never an interval (the record's label says "per seed")."""
    if isinstance(measured, (int, float)) and not isinstance(measured, bool):
        return {"value": measured}
    if is_interval(measured) and not per_seed:
        return dict(zip(("mean", "lo", "hi"), measured))
    if isinstance(measured, str) and (m := _COUNT.match(measured)) and int(m[2]):
        out = {"K": int(m[1]), "N": int(m[2]), "rate": int(m[1]) / int(m[2])}
        return {**out, "lo": float(m[3]), "hi": float(m[4])} if m[3] else out
    if (isinstance(measured, list) and measured
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in measured)):
        xs = sorted(measured)
        mid = len(xs) // 2
        return {"mean": math.fsum(xs) / len(xs), "median": xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2,
                "min": xs[0], "max": xs[-1], "n": len(xs)}
    if isinstance(measured, dict):  # its numbers and intervals; other entries (flags, lists) name nothing
        out = {}
        for k, v in measured.items():
            if isinstance(v, bool) or not (isinstance(v, (int, float)) or is_interval(v)):
                continue
            for name, x in _fields(v).items():
                out[k if name == "value" else f"{k}.{name}"] = x
        return out
    raise CorrectionError(f"the subject's value {measured!r} is not a number, an interval, a list of numbers, "
                          "a start count or a dict of numbers and intervals")


def parse(template: str) -> list:
    """The template's (literal, name, spec, conversion) parts; CorrectionError on a template
    string.Formatter cannot read (a stray brace)."""
    try:
        return list(string.Formatter().parse(template))
    except ValueError as e:
        raise CorrectionError(f"the correction template {template[:40]!r} is malformed: {e}") from None


def fill(template: str, measured, language: str, per_seed: bool = False) -> str:
    """The template with its placeholders written from ``measured`` in the language's style
    (``per_seed``: ``measured`` is a list of one number per seed)."""
    fields = _fields(measured, per_seed)
    out = []
    for literal, name, spec, conv in parse(template):
        out.append(literal)
        if name is None:
            continue
        if name not in fields:
            raise CorrectionError(f"the correction names {{{name}}}, and its subject records only "
                                  + ", ".join(f"{{{k}}}" for k in fields))
        if conv not in (None, "c", "n", "p"):
            raise CorrectionError(f"{{{name}!{conv}}}: the conversions are !c (a number as code prints it), !n and "
                                  "!p (a negative or positive number written as its size, for words that carry "
                                  "the sign: 'inferiore del {mean!n:.0%}')")
        x = fields[name]
        if conv in ("n", "p"):
            if (x < 0) != (conv == "n") or x == 0:
                raise CorrectionError(f"{{{name}!{conv}}}: the template's words say the number is "
                                      f"{'negative' if conv == 'n' else 'positive'}, and it measures {x:+.4g}")
            x = abs(x)
        out.append(number(x, spec or "", language, code=conv == "c"))
    return "".join(out)


def _cost(diagnosis: dict) -> str:
    """What the open grid points cost to measure: the model-steps each point not wholly recorded
    declares (a grid entry's ``model_steps``); a point undecided, or held on one look only, needs
    a second look on fresh seeds."""
    grid = [e for e in diagnosis.get("grid", []) if e.get("point") != "stated" and not e.get("supersedes")]
    steps = sum(e.get("model_steps") or 0 for e in grid)
    silent = [e for e in grid if e.get("value") is None and not e.get("model_steps") and e.get("holds") is None]
    parts = [f"recording what is missing costs about {steps:,} model-steps of training"] * bool(steps)
    parts += ["a point not recorded declares no cost"] * bool(silent)
    if any(e.get("state") == "undecided" or e.get("holds") is True for e in grid):
        parts.append("a point undecided, or held on one look only, needs a second look on fresh seeds, declared "
                     "before it runs: as many model-steps again as its first")
    return "; ".join(parts)


def correction_record(claim: dict) -> dict:
    """The record a correction is filled from: the one its test marked ``subject=True``, or, with
    none marked, the claim's own number (the record with no label) at the headline scale; never a
    guess."""
    if (marked := marked_record(claim)) is not None:
        return marked
    own = [r for r in headline_records(claim) if r.get("label") is None and r.get("measured") is not None]
    if not own:
        raise CorrectionError("no record is marked as the one the sentence is about, and no test recorded the claim's "
                              "own number: pass subject=True to the claim_record call that records it")
    return own[-1]


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
    template = claim.get("correction")
    templates = template if isinstance(template, list) else [template] * bool(template)
    replaces = claim.get("replaces") or claim["quote"].split(QUOTE_JOIN)[0]
    passages = replaces if isinstance(replaces, list) else [replaces]
    out = {"kind": kind or "unclassified", "proposed": None, "missing": None, "draft": None,
           "replaces": QUOTE_JOIN.join(passages), "edits": []}

    def filled():
        if not templates:
            raise CorrectionError("the registry gives this claim no correction template (`correction = ...`)")
        if len(templates) != len(passages):
            raise CorrectionError(f"the registry gives {len(templates)} correction(s) for {len(passages)} passage(s) "
                                  "it replaces; give one each")
        rec = correction_record(claim)
        per_seed = "per seed" in (rec.get("label") or "")
        edits = [{"replaces": p, "with": fill(t, rec["measured"], language, per_seed)} for p, t in zip(passages, templates)]
        return QUOTE_JOIN.join(e["with"] for e in edits), edits

    try:
        if kind == "text":
            out["proposed"], out["edits"] = filled()
        elif kind == "unstated":
            points = d.get("points") or []
            words = claim.get("setting_words") or {}
            lacking = [p for p in points if p not in words]
            if lacking:
                raise CorrectionError("the registry gives no words for the setting " + ", ".join(lacking)
                                      + " (`setting_words`)")
            added = with_setting(passages[-1], "; ".join(words[p] for p in points))
            out["edits"] = [{"replaces": passages[-1], "with": added}]
            out["proposed"] = QUOTE_JOIN.join([*passages[:-1], added])
        elif kind in ("pending", "undecided at the cap"):  # at the cap nothing more is recorded: no cost
            cost = _cost(d) if kind == "pending" else ""
            out["missing"] = "; ".join(filter(None, [d.get("reason") or "a grid point is open", cost]))
            out["readings"] = readings(passages[-1], d, claim.get("setting_words") or {})
            if templates:
                out["draft"] = filled()[0]
        else:
            out["missing"] = UNCLASSIFIED
    except CorrectionError as e:
        out["missing"] = "; ".join(filter(None, [out["missing"], str(e)]))
    return out


READING_STATES = {"once": "holds on one look; a second look on fresh seeds decides",
                  "open": "not measured on its declared looks yet",
                  "undecided": "measured, and undecided at the grid's level",
                  "explains": "holds, and again on a second look at fresh seeds"}


def with_setting(passage: str, words: str) -> str:
    """The passage with the words that state a setting put before its closing punctuation."""
    body, end = re.fullmatch(r"(.*?)([.;:!?]*)", passage, re.S).groups()
    return f"{body} ({words}){end}"


def readings(passage: str, diagnosis: dict, words: dict) -> list[dict]:
    """While an erratum's kind is open: each setting that could still explain it, what is known of
    it, and the sentence as it would stand if it did (the text keeps its claim and states the
    setting; ``setting_words`` gives the words, else the setting is named as the grid names it)."""
    out = []
    for point, look in point_looks(diagnosis.get("grid") or []).items():
        if look == "no":
            continue
        last = _last(diagnosis["grid"], point)
        state = ("undecided" if last.get("state") == "undecided" else look)
        said = last.get("missing") if last.get("selected_on_report") else READING_STATES.get(state, state)
        out.append({"point": point, "state": said,
                    "draft": with_setting(passage, words[point]) if point in words else None})
    return out


def _lines(text: str) -> list[str]:
    """The lines of ``text`` with their ends, split after each \\n only (str.splitlines also
    splits at form feeds and Unicode separators, where git and patch do not)."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _wrap(segment: str, lines: list[str]) -> str:
    """``segment`` (one paragraph's touched lines, edited, its line breaks gone) hard-wrapped as
    ``lines`` were: no line longer than their longest, later lines indented as their second."""
    eol = "\r\n" if lines[0].endswith("\r\n") else "\n"
    width = max(len(x.rstrip("\r\n")) for x in lines)
    indent = re.match(r"[ \t]*", lines[1]).group()
    lead = re.match(r"[ \t]*", segment).group()
    out, line = [], lead
    for word in segment.split():
        if line.strip() and len(line) + 1 + len(word) > width:
            out.append(line)
            line = indent + word
        else:
            line = f"{line} {word}" if line.strip() else line + word
    return eol.join([*out, line])


def _regions(text: str, edits: list[tuple[int, int, str]], path: str):
    """The edits, grouped into the whole lines they touch: ``(start, end, new text)``. A passage
    that ran over a hard-wrapped paragraph's line breaks is re-wrapped to that paragraph's width,
    its touched lines only; a passage within one line leaves the other lines as they are."""
    groups = []
    for a, b, repl in edits:
        lo = text.rfind("\n", 0, a) + 1
        hi = text.find("\n", b)
        hi = len(text) if hi < 0 else hi
        hi -= text[lo:hi].endswith("\r")  # a CRLF line's \r stays with its \n, outside the region
        if groups and a < groups[-1][2][-1][1]:
            raise CorrectionError(f"two corrections rewrite the same passage of {path}")
        if groups and lo <= groups[-1][1]:  # shares a line with the previous edit
            groups[-1][1] = max(groups[-1][1], hi)
            groups[-1][2].append((a, b, repl))
        else:
            groups.append([lo, hi, [(a, b, repl)]])
    for lo, hi, group in groups:
        parts, last = [], lo
        for a, b, repl in group:
            parts += [text[last:a], repl]
            last = b
        parts.append(text[last:hi])
        edited = "".join(parts)
        old = _lines(text[lo:hi])
        if any("\n" in text[a:b] for a, b, _ in group) and len(old) > 1:
            edited = _wrap(edited.replace("\r\n", " ").replace("\n", " "), old)
        yield lo, hi, edited


def corrected(path: str, text: str, claims: list[dict]) -> str | None:
    """``text`` (the source at ``path``, as on disk) with each proposed correction in place of the
    passage it replaces, hard wraps kept (``_regions``); None when none is proposed."""
    edits = []
    for c in claims:
        p = c.get("correction_proposal") or {}
        for e in (p.get("edits") or []) if p.get("proposed") else []:
            found = places(text, e["replaces"])
            if not found:
                raise CorrectionError(f"{c['id']}: the passage it corrects is not in {path}: {e['replaces'][:60]!r}")
            edits.append((found[0].start, found[0].end, e["with"]))
    if not edits:
        return None
    new, last = [], 0
    for a, b, lines in _regions(text, sorted(edits), path):  # each region: whole lines, rewritten
        new += [text[last:a], lines]
        last = b
    new.append(text[last:])
    return "".join(new)


def patch(path: str, text: str, claims: list[dict]) -> str:
    """A unified diff of the source at ``path`` (as ``git apply`` and ``patch -p1`` read it)
    with each proposed correction in place of the passage it replaces; "" when none is proposed.
    ``text`` is the file as it is on disk (its line ends kept: a CRLF file gets a CRLF patch)."""
    new = corrected(path, text, claims)
    if new is None:
        return ""
    if path.startswith(("../", "/")) or re.match(r"[A-Za-z]:", path):
        raise CorrectionError(f"{path} lies outside the run's root folder: no patch for it")
    diff = difflib.unified_diff(_lines(text), _lines(new), f"a/{path}", f"b/{path}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in diff)
