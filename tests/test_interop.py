"""Tests of rbd.interop: conventions of Pinocchio and MuJoCo, round trips and dynamics.

The robot: a floating base with a continuous hinge (and a prismatic joint
below it) and a ball joint (and a hinge below it), built with rbd's builder
in an order that is not depth-first, so that the joint permutation is not
the identity.  Its Pinocchio twin is built joint by joint; its MuJoCo twin is
the MJCF text below, written independently with the same numbers.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import RTOL_EXACT, assert_close, python_child

import rbd
from rbd import interop
from rbd.spatial import plux, plux_parts, quat_to_rot

# --- the robot -----------------------------------------------------------------------------------
# name, parent, joint, pos, quat (w, x, y, z), mass, com,
# (Ixx, Iyy, Izz, Ixy, Ixz, Iyz) about the centre of mass, joint name
BODIES = [
    ("base", -1, rbd.Free(), (0.1, -0.2, 0.3), (0.8, 0.6, 0.0, 0.0), 3.0, (0.05, 0.0, -0.02),
     (0.1, 0.12, 0.08, 0.01, 0.0, -0.005), "root_joint"),
    ("upper", 0, rbd.Revolute((0, 1, 0)), (0.2, 0.0, 0.1), (0.6, 0.0, 0.8, 0.0), 1.2,
     (0.0, 0.0, -0.15), (0.02, 0.025, 0.01, 0.0, 0.002, 0.0), "hinge"),
    ("arm", 0, rbd.Spherical(), (-0.2, 0.1, 0.0), (1.0, 0.0, 0.0, 0.0), 0.8, (0.0, 0.1, 0.0),
     (0.01, 0.004, 0.011, 0.001, 0.0, 0.0), "ball"),
    ("tip", 1, rbd.Prismatic((0.6, 0, 0.8)), (0.0, 0.0, -0.3), (1.0, 0.0, 0.0, 0.0), 0.5,
     (0.01, 0.02, -0.05), (0.004, 0.005, 0.003, 0.0, 0.0, 0.0), "slider"),
    ("hand", 2, rbd.Revolute((0, 0, 1)), (0.0, 0.25, 0.0), (0.8, 0.0, 0.0, 0.6), 0.3,
     (0.03, 0.0, 0.0), (0.001, 0.0012, 0.0009, 0.0, 0.0, 0.0), "wrist"),
]

#: The Pinocchio twin stores the hinge as an unbounded revolute: (cos θ, sin θ).
CONTINUOUS = {"hinge"}

MJCF = """
<mujoco model="interop">
  <option gravity="0 0 -9.81"/>
  <worldbody>
    <body name="base" pos="0.1 -0.2 0.3" quat="0.8 0.6 0 0">
      <freejoint name="root_joint"/>
      <inertial pos="0.05 0 -0.02" mass="3" fullinertia="0.1 0.12 0.08 0.01 0 -0.005"/>
      <body name="upper" pos="0.2 0 0.1" quat="0.6 0 0.8 0">
        <joint name="hinge" type="hinge" axis="0 1 0"/>
        <inertial pos="0 0 -0.15" mass="1.2" fullinertia="0.02 0.025 0.01 0 0.002 0"/>
        <body name="tip" pos="0 0 -0.3">
          <joint name="slider" type="slide" axis="0.6 0 0.8"/>
          <inertial pos="0.01 0.02 -0.05" mass="0.5" diaginertia="0.004 0.005 0.003"/>
        </body>
      </body>
      <body name="arm" pos="-0.2 0.1 0">
        <joint name="ball" type="ball"/>
        <inertial pos="0 0.1 0" mass="0.8" fullinertia="0.01 0.004 0.011 0.001 0 0"/>
        <body name="hand" pos="0 0.25 0" quat="0.8 0 0 0.6">
          <joint name="wrist" type="hinge" axis="0 0 1"/>
          <inertial pos="0.03 0 0" mass="0.3" diaginertia="0.001 0.0012 0.0009"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def build_robot() -> rbd.Model:
    model = rbd.Model(name="interop")
    for name, parent, joint, pos, (w, x, y, z), mass, com, I, joint_name in BODIES:
        R = quat_to_rot(np.array([x, y, z, w]))          # body axes in the parent frame
        Ixx, Iyy, Izz, Ixy, Ixz, Iyz = I
        Ic = np.array([[Ixx, Ixy, Ixz], [Ixy, Iyy, Iyz], [Ixz, Iyz, Izz]])
        model.add_body(parent, joint, plux(R.T, np.array(pos)), (mass, np.array(com), Ic),
                       name, joint_name)
    return model


