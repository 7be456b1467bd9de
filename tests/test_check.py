"""``claimcheck check`` on the values this suite records: numpy's scalars and arrays are read as the
numbers they hold (claimcheck/check.py). The plugin's own tests of ``check`` are plugin/tests/test_check.py:
the plugin alone installs no numpy."""
import numpy as np
import pytest

from claimcheck import check

pytestmark = pytest.mark.fast


def test_numpy_values_are_read_as_numbers():
    assert check.stated("1,115,394", np.int64(1115394)) and check.stated("413,784 / 45,976", np.array([413784, 45976]))
