r"""MuJoCo's principal axes of an inertia tensor: its compiler's Jacobi iteration ``mjuu_eig3``.

MuJoCo's compiler diagonalizes an inertia tensor in three places, each by ``mjuu_eig3``
(``user_util.cc``), and stores the axes it finds as a quaternion:

* a mesh's inertia (``mjCMesh::Process``, ``user_mesh.cc``): the mesh is moved to that
  frame (``mesh_pos``, ``mesh_quat``) and its geom keeps only the principal moments;
* a body's inertia summed from several geoms (``mjCBody::InertiaFromGeom``,
  ``user_objects.cc``): the inertial frame ``body_iquat``, which a geom within 1e-6 of it
  then takes (:mod:`rbd.mjcf._sameframe`);
* an ``<inertial fullinertia>`` (``mjuu_fullInertia``): ``body_iquat`` too.

``mjuu_eig3`` turns a quaternion ``q`` by Jacobi rotations, each zeroing the largest
off-diagonal element of ``D = Eᵀ M E`` (``E`` the rotation of ``q``), until that element
is small; then it sorts the diagonal in decreasing order by quarter turns.  Where two
moments are close the axes in their plane depend on where it stops, and so on the
stopping rule, not only on the tensor: rbd runs the same iteration, so that it finds the
same axes to rounding (:func:`eig3`).

MuJoCo 4.0's compiler (the installed binary, whose ``mjuu_eig3`` takes the tolerance as a
fifth argument: read from its machine code) differs from the 3.12 source in three ways,
and this module follows 4.0: (1) the iteration stops once the largest off-diagonal
element is at most ``max(4e-15, tol)`` times the largest element of ``M`` (3.12: below
1e-12 absolute, whatever the tensor's units), with ``tol`` = 1e-7 for meshes and 4e-15
for bodies; (2) the test "cosine within 1e-12 of 1" that stopped 3.12 after a
rotation smaller than 1.4e-6 rad is gone; (3) the rotation's half angle is taken from
``tan(θ/2) = t / (1 + √(1 + t²))`` (3.12: ``sin(θ/2) = √(½ − ½ cos θ)``).  The sort
swaps two moments when they differ by more than ``max(1e-12, tol)`` times that largest
element.  Compared with the binary's own routine on 80 000 tensors (spread, nearly equal
and nearly diagonal, 1e-14 to 1e3; both tolerances): the same moments, quaternions and
iteration counts, bit for bit.  ``tests/test_principal_axes.py`` compares the frames
with its ``mesh_quat`` and ``body_iquat`` on real files.

Python floats throughout, each product in MuJoCo's order: about 60 µs a call (a few
rotations), against 0.5 s to load dm_control's fruit fly, which needs 141 calls.
"""

from __future__ import annotations

import math

import numpy as np

#: ``tol`` of ``mjCMesh::Process``: a mesh's frame stops at 1e-7 of its largest element.
MESH_TOL = 1e-7

#: ``tol`` of ``mjCBody`` (``InertiaFromGeom``, ``fullinertia``, ``AccumulateInertia``).
BODY_TOL = 4e-15

#: Floors of the two relative thresholds: stopping (off-diagonal) and sorting (moments).
_STOP_FLOOR, _SORT_FLOOR = 4e-15, 1e-12

#: ``mjEPS``: ``mjuu_normvec`` leaves a vector whose norm is within it of 1.
_MJ_EPS = 1e-14

#: ``cos(π/4) = sin(π/4)`` as MuJoCo writes it: the quarter turns of the sort.
_HALF_SQRT2 = 0.707106781186548

_MAX_ITERATIONS = 500


def mj_normalized(v: list) -> tuple[list, float]:
    """``mjuu_normvec``: ``(v / |v|, |v|)``; ``(v, 0)`` when ``|v|²`` is below mjEPS, and
    ``v`` itself when ``|v|`` is within mjEPS of 1."""
    norm2 = 0.0
    for x in v:
        norm2 += x * x
    if norm2 < _MJ_EPS:
        return v, 0.0
    norm = math.sqrt(norm2)
    return ([x / norm for x in v] if abs(norm - 1) > _MJ_EPS else v), norm


def _normalized(v: list) -> list:
    return mj_normalized(v)[0]


def _quat_product(a: list, b: list) -> list:
    """``mjuu_mulquat``: the Hamilton product ``a b`` of ``(w, x, y, z)`` quaternions, unit."""
    return _normalized([a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
                        a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
                        a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
                        a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]])


