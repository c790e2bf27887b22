"""Re-rooting (Stępień, Polański & Wojciechowski): the paper's A1–A3 and constrained dynamics.

A1  re-rooting back returns the original model and state,
A2  every body keeps its name, world orientation and centre of mass,
A3  every body keeps its spatial velocity at the instant,
and a tree pinned at a point by re-rooting moves like the floating tree with
that point held by a constraint.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import RTOL_EXACT, RTOL_FD, assert_close

import rbd
from rbd.joints import Joint
from rbd.spatial import quat_to_rot, so3_exp
from rbd.topology import (
    TOP_JOINTS,
    chain_of_inversion,
    inverted_joint,
    inverted_position,
    inverted_velocity,
    reroot,
)

#: Every joint kind a random tree can be built from.
KINDS = ("revolute", "prismatic", "helical", "universal", "spherical", "free", "planar")

#: Spatial accelerations are compared through a central difference of J(q(t)) v with
#: h = 1e-5: truncation O(h^2) ~ 1e-10 and rounding O(eps/h) ~ 1e-11 on O(10) values.
RTOL_FD_ACCEL = 1e-7

#: Null spaces are taken from an SVD; singular values below this count as zero.
SVD_RANK_TOL = 1e-10


# --- helpers --------------------------------------------------------------------------------
def tree(kind: str, seed: int, top: str | None = None, nbodies: int = 6) -> rbd.Model:
    """A random tree of ``kind`` joints (or all kinds), optionally with the given top joint."""
    rng = np.random.default_rng(seed)
    kinds = KINDS if kind == "mixed" else (kind,)
    model = rbd.testing.random_model(rng, nbodies, kinds)
    if top is not None:
        joint = {"fixed": rbd.Fixed(), "spherical": rbd.Spherical(), "free": rbd.Free(),
                 "revolute": rbd.Revolute(rng.normal(size=3))}[top]
        model = model.replace_joint(model.bodies[0].joint_name, joint)
    return model


def per_body(model, x, which="v"):
    """``{body name: its slice of x}``."""
    index = model.q_index if which == "q" else model.v_index
    return {name: x[index(i)] for i, name in enumerate(model.body_names)}


def v_permutation(model, other):
    """Indices ``p`` with ``x_other[p]`` in the v order of ``model`` (matched by body name)."""
    return np.concatenate([np.arange(other.nv)[other.v_index(other.body_names.index(n))]
                           for n in model.body_names])


def world_twists(model, q, v):
    """Each body's spatial velocity in world coordinates (at the world origin), by name."""
    T = rbd.forward_kinematics(model, q)
    return {n: rbd.jacobian(model, q, i, T[i, :3, :3].T @ -T[i, :3, 3]) @ v
            for i, n in enumerate(model.body_names)}


def world_accelerations(model, q, v, qdd, h=1e-5):
    """Each body's spatial acceleration in world coordinates, d/dt of its world twist."""

    def twists(qq):
        return world_twists(model, qq, v)

    plus, minus = twists(rbd.integrate(model, q, v, h)), twists(rbd.integrate(model, q, v, -h))
    now = world_twists(model, q, qdd)
    return {n: now[n] + (plus[n] - minus[n]) / (2 * h) for n in now}


def null_projector(C):
    """Orthogonal projector onto the null space of C."""
    _, s, vt = np.linalg.svd(C)
    N = vt[int((s > SVD_RANK_TOL).sum()):].T
    return N @ N.T


def pinned_state(model, q, v, k, local, kind, axis=None):
    """Project v so that the top joint ``kind`` at the body point can carry the motion."""
    J = rbd.jacobian(model, q, k, local)
    if kind == "free":
        return v
    if kind == "spherical":
        C = J[3:]
    elif kind == "revolute":
        C = np.vstack([J[3:], (np.eye(3) - np.outer(axis, axis)) @ J[:3]])
    else:
        C = J
    return null_projector(C) @ v


