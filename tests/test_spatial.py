"""Spatial algebra identities (Featherstone's notation, Si & Guenter Eqs. 1–5)."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from rbd import spatial as sp
from rbd.joints import Free

finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False)
vec3 = arrays(np.float64, 3, elements=finite)
vec6 = arrays(np.float64, 6, elements=finite)
TOL = 1e-9  # products of O(10) entries in double precision


def transform(w, r):
    return sp.plux(sp.so3_exp(w), r)


@pytest.mark.slow
@given(vec3, vec3)
def test_skew_is_cross_product(a, b):
    assert np.allclose(sp.skew(a) @ b, np.cross(a, b), atol=TOL)
    assert np.allclose(sp.unskew(sp.skew(a)), a)


@pytest.mark.slow
@given(vec3, vec3, vec6)
def test_plux_inverse_and_composition(w, r, m):
    X = transform(w, r)
    assert np.allclose(sp.inv_plux(X) @ X, np.eye(6), atol=TOL)
    E, r2 = sp.plux_parts(X)
    assert np.allclose(sp.plux(E, r2), X, atol=TOL)
    assert np.allclose(X, sp.rot(E) @ sp.xlt(r2), atol=TOL)


@pytest.mark.slow
@given(vec6, vec6)
def test_cross_products(v, m):
    # v×v = 0 and crf = -crm^T (force cross product is the dual)
    assert np.allclose(sp.crm(v) @ v, 0, atol=TOL)
    assert np.allclose(sp.crf(v), -sp.crm(v).T)
    # duality: (v× m)·f = -m·(v×* f)
    f = m[::-1].copy()
    assert np.isclose((sp.crm(v) @ m) @ f, -m @ (sp.crf(v) @ f), atol=1e-6)


@settings(max_examples=50)
@given(vec3, vec3, vec6)
def test_cross_product_transforms_covariantly(w, r, v):
    # X (v×) X^{-1} = (X v)×  — the adjoint identity Ad ad_v Ad^{-1} = ad_{Ad v}
    X = transform(w, r)
    assert np.allclose(X @ sp.crm(v) @ sp.inv_plux(X), sp.crm(X @ v), atol=1e-7)


def test_mcI_roundtrip_and_energy():
    rng = np.random.default_rng(0)
    m, c = 2.5, rng.normal(size=3)
    A = rng.normal(size=(3, 3))
    Ic = A @ A.T
    I = sp.mcI(m, c, Ic)
    m2, c2, Ic2 = sp.inertia_parts(I)
    assert np.isclose(m2, m) and np.allclose(c2, c) and np.allclose(Ic2, Ic)
    # kinetic energy of a pure translation is m|v|^2/2 whatever the COM
    v = np.array([0, 0, 0, 1.0, 2.0, -1.0])
    assert np.isclose(0.5 * v @ I @ v, 0.5 * m * 6.0)


# so3_exp ∘ so3_log reproduces R to a few units in the last place of its O(1) entries
ROUNDOFF = 16 * np.finfo(float).eps
AXIS = np.array([1.0, 2.0, -0.5]) / np.linalg.norm([1.0, 2.0, -0.5])
NEAR_PI = [1e-3, 1e-5, 1e-6, 1e-8, 1e-12, 0.0]  # π minus these angles


@pytest.mark.slow
@given(vec3)
# rotations within 1e-5 and 1e-6 of a half turn, where the log once lost 1e-7..1e-5
@example(w=(np.pi - 1e-5) * AXIS)
@example(w=(np.pi - 1e-6) * AXIS)
@example(w=(np.pi - 1e-12) * AXIS)
@example(w=np.pi * AXIS)
@example(w=np.array([np.pi - 1e-6, 0.0, 0.0]))
@example(w=np.array([0.0, 0.0, 1e-300]))
def test_so3_exp_log(w):
    R = sp.so3_exp(w)
    assert np.allclose(R @ R.T, np.eye(3), atol=TOL)
    assert np.isclose(np.linalg.det(R), 1.0)
    w2 = sp.so3_log(R)
    assert np.linalg.norm(w2) <= np.pi + ROUNDOFF
    assert np.abs(sp.so3_exp(w2) - R).max() <= ROUNDOFF


@pytest.mark.parametrize("delta", NEAR_PI)
def test_so3_log_near_a_half_turn_is_accurate_to_roundoff(delta):
    R = sp.so3_exp((np.pi - delta) * AXIS)
    w = sp.so3_log(R)
    assert np.abs(sp.so3_exp(w) - R).max() <= ROUNDOFF
    # the angle itself, not only the matrix: atan2 keeps it to round-off of π
    assert abs(np.linalg.norm(w) - (np.pi - delta)) <= 4 * ROUNDOFF


@pytest.mark.parametrize("R", [np.diag([1.0, -1.0, -1.0]), np.diag([-1.0, 1.0, -1.0]),
                               np.diag([-1.0, -1.0, 1.0])], ids=["x", "y", "z"])
def test_so3_log_of_exact_half_turns(R):
    w = sp.so3_log(R)
    assert np.isclose(np.linalg.norm(w), np.pi, rtol=0, atol=ROUNDOFF)
    assert np.abs(sp.so3_exp(w) - R).max() <= ROUNDOFF


@pytest.mark.parametrize("angle", [1e-4, 1e-8, 1e-9, 1e-12, 1e-300, 0.0])
def test_so3_log_near_identity_keeps_relative_accuracy(angle):
    w = sp.so3_log(sp.so3_exp(angle * AXIS))
    assert np.allclose(w, angle * AXIS, rtol=ROUNDOFF, atol=0)


@pytest.mark.parametrize("delta", NEAR_PI)
def test_free_joint_difference_inverts_integrate_near_a_half_turn(delta):
    # Free.difference is built on so3_log: q0 ⊕ (q1 ⊖ q0) must land on q1
    joint = Free()
    q0 = joint.neutral()
    q1 = np.concatenate([[0.3, -0.2, 1.0], sp.rot_to_quat(sp.so3_exp((np.pi - delta) * AXIS))])
    q = joint.integrate(q0, joint.difference(q0, q1), 1.0)
    assert np.abs(sp.quat_to_rot(q[3:]) - sp.quat_to_rot(q1[3:])).max() <= ROUNDOFF
    assert np.abs(q[:3] - q1[:3]).max() <= ROUNDOFF


@pytest.mark.slow
@given(arrays(np.float64, 4, elements=st.floats(-1, 1)))
def test_quaternion_roundtrip(qraw):
    if np.linalg.norm(qraw) < 1e-3:
        return
    quat = sp.quat_normalize(qraw)
    R = sp.quat_to_rot(quat)
    assert np.allclose(R @ R.T, np.eye(3), atol=TOL)
    quat2 = sp.rot_to_quat(R)
    assert np.allclose(quat2, quat) or np.allclose(quat2, -quat)


def test_quaternion_product_matches_rotation_product():
    rng = np.random.default_rng(1)
    a, b = sp.quat_normalize(rng.normal(size=4)), sp.quat_normalize(rng.normal(size=4))
    assert np.allclose(sp.quat_to_rot(sp.quat_multiply(a, b)),
                       sp.quat_to_rot(a) @ sp.quat_to_rot(b))


def test_rpy_roundtrip():
    rpy = np.array([0.3, -0.7, 2.1])
    assert np.allclose(sp.rot_to_rpy(sp.rpy_to_rot(rpy)), rpy)
    # URDF convention: fixed-axis roll about x, then pitch about y, then yaw about z
    Rx = sp.axis_angle_rotation([1, 0, 0], rpy[0])
    Ry = sp.axis_angle_rotation([0, 1, 0], rpy[1])
    Rz = sp.axis_angle_rotation([0, 0, 1], rpy[2])
    assert np.allclose(sp.rpy_to_rot(rpy), Rz @ Ry @ Rx)


def test_se3_exp_of_pure_translation_and_rotation():
    T = sp.se3_exp(np.array([0, 0, 0, 1.0, 2.0, 3.0]))
    assert np.allclose(T[:3, 3], [1, 2, 3]) and np.allclose(T[:3, :3], np.eye(3))
    T = sp.se3_exp(np.array([0, 0, np.pi / 2, 1.0, 0, 0]))
    # screw motion: rotating about z while moving along body x traces a quarter circle
    assert np.allclose(T[:3, 3], [2 / np.pi, 2 / np.pi, 0])


def test_featherstone_rotz_convention():
    # rotz(θ) maps coordinates into a frame rotated by +θ about z
    X = sp.rotz(np.pi / 2)
    assert np.allclose(X[:3, :3] @ [1, 0, 0], [0, -1, 0])
