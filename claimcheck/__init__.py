"""claimcheck: one test per sentence of a document, and a report of which sentences hold.

A pytest plugin (entry point ``pytest11: claimcheck = claimcheck.plugin``), configured by a claim
registry and ini options; ``claimcheck`` is its command (merge, diff, stamp).
"""
from .marks import diverges, undecided

__all__ = ["diverges", "undecided"]
