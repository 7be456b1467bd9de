"""claims.md: the report as markdown, errata first."""
from .badge import badge_text
from .fmt import cell, measured
from .verdict import (AT_CAP, KIND_TEXT, STATUSES, UNCLASSIFIED, kind_text, by_section, headline_text, headline_value, lower_scale_divergences,
                      point_state)


INTERRUPTED = "Interrupted: this run stopped before its end (Ctrl-C); a claim whose tests it never reached reads not-run."
STATUS_MARK = {"holds": "✅ holds", "fails": "❌ fails", "diverges": "⚠️ diverges",
               "undecided": "⚖️ undecided",
               "suspect": "❓ suspect", "not-measured": "∅ not measured", "not-run": "⏸ not run", "untested": "· untested",
               "descriptive": "📖 descriptive"}


def is_erratum(c: dict) -> bool:
    """Whether a claim is in the Errata table: it fails or diverges, or it did before its sentence
    changed (a suspect claim stays listed, marked suspect, until it is reviewed and stamped); a
    claim whose test broke (an exception, not a failed assertion) is listed apart."""
    if c.get("broken"):  # the test broke: not the sentence's fault (report's "Tests that broke")
        return False
    return c["status"] in ("fails", "diverges") or (c["status"] == "suspect" and c.get("was") in ("fails", "diverges"))


def _scale_note(c: dict) -> str:
    """' (CI scale); diverges at analytic': the headline's scale and what other scales say."""
    text = headline_text(c)
    return " " + text.split(" ", 1)[1] if c.get("scale") else ""


def _at(c: dict, files: dict) -> str:
    """'[text.md:12](chapters/S.html#q-ID) · where': the sentence on the annotated page, the source
    line it starts on, and the registry's ``where``."""
    name = files.get(c["source"], c["source"])
    place = f"{name}:{c['line']}" if c.get("line") else name
    link = f"[{place}](chapters/{c['source']}.html#q-{c['id']})"
    return link + (f" · {cell(c['where'])}" if c.get("where") else "")


def _ours(c: dict) -> str:
    """The number the sentence is about (its subject's record), and every record behind a
    disclosure."""
    doc_v, ours, label = headline_value(c)
    every = "<br>".join(f"{cell(r.get('label') or r['test'].rsplit('::', 1)[-1])}: "
                        f"{cell(measured(r['measured'], r.get('label') or '', _against(r, c)))}"
                        for r in c.get("records", []))
    more = f" <details><summary>every record</summary>{every}</details>" if every else ""
    return f"{cell(measured(ours, label, doc_v))}{' (' + cell(label) + ')' if label else ''}{more}"


def _against(r: dict, c: dict):
    """The value a record is shown beside: its own expected, else the document's."""
    return r["expected"] if r.get("expected") is not None else c.get("expected")


def _why_cell(c: dict) -> str:
    """The tests' own sentence; which test said it, and whose evidence, behind a disclosure."""
    details = "<br>".join(cell(d) for d in c.get("details") or [])
    return cell(c["reason"]) + (f" <details><summary>details</summary>{details}</details>" if details else "")


def proposed(c: dict) -> str:
    """The proposed correction, or what is missing before one can be proposed."""
    p = c.get("correction_proposal")
    if not p and c["status"] == "suspect":
        return "none yet: the sentence changed since it was stamped; review the claim against it, then `claimcheck stamp`"
    if not p:  # a failure is the suite's to fix, not the text's
        return "—"
    if p.get("proposed"):
        return f"**{cell(p['proposed'])}**"
    draft = f" <details><summary>draft</summary>{cell(p['draft'])}</details>" if p.get("draft") else ""
    return f"none yet: {cell(p.get('missing'))}{draft}"


def _errata_row(c: dict, files: dict) -> str:
    """The document's value and ours on one line each, at the headline scale; every record
    behind a disclosure; the proposed correction."""
    doc_v, _, _ = headline_value(c)
    kind = (c.get("diagnosis") or {}).get("kind") or "—"  # the erratum's kind (text, unstated, ...), not the registry's
    return (f"| {c['id']} | {cell(headline_text(c))} | {kind} | {cell(c['quote'])}<br>{_at(c, files)} | {cell(doc_v)} | "
            f"{_ours(c)} | {proposed(c)} | {_why_cell(c)} |")


def _why(claims: list[dict]) -> list[str]:
    """Each diagnosed erratum's grid: the claim's rule at every point tried."""
    out = []
    for c in (c for c in claims if c.get("diagnosis")):
        d = c["diagnosis"]
        out += ["", f"#### Why {c['id']} diverges: {d.get('kind') or 'not classified'}", "",
                kind_text(d) + (f" ({d['reason']})" if d.get("reason") else ""), ""]
        if d.get("fixed"):
            out += [f"Our setup, fixed: {d['fixed']}", ""]
        if not d.get("grid"):  # nothing was tried: no table
            continue
        out += ["| point | settings | value | the claim would hold | why this setting |", "|---|---|---|---|---|"]
        for e in d.get("grid", []):
            held = point_state(e)
            why = e.get("why", "")
            note = f" ({e['missing']})" if e.get("missing") else ""
            out.append(f"| {cell(e['point'])} | {cell(e['settings'] or '—')} | {cell(measured(e['value'], 'interval', c.get('expected')))} | "
                       f"{held}{cell(note)} | {cell(why)} |")
    return out


