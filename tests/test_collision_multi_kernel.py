"""MuJoCo's one-pass multi-contact of two polytopes compiled (``rbd/_kernels/collision_multi.pyx``
on ``collision_gjk.pyx`` / ``collision_epa.pyx`` / ``collision_convex.pyx``) against the
readable routines (``rbd.constraints.collision_multi``, ``collision_mesh.mesh_pair``), the
``multiccd``-disabled convex pairs likewise, and the compiled contact step of a mesh resting
on a box or on a mesh against ``mj_step``.

The readable routines' agreement with MuJoCo's contacts is tested in
``tests/test_collision_mesh.py`` (both backends); here the kernel twin is held to the
readable text.  These tests need the kernels (``require_kernels``).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from helpers import collide_at, mujoco_qpos_path
from scipy.spatial.transform import Rotation
from test_collision_mesh import (
    _CUBE,
    _PRISM,
    ATOL_TRAJECTORY,
    EPA_DIST_ATOL,
    EPA_NORMAL_ATOL,
    EPA_POS_ATOL,
    _cloud,
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

#: Kernel against reference: the same statements in the same order on the same doubles.
#: Measured worst difference over the 4 × 3 × 2 × 200 = 4,800 random states of
#: test_kernel_polytope_pair_equals_the_reference: 0 (every contact bit for bit); the bound
#: leaves room for a compiler that contracts a product and a sum into one rounding.
TWIN_ATOL = 1e-12

#: Geom 1 against a mesh: a box, or a mesh (its points) as the first geom.
FIRST = {"box": ("box", [0.1, 0.12, 0.08]), "cube": ("mesh", _CUBE),
         "prism": ("mesh", _PRISM), "cloud": ("mesh", _cloud(5))}
#: The second geom's mesh.
SECOND = {"cube": _CUBE, "prism": _PRISM, "cloud": _cloud()}


def _hull(points):
    return rbd.model.mesh_hull.mesh_hull(points, points.mean(0), np.eye(3))


@pytest.mark.slow
@pytest.mark.parametrize("multiccd", [True, False], ids=["multiccd", "no multiccd"])
@pytest.mark.parametrize("second", list(SECOND))
@pytest.mark.parametrize("first", list(FIRST))
def test_kernel_polytope_pair_equals_the_reference(first, second, multiccd):
    """``mesh_pair`` of a box or a mesh on a mesh without margin, on 200 random states
    within reach (half of them nearly flat on each other, turned by up to ~0.15 rad): the
    same number of contacts and the same contacts (TWIN_ATOL).  With multi-CCD the states
    give one to four contacts (faces and edges clipped); without it, GJK/EPA's one."""
    from rbd._kernels import collision_mesh

    kind, points = FIRST[first]
    hull = _hull(SECOND[second])
    shape = _hull(points) if kind == "mesh" else np.array(points, float)
    rbound = shape.rbound if kind == "mesh" else cvx.bounding_radius(kind, shape)
    rng = np.random.default_rng(11)
    counts = set()
    for _ in range(200):
        R1, R2 = Rotation.random(2, random_state=rng.integers(2**31)).as_matrix()
        if rng.random() < 0.5:                          # nearly flat on each other
            R1 = Rotation.from_rotvec(rng.normal(size=3) * 0.05).as_matrix()
            R2 = np.eye(3)
        direction = rng.standard_normal(3)
        p2 = direction / np.linalg.norm(direction) * rng.uniform(0.05, 0.25)
        args = (kind, "mesh", np.zeros(3), R1, shape, rbound, p2, R2, hull, hull.rbound, 0.0,
                multiccd)
        ref = cm.mesh_pair(*args)
        ker = collision_mesh.mesh_pair(*args)
        assert ker is not None and len(ker[0]) == len(ref.dist)
        counts.add(len(ref.dist))
        for got, want in zip(ker, ref, strict=True):
            np.testing.assert_allclose(got, want, rtol=0, atol=TWIN_ATOL)
    assert counts >= ({0, 1, 2, 4} if multiccd else {0, 1})
    assert multiccd or counts == {0, 1}


