"""The shared argument checks of ``rbd._validation``: one vector check, one quaternion check.

Each caller (the public functions, the simulation, the peer maps of
:mod:`rbd.interop`, re-rooting, the symbolic record, Pai's contact pair) names
its argument; the tests check the messages, the accepted shapes and that the
caller's array is never modified.
"""

from __future__ import annotations

import numpy as np
import pytest

import rbd
from rbd._validation import (
    QUATERNION_TOLERANCE,
    as_vector,
    check_quaternions,
    check_unit_quaternion,
)


def ball_on_a_stick() -> rbd.Model:
    """A revolute link carrying a spherical joint: the quaternion sits at q[1:5]."""
    model = rbd.Model(name="ball_on_a_stick")
    inertia = rbd.models.box_inertia(1.0, (0.1, 0.1, 0.4))
    model.add_body(None, rbd.Revolute([0.0, 1.0, 0.0]), None, inertia, name="stick")
    model.add_body("stick", rbd.Spherical(), (np.eye(3), [0.0, 0.0, -0.4]), inertia, name="ball")
    return model


# --- as_vector ----------------------------------------------------------------------------------
def test_as_vector_returns_a_float_copy_of_the_right_shape():
    x = as_vector([1, 2, 3], 3, "point")
    assert x.dtype == np.float64 and x.shape == (3,) and x.tolist() == [1.0, 2.0, 3.0]
    stack = as_vector(np.ones((4, 3)), 3, "points", batch=True)
    assert stack.shape == (4, 3)


@pytest.mark.parametrize("value, kwargs, message", [
    ("here", {}, r"^point must be a numeric 3-vector, got 'here'$"),
    ([1.0, 2.0], {}, r"^point must have shape \(3,\), got \(2,\)$"),
    (np.ones((2, 3)), {}, r"^point must have shape \(3,\), got \(2, 3\)$"),
    (np.ones((2, 4)), {"batch": True}, r"^point must have shape \(3,\) or \(N, 3\), got \(2, 4\)$"),
    (5.0, {"batch": True}, r"^point must have shape \(3,\) or \(N, 3\), got \(\)$"),
    ([0.0, np.nan, 1.0], {}, r"^point has non-finite entries$"),
    ([0.0, 1j, 1.0], {}, r"^point must be a numeric 3-vector"),
])
def test_as_vector_names_the_argument(value, kwargs, message):
    with pytest.raises(rbd.InputError, match=message):
        as_vector(value, 3, "point", **kwargs)


def test_as_vector_keeps_sympy_numbers_exact():
    sympy = pytest.importorskip("sympy", reason="the symbolic branch holds sympy expressions")
    L = sympy.Symbol("L")
    half = sympy.Rational(1, 2)
    x = as_vector((0, half, -L), 3, "com", symbolic=True)
    assert x.dtype == object and x[1] == half and x[2] == -L
    column = as_vector(sympy.Matrix([0, half, L]), 3, "com", symbolic=True)
    assert column.shape == (3,) and column[1] == half
    exact = as_vector([half, half, half], 3, "com", symbolic=True)
    assert exact[0] == half and isinstance(exact[0], sympy.Rational)
    with pytest.raises(rbd.InputError, match=r"^com must have shape \(3,\), got \(2,\)$"):
        as_vector((L, L), 3, "com", symbolic=True)


# --- quaternions --------------------------------------------------------------------------------
def test_check_unit_quaternion_returns_the_norms_and_refuses_one_off():
    quats = np.array([[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 1.0 + 0.5 * QUATERNION_TOLERANCE]])
    norms = check_unit_quaternion(quats, "quats")
    assert np.array_equal(norms, [1.0, 1.0 + 0.5 * QUATERNION_TOLERANCE])
    quats[1, 3] = 1.2
    with pytest.raises(rbd.InputError, match=r"^quats has norm 1\.2, not 1$"):
        check_unit_quaternion(quats, "quats")


def test_check_quaternions_normalizes_a_copy_within_the_tolerance():
    model = ball_on_a_stick()
    q = np.array([0.3, 0.0, 0.0, 0.0, 1.0 + 0.5 * QUATERNION_TOLERANCE])
    before = q.copy()
    out = check_quaternions(model, q)
    assert np.array_equal(q, before)                      # the caller's array is untouched
    assert out is not q and np.linalg.norm(out[1:5]) == pytest.approx(1.0, abs=1e-15)
    exact = np.array([0.3, 0.0, 0.0, 0.0, 1.0])
    assert check_quaternions(model, exact) is exact       # nothing to normalize: no copy


def test_one_quaternion_message_for_the_public_functions_and_the_simulation():
    """rbd.aba (both backends) and rbd.simulate refuse the same quaternion with one message."""
    model = ball_on_a_stick()
    q = np.array([0.3, 0.0, 0.0, 0.0, 1.1])
    v = np.zeros(model.nv)
    message = r"the quaternion of joint 'joint_ball' \(q\[1:5\]\) has norm 1\.1, not 1$"
    backends = ["reference"] + (["kernel"] if rbd.has_kernels() else [])
    for backend in backends:
        with pytest.raises(rbd.InputError, match=r"^q: " + message):
            rbd.aba(model, q, v, v, backend=backend)
    with pytest.raises(rbd.InputError, match=r"^q0: " + message):
        rbd.simulate(model, q, v, 0.01, 1e-3)
    assert q[4] == 1.1
