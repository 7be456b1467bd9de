"""How a value reads in the report: one short line, the same in markdown, HTML and the terminal.

A number reads at the precision it was recorded with: an int as it is, a float by its shortest
``repr`` up to ``SIG`` significant digits, and with more where fewer would land on, or across, a
number it is shown beside (``against``: the document's value), so 0.00099999975 never reads
"0.001" beside "< 0.001", nor 45.0000001 "45" beside "45". A list of three numbers whose middle
and last bound the first (lo <= mean <= hi) reads "mean [lo, hi]", and one with no bounds
("-inf", "inf": one seed) "mean (one seed: no interval)"."""
import math
from decimal import Decimal

SIG = 6  # significant digits a float shows at most, unless it must show more to tell it from a bound


def plural(n: int, word: str) -> str:
    """'1 test', '2 tests'."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def _bounds(against) -> set[float]:
    """Every number ``against`` (the document's value: text, a number, a list or dict of them) can
    be read as writing."""
    if against is None or isinstance(against, bool):
        return set()
    if isinstance(against, (int, float)):
        return {float(against)} if math.isfinite(against) else set()
    if isinstance(against, dict):
        return set().union(*map(_bounds, against.values())) if against else set()
    if isinstance(against, (list, tuple)):
        return set().union(*map(_bounds, against)) if against else set()
    from .check import _numbers  # the registry's value read as check reads it
    return _numbers(str(against))


def _rounded(x: float, n: int) -> str:
    """``x`` at ``n`` significant digits: plain notation from 1e-4 up to 1e16 (no trailing zeros,
    no '.0'), and exponent notation, as repr writes it, outside."""
    text = format(x, f".{n}g")
    d = Decimal(text).normalize()
    if -4 <= d.adjusted() < 16:
        return format(d, "f")
    return text


def number(x: float, against=None) -> str:
    """A float at the precision it was recorded with (its shortest repr, at most ``SIG``
    significant digits, or its whole part where that has more), with more digits where fewer
    would move it onto or across a number of ``against``."""
    if not math.isfinite(x):
        return str(x)
    d = Decimal(repr(x)).normalize()
    exact = len(d.as_tuple().digits)
    n = min(exact, max(SIG, d.adjusted() + 1))  # a large number keeps its whole part: 123456789, not 123457000
    bounds = _bounds(against)

    def side(v, b):
        return (v > b) - (v < b)

    text = _rounded(x, n)
    while n < exact and any(side(float(text), b) != side(x, b) for b in bounds):
        n += 1
        text = _rounded(x, n)
    return text


def _num(x):
    """A number of a recorded value: JSON's "inf", "-inf" and "nan" strings read as floats."""
    if isinstance(x, str) and x in ("inf", "-inf", "nan"):
        return float(x)
    return x


def is_interval(v) -> bool:
    """[mean, lo, hi] with lo <= mean <= hi (bounds may be infinite: one seed)."""
    return (isinstance(v, list) and len(v) == 3 and all(isinstance(x, (int, float)) for x in v)
            and v[1] <= v[0] <= v[2])


def _interval(v) -> bool:
    """is_interval, for a recorded value: no flags (True, False), and infinite bounds as JSON
    writes them."""
    if not isinstance(v, list) or len(v) != 3 or any(isinstance(x, bool) for x in v):
        return False
    return is_interval([_num(x) for x in v])


def fmt(v, against=None) -> str:
    """One short line; ``against``: the document's value the line is shown beside (a float never
    rounds onto or across a number of it)."""
    if v is None:
        return "—"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        return number(v, against)
    if isinstance(v, dict):
        return "; ".join(f"{k}: {fmt(x, against)}" for k, x in v.items())
    if isinstance(v, list):
        if _interval(v):
            m, lo, hi = (_num(x) for x in v)
            if lo == float("-inf") and hi == float("inf"):
                return f"{fmt(m, against)} (one seed: no interval)"
            return f"{fmt(m, against)} [{fmt(lo, against)}, {fmt(hi, against)}]"
        return "[" + ", ".join(fmt(x, against) for x in v) + "]"
    return str(v)


def lines(v, against=None) -> list[str]:
    """A dict becomes one 'key: value' line per entry; anything else is fmt's one line."""
    return [f"{k}: {fmt(x, against)}" for k, x in v.items()] if isinstance(v, dict) else [fmt(v, against)]


def cell(v, against=None) -> str:
    """fmt, safe inside a markdown table cell."""
    return fmt(v, against).replace("|", "\\|").replace("\n", " ")


def measured(v, label: str = "", against=None) -> str:
    """A recorded value as a reader reads it (``fmt``): a [mean, lo, hi] record as "mean [lo, hi]",
    or "mean (one seed: no interval)". ``label`` is the record's; its value alone decides."""
    return fmt(v, against)
