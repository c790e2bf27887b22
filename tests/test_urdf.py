"""The URDF reader and writer: conventions, fixed-joint merging, errors, safety, round trips.

Geometry is checked against scipy's rotations (an independent implementation
of the URDF roll-pitch-yaw convention: extrinsic x-y-z, ``R = Rz Ry Rx``), and
merged models against models built by hand with the welded links kept as
bodies on :class:`rbd.Fixed` joints.
"""

from __future__ import annotations

import builtins
import doctest
import io
import os
import pathlib
import time
import tracemalloc

import numpy as np
import pytest
from helpers import RTOL_EXACT, RTOL_FD, assert_close
from scipy.spatial.transform import Rotation

import rbd
import rbd.urdf
from rbd.spatial import mcI, plux

DATA = pathlib.Path(__file__).parent / "data"

#: Writing numbers with their shortest round-trip text and reading them back
#: reproduces every double; only rpy -> rotation -> rpy adds a few ulps, so a
#: reloaded model's dynamics agree to rounding.
RTOL_ROUNDTRIP = 1e-12

#: Wall-clock bound for refusing a hostile document; the refusal happens at the
#: first declaration, in microseconds, so 2 s only guards against expansion.
HOSTILE_SECONDS = 2.0

#: Peak Python allocation while refusing a hostile document (a billion-laughs
#: expansion would need gigabytes).
HOSTILE_BYTES = 5_000_000


# --- document builders ---------------------------------------------------------------------
def _vec(values) -> str:
    return " ".join(repr(float(x)) for x in values)


def link(name, mass=None, com=(0, 0, 0), rpy=(0, 0, 0), inertia=(0.1, 0.2, 0.25, 0, 0, 0)):
    """A <link>; ``inertia`` is (ixx, iyy, izz, ixy, ixz, iyz) in the inertial frame."""
    if mass is None:
        return f'<link name="{name}"/>'
    ixx, iyy, izz, ixy, ixz, iyz = inertia
    return (f'<link name="{name}"><inertial><origin xyz="{_vec(com)}" rpy="{_vec(rpy)}"/>'
            f'<mass value="{mass!r}"/><inertia ixx="{ixx!r}" iyy="{iyy!r}" izz="{izz!r}" '
            f'ixy="{ixy!r}" ixz="{ixz!r}" iyz="{iyz!r}"/></inertial></link>')


def joint(name, kind, parent, child, xyz=(0, 0, 0), rpy=(0, 0, 0), axis=None, limit=True):
    axis_el = "" if axis is None else f'<axis xyz="{_vec(axis)}"/>'
    limit_el = ('<limit lower="-1" upper="1" effort="1" velocity="1"/>'
                if limit and kind in ("revolute", "prismatic") else "")
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="{child}"/><origin xyz="{_vec(xyz)}" rpy="{_vec(rpy)}"/>'
            f'{axis_el}{limit_el}</joint>')


def robot(*parts, name="test") -> str:
    return f'<robot name="{name}">' + "".join(parts) + "</robot>"


def R_urdf(rpy) -> np.ndarray:
    """URDF rpy: fixed-axis rotations about x, then y, then z (scipy's extrinsic 'xyz')."""
    return Rotation.from_euler("xyz", rpy).as_matrix()


def X_urdf(xyz, rpy) -> np.ndarray:
    """Motion transform from the parent link frame to a joint frame at ``<origin>``."""
    return plux(R_urdf(rpy).T, np.asarray(xyz, dtype=float))


def link_inertia(mass, com, rpy, inertia) -> np.ndarray:
    ixx, iyy, izz, ixy, ixz, iyz = inertia
    I_frame = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    R = R_urdf(rpy)
    return mcI(mass, np.asarray(com, dtype=float), R @ I_frame @ R.T)


def name_permutation(old: rbd.Model, new: rbd.Model):
    """Index arrays ``iq, iv`` with ``q_new = q_old[iq]`` and ``v_new = v_old[iv]``."""
    iq, iv = np.zeros(new.nq, dtype=int), np.zeros(new.nv, dtype=int)
    for name in old.joint_names:
        iq[new.q_slice(name)] = np.arange(old.nq)[old.q_slice(name)]
        iv[new.v_slice(name)] = np.arange(old.nv)[old.v_slice(name)]
    return iq, iv


def random_state(model: rbd.Model, rng):
    """``rbd.testing.random_state``, or, with mimic joints, a state of the independent
    coordinates (that helper draws one value per joint of the full tree)."""
    if not model.mimic:
        return rbd.testing.random_state(model, rng)
    return rbd.random_configuration(model, rng), rng.normal(size=model.nv), rng.normal(
        size=model.nv)


def assert_same_dynamics(old, new, backend, rng, rtol=RTOL_EXACT, trials=3):
    iq, iv = name_permutation(old, new)
    for _ in range(trials):
        q, v, a = random_state(old, rng)
        assert_close(rbd.crba(new, q[iq], backend=backend),
                     rbd.crba(old, q, backend=backend)[np.ix_(iv, iv)], rtol, "crba")
        assert_close(rbd.rnea(new, q[iq], v[iv], a[iv], backend=backend),
                     rbd.rnea(old, q, v, a, backend=backend)[iv], rtol, "rnea")


# --- joint types and conventions -------------------------------------------------------------
ALL_TYPES = robot(
    link("world"), link("r", 1.0), link("c", 1.0), link("p", 1.0), link("pl", 1.0),
    link("fl", 1.0), link("fx", 1.0),
    joint("j_rev", "revolute", "world", "r", axis=(0, 0, 2)),
    joint("j_cont", "continuous", "world", "c", axis=(1, 1, 0)),
    joint("j_pri", "prismatic", "world", "p", axis=(0, -3, 0)),
    joint("j_plan", "planar", "world", "pl", axis=(0, 0, 1)),
    joint("j_float", "floating", "world", "fl"),
    joint("j_fix", "fixed", "fl", "fx"),
)


def test_every_joint_type_is_parsed():
    model = rbd.load_urdf(ALL_TYPES)
    kinds = {b.joint_name: b.joint for b in model.bodies}
    assert model.body_names == ["r", "c", "p", "pl", "fl"]
    assert model.joint_names == ["j_rev", "j_cont", "j_pri", "j_plan", "j_float"]
    assert isinstance(kinds["j_rev"], rbd.Revolute)
    np.testing.assert_allclose(kinds["j_rev"].axis, [0, 0, 1])
    assert isinstance(kinds["j_cont"], rbd.Revolute) and kinds["j_cont"].nq == 1
    np.testing.assert_allclose(kinds["j_cont"].axis, [2 ** -0.5, 2 ** -0.5, 0])
    assert isinstance(kinds["j_pri"], rbd.Prismatic)
    np.testing.assert_allclose(kinds["j_pri"].axis, [0, -1, 0])
    assert isinstance(kinds["j_plan"], rbd.Planar)
    np.testing.assert_allclose(kinds["j_plan"].normal, [0, 0, 1])
    assert isinstance(kinds["j_float"], rbd.Free)
    assert (model.nq, model.nv) == (1 + 1 + 1 + 3 + 7, 1 + 1 + 1 + 3 + 6)
    assert "fx" in model.frames and model.frames["fx"].body == model.body_names.index("fl")
    assert model.bodies[model.body_names.index("fl")].mass == pytest.approx(2.0)
    assert model.name == "test"


def test_default_axis_is_x():
    model = rbd.load_urdf(robot(link("a"), link("b", 1.0), joint("j", "revolute", "a", "b")))
    np.testing.assert_array_equal(model.bodies[0].joint.axis, [1.0, 0.0, 0.0])