def same_quaternion(a, b):
    return min(np.abs(a - b).max(), np.abs(a + b).max())


def q_difference(model, q, other, q_other):
    """Largest difference of joint coordinates matched by body name (quaternions up to sign)."""
    mine, theirs = per_body(model, q, "q"), per_body(other, q_other, "q")
    err = 0.0
    for body in model.bodies:
        a, b = mine[body.name], theirs[body.name]
        if body.joint.kind == "spherical":
            err = max(err, same_quaternion(a, b))
        elif body.joint.kind == "free":
            err = max(err, np.abs(a[:3] - b[:3]).max(), same_quaternion(a[3:], b[3:]))
        elif a.size:
            err = max(err, np.abs(a - b).max())
    return err


def a_case(kind, top, seed):
    """A model, a random state, a body and a world point on it."""
    model = tree(kind, seed)
    rng = np.random.default_rng(seed + 1000)
    q, v, _ = rbd.testing.random_state(model, rng)
    k = int(rng.integers(model.nbodies))
    local = rng.uniform(-0.5, 0.5, 3)
    T = rbd.forward_kinematics(model, q)
    g = T[k, :3, 3] + T[k, :3, :3] @ local
    axis = rng.normal(size=3) if top == "revolute" else None
    axis = None if axis is None else axis / np.linalg.norm(axis)
    return model, q, v, k, local, g, axis


CASES = [(kind, top) for kind in (*KINDS, "mixed") for top in TOP_JOINTS]


# --- A2: the system looks the same -------------------------------------------------------
@pytest.mark.parametrize(("kind", "top"), CASES)
def test_A2_orientations_and_centres_of_mass_are_kept(kind, top):
    model, q, v, k, _, g, axis = a_case(kind, top, seed=11)
    new, q_new, _ = reroot(model, q, v, k, g, top, axis=axis)
    assert sorted(new.body_names) == sorted(model.body_names)
    T0, T1 = rbd.forward_kinematics(model, q), rbd.forward_kinematics(new, q_new)
    C0, C1 = rbd.body_centers_of_mass(model, q), rbd.body_centers_of_mass(new, q_new)
    for i, name in enumerate(model.body_names):
        j = new.body_names.index(name)
        assert_close(T1[j, :3, :3], T0[i, :3, :3], RTOL_EXACT, f"orientation of {name}")
        assert_close(C1[j], C0[i], RTOL_EXACT, f"centre of mass of {name}")
        assert new.bodies[j].mass == pytest.approx(model.bodies[i].mass, rel=RTOL_EXACT)
    # the new root's frame origin is the pivot
    assert_close(T1[new.body_names.index(model.body_names[k]), :3, 3], g, RTOL_EXACT, "pivot")
    assert new.parent[new.body_names.index(model.body_names[k])] == -1


# --- A3: the system moves the same at the instant -------------------------------------------
@pytest.mark.parametrize(("kind", "top"), CASES)
def test_A3_spatial_velocities_are_kept(kind, top):
    model, q, v, k, local, g, axis = a_case(kind, top, seed=12)
    v = pinned_state(model, q, v, k, local, top, axis)
    assert np.linalg.norm(v) > 0.1, "the test needs a moving state"
    new, q_new, v_new = reroot(model, q, v, k, g, top, axis=axis)
    before, after = world_twists(model, q, v), world_twists(new, q_new, v_new)
    for name in model.body_names:
        assert_close(after[name], before[name], RTOL_EXACT, f"twist of {name}")


@pytest.mark.parametrize("kind", KINDS)
def test_A3_needs_a_resting_pivot_for_a_spherical_top(kind):
    """With the pivot moving, a spherical top joint cannot carry the motion (the test can fail)."""
    model, q, v, k, _, g, _ = a_case(kind, "spherical", seed=13)
    new, q_new, v_new = reroot(model, q, v, k, g, "spherical")
    before, after = world_twists(model, q, v), world_twists(new, q_new, v_new)
    name = model.body_names[k]
    assert np.abs(after[name] - before[name]).max() > 1e-3


