"""The hooks a document's conftest may implement."""
import pluggy

hookspec = pluggy.HookspecMarker("pytest")


@hookspec
def pytest_claimcheck_run_info(config) -> dict:
    """What the report should say about the machine a run used (``{"torch": "2.13.0", "device":
    "cpu"}``): shown in the report's header and its runs table. Every implementation's dict is
    merged."""


@hookspec(firstresult=True)
def pytest_claimcheck_tier(item, tier: str) -> str | None:
    """The tier a test runs in when it is not its marker's (``None``: the marker's). The test
    keeps the scale its marker gives it. E.g. without CUDA, a full-scale test that only judges
    committed evidence costs milliseconds, so it can run in the fast tier."""
