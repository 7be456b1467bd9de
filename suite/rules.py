"""What of the verdict rules is this document's alone. The rules themselves are the plugin's
public API, claimcheck.rules (docs/reference/plugin.md); docs/reference/statistics.md maps each
of the chapters' kinds of sentence to one of them.
"""
from claimcheck.rules import gap_band

from suite.catalogue import DOC_LADDER

# A look after a first one that could not decide (more seeds, added once a result was seen) is
# judged at 97.5 %: the two looks together pass a false claim at most 5 % + 1.25 % of the time.
# Claims with a declared ``claimcheck.rules.Schedule`` no longer use it; those without one yet still do.
SECOND_LOOK = 0.975


def ladder_gap(doc: float, without: str, with_: str) -> tuple[tuple[float, float], str]:
    """(band, its text) for the chapter's gap ``doc`` between two rungs of its ladder, ``without``
    minus ``with_``: the word table's gap row on the chapter's rungs (catalogue.DOC_LADDER)."""
    a, b = DOC_LADDER[without][0], DOC_LADDER[with_][0]
    band = gap_band(doc, a, b, str(doc))
    return band, (f"{doc} in ({band[0]:.2f}, {band[1]:.2f}] (a gap between trained numbers: each of the "
                  f"chapter's {a:g} and {b:g} ± 5 %, in quadrature, the sign exact; docs/reference/statistics.md)")