def depth_first(model: rbd.Model) -> list[int]:
    order, stack = [], [i for i in reversed(range(model.nbodies)) if model.parent[i] < 0]
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(reversed(model.children[i]))
    return order


def pinocchio_twin(model: rbd.Model, continuous=CONTINUOUS):
    """The same robot in Pinocchio, joints added depth-first (as its CRBA requires)."""
    pin = pytest.importorskip("pinocchio")
    pm = pin.Model()
    pm.gravity = pin.Motion(np.concatenate([model.gravity, np.zeros(3)]))
    ids = {-1: 0}
    for i in depth_first(model):
        b = model.bodies[i]
        kind = b.joint.kind
        if kind == "free":
            joint = pin.JointModelFreeFlyer()
        elif kind == "spherical":
            joint = pin.JointModelSpherical()
        elif kind == "prismatic":
            joint = pin.JointModelPrismaticUnaligned(b.joint.axis)
        elif b.joint_name in continuous:     # an axis-aligned unbounded revolute joint
            axis = int(np.flatnonzero(b.joint.axis)[0])
            joint = (pin.JointModelRUBX, pin.JointModelRUBY, pin.JointModelRUBZ)[axis]()
        else:
            joint = pin.JointModelRevoluteUnaligned(b.joint.axis)
        E, r = plux_parts(b.X_tree)
        ids[i] = pm.addJoint(ids[b.parent], joint, pin.SE3(E.T, r), b.joint_name)
        pm.appendBodyToJoint(ids[i], pin.Inertia(b.mass, b.com, b.I_com), pin.SE3.Identity())
    return pin, pm


def mujoco_twin():
    mujoco = pytest.importorskip("mujoco")
    return mujoco, mujoco.MjModel.from_xml_string(MJCF)


@pytest.fixture(scope="module")
def robot():
    return build_robot()


@pytest.fixture
def states(robot):
    rng = np.random.default_rng(42)
    return [rbd.testing.random_state(robot, rng) for _ in range(3)]


# --- conventions, one at a time ------------------------------------------------------------------
@pytest.mark.slow
def test_peers_are_not_imported_with_the_module():
    code = ("import sys, rbd.interop; "
            "print(sorted(m for m in ('pinocchio', 'mujoco') if m in sys.modules))")
    out = python_child(code, timeout=120, check=True).stdout
    assert out.strip() == "[]"


def test_pinocchio_permutation_is_depth_first_with_free_velocity_swapped(robot):
    _, pm = pinocchio_twin(robot)
    perm = interop.pinocchio_permutation(robot, pm)
    # rbd v: root [ω 0-2; v 3-5], hinge 6, ball 7-9, slider 10, wrist 11
    # Pinocchio v (depth-first): root [v; ω], hinge, slider, ball, wrist
    assert perm.tolist() == [3, 4, 5, 0, 1, 2, 6, 10, 7, 8, 9, 11]
    v = np.arange(robot.nv, dtype=float)
    assert interop.to_pinocchio_v(robot, pm, v).tolist() == v[perm].tolist()


def test_pinocchio_continuous_joint_is_cos_sin(robot):
    _, pm = pinocchio_twin(robot)
    q = rbd.neutral(robot)
    theta = 2.5
    q[robot.q_slice("hinge")] = theta
    q_pin = interop.to_pinocchio_q(robot, pm, q)
    start = pm.idx_qs[pm.getJointId("hinge")]
    assert q_pin[start:start + 2].tolist() == [np.cos(theta), np.sin(theta)]
    assert pm.nq == robot.nq + 1
    # angles differing by 2π are one configuration: the way back gives the one in (-π, π]
    q[robot.q_slice("hinge")] = theta + 2 * np.pi
    back = interop.from_pinocchio_q(robot, pm, interop.to_pinocchio_q(robot, pm, q))
    assert back[robot.q_slice("hinge")] == pytest.approx([theta], abs=1e-12)