# --- A1: re-rooting back ----------------------------------------------------------------------
def _round_trip(kind, top0, mid, seed, pinned):
    model = tree(kind, seed, top=top0)
    rng = np.random.default_rng(seed + 2000)
    q, v, _ = rbd.testing.random_state(model, rng)
    k = int(rng.integers(1, model.nbodies))
    local = rng.uniform(-0.5, 0.5, 3)
    T = rbd.forward_kinematics(model, q)
    g = T[k, :3, 3] + T[k, :3, :3] @ local
    axis = None
    if mid == "revolute":
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
    if pinned:
        v = pinned_state(model, q, v, k, local, mid, axis)
    mid_model, q1, v1 = reroot(model, q, v, k, g, mid, axis=axis)
    root = model.bodies[0]
    axis0 = root.X_tree[:3, :3].T @ root.joint.axis if top0 == "revolute" else None
    back, q2, v2 = reroot(mid_model, q1, v1, root.name, T[0, :3, 3], top0, axis=axis0)
    return model, q, v, back, q2, v2


def _assert_same_dynamics(model, q, v, back, q2, v2, seed):
    p = v_permutation(model, back)
    assert_close(rbd.crba(back, q2)[np.ix_(p, p)], rbd.crba(model, q), RTOL_EXACT, "M")
    a = np.random.default_rng(seed).normal(size=model.nv)
    a_back = np.zeros(back.nv)
    a_back[p] = a
    assert_close(rbd.rnea(back, q2, v2, a_back)[p], rbd.rnea(model, q, v, a), RTOL_EXACT, "tau")


#: (original top joint, intermediate top joint) pairs whose round trip restores q exactly:
#: a free intermediate keeps the whole bind pose, a spherical one its orientations only.
EXACT_PAIRS = [(top0, mid) for top0 in TOP_JOINTS for mid in TOP_JOINTS
               if mid == "free" or (mid == "spherical" and top0 != "free")]
OTHER_PAIRS = [(top0, mid) for top0 in TOP_JOINTS for mid in TOP_JOINTS
               if (top0, mid) not in EXACT_PAIRS]


@pytest.mark.parametrize(("top0", "mid"), EXACT_PAIRS)
@pytest.mark.parametrize("kind", [*KINDS, "mixed"])
def test_A1_round_trip_returns_the_model_and_state(kind, top0, mid):
    model, q, v, back, q2, v2 = _round_trip(kind, top0, mid, seed=21, pinned=False)
    assert sorted(back.body_names) == sorted(model.body_names)
    assert sorted(back.joint_names) == sorted(model.joint_names)
    for body in model.bodies:
        other = back.bodies[back.body_names.index(body.name)]
        parent = model.body_names[body.parent] if body.parent >= 0 else None
        other_parent = back.body_names[other.parent] if other.parent >= 0 else None
        assert other_parent == parent and other.joint_name == body.joint_name
        assert other.joint.kind == body.joint.kind
        assert_close(other.joint.kernel_params(), body.joint.kernel_params(), RTOL_EXACT,
                     f"joint of {body.name}")
        assert_close(other.X_tree, body.X_tree, RTOL_EXACT, f"X_tree of {body.name}")
        assert_close(other.inertia, body.inertia, RTOL_EXACT, f"inertia of {body.name}")
    assert q_difference(model, q, back, q2) <= RTOL_EXACT
    mine, theirs = per_body(model, v), per_body(back, v2)
    for name in model.body_names:
        assert_close(theirs[name], mine[name], RTOL_EXACT, f"v of {name}")
    _assert_same_dynamics(model, q, v, back, q2, v2, seed=21)


