"""How a value reads in the report: one short line, the same in markdown, HTML and the terminal."""


def fmt(v) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, dict):
        return "; ".join(f"{k}: {fmt(x)}" for k, x in v.items())
    if isinstance(v, list):
        return "[" + ", ".join(fmt(x) for x in v) + "]"
    return str(v)


def lines(v) -> list[str]:
    """A dict becomes one 'key: value' line per entry; anything else is fmt's one line."""
    return [f"{k}: {fmt(x)}" for k, x in v.items()] if isinstance(v, dict) else [fmt(v)]


def cell(v) -> str:
    """fmt, safe inside a markdown table cell."""
    return fmt(v).replace("|", "\\|").replace("\n", " ")