def test_mujoco_quaternions_are_scalar_first(robot):
    _, mm = mujoco_twin()
    q = rbd.neutral(robot)
    q[robot.q_slice("ball")] = [0.1, 0.2, 0.3, np.sqrt(1 - 0.14)]   # (x, y, z, w)
    qpos = interop.to_mujoco_qpos(robot, mm, q)
    start = mm.jnt_qposadr[mm.joint("ball").id]
    assert qpos[start:start + 4].tolist() == [np.sqrt(1 - 0.14), 0.1, 0.2, 0.3]


def test_mujoco_neutral_pose_is_the_file_pose(robot):
    """qpos0 holds the free body's pose from the file: rbd's neutral q (X_tree composed in)."""
    _, mm = mujoco_twin()
    assert_close(interop.from_mujoco_qpos(robot, mm, mm.qpos0), rbd.neutral(robot),
                 RTOL_EXACT, "neutral")


def test_mujoco_free_velocity_is_world_linear_body_angular(robot):
    _, mm = mujoco_twin()
    q = rbd.random_configuration(robot, 3)
    v = np.zeros(robot.nv)
    v[:6] = [0.1, -0.2, 0.3, 1.0, 2.0, -1.5]                # [ω; v] in the body frame
    qvel = interop.to_mujoco_qvel(robot, mm, q, v)
    R = rbd.forward_kinematics(robot, q)[0, :3, :3]          # world from body
    assert_close(qvel[:3], R @ v[3:6], RTOL_EXACT, "linear")
    assert qvel[3:6].tolist() == v[:3].tolist()


# --- round trips ---------------------------------------------------------------------------------
def test_pinocchio_round_trips(robot, states):
    _, pm = pinocchio_twin(robot)
    jm = interop.pinocchio_map(robot, pm)
    for q, v, a in states:
        assert_close(jm.from_q(jm.to_q(q)), q, RTOL_EXACT, "q")
        for conv, x in (("q", q), ("v", v), ("a", a), ("tau", a)):
            there = getattr(interop, f"to_pinocchio_{conv}")(robot, pm, x)
            assert_close(getattr(interop, f"from_pinocchio_{conv}")(robot, pm, there), x,
                         RTOL_EXACT, conv)


def test_mujoco_round_trips(robot, states):
    _, mm = mujoco_twin()
    for q, v, a in states:
        qpos = interop.to_mujoco_qpos(robot, mm, q)
        assert_close(interop.from_mujoco_qpos(robot, mm, qpos), q, RTOL_EXACT, "q")
        qvel = interop.to_mujoco_qvel(robot, mm, q, v)
        assert_close(interop.from_mujoco_qvel(robot, mm, qpos, qvel), v, RTOL_EXACT, "v")
        qacc = interop.to_mujoco_qacc(robot, mm, q, v, a)
        assert_close(interop.from_mujoco_qacc(robot, mm, qpos, qvel, qacc), a, RTOL_EXACT, "a")
        qfrc = interop.to_mujoco_qfrc(robot, mm, q, a)
        assert_close(interop.from_mujoco_qfrc(robot, mm, qpos, qfrc), a, RTOL_EXACT, "tau")


def test_batches_equal_single_calls(robot, states):
    _, mm = mujoco_twin()
    jm = interop.mujoco_map(robot, mm)
    Q, V, A = (np.array([s[k] for s in states]) for k in range(3))
    batch = jm.to_a(Q, V, A)
    assert batch.shape == (len(states), mm.nv)
    for k, (q, v, a) in enumerate(states):
        assert batch[k].tolist() == jm.to_a(q, v, a).tolist()
    assert jm.from_q(jm.to_q(Q)).shape == Q.shape


# --- dynamics through the converters -------------------------------------------------------------
def test_dynamics_agree_with_pinocchio(robot, states, backend):
    pin, pm = pinocchio_twin(robot)
    pd = pm.createData()
    jm = interop.pinocchio_map(robot, pm)
    inv = np.argsort(jm.permutation)
    for q, v, a in states:
        q_pin, v_pin, a_pin = jm.to_q(q), jm.to_v(q, v), jm.to_a(q, v, a)
        M_pin = np.triu(pin.crba(pm, pd, q_pin))            # Pinocchio fills the upper triangle
        M_pin = M_pin + np.triu(M_pin, 1).T
        assert_close(rbd.crba(robot, q, backend=backend), M_pin[np.ix_(inv, inv)], RTOL_EXACT,
                     "M")
        tau = rbd.rnea(robot, q, v, a, backend=backend)
        assert_close(tau, jm.from_tau(q_pin, pin.rnea(pm, pd, q_pin, v_pin, a_pin)),
                     RTOL_EXACT, "rnea")
        a_back = pin.aba(pm, pd, q_pin, v_pin, jm.to_tau(q, tau))
        assert_close(rbd.aba(robot, q, v, tau, backend=backend), jm.from_a(q_pin, v_pin, a_back),
                     RTOL_EXACT, "aba")