def _suspects(claims: list[dict]) -> list[str]:
    """Claims whose sentence changed since it was stamped: the old and the new sentence."""
    sus = [c for c in claims if c["status"] == "suspect"]
    if not sus:
        return []
    out = ["", "### Suspect: the sentence changed", "",
           "The text these claims quote changed since their fingerprints were stamped: their verdicts "
           "refer to a sentence that is no longer the same. Review them, then `claimcheck stamp`.", "",
           "| ID | why | stamped sentence | sentence now | the tests said |", "|---|---|---|---|---|"]
    out += [f"| {c['id']} | {cell(c['suspect']['why'])} | {cell(c['suspect'].get('old'))} | "
            f"{cell(c['suspect'].get('new'))} | {cell(c.get('was'))} |" for c in sus]
    return out


def markdown(doc: dict) -> str:
    s, claims = doc["summary"], doc["claims"]
    label, message, _, _ = badge_text(doc)
    out = [f"# {doc.get('title') or 'Which claims hold'}", "",
           f"![{label}: {message}](badge.svg)  ", "",
           f"Generated {doc['generated']} · commit `{doc['commit']}` · "
           + "".join(f"{k} {v} · " for k, v in (doc.get("info") or {}).items())
           + f"tiers run: {', '.join(doc['tiers']) or 'none'}", "",
           " · ".join(f"**{s[k]}** {k}" + (f" ({s[AT_CAP]} at the cap)" if k == "undecided" and s.get(AT_CAP) else "")
                      for k in STATUSES), ""]
    if doc.get("interrupted"):
        out += [f"**{INTERRUPTED}**", ""]
    bad = [c for c in claims if is_erratum(c)]
    out += ["## Errata", "",
            "Claims where the text and our measurement disagree (`fails`) or where our reproduction "
            "honestly departs from it (`diverges`), at the highest scale that ran. This is the list "
            "a course author would act on." + (" A claim whose sentence changed since it was stamped stays "
                                               "listed, marked suspect, until it is reviewed and stamped again."
                                               if any(c["status"] == "suspect" for c in bad) else ""), ""]
    files = {src["id"]: src.get("file") or src["id"] for src in doc.get("sources", [])}
    head = ["| ID | verdict | erratum kind | the document says | document's value | ours | evidence |",
            "|---|---|---|---|---|---|---|"]
    if bad:
        out += ["| ID | verdict | erratum kind | the document says | document's value | ours | proposed | why |",
                "|---|---|---|---|---|---|---|---|"] + [_errata_row(c, files) for c in bad]
        out += ["", "Every proposed correction, and a patch of each text: [corrections.md](corrections.md)."]
        out += _why(bad)
    else:
        out.append("None in this run.")
    out += _suspects(claims)
    broken = [c for c in claims if c.get("broken")]
    if broken:
        out += ["", "### Tests that broke", "",
                "These tests raised an exception other than a failed assertion, so their sentences were not "
                "judged: fix the test, not the text.", ""]
        out += [f"- **{c['id']}**: {c['reason']}" for c in broken]
    open_ = [c for c in claims if c["status"] == "undecided"]
    if open_:
        out += ["", "### Undecided", "",
                "Measured, but the claim's rule cannot decide: an interval straddles its band (or lies "
                "outside it only short of its Bonferroni level). Neither "
                "a pass nor an erratum; a larger sample, declared before it runs, decides.", "",
                "| ID | verdict | the document says | document's value | ours | why |", "|---|---|---|---|---|---|"]
        for c in open_:
            doc_v, _, _ = headline_value(c)
            out.append(f"| {c['id']} | {cell(headline_text(c))} | {cell(c['quote'])} | {cell(doc_v)} | "
                       f"{_ours(c)} | {_why_cell(c)} |")
    lower = [c for c in claims if lower_scale_divergences(c)]
    if lower:
        out += ["", "### Divergences at a lower scale only", "",
                "These hold or are undecided at the highest scale that ran; a reduced configuration does not show "
                "what the text says.", ""]
        out += head + [f"| {c['id']} | {cell(headline_text(c))} | {(c.get('diagnosis') or {}).get('kind') or '—'} | "
                       f"{cell(c['quote'])}<br>{_at(c, files)} | "
                       f"{cell(c['expected'])} | {cell(c['measured'], c['expected'])} | "
                       + cell("; ".join(c["scales"][s]["reason"] for s in lower_scale_divergences(c)))
                       + " |" for c in lower]
    out.append("")
    figs = {}
    for f in doc.get("figures", []):
        figs.setdefault(f["claim"], []).append(f["path"])
    sources = doc.get("sources") or [{"id": s, "title": s} for s in dict.fromkeys(c["source"] for c in claims)]
    for source, title in ((s["id"], s["title"]) for s in sources):
        out += [f"## {title}", "", f"[The text, annotated with every verdict](chapters/{source}.html)", ""]
        for section, rows in by_section([c for c in claims if c["source"] == source]):
            out += ["", f"### {section}", "",
                    "| ID | status | claim | document | measured | tolerance | evidence |",
                    "|---|---|---|---|---|---|---|"]
            for c in rows:
                links = " ".join(f"[figure]({p})" for p in figs.get(c["id"], []))
                out.append(f"| {c['id']} | {STATUS_MARK[c['status']]}{_scale_note(c)} | {cell(c['statement'])}<br>"
                           f"{_at(c, files)} | {cell(c['expected'])} | {cell(c['measured'], c['expected'])} {links} | "
                           f"{cell(c['tolerance'])} | {_why_cell(c)} |")
        out.append("")
    if doc.get("pins"):
        out += ["## Pins", "",
                "Regression pins are tests of their own: a stale pin fails the run but never changes "
                "a claim's verdict.", "",
                "| pin | status | tolerance | meaning | test |", "|---|---|---|---|---|"]
        out += [f"| `{p['file']}` | {p['status']} | {cell(p.get('tolerance'))} | {cell(p.get('meaning'))} | "
                f"{cell(p['test'].rsplit('/', 1)[-1])} |" for p in doc["pins"]]
        out.append("")
    if doc.get("notes"):
        out += ["## Notes", "", *(f"- {cell(n)}" for n in doc["notes"]), ""]
    if doc.get("runs"):
        out += ["## Runs", "", "| generated | commit | where | tiers | command |",
                "|---|---|---|---|---|"]
        out += [f"| {r.get('generated')} | {r.get('commit')} | "
                + cell("; ".join(f"{k} {v}" for k, v in (r.get("info") or {}).items()) or "—")
                + f" | {', '.join(r.get('tiers', []))} | `{r.get('args', '')}` |" for r in doc["runs"]]
    trained = [(r, t) for r in doc.get("runs", []) for t in r.get("training") or []]
    if trained:
        out += ["", "## Training runs", "",
                "What each run of the suite trained (runs read from the run cache are not listed).", "",
                "| run | family / arm / seed | steps | wall time |", "|---|---|---|---|"]
        out += [f"| {r.get('generated')} | `{t['label']}` | {t['steps']} | {t['wall_s']:.1f} s |" for r, t in trained]
    return "\n".join(out) + "\n"