def test_origin_rpy_and_axis_against_scipy(rng):
    for _ in range(5):
        xyz, rpy = rng.uniform(-1, 1, 3), rng.uniform(-np.pi, np.pi, 3)
        axis = rng.normal(size=3)
        model = rbd.load_urdf(robot(link("a"), link("b", 1.0),
                                    joint("j", "revolute", "a", "b", xyz, rpy, axis)))
        theta = rng.uniform(-np.pi, np.pi)
        T = rbd.forward_kinematics(model, [theta], backend="reference")[0]
        unit = axis / np.linalg.norm(axis)
        R_expected = R_urdf(rpy) @ Rotation.from_rotvec(theta * unit).as_matrix()
        assert_close(T[:3, :3], R_expected, RTOL_EXACT, "body rotation")
        assert_close(T[:3, 3], xyz, RTOL_EXACT, "body origin")


def test_rpy_single_axes_have_the_right_sense():
    """roll = π/2 maps y to z; pitch = π/2 maps z to x; yaw = π/2 maps x to y."""
    cases = [((np.pi / 2, 0, 0), [0, 1, 0], [0, 0, 1]),
             ((0, np.pi / 2, 0), [0, 0, 1], [1, 0, 0]),
             ((0, 0, np.pi / 2), [1, 0, 0], [0, 1, 0])]
    for rpy, before, after in cases:
        model = rbd.load_urdf(robot(link("a"), link("b", 1.0),
                                    joint("j", "revolute", "a", "b", rpy=rpy, axis=(0, 0, 1))))
        R = rbd.forward_kinematics(model, [0.0], backend="reference")[0, :3, :3]
        np.testing.assert_allclose(R @ before, after, atol=1e-15)


def test_inertial_origin_rotates_the_inertia(rng):
    rpy, com = rng.uniform(-np.pi, np.pi, 3), rng.uniform(-0.3, 0.3, 3)
    principal = (0.3, 0.5, 0.6, 0.02, -0.01, 0.03)
    model = rbd.load_urdf(robot(link("a"), link("b", 2.5, com, rpy, principal),
                                joint("j", "revolute", "a", "b", axis=(0, 0, 1))))
    body = model.bodies[0]
    ixx, iyy, izz, ixy, ixz, iyz = principal
    I_frame = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    R = R_urdf(rpy)
    assert body.mass == 2.5
    assert_close(body.com, com, RTOL_EXACT, "com")
    assert_close(body.I_com, R @ I_frame @ R.T, RTOL_EXACT, "I_com")
    # about the z hinge through the origin: M = (R I Rᵀ)_zz + m (cx² + cy²)
    expected = (R @ I_frame @ R.T)[2, 2] + 2.5 * (com[0] ** 2 + com[1] ** 2)
    assert_close(rbd.crba(model, [0.3], backend="reference"), [[expected]], RTOL_EXACT, "M")


def test_link_without_inertial_is_massless():
    with pytest.warns(RuntimeWarning, match=r"body 'b' has zero mass and zero inertia"):
        model = rbd.load_urdf(robot(link("a"), link("b"), link("c", 1.0),
                                    joint("j1", "revolute", "a", "b"),
                                    joint("j2", "revolute", "b", "c", xyz=(0, 0, 1))))
    assert model.bodies[0].mass == 0.0
    assert not np.any(model.bodies[0].inertia)


def test_bodies_are_depth_first_in_document_order():
    xml = robot(link("a"), link("b", 1.0), link("c", 1.0), link("d", 1.0), link("e", 1.0),
                joint("j_c", "revolute", "b", "c"),
                joint("j_d", "revolute", "a", "d"),
                joint("j_b", "revolute", "a", "b"),
                joint("j_e", "revolute", "d", "e"))
    model = rbd.load_urdf(xml)
    assert model.body_names == ["d", "e", "b", "c"]
    assert model.joint_names == ["j_d", "j_e", "j_b", "j_c"]
    assert model.parent == (-1, 0, -1, 2)


# --- fixed joints ----------------------------------------------------------------------------
# A chain with welded links at every position: on a body (B, D-E two deep), at
# the world (W), and a massless marker (tip).
O1 = ((0.1, 0.2, 0.3), (0.3, -0.2, 0.5))
OB = ((0.0, 0.4, -0.1), (1.1, 0.4, -0.7))
OC = ((0.2, 0.0, 0.1), (0.0, 0.5, 0.2))
OD = ((0.1, 0.1, 0.0), (-0.4, 0.0, 0.9))
OE = ((0.0, -0.2, 0.3), (0.2, 0.2, 0.2))
OF = ((0.3, 0.0, 0.0), (0.0, 0.0, 1.2))
OW = ((0.5, 0.0, 0.2), (0.0, 0.0, 0.6))
OX = ((0.0, 0.3, 0.0), (0.4, 0.0, 0.0))
OTIP = ((0.05, 0.0, 0.2), (0.0, -0.3, 0.0))
INERTIAL = {
    "A": (1.2, (0.1, 0.0, 0.2), (0.2, 0.1, 0.3), (0.05, 0.06, 0.04, 0.001, 0.0, 0.002)),
    "B": (0.7, (0.0, 0.1, -0.1), (0.5, -0.4, 0.1), (0.03, 0.02, 0.04, 0.0, 0.003, 0.0)),
    "C": (2.0, (0.2, 0.1, 0.0), (0.0, 0.0, 0.3), (0.1, 0.12, 0.08, 0.0, 0.0, 0.01)),
    "D": (0.4, (0.05, 0.0, 0.0), (0.1, 0.1, 0.1), (0.01, 0.012, 0.011, 0.0, 0.0, 0.0)),
    "E": (0.9, (0.0, 0.0, 0.1), (0.0, 0.3, 0.0), (0.02, 0.03, 0.03, 0.001, 0.0, 0.0)),
    "F": (1.5, (0.1, -0.1, 0.0), (0.2, 0.0, 0.0), (0.06, 0.05, 0.07, 0.0, 0.0, 0.0)),
    "W": (5.0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.5, 0.5, 0.5, 0.0, 0.0, 0.0)),
    "X": (1.1, (0.0, 0.1, 0.1), (0.3, 0.3, 0.3), (0.04, 0.05, 0.06, 0.0, 0.0, 0.0)),
}
A1, A2, A3, A4 = (0.2, 0.9, -0.3), (1.0, 0.2, 0.4), (0.0, -0.5, 1.0), (0.3, 0.3, 0.9)

MERGE_URDF = robot(
    link("base"), link("tip"), *[link(n, m, c, r, i) for n, (m, c, r, i) in INERTIAL.items()],
    joint("jA", "revolute", "base", "A", *O1, axis=A1),
    joint("fB", "fixed", "A", "B", *OB),
    joint("jC", "prismatic", "B", "C", *OC, axis=A2),
    joint("fD", "fixed", "C", "D", *OD),
    joint("fE", "fixed", "D", "E", *OE),
    joint("jF", "revolute", "E", "F", *OF, axis=A3),
    joint("fTip", "fixed", "B", "tip", *OTIP),
    joint("fW", "fixed", "base", "W", *OW),
    joint("jX", "revolute", "W", "X", *OX, axis=A4),
)


def welded_model() -> rbd.Model:
    """MERGE_URDF by hand: every welded link a body of its own on an rbd.Fixed joint."""
    model = rbd.Model()

    def add(parent, joint_, origin, name, joint_name):
        inertia = link_inertia(*INERTIAL[name]) if name in INERTIAL else None
        return model.add_body(parent, joint_, X_urdf(*origin), inertia, name, joint_name)

    a = add(-1, rbd.Revolute(A1), O1, "A", "jA")
    b = add(a, rbd.Fixed(), OB, "B", "fB")
    c = add(b, rbd.Prismatic(A2), OC, "C", "jC")
    d = add(c, rbd.Fixed(), OD, "D", "fD")
    e = add(d, rbd.Fixed(), OE, "E", "fE")
    add(e, rbd.Revolute(A3), OF, "F", "jF")
    add(b, rbd.Fixed(), OTIP, "tip", "fTip")
    # W is welded to the world: its inertia does not enter the dynamics
    model.add_body(-1, rbd.Revolute(A4), X_urdf(*OX) @ X_urdf(*OW),
                   link_inertia(*INERTIAL["X"]), "X", "jX")
    return model


