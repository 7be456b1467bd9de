"""The badge: how many checkable claims hold, as an SVG and as shields.io's endpoint JSON."""
import json

from .verdict import checkable

COLOURS = [(0.9, "#4c1", "brightgreen"), (0.75, "#97ca00", "green"),
           (0.6, "#a4a61d", "yellowgreen"), (0.45, "#dfb317", "yellow"),
           (0.3, "#fe7d37", "orange"), (0.0, "#e05d44", "red")]


def badge_text(doc: dict) -> tuple[str, str, str, str]:
    """(label, message, hex colour, shields colour name)."""
    s = doc["summary"]
    n = checkable(s)
    frac = s["holds"] / n if n else 0.0
    hexc, name = next((h, n) for t, h, n in COLOURS if frac >= t)
    return "claims", f"{s['holds']}/{n} hold", hexc, name


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


def badge_json(doc: dict) -> str:
    label, message, _, name = badge_text(doc)
    return json.dumps({"schemaVersion": 1, "label": label, "message": message, "color": name})