_RING = np.arange(32) * 2 * np.pi / 32
_RING = np.c_[0.12 * np.cos(_RING), 0.12 * np.sin(_RING)]
#: Meshes of many-sided faces and vertices on many faces: a 32-sided prism (its caps clip to
#: polygons of more than four points, reduced by polygon_quad) and a cone (32 faces at its
#: apex).
MANY_SIDED = {"cylinder": np.r_[np.c_[_RING, np.full(32, -0.08)], np.c_[_RING, np.full(32, 0.08)]],
              "cone": np.r_[np.c_[_RING, np.full(32, -0.08)], [[0.0, 0.0, 0.1]]]}


@pytest.mark.slow
@pytest.mark.parametrize("second", list(MANY_SIDED))
@pytest.mark.parametrize("first", ["box", "cylinder", "cone"])
def test_kernel_many_sided_polytope_pair_equals_the_reference(first, second):
    """As :func:`test_kernel_polytope_pair_equals_the_reference` with multi-CCD, on meshes
    whose faces have 32 corners or whose apex is on 32 faces (the kernel's scratch lists
    grow past their first size): 100 random states, the same contacts (measured: bit for
    bit over 300 states per pair)."""
    from rbd._kernels import collision_mesh

    hull = _hull(MANY_SIDED[second])
    shape = np.array([0.1, 0.12, 0.08]) if first == "box" else _hull(MANY_SIDED[first])
    kind = "box" if first == "box" else "mesh"
    rbound = cvx.bounding_radius("box", shape) if first == "box" else shape.rbound
    rng = np.random.default_rng(3)
    counts = set()
    for _ in range(100):
        R1, R2 = Rotation.random(2, random_state=rng.integers(2**31)).as_matrix()
        if rng.random() < 0.5:                          # nearly flat on each other
            R1 = Rotation.from_rotvec(rng.normal(size=3) * 0.03).as_matrix()
            R2 = np.eye(3)
        direction = rng.standard_normal(3)
        p2 = direction / np.linalg.norm(direction) * rng.uniform(0.05, 0.25)
        args = (kind, "mesh", np.zeros(3), R1, shape, rbound, p2, R2, hull, hull.rbound, 0.0)
        ref, ker = cm.mesh_pair(*args), collision_mesh.mesh_pair(*args)
        assert ker is not None and len(ker[0]) == len(ref.dist)
        counts.add(len(ref.dist))
        for got, want in zip(ker, ref, strict=True):
            np.testing.assert_allclose(got, want, rtol=0, atol=TWIN_ATOL)
    assert {0, 2, 4} <= counts


@pytest.mark.parametrize("kind, size", [("capsule", [0.05, 0.1, 0]),
                                        ("cylinder", [0.1, 0.15, 0]),
                                        ("ellipsoid", [0.1, 0.2, 0.15])])
def test_kernel_smooth_mesh_pair_without_multiccd_equals_the_reference(kind, size):
    """Without multi-CCD a capsule, cylinder or ellipsoid on a mesh gives GJK/EPA's one
    contact on both renderings, the same to TWIN_ATOL on 100 random states (measured: bit
    for bit)."""
    from rbd._kernels import collision_mesh

    hull = _hull(_cloud())
    shape = np.array(size, float)
    rng = np.random.default_rng(5)
    touching = 0
    for _ in range(100):
        R1, R2 = Rotation.random(2, random_state=rng.integers(2**31)).as_matrix()
        direction = rng.standard_normal(3)
        p2 = direction / np.linalg.norm(direction) * rng.uniform(0.05, 0.25)
        args = (kind, "mesh", np.zeros(3), R1, shape, cvx.bounding_radius(kind, shape), p2,
                R2, hull, hull.rbound, 0.0, False)
        ref, ker = cm.mesh_pair(*args), collision_mesh.mesh_pair(*args)
        assert ker is not None and len(ker[0]) == len(ref.dist) <= 1
        touching += len(ref.dist)
        for got, want in zip(ker, ref, strict=True):
            np.testing.assert_allclose(got, want, rtol=0, atol=TWIN_ATOL)
    assert touching >= 20


