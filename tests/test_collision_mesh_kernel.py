"""Mesh pairs on the compiled collision stage (``rbd/_kernels/collision_mesh.pyx``, the mesh
support of ``collision_gjk.pyx``) against the readable routines
(``rbd.constraints.collision_mesh``) and MuJoCo 4.0, and the compiled contact step of a mesh
model against ``mj_step``.

These tests need the kernels (``require_kernels``): on the pure-Python path there is no
twin to compare.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from helpers import collide_at, mujoco_qpos_path
from scipy.spatial.transform import Rotation
from test_collision_mesh import (
    _CUBE,
    ATOL_TRAJECTORY,
    EPA_DIST_ATOL,
    EPA_NORMAL_ATOL,
    EPA_POS_ATOL,
    EXACT_ATOL,
    SPHERE_ATOL,
    _assert_contacts_as_mujocos,
    _cloud,
    _on_plane,
    _scene,
    _touching,
    _vertex_text,
)

import rbd
from rbd.constraints import collision as col
from rbd.constraints import collision_convex as cvx
from rbd.constraints import collision_mesh as cm
from rbd.constraints.forward_compiled import compiled_forward
from rbd.simulation.contact import compiled_runs

pytestmark = pytest.mark.usefixtures("require_kernels")

#: Kernel against reference: the same statements in the same order, except the geom and
#: mesh-frame poses (4×4 and 3×3 NumPy products against sequential sums in C) and NumPy's
#: products in the reference's plane–mesh; EPA turns those last bits into 3.5e-13 on an
#: ellipsoid–mesh normal (measured worst over 18 states per scene, 1e-16 elsewhere).
TWIN_ATOL = 1e-12

#: (other geom, pair margin, MuJoCo tolerances (dist, pos, normal)): every mesh pair the
#: compiled stage collides (a capsule, cylinder, box or mesh on a mesh takes MuJoCo 4.0's
#: multi-contact, readable only: rbd.constraints.collision_multiccd).
SCENES = {
    "plane": ("plane", 0.0, (EXACT_ATOL,) * 3),
    "plane, margin": ("plane", 0.02, (EXACT_ATOL,) * 3),
    "sphere": ('type="sphere" size="0.1"', 0.0, (SPHERE_ATOL,) * 3),
    "ellipsoid": ('type="ellipsoid" size="0.1 0.2 0.15"', 0.0,
                  (EPA_DIST_ATOL, EPA_POS_ATOL, EPA_NORMAL_ATOL)),
}


@pytest.mark.parametrize("name", list(SCENES))
def test_compiled_stage_collides_mesh_pairs_as_the_reference(tmp_path, name):
    """The model takes the compiled stage and forward pass; at states touching, deep and 1
    mm apart its contacts are the readable stage's (TWIN_ATOL, the same order and geoms)
    and MuJoCo's."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo gives the states")
    other, margin, atol = SCENES[name]
    model, mm, d = _scene(tmp_path, other, margin)
    assert not col.reference_only(model) and compiled_forward(model) is not None
    seen = 0
    for seed, depth in itertools.product(range(3), (0.002, 0.03, -0.001)):
        if other == "plane":
            _on_plane(mujoco, mm, d, seed, depth + margin)
        else:
            _touching(mujoco, mm, d, seed, depth)
        with warnings.catch_warnings():
            warnings.simplefilter("error")                      # no pair left out
            ref, ker = collide_at(model, d), collide_at(model, d, "kernel")
        assert ker.unsupported == ref.unsupported == ()
        np.testing.assert_array_equal(ker.geom, ref.geom)
        for field in ("dist", "pos", "frame", "friction", "solref", "solimp"):
            np.testing.assert_allclose(getattr(ker, field), getattr(ref, field), rtol=0,
                                       atol=TWIN_ATOL, err_msg=field)
        _assert_contacts_as_mujocos(ker, d, *atol)
        seen += len(ker.dist)
    assert seen >= 6


@pytest.mark.parametrize("other, margin", [('type="capsule" size="0.05 0.1"', 0.0),
                                           ('type="cylinder" size="0.1 0.15"', 0.0),
                                           ('type="box" size="0.1 0.1 0.1"', 0.01)])
