"""The README runs as written: its quick start is deterministic and its tour's code executes."""

from __future__ import annotations

import pytest
from hypothesis import settings


def test_hypothesis_profile_is_derandomized_without_a_database(request):
    # `pytest` from the README must draw the same examples on every run and machine:
    # no random seed, and no `.hypothesis/` database replaying an old failure
    if request.config.getoption("hypothesis_profile", default=None):
        pytest.skip("a Hypothesis profile was chosen on the command line")
    assert settings.get_current_profile_name() == "ci"
    assert settings.default.derandomize is True
    assert settings.default.database is None
