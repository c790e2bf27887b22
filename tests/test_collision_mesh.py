"""Mesh geoms in the collision stage (``rbd.constraints.collision_mesh``) against MuJoCo 4.0."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from helpers import collide_at, first_touch, mujoco_qpos_path

import rbd
from rbd.constraints import collision as col
from rbd.errors import MJCFError

#: plane–mesh is closed form on the same single-precision vertices in the same frame:
#: rbd's mesh frame differs from MuJoCo's by rounding only (measured 1e-13 on contacts).
EXACT_ATOL = 1e-11
#: sphere–mesh ends GJK on a hull feature, exactly (measured 1e-13 on distances and
#: points, 1e-12 on normals over 16 random states).
SPHERE_ATOL = 1e-10
#: ellipsoid–mesh needs EPA: tolerances of tests/test_collision_convex.py (EPA stops within
#: ccd_tolerance = 1e-6; measured worst over 16 states: 5e-7 distance, 1e-4 point, 4e-3 normal).
EPA_DIST_ATOL = 2e-6
EPA_POS_ATOL = 1e-3
EPA_NORMAL_ATOL = 2e-2
#: The mesh frame comes from MuJoCo 4.0's own Jacobi iteration (rbd.mjcf._principal.eig3) on
#: a tensor summed in another order: rotations agree to 1.3e-15 (measured, the Jaco arm's
#: links and a scaled, turned cloud), lengths in that frame (bounds) to 1e-12 of the mesh size.
FRAME_ATOL = 1e-13
BOUND_ATOL = 1e-10


def _cloud(seed: int = 3, n: int = 30) -> np.ndarray:
    """An irregular convex cloud: a mesh whose hull has only triangles, off its centre."""
    rng = np.random.default_rng(seed)
    points = rng.normal(size=(n, 3)) * [0.1, 0.06, 0.04] + [0.02, -0.01, 0.03]
    return points.astype(np.float32).astype(float)


def _vertex_text(points) -> str:
    return " ".join(str(float(x)) for x in np.asarray(points, np.float32).ravel())


def _scene(tmp_path, other: str, margin: float = 0.0, points=None, mesh_attrs: str = "",
           gravity: str = "0 0 0", placement='pos="0.01 0.02 0" euler="10 20 30"',
           flags: str = "") -> tuple:
    """A free mesh body (the geom turned and moved in it by ``placement``) and a free
    ``other`` geom or a plane."""
    cloud = _vertex_text(_cloud() if points is None else points)
    first = (f'<geom type="plane" size="0 0 1" euler="5 3 0" margin="{margin}"/>'
             if other == "plane" else
             f'<body name="a"><freejoint/><geom {other} margin="{margin}"/></body>')
    path = tmp_path / "scene.xml"
    path.write_text(f'<mujoco><option gravity="{gravity}">{flags}</option><asset>'
                    f'<mesh name="m" vertex="{cloud}" {mesh_attrs}/></asset><worldbody>{first}'
                    '<body name="b" pos="0 0 0.5">'
                    f'<freejoint/><geom type="mesh" mesh="m" {placement}/>'
                    '</body></worldbody></mujoco>')
    return rbd.testing.mujoco_pair(path)


def _on_plane(mujoco, mm, d, seed: int, depth: float) -> None:
    """The mesh body (the only free joint) turned at random and lowered into the plane."""
    quat = np.random.default_rng(seed).standard_normal(4)
    d.qpos[3:7] = quat / np.linalg.norm(quat)
    first_touch(mujoco, mm, d, lambda z: d.qpos.__setitem__(2, z), depth)


def _touching(mujoco, mm, d, seed: int, depth: float) -> None:
    """Both bodies turned at random; the mesh moved along a random direction past contact."""
    rng = np.random.default_rng(seed)
    for b in (0, 1):
        quat = rng.standard_normal(4)
        d.qpos[7 * b + 3:7 * b + 7] = quat / np.linalg.norm(quat)
    direction = rng.standard_normal(3)
    direction /= np.linalg.norm(direction)

    def place(s):
        d.qpos[7:10] = direction * s
    first_touch(mujoco, mm, d, place, depth)


def _assert_contacts_as_mujocos(found, d, dist_atol, pos_atol, normal_atol):
    assert len(found.dist) == d.ncon and not found.unsupported
    np.testing.assert_allclose(found.dist, d.contact.dist, rtol=0, atol=dist_atol)
    np.testing.assert_allclose(found.pos, d.contact.pos, rtol=0, atol=pos_atol)
    np.testing.assert_allclose(found.frame[:, 0], d.contact.frame[:, :3], rtol=0,
                               atol=normal_atol)


# ----------------------------------------------------------------------------- the hull

def test_hull_and_mesh_frame_are_mujocos(tmp_path):
    """The hull's vertices are MuJoCo's ``mesh_vert`` on the hull (same single-precision
    values), the geom's world pose composed with the mesh frame is ``geom_xpos``/``xmat``,
    and the bounds are ``geom_rbound`` and ``geom_aabb`` (mesh scaled and turned)."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    model, mm, d = _scene(tmp_path, "plane", mesh_attrs='scale="1.5 0.8 1.2" '
                          'refquat="0.9 0.1 0.3 0.2"')
    _on_plane(mujoco, mm, d, 0, 0.01)
    geom = model.geoms[1]
    hull = geom.hull
    mesh = mm.mesh_vert[mm.mesh_vertadr[0]:mm.mesh_vertadr[0] + mm.mesh_vertnum[0]]
    assert len(hull.vertices) == mm.mesh_graph[mm.mesh_graphadr[0]]       # hull vertex count
    assert np.abs(hull.vertices[:, None] - mesh[None]).max(-1).min(1).max() < 1e-7
    q, _, _ = rbd.mjcf.from_mujoco_state(model, d.qpos, d.qvel)
    T = rbd.geom_poses(model, q)[1]
    pos, mat, _, rbound = rbd.constraints.collision_mesh.placed(geom, T[:3, 3], T[:3, :3])
    np.testing.assert_allclose(pos, d.geom_xpos[1], rtol=0, atol=1e-12)
    np.testing.assert_allclose(mat.ravel(), d.geom_xmat[1], rtol=0, atol=FRAME_ATOL)
    assert rbound == pytest.approx(mm.geom_rbound[1], abs=BOUND_ATOL)
    np.testing.assert_allclose(0.5 * (hull.lower + hull.upper), mm.geom_aabb[1, :3], rtol=0,
                               atol=BOUND_ATOL)
    np.testing.assert_allclose(0.5 * (hull.upper - hull.lower), mm.geom_aabb[1, 3:], rtol=0,
                               atol=BOUND_ATOL)


