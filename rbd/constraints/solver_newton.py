r"""MuJoCo's constrained dynamics as a convex problem in the accelerations, solved by Newton.

MuJoCo ("Computation" chapter, *Constraint solver*: *Primal problem*, *Algorithms*; source
``engine_solver.c``, ``mj_constraintUpdate`` in ``engine_core_constraint.c``)
finds the accelerations :math:`a` as the unique minimizer of

.. math::

    f(a) = \tfrac12 (a - a_0)^T M (a - a_0) + s(J a - a^{\mathrm{ref}}),

where :math:`a_0 = M^{-1}(\tau - h)` is the unconstrained acceleration and
:math:`s` sums, row by row (:func:`constraint_update`):

* equality rows: :math:`\tfrac12 D_i\,\mathrm{jar}_i^2`;
* friction-loss rows: the Huber function, quadratic within
  :math:`|\mathrm{jar}_i| < R_i\,\mathrm{floss}_i`, linear with slope
  :math:`\mathrm{floss}_i` beyond;
* unilateral rows (limits, frictionless and pyramidal contacts):
  :math:`\tfrac12 D_i\,\mathrm{jar}_i^2` when :math:`\mathrm{jar}_i < 0`, else 0;
* elliptic contacts: zero in the dual cone's "top zone", the full quadratic in
  the "bottom zone", and :math:`\tfrac12 D_m (N - \mu T)^2` in between, with
  :math:`N = \mu\,\mathrm{jar}_0`, :math:`T = \|(\mu_j \mathrm{jar}_j)_j\|` and
  :math:`D_m = D_0/(\mu^2 (1 + \mu^2))`.

The constraint force is :math:`-\partial s/\partial\,\mathrm{jar}`, so
:math:`M (a - a_0) = J^T f` at the minimum.  :func:`solve_newton` takes Newton
steps with the exact Hessian (:math:`M + J^T \mathrm{diag}(D_{\mathrm{active}}) J`
plus the cone blocks), MuJoCo's default solver, with the line search run to
convergence (MuJoCo stops its own at ``ls_tolerance``); the minimizer is
unique, so both reach the same accelerations.

This text builds and factors the Hessian anew at every step.  The compiled twin
(``rbd/_kernels/solver_newton.pyx``) keeps the Cholesky factor of
:math:`M + J_q^T D_q J_q` between steps and updates it by a rank-one update or
downdate with :math:`\sqrt{D_r} J_r` for each row that entered or left the
quadratic set (MuJoCo's ``HessianIncremental``), rebuilding it when a downdate
would cancel most of a pivot; the middle-zone cones are added to a copy of that
factor by rank-one updates (``add_cones``).  The factor is the same to rounding,
so the two return the same accelerations to rounding.
"""

from __future__ import annotations

import dataclasses

import numpy as np


@dataclasses.dataclass
class ConstraintRows:
    """The rows of the soft constraints, in MuJoCo's order.

    Attributes
    ----------
    J : (nefc, nv) ndarray
    aref, D, R : (nefc,) ndarray
        Reference acceleration, 1/R, regularizer.
    ne, nf : int
        Equality rows come first, then ``nf`` friction-loss rows, then the
        unilateral rows and the contacts.
    frictionloss : (nefc,) ndarray
        The friction-loss bound of rows ``ne .. ne + nf`` (0 elsewhere).
    cones : tuple
        The elliptic contacts, ``(start, dim, mu, friction)`` each: first row,
        ``condim``, ``mu`` of the regularized cone and the 5 friction coefficients;
        every other row after ``ne + nf`` is unilateral.
    """

    J: np.ndarray
    aref: np.ndarray
    D: np.ndarray
    R: np.ndarray
    ne: int = 0
    nf: int = 0
    frictionloss: np.ndarray | None = None
    cones: tuple = ()

    def __post_init__(self):
        if self.frictionloss is None:
            self.frictionloss = np.zeros(len(self.aref))


def _cone_update(jar, D0, mu, friction, dim):
    """Force, cost and Hessian block of one elliptic contact (``mj_constraintUpdate``)."""
    scale = np.concatenate([[mu], friction[: dim - 1]])
    u = jar * scale
    n, t = u[0], np.linalg.norm(u[1:])
    if n >= mu * t or (t <= 0 and n >= 0):                     # top zone
        return np.zeros(dim), 0.0, None, "satisfied"
    if mu * n + t <= 0 or (t <= 0 and n < 0):                  # bottom zone
        return None, None, None, "quadratic"
    dm = D0 / (mu * mu * (1 + mu * mu))                        # middle zone
    nmt = n - mu * t
    force = np.empty(dim)
    force[0] = -dm * nmt * mu
    force[1:] = -force[0] / t * u[1:] * friction[: dim - 1]
    h = np.zeros((dim, dim))
    h[0, 0] = 1.0
    h[0, 1:] = -mu / t * u[1:]
    h[1:, 1:] = mu * n / t ** 3 * np.outer(u[1:], u[1:]) + (mu * mu - mu * n / t) * np.eye(dim - 1)
    h = np.triu(h)
    h = h + np.triu(h, 1).T
    h = dm * scale[:, None] * h * scale[None, :]
    return force, 0.5 * dm * nmt * nmt, h, "cone"


