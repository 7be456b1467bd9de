"""This document's stamps are fresh (claimcheck/fingerprint.py on fixtures/claims.toml): editing a
chapter makes the claims quoting the changed sentences suspect, and fails this test until they are
reviewed and stamped again. The fingerprint logic itself is tested on texts of its own, with the
plugin: plugin/tests/test_fingerprint.py."""
from pathlib import Path

import pytest

from claimcheck import fingerprint
from claimcheck.registry import load_registry

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.mark.fast
def test_the_committed_stamps_are_fresh():
    registry = load_registry(FIXTURES / "claims.toml")
    texts = registry.texts()
    stamps = fingerprint.load_stamps(fingerprint.stamps_path(registry))
    assert stamps is not None, f"{fingerprint.stamps_path(registry)} is missing: run `claimcheck stamp`"
    suspects = fingerprint.check(registry, texts, stamps)
    assert not suspects, (
        f"{len(suspects)} claim(s) read suspect: {', '.join(suspects)}. Review each claim against its "
        "changed sentence, then run `claimcheck stamp ID ...` (or `claimcheck stamp` for all) and commit "
        "fixtures/claims.stamps.json")
    assert set(stamps) == set(registry), "every claim is stamped, and only the registry's claims"