@pytest.mark.slow
def test_hulls_of_a_real_arm_are_mujocos():
    """dm-control's Kinova Jaco arm (STL links): each colliding link's hull has MuJoCo's
    vertex count and vertices, and its mesh frame is MuJoCo's."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    pytest.importorskip("trimesh", reason="reading STL files needs the mesh extra")
    kinova = pytest.importorskip("dm_control", reason="the arm ships with dm-control")
    import pathlib

    path = pathlib.Path(kinova.__file__).parent / "third_party" / "kinova" / "jaco_arm.xml"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        model = rbd.load_mjcf(path)
    mm = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(mm)
    d.qpos[:] = np.linspace(0.2, 1.4, mm.nq)
    mujoco.mj_forward(mm, d)
    q, _, _ = rbd.mjcf.from_mujoco_state(model, d.qpos, d.qvel)
    poses = rbd.geom_poses(model, q)
    checked = 0
    for k, geom in enumerate(model.geoms):
        if geom.hull is None:
            continue
        g = mujoco.mj_name2id(mm, mujoco.mjtObj.mjOBJ_GEOM, geom.name)
        m = mm.geom_dataid[g]
        mesh = mm.mesh_vert[mm.mesh_vertadr[m]:mm.mesh_vertadr[m] + mm.mesh_vertnum[m]]
        assert len(geom.hull.vertices) == mm.mesh_graph[mm.mesh_graphadr[m]]
        # vertices: single-precision values of frames that agree to 1e-10
        assert np.abs(geom.hull.vertices[:, None] - mesh[None]).max(-1).min(1).max() < 1e-8
        pos, mat, _, rbound = rbd.constraints.collision_mesh.placed(
            geom, poses[k][:3, 3], poses[k][:3, :3])
        np.testing.assert_allclose(pos, d.geom_xpos[g], rtol=0, atol=1e-12)
        np.testing.assert_allclose(mat.ravel(), d.geom_xmat[g], rtol=0, atol=FRAME_ATOL)
        assert rbound == pytest.approx(mm.geom_rbound[g], abs=BOUND_ATOL)
        checked += 1
    assert checked == 6


def test_cube_mesh_hull_merges_its_faces():
    """A cube's 12 hull triangles are 6 square polygons, outward normals along the axes."""
    cube = np.array(list(itertools.product((-1, 1), repeat=3))) * [0.1, 0.2, 0.3]
    hull = rbd.model.mesh_hull.mesh_hull(cube, np.zeros(3), np.eye(3))
    assert sorted(len(p) for p in hull.polygons) == [4] * 6
    np.testing.assert_allclose(np.sort(np.abs(hull.normals), axis=0)[-2:],
                               np.ones((2, 3)), atol=1e-12)
    for polygon, normal in zip(hull.polygons, hull.normals, strict=True):
        assert np.all(hull.vertices[polygon] @ normal > 0)             # outward
        a, b, c = hull.vertices[polygon[:3]]
        assert np.cross(b - a, c - b) @ normal > 0                     # counter-clockwise


