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


def is_interval(v) -> bool:
    """[mean, lo, hi] with lo <= mean <= hi (bounds may be infinite: one seed)."""
    return (isinstance(v, list) and len(v) == 3 and all(isinstance(x, (int, float)) for x in v)
            and v[1] <= v[0] <= v[2])


def measured(v, label: str = "") -> str:
    """A recorded value as a reader reads it: a [mean, lo, hi] record (its label says "interval"
    or "lo, hi") as "mean [lo, hi]", or "mean (one seed: no interval)"; else fmt's line."""
    if isinstance(v, dict):
        return "; ".join(f"{k}: {measured(x, label)}" for k, x in v.items())
    if is_interval(v) and ("interval" in label or "lo, hi" in label):
        m, lo, hi = v
        if lo == float("-inf") and hi == float("inf"):
            return f"{fmt(m)} (one seed: no interval)"
        return f"{fmt(m)} [{fmt(lo)}, {fmt(hi)}]"
    return fmt(v)
