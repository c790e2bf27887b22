"""The reference path of the public functions: one table names the derivation behind each
method of the compiled model, and a call on ``backend="reference"`` runs that derivation."""

import importlib

import numpy as np
import pytest

import rbd
from rbd.algorithms._dispatch import _REFERENCES, _ReferencePath


@pytest.mark.parametrize("method", sorted(_REFERENCES))
def test_each_entry_names_a_reference_function_and_a_compiled_method(method):
    where, _ = _REFERENCES[method]
    module, name = where.split(":")
    assert callable(getattr(importlib.import_module(f"rbd.reference.{module}"), name))
    if rbd.algorithms._HAVE_KERNELS:
        assert callable(getattr(rbd.algorithms.compiled(rbd.models.double_pendulum()), method))


def test_an_unknown_method_is_an_attribute_error():
    assert not hasattr(_ReferencePath(rbd.models.double_pendulum()), "no_such_method")


def test_the_reference_path_passes_the_arguments_after_the_arrays_on():
    model = rbd.models.double_pendulum()
    q_next = rbd.integrate(model, [0.0, 0.0], [1.0, 2.0], 0.5, backend="reference")
    np.testing.assert_array_equal(q_next, [0.5, 1.0])   # angles add v dt exactly here
    J = rbd.jacobian(model, [0.0, 0.0], 1, point=[0.0, 0.0, -0.5], backend="reference")
    np.testing.assert_allclose(J[3], [-1.5, -0.5], atol=1e-12)  # lever arms 1.5 and 0.5 (round-off)