# ----------------------------------------------------------------------------- plane–mesh

@pytest.mark.parametrize("margin", [0.0, 0.02])
def test_plane_mesh_contacts_are_mujocos(tmp_path, margin):
    """MuJoCo 4.0's plane–mesh contacts (one to three on the cloud's triangles): the same
    contacts in the same order, to rounding."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    model, mm, d = _scene(tmp_path, "plane", margin)
    counts = set()
    for seed, depth in itertools.product((0, 1, 2, 3, 4, 5, 37), (0.002, 0.03)):
        _on_plane(mujoco, mm, d, seed, depth + margin)
        found = collide_at(model, d)
        _assert_contacts_as_mujocos(found, d, EXACT_ATOL, EXACT_ATOL, EXACT_ATOL)
        counts.add(d.ncon)
    assert {1, 2, 3} <= counts                       # every kind of contact set was met


def test_box_mesh_on_its_face_gives_mujocos_corners(tmp_path):
    """A box mesh nearly flat on the tilted floor: the bottom square's corners within the
    margin (three or four), in MuJoCo's order."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    cube = np.array(list(itertools.product((-1, 1), repeat=3))) * [0.1, 0.07, 0.05]
    model, mm, d = _scene(tmp_path, "plane", 0.01, cube, placement="")
    counts = set()
    for seed, tilt in itertools.product(range(3), (0.001, 0.05)):
        axis = np.random.default_rng(seed).standard_normal(3)
        small = np.r_[1.0, tilt * axis / np.linalg.norm(axis)]
        mujoco.mju_mulQuat(d.qpos[3:7], mm.geom_quat[0], small / np.linalg.norm(small))
        first_touch(mujoco, mm, d, lambda z: d.qpos.__setitem__(2, z), 0.015)
        _assert_contacts_as_mujocos(collide_at(model, d), d, EXACT_ATOL, EXACT_ATOL, EXACT_ATOL)
        counts.add(d.ncon)
    assert {3, 4} <= counts


def _prism(corners: int) -> np.ndarray:
    """A prism on an oval polygon of ``corners`` corners (caps of that many corners)."""
    angle = np.arange(corners) * 2 * np.pi / corners + 0.1
    ring = np.c_[0.1 * np.cos(angle), 0.07 * np.sin(angle)]
    return np.r_[np.c_[ring, np.full(corners, -0.05)], np.c_[ring, np.full(corners, 0.05)]]


@pytest.mark.parametrize("backend", ["reference", "kernel"])
@pytest.mark.parametrize("corners", [5, 6, 8])
def test_polygon_with_more_than_four_corners_gives_mujocos_four(tmp_path, request, corners,
                                                                backend):
    """A prism nearly flat on the tilted floor, on either cap: MuJoCo 4.0 keeps the deepest
    corner and three more of the cap (the largest quadrilateral from it), the same contacts
    in the same order, to rounding.  (Exactly flat, the deepest corner is a tie that
    MuJoCo's hill-climbing search breaks otherwise: module notes.)"""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    if backend == "kernel":
        request.getfixturevalue("require_kernels")
    model, mm, d = _scene(tmp_path, "plane", 0.01, _prism(corners), placement="")
    counts = set()
    for seed, tilt in itertools.product(range(4), (0.001, 0.02)):
        axis = np.random.default_rng(seed).standard_normal(3)
        small = np.r_[1.0, tilt * axis / np.linalg.norm(axis)]
        mujoco.mju_mulQuat(d.qpos[3:7], mm.geom_quat[0], small / np.linalg.norm(small))
        if seed % 2:                                             # on the other cap
            mujoco.mju_mulQuat(d.qpos[3:7], d.qpos[3:7].copy(), np.array([0.0, 1, 0, 0]))
        first_touch(mujoco, mm, d, lambda z: d.qpos.__setitem__(2, z), 0.012)
        _assert_contacts_as_mujocos(collide_at(model, d, backend), d, EXACT_ATOL, EXACT_ATOL,
                                    EXACT_ATOL)
        counts.add(d.ncon)
    assert 4 in counts


# ----------------------------------------------------------------------------- GJK/EPA pairs

