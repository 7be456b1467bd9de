"""Write the report: claims.json, claims.md (errata first), badge.svg and badge.json."""
import json
from pathlib import Path

from .verdict import (KINDS, STATUSES, figures, headline_text, headline_value, lower_scale_divergences, pins,
                      summary, tiers_run, verdicts)

BADGE_COLOURS = [(0.9, "#4c1", "brightgreen"), (0.75, "#97ca00", "green"),
                 (0.6, "#a4a61d", "yellowgreen"), (0.45, "#dfb317", "yellow"),
                 (0.3, "#fe7d37", "orange"), (0.0, "#e05d44", "red")]


def build(registry: dict, tests: dict, runs: list[dict], suite=()) -> dict:
    """The claims.json document for these tests, from one run or several merged. ``suite``:
    the claim IDs some test of the whole suite names (to tell 'not collected' from 'untested')."""
    claims = verdicts(registry, tests, set(suite))
    last = runs[-1] if runs else {}

    def joined(key):
        return " + ".join(dict.fromkeys(str(r.get(key)) for r in runs)) or "unknown"

    return {
        "generated": last.get("generated"),
        "commit": joined("commit"),
        "torch": joined("torch"),
        "device": joined("device"),
        "tiers": tiers_run(tests),
        "summary": summary(claims),
        "claims": claims,
        "runs": runs,
        "pins": pins(tests),
        "figures": figures(tests),
        "suite": sorted(suite),
        "tests": tests,
    }


def badge_text(doc: dict) -> tuple[str, str, str, str]:
    """(label, message, hex colour, shields colour name)."""
    s = doc["summary"]
    checkable = sum(s.values()) - s["descriptive"]
    frac = s["holds"] / checkable if checkable else 0.0
    hexc, name = next((h, n) for t, h, n in BADGE_COLOURS if frac >= t)
    return "claims", f"{s['holds']}/{checkable} hold", hexc, name


def badge_svg(label: str, message: str, colour: str) -> str:
    """A flat badge in the shields.io style; widths from an average glyph width."""
    w1, w2 = 6 * len(label) + 12, 6 * len(message) + 12
    return f"""<svg xmlns="http://www.w3.org/2000/svg" width="{w1 + w2}" height="20" role="img" aria-label="{label}: {message}">
<title>{label}: {message}</title>
<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>
<clipPath id="r"><rect width="{w1 + w2}" height="20" rx="3" fill="#fff"/></clipPath>
<g clip-path="url(#r)"><rect width="{w1}" height="20" fill="#555"/><rect x="{w1}" width="{w2}" height="20" fill="{colour}"/><rect width="{w1 + w2}" height="20" fill="url(#s)"/></g>
<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11">
<text x="{w1 / 2}" y="14">{label}</text><text x="{w1 + w2 / 2}" y="14">{message}</text></g>
</svg>
"""


def _fmt(v) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, dict):
        return "; ".join(f"{k}: {_fmt(x)}" for k, x in v.items())
    if isinstance(v, list):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    return str(v)


def _cell(v) -> str:
    return _fmt(v).replace("|", "\\|").replace("\n", " ")


STATUS_MARK = {"holds": "✅ holds", "fails": "❌ fails", "diverges": "⚠️ diverges",
               "not-run": "⏸ not run", "untested": "· untested", "descriptive": "📖 descriptive"}


def _scale_note(c: dict) -> str:
    """' (CI scale); diverges at analytic': the headline's scale and what other scales say."""
    text = headline_text(c)
    return " " + text.split(" ", 1)[1] if c.get("scale") else ""


def _errata_row(c: dict) -> str:
    """The document's value and ours on one line each, at the headline scale; every record
    behind a disclosure."""
    doc_v, ours, label = headline_value(c)
    every = "<br>".join(f"{_cell(r.get('label') or r['test'].rsplit('::', 1)[-1])}: {_cell(r['measured'])}"
                        for r in c.get("records", []))
    more = f" <details><summary>every record</summary>{every}</details>" if every else ""
    kind = (c.get("diagnosis") or {}).get("kind") or "—"
    return (f"| {c['id']} | {_cell(headline_text(c))} | {kind} | {_cell(c['quote'])} | {_cell(doc_v)} | "
            f"{_cell(ours)}{' (' + _cell(label) + ')' if label else ''}{more} | {_cell(c['reason'])} |")


def _why(claims: list[dict]) -> list[str]:
    """Each diagnosed erratum's grid: the claim's rule at every point tried."""
    out = []
    for c in (c for c in claims if c.get("diagnosis")):
        d = c["diagnosis"]
        out += ["", f"#### Why {c['id']} diverges: {d.get('kind') or 'not classified'}", "",
                (KINDS.get(d.get("kind")) or "not classified yet") + (f" ({d['reason']})" if d.get("reason") else ""), ""]
        if d.get("fixed"):
            out += [f"Our setup, fixed: {d['fixed']}", ""]
        out += ["| point | settings | value | the claim would hold | why this setting |", "|---|---|---|---|---|"]
        for e in d.get("grid", []):
            held = {True: "yes", False: "no", None: "not measured"}[e["holds"]]
            why = e.get("why", "")
            note = f" ({e['missing']})" if e.get("missing") else ""
            out.append(f"| {_cell(e['point'])} | {_cell(e['settings'] or '—')} | {_cell(e['value'])} | "
                       f"{held}{_cell(note)} | {_cell(why)} |")
    return out


