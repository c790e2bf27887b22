"""The compiled multi-CCD (``rbd/_kernels/collision_multiccd.pyx``) against its readable
twin (``rbd.constraints.collision_multiccd``) on the touching states of
``tests/test_collision_multiccd.py``, and the compiled collision stage and contact step on
a capsule on a mesh or a cylinder against MuJoCo 4.0."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from test_collision_multiccd import (
    CUBE,
    HEX,
    ON_SIDE,
    UPRIGHT,
    _assert_set_as_mujocos,
    _cap_rule,
    _cap_states,
    _scene,
    _touching,
)

import rbd
from rbd.constraints import collision as col
from rbd.constraints import collision_convex as cc
from rbd.constraints import collision_mesh as cm
from rbd.constraints import collision_multiccd as mc
from rbd.constraints.collision_gjk import ConvexGeom
from rbd.constraints.collision_primitive import pack

pytestmark = pytest.mark.usefixtures("require_kernels")

#: The twins run the same operations in the same order on the same doubles: bit for bit
#: (measured worst difference over every state below: 0).
EXACT = 0.0

#: (geom 1, geom 2, mesh): every pair kind the rule covers.
PAIRS = {
    "capsule-cylinder": ('type="capsule" size="0.05 0.1"', 'type="cylinder" size="0.1 0.15"',
                         None),
    "cylinder-cylinder": ('type="cylinder" size="0.08 0.12"',
                          'type="cylinder" size="0.1 0.15"', None),
    "cylinder-box": ('type="cylinder" size="0.1 0.15"', 'type="box" size="0.1 0.12 0.08"',
                     None),
    "capsule-cube": ('type="capsule" size="0.05 0.1"', 'type="mesh" mesh="m"', CUBE),
    "capsule-prism": ('type="capsule" size="0.05 0.1"', 'type="mesh" mesh="m"', HEX),
    "cylinder-cube": ('type="cylinder" size="0.08 0.15"', 'type="mesh" mesh="m"', CUBE),
    "cylinder-prism": ('type="cylinder" size="0.08 0.15"', 'type="mesh" mesh="m"', HEX),
    "box-cube": ('type="box" size="0.1 0.12 0.08"', 'type="mesh" mesh="m"', CUBE),
    "mesh-mesh": ('type="mesh" mesh="m"', 'type="mesh" mesh="m"', HEX),
}


def _geoms(model, d):
    """The model's two geoms as ``(kind, pos, mat, shape, rbound)``, geom 1 first in kind
    order (as the stage hands them to the pair routines)."""
    q, _, _ = rbd.mjcf.from_mujoco_state(model, d.qpos, d.qvel)
    poses = rbd.geom_poses(model, q)
    order = sorted(range(2), key=lambda k: col.KINDS.index(model.geoms[k].kind))
    return [(model.geoms[k].kind, *cm.placed(model.geoms[k], poses[k][:3, 3],
                                             poses[k][:3, :3])) for k in order]


def _readable(geoms, margin):
    """The readable rule's contacts (a mesh pair through ``mesh_pair``, which runs
    ``collision_multi`` for two polytopes without margin)."""
    (k1, p1, m1, s1, r1), (k2, p2, m2, s2, r2) = geoms
    if k2 == "mesh":
        return cm.mesh_pair(k1, k2, p1, m1, s1, r1, p2, m2, s2, r2, margin)
    found = mc.contacts(*(ConvexGeom(kind, pos, mat, shape, margin)
                          for kind, pos, mat, shape, _ in geoms), margin)
    return pack([(dist, pos, normal, np.zeros(3)) for dist, pos, normal in found])


def _compiled(geoms, margin):
    """The compiled rule's contacts ``(dist, pos, frame)`` (a mesh pair through
    ``mesh_pair``)."""
    from rbd._kernels import collision_mesh as kernel_mesh
    from rbd._kernels import collision_multiccd as kernel

    (k1, p1, m1, s1, r1), (k2, p2, m2, s2, r2) = geoms
    if k2 == "mesh":
        return kernel_mesh.mesh_pair(k1, k2, p1, m1, s1, r1, p2, m2, s2, r2, margin)
    return kernel.contacts(ConvexGeom(k1, p1, m1, s1, margin),
                           ConvexGeom(k2, p2, m2, s2, margin), margin)


@pytest.mark.parametrize("margin", [0.0, 0.01])
@pytest.mark.parametrize("name", list(PAIRS))
def test_kernel_is_the_readable_rule(tmp_path, name, margin):
    """Random and nearly flat touching states at two depths: the same contacts bit for
    bit (a cylinder's cap on a tie too: the four of the same search); some states give
    several contacts."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo poses the states")
    geom1, geom2, mesh = PAIRS[name]
    model, mm, d = _scene(tmp_path, f'{geom1} margin="{margin}"', geom2, mesh)
    counts = []
    bases = (None, (UPRIGHT, UPRIGHT), (ON_SIDE, UPRIGHT))
    for seed, depth, base in itertools.product(range(4), (2e-3, 1e-2), bases):
        _touching(mujoco, mm, d, seed, depth, base)
        geoms = _geoms(model, d)
        readable, compiled = _readable(geoms, margin), _compiled(geoms, margin)
        counts.append(len(readable.dist))
        assert len(compiled[0]) == len(readable.dist), (seed, depth)
        for a, b in zip(compiled, (readable.dist, readable.pos, readable.frame), strict=True):
            np.testing.assert_allclose(a, b, rtol=0, atol=EXACT)
    assert max(counts) >= 2


