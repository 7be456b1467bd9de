"""The claim tests: one test file per section of a chapter. Their fixtures (the scales, the run
cache, evidence and pins) are this document's pytest plugin, suite/fixtures.py, which the root
conftest loads."""
