"""Visual and collision geometry on the model: records, builder, world poses, carried through
pickling, copies and re-rooting; URDF geometry against Pinocchio's GeometryModel."""

from __future__ import annotations

import os
import pickle
import warnings

import numpy as np
import pytest
from helpers import example_robot_data_dir

import rbd
from rbd.errors import InputError, ModelError
from rbd.model.geoms import Geom, load_mesh

# Poses compose a handful of rotations: round-off only.
ATOL_POSE = 1e-12


def _pendulum_with_geoms():
    model = rbd.models.double_pendulum()
    R = rbd.spatial.axis_angle_rotation(np.array([1.0, 0, 0]), 0.3)
    model.add_geom("rod1", "link1", "capsule", [0.05, 0.5], (R, [0, 0, -0.5]))
    model.add_geom("bob", "link2", "sphere", [0.1], (np.eye(3), [0, 0, -1]), rgba=[1, 0, 0, 1])
    model.add_geom("floor", None, "plane", [0, 0, 1])
    return model


def test_geom_record_fields_and_defaults():
    model = _pendulum_with_geoms()
    bob = model.geoms[1]
    assert (bob.name, bob.body, bob.kind) == ("bob", "link2", "sphere")
    np.testing.assert_array_equal(bob.size, [0.1, 0, 0])
    np.testing.assert_array_equal(bob.rgba, [1, 0, 0, 1])
    # MuJoCo's defaults where nothing is given (mjs_defaultGeom)
    assert (bob.contype, bob.conaffinity, bob.condim, bob.group, bob.priority) == (1, 1, 3, 0, 0)
    np.testing.assert_array_equal(bob.friction, [1, 0.005, 0.0001])
    np.testing.assert_array_equal(bob.solref, [0.02, 1])
    np.testing.assert_array_equal(bob.solimp, [0.9, 0.95, 0.001, 0.5, 2])
    assert (bob.solmix, bob.margin, bob.gap, bob.mesh) == (1.0, 0.0, 0.0, None)
    assert model.geoms[2].body is None


def test_geom_records_are_read_only():
    bob = _pendulum_with_geoms().geoms[1]
    with pytest.raises(AttributeError):
        bob.kind = "box"
    with pytest.raises(ValueError):
        bob.pose[0, 3] = 1.0


@pytest.mark.parametrize("kwargs, message", [
    ({"kind": "cylindre"}, "unknown kind 'cylindre'"),
    ({"size": [1, 2, 3, 4]}, "size must be finite numbers of shape (3,)"),
    ({"size": [np.nan]}, "size must be finite"),
    ({"pose": np.ones((4, 4))}, "pose must be a rigid transform"),
    ({"body": "nowhere"}, "unknown body of geom 'g' 'nowhere'"),
    ({"kind": "mesh"}, "a mesh geom needs its mesh file"),
])
def test_add_geom_refuses_bad_input_and_leaves_the_model_unchanged(kwargs, message):
    model = _pendulum_with_geoms()
    args = {"body": "link1", "kind": "box", "size": [1, 1, 1], "pose": None, **kwargs}
    with pytest.raises(ModelError) as info:
        model.add_geom("g", args.pop("body"), args.pop("kind"), args.pop("size"),
                       args.pop("pose"))
    assert message in str(info.value)
    assert [g.name for g in model.geoms] == ["rod1", "bob", "floor"]


def test_add_geom_refuses_a_duplicate_name():
    model = _pendulum_with_geoms()
    with pytest.raises(ModelError, match="duplicate geom name 'bob'"):
        model.add_geom("bob", "link1", "sphere", [0.1])


