"""The plugin's own tests. Run here (``cd plugin && pytest``), the repository root's conftest is not
loaded: what these tests take from pytest beyond its defaults is here."""
pytest_plugins = ["pytester"]  # the tests that run pytest on a small project of their own

try:  # hypothesis's pytest plugin imports hypothesis as each session ends; a pytester run in this
    import hypothesis  # noqa: F401  process drops what it imported, so without this import here
except ImportError:    # every such run imports hypothesis afresh (seconds each)
    pass


def pytest_addoption(parser):
    try:
        parser.addoption("--screenshots", action="store_true",
                         help="the browser tests write their screenshots into docs/images/")
    except ValueError:  # a session with the suite's tests too: the root conftest declares it
        pass