def test_dynamics_agree_with_mujoco(robot, states, backend):
    mujoco, mm = mujoco_twin()
    md = mujoco.MjData(mm)
    jm = interop.mujoco_map(robot, mm)
    M_mj = np.zeros((mm.nv, mm.nv))
    for q, v, a in states:
        md.qpos[:], md.qvel[:] = jm.to_q(q), jm.to_v(q, v)
        md.qacc[:] = jm.to_a(q, v, a)
        mujoco.mj_forward(mm, md)
        mujoco.mj_fullM(mm, md, M_mj)
        # M w as a generalized force, for every unit vector w at once: the columns of M
        columns = jm.from_tau(md.qpos, jm.to_v(q, np.eye(robot.nv)) @ M_mj.T)
        assert_close(rbd.crba(robot, q, backend=backend), columns.T, RTOL_EXACT, "M")
        # qfrc_bias = M qacc + bias at qacc = 0 in MuJoCo's coordinates, where rbd's a = 0
        # is the MuJoCo acceleration to_a(q, v, 0) ≠ 0 (free joint: R (ω × v_b))
        bias = md.qfrc_bias + M_mj @ jm.to_a(q, v, np.zeros(robot.nv))
        assert_close(rbd.nonlinear_effects(robot, q, v, backend=backend),
                     jm.from_tau(md.qpos, bias), RTOL_EXACT, "qfrc_bias")
        md.qacc[:] = jm.to_a(q, v, a)
        mujoco.mj_inverse(mm, md)
        tau = rbd.rnea(robot, q, v, a, backend=backend)
        assert_close(tau, jm.from_tau(md.qpos, md.qfrc_inverse), RTOL_EXACT, "rnea")
        md.qfrc_applied[:] = jm.to_tau(q, tau)
        mujoco.mj_forward(mm, md)
        assert_close(rbd.aba(robot, q, v, tau, backend=backend),
                     jm.from_a(md.qpos, md.qvel, md.qacc), RTOL_EXACT, "aba")
        md.qfrc_applied[:] = 0.0


def test_kinematics_agree_with_mujoco(robot, states):
    mujoco, mm = mujoco_twin()
    md = mujoco.MjData(mm)
    for q, _, _ in states:
        md.qpos[:] = interop.to_mujoco_qpos(robot, mm, q)
        mujoco.mj_kinematics(mm, md)
        T = rbd.forward_kinematics(robot, q)
        for i, name in enumerate(robot.body_names):
            body = mm.body(name).id
            assert_close(T[i, :3, 3], md.xpos[body], RTOL_EXACT, f"{name} position")
            assert_close(T[i, :3, :3], md.xmat[body].reshape(3, 3), RTOL_EXACT,
                         f"{name} orientation")


# --- errors --------------------------------------------------------------------------------------
def test_joint_names_must_match(robot):
    _, pm = pinocchio_twin(robot)
    renamed = robot.copy()
    other = rbd.Model()
    for b in renamed.bodies:
        other.add_body(b.parent, b.joint, b.X_tree, b.inertia, b.name,
                       "elbow" if b.joint_name == "wrist" else b.joint_name)
    with pytest.raises(rbd.ModelError, match=r"\['elbow'\].*\['wrist'\]"):
        interop.pinocchio_map(other, pm)


def test_mujoco_joint_types_must_match():
    mujoco = pytest.importorskip("mujoco")
    mm = mujoco.MjModel.from_xml_string(
        "<mujoco><worldbody><body><joint name='j' type='slide'/>"
        "<inertial pos='0 0 0' mass='1' diaginertia='1 1 1'/></body></worldbody></mujoco>")
    model = rbd.Model()
    model.add_body(-1, rbd.Revolute(), None, (1.0, np.zeros(3), np.eye(3)), "b", "j")
    with pytest.raises(rbd.ModelError, match="joint 'j': rbd revolute joint.*slide"):
        interop.mujoco_map(model, mm)