#: The stage's geom poses are the readable stage's to rounding (4×4 NumPy products against
#: sequential sums in C); GJK/EPA on hull features keeps that rounding, EPA on a round side
#: (cylinder, ellipsoid) stops within ccd_tolerance and may turn it into EPA's tolerance
#: (measured over the 12 states below: cylinder 3.3e-7 distance, 1.6e-4 point, 5.6e-3
#: normal; ellipsoid 1e-13; the polytope and capsule scenes 1.7e-14):
#: tests/test_collision_mesh.py's EPA bounds.
EPA_ATOL = (EPA_DIST_ATOL, EPA_POS_ATOL, EPA_NORMAL_ATOL)
NOFLAG = '<flag multiccd="disable"/>'
#: Scenes of tests/test_collision_mesh.py whose pair was held to the readable stage before
#: its compiled twin: (other geom, <option> flags, tolerances of dist, pos, frame).
SCENES = {
    "box on a mesh": ('type="box" size="0.1 0.1 0.1"', "", (TWIN_ATOL,) * 3),
    "mesh on a mesh": ('type="mesh" mesh="m"', "", (TWIN_ATOL,) * 3),
    "box, no multiccd": ('type="box" size="0.1 0.1 0.1"', NOFLAG, (TWIN_ATOL,) * 3),
    "capsule, no multiccd": ('type="capsule" size="0.05 0.1"', NOFLAG, (TWIN_ATOL,) * 3),
    "cylinder, no multiccd": ('type="cylinder" size="0.1 0.15"', NOFLAG, EPA_ATOL),
    "ellipsoid, no multiccd": ('type="ellipsoid" size="0.1 0.2 0.15"', NOFLAG, EPA_ATOL),
}