def test_geom_poses_compose_the_body_pose(backend, rng):
    model = _pendulum_with_geoms()
    q = rng.normal(size=(5, model.nq))
    W = rbd.geom_poses(model, q, backend=backend)
    assert W.shape == (5, 3, 4, 4)
    for k in range(5):
        T = rbd.forward_kinematics(model, q[k], backend=backend)
        for j, geom in enumerate(model.geoms):
            expected = geom.pose if geom.body is None else \
                T[model.body_index(geom.body)] @ geom.pose
            np.testing.assert_allclose(W[k, j], expected, atol=ATOL_POSE)
            np.testing.assert_allclose(rbd.geom_poses(model, q[k], backend=backend)[j],
                                       expected, atol=ATOL_POSE)
    # the bob hangs 2 m below the hinge at q = 0
    np.testing.assert_allclose(rbd.geom_poses(model, [0.0, 0.0])[1][:3, 3], [0, 0, -2],
                               atol=ATOL_POSE)


def test_geom_poses_refuse_a_bad_configuration():
    with pytest.raises(InputError):
        rbd.geom_poses(_pendulum_with_geoms(), [0.0])


def test_geoms_survive_pickling_copies_and_replace_joint():
    model = _pendulum_with_geoms()
    for other in (pickle.loads(pickle.dumps(model)), model.copy(),
                  model.replace_joint(model.joint_names[0], rbd.Revolute([1.0, 0, 0]))):
        assert [g.name for g in other.geoms] == [g.name for g in model.geoms]
        for a, b in zip(other.geoms, model.geoms, strict=True):
            np.testing.assert_array_equal(a.pose, b.pose)
            assert not a.pose.flags.writeable
    copy = model.copy()
    copy.add_geom("extra", "link1", "box", [1, 1, 1])
    assert len(model.geoms) == 3  # the copy's builder does not touch the original


def test_reroot_keeps_every_geom_in_the_world(rng):
    """A re-rooted model carries its geoms: same world poses in the same configuration."""
    from rbd import topology

    model = rbd.models.double_pendulum()
    model.add_geom("a", "link1", "box", [0.1, 0.2, 0.3], (np.eye(3), [0.1, 0.2, -0.3]))
    model.add_geom("b", "link2", "sphere", [0.1], (np.eye(3), [0, 0, -1]))
    q, v = rng.normal(size=model.nq), rng.normal(size=model.nv)
    tip = rbd.geom_poses(model, q)[1][:3, 3]  # the end of link2, in the world
    new, q_new, _ = topology.reroot(model, q, v, "link2", tip)
    before = {g.name: P for g, P in zip(model.geoms, rbd.geom_poses(model, q), strict=True)}
    after = {g.name: P for g, P in zip(new.geoms, rbd.geom_poses(new, q_new), strict=True)}
    for name in before:
        np.testing.assert_allclose(after[name], before[name], atol=1e-12)


def test_load_mesh_needs_trimesh_or_reads_the_file(tmp_path):
    path = tmp_path / "tet.obj"
    path.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n")
    geom = Geom("t", None, "mesh", np.zeros(3), np.eye(4), mesh=str(path),
                mesh_scale=np.array([2.0, 1.0, 1.0]))
    try:
        import trimesh  # noqa: F401
    except ImportError:
        with pytest.raises(InputError, match="trimesh"):
            load_mesh(geom)
        return
    vertices, faces = load_mesh(geom)
    assert faces.shape == (4, 3)
    np.testing.assert_array_equal(vertices.max(axis=0), [2, 1, 1])


def test_load_mesh_names_a_missing_file(tmp_path):
    pytest.importorskip("trimesh", reason="reading meshes needs trimesh")
    with pytest.raises(InputError, match="does not exist"):
        load_mesh(str(tmp_path / "nothing.stl"))



