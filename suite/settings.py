"""The suite's environment variables, read and validated here and nowhere else.

    CLAIMS_SEED_OFFSET   an integer that shifts every training seed (default 0)
    CLAIMS_DEVICE        'cpu' or 'cuda': where the gpu tier trains (default: CUDA if present)
    CLAIMS_REQUIRE_DATA  '1': a missing corpus fails its tests instead of skipping them
    CLAIMS_TRAIN_LOG     set: the training runs print their log lines

They are read once, when this module is imported (the root conftest imports it first). A bad
value is kept as one line in ``PROBLEMS``: the root conftest stops the run with it before any
test, and a command (``python -m suite.evidence.families``) exits with it; nothing reads the bad value.
"""
import os
import re

import pytest

PROBLEMS: list[str] = []


def _offset() -> int:
    raw = os.environ.get("CLAIMS_SEED_OFFSET") or "0"
    if not re.fullmatch(r"\s*-?\d+\s*", raw):
        PROBLEMS.append(f"CLAIMS_SEED_OFFSET={raw!r}: give an integer that shifts every training seed, "
                        "or leave it unset")
        return 0
    return int(raw)


def _device() -> str | None:
    raw = os.environ.get("CLAIMS_DEVICE") or None
    if raw not in (None, "cpu", "cuda"):
        PROBLEMS.append(f"CLAIMS_DEVICE={raw!r}: use 'cpu' or 'cuda', or leave it unset")
        return None
    return raw


SEED_OFFSET: int = _offset()
DEVICE: str | None = _device()  # None: CUDA when torch sees one
REQUIRE_DATA: bool = os.environ.get("CLAIMS_REQUIRE_DATA") == "1"
TRAIN_LOG: bool = os.environ.get("CLAIMS_TRAIN_LOG") is not None


def problem() -> str | None:
    """The first bad variable, in one line, or None."""
    return PROBLEMS[0] if PROBLEMS else None


def exit_on_problem() -> None:
    """For commands: exit with the one line when a variable is bad."""
    if PROBLEMS:
        raise SystemExit(f"error: {PROBLEMS[0]}")


def seeds(*base: int) -> tuple[int, ...]:
    """The seeds a family trains, shifted by CLAIMS_SEED_OFFSET."""
    return tuple(s + SEED_OFFSET for s in base)


def no_corpus(err: Exception):
    """A corpus is missing or fails its checksum: skip with its one line, or fail with it when
    CLAIMS_REQUIRE_DATA=1 (a CI job whose badge must not quietly lose the training claims)."""
    if REQUIRE_DATA:
        pytest.fail(f"CLAIMS_REQUIRE_DATA=1: {err}", pytrace=False)
    # report the skip at the test that needed the corpus, not at this helper (-rs shows where)
    raise pytest.skip.Exception(str(err), _use_item_location=True)
