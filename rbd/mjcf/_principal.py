"""MuJoCo's principal axes of a mesh: the inertia it keeps and the mesh frame it stores."""

from __future__ import annotations

import math

import numpy as np

#: The Jacobi iteration stops once the largest off-diagonal element is below this fraction of
#: the largest element: fitted to MuJoCo 4.0's mesh frames (``mesh_quat``), see
#: :func:`principal_inertia`.
_JACOBI_RTOL = 1e-7


def _quat_matrix(quat: np.ndarray) -> np.ndarray:
    """Rotation of a unit quaternion ``(w, x, y, z)``."""
    w, x, y, z = quat
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _quat_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    aw, av, bw, bv = a[0], a[1:], b[0], b[1:]
    return np.concatenate([[aw * bw - av @ bv], aw * bv + bw * av + np.cross(av, bv)])


def principal_inertia(I: np.ndarray) -> np.ndarray:
    """The inertia tensor MuJoCo keeps of a mesh: ``I``'s diagonal in the axes MuJoCo finds.

    MuJoCo moves a mesh to its principal frame (``mesh_pos``, ``mesh_quat``) and
    keeps only the principal moments there.  Its compiler finds the frame by
    Jacobi rotations accumulated in a quaternion (``mjuu_eig3``): each rotation
    zeroes the largest off-diagonal element of ``Eᵀ I E``.  Here the iteration
    stops once that element is below ``1e-7`` of the largest element of ``I``
    (or a rotation would not turn), the rule that reproduces MuJoCo 4.0's mesh
    frames (measured: slightly turned box meshes, dm-control's fruit fly and
    dog; the tensors then agree to about 5e-10 relative, against 9e-8 for the
    exact tensor).  What is left off the diagonal is dropped; the returned
    ``E diag(Eᵀ I E) Eᵀ`` is that tensor, so that the dynamics are MuJoCo's.
    (MuJoCo then sorts the moments, which turns the frame by right angles and
    leaves the tensor as it is.)
    """
    _, E, D = _jacobi(I)
    return (E * np.diag(D)) @ E.T


#: MuJoCo's ``kEigEPS``: principal moments closer than this are not reordered.
_EIG_EPS = 1e-12


def principal_frame(I: np.ndarray) -> np.ndarray:
    """The rotation of MuJoCo's mesh frame (``mesh_quat``) for the inertia tensor ``I``.

    The Jacobi frame of :func:`principal_inertia`, then turned by right angles so that
    the moments decrease along x, y, z (``mjuu_eig3``'s bubble sort in the order 0, 1, 0,
    each swap a quarter turn about the third axis).  A mesh's vertices are stored in
    this frame, about its centre (``mesh_pos``): ``v_mesh = Rᵀ (v − c)``.
    """
    quat, _, D = _jacobi(I)
    moments = list(np.diag(D))
    for j in range(3):
        lead = j % 2
        if moments[lead] + _EIG_EPS < moments[lead + 1]:
            moments[lead], moments[lead + 1] = moments[lead + 1], moments[lead]
            turn = np.zeros(4)
            turn[0] = turn[(lead + 2) % 3 + 1] = 0.707106781186548
            quat = _quat_product(quat, turn)
            quat /= np.linalg.norm(quat)
    return _quat_matrix(quat)


def _jacobi(I: np.ndarray) -> tuple:
    """``(quat, E, Eᵀ I E)``: the Jacobi iteration of :func:`principal_inertia`."""
    I = np.asarray(I, dtype=float)
    floor = _JACOBI_RTOL * np.abs(I).max()
    quat = np.array([1.0, 0.0, 0.0, 0.0])
    for _ in range(500):
        E = _quat_matrix(quat)
        D = E.T @ I @ E
        off = (abs(D[0, 1]), abs(D[0, 2]), abs(D[1, 2]))
        if off[0] > off[1] and off[0] > off[2]:
            r, c, axis = 0, 1, 2
        elif off[1] > off[2]:
            r, c, axis = 0, 2, 1
        else:
            r, c, axis = 1, 2, 0
        if abs(D[r, c]) < floor:
            break
        # the rotation about ``axis`` that zeroes D[r, c]: tan θ = t (2 × 2 symmetric Schur)
        tau = (D[c, c] - D[r, r]) / (2 * D[r, c])
        t = (1.0 if tau >= 0 else -1.0) / (abs(tau) + math.sqrt(1 + tau * tau))
        cos = 1.0 / math.sqrt(1 + t * t)
        if cos >= 1.0:
            break
        turn = np.zeros(4)
        turn[axis + 1] = math.sqrt(0.5 - 0.5 * cos) * (-1 if (tau >= 0) != (axis == 1) else 1)
        turn[0] = math.sqrt(1.0 - turn[axis + 1] ** 2)
        quat = _quat_product(quat, turn / np.linalg.norm(turn))
        quat /= np.linalg.norm(quat)
    return quat, E, D