@pytest.mark.parametrize("depth", [1e-3, 2e-2])
def test_sphere_mesh_contacts_are_mujocos(tmp_path, depth):
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    model, mm, d = _scene(tmp_path, 'type="sphere" size="0.1"')
    for seed in range(4):
        _touching(mujoco, mm, d, seed, depth)
        _assert_contacts_as_mujocos(collide_at(model, d), d, SPHERE_ATOL, SPHERE_ATOL,
                                    SPHERE_ATOL)


def test_ellipsoid_mesh_contacts_are_mujocos_to_epa_tolerance(tmp_path):
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    model, mm, d = _scene(tmp_path, 'type="ellipsoid" size="0.1 0.2 0.15"')
    for seed, depth in itertools.product(range(4), (1e-3, 2e-2)):
        _touching(mujoco, mm, d, seed, depth)
        _assert_contacts_as_mujocos(collide_at(model, d), d, EPA_DIST_ATOL, EPA_POS_ATOL,
                                    EPA_NORMAL_ATOL)


@pytest.mark.parametrize("other", ['type="capsule" size="0.05 0.1"',
                                   'type="cylinder" size="0.1 0.15"'])
def test_capsule_or_cylinder_on_the_cloud_is_mujocos(tmp_path, other):
    """Capsule or cylinder with the cloud (triangles only: no cap lies flat on a face):
    MuJoCo 4.0's multi-CCD (rbd.constraints.collision_multiccd) gives its contacts, to
    EPA's tolerance; apart, no contact and nothing listed."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    model, mm, d = _scene(tmp_path, other)
    for seed in range(3):
        _touching(mujoco, mm, d, seed, 1e-2)
        _assert_contacts_as_mujocos(collide_at(model, d), d, EPA_DIST_ATOL, EPA_POS_ATOL,
                                    EPA_NORMAL_ATOL)
    _touching(mujoco, mm, d, 0, -1e-3)                     # 1 mm short of touching
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = collide_at(model, d)
    assert d.ncon == 0 and len(found.dist) == 0 and found.unsupported == ()


# ----------------------------------------------------------------------------- multi-contact

#: Two polytopes: GJK and EPA end on hull features exactly and the clipping is closed form;
#: rbd's contacts equal MuJoCo 4.0's to rounding (measured 1e-13 on distances, points and
#: normals over the 338 of 384 random states whose contacts it reproduces in order).
CLIP_ATOL = 1e-10

#: A cube and a hexagonal prism (faces of four and six corners), as mesh vertices.
_CUBE = np.array([[x, y, z] for z in (-0.1, 0.1)
                  for x, y in ((-0.1, -0.1), (0.1, -0.1), (0.1, 0.1), (-0.1, 0.1))])
_ANGLES = np.arange(6) * np.pi / 3 + 0.1
_PRISM = np.array([[0.12 * np.cos(a), 0.12 * np.sin(a), z] for z in (-0.1, 0.1)
                   for a in _ANGLES])


def _stack(tmp_path, lower: str, points) -> tuple:
    """A free mesh body ``b`` above a free ``lower`` geom, both upright."""
    path = tmp_path / "stack.xml"
    path.write_text(f'<mujoco><option gravity="0 0 0"/><asset><mesh name="m" '
                    f'vertex="{_vertex_text(points)}"/></asset><worldbody><body name="a">'
                    f'<freejoint/><geom {lower}/></body><body name="b" pos="0 0 0.5">'
                    '<freejoint/><geom type="mesh" mesh="m"/></body></worldbody></mujoco>')
    return rbd.testing.mujoco_pair(path)


def _tilted_states(mujoco, mm, d, ks):
    """States ``k`` of one random sequence: both bodies turned by about 0.01 k rad, the
    mesh 0.19 above the lower geom's centre (pressed into it), off by a few cm."""
    rng = np.random.default_rng(0)

    def turn(scale):
        axis = rng.standard_normal(3) * scale + 1e-12
        angle = np.linalg.norm(axis)
        return np.r_[np.cos(angle / 2), np.sin(angle / 2) * axis / angle]

    for k in range(max(ks) + 1):
        d.qpos[:] = 0
        d.qpos[3:7] = turn(0.01 * k)
        d.qpos[7:10] = [0.05 * rng.standard_normal(), 0.05 * rng.standard_normal(),
                        0.19 + 0.005 * rng.standard_normal()]
        d.qpos[10:14] = turn(0.01 * k)
        if k in ks:
            mujoco.mj_forward(mm, d)
            yield k