def constraint_update(rows: ConstraintRows, jar: np.ndarray):
    """Forces, cost :math:`s`, quadratic-row mask and cone Hessian blocks at ``jar``.

    Returns
    -------
    force : (nefc,) ndarray
    cost : float
    quadratic : (nefc,) bool ndarray
        Rows whose cost is ``D jar² / 2`` (they enter the Hessian with ``D``).
    cones : list of (start, (dim, dim) ndarray)
        Hessian blocks of the elliptic contacts in the middle zone.
    """
    D, R, floss = rows.D, rows.R, rows.frictionloss
    force = -D * jar
    quadratic = np.ones(len(jar), dtype=bool)
    ne, nf = rows.ne, rows.nf
    cost = 0.0
    # --- friction loss: Huber, linear beyond |jar| ≥ R floss
    for i in range(ne, ne + nf):
        if jar[i] <= -R[i] * floss[i]:
            cost += -0.5 * R[i] * floss[i] ** 2 - floss[i] * jar[i]
            force[i], quadratic[i] = floss[i], False
        elif jar[i] >= R[i] * floss[i]:
            cost += -0.5 * R[i] * floss[i] ** 2 + floss[i] * jar[i]
            force[i], quadratic[i] = -floss[i], False
    in_cone = np.zeros(len(jar), dtype=bool)
    blocks = []
    # --- elliptic cones: by the zone of the dual cone
    for start, dim, mu, friction in rows.cones:
        block = slice(start, start + dim)
        in_cone[block] = True
        f, c, h, state = _cone_update(jar[block], D[start], mu, np.asarray(friction), dim)
        if state != "quadratic":
            force[block], quadratic[block] = f, False
            cost += c
            if h is not None:
                blocks.append((start, h))
    # --- unilateral rows: satisfied (jar ≥ 0) rows carry nothing
    unilateral = np.arange(len(jar)) >= ne + nf
    satisfied = unilateral & ~in_cone & (jar >= 0)
    force[satisfied], quadratic[satisfied] = 0.0, False
    cost += 0.5 * np.sum(D[quadratic] * jar[quadratic] ** 2)
    return force, cost, quadratic, blocks


def primal_cost(M, a0, rows: ConstraintRows, a) -> float:
    """:math:`f(a)`, the cost the accelerations minimize (Gauss plus :math:`s`)."""
    da = a - a0
    return 0.5 * da @ M @ da + constraint_update(rows, rows.J @ a - rows.aref)[1]


def _line_search(M, a0, rows, a, step, rtol=1e-12):
    r"""The minimizer :math:`\alpha` of :math:`f(a + \alpha\,\mathrm{step})` (exact line search).

    :math:`\varphi'(\alpha)` is non-decreasing (:math:`f` is convex): bracket its
    root by doubling, then Newton steps on :math:`\varphi'` kept inside the
    bracket (bisection when a step leaves it), until :math:`|\varphi'|` is
    ``rtol`` times :math:`|\varphi'(0)|`.
    """
    Mstep = M @ step
    Jstep = rows.J @ step

    def derivatives(alpha):
        x = a + alpha * step
        jar = rows.J @ x - rows.aref
        force, _, quadratic, blocks = constraint_update(rows, jar)
        d1 = Mstep @ (x - a0) - Jstep @ force
        d2 = step @ Mstep + np.sum(rows.D[quadratic] * Jstep[quadratic] ** 2)
        for start, h in blocks:
            js = Jstep[start:start + h.shape[0]]
            d2 += js @ h @ js
        return d1, d2

    tol = rtol * abs(derivatives(0.0)[0])
    low, high = 0.0, 1.0
    # --- bracket: double α until φ'(α) ≥ 0 (φ is convex)
    d1, d2 = derivatives(high)
    while d1 < 0:
        low, high = high, 2 * high
        d1, d2 = derivatives(high)
    alpha = high
    # --- safeguarded Newton on φ' (each point evaluated once)
    for _ in range(60):
        if abs(d1) <= tol:
            break
        if d1 > 0:
            high = alpha
        else:
            low = alpha
        guess = alpha - d1 / d2 if d2 > 0 else 0.5 * (low + high)
        guess = guess if low < guess < high else 0.5 * (low + high)
        if abs(guess - alpha) <= 1e-15 * alpha:
            break
        alpha = guess
        d1, d2 = derivatives(alpha)
    return alpha