@pytest.mark.parametrize(("top0", "mid"), OTHER_PAIRS)
@pytest.mark.parametrize("kind", ["universal", "planar", "mixed"])
def test_A1_round_trip_keeps_poses_and_dynamics(kind, top0, mid):
    """Where the intermediate top joint cannot hold the bind pose, the physics still returns."""
    model, q, v, back, q2, v2 = _round_trip(kind, top0, mid, seed=22, pinned=True)
    T0, T2 = rbd.forward_kinematics(model, q), rbd.forward_kinematics(back, q2)
    for i, name in enumerate(model.body_names):
        assert_close(T2[back.body_names.index(name)], T0[i], RTOL_EXACT, f"pose of {name}")
    _assert_same_dynamics(model, q, v, back, q2, v2, seed=22)


def test_A1_planar_walker_round_trip_is_exact_through_revolute_roots():
    """All axes parallel: a revolute top joint keeps the bind pose, so q itself comes back."""
    model = rbd.models.double_pendulum()
    q, v = np.array([0.4, -1.1]), np.array([0.0, 0.0])
    tip = (rbd.forward_kinematics(model, q)[1] @ [0, 0, -1, 1])[:3]
    mid, q1, v1 = reroot(model, q, v, "link2", tip, "revolute", axis=[0, 1, 0])
    back, q2, v2 = reroot(mid, q1, v1, "link1", [0, 0, 0], "revolute", axis=[0, 1, 0])
    assert back.body_names == model.body_names and back.joint_names == model.joint_names
    assert_close(q2, q, RTOL_EXACT, "q")
    for a, b in zip(back.bodies, model.bodies, strict=True):
        assert_close(a.X_tree, b.X_tree, RTOL_EXACT, "X_tree")
        assert_close(a.inertia, b.inertia, RTOL_EXACT, "inertia")


# --- dynamics under the matching constraint ---------------------------------------------------
@pytest.mark.parametrize("kind", [*KINDS, "mixed"])
def test_pinned_tree_moves_like_the_floating_tree_with_the_point_held(kind):
    """Floating base + point held by a constraint (KKT) == re-rooted tree, spherical top joint."""
    rng = np.random.default_rng(31)
    kinds = KINDS if kind == "mixed" else (kind,)
    model = rbd.testing.random_model(rng, 5, kinds, floating_base=True)
    q, v, _ = rbd.testing.random_state(model, rng)
    k = int(rng.integers(model.nbodies))
    local = rng.uniform(-0.3, 0.3, 3)
    T = rbd.forward_kinematics(model, q)
    g = T[k, :3, 3] + T[k, :3, :3] @ local

    def J(qq):
        return rbd.jacobian(model, qq, k, local)[3:]

    v = null_projector(J(q)) @ v
    h = 1e-5
    q_plus, q_minus = rbd.integrate(model, q, v, h), rbd.integrate(model, q, v, -h)
    Jdot_v = (J(q_plus) @ v - J(q_minus) @ v) / (2 * h)
    # actuate the joints off the chain of inversion (the same joints in both trees)
    chain = chain_of_inversion(model, k)
    tau = np.zeros(model.nv)
    new, q_new, v_new = reroot(model, q, v, k, g, "spherical")
    tau_new = np.zeros(new.nv)
    for i, body in enumerate(model.bodies):
        if i not in chain and body.joint.nv:
            tau[model.v_index(i)] = rng.normal(size=body.joint.nv)
            tau_new[new.v_slice(body.joint_name)] = tau[model.v_index(i)]
    M, bias = rbd.crba(model, q), rbd.nonlinear_effects(model, q, v)
    KKT = np.block([[M, -J(q).T], [J(q), np.zeros((3, 3))]])
    qdd = np.linalg.solve(KKT, np.concatenate([tau - bias, -Jdot_v]))[:model.nv]
    qdd_new = rbd.aba(new, q_new, v_new, tau_new)
    before = world_accelerations(model, q, v, qdd)
    after = world_accelerations(new, q_new, v_new, qdd_new)
    for name in model.body_names:
        assert_close(after[name], before[name], RTOL_FD_ACCEL, f"acceleration of {name}")


