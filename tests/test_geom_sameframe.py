"""MuJoCo's ``geom_sameframe``: geom frames within 1e-6 of the body or inertial frame take it."""

from __future__ import annotations

import numpy as np
import pytest

import rbd
from rbd.mjcf._sameframe import FRAME_EPS, snapped_pose

#: Geom world poses are closed-form in the same body poses: what is left is rounding.
POSE_ATOL = 1e-12

#: A box tilted by ``euler`` with a small sphere on its local x axis: the body's principal
#: axes are the box's (the sphere adds only to moments about axes across x) and its centre
#: of mass is 5e-7 from the box centre along that axis, so MuJoCo puts the box at the
#: inertial frame (mjSAMEFRAME_INERTIA); the second body's capsule is 3e-7 from the body
#: origin with the body's axes (mjSAMEFRAME_BODY).
SCENE = """
<mujoco>
  <worldbody>
    <body name="a" pos="0 0 1" euler="10 20 30">
      <freejoint/>
      <geom name="box" type="box" size="0.1 0.2 0.3" euler="15 -25 40" pos="0.1 0.2 0.3"/>
      <geom name="bead" type="sphere" size="0.01" pos="{bead}"/>
    </body>
    <body name="b" pos="1 0 1" euler="5 6 7">
      <freejoint/>
      <geom name="cap" type="capsule" size="0.05 0.2" pos="3e-7 0 0"/>
    </body>
  </worldbody>
</mujoco>
"""


def _scene(tmp_path):
    """The MJCF file of :data:`SCENE`, the bead placed to move the centre of mass 5e-7."""
    from rbd.mjcf._orientation import _euler

    R = _euler(np.deg2rad([15.0, -25.0, 40.0]), "xyz")
    m_box, m_bead = 1000 * 8 * 0.1 * 0.2 * 0.3, 1000 * 4 / 3 * np.pi * 0.01 ** 3
    offset = 5e-7 * (m_box + m_bead) / m_bead                # bead distance giving com shift
    bead = np.array([0.1, 0.2, 0.3]) + R[:, 0] * offset
    path = tmp_path / "sameframe.xml"
    path.write_text(SCENE.format(bead=" ".join(repr(float(x)) for x in bead)))
    return path


def test_snapped_pose_takes_the_body_frame_within_frame_eps():
    """A pose within 1e-6 of the body frame becomes it; one farther stays (kFrameEps)."""
    near, far = np.eye(4), np.eye(4)
    near[:3, 3] = [0.3 * FRAME_EPS, 0, 0]
    far[:3, 3] = [3 * FRAME_EPS, 0, 0]
    axes = np.eye(3)[:, [2, 1, 0]] * [1.0, -1.0, 1.0]             # inertial axes: a turn
    assert np.array_equal(snapped_pose(near, np.zeros(3), axes), np.eye(4))
    assert np.array_equal(snapped_pose(far, np.zeros(3), axes), far)


def test_geom_frames_snap_as_mujocos(tmp_path, backend):
    """Both snapped geoms sit where MuJoCo puts them (5e-7 and 3e-7 away unsnapped)."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the reference")
    path = _scene(tmp_path)
    model, mm, d = rbd.testing.mujoco_pair(path)
    assert list(mm.geom_sameframe) == [mujoco.mjtSameFrame.mjSAMEFRAME_INERTIA,
                                       mujoco.mjtSameFrame.mjSAMEFRAME_BODYROT,
                                       mujoco.mjtSameFrame.mjSAMEFRAME_BODY]
    rng = np.random.default_rng(1)
    d.qvel[:] = rng.standard_normal(mm.nv)
    for _ in range(20):
        mujoco.mj_step(mm, d)
    mujoco.mj_forward(mm, d)
    q, _, _ = rbd.mjcf.from_mujoco_state(model, d.qpos, d.qvel)
    poses = rbd.geom_poses(model, q, backend=backend)
    np.testing.assert_allclose(poses[:, :3, 3], d.geom_xpos, rtol=0, atol=POSE_ATOL)
    np.testing.assert_allclose(poses[:, :3, :3].reshape(-1, 9), d.geom_xmat, rtol=0,
                               atol=POSE_ATOL)


def test_static_body_inertia_is_still_not_checked(tmp_path):
    """A body welded to the world: rbd never uses its inertia, and snapping its geoms does
    not make an invalid one an error (its geom keeps its own frame)."""
    path = tmp_path / "static.xml"
    path.write_text('<mujoco><worldbody><body name="shelf" pos="0 0 1">'
                    '<inertial pos="0 0 0" mass="-1" diaginertia="1 1 1"/>'
                    '<geom type="box" size=".1 .1 .1" pos="0.2 0 0" euler="0 0 30"/></body>'
                    '<body name="ball"><freejoint/><geom type="sphere" size=".1"/></body>'
                    '</worldbody></mujoco>')
    model = rbd.load_mjcf(str(path))
    q = np.zeros(model.nq)
    q[6] = 1.0                                             # the ball's identity (x, y, z, w)
    pose = rbd.geom_poses(model, q)[0]
    np.testing.assert_allclose(pose[:3, 3], [0.2, 0, 1], rtol=0, atol=1e-15)