def test_fixed_joints_merge_like_welded_bodies(backend, rng):
    merged, welded = rbd.load_urdf(MERGE_URDF), welded_model()
    assert merged.body_names == ["A", "C", "F", "X"]
    assert merged.joint_names == welded.joint_names == ["jA", "jC", "jF", "jX"]
    assert set(merged.frames) == {"A", "B", "C", "D", "E", "F", "X", "tip"}
    assert merged.total_mass == pytest.approx(welded.total_mass, rel=1e-15)
    for _ in range(3):
        q, v, a = rbd.testing.random_state(welded, rng)
        assert_close(rbd.crba(merged, q, backend=backend), rbd.crba(welded, q, backend=backend),
                     RTOL_EXACT, "crba")
        assert_close(rbd.rnea(merged, q, v, a, backend=backend),
                     rbd.rnea(welded, q, v, a, backend=backend), RTOL_EXACT, "rnea")
        assert_close(rbd.aba(merged, q, v, a, backend=backend),
                     rbd.aba(welded, q, v, a, backend=backend), RTOL_EXACT, "aba")
        assert_close(rbd.center_of_mass(merged, q, backend=backend),
                     rbd.center_of_mass(welded, q, backend=backend), RTOL_EXACT, "com")


def test_welded_links_are_addressable_frames(backend, rng):
    merged, welded = rbd.load_urdf(MERGE_URDF), welded_model()
    point = np.array([0.1, -0.2, 0.3])
    for _ in range(3):
        q = rbd.random_configuration(welded, rng)
        for name in ("B", "D", "E", "tip"):
            for p in (None, point):
                assert_close(rbd.jacobian(merged, q, name, p, backend=backend),
                             rbd.jacobian(welded, q, name, p, backend=backend), RTOL_EXACT,
                             f"jacobian of frame {name}")
        T_welded = rbd.forward_kinematics(welded, q, backend=backend)
        T_merged = rbd.forward_kinematics(merged, q, backend=backend)
        for name in ("B", "D", "E", "tip"):
            frame = merged.frames[name]
            E, r = rbd.spatial.plux_parts(frame.X)
            T_frame = T_merged[frame.body] @ rbd.spatial.homogeneous(E.T, r)
            assert_close(T_frame, T_welded[welded.body_names.index(name)], RTOL_EXACT,
                         f"pose of frame {name}")


def test_floating_base(backend, rng):
    xml = robot(link("pelvis", 3.0, (0.0, 0.0, 0.1), (0.2, 0.0, 0.0), (0.1, 0.2, 0.15, 0, 0, 0)),
                link("leg", 1.0, (0.0, 0.0, -0.2)),
                link("marker"),
                joint("hip", "revolute", "pelvis", "leg", (0.0, 0.1, -0.1), (0.0, 0.0, 0.3),
                      axis=(0, 1, 0)),
                joint("fixed_marker", "fixed", "pelvis", "marker", (0.1, 0.0, 0.0)))
    fixed_base = rbd.load_urdf(xml)
    assert fixed_base.body_names == ["leg"] and fixed_base.total_mass == 1.0
    model = rbd.load_urdf(xml, floating_base=True)
    assert model.body_names == ["pelvis", "leg"]
    assert model.joint_names == ["root_joint", "hip"]
    assert isinstance(model.bodies[0].joint, rbd.Free) and (model.nq, model.nv) == (8, 7)
    assert model.frames["marker"].body == 0
    by_hand = rbd.Model()
    pelvis = by_hand.add_body(-1, rbd.Free(), None,
                              link_inertia(3.0, (0.0, 0.0, 0.1), (0.2, 0.0, 0.0),
                                           (0.1, 0.2, 0.15, 0, 0, 0)), "pelvis", "root_joint")
    by_hand.add_body(pelvis, rbd.Revolute((0, 1, 0)),
                     X_urdf((0.0, 0.1, -0.1), (0.0, 0.0, 0.3)),
                     link_inertia(1.0, (0.0, 0.0, -0.2), (0, 0, 0), (0.1, 0.2, 0.25, 0, 0, 0)),
                     "leg", "hip")
    assert_same_dynamics(by_hand, model, backend, rng)


def test_floating_base_root_joint_name_is_made_unique():
    xml = robot(link("a", 1.0), link("b", 1.0), joint("root_joint", "revolute", "a", "b"))
    model = rbd.load_urdf(xml, floating_base=True)
    assert model.joint_names == ["root_joint_0", "root_joint"]


def test_single_link_robot():
    assert rbd.load_urdf(robot(link("only", 2.0))).nbodies == 0
    model = rbd.load_urdf(robot(link("only", 2.0)), floating_base=True)
    assert model.nbodies == 1 and model.total_mass == 2.0


# --- sources ---------------------------------------------------------------------------------
def test_path_and_string_inputs_agree(tmp_path):
    path = DATA / "meshes.urdf"
    text = path.read_text()
    models = [rbd.load_urdf(path), rbd.load_urdf(str(path)), rbd.load_urdf(text),
              rbd.load_urdf("\n  \t" + text.lstrip()), rbd.load_urdf(path.read_bytes())]
    q, v, a = rbd.testing.random_state(models[0], 1)
    expected = rbd.rnea(models[0], q, v, a, backend="reference")
    for model in models:
        assert model.body_names == ["upper", "lower"]
        assert model.joint_names == ["shoulder", "elbow"]
        assert model.name == "mesh_fixture"
        assert_close(rbd.rnea(model, q, v, a, backend="reference"), expected, RTOL_EXACT, "rnea")


def test_mesh_files_are_never_opened(monkeypatch):
    text = (DATA / "meshes.urdf").read_text()
    opened = []
    real_open, real_os_open = builtins.open, os.open

    def spy_open(file, *args, **kwargs):
        opened.append(os.fspath(file) if isinstance(file, str | os.PathLike) else file)
        return real_open(file, *args, **kwargs)

    def spy_os_open(path, *args, **kwargs):
        opened.append(os.fspath(path))
        return real_os_open(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spy_open)
    monkeypatch.setattr(io, "open", spy_open)
    monkeypatch.setattr(os, "open", spy_os_open)
    rbd.load_urdf(text)
    assert opened == []
    rbd.load_urdf(DATA / "meshes.urdf")
    assert opened == [str(DATA / "meshes.urdf")]


# --- errors ----------------------------------------------------------------------------------
ROOT_AND_CHILD = (link("a"), link("b", 1.0))
J_AB = joint("j", "revolute", "a", "b")