# --- the inversion rules of §6.2.2 -----------------------------------------------------------
@pytest.mark.parametrize("kind", [*KINDS, "fixed"])
def test_inverted_joint_undoes_the_joint_transform(kind):
    rng = np.random.default_rng(41)
    joint = rbd.Fixed() if kind == "fixed" else rbd.testing.JOINT_FACTORIES[kind](rng)
    A = so3_exp(rng.normal(size=3))
    q = joint.random(rng)
    inverse = inverted_joint(joint, A)
    R, p = joint.transform(q)
    R_inv, p_inv = inverse.transform(inverted_position(joint, q, A))
    assert inverse.kind == joint.kind
    assert_close(R_inv, A @ R.T @ A.T, RTOL_EXACT, "rotation")
    assert_close(p_inv, -A @ R.T @ p, RTOL_EXACT, "translation")


@pytest.mark.parametrize("kind", ["revolute", "prismatic", "helical"])
def test_one_dof_joints_invert_by_sign_about_the_same_axis(kind):
    rng = np.random.default_rng(42)
    joint = rbd.testing.JOINT_FACTORIES[kind](rng)
    A = so3_exp(rng.normal(size=3))
    inverse = inverted_joint(joint, A)
    assert_close(inverse.axis, A @ joint.axis, RTOL_EXACT, "axis")
    assert_close(inverted_position(joint, [0.7], A), [-0.7], RTOL_EXACT, "q")
    assert_close(inverted_velocity(joint, [0.7], [1.3], A), [-1.3], RTOL_EXACT, "qd")


def test_universal_joint_inverts_with_swapped_negated_axes():
    joint = rbd.Universal([1, 0, 0], [0, 1, 0])
    inverse = inverted_joint(joint, np.eye(3))
    assert_close(inverse.axis1, [0, 1, 0], RTOL_EXACT, "axis1")
    assert_close(inverse.axis2, [1, 0, 0], RTOL_EXACT, "axis2")
    assert_close(inverted_position(joint, [0.3, -0.5], np.eye(3)), [0.5, -0.3], RTOL_EXACT, "q")
    assert_close(inverted_velocity(joint, [0.3, -0.5], [2.0, 1.0], np.eye(3)), [-1.0, -2.0],
                 RTOL_EXACT, "qd")


def test_spherical_joint_inverts_to_the_conjugate_quaternion():
    rng = np.random.default_rng(43)
    quat = rbd.Spherical().random(rng)
    assert_close(inverted_position(rbd.Spherical(), quat, np.eye(3)),
                 quat * [-1, -1, -1, 1], RTOL_EXACT, "conjugate")
    omega = rng.normal(size=3)
    assert_close(inverted_velocity(rbd.Spherical(), quat, omega, np.eye(3)),
                 -quat_to_rot(quat) @ omega, RTOL_EXACT, "angular velocity")


@pytest.mark.parametrize("kind", [*KINDS, "fixed"])
def test_inverted_velocity_reverses_the_relative_motion(kind):
    """Differentiate the inverted configuration along the motion: it must match qd'."""
    rng = np.random.default_rng(44)
    joint = rbd.Fixed() if kind == "fixed" else rbd.testing.JOINT_FACTORIES[kind](rng)
    A = so3_exp(rng.normal(size=3))
    q, qd = joint.random(rng), rng.normal(size=joint.nv)
    inverse = inverted_joint(joint, A)
    # central difference on the manifold, both sides measured from the middle point;
    # h = 1e-4 keeps truncation O(h^2) and rounding O(eps/h^2) of the free joint's log small
    h = 1e-4
    q_mid = inverted_position(joint, q, A)
    q_plus = inverted_position(joint, joint.integrate(q, qd, h), A)
    q_minus = inverted_position(joint, joint.integrate(q, qd, -h), A)
    fd = (inverse.difference(q_mid, q_plus) - inverse.difference(q_mid, q_minus)) / (2 * h)
    assert_close(inverted_velocity(joint, q, qd, A), fd, RTOL_FD, "qd'")


