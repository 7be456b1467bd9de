"""What of the verdict rules is this document's alone. The rules themselves are the plugin's
public API, claimcheck.rules (docs/reference/plugin.md); docs/reference/statistics.md maps each
of the chapters' kinds of sentence to one of them.
"""

# A look after a first one that could not decide (more seeds, added once a result was seen) is
# judged at 97.5 %: the two looks together pass a false claim at most 5 % + 1.25 % of the time.
# Claims with a declared ``claimcheck.rules.Schedule`` no longer use it; those without one yet still do.
SECOND_LOOK = 0.975