def test_clipping_a_face_to_another_is_their_overlap():
    """A diamond half over the edge of a square face below it: the clipped points are the
    diamond's corners inside the square and the two crossings of its edges with the
    square's side, each as deep as it is below the face (geometry, no MuJoCo)."""
    from rbd.constraints import collision_multi as multi

    n = np.array([0.0, 0.0, -1.0])                    # the square's outward normal
    square = np.array([[1, 1, 0], [-1, 1, 0], [-1, -1, 0], [1, -1, 0]], float)  # clockwise about n
    diamond = np.array([[1.4, 0, 0.01], [0.9, 0.5, 0.01], [0.4, 0, 0.01], [0.9, -0.5, 0.01]])
    found = multi.polygon_clip(square, diamond, n, -n, max_contacts=8)
    expected = {(1.0, 0.4), (0.9, 0.5), (0.4, 0.0), (0.9, -0.5), (1.0, -0.4)}
    assert {tuple(np.round(x2[:2], 12) + 0.0) for _, _, x2 in found} == expected
    for dist, x1, x2 in found:                         # 0.01 inside, witness on the face
        assert dist == pytest.approx(-0.01, abs=1e-15)
        np.testing.assert_allclose(x1, [*x2[:2], 0.0], rtol=0, atol=1e-15)
    assert len(multi.polygon_clip(square, diamond, n, -n)) == 4   # four at most


#: (mesh, lower geom, states): faces flat on each other clipped to four, three or two
#: contacts; more than four clipped corners reduced to a quadrilateral (cube k=3,
#: prism k=1, 2, 3); an edge in a face (k=7); geom 1's edges in no face, geom 2's edge
#: tried next (cube k=6, 9).
MULTI_CONTACT_CASES = {
    "box on cube": (_CUBE, 'type="box" size="0.15 0.12 0.1"', (0, 3, 6, 7)),
    "cube on cube": (_CUBE, 'type="mesh" mesh="m"', (0, 5, 9)),
    "box on prism": (_PRISM, 'type="box" size="0.15 0.12 0.1"', (2, 3)),
    "prism on prism": (_PRISM, 'type="mesh" mesh="m"', (1, 4)),
}


@pytest.mark.parametrize("name", sorted(MULTI_CONTACT_CASES))
def test_faces_flat_on_a_mesh_give_mujocos_contacts(tmp_path, name):
    """A box or a mesh pressed on a mesh's face or edge: MuJoCo 4.0's contacts from one
    EPA run (``rbd.constraints.collision_multi``), on the readable stage and the default
    one (its compiled twin ``collision_multi.pyx`` where the kernels are built)."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    points, lower, ks = MULTI_CONTACT_CASES[name]
    model, mm, d = _stack(tmp_path, lower, points)
    for k in _tilted_states(mujoco, mm, d, ks):
        for backend in ("reference", None):
            found = collide_at(model, d, backend)
            assert d.ncon >= 2 and len(found.dist) == d.ncon and not found.unsupported, k
            # the same contacts; their order within the pair is MuJoCo's on most states only
            # (rbd.constraints.collision_multi)
            order = [int(np.argmin(np.abs(found.pos - p).max(axis=1))) for p in d.contact.pos]
            assert sorted(order) == list(range(d.ncon)), k
            np.testing.assert_allclose(found.dist[order], d.contact.dist, rtol=0,
                                       atol=CLIP_ATOL)
            np.testing.assert_allclose(found.pos[order], d.contact.pos, rtol=0, atol=CLIP_ATOL)
            np.testing.assert_allclose(found.frame[order, 0], d.contact.frame[:, :3], rtol=0,
                                       atol=CLIP_ATOL)


def test_hull_polygons_are_mujocos(tmp_path):
    """The hull's polygons are MuJoCo's loops (``mesh_polyvert``), each from the vertex
    MuJoCo's starts at: they order the clipped contacts."""
    pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    rng = np.random.default_rng(1)
    for points in (_CUBE, _PRISM, np.round(rng.normal(size=(30, 3)) * 20) / 200):
        xml = (f'<mujoco><asset><mesh name="m" vertex="{_vertex_text(points)}"/></asset>'
               '<worldbody><body><freejoint/><geom type="mesh" mesh="m"/></body>'
               '</worldbody></mujoco>')
        path = tmp_path / "hull.xml"
        path.write_text(xml)
        model, mm, _ = rbd.testing.mujoco_pair(path)
        hull = model.geoms[0].hull
        stored = mm.mesh_vert[:mm.mesh_vertnum[0]]
        index = [int(np.argmin(np.abs(stored - v).sum(axis=1))) for v in hull.vertices]
        loops = sorted(tuple(index[v] for v in p) for p in hull.polygons)
        theirs = sorted(tuple(mm.mesh_polyvert[a:a + n])
                        for a, n in zip(mm.mesh_polyvertadr, mm.mesh_polyvertnum, strict=True))
        assert loops == theirs