BAD_DOCUMENTS = {
    "malformed": ('<robot name="r"><link name="a"></robot>', r"malformed XML"),
    "not a robot": ('<model name="r"><link name="a"/></model>',
                    r"root element is <model>, expected <robot>"),
    "unknown joint type": (robot(*ROOT_AND_CHILD, joint("j", "ball", "a", "b")),
                           r"joint 'j': unknown joint type 'ball'"),
    "no joint type": (robot(*ROOT_AND_CHILD, J_AB.replace(' type="revolute"', "")),
                      r"joint 'j': <joint> has no 'type'"),
    "missing parent link": (robot(*ROOT_AND_CHILD, joint("j", "revolute", "nope", "b")),
                            r"joint 'j': parent link 'nope' is not defined"),
    "missing child link": (robot(*ROOT_AND_CHILD, joint("j", "revolute", "a", "nope")),
                           r"joint 'j': child link 'nope' is not defined"),
    "no parent element": (robot(*ROOT_AND_CHILD, J_AB.replace('<parent link="a"/>', "")),
                          r"joint 'j': missing <parent>"),
    "second root": (robot(*ROOT_AND_CHILD, link("c", 1.0), J_AB),
                    r"links 'a' and 'c' both have no parent joint \(a second root\)"),
    "cycle without root": (robot(link("a", 1.0), link("b", 1.0),
                                 joint("j1", "revolute", "a", "b"),
                                 joint("j2", "revolute", "b", "a")),
                           r"cycle through links 'a' <- 'b' <- 'a'"),
    "detached cycle": (robot(*ROOT_AND_CHILD, link("c", 1.0), link("d", 1.0), J_AB,
                             joint("j2", "revolute", "c", "d"),
                             joint("j3", "revolute", "d", "c")),
                       r"cycle through links 'c' <- 'd' <- 'c'"),
    "self loop": (robot(*ROOT_AND_CHILD, link("c", 1.0), J_AB,
                        joint("j2", "revolute", "c", "c")), r"cycle through links 'c' <- 'c'"),
    "duplicate link": (robot(*ROOT_AND_CHILD, link("b", 2.0), J_AB),
                       r"duplicate link name 'b'"),
    "duplicate joint": (robot(*ROOT_AND_CHILD, link("c", 1.0), J_AB,
                              joint("j", "revolute", "b", "c")), r"duplicate joint name 'j'"),
    "two parents": (robot(*ROOT_AND_CHILD, link("c", 1.0), J_AB,
                          joint("j2", "revolute", "a", "c"), joint("j3", "revolute", "b", "c")),
                    r"link 'c' has two parents: joints 'j2' and 'j3'"),
    "xyz count": (robot(*ROOT_AND_CHILD, J_AB.replace('xyz="0.0 0.0 0.0"', 'xyz="1 2"', 1)),
                  r"joint 'j': <origin> xyz='1 2' must hold 3 numbers, got 2"),
    "xyz nan": (robot(*ROOT_AND_CHILD, J_AB.replace('xyz="0.0 0.0 0.0"', 'xyz="1 nan 2"', 1)),
                r"joint 'j': <origin> xyz='1 nan 2' has a non-finite value"),
    "rpy text": (robot(*ROOT_AND_CHILD, J_AB.replace('rpy="0.0 0.0 0.0"', 'rpy="a b c"')),
                 r"joint 'j': <origin> rpy='a b c' is not a list of numbers"),
    "mass inf": (robot(link("a"), link("b", 1.0).replace('value="1.0"', 'value="inf"'), J_AB),
                 r"link 'b' <inertial>: <mass> value='inf' has a non-finite value"),
    "inertia overflow": (robot(link("a"), link("b", 1.0).replace('ixx="0.1"', 'ixx="1e400"'),
                               J_AB), r"link 'b' <inertial>: <inertia> ixx='1e400' has a non"),
    "missing ixy": (robot(link("a"), link("b", 1.0).replace('ixy="0"', ""), J_AB),
                    r"link 'b' <inertial>: <inertia> has no 'ixy'"),
    "missing mass": (robot(link("a"), link("b", 1.0).replace('<mass value="1.0"/>', ""), J_AB),
                     r"link 'b' <inertial>: missing <mass>"),
    "two origins": (robot(*ROOT_AND_CHILD, J_AB.replace("<origin", "<origin/><origin", 1)),
                    r"joint 'j': more than one <origin>"),
    "negative mass": (robot(link("a"), link("b", -1.0), J_AB), r"link 'b': negative mass -1"),
    "not positive": (robot(link("a"), link("b", 1.0, inertia=(-0.1, 0.2, 0.2, 0, 0, 0)), J_AB),
                     r"link 'b': non-physical inertia: principal moments \[-0.1, 0.2, 0.2\] "
                     r"kg m\^2 are not all >= 0.*Pass inertia='repair'"),
    "triangle": (robot(link("a"), link("b", 1.0, inertia=(0.1, 0.1, 0.3, 0, 0, 0)), J_AB),
                 r"link 'b': non-physical inertia: .* break the triangle inequality: "
                 r"0.1 \+ 0.1 = 0.2 < 0.3. Pass inertia='repair'"),
    "lower above upper": (robot(*ROOT_AND_CHILD, J_AB.replace('lower="-1"', 'lower="2"')),
                          r"link 'b': joint 'j': lower limit \[2.0\] above upper limit"),
    "limit nan": (robot(*ROOT_AND_CHILD, J_AB.replace('upper="1"', 'upper="nan"')),
                  r"joint 'j': <limit> upper='nan' has a non-finite value"),
    "unexpanded xacro": (robot(*ROOT_AND_CHILD, J_AB.replace('xyz="0.0 0.0 0.0"',
                                                             'xyz="${x} 0 0"', 1)),
                         r"joint 'j': <origin> xyz='\$\{x\} 0 0' is not a list of numbers "
                         r"\(an unexpanded xacro expression: expand it to URDF first: "
                         r"`xacro file.xacro > file.urdf`\)"),
    "zero axis": (robot(*ROOT_AND_CHILD, joint("j", "revolute", "a", "b", axis=(0, 0, 0))),
                  r"joint 'j': <axis> xyz=\[0.0, 0.0, 0.0\] is zero"),
    "zero planar axis": (robot(*ROOT_AND_CHILD, joint("j", "planar", "a", "b", axis=(0, 0, 0))),
                         r"joint 'j': <axis> .* is zero"),
    "nameless link": (robot("<link/>"), r"<link>: <link> has no 'name'"),
    "not a file": ("no_such_robot.urdf", r"cannot read URDF file 'no_such_robot.urdf'"),
}


@pytest.mark.parametrize("case", sorted(BAD_DOCUMENTS))
def test_errors_name_the_element(case):
    document, match = BAD_DOCUMENTS[case]
    with pytest.raises(rbd.URDFError, match=match):
        rbd.load_urdf(document)


@pytest.mark.parametrize("document, match", [
    ('<robot><link name="a"/></robot>', r"<robot> has no 'name'"),
    (robot(), r"robot 'test' has no <link>"),
])
def test_tolerated_omissions_warn(document, match):
    """What Pinocchio's reader tolerates loads here, with a warning (example-robot-data's
    ur3.urdf has neither a name nor a link)."""
    with pytest.warns(RuntimeWarning, match=match):
        rbd.load_urdf(document)


def test_non_text_source_is_refused():
    with pytest.raises(rbd.URDFError, match="expected a URDF file path or an XML string, got int"):
        rbd.load_urdf(42)


def test_zero_axis_of_fixed_joint_is_ignored():
    xml = robot(*ROOT_AND_CHILD, link("c", 1.0), J_AB,
                joint("f", "fixed", "b", "c", axis=(0, 0, 0)))
    assert rbd.load_urdf(xml).nbodies == 1


# --- hostile documents -----------------------------------------------------------------------
BILLION_LAUGHS = ('<?xml version="1.0"?>\n<!DOCTYPE robot [\n<!ENTITY lol "lol">\n'
                  + "".join(f'<!ENTITY lol{k} "{("&lol" + str(k - 1) + ";") * 10}">\n'
                            for k in range(2, 10)).replace("&lol1;", "&lol;")
                  + ']>\n<robot name="&lol9;"><link name="a"/></robot>')


def _refused_quickly(document, match="unsafe XML refused"):
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(rbd.URDFError, match=match) as info:
            rbd.load_urdf(document)
        elapsed = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert elapsed < HOSTILE_SECONDS
    assert peak < HOSTILE_BYTES
    return info.value


def test_billion_laughs_is_refused_at_once():
    assert "&lol8;" in BILLION_LAUGHS  # the document really nests nine levels
    _refused_quickly(BILLION_LAUGHS)


def test_billion_laughs_file_is_refused_at_once(tmp_path):
    path = tmp_path / "lol.urdf"
    path.write_text(BILLION_LAUGHS)
    _refused_quickly(path)