@pytest.mark.parametrize("name", list(SCENES))
def test_compiled_stage_collides_polytope_pairs_as_the_reference(tmp_path, name):
    """The model takes the compiled stage and forward pass; at states touching, deep and 1
    mm apart its contacts are the readable stage's (the scene's tolerances, the same geoms,
    no pair left out)."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo gives the states")
    other, flags, (dist_atol, pos_atol, frame_atol) = SCENES[name]
    model, mm, d = _scene(tmp_path, other, flags=flags)
    assert not col.reference_only(model) and compiled_forward(model) is not None
    seen = set()
    for seed, depth in itertools.product(range(4), (0.002, 0.03, -0.001)):
        _touching(mujoco, mm, d, seed, depth)
        ref, ker = collide_at(model, d), collide_at(model, d, "kernel")
        assert ker.unsupported == ref.unsupported == ()
        np.testing.assert_array_equal(ker.geom, ref.geom)
        for field, atol in (("dist", dist_atol), ("pos", pos_atol), ("frame", frame_atol),
                            ("friction", 0), ("solref", 0), ("solimp", 0)):
            np.testing.assert_allclose(getattr(ker, field), getattr(ref, field), rtol=0,
                                       atol=atol, err_msg=field)
        seen.add(len(ker.dist))
    assert max(seen) >= 1 and 0 in seen


def test_flat_cube_contacts_are_mujocos_on_the_compiled_stage(tmp_path):
    """A cube mesh flat on a box: the compiled stage gives MuJoCo's four clipped contacts
    (positions and depths to rounding, MuJoCo's order)."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    path = tmp_path / "flat.xml"
    path.write_text(f'<mujoco><asset><mesh name="m" vertex="{_vertex_text(_CUBE)}"/></asset>'
                    '<worldbody><geom type="box" size="0.3 0.3 0.05" pos="0 0 -0.05"/>'
                    '<body pos="0.02 -0.01 0.098" euler="0.2 -0.1 20"><freejoint/>'
                    '<geom type="mesh" mesh="m"/></body></worldbody></mujoco>')
    model, mm, d = rbd.testing.mujoco_pair(path)
    mujoco.mj_forward(mm, d)
    found = collide_at(model, d, "kernel")
    assert len(found.dist) == d.ncon == 4
    # single-precision mesh vertices in the same frame: rounding of the clipping (1e-10,
    # tests/test_collision_mesh.py's CLIP_ATOL)
    np.testing.assert_allclose(found.pos, d.contact.pos, rtol=0, atol=1e-10)
    np.testing.assert_allclose(found.dist, d.contact.dist, rtol=0, atol=1e-10)


#: (world geom, the body's opening tag, body mesh vertices, duration): a cube mesh dropped
#: flat onto a box (box–mesh, face on face), onto a static flat cuboid mesh (mesh–mesh), and
#: onto the box without multi-CCD.  (A hexagonal prism's cap clipped on a face gives six
#: points, of which MuJoCo keeps four by a rule rbd reproduces only in part: the readable
#: module's notes; its drop leaves MuJoCo's path at the first touch.)
DROPS = {
    "mesh on a box": ('<geom type="box" size="0.3 0.3 0.05" pos="0 0 -0.05" euler="3 2 0"/>',
                      '<body pos="0.02 -0.01 0.13" euler="4 -3 20">', _CUBE, "", 0.4),
    "mesh on a mesh": ('<geom type="mesh" mesh="base" pos="0 0 -0.1" euler="2 3 0"/>',
                       '<body pos="0.01 0.02 0.13" euler="3 -2 10">', _CUBE, "", 0.4),
    "mesh on a box, no multiccd": (
        '<geom type="box" size="0.3 0.3 0.05" pos="0 0 -0.05" euler="3 2 0"/>',
        '<body pos="0.02 -0.01 0.13" euler="4 -3 20">', _CUBE, '<flag multiccd="disable"/>',
        0.3),
}


@pytest.mark.parametrize("name", list(DROPS))
def test_compiled_polytope_drop_follows_mj_step(tmp_path, name):
    """A mesh dropped onto a box or a mesh and coming to rest on it, on the compiled contact
    step (``rbd/_kernels/contact.pyx``): MuJoCo's qpos path to the readable step's
    tolerance (ATOL_TRAJECTORY, tests/test_collision_mesh.py), with several contacts at
    once where multi-CCD is on."""
    pytest.importorskip("mujoco", reason="MuJoCo is the reference trajectory")
    from rbd.mjcf import from_mujoco_state, to_mujoco_state

    world, body, points, flags, duration = DROPS[name]
    path = tmp_path / "drop.xml"
    path.write_text(f'<mujoco><option timestep="0.004">{flags}</option><asset>'
                    f'<mesh name="m" vertex="{_vertex_text(points)}"/>'
                    f'<mesh name="base" vertex="{_vertex_text(_CUBE * [2, 2, 1])}"/></asset>'
                    f'<worldbody>{world}{body}<freejoint/><geom type="mesh" mesh="m"/></body>'
                    '</worldbody></mujoco>')
    model, mm, d = rbd.testing.mujoco_pair(path, integrator="euler")
    assert not col.reference_only(model) and compiled_forward(model) is not None
    q0, v0, _ = from_mujoco_state(model, d.qpos, d.qvel)
    steps = round(duration / mm.opt.timestep)
    traj = compiled_runs(model, q0[None], v0[None], steps, mm.opt.timestep)[0]
    expected = mujoco_qpos_path(mm, d, steps)
    np.testing.assert_allclose(to_mujoco_state(model, traj.q)[0], expected, rtol=0,
                               atol=ATOL_TRAJECTORY)
    assert traj.contact_count.max() >= (1 if flags else 3) and d.ncon >= 1
