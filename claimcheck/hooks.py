"""The hooks a document's conftest may implement."""


def pytest_claimcheck_run_info(config) -> dict:
    """What the report should say about the machine a run used (``{"torch": "2.13.0", "device":
    "cpu"}``): shown in the report's header and its runs table. Every implementation's dict is
    merged."""

