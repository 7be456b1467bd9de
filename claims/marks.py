"""Tiers, scales and the one way to record a divergence. Everything else reads them from here.

A test carries one **tier** marker (what it costs to run) and measures at one **scale** (how
close to the document's configuration it is). They differ: the Polish lab trains at the
lab's own, full scale in the slow tier.

    @pytest.mark.slow
    @pytest.mark.scale("ci")
    @pytest.mark.claim("NORM-06")
    @diverges("at CI scale a 20 % warmup leaves post-norm failed")
    def test_...(...):
        ...
        assert measured_agrees_with_the_text   # only this AssertionError is a divergence
"""
import pytest

# tier -> what it runs; the order is the order of cost
TIERS = {
    "fast": "analytic claims: seconds on a laptop CPU",
    "slow": "training claims at CI scale (CPU minutes); needs --runslow",
    "gpu": "the document's full configuration; needs --runslow; trains on CUDA (or with "
           "CLAIMS_DEVICE=cpu), and without CUDA judges the committed full-scale evidence",
}

# scale -> what it means, from the lowest to the highest; a claim's headline verdict is read
# at the highest scale where its tests ran
SCALES = {
    "analytic": "identities, counts and Monte-Carlo checks: no training",
    "ci": "training at a reduced configuration that still shows the effect",
    "full": "the document's own configuration",
}

# the scale a tier's test measures at unless it says otherwise; slow tests always say
DEFAULT_SCALE = {"fast": "analytic", "slow": None, "gpu": "full"}


def diverges(reason: str):
    """Mark a test whose failed assertion records that our reproduction departs from the text.

    Strict, and only for ``AssertionError``: a crash (KeyError, a fixture error, ...) is a
    failure of the suite, never a divergence, and a divergence that disappears fails.
    """
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason)


def is_divergence_mark(mark) -> bool:
    """Whether an ``xfail`` mark is the one ``diverges`` makes (the plugin refuses others)."""
    raises = mark.kwargs.get("raises")
    return (mark.name == "xfail" and mark.kwargs.get("strict") is True and not mark.args
            and isinstance(raises, type) and issubclass(raises, AssertionError)
            and bool(mark.kwargs.get("reason")))


def no_corpus(err: Exception):
    """A corpus is missing or fails its checksum: skip with its one line, or fail with it when
    CLAIMS_REQUIRE_DATA=1 (a CI job whose badge must not quietly lose the training claims)."""
    import os
    if os.environ.get("CLAIMS_REQUIRE_DATA") == "1":
        pytest.fail(f"CLAIMS_REQUIRE_DATA=1: {err}", pytrace=False)
    # report the skip at the test that needed the corpus, not at this helper (-rs shows where)
    raise pytest.skip.Exception(str(err), _use_item_location=True)