def test_external_entity_is_refused_without_reading_it(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT")
    document = (f'<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY x SYSTEM "{secret.as_uri()}">]>'
                '<robot name="&x;"><link name="a"/></robot>')
    error = _refused_quickly(document)
    assert "TOP-SECRET" not in str(error)


def test_external_dtd_and_parameter_entities_are_refused(tmp_path):
    dtd = tmp_path / "robot.dtd"
    dtd.write_text('<!ENTITY name "from-dtd">')
    external = (f'<?xml version="1.0"?><!DOCTYPE robot SYSTEM "{dtd.as_uri()}">'
                '<robot name="r"><link name="a"/></robot>')
    parameter = (f'<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY % p SYSTEM "{dtd.as_uri()}">'
                 ' %p;]><robot name="&name;"><link name="a"/></robot>')
    _refused_quickly(external)
    _refused_quickly(parameter)


# --- writer ----------------------------------------------------------------------------------
def _with_frames(model: rbd.Model, rng) -> rbd.Model:
    for k in range(2):
        body = int(rng.integers(model.nbodies))
        model.add_frame(f"frame{k}", body, plux(rbd.testing.random_rotation(rng),
                                                rng.uniform(-0.5, 0.5, 3)))
    return model


def _roundtrip_models(seed=3):
    rng = np.random.default_rng(seed)
    joints = ("revolute", "prismatic", "planar")
    return [
        _with_frames(rbd.testing.random_model(rng, 6, joints), rng),
        _with_frames(rbd.testing.random_model(rng, 5, joints, floating_base=True), rng),
        _with_frames(rbd.testing.random_model(rng, 5, ("revolute", "prismatic"), chain=True),
                     rng),
        rbd.models.revolute_chain(4),
        rbd.models.get("arm6_urdf"),
    ]


@pytest.mark.parametrize("index", range(5))
def test_round_trip_keeps_names_and_dynamics(index, backend, rng):
    model = _roundtrip_models()[index]
    again = rbd.load_urdf(rbd.to_urdf(model))
    assert again.name == model.name
    assert sorted(again.body_names) == sorted(model.body_names)
    assert sorted(again.joint_names) == sorted(model.joint_names)
    for name, frame in model.frames.items():
        other = again.frames[name]
        assert again.body_names[other.body] == model.body_names[frame.body]
        assert_close(other.X, frame.X, RTOL_ROUNDTRIP, f"frame {name}")
    for name in model.body_names:
        i, j = model.body_names.index(name), again.body_names.index(name)
        assert type(again.bodies[j].joint) is type(model.bodies[i].joint)
        assert_close(again.bodies[j].inertia, model.bodies[i].inertia, RTOL_ROUNDTRIP, name)
    assert_same_dynamics(model, again, backend, rng, RTOL_ROUNDTRIP)


def test_round_trip_with_implicit_floating_base(backend, rng):
    source = rbd.testing.random_model(rng, 5, ("revolute", "prismatic"), floating_base=True)
    model = rbd.Model(name="floating")
    for b in source.bodies:
        X_tree = None if b.parent == -1 else b.X_tree
        joint_name = "root_joint" if b.parent == -1 else b.joint_name
        model.add_body(b.parent, b.joint, X_tree, b.inertia, b.name, joint_name)
    text = rbd.to_urdf(model, floating_base=True)
    assert 'type="floating"' not in text and 'name="world"' not in text
    again = rbd.load_urdf(text, floating_base=True)
    assert again.body_names[0] == model.body_names[0]
    assert_same_dynamics(model, again, backend, rng, RTOL_ROUNDTRIP)


def test_rpy_writer_is_exact_near_gimbal_lock():
    for pitch in (np.pi / 2, -np.pi / 2, np.pi / 2 - 1e-9, np.pi / 2 + 1e-7):
        R = R_urdf((0.3, pitch, -1.1))
        back = R_urdf(rbd.spatial.rot_to_rpy(R))
        assert np.max(np.abs(back - R)) < 1e-15


def test_write_urdf_writes_the_same_document(tmp_path):
    model = rbd.models.get("planar2_urdf")
    path = tmp_path / "planar2.urdf"
    rbd.write_urdf(model, path)
    assert path.read_text(encoding="utf-8") == rbd.to_urdf(model)
    assert rbd.load_urdf(path).joint_names == ["shoulder", "elbow"]


def test_written_limits_and_massless_frames():
    model = rbd.models.get("planar2_urdf")
    again = rbd.load_urdf(rbd.to_urdf(model))
    assert again.total_mass == model.total_mass
    root = rbd.urdf._parse_xml(rbd.to_urdf(model))
    limits = {elem.get("name"): elem.find("limit") for elem in root.findall("joint")
              if elem.get("type") == "revolute"}
    # the values stated in planar2.urdf
    assert float(limits["elbow"].get("upper")) == -float(limits["elbow"].get("lower")) == 2.8
    assert float(limits["elbow"].get("effort")) == 20.0
    assert float(limits["shoulder"].get("velocity")) == 4.0
    tip = [e for e in root.findall("link") if e.get("name") == "tip"][0]
    assert float(tip.find("inertial/mass").get("value")) == 0.0


def test_infinite_limits_are_written_as_the_bound_and_read_back_as_infinite():
    chain = rbd.models.revolute_chain(2)
    root = rbd.urdf._parse_xml(rbd.to_urdf(chain))
    for elem in root.findall("joint"):
        limit = elem.find("limit")
        assert float(limit.get("upper")) == -float(limit.get("lower")) == rbd.urdf.POSITION_BOUND
        assert float(limit.get("effort")) == float(limit.get("velocity")) == 1e9
        assert elem.find("dynamics") is None  # no damping, no friction
    again = rbd.load_urdf(rbd.to_urdf(chain))
    assert np.all(again.upper == np.inf) and np.all(again.lower == -np.inf)
    assert np.all(again.effort_limit == np.inf) and np.all(again.velocity_limit == np.inf)


WRITER_ERRORS = {
    "spherical": (lambda: rbd.models.pendulum(2), r"joint 'ball1': a spherical joint has no URDF"),
    "helical": (lambda: rbd.testing.random_model(0, 3, ("helical",)),
                r"joint 'joint_b0': a helical joint has no URDF"),
}


@pytest.mark.parametrize("case", sorted(WRITER_ERRORS))
def test_writer_refuses_joints_urdf_cannot_express(case):
    build, match = WRITER_ERRORS[case]
    model = build()
    before = model.describe()
    with pytest.raises(rbd.URDFError, match=match):
        rbd.to_urdf(model)
    assert model.describe() == before


def test_writer_floating_base_needs_an_identity_free_root():
    model = rbd.testing.random_model(0, 3, ("revolute",), floating_base=True)
    before = model.describe()
    with pytest.raises(rbd.URDFError, match=r"joint 'joint_b0': a URDF floating base has no"):
        rbd.to_urdf(model, floating_base=True)
    with pytest.raises(rbd.URDFError, match=r"exactly one root body, on a free joint"):
        rbd.to_urdf(rbd.models.double_pendulum(), floating_base=True)
    assert model.describe() == before
    with pytest.raises(rbd.InputError, match="model must be an rbd.Model"):
        rbd.to_urdf("not a model")


def test_writer_avoids_name_clashes_with_world():
    model = rbd.Model(name="clash")
    model.add_body(-1, rbd.Revolute((0, 0, 1)), None, (1.0, [0.1, 0, 0], np.eye(3) * 0.01),
                   "world", "j")
    model.add_frame("world_0", 0, None)
    again = rbd.load_urdf(rbd.to_urdf(model))
    assert again.body_names == ["world"] and "world_0" in again.frames


# --- bundled models --------------------------------------------------------------------------
def test_planar2_matches_the_textbook_two_link_arm(backend, rng):
    """The closed-form two-link arm with the parameters stated in planar2.urdf."""
    model = rbd.models.get("planar2_urdf")
    m1, m2, l1, lc1, lc2, I1, I2, g0 = 2.0, 1.5, 0.5, 0.25, 0.2, 0.05, 0.02, 9.81
    for _ in range(3):
        q, qd, qdd = rng.normal(size=2), rng.normal(size=2), rng.normal(size=2)
        c2 = np.cos(q[1])
        M = np.array([[I1 + I2 + m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * c2),
                       I2 + m2 * (lc2**2 + l1 * lc2 * c2)],
                      [I2 + m2 * (lc2**2 + l1 * lc2 * c2), I2 + m2 * lc2**2]])
        s = m2 * l1 * lc2 * np.sin(q[1])
        c = np.array([-s * (2 * qd[0] * qd[1] + qd[1] ** 2), s * qd[0] ** 2])
        # hinges about +y take +x towards -z: heights z1 = -lc1 sin q1, z2 = -l1 sin q1 - ...
        g = -g0 * np.array([(m1 * lc1 + m2 * l1) * np.cos(q[0]) + m2 * lc2 * np.cos(q.sum()),
                            m2 * lc2 * np.cos(q.sum())])
        assert_close(rbd.crba(model, q, backend=backend), M, RTOL_EXACT, "M")
        assert_close(rbd.gravity_forces(model, q, backend=backend), g, RTOL_EXACT, "g")
        assert_close(rbd.rnea(model, q, qd, qdd, backend=backend), M @ qdd + c + g, RTOL_EXACT,
                     "tau")


