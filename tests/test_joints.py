"""Joint models: S and Ṡ against finite differences of the joint transform (S&G Eqs. 9, 12)."""

import numpy as np
import pytest
from helpers import RTOL_FD, body_twist_fd, joint_pose

import rbd
from rbd import spatial as sp
from rbd.testing import JOINT_FACTORIES

KINDS = sorted(JOINT_FACTORIES)
H = 1e-6


def samples(kind: str, seed: int, n: int = 5):
    """``n`` random joints of ``kind``, each with a random ``(q, v)``, from one generator."""
    rng = np.random.default_rng(seed)
    for _ in range(n):
        joint = JOINT_FACTORIES[kind](rng)
        yield joint, joint.random(rng), rng.normal(size=joint.nv)


@pytest.mark.parametrize("kind", KINDS)
def test_S_is_the_body_twist(kind):
    for joint, q, v in samples(kind, 1):
        assert np.allclose(joint.S(q) @ v, body_twist_fd(joint, q, v), atol=RTOL_FD * 10)


@pytest.mark.parametrize("kind", KINDS)
def test_S_dot_matches_finite_difference(kind):
    for joint, q, v in samples(kind, 2):
        Sd = (joint.S(joint.integrate(q, v, H)) - joint.S(joint.integrate(q, v, -H))) / (2 * H)
        assert np.allclose(joint.S_dot(q, v), Sd, atol=RTOL_FD * 10)
        assert np.allclose(joint.c_J(q, v), Sd @ v, atol=RTOL_FD * 10)


@pytest.mark.parametrize("kind", KINDS)
def test_X_J_is_the_inverse_pose(kind):
    rng = np.random.default_rng(3)
    joint = JOINT_FACTORIES[kind](rng)
    q = joint.random(rng)
    R, p = joint.transform(q)
    assert np.allclose(joint.X_J(q), sp.rot(R.T) @ sp.xlt(p))


@pytest.mark.parametrize("kind", KINDS)
def test_integrate_difference_roundtrip(kind):
    rng = np.random.default_rng(4)
    joint = JOINT_FACTORIES[kind](rng)
    q, v = joint.random(rng), 0.3 * rng.normal(size=joint.nv)
    q1 = joint.integrate(q, v, 1.0)
    assert np.allclose(joint.difference(q, q1), v, atol=1e-9)
    # a zero step is the same pose (a quaternion may come back with the opposite sign)
    assert np.allclose(joint_pose(joint, joint.integrate(q, v, 0.0)), joint_pose(joint, q))


def test_quaternion_joints_stay_on_the_sphere():
    rng = np.random.default_rng(5)
    joint = rbd.Free()
    q = joint.random(rng)
    for _ in range(100):
        q = joint.integrate(q, rng.normal(size=6), 0.1)
    assert np.isclose(np.linalg.norm(q[3:]), 1.0, atol=1e-12)


def test_fixed_joint_has_no_freedom():
    joint = rbd.Fixed()
    assert joint.nq == joint.nv == 0
    assert joint.S(np.zeros(0)).shape == (6, 0)
    assert np.allclose(joint.X_J(np.zeros(0)), np.eye(6))


def test_helical_advances_pitch_per_radian():
    joint = rbd.Helical([0, 0, 1], pitch=0.25)
    R, p = joint.transform(np.array([2.0]))
    assert np.allclose(p, [0, 0, 0.5])


@pytest.mark.parametrize("bad", [[0, 0, 0], [np.nan, 0, 1], [1, 2]])
def test_bad_axis_raises(bad):
    with pytest.raises(rbd.ModelError, match="axis"):
        rbd.Revolute(bad)


def test_parallel_universal_axes_raise():
    with pytest.raises(rbd.ModelError, match="parallel"):
        rbd.Universal([1, 0, 0], [2, 0, 0])


def test_free_difference_is_accurate_for_small_rotations():
    rng = np.random.default_rng(6)
    joint = rbd.Free()
    q = joint.random(rng)
    for scale in (1e-2, 1e-4, 1e-6, 1e-8):
        v = rng.normal(size=6)
        v[:3] *= scale / np.linalg.norm(v[:3])
        # relative to |v|: the series keeps the error at rounding level
        assert np.allclose(joint.difference(q, joint.integrate(q, v, 1.0)), v, atol=1e-12)