def markdown(doc: dict) -> str:
    s, claims = doc["summary"], doc["claims"]
    label, message, _, _ = badge_text(doc)
    out = ["# Which claims of the chapters hold", "",
           f"![{label}: {message}](badge.svg)  ", "",
           f"Generated {doc['generated']} · commit `{doc['commit']}` · torch {doc['torch']} · "
           f"device {doc['device']} · tiers run: {', '.join(doc['tiers']) or 'none'}", "",
           " · ".join(f"**{s[k]}** {k}" for k in STATUSES), ""]
    bad = [c for c in claims if c["status"] in ("fails", "diverges")]
    out += ["## Errata", "",
            "Claims where the text and our measurement disagree (`fails`) or where our reproduction "
            "honestly departs from it (`diverges`), at the highest scale that ran. This is the list "
            "a course author would act on.", ""]
    head = ["| ID | verdict | kind | the document says | document's value | ours | evidence |",
            "|---|---|---|---|---|---|---|"]
    if bad:
        out += head + [_errata_row(c) for c in bad]
        out += _why(bad)
    else:
        out.append("None in this run.")
    lower = [c for c in claims if lower_scale_divergences(c)]
    if lower:
        out += ["", "### Divergences at a lower scale only", "",
                "These hold at the highest scale that ran; a reduced configuration does not show "
                "what the text says.", ""]
        out += head + [f"| {c['id']} | {_cell(headline_text(c))} | {_cell(c['quote'])} | "
                       f"{_cell(c['expected'])} | {_cell(c['measured'])} | "
                       + _cell("; ".join(c["scales"][s]["reason"] for s in lower_scale_divergences(c)))
                       + " |" for c in lower]
    out.append("")
    figs = {}
    for f in doc.get("figures", []):
        figs.setdefault(f["claim"], []).append(f["path"])
    for source, title in (("IT", "Italian chapter: attention and the transformer block"),
                          ("PL", "Polish lab: the tiny GPT")):
        out += [f"## {title}", ""]
        section = None
        for c in (c for c in claims if c["source"] == source):
            if c["section"] != section:
                section = c["section"]
                out += ["", f"### {section}", "",
                        "| ID | status | claim | document | measured | tolerance | evidence |",
                        "|---|---|---|---|---|---|---|"]
            links = " ".join(f"[figure]({p})" for p in figs.get(c["id"], []))
            out.append(f"| {c['id']} | {STATUS_MARK[c['status']]}{_scale_note(c)} | {_cell(c['statement'])} | "
                       f"{_cell(c['expected'])} | {_cell(c['measured'])} {links} | "
                       f"{_cell(c['tolerance'])} | {_cell(c['reason'])} |")
        out.append("")
    if doc.get("pins"):
        out += ["## Pins", "",
                "Regression pins are tests of their own: a stale pin fails the run but never changes "
                "a claim's verdict.", "",
                "| pin | status | tolerance | meaning | test |", "|---|---|---|---|---|"]
        out += [f"| `{p['file']}` | {p['status']} | {_cell(p.get('tolerance'))} | {_cell(p.get('meaning'))} | "
                f"{_cell(p['test'].rsplit('/', 1)[-1])} |" for p in doc["pins"]]
        out.append("")
    if doc.get("runs"):
        out += ["## Runs", "", "| generated | commit | device | torch | tiers | command |",
                "|---|---|---|---|---|---|"]
        out += [f"| {r.get('generated')} | {r.get('commit')} | {r.get('device')} | {r.get('torch')} | "
                f"{', '.join(r.get('tiers', []))} | `{r.get('args', '')}` |" for r in doc["runs"]]
    trained = [(r, t) for r in doc.get("runs", []) for t in r.get("training") or []]
    if trained:
        out += ["", "## Training runs", "",
                "What each run of the suite trained (runs read from the run cache are not listed).", "",
                "| run | family / arm / seed | steps | wall time |", "|---|---|---|---|"]
        out += [f"| {r.get('generated')} | `{t['label']}` | {t['steps']} | {t['wall_s']:.1f} s |" for r, t in trained]
    return "\n".join(out) + "\n"


def write(doc: dict, outdir: Path) -> list[Path]:
    from .html import page  # here, not at the top: claims/html.py imports this module
    outdir.mkdir(parents=True, exist_ok=True)
    label, message, hexc, name = badge_text(doc)
    files = {
        "claims.json": json.dumps(doc, indent=1, ensure_ascii=False, default=str),
        "claims.md": markdown(doc),
        "badge.svg": badge_svg(label, message, hexc),
        "badge.json": json.dumps({"schemaVersion": 1, "label": label, "message": message,
                                  "color": name}),
        "index.html": page(doc),
    }
    paths = []
    for name_, text in files.items():
        p = outdir / name_
        p.write_text(text, encoding="utf-8")
        paths.append(p)
    return paths


def terminal_lines(doc: dict) -> list[str]:
    s = doc["summary"]
    checkable = sum(s.values()) - s["descriptive"]
    lines = [f"{checkable} checkable claims: " + ", ".join(f"{s[k]} {k}" for k in STATUSES[:5])
             + f"; {s['descriptive']} descriptive"]
    for c in doc["claims"]:
        if c["status"] in ("fails", "diverges"):
            where = f"[{c['scale']}] " if c.get("scale") else ""
            lines.append(f"  {c['status'].upper():9s} {c['id']:9s} {where}{c['reason'][:150]}")
    stale = [p for p in doc.get("pins", []) if p["status"] == "stale"]
    for p in stale:
        lines.append(f"  STALE PIN {p['file']}: {p['reason'][:150]}")
    return lines