def _hessian(M, rows: ConstraintRows, quadratic, blocks) -> np.ndarray:
    r""":math:`H = M + J_q^T \mathrm{diag}(D_q) J_q + \sum J_c^T h J_c`, the Newton matrix
    of the quadratic rows and the cone blocks that :func:`constraint_update` returned."""
    Jq = rows.J[quadratic]
    H = M + Jq.T @ (rows.D[quadratic, None] * Jq)
    for start, h in blocks:
        Jc = rows.J[start:start + h.shape[0]]
        H += Jc.T @ h @ Jc
    return H


def hessian_factor(M, rows: ConstraintRows, jar, previous=None) -> np.ndarray:
    r"""The lower Cholesky factor :math:`L` of the Newton matrix at ``jar`` (:math:`H = L L^T`).

    Parameters
    ----------
    M : (nv, nv) ndarray
    rows : ConstraintRows
    jar : (nefc,) ndarray
        :math:`J a - a^{\mathrm{ref}}` at the point of the Newton step.
    previous : (nefc,) ndarray, optional
        ``jar`` at the step before.  This text builds :math:`H` anew and does not read it;
        the compiled twin factors :math:`H` at ``previous`` and updates that factor to
        ``jar`` row by row (rank-one updates and downdates, as in its Newton iteration), so
        that the two factors can be compared.
    """
    _, _, quadratic, blocks = constraint_update(rows, np.asarray(jar, dtype=float))
    return np.linalg.cholesky(_hessian(M, rows, quadratic, blocks))


def solve_newton(M, a0, rows: ConstraintRows, a_init=None, iterations: int = 100,
                 tolerance: float = 1e-14, scale: float | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    r"""Accelerations and constraint forces by MuJoCo's primal Newton method.

    Parameters
    ----------
    M : (nv, nv) ndarray
        Joint-space inertia (with armature).
    a0 : (nv,) ndarray
        Unconstrained acceleration :math:`M^{-1}(\tau - h)`.
    rows : ConstraintRows
    a_init : (nv,) ndarray, optional
        Warm start (default ``a0``).
    iterations : int
        Newton steps (line searches) at most.
    tolerance : float
        MuJoCo's stopping rule (``mj_solPrimal`` in ``engine_solver.c``), each quantity
        multiplied by ``scale``: stop after a step whose cost decrease
        :math:`f(a_k) - f(a_{k+1})` is positive and below ``tolerance``, or when the
        gradient norm :math:`\|\nabla f\|` or the Newton decrement
        :math:`\tfrac12 \nabla f^T H^{-1} \nabla f` is below it (before the first
        step: when both are); also when a step no longer moves the accelerations.
    scale : float, optional
        MuJoCo's :math:`1 / (\bar m \max(1, n_v))` with :math:`\bar m` the model's
        ``meaninertia`` (the mean diagonal of :math:`M` at ``qpos0``,
        :func:`rbd.constraints.mujoco_model.solver_scale`); default
        :math:`1 / \operatorname{tr} M`, the same at this :math:`M`.

    Returns
    -------
    qacc : (nv,) ndarray
    force : (nefc,) ndarray
        :math:`M (\mathrm{qacc} - a_0) = J^T \mathrm{force}`.
    """
    a = np.array(a0 if a_init is None else a_init, dtype=float)
    if scale is None:
        scale = 1.0 / max(np.trace(M), np.finfo(float).tiny)
    bound = tolerance / scale              # the rule on unscaled quantities
    previous = None                        # the cost before the last step
    for k in range(iterations + 1):
        jar = rows.J @ a - rows.aref
        force, cost, quadratic, blocks = constraint_update(rows, jar)
        Mda = M @ (a - a0)
        cost += 0.5 * (a - a0) @ Mda
        grad = Mda - rows.J.T @ force
        improved = previous is not None and 0 < previous - cost < bound
        if improved or k == iterations:
            break
        step = -np.linalg.solve(_hessian(M, rows, quadratic, blocks), grad)
        small_gradient = np.linalg.norm(grad) < bound
        small_decrement = max(0.0, -0.5 * (grad @ step)) < bound
        if (small_gradient and small_decrement) if k == 0 else (small_gradient
                                                                   or small_decrement):
            break
        a_next = a + _line_search(M, a0, rows, a, step) * step
        settled = np.linalg.norm(a_next - a) <= 1e-15 * (1 + np.linalg.norm(a))
        a, previous = a_next, cost
        if settled:                       # rounding: no step moves a any more
            break
    force = constraint_update(rows, rows.J @ a - rows.aref)[0]
    return a, force