def test_arm6_tool_frame(backend, rng):
    model = rbd.models.get("arm6_urdf")
    assert model.joint_names == [f"joint{k}" for k in range(1, 7)]
    assert set(model.frames) - set(model.body_names) == {"gripper", "tool0"}
    assert model.bodies[5].mass == pytest.approx(0.6 + 1.4, rel=1e-15)  # flange + gripper
    assert model.total_mass == pytest.approx(48.7, rel=1e-15)
    # tool0: 0.02 m along the flange x axis, then 0.14 m along the gripper z axis,
    # which a pitch of π/2 turns onto the flange x axis
    R_tool = R_urdf((0.0, np.pi / 2, 0.0))
    E, r = rbd.spatial.plux_parts(model.frames["tool0"].X)
    assert_close(r, [0.16, 0.0, 0.0], RTOL_EXACT, "tool0 origin")
    assert_close(E.T, R_tool, RTOL_EXACT, "tool0 axes")

    def tool_pose(q):
        T = rbd.forward_kinematics(model, q, backend=backend)[5]
        return T[:3, :3] @ R_tool, T[:3, :3] @ r + T[:3, 3]

    q = rbd.random_configuration(model, rng)
    J = rbd.jacobian(model, q, "tool0", backend=backend)
    h = 1e-6
    for k in range(model.nv):
        dq = np.zeros(model.nv)
        dq[k] = h
        (Rp, pp), (Rm, pm) = tool_pose(q + dq), tool_pose(q - dq)
        omega = Rotation.from_matrix(Rp @ Rm.T).as_rotvec() / (2 * h)
        assert_close(J[:, k], np.concatenate([omega, (pp - pm) / (2 * h)]), RTOL_FD,
                     f"tool0 jacobian column {k}")
    assert np.all(np.linalg.eigvalsh(rbd.crba(model, q, backend=backend)) > 0)


def test_bundled_urdf_names_are_checked():
    with pytest.raises(rbd.ModelError, match="no bundled URDF named '../arm6'"):
        rbd.models.bundled_urdf("../arm6")
    with pytest.raises(rbd.ModelError, match="no bundled URDF named 'nothing'"):
        rbd.models.bundled_urdf("nothing")


def test_docstring_examples_run():
    result = doctest.testmod(rbd.urdf, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


# --- sources that are neither XML nor a file -------------------------------------------------
DOCUMENT = robot(*ROOT_AND_CHILD, J_AB)


def test_byte_order_mark_before_the_document_is_accepted():
    model = rbd.load_urdf("\ufeff" + DOCUMENT)
    assert model.joint_names == ["j"]
    assert rbd.load_urdf(("\ufeff" + DOCUMENT).encode("utf-8")).joint_names == ["j"]


def test_unknown_encoding_is_a_urdf_error():
    document = b'<?xml version="1.0" encoding="no-such-codec"?>' + DOCUMENT.encode()
    with pytest.raises(rbd.URDFError, match=r"cannot decode the XML \('unknown encoding: "
                                            r"no-such-codec'\); save the file as UTF-8"):
        rbd.load_urdf(document)


@pytest.mark.parametrize("source", ["robot\x00.urdf", pathlib.Path("robot\x00.urdf")])
def test_nul_character_in_a_file_name_is_a_urdf_error(source):
    with pytest.raises(rbd.URDFError, match=r"cannot read URDF file 'robot\\x00.urdf'"):
        rbd.load_urdf(source)


def test_a_string_that_is_not_xml_is_never_echoed_whole():
    document = "robot: " + DOCUMENT * 50  # does not start with '<': taken for a file name
    with pytest.raises(rbd.URDFError, match=r"cannot read URDF file .*first non-blank") as info:
        rbd.load_urdf(document)
    assert len(str(info.value)) < 300


# --- xacro -----------------------------------------------------------------------------------
XACRO = ('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
         '<xacro:property name="l" value="1"/><link name="a"/></robot>')


def test_xacro_file_is_refused_with_the_command_to_expand_it(tmp_path):
    path = tmp_path / "arm.urdf.xacro"
    path.write_text(DOCUMENT)
    with pytest.raises(rbd.URDFError, match=r"xacro file.*`xacro file.xacro > file.urdf`"):
        rbd.load_urdf(path)


@pytest.mark.parametrize("document", [XACRO, XACRO.replace(' xmlns:xacro="http://www.ros.org'
                                                            '/wiki/xacro"', "")])
def test_xacro_elements_are_refused_with_the_command_to_expand_them(document):
    with pytest.raises(rbd.URDFError, match=r"the document is a xacro file, not URDF: "
                                            r"expand it to URDF first"):
        rbd.load_urdf(document)


def test_a_xacro_namespace_without_xacro_elements_is_plain_urdf():
    document = DOCUMENT.replace('<robot name="test"',
                                '<robot name="test" xmlns:xacro="http://ros.org/wiki/xacro"')
    assert rbd.load_urdf(document).joint_names == ["j"]


# --- inertia policies ------------------------------------------------------------------------
BAD_I = (0.1, 0.1, 0.3, 0, 0, 0)  # principal moments 0.1 + 0.1 < 0.3
WELDED = robot(link("a"), link("b", 5.0, inertia=(0.3, 0.4, 0.5, 0, 0, 0)),
               link("plate", 0.1, com=(0, 0, 0.2), inertia=BAD_I), J_AB,
               joint("weld", "fixed", "b", "plate", xyz=(0, 0, 0.1)))


def test_link_welded_to_a_heavy_body_is_checked_merged():
    """plate alone breaks the triangle inequality; merged into b it is physical."""
    with pytest.raises(rbd.URDFError, match="link 'plate'"):
        rbd.load_urdf(robot(link("a"), link("plate", 0.1, inertia=BAD_I),
                            joint("j", "revolute", "a", "plate")))
    model = rbd.load_urdf(WELDED)
    assert model.bodies[0].mass == pytest.approx(5.1, rel=1e-15)
    assert np.all(np.linalg.eigvalsh(model.bodies[0].I_com) > 0)


def test_root_of_a_fixed_base_is_never_checked():
    document = robot(link("base", 1.0, inertia=BAD_I), link("b", 1.0),
                     link("tray", 1.0, inertia=BAD_I), joint("j", "revolute", "base", "b"),
                     joint("weld", "fixed", "base", "tray"))
    assert rbd.load_urdf(document).nbodies == 1
    with pytest.raises(rbd.URDFError, match=r"link 'base' \(with its welded link 'tray'\): "
                                            r"non-physical inertia"):
        rbd.load_urdf(document, floating_base=True)


def test_strict_tolerance_is_relative_to_the_largest_moment():
    for scale in (1.0, 1e-3):  # above the absolute floor INERTIA_ATOL
        inside = tuple(scale * x for x in (0.1, 0.2, 0.3 * (1 + 0.5 * rbd.urdf.INERTIA_RTOL),
                                           0, 0, 0))
        outside = tuple(scale * x for x in (0.1, 0.2, 0.3 * (1 + 3 * rbd.urdf.INERTIA_RTOL),
                                            0, 0, 0))
        rbd.load_urdf(robot(link("a"), link("b", 1.0, inertia=inside), J_AB))
        with pytest.raises(rbd.URDFError, match="triangle inequality"):
            rbd.load_urdf(robot(link("a"), link("b", 1.0, inertia=outside), J_AB))


def _nearest_by_optimization(moments):
    """Independent check: minimize the distance over {λi + λj ≥ λk} numerically."""
    from scipy.optimize import minimize

    cons = [{"type": "ineq", "fun": (lambda x, r=row: r @ x)} for row in
            ([1, 1, -1], [1, -1, 1], [-1, 1, 1])]
    result = minimize(lambda x: np.sum((x - moments) ** 2), np.abs(moments) + 1.0,
                      constraints=cons, method="SLSQP", options={"ftol": 1e-15, "maxiter": 500})
    return result.x


def test_repair_uses_the_nearest_physical_inertia_and_warns_once(rng):
    R = rbd.testing.random_rotation(rng)
    cases = {"b": np.array([0.1, 0.1, 0.3]), "c": np.array([-0.05, 0.2, 0.25]),
             "d": np.array([-0.3, -0.1, 0.2])}
    parts, joints = [link("a")], []
    for name, moments in cases.items():
        I = R @ np.diag(moments) @ R.T
        parts.append(link(name, 2.0, com=(0.1, 0, 0), inertia=tuple(
            float(I[i, j]) for i, j in ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)))))
        joints.append(joint(f"j{name}", "revolute", "a", name))
    with pytest.warns(RuntimeWarning) as record:
        model = rbd.load_urdf(robot(*parts, link("e", 1.0), *joints,
                                    joint("je", "revolute", "a", "e")), inertia="repair")
    assert len(record) == 1
    message = str(record[0].message)
    assert "replaced 3 non-physical inertias" in message and "'e'" not in message
    for name, moments in cases.items():
        assert f"link {name!r}: principal moments" in message
        body = model.bodies[model.body_names.index(name)]
        assert body.mass == 2.0 and np.allclose(body.com, [0.1, 0, 0], rtol=0, atol=1e-15)
        # the principal axes are kept: R still diagonalizes the repaired inertia
        D = R.T @ body.I_com @ R
        assert_close(D - np.diag(np.diag(D)), np.zeros((3, 3)), 1e-12, f"{name} axes")
        # SLSQP converges to ~1e-8 of the exact projection
        assert_close(np.sort(np.diag(D)), np.sort(_nearest_by_optimization(moments)), 1e-6,
                     f"{name} moments")
    assert_close(np.sort(np.diag(R.T @ model.bodies[0].I_com @ R)), [0.4 / 3, 0.4 / 3, 0.8 / 3],
                 1e-12, "a, b rise and c falls by d/3")
    assert np.all(np.linalg.eigvalsh(rbd.crba(model, np.zeros(4))) > 0)


