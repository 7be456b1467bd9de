"""claims.md and corrections.md: the report as Markdown, errata first, from templates/*.md.j2;
the row formatters the templates call."""
from .badge import badge_text
from .fmt import cell, measured
from .html import templates
from .verdict import (AT_CAP, STATUSES, UNCLASSIFIED, kind_text, by_section, headline_text, headline_value, lower_scale_divergences,
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


def _files(doc: dict) -> dict[str, str]:
    """Each source's file name as the rows cite it (its ID where it names none)."""
    return {src["id"]: src.get("file") or src["id"] for src in doc.get("sources", [])}


def markdown(doc: dict) -> str:
    """claims.md, from templates/claims.md.j2: the errata first, then every claim by source and
    section."""
    s, claims = doc["summary"], doc["claims"]
    label, message, _, _ = badge_text(doc)
    links: dict[str, list[str]] = {}
    for f in doc.get("figures", []):
        links.setdefault(f["claim"], []).append(f"[figure]({f['path']})")
    sources = doc.get("sources") or [{"id": i, "title": i} for i in dict.fromkeys(c["source"] for c in claims)]
    return templates.get_template("claims.md.j2").render(
        doc=doc, title=doc.get("title") or "Which claims hold", label=label, message=message,
        summary=" · ".join(f"**{s[k]}** {k}" + (f" ({s[AT_CAP]} at the cap)" if k == "undecided" and s.get(AT_CAP) else "")
                           for k in STATUSES),
        interrupted=INTERRUPTED, bad=[c for c in claims if is_erratum(c)],
        files=_files(doc),
        suspects=[c for c in claims if c["status"] == "suspect"], broken=[c for c in claims if c.get("broken")],
        undecided=[c for c in claims if c["status"] == "undecided"],
        lower=[c for c in claims if lower_scale_divergences(c)],
        sources=[dict(src, sections=by_section([c for c in claims if c["source"] == src["id"]])) for src in sources],
        links=links, marks=STATUS_MARK, trained=[(r, t) for r in doc.get("runs", []) for t in r.get("training") or []],
        # the row formatters, called by the template
        cell=cell, measured=measured, point_state=point_state, kind_text=kind_text, headline_text=headline_text,
        headline_value=headline_value, errata_row=_errata_row, ours=_ours, why_cell=_why_cell, at=_at,
        scale_note=_scale_note, lower_reasons=lambda c: "; ".join(c["scales"][k]["reason"] for k in lower_scale_divergences(c)),
        run_where=lambda r: "; ".join(f"{k} {v}" for k, v in (r.get("info") or {}).items()) or "—")


def corrections_md(doc: dict) -> str:
    """corrections.md, from templates/corrections.md.j2: for each erratum, the sentence, what it
    should read (or what is missing first), and its kind; then how to apply each source's patch."""
    return templates.get_template("corrections.md.j2").render(
        doc=doc, errata=[c for c in doc["claims"] if c.get("correction_proposal")],
        files=_files(doc),
        paths={src["id"]: src.get("path") for src in doc.get("sources", []) if src.get("path")},
        kind_text=kind_text, unclassified=UNCLASSIFIED)