@pytest.mark.parametrize("margin", [0.0, 0.01])
def test_kernel_keeps_the_readable_four_cap_points(tmp_path, margin):
    """A box face on a cylinder's cap, clipped to more than four points (the states of
    ``tests/test_collision_multiccd.py``): the same four contacts bit for bit, where the
    rotating search meets no tie and where it does (measured: 19 of the 40 states tied, 38
    or 39 with four contacts)."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo poses the states")
    model, mm, d = _scene(tmp_path, f'type="cylinder" size="0.1 0.15" margin="{margin}"',
                          'type="box" size="0.2 0.2 0.08"')
    counts, tied = [], 0
    for quat_a, pos_b, quat_b in _cap_states(40):
        d.qpos[:] = 0
        d.qpos[3:7], d.qpos[7:10], d.qpos[10:14] = quat_a, pos_b, quat_b
        mujoco.mj_forward(mm, d)
        geoms = _geoms(model, d)
        readable, compiled = _readable(geoms, margin), _compiled(geoms, margin)
        tied += _cap_rule(model, d, margin)[3]
        counts.append(len(readable.dist))
        for a, b in zip(compiled, (readable.dist, readable.pos, readable.frame), strict=True):
            np.testing.assert_allclose(a, b, rtol=0, atol=EXACT)
    assert counts.count(4) >= 30 and tied >= 15


def test_kernel_gives_the_readable_four_of_a_whole_cap(tmp_path):
    """A cylinder's cap whole on a box face (the rotating search on a tie): the kernel's
    four contacts are the readable rule's, bit for bit."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo poses the states")
    model, mm, d = _scene(tmp_path, 'type="cylinder" size="0.1 0.15"',
                          'type="box" size="0.2 0.2 0.08"')
    _touching(mujoco, mm, d, 0, 5e-3, (UPRIGHT, UPRIGHT))
    geoms = _geoms(model, d)
    readable, compiled = _readable(geoms, 0.0), _compiled(geoms, 0.0)
    assert len(readable.dist) == 4 and _cap_rule(model, d, 0.0)[3]
    for a, b in zip(compiled, (readable.dist, readable.pos, readable.frame), strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=EXACT)


def test_kernel_takes_primitives_only():
    from rbd._kernels import collision_multiccd as kernel

    with pytest.raises(ValueError, match="mesh_pair"):
        kernel.contacts(ConvexGeom("capsule", np.zeros(3), np.eye(3), [0.1, 0.2], 0.0),
                        ConvexGeom("mesh", np.zeros(3), np.eye(3), None, 0.0), 0.0)


