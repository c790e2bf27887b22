r"""MuJoCo's constrained dynamics from the dual side, solved by projected Gauss–Seidel.

The dual of the problem in :mod:`rbd.constraints.solver_newton` is a
quadratic program in the constraint forces (MuJoCo "Computation" chapter,
*Constraint solver*: *Dual problem*, *Algorithms*, PGS):

.. math::

    \min_{f \in \mathcal{K}} \tfrac12 f^T (A + R) f + f^T (J a_0 - a^{\mathrm{ref}}),
    \qquad A = J M^{-1} J^T,

with :math:`\mathcal{K}`: equality rows free, friction-loss rows in
:math:`[-\mathrm{floss}, \mathrm{floss}]`, unilateral rows :math:`f \ge 0`, and
each elliptic contact in its friction cone
:math:`f_0 \ge \|(f_j/\mu_j)_j\|`.  Gauss–Seidel sweeps minimize the cost over
one row (or one contact) at a time and project; then
:math:`a = a_0 + M^{-1} J^T f`.  A cone block is minimized in the scaled
forces :math:`y = (f_0, f_j/\mu_j)`, where the cone is the standard
second-order cone and the projection has a closed form.
"""

from __future__ import annotations

import numpy as np

from .solver_newton import ConstraintRows


def project_second_order_cone(y: np.ndarray) -> np.ndarray:
    """Euclidean projection onto :math:`\\{y : y_0 \\ge \\|y_{1:}\\|\\}`."""
    n, t = y[0], np.linalg.norm(y[1:])
    if t <= n:
        return y.copy()
    if t <= -n:
        return np.zeros_like(y)
    scale = 0.5 * (n + t)
    return np.concatenate([[scale], y[1:] * (scale / t)])


def _cone_blocks(A, rows):
    """Per elliptic contact: its rows, the force scaling and the scaled block of ``A``."""
    blocks = {}
    for start, dim, _, friction in rows.cones:
        s = np.concatenate([[1.0], np.asarray(friction[: dim - 1], float)])
        block = slice(start, start + dim)
        Ab = A[block, block] * s[:, None] * s[None, :]
        blocks[start] = (block, s, Ab, 1.0 / np.linalg.eigvalsh(Ab)[-1])
    return blocks


def _cone_step(A, b, f, block, s, Ab, step, sweeps=3):
    """Minimize the cost over one elliptic contact's forces, the others fixed.

    Projected gradient in the scaled forces ``y = f / s``, where the cone is
    the standard second-order cone.
    """
    c = s * (b[block] + A[block] @ f - A[block, block] @ f[block])
    y = f[block] / s
    for _ in range(sweeps):
        y_new = project_second_order_cone(y - step * (Ab @ y + c))
        done = np.max(np.abs(y_new - y)) <= 1e-16 * (1 + np.max(np.abs(y)))
        y = y_new
        if done:
            break
    f[block] = y * s


def solve_pgs(M, a0, rows: ConstraintRows, iterations: int = 2000,
              tolerance: float = 1e-15, force_init=None) -> tuple[np.ndarray, np.ndarray]:
    """Accelerations and constraint forces by projected Gauss–Seidel on the dual.

    Parameters
    ----------
    M, a0, rows
        As :func:`rbd.constraints.solver_newton.solve_newton`.
    iterations : int
        Sweeps over all rows at most.
    tolerance : float
        Stop when a sweep changes no force by more than ``tolerance`` times
        the largest force (plus one).
    force_init : (nefc,) array_like, optional
        Warm start (default zero), such as the previous time step's forces.

    Returns
    -------
    qacc : (nv,) ndarray
    force : (nefc,) ndarray
    """
    Minv_JT = np.linalg.solve(M, rows.J.T)
    A = rows.J @ Minv_JT + np.diag(rows.R)
    b = rows.J @ a0 - rows.aref
    nefc = len(b)
    f = np.zeros(nefc) if force_init is None else np.array(force_init, dtype=float)
    cones = _cone_blocks(A, rows)
    ne, nf = rows.ne, rows.nf

    for _ in range(iterations):
        previous = f.copy()
        i = 0
        while i < nefc:
            if i in cones:
                block, s, Ab, step = cones[i]
                _cone_step(A, b, f, block, s, Ab, step)
                i = block.stop
                continue
            value = f[i] - (A[i] @ f + b[i]) / A[i, i]
            if i >= ne + nf:
                value = max(0.0, value)
            elif i >= ne:
                value = np.clip(value, -rows.frictionloss[i], rows.frictionloss[i])
            f[i] = value
            i += 1
        if np.max(np.abs(f - previous), initial=0.0) <= tolerance * (1 + np.max(np.abs(f))):
            break
    return a0 + Minv_JT @ f, f
