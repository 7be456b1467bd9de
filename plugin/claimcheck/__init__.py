"""claimcheck: one test per sentence of a document, and a report of which sentences hold.

A pytest plugin (entry point ``pytest11: claimcheck = claimcheck.plugin``), configured by a claim
registry and ini options; ``claimcheck`` is its command (check, merge, diff, stamp).
"""
from importlib.metadata import PackageNotFoundError, version

from .marks import diverges, evidence_note, pin_checked, undecided

try:
    __version__ = version("claimcheck")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "unknown"

__all__ = ["__version__", "diverges", "evidence_note", "pin_checked", "undecided"]
