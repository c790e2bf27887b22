r"""MuJoCo's ``geom_sameframe``: geom frames that the compiler replaces by a body frame.

MuJoCo's compiler (``user_model.cc``, "determine sameframe") compares each geom's
pose in its body with the body frame and with the body's inertial frame
(``body_ipos``, ``body_iquat``), component by component within ``kFrameEps`` =
1e-6 (a quaternion and its negative alike), and ``mj_kinematics`` then takes the
matching frame's world pose instead of composing the geom's own
(``mj_local2Global``).  The cases, first match wins:

====================  ==========================================  ==============================
flag                  test                                        geom pose in the body
====================  ==========================================  ==============================
``BODY``              pos ≈ 0, quat ≈ 1                           identity
``BODYROT``           quat ≈ 1                                    (I, pos)
``INERTIA``           pos ≈ ipos, quat ≈ iquat                    inertial frame
``INERTIAROT``        quat ≈ iquat                                (inertial rotation, pos)
``NONE``              otherwise                                   the geom's own
====================  ==========================================  ==============================

The snapped pose moves a geom by up to 1e-6 (dm_control's dog: its tail capsules by
2e-6), which its contacts inherit.  rbd snaps the geom's pose once, at load, so that
every backend computes the world pose from it.  A mesh geom is left as it is: MuJoCo
compares its re-centred frame (``mesh_pos``, ``mesh_quat``), which rbd does not keep.
The inertial frame is the body's centre of mass with, for an ``<inertial>``, its axes,
and for a body whose inertia is the sum of several geoms' (MuJoCo's
``InertiaFromGeom``) or a ``fullinertia``, the principal axes that MuJoCo's Jacobi
iteration finds (:func:`rbd.mjcf._principal.principal_axes`).  With two moments 3e-11
apart (dog's tail vertebrae) those axes in that plane depend on where the iteration
stops, which is why rbd runs MuJoCo's: on dog the snapped geoms' world poses then agree
with MuJoCo's to 1e-15 (4e-11 with exact eigenvectors, 2e-6 unsnapped).  A body of one
geom has its inertial frame in that geom's frame: no geom is moved there.
"""

from __future__ import annotations

import numpy as np

from ..spatial import rot_to_quat

#: MuJoCo's ``kFrameEps``: component-wise difference below which two frames are equal.
FRAME_EPS = 1e-6


def _same_quat(R1: np.ndarray, R2: np.ndarray) -> bool:
    """MuJoCo's ``IsSameQuat`` on the quaternions of two rotations (double cover)."""
    q1, q2 = rot_to_quat(R1), rot_to_quat(R2)
    return bool(np.all(np.abs(q1 - q2) < FRAME_EPS) or np.all(np.abs(q1 + q2) < FRAME_EPS))


def _same_vec(p1, p2) -> bool:
    return bool(np.all(np.abs(np.asarray(p1) - np.asarray(p2)) < FRAME_EPS))


def snapped_pose(pose: np.ndarray, com: np.ndarray | None, axes: np.ndarray | None
                 ) -> np.ndarray:
    """The geom pose MuJoCo uses, given its pose in the body, the body's centre of mass
    ``com`` and the axes of its inertial frame (a rotation, both in the body frame), or
    None (no inertial frame to snap to: the world, a body of one geom, whose inertial
    frame is that geom's own)."""
    pose = np.asarray(pose, float)
    R, p = pose[:3, :3], pose[:3, 3]
    out = pose.copy()
    if _same_quat(R, np.eye(3)):
        out[:3, :3] = np.eye(3)
        if _same_vec(p, np.zeros(3)):
            out[:3, 3] = 0.0
        return out
    if axes is None:
        return out
    if not _same_quat(R, axes):
        return out
    out[:3, :3] = axes
    if _same_vec(p, com):
        out[:3, 3] = com
    return out