def test_a_mesh_file_is_parsed_once_per_version(tmp_path, monkeypatch):
    trimesh = pytest.importorskip("trimesh", reason="reading meshes needs trimesh")
    path = tmp_path / "tet.obj"
    tet = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n"
    path.write_text(tet)
    loads = []
    real_load = trimesh.load
    monkeypatch.setattr(trimesh, "load", lambda *a, **k: loads.append(a[0]) or real_load(*a, **k))
    first, faces = load_mesh(str(path), scale=[2.0, 1.0, 1.0])
    first[:] = -1.0                          # the caller's arrays: the cache is not touched
    faces[:] = 0
    second, faces_again = load_mesh(str(path))
    assert len(loads) == 1
    np.testing.assert_array_equal(second.max(axis=0), [1, 1, 1])
    assert faces_again.max() == 3
    path.write_text(tet.replace("v 0 0 1", "v 0 0 5"))      # edited: another size, read again
    edited, _ = load_mesh(str(path))
    assert len(loads) == 2
    assert edited[:, 2].max() == 5.0


# --- URDF ---------------------------------------------------------------------------------------
URDF = """<robot name="r">
  <material name="blue"><color rgba="0 0 1 1"/></material>
  <link name="base">
    <visual><geometry><box size="0.2 0.4 0.6"/></geometry><material name="blue"/></visual>
  </link>
  <link name="arm">
    <inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><origin xyz="0 0 0.5" rpy="0.1 0.2 0.3"/>
      <geometry><cylinder radius="0.05" length="1"/></geometry></visual>
    <collision><geometry><sphere radius="0.1"/></geometry></collision>
  </link>
  <link name="tool">
    <visual><origin xyz="0 0 0.1"/><geometry><mesh filename="package://pkg/meshes/tool.stl"
      scale="0.001 0.001 0.001"/></geometry><material name="m"><color rgba="1 0 0 1"/></material>
    </visual>
  </link>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
    <limit effort="1" velocity="1"/></joint>
  <joint name="weld" type="fixed"><parent link="arm"/><child link="tool"/>
    <origin xyz="0 0 1"/></joint>
</robot>"""


def test_urdf_shapes_in_mujocos_convention(tmp_path):
    (tmp_path / "pkg" / "meshes").mkdir(parents=True)
    (tmp_path / "pkg" / "meshes" / "tool.stl").write_bytes(b"")
    model = rbd.load_urdf(URDF, package_dirs=[str(tmp_path)])
    by_name = {g.name: g for g in model.geoms}
    box = by_name["base_visual0"]
    assert (box.body, box.kind, box.visual, box.collision) == (None, "box", True, False)
    np.testing.assert_array_equal(box.size, [0.1, 0.2, 0.3])
    np.testing.assert_array_equal(box.rgba, [0, 0, 1, 1])
    assert (box.contype, box.conaffinity) == (0, 0)  # visual geoms never collide
    cylinder = by_name["arm_visual0"]
    np.testing.assert_array_equal(cylinder.size, [0.05, 0.5, 0])
    sphere = by_name["arm_collision0"]
    assert (sphere.visual, sphere.collision, sphere.contype, sphere.conaffinity) == \
        (False, True, 1, 1)
    tool = by_name["tool_visual0"]
    # welded to "arm": the pose is composed into the body carrying it
    assert tool.body == "arm"
    np.testing.assert_allclose(tool.pose[:3, 3], [0, 0, 1.1])
    assert tool.mesh == str(tmp_path / "pkg" / "meshes" / "tool.stl")
    np.testing.assert_array_equal(tool.mesh_scale, [0.001] * 3)
    np.testing.assert_array_equal(tool.rgba, [1, 0, 0, 1])


def test_urdf_mesh_path_is_kept_when_not_found():
    model = rbd.load_urdf(URDF)
    tool = next(g for g in model.geoms if g.kind == "mesh")
    assert tool.mesh == "package://pkg/meshes/tool.stl"


def test_urdf_limit_without_bounds_is_zero_as_the_specification_says():
    model = rbd.load_urdf(URDF)
    assert (model.lower.tolist(), model.upper.tolist()) == ([0.0], [0.0])


def test_urdf_prolog_blank_lines_and_trailing_nuls_are_tolerated(tmp_path):
    path = tmp_path / "r.urdf"
    path.write_bytes(b"\n\n  " + b'<?xml version="1.0"?>\n' + URDF.encode() + b"\x00\x00\n")
    assert rbd.load_urdf(path).joint_names == ["j"]
    assert rbd.load_urdf(b"\n" + URDF.encode() + b"\x00").joint_names == ["j"]