# --- connectivity (§6.1) and names ----------------------------------------------------------
def _fig4_tree():
    """A tree like the paper's Fig. 2: h at the top, children i and k, j below i; m below j."""
    model = rbd.Model()
    box = rbd.models.box_inertia(1.0, (0.2, 0.1, 0.1), (0.05, 0, 0))
    h = model.add_body(-1, rbd.Spherical(), None, box, "h")
    i = model.add_body(h, rbd.Revolute([0, 0, 1]), (np.eye(3), [0.3, 0, 0]), box, "i")
    model.add_body(h, rbd.Revolute([0, 1, 0]), (np.eye(3), [0, 0.3, 0]), box, "k")
    j = model.add_body(i, rbd.Revolute([0, 0, 1]), (np.eye(3), [0.3, 0, 0]), box, "j")
    model.add_body(i, rbd.Prismatic([1, 0, 0]), (np.eye(3), [0, 0, 0.2]), box, "s")
    model.add_body(j, rbd.Revolute([1, 0, 0]), (np.eye(3), [0.3, 0, 0]), box, "m")
    model.add_frame("tool", "j", (np.eye(3), [0.1, 0.0, 0.0]))
    return model


def test_siblings_on_the_chain_become_grandchildren():
    model = _fig4_tree()
    q = rbd.random_configuration(model, 3)
    v = np.zeros(model.nv)
    assert [model.body_names[c] for c in chain_of_inversion(model, "j")] == ["j", "i", "h"]
    g = rbd.forward_kinematics(model, q)[model.body_index("j"), :3, 3]
    new, _, _ = reroot(model, q, v, "j", g, "fixed")

    def parent(name):
        p = new.parent[new.body_names.index(name)]
        return None if p < 0 else new.body_names[p]

    assert [parent(n) for n in ("j", "i", "h", "k", "s", "m")] == [None, "j", "i", "h", "i", "j"]
    assert all(new.parent[b] < b for b in range(new.nbodies))


def test_inverted_joints_keep_their_names_and_the_top_joint_takes_the_dropped_name():
    model = _fig4_tree()
    q = rbd.random_configuration(model, 4)
    g = rbd.forward_kinematics(model, q)[model.body_index("m"), :3, 3]
    new, _, _ = reroot(model, q, np.zeros(model.nv), "m", g, "spherical")
    owner = {b.joint_name: b.name for b in new.bodies}
    assert owner["joint_h"] == "m"            # the joint to the world, now at m
    assert owner["joint_m"] == "j"            # the joint between j and m, now used by j
    assert owner["joint_j"] == "i" and owner["joint_i"] == "h"
    assert owner["joint_k"] == "k" and owner["joint_s"] == "s"
    named, _, _ = reroot(model, q, np.zeros(model.nv), "m", g, "spherical", joint_name="ground")
    assert named.bodies[0].joint_name == "ground"


def test_attached_frames_follow_their_body():
    model = _fig4_tree()
    q = rbd.random_configuration(model, 5)
    g = rbd.forward_kinematics(model, q)[model.body_index("m"), :3, 3] + [0.0, 0.1, 0.0]
    new, q_new, _ = reroot(model, q, np.zeros(model.nv), "m", g, "free")
    before = rbd.jacobian(model, q, "tool", [0.2, 0.1, 0.0])
    after = rbd.jacobian(new, q_new, "tool", [0.2, 0.1, 0.0])
    # the tool point sits on body j in both trees: its world velocity for the same motion agrees
    v = np.random.default_rng(6).normal(size=model.nv)
    _, _, v_new = reroot(model, q, v, "m", g, "free")
    assert_close(after @ v_new, before @ v, RTOL_EXACT, "tool point velocity")