def test_multiccd_mesh_pairs_take_the_compiled_stage(tmp_path, other, margin):
    """A capsule or cylinder on a mesh, or a box on it with margin (MuJoCo 4.0's multi-CCD,
    ``collision_multiccd.pyx``): the compiled stage, with the readable stage's contacts."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo gives the state")
    model, mm, d = _scene(tmp_path, other, margin)
    assert not col.reference_only(model) and compiled_forward(model) is not None
    _touching(mujoco, mm, d, 0, 1e-2)
    ref, ker = collide_at(model, d), collide_at(model, d, "kernel")
    assert len(ref.dist) == len(ker.dist) == d.ncon >= 1
    # the same routine on geom poses from the compiled kinematics (1e-14 apart)
    np.testing.assert_allclose(ker.pos, ref.pos, rtol=0, atol=1e-12)


def test_box_on_a_mesh_without_margin_takes_the_compiled_stage(tmp_path):
    """MuJoCo's one-pass multi-contact (``collision_multi``) has its compiled twin: a model
    with a box on a mesh without margin collides on the compiled stage
    (tests/test_collision_multi_kernel.py compares the two renderings)."""
    model, _, _ = _scene(tmp_path, 'type="box" size="0.1 0.1 0.1"')
    assert not col.reference_only(model) and compiled_forward(model) is not None


#: Kinds, sizes and margins of geom 1 on random states against a mesh (the routine twins;
#: a capsule, a cylinder and a box with margin take MuJoCo 4.0's multi-CCD,
#: collision_multiccd.pyx, also checked in tests/test_collision_multiccd_kernel.py).
ROUTINE_CASES = [("sphere", [0.1, 0, 0], 0.0), ("ellipsoid", [0.1, 0.2, 0.15], 0.0),
                 ("capsule", [0.05, 0.1, 0], 0.0), ("capsule", [0.05, 0.1, 0], 0.01),
                 ("cylinder", [0.08, 0.12, 0], 0.0), ("cylinder", [0.08, 0.12, 0], 0.01),
                 ("box", [0.1, 0.12, 0.08], 0.01)]


@pytest.mark.parametrize("mesh", ["cloud", "cube"])
@pytest.mark.parametrize("kind, size, margin", ROUTINE_CASES,
                         ids=[f"{c[0]}-{c[2]}" for c in ROUTINE_CASES])
def test_kernel_mesh_pair_equals_the_reference(kind, size, margin, mesh):
    """``mesh_pair`` on 30 random states within reach: the same outcome (contacts or none)
    and the same contacts to TWIN_ATOL.  The cube, axis-aligned in half of
    its states, puts ties in the support search (32 of 2549 searches); the single contact
    of these pairs does not depend on which tied vertex is taken (measured: a
    last-maximum rule on the reference side gives the same contacts), so the tie rule
    itself is not what these states check."""
    from rbd._kernels import collision_mesh

    points = _cloud() if mesh == "cloud" else _CUBE
    hull = rbd.model.mesh_hull.mesh_hull(points, points.mean(0), np.eye(3))
    shape = hull if kind == "mesh" else np.array(size, float)
    rbound = hull.rbound if kind == "mesh" else cvx.bounding_radius(kind, shape)
    rng = np.random.default_rng(7)
    seen = set()
    for _ in range(30):
        R1, R2 = Rotation.random(2, random_state=rng.integers(2**31)).as_matrix()
        if mesh == "cube" and rng.random() < 0.5:           # faces aligned with the axes
            R1, R2 = np.eye(3), np.eye(3)
        direction = rng.standard_normal(3)
        p2 = direction / np.linalg.norm(direction) * rng.uniform(0.05, 0.3)
        ref = cm.mesh_pair(kind, "mesh", np.zeros(3), R1, shape, rbound, p2, R2, hull,
                           hull.rbound, margin)
        ker = collision_mesh.mesh_pair(kind, "mesh", np.zeros(3), R1, shape, rbound, p2, R2,
                                       hull, hull.rbound, margin)
        assert len(ker[0]) == len(ref.dist)
        seen.add("contact" if len(ref.dist) else "none")
        for got, want in zip(ker, ref, strict=True):
            np.testing.assert_allclose(got, want, rtol=0, atol=TWIN_ATOL)
    assert {"none", "contact"} <= seen


def test_kernel_plane_mesh_equals_the_reference():
    """``plane_mesh`` on random poses of the cloud, the cube and a hexagonal prism (one to
    four corners, four of the prism's six) as the reference's."""
    from rbd._kernels import collision_mesh

    angle = np.arange(6) * np.pi / 3 + 0.1
    ring = np.c_[0.1 * np.cos(angle), 0.07 * np.sin(angle)]
    prism = np.r_[np.c_[ring, np.full(6, -0.05)], np.c_[ring, np.full(6, 0.05)]]
    rng = np.random.default_rng(2)
    counts = set()
    for points in (_cloud(), _CUBE, prism):
        hull = rbd.model.mesh_hull.mesh_hull(points, points.mean(0), np.eye(3))
        for k in range(20):
            R = np.eye(3) if k % 4 == 0 else Rotation.random(
                random_state=rng.integers(2**31)).as_matrix()
            pos = np.array([0.0, 0.0, rng.uniform(0.0, 0.1)])
            ref = cm.plane_mesh(np.zeros(3), np.eye(3), pos, R, hull, 0.02)
            ker = collision_mesh.plane_mesh(np.zeros(3), np.eye(3), pos, R, hull, 0.02)
            counts.add(len(ref.dist))
            for got, want in zip(ker, ref, strict=True):
                np.testing.assert_allclose(got, want, rtol=0, atol=TWIN_ATOL)
    assert {0, 1, 4} <= counts


def test_kernel_plane_mesh_keeps_the_references_four_of_a_large_cap():
    """Prisms of 5 to 12 corners nearly flat on the plane (the cap below it within the
    margin): the kernel's four corners (``polygon_quad``, MuJoCo 4.0's ``hull4``) are the
    reference's, in its order."""
    from rbd._kernels import collision_mesh

    rng = np.random.default_rng(5)
    for corners in (5, 6, 8, 12):
        angle = np.arange(corners) * 2 * np.pi / corners + 0.1
        ring = np.c_[0.1 * np.cos(angle), 0.07 * np.sin(angle)]
        points = np.r_[np.c_[ring, np.full(corners, -0.05)],
                       np.c_[ring, np.full(corners, 0.05)]]
        hull = rbd.model.mesh_hull.mesh_hull(points, points.mean(0), np.eye(3))
        for _ in range(5):
            R = Rotation.from_rotvec(0.02 * rng.standard_normal(3)).as_matrix()
            pos = np.array([0.0, 0.0, 0.045])
            ref = cm.plane_mesh(np.zeros(3), np.eye(3), pos, R, hull, 0.02)
            ker = collision_mesh.plane_mesh(np.zeros(3), np.eye(3), pos, R, hull, 0.02)
            assert len(ref.dist) == 4
            for got, want in zip(ker, ref, strict=True):
                np.testing.assert_allclose(got, want, rtol=0, atol=TWIN_ATOL)