def test_forward_with_a_mesh_flat_on_a_box_is_mujocos(tmp_path):
    """A cube mesh resting flat on a box, the whole forward pass: four contacts from the
    clipped faces, and ``rbd.forward``'s accelerations are ``mj_forward``'s."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    xml = (f'<mujoco><asset><mesh name="m" vertex="{_vertex_text(_CUBE)}"/></asset>'
           '<worldbody><geom type="box" size="0.3 0.3 0.05" pos="0 0 -0.05"/>'
           '<body pos="0.02 -0.01 0.098" euler="0.2 -0.1 20"><freejoint/>'
           '<geom type="mesh" mesh="m"/></body></worldbody></mujoco>')
    path = tmp_path / "flat.xml"
    path.write_text(xml)
    model, mm, d = rbd.testing.mujoco_pair(path)
    d.qvel[:] = [0.05, -0.02, 0.01, 0.3, -0.2, 0.1]
    mujoco.mj_forward(mm, d)
    q, v, _ = rbd.mjcf.from_mujoco_state(model, d.qpos, d.qvel)
    result = rbd.forward(model, q, v)
    assert len(result.contacts) == d.ncon == 4
    qacc = rbd.mjcf.from_mujoco_state(model, d.qpos, d.qvel, d.qacc)[2]
    np.testing.assert_allclose(result.qdd, qacc, rtol=0, atol=1e-8 * np.abs(qacc).max())
    # the clipping has its compiled twin (collision_multi.pyx): the model is not held to the
    # readable stage, and the default backend (compiled where built) gives the readable
    # stage's contacts (tests/test_collision_multi_kernel.py: to rounding; 1e-12 here)
    assert not col.reference_only(model)
    np.testing.assert_allclose(rbd.collide(model, q, backend=None).pos,
                               rbd.collide(model, q, backend="reference").pos, rtol=0,
                               atol=1e-12)


#: Without multi-CCD, one GJK/EPA contact; rounding for capsule, box and mesh (GJK/EPA end
#: on hull features: measured 2e-13 distances and points, 2e-12 normals over 16 states),
#: EPA's tolerance for the cylinder's round side (measured 7e-7, 4e-5, 3e-3).
NO_MULTICCD = {
    "capsule": ('type="capsule" size="0.05 0.1"', SPHERE_ATOL, SPHERE_ATOL, SPHERE_ATOL),
    "box": ('type="box" size="0.1 0.1 0.1"', SPHERE_ATOL, SPHERE_ATOL, SPHERE_ATOL),
    "mesh": ('type="mesh" mesh="m"', SPHERE_ATOL, SPHERE_ATOL, SPHERE_ATOL),
    "cylinder": ('type="cylinder" size="0.1 0.15"', EPA_DIST_ATOL, EPA_POS_ATOL,
                 EPA_NORMAL_ATOL),
}


@pytest.mark.parametrize("name", sorted(NO_MULTICCD))
def test_without_multiccd_every_mesh_pair_gives_mujocos_contact(tmp_path, name):
    """``<flag multiccd="disable"/>``: MuJoCo asks GJK/EPA for one contact; so does rbd,
    for the pairs it lists as needing several otherwise."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    other, dist_atol, pos_atol, normal_atol = NO_MULTICCD[name]
    model, mm, d = _scene(tmp_path, other, flags='<flag multiccd="disable"/>')
    assert rbd.constraints.mujoco_model.disabled(model, "multiccd")
    for seed, depth in itertools.product(range(4), (1e-3, 2e-2)):
        _touching(mujoco, mm, d, seed, depth)
        for backend in ("reference", None):           # readable; compiled where built
            _assert_contacts_as_mujocos(collide_at(model, d, backend), d, dist_atol, pos_atol,
                                        normal_atol)