def test_rerooting_at_the_top_body_moves_only_its_pivot():
    model = _fig4_tree()
    q = rbd.random_configuration(model, 7)
    v = np.random.default_rng(7).normal(size=model.nv)
    T = rbd.forward_kinematics(model, q)
    g = T[0, :3, 3] + T[0, :3, :3] @ [0.1, 0.2, 0.0]
    new, q_new, v_new = reroot(model, q, v, "h", g, "free")
    assert new.body_names == model.body_names and new.parent == model.parent
    before, after = world_twists(model, q, v), world_twists(new, q_new, v_new)
    for name in model.body_names:
        assert_close(after[name], before[name], RTOL_EXACT, f"twist of {name}")


# --- bad input --------------------------------------------------------------------------------
class _Custom(Joint):
    kind = "custom"
    nq = nv = 1

    def transform(self, q):
        return np.eye(3), np.array([q[0], 0.0, 0.0])

    def S(self, q):
        return np.array([[0.0], [0], [0], [1], [0], [0]])


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"new_root": "nobody"}, rbd.InputError, "new_root: unknown body 'nobody'"),
        ({"new_root": 17}, rbd.InputError, "new_root: unknown body index 17"),
        ({"new_root": -1}, rbd.InputError, "new_root: -1 is the world"),
        ({"joint": "ball"}, rbd.InputError, "joint must be one of"),
        ({"joint": "revolute"}, rbd.InputError, "needs axis="),
        ({"joint": "revolute", "axis": [0, 0, 0]}, rbd.InputError, "axis must be non-zero"),
        ({"joint": "revolute", "axis": [0, 1]}, rbd.InputError, r"axis must have shape \(3,\)"),
        ({"joint": "free", "axis": [0, 0, 1]}, rbd.InputError, "only used with joint='revolute'"),
        ({"point": [0.0, 1.0]}, rbd.InputError, r"point must have shape \(3,\)"),
        ({"point": [0.0, np.nan, 1.0]}, rbd.InputError, "point has non-finite entries"),
        ({"point": "here"}, rbd.InputError, "point must be a numeric 3-vector"),
        ({"v": np.zeros(3)}, rbd.InputError, r"v must have shape \(\d+,\)"),
        ({"q": np.zeros(2)}, rbd.InputError, "q must have shape"),
    ],
)
def test_bad_arguments_raise_named_errors_and_change_nothing(kwargs, error, match):
    model = _fig4_tree()
    q = rbd.random_configuration(model, 8)
    v = np.random.default_rng(8).normal(size=model.nv)
    args = {"q": q, "v": v, "new_root": "m", "point": [0.0, 0.0, 0.0], "joint": "spherical"}
    args.update(kwargs)
    copies = {key: np.array(val, copy=True) for key, val in args.items()
              if isinstance(val, np.ndarray)}
    description = model.describe()
    with pytest.raises(error, match=match):
        reroot(model, **args)
    for key, val in copies.items():
        np.testing.assert_array_equal(args[key], val)
    assert model.describe() == description


def test_a_joint_that_cannot_be_inverted_raises_model_error():
    model = rbd.Model()
    a = model.add_body(-1, rbd.Revolute([0, 0, 1]), None, (1.0, [0.1, 0, 0], np.eye(3) * 0.01),
                       "a")
    model.add_body(a, _Custom(), (np.eye(3), [0.2, 0, 0]), (1.0, [0.1, 0, 0], np.eye(3) * 0.01),
                   "b")
    with pytest.raises(rbd.ModelError, match="cannot invert a joint of kind 'custom'"):
        reroot(model, np.zeros(2), np.zeros(2), "b", [0.3, 0, 0], "fixed")