def test_urdf_robot_without_a_name_loads_with_a_warning():
    with pytest.warns(RuntimeWarning, match="no 'name'") as record:
        model = rbd.load_urdf(URDF.replace('<robot name="r">', "<robot>"))
    assert model.name == "robot" and model.joint_names == ["j"]
    assert record[0].filename == __file__  # the warning points at the caller's line


def test_urdf_geoms_survive_to_urdf_round_trip():
    model = rbd.load_urdf(URDF)
    again = rbd.load_urdf(rbd.to_urdf(model))
    assert sorted((g.kind, g.visual) for g in again.geoms) == sorted(
        (g.kind, g.visual) for g in model.geoms)
    q = np.array([0.4])
    mine = {(g.kind, g.visual): P for g, P in zip(model.geoms, rbd.geom_poses(model, q),
                                                   strict=True)}
    theirs = {(g.kind, g.visual): P for g, P in zip(again.geoms, rbd.geom_poses(again, q),
                                                     strict=True)}
    for key, P in mine.items():
        np.testing.assert_allclose(theirs[key], P, atol=1e-12)


ROBOTS = ["ur_description/urdf/ur5_robot.urdf", "panda_description/urdf/panda.urdf",
          "talos_data/robots/talos_reduced.urdf", "solo_description/robots/solo12.urdf",
          "anymal_b_simple_description/robots/anymal.urdf"]