#: (world geoms and the body's opening tag, vertices of the body's mesh or None for a
#: ball on a mesh in the world, duration): a mesh on the floor (plane–mesh), a ball on a
#: static mesh (sphere–mesh).
DROPS = {
    "mesh on a plane": ('<geom type="plane" size="0 0 1" euler="5 3 0"/>'
                        '<body pos="0 0 0.12" euler="20 40 10">', "mesh", 0.4),
    "ball on a mesh": ('<geom type="mesh" mesh="m" euler="10 5 0"/>'
                       '<body pos="0.01 0.005 0.2">', "sphere", 0.3),
}


@pytest.mark.parametrize("name", list(DROPS))
def test_compiled_mesh_drop_follows_mj_step(tmp_path, name):
    """A body dropped onto contact through a mesh, on the compiled contact step (the
    rollout of ``rbd/_kernels/contact.pyx`` without the GIL): MuJoCo's qpos path to the
    readable step's tolerance (ATOL_TRAJECTORY)."""
    pytest.importorskip("mujoco", reason="MuJoCo is the reference trajectory")
    from rbd.mjcf import from_mujoco_state, to_mujoco_state

    scene, body_geom, duration = DROPS[name]
    geom = ('<geom type="mesh" mesh="m"/>' if body_geom == "mesh"
            else '<geom type="sphere" size="0.03"/>')
    path = tmp_path / "drop.xml"
    path.write_text(f'<mujoco><option timestep="0.004"/><asset><mesh name="m" '
                    f'vertex="{_vertex_text(_cloud())}"/></asset><worldbody>{scene}'
                    f'<freejoint/>{geom}</body></worldbody></mujoco>')
    model, mm, d = rbd.testing.mujoco_pair(path, integrator="euler")
    assert compiled_forward(model) is not None
    q0, v0, _ = from_mujoco_state(model, d.qpos, d.qvel)
    steps = round(duration / mm.opt.timestep)
    traj = compiled_runs(model, q0[None], v0[None], steps, mm.opt.timestep)[0]
    expected = mujoco_qpos_path(mm, d, steps)
    np.testing.assert_allclose(to_mujoco_state(model, traj.q)[0], expected, rtol=0,
                               atol=ATOL_TRAJECTORY)
    assert traj.contact_count.max() >= 1 and d.ncon >= 1
