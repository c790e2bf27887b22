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
