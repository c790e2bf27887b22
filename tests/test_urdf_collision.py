"""URDF ``<collision>`` meshes collide through their convex hulls, as MuJoCo's URDF reader
makes them (issue 21: a URDF robot given a floor stands on it).

The peer is MuJoCo reading the same URDF (its own URDF reader: fixed links fused, the
default ``fusestatic``), with the mesh paths written out and a free joint and a floor added
through ``MjSpec``, as ``model.add_geom`` adds rbd's floor.
"""

from __future__ import annotations

import warnings
from collections import defaultdict

import numpy as np
import pytest
from helpers import example_robot_data_dir

import rbd

ROBOTS = example_robot_data_dir()
SOLO12 = "solo_description/robots/solo12.urdf"

_BOX_URDF = """<robot name="r"><link name="base"/>
  <link name="arm"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01"
    ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><geometry><mesh filename="{visual}"/></geometry></visual>
    <collision><geometry><mesh filename="{collision}" scale="2 2 2"/></geometry></collision>
  </link>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>"""

#: A closed cube of side 0.1 as an ASCII STL (12 outward triangles).
_CUBE = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                  [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], float) * 0.1
_CUBE_FACES = [(0, 2, 1), (0, 3, 2), (4, 5, 6), (4, 6, 7), (0, 1, 5), (0, 5, 4),
               (1, 2, 6), (1, 6, 5), (2, 3, 7), (2, 7, 6), (3, 0, 4), (3, 4, 7)]


def _write_cube(path):
    lines = ["solid cube"]
    for face in _CUBE_FACES:
        a, b, c = _CUBE[list(face)]
        n = np.cross(b - a, c - a)
        lines.append(f"facet normal {' '.join(map(str, n / np.linalg.norm(n)))}")
        lines.append("outer loop")
        lines += [f"vertex {x} {y} {z}" for x, y, z in (a, b, c)]
        lines += ["endloop", "endfacet"]
    path.write_text("\n".join(lines + ["endsolid cube"]))


@pytest.fixture
def package(tmp_path):
    """A package tree ``<tmp>/share/pkg/{meshes/cube.stl, urdf/}`` (no package_dirs given)."""
    pytest.importorskip("trimesh", reason="URDF meshes are read through trimesh")
    meshes = tmp_path / "share" / "pkg" / "meshes"
    meshes.mkdir(parents=True)
    (tmp_path / "share" / "pkg" / "urdf").mkdir()
    _write_cube(meshes / "cube.stl")
    return tmp_path / "share" / "pkg"