def test_without_multiccd_a_primitive_convex_pair_gives_one_contact(tmp_path):
    """The capsule flat on a cylinder that MuJoCo gives two contacts with multi-CCD on
    (tests/test_collision_convex.py): one contact without it, as MuJoCo's."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    path = tmp_path / "flat.xml"
    path.write_text('<mujoco><option><flag multiccd="disable"/></option><worldbody><body>'
                    '<freejoint/><geom type="cylinder" size="0.3 0.1"/></body>'
                    '<body pos="0.01 0.02 0.149" euler="0 90 10"><freejoint/>'
                    '<geom type="capsule" size="0.05 0.1"/></body></worldbody></mujoco>')
    model, mm, d = rbd.testing.mujoco_pair(path)
    mujoco.mj_forward(mm, d)
    # the default backend too: compiled where the kernels are built (the compiled convex
    # routines take the flag), the readable stage where not
    assert col.reference_only(model) == (not rbd._backend.has_kernels())
    for backend in ("reference", None):
        _assert_contacts_as_mujocos(collide_at(model, d, backend), d, EPA_DIST_ATOL,
                                    EPA_POS_ATOL, EPA_NORMAL_ATOL)


# ----------------------------------------------------------------------------- the stage

def test_broad_phase_bounds_mesh_geoms():
    """A mesh is boxed like the primitives (``makeAAMM``): far from a sphere, the pair
    never reaches the narrow phase; the box holds every hull vertex."""
    cloud = _cloud()
    hull = rbd.model.mesh_hull.mesh_hull(cloud, cloud.mean(0),
                                         rbd.spatial.axis_angle_rotation([0, 0, 1], 0.4))
    R = rbd.spatial.rpy_to_rot([0.3, -0.7, 0.2])
    pos = np.array([0.3, -0.2, 0.1])
    lower, upper = col.mesh_world_aabb(hull, pos, R, 0.0)
    world = hull.vertices @ R.T + pos
    assert np.all(world >= lower - 1e-12) and np.all(world <= upper + 1e-12)
    assert np.all(upper - lower <= 2 * hull.rbound + 1e-12)
    geoms = (rbd.model.geoms.make_geom("m", "a", "mesh", mesh="<inline m>", hull=hull),
             rbd.model.geoms.make_geom("s", "b", "sphere", (0.1,)))
    poses = np.array([np.eye(4), np.eye(4)])
    poses[1, :3, 3] = [2.0, 0.0, 0.0]
    bodies = col.BodyTree.free(["a", "b"])
    index = {None: 0, "a": 1, "b": 2}
    found = col._candidates(geoms, poses[:, :3, 3], poses[:, :3, :3],
                            [index[g.body] for g in geoms], bodies, set(), set(), True)
    assert found == []
    poses[1, :3, 3] = [0.15, 0.0, 0.0]
    found = col._candidates(geoms, poses[:, :3, 3], poses[:, :3, :3],
                            [index[g.body] for g in geoms], bodies, set(), set(), True)
    assert len(found) == 1


def test_forward_with_mesh_contacts_is_mujocos(tmp_path):
    """A mesh resting on the floor on two or three points, the whole forward pass:
    ``rbd.forward``'s accelerations are ``mj_forward``'s (both solvers converged tight)."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    model, mm, d = _scene(tmp_path, "plane", gravity="0 0 -9.81")
    for seed in (0, 3):
        _on_plane(mujoco, mm, d, seed, 0.002)
        d.qvel[:] = np.random.default_rng(seed).standard_normal(mm.nv) * 0.1
        mujoco.mj_forward(mm, d)
        q, v, _ = rbd.mjcf.from_mujoco_state(model, d.qpos, d.qvel)
        result = rbd.forward(model, q, v)
        assert len(result.contacts) == d.ncon >= 1
        qacc = rbd.mjcf.from_mujoco_state(model, d.qpos, d.qvel, d.qacc)[2]
        scale = np.abs(qacc).max()
        np.testing.assert_allclose(result.qdd, qacc, rtol=0, atol=1e-8 * scale)


def test_model_with_a_plane_mesh_pair_is_not_reference_only(tmp_path):
    """Plane–mesh has a compiled routine (``rbd/_kernels/collision_mesh.pyx``): the model is
    not held to the readable stage, and the default backend gives the readable contacts
    (tests/test_collision_mesh_kernel.py compares the two stages pair by pair)."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    model, mm, d = _scene(tmp_path, "plane")
    assert not col.reference_only(model)
    _on_plane(mujoco, mm, d, 0, 0.01)
    reference, default = collide_at(model, d), collide_at(model, d, backend=None)
    np.testing.assert_allclose(default.pos, reference.pos, rtol=0, atol=1e-12)
    assert len(default.dist) == d.ncon


# ----------------------------------------------------------------------------- bad input

def test_unreadable_mesh_file_is_refused_naming_the_geom(tmp_path):
    """A colliding mesh geom whose file is missing or not a mesh: MJCFError naming it."""
    pytest.importorskip("trimesh", reason="reading mesh files needs the mesh extra")
    (tmp_path / "junk.stl").write_bytes(b"\x00\x01 not a mesh at all")
    for file in ("missing.stl", "junk.stl"):
        path = tmp_path / f"bad_{file}.xml"
        path.write_text(f'<mujoco><asset><mesh name="part" file="{file}"/></asset><worldbody>'
                        '<body><freejoint/><inertial mass="1" diaginertia="1 1 1" pos="0 0 0"/>'
                        '<geom name="shell" type="mesh" mesh="part"/></body></worldbody>'
                        '</mujoco>')
        with pytest.raises(MJCFError, match="shell"):
            rbd.load_mjcf(path)


def test_static_mesh_rbd_cannot_read_is_left_out_with_a_warning(tmp_path, monkeypatch):
    """A world-welded mesh whose file needs the missing trimesh still loads (its inertia is
    not needed); the loader's warning says its collisions are left out, and it has no hull."""
    import sys

    monkeypatch.setitem(sys.modules, "trimesh", None)          # import trimesh -> ImportError
    path = tmp_path / "table.xml"
    path.write_text('<mujoco><asset><mesh name="t" file="t.stl"/></asset><worldbody>'
                    '<body name="base"><geom name="table" type="mesh" mesh="t"/></body>'
                    '<body><freejoint/><geom size="0.1"/></body></worldbody></mujoco>')
    with pytest.warns(RuntimeWarning, match="mesh collisions.*trimesh"):
        model = rbd.load_mjcf(path)
    assert next(g for g in model.geoms if g.kind == "mesh").hull is None