def test_mujoco_free_joint_below_a_body_is_refused():
    mujoco = pytest.importorskip("mujoco")
    mm = mujoco.MjModel.from_xml_string(
        "<mujoco><worldbody>"
        "<body name='a'><joint name='j' type='hinge'/>"
        "<inertial pos='0 0 0' mass='1' diaginertia='1 1 1'/></body>"
        "<body name='b'><freejoint name='f'/>"
        "<inertial pos='0 0 0' mass='1' diaginertia='1 1 1'/></body>"
        "</worldbody></mujoco>")
    model = rbd.Model()
    a = model.add_body(-1, rbd.Revolute(), None, (1.0, np.zeros(3), np.eye(3)), "a", "j")
    model.add_body(a, rbd.Free(), None, (1.0, np.zeros(3), np.eye(3)), "b", "f")
    with pytest.raises(rbd.ModelError, match="joint 'f': a MuJoCo free joint"):
        interop.mujoco_map(model, mm)


def test_planar_joint_has_no_pinocchio_conversion():
    pin = pytest.importorskip("pinocchio")
    pm = pin.Model()
    pm.addJoint(0, pin.JointModelPlanar(), pin.SE3.Identity(), "plane")
    model = rbd.Model()
    model.add_body(-1, rbd.Planar(), None, (1.0, np.zeros(3), np.eye(3)), "b", "plane")
    with pytest.raises(rbd.ModelError, match="joint 'plane': rbd planar joint"):
        interop.pinocchio_map(model, pm)


@pytest.mark.parametrize(("call", "message"), [
    (lambda m, pm: interop.to_pinocchio_q(m, pm, np.zeros(3)), r"q must have shape \(14,\)"),
    (lambda m, pm: interop.to_pinocchio_v(m, pm, np.full(12, np.nan)), "v has non-finite entries"),
    (lambda m, pm: interop.from_pinocchio_tau(m, pm, "abc"), "peer generalized force"),
    (lambda m, pm: interop.pinocchio_map(m, object()), "pin_model must be a pinocchio.Model"),
    (lambda m, pm: interop.pinocchio_map("robot", pm), "model must be an rbd.Model"),
])
def test_bad_arguments_are_named(robot, call, message):
    _, pm = pinocchio_twin(robot)
    with pytest.raises(rbd.InputError, match=message):
        call(robot, pm)


def test_inputs_are_not_modified(robot, states):
    _, mm = mujoco_twin()
    q, v, a = states[0]
    copies = [x.copy() for x in (q, v, a)]
    jm = interop.mujoco_map(robot, mm)
    jm.from_a(jm.to_q(q), jm.to_v(q, v), jm.to_a(q, v, a))
    for x, y in zip((q, v, a), copies, strict=True):
        assert x.tolist() == y.tolist()


def test_mujoco_joints_without_names_pair_by_their_place_in_the_tree(rng):
    """pybullet's mjcf/capsule.xml and many files name no joint: each unnamed joint pairs
    with the rbd joint load_mjcf names after its body and its place in it."""
    mujoco = pytest.importorskip("mujoco", reason="the MuJoCo cross-checks need PyPI 'mujoco'")
    xml = ("<mujoco><worldbody><body pos='0 0 1'><freejoint/><geom size='0.1'/>"
           "<body name='arm' pos='0 0 0.3'><joint axis='0 1 0'/><joint type='slide'/>"
           "<geom type='capsule' size='0.05 0.2'/><body><joint type='ball'/>"
           "<geom size='0.1' pos='0 0 0.2'/></body></body></body></worldbody></mujoco>")
    model = rbd.load_mjcf(xml)
    mm = mujoco.MjModel.from_xml_string(xml)
    md = mujoco.MjData(mm)
    jm = interop.mujoco_map(model, mm)
    assert model.joint_names == ["body1_joint0", "arm_joint0", "arm_joint1", "body3_joint0"]
    q, v = rbd.random_configuration(model, rng), rng.normal(size=model.nv)
    md.qpos[:], md.qvel[:] = jm.to_q(q), jm.to_v(q, v)
    mujoco.mj_forward(mm, md)
    M_mj = np.zeros((mm.nv, mm.nv))
    mujoco.mj_fullM(mm, md, M_mj)
    columns = jm.from_tau(md.qpos, jm.to_v(q, np.eye(model.nv)) @ M_mj.T)
    assert_close(rbd.crba(model, q), columns.T, RTOL_EXACT, "M")
