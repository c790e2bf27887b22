"""Convex pairs MuJoCo collides by GJK (``rbd.constraints.collision_convex``) against MuJoCo."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import collide_at, first_touch

import rbd
from rbd.constraints import collision_convex as cvx

#: GJK stops at a Frank–Wolfe gap of ccd_tolerance²/2: the distance is that accurate, the
#: witness points (contact point, normal) only to about ccd_tolerance times the geom scale,
#: and MuJoCo 4.0's iterates are not exactly those of the source rbd follows (module notes
#: of collision_convex; measured worst over 30 random states per pair: 4e-9, 2e-6, 2e-5).
DIST_ATOL = 1e-8
POS_ATOL = 1e-5
NORMAL_ATOL = 1e-4

SCENE = """<mujoco><option gravity="0 0 0"/><worldbody>
<body name="a"><freejoint/><geom type="{k1}" size="{s1}"/></body>
<body name="b" pos="0 0 0.5"><freejoint/><geom type="{k2}" size="{s2}"/></body>
</worldbody></mujoco>"""

#: EPA (geoms touching beyond a sphere or capsule core) stops once its depth bounds are
#: within ccd_tolerance = 1e-6: distances agree to that, and the normal (the closest face
#: of a polytope this close to the surface) to the square root of it over the geom scale;
#: measured worst over 20 random states per pair at depths 1e-3 and 2e-2: 8e-7 on
#: distances, 2.6e-4 on points, 7e-3 on normals.
EPA_DIST_ATOL = 2e-6
EPA_POS_ATOL = 1e-3
EPA_NORMAL_ATOL = 2e-2

#: (geom 1, size, geom 2, size, random states where MuJoCo gives one contact)
EPA_PAIRS = {
    "ellipsoid-box": ("ellipsoid", "0.1 0.2 0.15", "box", "0.1 0.1 0.1", (0, 1, 2)),
    "ellipsoid-ellipsoid": ("ellipsoid", "0.1 0.2 0.15", "ellipsoid", "0.15 0.1 0.12",
                            (0, 1, 2)),
    "ellipsoid-cylinder": ("ellipsoid", "0.1 0.2 0.15", "cylinder", "0.1 0.15", (0, 1, 2)),
}
PAIRS = {
    "sphere-ellipsoid": ("sphere", "0.1", "ellipsoid", "0.1 0.2 0.15", (0, 1, 2)),
    "capsule-ellipsoid": ("capsule", "0.05 0.1", "ellipsoid", "0.1 0.2 0.15", (0, 1, 2)),
    "capsule-cylinder": ("capsule", "0.05 0.1", "cylinder", "0.1 0.15", (1, 2, 3)),
}


def _scene(tmp_path, k1, s1, k2, s2):
    path = tmp_path / f"{k1}_{k2}.xml"
    path.write_text(SCENE.format(k1=k1, s1=s1, k2=k2, s2=s2))
    return rbd.testing.mujoco_pair(path)


def _touching(mujoco, mm, d, seed: int, depth: float) -> None:
    """Random orientations; geom 2 moved along a random direction to ``depth`` past the
    first contact (found by bisection on MuJoCo's collision)."""
    rng = np.random.default_rng(seed)
    for b in (0, 1):
        quat = rng.standard_normal(4)
        d.qpos[7 * b + 3:7 * b + 7] = quat / np.linalg.norm(quat)
    direction = rng.standard_normal(3)
    direction /= np.linalg.norm(direction)

    def offset(s):
        d.qpos[7:10] = direction * s

    first_touch(mujoco, mm, d, offset, depth, lo=0.0, hi=1.0, halvings=50)


def _assert_one_contact_as_mujocos(found, d, dist_atol, pos_atol, frame_atol,
                                   frame_columns):
    """One contact on both sides, with MuJoCo's distance, point and the first
    ``frame_columns`` entries of its frame (3: the normal; 9: the whole frame)."""
    assert d.ncon == 1 and len(found.dist) == 1 and not found.unsupported
    np.testing.assert_allclose(found.dist, d.contact.dist, rtol=0, atol=dist_atol)
    np.testing.assert_allclose(found.pos, d.contact.pos, rtol=0, atol=pos_atol)
    np.testing.assert_allclose(found.frame.reshape(-1, 9)[:, :frame_columns],
                               d.contact.frame[:, :frame_columns], rtol=0, atol=frame_atol)


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_touching_pairs_match_mujoco(tmp_path, name):
    """One contact, with MuJoCo's distance, point and frame (tolerances above)."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    k1, s1, k2, s2, seeds = PAIRS[name]
    model, mm, d = _scene(tmp_path, k1, s1, k2, s2)
    for seed in seeds:
        _touching(mujoco, mm, d, seed, 1e-2)
        _assert_one_contact_as_mujocos(collide_at(model, d), d, DIST_ATOL, POS_ATOL,
                                       NORMAL_ATOL, frame_columns=9)


def test_separated_pair_without_contact_is_decided(tmp_path):
    """An ellipsoid and a box apart: GJK proves it, no contact and nothing unsupported."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    model, mm, d = _scene(tmp_path, "ellipsoid", "0.1 0.2 0.15", "box", "0.1 0.1 0.1")
    _touching(mujoco, mm, d, 0, -1e-3)                     # 1 mm short of touching
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = collide_at(model, d)
    assert d.ncon == 0 and len(found.dist) == 0 and found.unsupported == ()


@pytest.mark.parametrize("name", sorted(EPA_PAIRS))
def test_penetrating_pairs_match_mujoco_to_epa_tolerance(tmp_path, name):
    """Ellipsoid pairs through GJK and EPA: MuJoCo's contact to EPA's tolerance."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    k1, s1, k2, s2, seeds = EPA_PAIRS[name]
    model, mm, d = _scene(tmp_path, k1, s1, k2, s2)
    for seed in seeds:
        _touching(mujoco, mm, d, seed, 1e-2)
        _assert_one_contact_as_mujocos(collide_at(model, d), d, EPA_DIST_ATOL, EPA_POS_ATOL,
                                       EPA_NORMAL_ATOL, frame_columns=3)


@pytest.mark.parametrize("backend", ["reference", None])
def test_flat_capsule_on_a_cylinder_gets_mujocos_two_contacts(tmp_path, backend):
    """A capsule flat on a cylinder: MuJoCo 4.0's two contacts, the capsule's line clipped
    by the cap (multi-CCD, rbd.constraints.collision_multiccd), on the readable stage and
    the default one (compiled where the kernels are built)."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    path = tmp_path / "flat.xml"
    path.write_text('<mujoco><worldbody><body><freejoint/><geom type="cylinder" size="0.3 0.1"/>'
                    '</body><body pos="0.01 0.02 0.149" euler="0 90 10"><freejoint/>'
                    '<geom type="capsule" size="0.05 0.1"/></body></worldbody></mujoco>')
    model, mm, d = rbd.testing.mujoco_pair(path)
    mujoco.mj_forward(mm, d)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = collide_at(model, d, backend)
    assert d.ncon == len(found.dist) == 2 and found.unsupported == ()
    for k in range(d.ncon):
        i = int(np.argmin(np.abs(found.pos - d.contact.pos[k]).max(axis=1)))
        assert abs(found.dist[i] - d.contact.dist[k]) < EPA_DIST_ATOL
        np.testing.assert_allclose(found.pos[i], d.contact.pos[k], rtol=0, atol=EPA_POS_ATOL)
        np.testing.assert_allclose(found.frame[i, 0], d.contact.frame[k, :3], rtol=0,
                                   atol=EPA_NORMAL_ATOL)


def test_cylinder_cap_whole_on_a_box_gets_four_contacts(tmp_path):
    """A cylinder's cap flat inside a box face (clipped to its 16 corners): MuJoCo 4.0's
    rotating search keeps four of them, and meets areas equal but for rounding on the way
    (the turns of the 16-gon, :mod:`rbd.constraints.collision_multiccd`); rbd keeps the four
    of the same search, without a warning.  Each is a corner of the cap's 16-gon (on the
    rim, at a multiple of 22.5 degrees from the cylinder's x axis), at MuJoCo's depth and
    normal (rounding apart: the clipped corners and their projections, no EPA in them)."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    model, mm, d = _cap_on_box(tmp_path)
    mujoco.mj_forward(mm, d)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = collide_at(model, d)
    assert d.ncon == len(found.dist) == 4 and found.unsupported == ()
    np.testing.assert_allclose(found.dist, d.contact.dist[:4], rtol=0, atol=1e-12)
    np.testing.assert_allclose(found.frame[:, 0], d.contact.frame[:4, :3], rtol=0, atol=1e-12)
    axis_x, top = d.geom_xmat[0].reshape(3, 3)[:, 0], d.geom_xpos[0] + [0, 0, 0.15]
    rim = found.pos - top
    turn = np.degrees(np.arctan2(rim[:, 1], rim[:, 0]) - np.arctan2(axis_x[1], axis_x[0]))
    np.testing.assert_allclose(np.hypot(rim[:, 0], rim[:, 1]), 0.1, rtol=0, atol=1e-12)
    np.testing.assert_allclose((turn / 22.5 + 0.5) % 1 - 0.5, 0, rtol=0, atol=1e-9)


def _cap_on_box(tmp_path):
    """A box 1 mm into an upright cylinder's top cap: rbd's and MuJoCo's models and
    MuJoCo's data."""
    path = tmp_path / "cap.xml"
    path.write_text('<mujoco><worldbody><body><freejoint/><geom type="cylinder" size="0.1 0.15"/>'
                    '</body><body pos="0.01 0.02 0.229"><freejoint/>'
                    '<geom type="box" size="0.2 0.2 0.08"/></body></worldbody></mujoco>')
    return rbd.testing.mujoco_pair(path)


def test_kernel_backend_takes_the_readable_stage(tmp_path):
    """A model with GJK pairs: ``rbd.collide`` and ``rbd.forward`` on the kernel backend
    give the readable stage's contacts (from the compiled twins, collision_convex.pyx)."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    k1, s1, k2, s2, _ = PAIRS["capsule-ellipsoid"]
    model, mm, d = _scene(tmp_path, k1, s1, k2, s2)
    _touching(mujoco, mm, d, 0, 1e-2)
    reference, kernel = collide_at(model, d), collide_at(model, d, backend=None)
    assert len(kernel.dist) == 1                    # geom poses from compiled kinematics: 1e-12
    np.testing.assert_allclose(kernel.pos, reference.pos, rtol=0, atol=1e-12)
    q, v, _ = rbd.mjcf.from_mujoco_state(model, d.qpos, d.qvel)
    result = rbd.forward(model, q, v)
    assert len(result.contacts) == 1                # body poses from the compiled kinematics:
    np.testing.assert_allclose(result.contacts.pos, reference.pos, rtol=0, atol=1e-12)


def test_sphere_core_distance_is_exact_for_a_sphere_pair_of_ellipsoids():
    """GJK on a sphere and a spherical ellipsoid: the closed-form distance and normal."""
    R = rbd.spatial.rotz(0.3) @ rbd.spatial.rotx(0.2)
    pos2 = np.array([0.0, 0.0, 0.29])
    found = cvx.convex("sphere", "ellipsoid", np.zeros(3), np.eye(3), np.array([0.1, 0, 0]),
                       pos2, R, np.full(3, 0.2), 0.0, 0.1, 0.2)
    np.testing.assert_allclose(found.dist, [-0.01], rtol=0, atol=1e-12)
    np.testing.assert_allclose(found.frame[0, 0], [0, 0, 1], rtol=0, atol=1e-6)
    np.testing.assert_allclose(found.pos[0], [0, 0, 0.095], rtol=0, atol=1e-6)


@pytest.mark.parametrize("option", ['<option ccd_tolerance="1e-8"/>',
                                    '<option><flag nativeccd="disable"/></option>'])
def test_convex_collision_options_rbd_does_not_follow_are_named(tmp_path, option):
    """A file that changes MuJoCo's convex collision settings is told rbd keeps them."""
    path = tmp_path / "options.xml"
    path.write_text(f"<mujoco>{option}<worldbody><body><freejoint/>"
                    '<geom type="ellipsoid" size=".1 .2 .3"/></body></worldbody></mujoco>')
    with pytest.warns(RuntimeWarning, match="convex collision"):
        rbd.load_mjcf(str(path))


# --- a can standing on a table ---------------------------------------------------------------
#: A can (cylinder) on a box, upright or tilted by a few degrees, after 2 s of
#: ``mj_step``'s semi-implicit Euler and of ``rbd.simulate``'s: it stands on its cap, 1.1e-4
#: into the box (the soft contact's rest depth) with MuJoCo's four contacts.  The two runs
#: part where MuJoCo's rotating search and rbd's keep different four of the cap's 16
#: corners on a tie (module notes of collision_multiccd): measured final heights 1.3e-7
#: (upright) and 3.5e-7 (tilted) apart, the can sliding 1e-5 apart in the plane.  The bound is
#: 1% of the rest depth; a can falling through the box ends metres away.
ATOL_CAN_HEIGHT = 1e-6
#: The first 0.1 s of the upright can, on both paths: heights within 9.2e-7 of MuJoCo's
#: (measured worst, readable path; the same tie parts them).
ATOL_CAN_LANDING = 2e-6
CAN = """<mujoco><option timestep="0.002"/><worldbody>
<geom type="box" size="0.5 0.5 0.1"/>
<body pos="0 0 0.25" euler="{tilt}"><freejoint/><geom type="cylinder" size="0.05 0.15" mass="0.3"/>
</body></worldbody></mujoco>"""


def _can(tmp_path, tilt: str):
    """rbd's model of a can on a box, MuJoCo's, MuJoCo's data (semi-implicit Euler), rbd's
    initial state."""
    path = tmp_path / "can.xml"
    path.write_text(CAN.format(tilt=tilt))
    model, mm, d = rbd.testing.mujoco_pair(path, integrator="euler")
    q0, v0, _ = rbd.mjcf.from_mujoco_state(model, d.qpos, d.qvel)
    return model, mm, d, q0, v0


@pytest.mark.usefixtures("require_kernels")
@pytest.mark.parametrize("tilt", ["0 0 0", "3 2 0"])
def test_can_on_a_box_stands_as_in_mujoco(tmp_path, tilt):
    """A can on a box, upright or tilted 3 and 2 degrees about x and y (it settles onto its
    cap), 2 s on the compiled contact step: it stands at MuJoCo's height with MuJoCo's four
    contacts, and no warning (no pair left out)."""
    pytest.importorskip("mujoco", reason="MuJoCo is the reference trajectory")
    from helpers import mujoco_qpos_path

    model, mm, d, q0, v0 = _can(tmp_path, tilt)
    steps = round(2.0 / mm.opt.timestep)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        traj = rbd.simulate(model, q0, v0, 2.0, mm.opt.timestep, integrator="euler")
    expected = mujoco_qpos_path(mm, d, steps)
    got = rbd.mjcf.to_mujoco_state(model, traj.q)[0]
    assert len(got) == steps + 1
    assert got[-1, 2] == pytest.approx(expected[-1, 2], abs=ATOL_CAN_HEIGHT)
    assert traj.contact_count[-1] == d.ncon == 4


@pytest.mark.parametrize("backend", ["reference", None])
def test_can_on_a_box_lands_as_in_mujoco(tmp_path, backend):
    """The upright can's first 0.1 s on the readable path and the default one (compiled
    where built): MuJoCo's heights at every step, four contacts, no warning."""
    pytest.importorskip("mujoco", reason="MuJoCo is the reference trajectory")
    from helpers import mujoco_qpos_path

    model, mm, d, q0, v0 = _can(tmp_path, "0 0 0")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        traj = rbd.simulate(model, q0, v0, 0.1, mm.opt.timestep, integrator="euler",
                            backend=backend)
    got = rbd.mjcf.to_mujoco_state(model, traj.q)[0]
    expected = mujoco_qpos_path(mm, d, len(got) - 1)
    np.testing.assert_allclose(got[:, 2], expected[:, 2], rtol=0, atol=ATOL_CAN_LANDING)
    assert traj.contact_count[-1] == d.ncon == 4