def _quat_matrix(q: list) -> list:
    """``mjuu_quat2mat``: the rotation of a unit quaternion, row-major."""
    if q == [1.0, 0.0, 0.0, 0.0]:
        return [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    q00, q01, q02, q03 = q[0] * q[0], q[0] * q[1], q[0] * q[2], q[0] * q[3]
    q11, q12, q13 = q[1] * q[1], q[1] * q[2], q[1] * q[3]
    q22, q23, q33 = q[2] * q[2], q[2] * q[3], q[3] * q[3]
    return [q00 + q11 - q22 - q33, 2 * (q12 - q03), 2 * (q13 + q02),
            2 * (q12 + q03), q00 - q11 + q22 - q33, 2 * (q23 - q01),
            2 * (q13 - q02), 2 * (q23 + q01), q00 - q11 - q22 + q33]


def _product(A: list, B: list) -> list:
    """``mjuu_mulmat``: ``A B`` of row-major 3 × 3 matrices, each sum left to right."""
    return [A[r] * B[c] + A[r + 1] * B[c + 3] + A[r + 2] * B[c + 6]
            for r in (0, 3, 6) for c in (0, 1, 2)]


def _transpose(A: list) -> list:
    return [A[0], A[3], A[6], A[1], A[4], A[7], A[2], A[5], A[8]]


def _largest_off_diagonal(D: list) -> tuple[int, int, int]:
    """Row, column and rotation axis of the largest off-diagonal element (first wins a tie)."""
    d01, d02, d12 = abs(D[1]), abs(D[2]), abs(D[5])
    if d01 > d02 and d01 > d12:
        return 0, 1, 2
    return (0, 2, 1) if d02 > d12 else (1, 2, 0)


def _jacobi_turn(D: list, r: int, c: int, axis: int) -> list:
    """The quaternion of the rotation about ``axis`` that zeroes ``D[r, c]``: the 2 × 2
    symmetric Schur decomposition (``tan θ = t``), by its half angle."""
    tau = (D[4 * c] - D[4 * r]) / (2 * D[3 * r + c])
    root = math.sqrt(1 + tau * tau)
    t = 1.0 / (tau + root) if tau >= 0 else -1.0 / (root - tau)
    half_tan = t / (1 + math.sqrt(1 + t * t))
    cos = 1 / math.sqrt(1 + half_tan * half_tan)
    turn = [cos, 0.0, 0.0, 0.0]
    turn[axis + 1] = (half_tan if axis == 1 else -half_tan) * cos
    return turn


def eig3(I, tol: float = BODY_TOL) -> tuple[list, list, int]:
    """MuJoCo 4.0's ``mjuu_eig3(eigval, eigvec, quat, mat, tol)``: ``(moments, quat, iterations)``.

    ``I`` is a symmetric 3 × 3 tensor (any array-like of 9 numbers, row-major); the
    moments decrease and are the diagonal of ``Eᵀ I E``, ``E`` the rotation of the unit
    quaternion ``quat = (w, x, y, z)`` (Python lists).  ``tol``: :data:`MESH_TOL` or
    :data:`BODY_TOL` (module notes).
    """
    M = [float(x) for x in np.ravel(I)]
    if len(M) != 9:
        raise ValueError(f"eig3: a 3 x 3 tensor is needed, got {len(M)} numbers")
    scale = 0.0
    for x in M:
        scale = max(abs(x), scale)
    stop = max(_STOP_FLOOR, tol) * scale
    quat = [1.0, 0.0, 0.0, 0.0]
    iterations = _MAX_ITERATIONS
    for k in range(_MAX_ITERATIONS):
        E = _quat_matrix(quat)
        D = _product(_product(_transpose(E), M), E)
        moments = [D[0], D[4], D[8]]
        r, c, axis = _largest_off_diagonal(D)
        if abs(D[3 * r + c]) <= stop:
            iterations = k
            break
        quat = _normalized(_quat_product(quat, _jacobi_turn(D, r, c, axis)))
    return (*_sorted(moments, quat, max(_SORT_FLOOR, tol) * scale), iterations)


def _sorted(moments: list, quat: list, gap: float) -> tuple[list, list]:
    """``mjuu_eig3``'s bubble sort (pairs 0-1, 1-2, 0-1) into decreasing moments: a swap
    of two moments more than ``gap`` apart is a quarter turn about the third axis."""
    for j in range(3):
        lead = j % 2
        if moments[lead] + gap < moments[lead + 1]:
            moments[lead], moments[lead + 1] = moments[lead + 1], moments[lead]
            turn = [_HALF_SQRT2, 0.0, 0.0, 0.0]
            turn[(lead + 2) % 3 + 1] = _HALF_SQRT2
            quat = _normalized(_quat_product(quat, turn))
    return moments, quat


def quat_rotation(quat) -> np.ndarray:
    """The rotation (3 × 3 array) of a ``(w, x, y, z)`` quaternion, as ``mjuu_quat2mat``."""
    return np.array(_quat_matrix([float(x) for x in quat])).reshape(3, 3)


def principal_axes(I, tol: float = BODY_TOL) -> tuple[np.ndarray, np.ndarray]:
    """MuJoCo's principal axes (columns of a rotation) and moments (decreasing) of ``I``."""
    moments, quat, _ = eig3(I, tol)
    return quat_rotation(quat), np.array(moments)


def principal_frame(I: np.ndarray) -> np.ndarray:
    """The rotation of MuJoCo's mesh frame (``mesh_quat``) for the mesh inertia ``I``
    (density 1, about its centre).  A mesh's vertices are stored in this frame, about its
    centre (``mesh_pos``): ``v_mesh = Rᵀ (v − c)``."""
    return principal_axes(I, MESH_TOL)[0]