def test_flat_mesh_is_refused_naming_the_mesh(tmp_path):
    """Vertices on one plane have no convex hull (MuJoCo refuses them too)."""
    path = tmp_path / "flat.xml"
    path.write_text('<mujoco><asset><mesh name="sheet" vertex="0 0 0 1 0 0 0 1 0 1 1 0"/>'
                    '</asset><worldbody><body><freejoint/><inertial mass="1" pos="0 0 0" '
                    'diaginertia="1 1 1"/><geom type="mesh" mesh="sheet"/></body></worldbody>'
                    '</mujoco>')
    with pytest.raises(MJCFError, match="sheet"):
        rbd.load_mjcf(path)


#: A mesh dropped on the floor: the two runs differ by rounding only (measured 5e-13 on
#: qpos over 0.6 s with the cloud landing on one, two, then three vertices).
ATOL_TRAJECTORY = 1e-9


@pytest.mark.slow
def test_dropped_mesh_follows_mujoco(tmp_path):
    """A mesh falls on a tilted floor and comes to rest on a face: ``rbd.simulate``'s
    trajectory (semi-implicit Euler, Newton) is MuJoCo's."""
    traj, d = _dropped_mesh_follows_mujoco(
        tmp_path, _cloud(), '<geom type="plane" size="0 0 1" euler="5 3 0"/>'
        '<body pos="0 0 0.12" euler="20 40 10">', 0.4)
    assert traj.contact_count.max() >= 2 and d.ncon >= 2


def _dropped_mesh_follows_mujoco(tmp_path, vertices, scene: str, duration: float):
    """A mesh of ``vertices`` on a free body (``scene``: the world's geoms and the body's
    opening tag) dropped for ``duration`` s: ``rbd.simulate``'s qpos path is MuJoCo's to
    ATOL_TRAJECTORY.  Returns rbd's trajectory and MuJoCo's data at the end."""
    pytest.importorskip("mujoco", reason="MuJoCo is the reference trajectory")
    from rbd.mjcf import from_mujoco_state, to_mujoco_state

    path = tmp_path / "drop.xml"
    path.write_text(f'<mujoco><option timestep="0.004"/><asset><mesh name="m" '
                    f'vertex="{_vertex_text(vertices)}"/></asset><worldbody>{scene}'
                    '<freejoint/><geom type="mesh" mesh="m"/></body></worldbody></mujoco>')
    model, mm, d = rbd.testing.mujoco_pair(path, integrator="euler")
    q0, v0, _ = from_mujoco_state(model, d.qpos, d.qvel)
    traj = rbd.simulate(model, q0, v0, duration, mm.opt.timestep, integrator="euler")
    expected = mujoco_qpos_path(mm, d, len(traj.t) - 1)
    np.testing.assert_allclose(to_mujoco_state(model, traj.q)[0], expected, rtol=0,
                               atol=ATOL_TRAJECTORY)
    return traj, d


@pytest.mark.slow
def test_cube_mesh_dropped_on_a_box_follows_mujoco(tmp_path):
    """A cube mesh falls on a tilted box, lands on a corner, an edge, then a face (four
    clipped contacts): ``rbd.simulate``'s trajectory is MuJoCo's (measured 1e-15 over
    0.6 s; the tolerance of the dropped cloud above)."""
    traj, d = _dropped_mesh_follows_mujoco(
        tmp_path, _CUBE, '<geom type="box" size="0.5 0.5 0.05" pos="0 0 -0.05" euler="4 -3 0"/>'
        '<body pos="0 0 0.2" euler="25 15 10">', 0.6)
    assert traj.contact_count[-1] == d.ncon == 4