def test_capsule_on_a_mesh_runs_compiled_and_is_mujocos(tmp_path):
    """The stage runs the compiled rule for a capsule on a mesh (no readable-only pair) and
    gives MuJoCo's contacts on the states where the rule reproduces them (the seeds of
    ``tests/test_collision_multiccd.py``)."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    model, mm, d = _scene(tmp_path, 'type="capsule" size="0.05 0.1"',
                          'type="mesh" mesh="m"', CUBE)
    assert not col.reference_only(model)
    counts = set()
    for seed, depth in itertools.product((0, 1, 2, 3, 4, 6, 7, 8), (2e-3, 1e-2)):
        _touching(mujoco, mm, d, seed, depth, (ON_SIDE, UPRIGHT))
        q, _, _ = rbd.mjcf.from_mujoco_state(model, d.qpos, d.qvel)
        compiled = rbd.collide(model, q, backend="kernel")
        reference = rbd.collide(model, q, backend="reference")
        _assert_set_as_mujocos(compiled, d)
        # the same rule on geom poses from the compiled kinematics (1e-14 apart)
        np.testing.assert_allclose(compiled.pos, reference.pos, rtol=0, atol=1e-12)
        counts.add(d.ncon)
    assert max(counts) == 2


def test_sphere_and_ellipsoid_on_a_mesh_keep_one_contact():
    """Not a face or an edge: one GJK/EPA contact, as before (``supported`` is False)."""
    assert not mc.supported("sphere", "mesh") and not mc.supported("ellipsoid", "mesh")
    assert cc.max_contacts("capsule", "mesh", 0.0) == 1


#: A capsule dropped nearly flat on the top of a static cuboid mesh or a static cylinder,
#: against ``mj_step``: the capsule's core stays apart from the other geom (GJK only, no
#: EPA) and its line is clipped by the flat face, which gives MuJoCo's contacts to rounding
#: (measured worst qpos difference over the 100 steps: 5.3e-16 on the mesh, 5.4e-15 on the
#: cylinder); the bound allows that rounding grown over the run.
ATOL_CAPSULE_DROP = 1e-12
#: The static geom the capsule lands on.
GROUNDS = {"mesh": '<geom type="mesh" mesh="base" pos="0 0 -0.1" euler="2 3 0"/>',
           "cylinder": '<geom type="cylinder" size="0.3 0.1" pos="0 0 -0.1" euler="2 3 0"/>'}


@pytest.mark.parametrize("ground", list(GROUNDS))
def test_capsule_dropped_flat_follows_mj_step(tmp_path, ground):
    """A capsule falling nearly flat onto a cuboid mesh or a cylinder's cap, landing on both
    ends (multi-CCD's two contacts of the capsule's line clipped to the face) and coming to
    rest, on the compiled contact step (``rbd/_kernels/contact.pyx``): MuJoCo's qpos
    path."""
    pytest.importorskip("mujoco", reason="MuJoCo is the reference trajectory")
    from helpers import mujoco_qpos_path

    from rbd.constraints.forward_compiled import compiled_forward
    from rbd.mjcf import from_mujoco_state, to_mujoco_state
    from rbd.simulation.contact import compiled_runs

    base = " ".join(str(float(x)) for x in np.asarray(CUBE * [3, 3, 1], np.float32).ravel())
    path = tmp_path / "drop.xml"
    path.write_text('<mujoco><option timestep="0.004"/><asset>'
                    f'<mesh name="base" vertex="{base}"/></asset><worldbody>{GROUNDS[ground]}'
                    '<body pos="0.01 0.02 0.1" euler="88 4 10"><freejoint/>'
                    '<geom type="capsule" size="0.04 0.12"/></body>'
                    '</worldbody></mujoco>')
    model, mm, d = rbd.testing.mujoco_pair(path, integrator="euler")
    assert not col.reference_only(model) and compiled_forward(model) is not None
    q0, v0, _ = from_mujoco_state(model, d.qpos, d.qvel)
    steps = round(0.4 / mm.opt.timestep)
    traj = compiled_runs(model, q0[None], v0[None], steps, mm.opt.timestep)[0]
    expected = mujoco_qpos_path(mm, d, steps)
    got = to_mujoco_state(model, traj.q)[0]
    np.testing.assert_allclose(got, expected, rtol=0, atol=ATOL_CAPSULE_DROP)
    assert traj.contact_count.max() == 2 and d.ncon == 2