def test_a_package_mesh_is_found_above_the_urdf_and_hulled(package):
    urdf = package / "urdf" / "r.urdf"
    urdf.write_text(_BOX_URDF.format(visual="package://pkg/meshes/cube.stl",
                                     collision="package://pkg/meshes/cube.stl"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = rbd.load_urdf(urdf)
    visual, collision = model.geoms
    assert visual.mesh == collision.mesh == str(package / "meshes" / "cube.stl")
    assert visual.hull is None                       # visual meshes are never opened
    hull = collision.hull
    assert len(hull.vertices) == 8 and len(hull.polygons) == 6
    # the scaled cube's corners, from the file's and the scale's numbers: side 0.2
    world = hull.vertices @ hull.frame[:3, :3].T + hull.frame[:3, 3]
    np.testing.assert_allclose(np.sort(world, axis=0), np.sort(2 * _CUBE, axis=0), atol=1e-7)
    unopened = rbd.load_urdf(urdf, collision_meshes=False)
    assert unopened.geoms[1].hull is None


def test_the_arm_hits_a_floor_through_its_hull(package):
    """The cube (0.2 m, its corner at the joint) turned about z touches a floor at 0.1 m
    above the joint's plane: four contacts, at the bottom face's corners, distance -0.1."""
    urdf = package / "urdf" / "r.urdf"
    urdf.write_text(_BOX_URDF.format(visual="package://pkg/meshes/cube.stl",
                                     collision="package://pkg/meshes/cube.stl"))
    model = rbd.load_urdf(urdf)
    model.add_geom("floor", None, "plane", size=(0, 0, 1), pose=(np.eye(3), [0, 0, 0.1]))
    contacts = rbd.collide(model, np.array([0.3]))
    assert len(contacts) == 4
    np.testing.assert_allclose(contacts.dist, -0.1, atol=1e-7)   # float32 vertices
    np.testing.assert_allclose(contacts.frame[:, 0], np.tile([0, 0, 1.0], (4, 1)), atol=1e-12)


def test_a_missing_collision_mesh_is_named_in_one_warning(package):
    urdf = package / "urdf" / "r.urdf"
    urdf.write_text(_BOX_URDF.format(visual="package://pkg/meshes/gone.stl",
                                     collision="package://pkg/meshes/gone.stl"))
    with pytest.warns(RuntimeWarning, match=r"1 collision mesh\(es\) will collide with "
                      r"nothing \(file not found: give load_urdf its package_dirs\): "
                      r"link 'arm' <collision>"):
        model = rbd.load_urdf(urdf)
    assert model.geoms[1].hull is None


def test_an_unreadable_collision_mesh_is_refused_with_its_link(package):
    (package / "meshes" / "flat.stl").write_text(
        "solid f\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\n"
        "endloop\nendfacet\nendsolid f\n")
    urdf = package / "urdf" / "r.urdf"
    urdf.write_text(_BOX_URDF.format(visual="package://pkg/meshes/cube.stl",
                                     collision="package://pkg/meshes/flat.stl"))
    with pytest.raises(rbd.URDFError, match=r"link 'arm' <collision>: mesh 'flat'"):
        rbd.load_urdf(urdf)


# --- against MuJoCo's reading of a real robot ---------------------------------------------------
def _mujoco_solo(excluded: tuple):
    """MuJoCo's model of solo12 (its URDF reader) on a floor, Euler, Newton tightened."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo reads the URDF as the reference")
    if ROBOTS is None:
        pytest.skip("the example-robot-data package is not installed")
    pytest.importorskip("trimesh", reason="URDF meshes are read through trimesh")
    spec = rbd.testing.mujoco_urdf_spec(ROBOTS / SOLO12, ROBOTS.parent.parent)
    spec.bodies[1].add_freejoint()
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1])
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_EULER
    spec.option.iterations, spec.option.tolerance = 100, 1e-12
    for a, b in excluded:
        spec.add_exclude(bodyname1=a, bodyname2=b)
    mm = spec.compile()
    return mujoco, mm, mujoco.MjData(mm)


def _rbd_solo(excluded: tuple):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        model = rbd.load_urdf(ROBOTS / SOLO12, floating_base=True)
    model.add_geom("floor", None, "plane", size=(0, 0, 1))
    model.mujoco_options = {"iterations": 100, "tolerance": 1e-12}
    model.contact_excludes = excluded
    return model


def _by_bodies(pairs, positions, distances) -> dict:
    out = defaultdict(list)
    for pair, p, d in zip(pairs, positions, distances, strict=True):
        out[tuple(sorted(pair))].append((np.asarray(p), float(d)))
    return out


def _mujoco_body(mm, geom: int) -> str:
    body = mm.body(mm.geom_bodyid[geom]).name
    return body or "world"


#: The hips: at solo12's neutral pose each upper leg's mesh overlaps the base's by 3.5 mm.
HIPS = tuple(("base_link", f"{leg}_UPPER_LEG") for leg in ("FL", "FR", "HL", "HR"))


@pytest.mark.slow
def test_solo12_on_a_floor_follows_mujoco():
    """Dropped 0.4 m on a floor, 0.3 s in MuJoCo, then 0.2 s on both sides from that state.

    The feet's contacts (plane–mesh: hull vertices in float32, as MuJoCo keeps them) equal
    MuJoCo's to 1e-9 (measured 3e-12 on positions, 3e-13 on distances); the trajectories
    stay within 1e-6 (measured 5e-9), the issue's bound for a 0.2 s run.  The hips'
    mesh–mesh overlap is excluded on both sides (see the next test)."""
    from rbd.mjcf import from_mujoco_state

    mujoco, mm, d = _mujoco_solo(HIPS)
    model = _rbd_solo(HIPS)
    d.qpos[2] = 0.4
    for _ in range(150):
        mujoco.mj_step(mm, d)
    mujoco.mj_forward(mm, d)
    q0, v0, _ = from_mujoco_state(model, d.qpos, d.qvel)
    contacts = rbd.collide(model, q0)
    assert d.ncon == len(contacts) == 16                     # four corners of four feet
    ours = _by_bodies([[model.geoms[g].body or "world" for g in pair] for pair in contacts.geom],
                      contacts.pos, contacts.dist)
    theirs = _by_bodies([[_mujoco_body(mm, c.geom1), _mujoco_body(mm, c.geom2)]
                         for c in d.contact], d.contact.pos, d.contact.dist)
    assert ours.keys() == theirs.keys()
    for pair, found in ours.items():
        expected = sorted(theirs[pair], key=lambda x: tuple(x[0]))
        found = sorted(found, key=lambda x: tuple(x[0]))
        np.testing.assert_allclose([p for p, _ in found], [p for p, _ in expected], atol=1e-9)
        np.testing.assert_allclose([x for _, x in found], [x for _, x in expected], atol=1e-9)
    np.testing.assert_allclose(contacts.frame[:, 0], d.contact.frame[:, :3], atol=1e-12)
    steps = 100
    expected = [d.qpos.copy()]
    for _ in range(steps):
        mujoco.mj_step(mm, d)
        expected.append(d.qpos.copy())
    traj = rbd.simulate(model, q0, v0, steps * mm.opt.timestep, mm.opt.timestep,
                        integrator="euler")
    path = np.array([from_mujoco_state(model, x)[0] for x in expected])
    np.testing.assert_allclose(traj.q, path, rtol=0, atol=1e-6)


def test_solo12_self_collisions_are_mujocos_pairs():
    """At the neutral pose the base's mesh overlaps each upper leg's: rbd finds the pairs
    and the four contacts of each that MuJoCo finds, about as deep.

    Not equal: MuJoCo 4.0 clips the two hulls' faces its own way (the multi-contact of its
    ``multiccd``), rbd as the 3.12 source does for two polytopes without margin, from the
    face EPA ends on (:mod:`rbd.constraints.collision_multi`); on these hulls of 150-500
    vertices the normals part by 1e-3 rad and the distances by up to 1.8e-4 m, whatever
    ``ccd_iterations`` and ``ccd_tolerance`` (tried up to 1000 and 1e-10 on both sides).
    The depth of each overlap is bounded here by 2e-4 m of MuJoCo's, 6 % of the 3.5 mm."""
    mujoco, mm, d = _mujoco_solo(())
    model = _rbd_solo(())
    d.qpos[2] = 0.4
    mujoco.mj_forward(mm, d)
    from rbd.mjcf import from_mujoco_state

    q0, _, _ = from_mujoco_state(model, d.qpos, d.qvel)
    contacts = rbd.collide(model, q0)
    ours = _by_bodies([[model.geoms[g].body or "world" for g in pair] for pair in contacts.geom],
                      contacts.pos, contacts.dist)
    theirs = _by_bodies([[_mujoco_body(mm, c.geom1), _mujoco_body(mm, c.geom2)]
                         for c in d.contact], d.contact.pos, d.contact.dist)
    assert ours.keys() == theirs.keys() == {tuple(sorted(p)) for p in HIPS}
    for pair, found in ours.items():
        assert len(found) == len(theirs[pair]) == 4
        deepest = min(x for _, x in found), min(x for _, x in theirs[pair])
        assert deepest[1] < -3e-3
        assert abs(deepest[0] - deepest[1]) < 2e-4


@pytest.mark.slow
@pytest.mark.single_pass         # hulls are built by numpy and scipy on both paths alike
def test_every_collision_mesh_of_example_robot_data_gets_a_hull():
    """Each of the shipped robots' STL, OBJ and DAE collision meshes is found (package://
    paths, no package_dirs) and hulled; the robots load as they did without meshes."""
    if ROBOTS is None:
        pytest.skip("the example-robot-data package is not installed")
    pytest.importorskip("trimesh", reason="URDF meshes are read through trimesh")
    pytest.importorskip("collada", reason="the DAE meshes are read through pycollada")
    hulls = 0
    for path in sorted(ROBOTS.rglob("*.urdf")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)     # massless bodies, repairs
            warnings.filterwarnings("error", message=".*collide with nothing")
            try:
                model = rbd.load_urdf(path, inertia="ignore")
            except rbd.URDFError as exc:          # mimic joints naming an unknown joint
                assert "<mimic> names an unknown joint" in str(exc), path
                continue
        meshes = [g for g in model.geoms if g.collision and g.kind == "mesh"]
        assert all(g.hull is not None and len(g.hull.vertices) >= 4 for g in meshes), path
        hulls += len(meshes)
    # 638 STL, 203 DAE and 109 OBJ <collision> elements; one robot refused for its mimics
    assert hulls >= 900