def corrections_md(doc: dict) -> str:
    """corrections.md: for each erratum, the sentence, what it should read (or what is missing
    first), and its kind; then how to apply each source's patch."""
    files = {src["id"]: src.get("file") or src["id"] for src in doc.get("sources", [])}
    errata = [c for c in doc["claims"] if c.get("correction_proposal")]
    out = [f"# Proposed corrections: {doc.get('title') or 'the document'}", "",
           "Each erratum's sentence, and what it should read. A proposal is made from the measured "
           "values, in the text's language, so it follows the numbers when they move. An erratum "
           "whose kind is *pending* gets none until the missing measurement is made: what it would "
           "read if that measurement explains nothing is shown as a draft.", ""]
    if not errata:
        out.append("No erratum in this report.")
    for c in errata:
        p = c["correction_proposal"]
        kind = p["kind"]
        out += [f"## {c['id']} · [{files.get(c['source'], c['source'])}:{c.get('line') or '?'}]"
                f"(chapters/{c['source']}.html#q-{c['id']})", "",
                f"**Kind:** {kind}: {kind_text(c.get('diagnosis')) if c.get('diagnosis') else UNCLASSIFIED}", "",
                "**The text says:**", "", f"> {p['replaces']}", ""]
        if p.get("proposed"):
            out += ["**Proposed:**", "", f"> {p['proposed']}", ""]
        else:
            out += [f"**No correction yet.** {p.get('missing')}", ""]
            if p.get("readings"):
                out += ["**Readings still open** (if one explains the difference, the sentence stands and states it):", ""]
                out += [f"- `{r['point']}`: {r['state']}" + (f". It would read: \"{r['draft']}\"" if r.get("draft") else "")
                        for r in p["readings"]]
                out.append("")
            if p.get("draft"):
                out += ["**Draft, if none of the readings explains it:**" if p.get("readings") else
                        "**Draft, if the missing measurement explains nothing:**", "", f"> {p['draft']}", ""]
        out += [f"**Why:** {c['reason']}", ""]
    if doc.get("patches"):
        out += ["## Patches", "", "Each text with every proposed correction in place, as a unified diff beside this "
                "file. Apply it from the test run's root folder, with this folder's path in front "
                "(`reports/` by default): `git apply <this folder>/chapters/<source>.patch`, or `patch -p1 -i …`.", ""]
        out += [f"- [chapters/{sid}.patch](chapters/{sid}.patch): "
                f"`{next((s.get('path') for s in doc.get('sources', []) if s['id'] == sid), sid)}`"
                for sid in doc["patches"]]
        out.append("")
    for problem in doc.get("patch_problems") or []:
        out += [f"**No patch:** {problem}", ""]
    return "\n".join(out) + "\n"
