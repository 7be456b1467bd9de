"""index.html: the report as one self-contained page (inline CSS and JS, figures linked
relatively), written beside claims.md. ``templates`` renders every page of the report
(templates/: this one, the annotated chapters of chapters.py, and claims.md and corrections.md
of markdown.py)."""
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from .badge import badge_svg, badge_text
from .fmt import lines, measured
from .tex import to_html
from .verdict import STATUSES, by_section, headline_text, headline_value, lower_scale_divergences, point_state

# One environment for every page: HTML escaped, Markdown (*.md.j2) not.
templates = Environment(loader=FileSystemLoader(Path(__file__).parent / "templates"),
                        autoescape=lambda name: not (name or "").endswith(".md.j2"), undefined=StrictUndefined,
                        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
templates.filters.update(value=lines, short=lambda nodeid: nodeid.rsplit("/", 1)[-1], held=point_state,
                         measured=measured, tex=lambda text: Markup(to_html(str(text))))


def _row(c: dict, figs: dict, lang: dict) -> dict:
    text = headline_text(c)
    one_doc, one_ours, one_label = headline_value(c)
    return dict(c, verdict_rest=text[len(c["status"]):].strip(), lang=lang.get(c["source"], ""),
                figures=figs.get(c["id"], []), one_doc=one_doc, one_ours=one_ours, one_label=one_label,
                one_ours_text=measured(one_ours, one_label),
                kind=(c.get("diagnosis") or {}).get("kind"),
                lower=[c["scales"][s]["reason"] for s in lower_scale_divergences(c)])


def page(doc: dict) -> str:
    figs = {}
    for f in doc.get("figures", []):
        figs.setdefault(f["claim"], []).append(f["path"])
    sources = doc.get("sources") or [{"id": s, "title": s, "language": ""}
                                     for s in dict.fromkeys(c["source"] for c in doc["claims"])]
    files = {s["id"]: s.get("file") or s["id"] for s in sources}
    rows = [dict(_row(c, figs, {s["id"]: s["language"] for s in sources}),
                 place=f"{files.get(c['source'], c['source'])}" + (f":{c['line']}" if c.get("line") else ""))
            for c in doc["claims"]]
    chapters = [(s["id"], s["title"], by_section([r for r in rows if r["source"] == s["id"]])) for s in sources]
    label, message, hexc, _ = badge_text(doc)
    return templates.get_template("report.html.j2").render(
        doc=doc, statuses=STATUSES, badge=Markup(badge_svg(label, message, hexc)),
        title=doc.get("title") or "Which claims hold",
        errata=[r for r in rows if r["status"] in ("fails", "diverges", "suspect") and not r.get("broken")],
        broken=[r for r in rows if r.get("broken")],
        undecided=[r for r in rows if r["status"] == "undecided"],
        lower=[r for r in rows if r["lower"]], chapters=chapters, total=len(rows))
