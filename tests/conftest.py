"""Shared fixtures: seeded generators, the backend switch, named tolerances."""

from __future__ import annotations

import os

import numpy as np
import pytest

import rbd

BACKENDS = ("reference", "kernel")


def kernels_expected() -> bool:
    """The kernels must be present unless RBD_NO_EXTENSIONS=1 disabled them."""
    return not rbd._backend.kernels_disabled()


@pytest.fixture(params=BACKENDS)
def backend(request):
    """Run a test once on the pure-Python reference and once on the kernels."""
    if request.param == "kernel" and not rbd.has_kernels():
        if kernels_expected():
            pytest.fail("the compiled kernels did not build or import: "
                        f"{rbd._backend.import_error()}")
        pytest.skip("RBD_NO_EXTENSIONS=1: kernels disabled")
    return request.param


@pytest.fixture
def require_kernels():
    """Skip when RBD_NO_EXTENSIONS=1; fail when the kernels silently did not build."""
    if not rbd.has_kernels():
        if kernels_expected():
            pytest.fail("the compiled kernels did not build or import: "
                        f"{rbd._backend.import_error()}")
        pytest.skip("RBD_NO_EXTENSIONS=1: kernels disabled")


@pytest.fixture
def rng():
    return np.random.default_rng(20261125)


os.environ.setdefault("MPLBACKEND", "Agg")


# Hypothesis profiles.  The default one is derandomized and keeps no example database, so
# `pytest` draws the same examples on every machine and one unlucky draw stored in
# `.hypothesis/` cannot fail every later run; a failure found once is pinned with
# `@example`.  `pytest --hypothesis-profile=dev` explores at random, more examples, and
# remembers what it found outside the checkout.
from hypothesis import settings as _hypothesis_settings  # noqa: E402
from hypothesis.database import DirectoryBasedExampleDatabase  # noqa: E402

_hypothesis_settings.register_profile("ci", derandomize=True, database=None, deadline=None)
_hypothesis_settings.register_profile(
    "dev",
    max_examples=1000,
    deadline=None,
    database=DirectoryBasedExampleDatabase(
        os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")),
                     "rbd", "hypothesis")),
)
_hypothesis_settings.load_profile("ci")


def pytest_configure(config):
    """Honour ``--hypothesis-profile`` even when this file is imported after the option is read."""
    chosen = config.getoption("hypothesis_profile", default=None)
    if chosen:
        _hypothesis_settings.load_profile(chosen)