def test_forest_and_fixed_joints_on_the_chain():
    """Other trees attached to the world stay as they are; a fixed joint inverts to a fixed one."""
    rng = np.random.default_rng(51)
    model = rbd.Model()
    box = (1.0, [0.1, 0, 0], np.diag([0.01, 0.02, 0.02]))
    a = model.add_body(-1, rbd.Revolute([0, 0, 1]), None, box, "a")
    b = model.add_body(a, rbd.Fixed(), (rbd.testing.random_rotation(rng), [0.3, 0, 0]), box, "b")
    model.add_body(b, rbd.Universal([1, 0, 0], [0, 1, 0]), (np.eye(3), [0.3, 0.1, 0]), box, "c")
    d = model.add_body(-1, rbd.Spherical(), (np.eye(3), [1, 1, 0]), box, "d")
    model.add_body(d, rbd.Planar([0, 0, 1]), (np.eye(3), [0.2, 0, 0]), box, "e")
    q, v, _ = rbd.testing.random_state(model, rng)
    T = rbd.forward_kinematics(model, q)
    g = T[2, :3, 3] + T[2, :3, :3] @ [0.05, 0.02, 0.0]
    new, q_new, v_new = reroot(model, q, v, "c", g, "free")
    assert new.body_names == ["c", "b", "a", "d", "e"] and new.parent == (-1, 0, 1, -1, 3)
    assert new.bodies[2].joint.kind == "fixed"
    before, after = world_twists(model, q, v), world_twists(new, q_new, v_new)
    for name in model.body_names:
        assert_close(after[name], before[name], RTOL_EXACT, f"twist of {name}")
    for name in ("d", "e"):                  # the other tree is untouched
        i, j = model.body_index(name), new.body_index(name)
        assert_close(new.bodies[j].X_tree, model.bodies[i].X_tree, 0.0, f"X_tree of {name}")
        assert_close(q_new[new.q_index(j)], q[model.q_index(i)], 0.0, f"q of {name}")


@pytest.mark.slow
def test_rerooting_back_and_forth_keeps_proper_rotations_and_the_dynamics():
    """A hundred round trips between the ends of a planar chain, each end pinned by a
    revolute joint, as the walker's heel strikes do: the composed tree rotations are
    projected onto SO(3), so they stay orthonormal to rounding (the builder refused the
    drifted ones after a few dozen re-rootings), and the orientations and centres of
    mass are those of the start."""
    rng = np.random.default_rng(3)
    model = rbd.Model(name="planar")   # hinges about z, bodies turned about z: any pose held
    for k in range(3):
        turn = rbd.spatial.axis_angle_rotation([0.0, 0.0, 1.0], rng.uniform(-np.pi, np.pi))
        model.add_body(k - 1, rbd.Revolute([0.0, 0.0, 1.0]), (turn, rng.normal(size=3) * 0.3),
                       (1.0, rng.normal(size=3) * 0.1, 0.1 * np.eye(3)), f"b{k}")
    q, v = rng.normal(size=3), rng.normal(size=3)
    R0, C0 = rbd.forward_kinematics(model, q)[:, :3, :3], rbd.body_centers_of_mass(model, q)
    current, qc, vc = model, q, v
    for _ in range(100):
        for end in ("b2", "b0"):
            i = current.body_index(end)
            T = rbd.forward_kinematics(current, qc)[i]
            current, qc, vc = reroot(current, qc, vc, end, T[:3, 3], "revolute",
                                     axis=[0.0, 0.0, 1.0])
    for body in current.bodies:
        E = body.X_tree[:3, :3]
        assert np.abs(E @ E.T - np.eye(3)).max() < 1e-14
    R, C = rbd.forward_kinematics(current, qc)[:, :3, :3], rbd.body_centers_of_mass(current, qc)
    for i, name in enumerate(model.body_names):    # a body frame moves to its new joint (A2)
        assert_close(R[current.body_index(name)], R0[i], 1e-9, f"orientation of {name}")
        assert_close(C[current.body_index(name)], C0[i], 1e-9, f"centre of mass of {name}")
