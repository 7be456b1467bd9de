"""index.html: the report as one self-contained page (inline CSS and JS, figures linked
relatively), written beside claims.md. jinja2 comes with torch."""
from itertools import groupby
from pathlib import Path

from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup

from .render import _fmt, badge_svg, badge_text
from .verdict import STATUSES, headline_text, headline_value, lower_scale_divergences

CHAPTERS = {"IT": "Italian chapter: attention and the transformer block",
            "PL": "Polish lab: the tiny GPT"}
LANG = {"IT": "it", "PL": "pl"}


def _value(v):
    """A dict becomes one 'key: value' line per entry; anything else is _fmt's one line."""
    return [f"{k}: {_fmt(x)}" for k, x in v.items()] if isinstance(v, dict) else [_fmt(v)]


_env = Environment(loader=FileSystemLoader(Path(__file__).parent / "templates"), autoescape=True,
                   trim_blocks=True, lstrip_blocks=True)
_env.filters.update(value=_value, short=lambda nodeid: nodeid.rsplit("/", 1)[-1])


def _row(c: dict, figs: dict) -> dict:
    text = headline_text(c)
    one_doc, one_ours, one_label = headline_value(c)
    return dict(c, verdict_rest=text[len(c["status"]):].strip(), lang=LANG.get(c["source"], ""),
                figures=figs.get(c["id"], []), one_doc=one_doc, one_ours=one_ours, one_label=one_label,
                kind=(c.get("diagnosis") or {}).get("kind"),
                lower=[c["scales"][s]["reason"] for s in lower_scale_divergences(c)])


def page(doc: dict) -> str:
    figs = {}
    for f in doc.get("figures", []):
        figs.setdefault(f["claim"], []).append(f["path"])
    rows = [_row(c, figs) for c in doc["claims"]]
    chapters = [(src, title, [(sec, list(cs)) for sec, cs in groupby(
                    (r for r in rows if r["source"] == src), key=lambda r: r["section"])])
                for src, title in CHAPTERS.items()]
    label, message, hexc, _ = badge_text(doc)
    return _env.get_template("report.html.j2").render(
        doc=doc, statuses=STATUSES, badge=Markup(badge_svg(label, message, hexc)),
        errata=[r for r in rows if r["status"] in ("fails", "diverges")],
        lower=[r for r in rows if r["lower"]], chapters=chapters, total=len(rows))