@pytest.mark.slow
@pytest.mark.parametrize("robot", ROBOTS)
def test_urdf_geometry_matches_pinocchio(robot, rng):
    pin = pytest.importorskip("pinocchio", reason="the cross-check needs PyPI 'pin'")
    from rbd import interop

    root = example_robot_data_dir()
    if root is None:
        pytest.skip("example-robot-data is not installed")
    path = root / robot
    dirs = [str(root), str(root.parent.parent)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        model = rbd.load_urdf(path, package_dirs=dirs, inertia="ignore")
    pin_model, collision, visual = pin.buildModelsFromUrdf(str(path), package_dirs=dirs)
    pin_data = pin_model.createData()
    tree = model.full_model() if model.mimic else model
    to_pin = interop.pinocchio_map(tree, pin_model)
    for _ in range(3):
        q = rbd.random_configuration(tree, rng)
        W = rbd.geom_poses(tree, q)
        for geometry, is_visual in ((visual, True), (collision, False)):
            data = pin.GeometryData(geometry)
            pin.updateGeometryPlacements(pin_model, pin_data, geometry, data, to_pin.to_q(q))
            ours = {g.name.replace("_visual", "_").replace("_collision", "_"): k
                    for k, g in enumerate(model.geoms) if g.visual == is_visual}
            assert len(ours) == len(geometry.geometryObjects)
            for obj, placement in zip(geometry.geometryObjects, data.oMg, strict=True):
                k = ours[obj.name]
                np.testing.assert_allclose(W[k], placement.homogeneous, atol=ATOL_POSE)
                if model.geoms[k].kind == "mesh":
                    assert os.path.samefile(model.geoms[k].mesh, obj.meshPath)


# --- MJCF meshes: opened only when a moving body's inertia needs them ---------------------------
_TETRA = [((0, 0, 0), (0, 1, 0), (1, 0, 0)), ((0, 0, 0), (1, 0, 0), (0, 0, 1)),
          ((0, 0, 0), (0, 0, 1), (0, 1, 0)), ((1, 0, 0), (0, 1, 0), (0, 0, 1))]


def _binary_stl(triangles) -> bytes:
    """A binary STL (MuJoCo reads only these): header, count, then normal, corners, 0."""
    import struct

    out = bytearray(b"rbd test tetrahedron".ljust(80) + struct.pack("<I", len(triangles)))
    for corners in triangles:
        out += struct.pack("<3f", 0, 0, 0)
        for corner in corners:
            out += struct.pack("<3f", *corner)
        out += struct.pack("<H", 0)
    return bytes(out)


def _mesh_model(tmp_path, body: str) -> str:
    (tmp_path / "t.stl").write_bytes(_binary_stl(_TETRA))
    return (f"<mujoco><asset><mesh name='t' file='t.stl' scale='0.2 0.2 0.2'/></asset>"
            f"<worldbody>{body}</worldbody></mujoco>")


def _without_trimesh(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "trimesh", None)  # import trimesh -> ImportError


def test_a_world_welded_mesh_body_never_opens_its_mesh(tmp_path, monkeypatch):
    _without_trimesh(monkeypatch)
    xml = _mesh_model(tmp_path, "<body name='base'><geom type='mesh' mesh='t'/>"
                                "<body name='arm'><joint/><geom size='0.1'/></body></body>")
    path = tmp_path / "m.xml"
    path.write_text(xml)
    model = rbd.load_mjcf(path)
    assert model.body_names == ["arm"]
    base = next(g for g in model.geoms if g.kind == "mesh")
    assert base.body is None and base.mesh == str(tmp_path / "t.stl")


def test_a_moving_mesh_body_without_trimesh_is_a_clear_error(tmp_path, monkeypatch):
    _without_trimesh(monkeypatch)
    path = tmp_path / "m.xml"
    path.write_text(_mesh_model(tmp_path, "<body name='b'><freejoint/>"
                                          "<geom name='shell' type='mesh' mesh='t'/></body>"))
    with pytest.raises(rbd.MJCFError, match=r"<geom name='shell'> of body 'b'.*trimesh"):
        rbd.load_mjcf(path)


def test_a_moving_mesh_body_has_mujocos_inertia(tmp_path):
    pytest.importorskip("trimesh", reason="reading STL needs trimesh")
    mujoco = pytest.importorskip("mujoco", reason="the MuJoCo cross-checks need PyPI 'mujoco'")
    path = tmp_path / "m.xml"
    path.write_text(_mesh_model(tmp_path, "<body name='b'><freejoint/>"
                                          "<geom type='mesh' mesh='t' pos='0.1 0 0' "
                                          "euler='10 20 30' density='500'/></body>"))
    model = rbd.load_mjcf(path)
    m = mujoco.MjModel.from_xml_path(str(path))
    body = model.bodies[0]
    assert body.mass == pytest.approx(m.body_mass[1], rel=1e-12)
    np.testing.assert_allclose(body.com, m.body_ipos[1], atol=1e-12)
    w, x, y, z = m.body_iquat[1]
    R = rbd.spatial.quat_to_rot(np.array([x, y, z, w]))
    I = R @ np.diag(m.body_inertia[1]) @ R.T
    np.testing.assert_allclose(body.I_com, I, atol=1e-12 * np.abs(I).max())


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_fifo_as_urdf_is_refused_at_once(tmp_path):
    fifo = tmp_path / "robot.urdf"
    os.mkfifo(fifo)
    with pytest.raises(rbd.URDFError, match="not a regular file"):
        rbd.load_urdf(fifo)


def test_a_procedural_mesh_is_a_geom_and_refused_only_for_inertia():
    asset = "<asset><mesh name='s' builtin='sphere' params='2'/></asset>"
    welded = f"<mujoco>{asset}<worldbody><body><geom type='mesh' mesh='s'/></body>"
    model = rbd.load_mjcf(welded + "</worldbody></mujoco>")
    assert model.geoms[0].mesh == "<builtin s>"
    moving = f"<mujoco>{asset}<worldbody><body><joint/><geom type='mesh' mesh='s'/></body>"
    with pytest.raises(rbd.MJCFError, match="procedural mesh 's'"):
        rbd.load_mjcf(moving + "</worldbody></mujoco>")