def test_repair_leaves_physical_documents_alone(backend, rng):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        repaired = rbd.load_urdf(WELDED, inertia="repair")
    assert_same_dynamics(rbd.load_urdf(WELDED), repaired, backend, rng, rtol=0.0)


def test_ignore_keeps_the_inertia_as_written():
    document = robot(link("a"), link("b", 1.0, inertia=(-0.1, 0.2, 0.2, 0, 0, 0)), J_AB)
    model = rbd.load_urdf(document, inertia="ignore")
    assert np.array_equal(model.bodies[0].I_com, np.diag([-0.1, 0.2, 0.2]))


@pytest.mark.parametrize("policy", rbd.urdf.INERTIA_POLICIES)
def test_negative_mass_is_an_error_under_every_policy(policy):
    with pytest.raises(rbd.URDFError, match=r"link 'b': negative mass -1 .*correct the file"):
        rbd.load_urdf(robot(link("a"), link("b", -1.0), J_AB), inertia=policy)


def test_unknown_inertia_policy_is_refused():
    with pytest.raises(rbd.InputError, match=r"inertia must be one of 'strict', 'repair', "
                                             r"'ignore', got 'fix'"):
        rbd.load_urdf(DOCUMENT, inertia="fix")


def test_massless_moving_bodies_are_named_once():
    document = robot(link("a"), link("b"), link("c"), link("d", 1.0), link("e"),
                     joint("j1", "revolute", "a", "b"), joint("j2", "revolute", "b", "c"),
                     joint("j3", "revolute", "c", "d"), joint("j4", "revolute", "d", "e"),
                     joint("weld", "fixed", "e", "d_tool"), link("d_tool", 0.5))
    with pytest.warns(RuntimeWarning) as record:
        rbd.load_urdf(document)
    assert len(record) == 1
    assert "bodies 'b', 'c' have zero mass and zero inertia" in str(record[0].message)


# --- limits and joint dynamics ---------------------------------------------------------------
def test_limits_and_dynamics_are_read():
    document = robot(
        link("a"), link("r", 1.0), link("c", 1.0), link("p", 1.0), link("n", 1.0),
        joint("jr", "revolute", "a", "r").replace(
            "</joint>", '<dynamics damping="0.5" friction="0.25"/></joint>'),
        joint("jc", "continuous", "a", "c").replace(
            "</joint>", '<limit lower="-1" upper="1" effort="7" velocity="3"/></joint>'),
        joint("jp", "prismatic", "a", "p", limit=False).replace(
            "</joint>", '<limit upper="0.4" effort="1e9"/><dynamics friction="2"/></joint>'),
        joint("jn", "revolute", "a", "n", limit=False))
    model = rbd.load_urdf(document)
    assert model.joint_names == ["jr", "jc", "jp", "jn"]
    inf = np.inf
    # a <limit> without lower gives 0 (URDF specification, Pinocchio); no <limit> at all: none
    assert model.lower.tolist() == [-1.0, -inf, 0.0, -inf]
    assert model.upper.tolist() == [1.0, inf, 0.4, inf]
    assert model.effort_limit.tolist() == [1.0, 7.0, inf, inf]
    assert model.velocity_limit.tolist() == [1.0, 3.0, inf, inf]
    assert model.damping.tolist() == [0.5, 0.0, 0.0, 0.0]
    assert model.friction.tolist() == [0.25, 0.0, 2.0, 0.0]


def _with_properties(model: rbd.Model, rng) -> rbd.Model:
    """Random finite or infinite limits, damping and friction on the 1-DoF joints."""
    for body in model.bodies:
        if body.joint.kind not in ("revolute", "prismatic"):
            continue
        lower = -np.inf if rng.random() < 0.3 else -rng.uniform(0.1, 3.0)
        model.set_joint_properties(
            body.joint_name, lower=lower, upper=rng.uniform(0.1, 3.0),
            velocity_limit=np.inf if rng.random() < 0.3 else rng.uniform(0.5, 10),
            effort_limit=rng.uniform(1, 100), damping=rng.choice([0.0, rng.uniform(0, 2)]),
            friction=rng.choice([0.0, rng.uniform(0, 2)]))
    return model


PROPERTIES = ("lower", "upper", "velocity_limit", "effort_limit", "damping", "friction")


def assert_same_properties(old: rbd.Model, new: rbd.Model):
    iq, iv = name_permutation(old, new)
    for key in PROPERTIES:
        perm = iq if key in ("lower", "upper") else iv
        assert np.array_equal(getattr(new, key), getattr(old, key)[perm]), key


def test_limits_and_dynamics_round_trip(rng):
    model = _with_properties(rbd.testing.random_model(rng, 6, ("revolute", "prismatic")), rng)
    again = rbd.load_urdf(rbd.to_urdf(model))
    assert_same_properties(model, again)
    assert np.isinf(model.lower).any() and np.isfinite(model.lower).any()  # both kinds tried


def test_limits_dynamics_armature_and_mimic_round_trip(backend, rng):
    """Everything to_urdf writes comes back: limits, damping, friction, armature (an rbd
    extension in <dynamics>), and <mimic> with its multiplier and offset."""
    model = _with_properties(rbd.testing.random_model(rng, 7, ("revolute", "prismatic")), rng)
    for body in model.bodies:
        model.set_joint_properties(body.joint_name, armature=rng.choice([0.0, rng.uniform(0, 1)]))
    names = [b.joint_name for b in model.bodies]
    model.add_mimic(names[3], names[1], multiplier=-1.5, offset=0.25)
    model.add_mimic(names[5], names[1], multiplier=0.5)
    model.set_joint_properties(names[3], armature=0.3)  # a mimic joint's own rotor inertia
    again = rbd.load_urdf(rbd.to_urdf(model))
    assert again.mimic == model.mimic == {names[3]: (names[1], -1.5, 0.25),
                                          names[5]: (names[1], 0.5, 0.0)}
    assert (again.nq, again.nv) == (model.nq, model.nv) == (5, 5)
    assert_same_properties(model, again)
    assert np.array_equal(again.armature, model.armature[name_permutation(model, again)[1]])
    full, full_again = model.full_model(), again.full_model()
    assert_same_properties(full, full_again)  # the mimic joints' own limits and armature
    assert np.array_equal(full_again.armature,
                          full.armature[name_permutation(full, full_again)[1]])
    assert_same_dynamics(model, again, backend, rng)


def test_armature_is_read_from_dynamics():
    document = robot(link("world"), link("a", 1.0),
                     joint("j", "revolute", "world", "a", axis=(0, 0, 1)))
    document = document.replace("</joint>", '<dynamics damping="0.5" armature="0.2"/></joint>')
    model = rbd.load_urdf(document)
    assert model.armature.tolist() == [0.2] and model.damping.tolist() == [0.5]
    with pytest.raises(rbd.URDFError, match="'j'.*armature"):
        rbd.load_urdf(document.replace('armature="0.2"', 'armature="-1"'))


def test_armature_of_a_planar_joint_is_not_written_and_says_so():
    model = rbd.Model()
    model.add_body(-1, rbd.Planar([0, 0, 1]), None, (1.0, [0, 0, 0], np.eye(3)), "slider")
    model.set_joint_properties("joint_slider", armature=0.1)
    with pytest.warns(RuntimeWarning, match="armature of planar.*joint_slider"):
        text = rbd.to_urdf(model)
    assert rbd.load_urdf(text).armature.tolist() == [0.0, 0.0, 0.0]


# --- mimic joints ----------------------------------------------------------------------------
def _gripper(*mimics: str, kinds=("prismatic", "prismatic", "revolute")) -> str:
    """Three joints on the world (a, b, c); each entry of ``mimics`` is put in a joint:
    ``'b:<mimic .../>'`` adds that element to joint b."""
    parts = [link("world")]
    for name, kind in zip("abc", kinds, strict=True):
        parts += [link(f"l{name}", 0.5, com=(0.1, 0, 0)),
                  joint(name, kind, "world", f"l{name}", xyz=(0, 0.1, 0), axis=(0, 1, 0))]
    text = robot(*parts)
    for item in mimics:
        name, element = item.split(":", 1)
        head = f'<joint name="{name}" '
        start = text.index(head)
        end = text.index("</joint>", start)
        text = text[:end] + element + text[end:]
    return text


def test_mimic_is_read_with_the_specification_defaults():
    model = rbd.load_urdf(_gripper('b:<mimic joint="a"/>',
                                   'c:<mimic joint="a" multiplier="-2.5" offset="0.1"/>'))
    assert model.mimic == {"b": ("a", 1.0, 0.0), "c": ("a", -2.5, 0.1)}
    assert (model.nq, model.nv, model.joint_names) == (1, 1, ["a"])
    T = rbd.forward_kinematics(model, [0.3])
    # b slides like a; c turns by -2.5 * 0.3 + 0.1 about y (its child's x axis tilts)
    assert_close(T[1, :3, 3], T[0, :3, 3], RTOL_EXACT, "b follows a")
    angle = -2.5 * 0.3 + 0.1
    assert_close(T[2, :3, 0], [np.cos(angle), 0.0, -np.sin(angle)], RTOL_EXACT, "c's angle")


def test_mimic_in_a_fixed_joint_is_ignored():
    """A welded joint has no coordinate to tie (files that weld a gripper shut keep it)."""
    model = rbd.load_urdf(_gripper('b:<mimic joint="a"/>', kinds=("prismatic", "fixed",
                                                                  "revolute")))
    assert model.mimic == {} and model.joint_names == ["a", "c"]


@pytest.mark.parametrize(("mimics", "kinds", "message"), [
    (['b:<mimic joint="nope"/>'], None, "joint 'b'.*unknown joint 'nope'"),
    (['b:<mimic joint="b"/>'], None, "joint 'b'.*itself"),
    (['b:<mimic joint="a"/>', 'c:<mimic joint="b"/>'], None,
     "joint 'c'.*'b', which mimics 'a'.*mimic 'a' directly"),
    (['a:<mimic joint="b"/>', 'b:<mimic joint="a"/>'], None, "joint 'a'.*cycle 'a' -> 'b' -> 'a'"),
    (['b:<mimic joint="a" multiplier="two"/>'], None, "joint 'b'.*multiplier='two'"),
    (['b:<mimic joint="a" offset="nan"/>'], None, "joint 'b'.*offset='nan'.*non-finite"),
    (['b:<mimic multiplier="2"/>'], None, "joint 'b'.*no 'joint' attribute"),
    (['b:<mimic joint="a"/><mimic joint="c"/>'], None, "joint 'b'.*more than one <mimic>"),
    (['c:<mimic joint="a"/>'], ("prismatic", "prismatic", "planar"),
     "joint 'c'.*planar joint cannot"),
    (['c:<mimic joint="a"/>'], ("fixed", "prismatic", "revolute"),
     "joint 'c'.*'a', a fixed joint"),
    (['c:<mimic joint="a"/>'], ("planar", "prismatic", "revolute"),
     "joint 'c'.*'a', a planar joint"),
])
def test_bad_mimic_is_refused_naming_the_joint(mimics, kinds, message):
    with pytest.raises(rbd.URDFError, match=message):
        rbd.load_urdf(_gripper(*mimics, **({} if kinds is None else {"kinds": kinds})))


# --- write what was read ---------------------------------------------------------------------
def test_floating_joint_below_the_root_round_trips(backend, rng):
    document = robot(link("world"), link("arm", 2.0), link("drone", 1.5, com=(0.1, 0, 0)),
                     joint("shoulder", "revolute", "world", "arm", axis=(0, 1, 0)),
                     joint("free", "floating", "arm", "drone", xyz=(0.3, 0.1, -0.2),
                           rpy=(0.2, -0.4, 1.0)))
    model = rbd.load_urdf(document)
    assert [b.joint.kind for b in model.bodies] == ["revolute", "free"]
    text = rbd.to_urdf(model)
    assert 'type="floating"' in text
    again = rbd.load_urdf(text)
    assert [b.joint.kind for b in again.bodies] == ["revolute", "free"]
    assert_close(again.bodies[1].X_tree, model.bodies[1].X_tree, RTOL_ROUNDTRIP, "X_tree")
    assert_same_dynamics(model, again, backend, rng, RTOL_ROUNDTRIP)


#: Random models written and read back (fuzz of the writer against the reader).
NFUZZ = 12


@pytest.mark.parametrize("seed", range(NFUZZ))
def test_random_models_round_trip(seed, backend):
    rng = np.random.default_rng(4000 + seed)
    kinds = ("revolute", "prismatic", "planar", "free")
    model = rbd.testing.random_model(rng, int(rng.integers(1, 8)),
                                     kinds[:int(rng.integers(1, 5))],
                                     floating_base=bool(rng.integers(2)),
                                     chain=bool(rng.integers(2)))
    model = _with_properties(_with_frames(model, rng), rng)
    again = rbd.load_urdf(rbd.to_urdf(model))
    assert sorted(again.body_names) == sorted(model.body_names)
    assert set(again.frames) == set(model.frames)
    for name in model.body_names:
        i, j = model.body_names.index(name), again.body_names.index(name)
        assert again.bodies[j].joint.kind == model.bodies[i].joint.kind
    assert_same_properties(model, again)
    assert_same_dynamics(model, again, backend, rng, RTOL_ROUNDTRIP)
