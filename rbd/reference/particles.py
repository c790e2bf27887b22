r"""Lagrangian dynamics of a system of particles (Liu & Jain, §2, Eqs. 1–17).

A system of point masses :math:`\mu_i` sits at Cartesian positions
:math:`r_i(q)` that depend on a few generalized coordinates :math:`q`.
Everything in this module follows from two facts:

* the Jacobian :math:`J_i = \partial r_i / \partial q` maps generalized
  velocities to particle velocities, :math:`\dot r_i = J_i \dot q` (L&J 15), and
  generalized forces to Cartesian ones by virtual work, :math:`Q_i = J_i^T f_i`
  (L&J 3);
* the kinetic energy is the quadratic form
  :math:`T = \tfrac12 \dot q^T M(q) \dot q` with
  :math:`M = \sum_i \mu_i J_i^T J_i` (L&J 16).

Lagrange's equations (L&J 13) then take the vector form
:math:`M\ddot q + C(q, \dot q) = Q` (L&J 14) with

.. math::

    C(q, \dot q) = \dot M \dot q - \tfrac12 \Big(\frac{\partial M}{\partial q}\dot q\Big)^T
    \dot q, \qquad
    C_j = \sum_k \dot M_{jk}\dot q_k
          - \tfrac12\, \dot q^T \frac{\partial M}{\partial q_j}\dot q
    \quad\text{(L\&J 17)}.

:class:`ParticleSystem` builds all of these symbolically with sympy;
:meth:`ParticleSystem.numeric` turns them into NumPy functions.  The last part
of the module treats a rigid body as many particles (L&J 18–21) and shows
how its mass, centre of mass and inertia tensor emerge in the limit.

Examples
--------
A point mass on a rod of length ``l`` swinging in the x–z plane:

>>> import sympy as sp
>>> from rbd.reference.particles import ParticleSystem, generalized_coordinates
>>> (th,), (thd,), _ = generalized_coordinates("theta")
>>> l, m, g = sp.symbols("l m g", positive=True)
>>> r = [sp.Matrix([l * sp.sin(th), 0, -l * sp.cos(th)])]
>>> pendulum = ParticleSystem([th], [thd], r, [m], forces=[sp.Matrix([0, 0, -m * g])])
>>> pendulum.mass_matrix()
Matrix([[l**2*m]])
>>> sp.simplify(pendulum.equations_of_motion()[0])
l*m*(g*sin(theta) + l*theta_dd)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import sympy as sp

from ..errors import InputError

__all__ = [
    "generalized_coordinates",
    "ParticleSystem",
    "NumericParticleSystem",
    "mass_matrix_from_jacobians",
    "sample_box",
    "sample_box_random",
    "rigid_body_from_particles",
    "particle_momenta",
]


def generalized_coordinates(names: str | Sequence[str]):
    """Symbols for ``q``, ``q̇`` and ``q̈``: three tuples, named ``x``, ``x_d``, ``x_dd``.

    Parameters
    ----------
    names : str or sequence of str
        Coordinate names, e.g. ``"rho theta"``.

    Returns
    -------
    q, qd, qdd : tuple of sympy.Symbol
    """
    if isinstance(names, str):
        names = names.split()
    q = tuple(sp.Symbol(n, real=True) for n in names)
    qd = tuple(sp.Symbol(f"{n}_d", real=True) for n in names)
    qdd = tuple(sp.Symbol(f"{n}_dd", real=True) for n in names)
    return q, qd, qdd


class ParticleSystem:
    r"""Point masses :math:`\mu_i` at positions :math:`r_i(q)` (L&J 1).

    Parameters
    ----------
    q, qd : sequence of sympy.Symbol, length n
        Generalized coordinates and their velocities (see
        :func:`generalized_coordinates`).
    positions : sequence of 3-vectors of sympy expressions in ``q``
        World positions :math:`r_i(q)`; the constraints are built in, so the
        coordinates are independent (scleronomic: no explicit time).
    masses : sequence
        Masses :math:`\mu_i` (numbers or symbols).
    forces : sequence of 3-vectors, optional
        Applied forces :math:`f_i` (may depend on ``q`` and ``qd``); zero by default.
    qdd : sequence of sympy.Symbol, optional
        Symbols for the accelerations (named ``<q>_dd`` by default).
    """

    def __init__(self, q, qd, positions, masses, forces=None, qdd=None):
        self.q = sp.Matrix(list(q))
        self.qd = sp.Matrix(list(qd))
        if qdd is None:
            qdd = [sp.Symbol(f"{s}_dd", real=True) for s in q]
        self.qdd = sp.Matrix(list(qdd))
        self.r = [sp.Matrix(list(r)) for r in positions]
        self.mu = [sp.sympify(m) for m in masses]
        if len(self.r) != len(self.mu):
            raise InputError("positions and masses must have the same length")
        zero = sp.zeros(3, 1)
        self.f = [zero] * len(self.r) if forces is None else [sp.Matrix(list(f)) for f in forces]
        if len(self.f) != len(self.r):
            raise InputError("forces and positions must have the same length")

    @property
    def n(self) -> int:
        """Number of generalized coordinates."""
        return self.q.shape[0]

    # --- kinematics -------------------------------------------------------------
    def time_derivative(self, expr):
        r"""Total time derivative along the motion: :math:`\frac{d}{dt} =
        \dot q^T \partial_q + \ddot q^T \partial_{\dot q}` (L&J 6, 8)."""
        expr = sp.sympify(expr)
        return sum((sp.diff(expr, s) * sd for s, sd in zip(self.q, self.qd, strict=True)),
                   sp.S.Zero) + sum((sp.diff(expr, s) * sdd for s, sdd in
                                     zip(self.qd, self.qdd, strict=True)), sp.S.Zero)

    def jacobian(self, i: int) -> sp.Matrix:
        r"""``J_i = ∂r_i/∂q``, 3 × n (L&J 2, 15)."""
        return self.r[i].jacobian(self.q)                                  # L&J (15)

    def velocity(self, i: int) -> sp.Matrix:
        r"""``ṙ_i = J_i q̇`` (L&J 6, 15)."""
        return self.jacobian(i) @ self.qd                                  # L&J (15)

    # --- energy and the terms of Lagrange's equations --------------------------
    def kinetic_energy(self):
        r"""``T = Σ ½ μ_i ṙ_iᵀ ṙ_i`` (L&J 10, 16)."""
        return sum(((self.mu[i] * (self.velocity(i).T @ self.velocity(i))[0, 0]) / 2
                    for i in range(len(self.r))), sp.S.Zero)               # L&J (10)

    def mass_matrix(self, simplify: bool = True) -> sp.Matrix:
        r"""``M(q) = Σ μ_i J_iᵀ J_i``, n × n (L&J 16), simplified entry by entry unless
        ``simplify=False``."""
        M = sp.zeros(self.n, self.n)
        for i in range(len(self.r)):
            J = self.jacobian(i)
            M += self.mu[i] * J.T @ J                                      # L&J (16)
        return M.applyfunc(sp.simplify) if simplify else M

    def coriolis(self, M: sp.Matrix | None = None) -> sp.Matrix:
        r"""``C(q, q̇) = Ṁ q̇ − ½ (∂M/∂q q̇)ᵀ q̇``, n × 1 (L&J 17).

        The second term's j-th entry is ``q̇ᵀ (∂M/∂q_j) q̇``.
        """
        M = self.mass_matrix() if M is None else M
        M_dot = M.applyfunc(self.time_derivative)
        dM_term = sp.Matrix([(self.qd.T @ M.diff(s) @ self.qd)[0, 0] for s in self.q])
        return (M_dot @ self.qd - dM_term / 2).applyfunc(sp.expand)       # L&J (17)

    def generalized_forces(self) -> sp.Matrix:
        r"""``Q = Σ J_iᵀ f_i``, n × 1: the virtual work of the applied forces (L&J 3)."""
        Q = sp.zeros(self.n, 1)
        for i in range(len(self.r)):
            Q += self.jacobian(i).T @ self.f[i]                            # L&J (3)
        return Q

    def lagrange_lhs(self) -> sp.Matrix:
        r"""``d/dt(∂T/∂q̇) − ∂T/∂q`` differentiated directly from ``T`` (L&J 13)."""
        T = self.kinetic_energy()
        return sp.Matrix([self.time_derivative(sp.diff(T, sd)) - sp.diff(T, s)
                          for s, sd in zip(self.q, self.qd, strict=True)])  # L&J (13)

    def equations_of_motion(self) -> sp.Matrix:
        r"""Residual ``M q̈ + C − Q`` of the vector equations of motion (L&J 14)."""
        M = self.mass_matrix()
        return M @ self.qdd + self.coriolis(M) - self.generalized_forces()  # L&J (14)

    # --- numbers ------------------------------------------------------------------
    def numeric(self, parameters: dict | None = None) -> NumericParticleSystem:
        """Lambdify ``r_i``, ``J_i``, ``M``, ``C`` and ``Q`` into NumPy functions.

        ``parameters`` substitutes numbers for any other symbols (masses, lengths).
        """
        subs = parameters or {}
        M = self.mass_matrix(simplify=False)
        C = self.coriolis(M)
        Q = self.generalized_forces()
        args = (list(self.q), list(self.qd))

        def make(expr):
            return sp.lambdify(args, sp.Matrix(expr).subs(subs), "numpy")

        J_dot = [self.jacobian(i).applyfunc(self.time_derivative) for i in range(len(self.r))]
        return NumericParticleSystem(
            n=self.n,
            masses=np.array([float(sp.sympify(m).subs(subs)) for m in self.mu]),
            _r=[make(r) for r in self.r],
            _J=[make(self.jacobian(i)) for i in range(len(self.r))],
            _J_dot=[make(Jd) for Jd in J_dot],
            _f=[make(f) for f in self.f],
            _M=make(M),
            _C=make(C),
            _Q=make(Q),
        )


def _call(fn, q, qd, shape):
    return np.asarray(fn(list(np.asarray(q, dtype=float)), list(np.asarray(qd, dtype=float))),
                      dtype=float).reshape(shape)


@dataclass
class NumericParticleSystem:
    """NumPy functions of a :class:`ParticleSystem` (made by :meth:`ParticleSystem.numeric`)."""

    n: int
    masses: np.ndarray
    _r: list[Callable]
    _J: list[Callable]
    _J_dot: list[Callable]
    _f: list[Callable]
    _M: Callable
    _C: Callable
    _Q: Callable

    def positions(self, q) -> np.ndarray:
        """Particle positions ``(N, 3)``."""
        return np.array([_call(r, q, np.zeros(self.n), (3,)) for r in self._r])

    def jacobians(self, q) -> np.ndarray:
        """Particle Jacobians ``(N, 3, n)`` (L&J 15)."""
        return np.array([_call(J, q, np.zeros(self.n), (3, self.n)) for J in self._J])

    def mass_matrix(self, q) -> np.ndarray:
        """``M(q)``, ``(n, n)`` (L&J 16)."""
        return _call(self._M, q, np.zeros(self.n), (self.n, self.n))

    def coriolis(self, q, qd) -> np.ndarray:
        """``C(q, q̇)``, ``(n,)`` (L&J 17)."""
        return _call(self._C, q, qd, (self.n,))

    def generalized_forces(self, q, qd) -> np.ndarray:
        """``Q(q, q̇)``, ``(n,)`` (L&J 3)."""
        return _call(self._Q, q, qd, (self.n,))

    def forward_dynamics(self, q, qd) -> np.ndarray:
        """``q̈ = M⁻¹ (Q − C)`` (L&J 14)."""
        return np.linalg.solve(self.mass_matrix(q), self.generalized_forces(q, qd)
                               - self.coriolis(q, qd))

    def kinetic_energy(self, q, qd) -> float:
        """``T = ½ q̇ᵀ M q̇`` (L&J 16)."""
        qd = np.asarray(qd, dtype=float)
        return float(0.5 * qd @ self.mass_matrix(q) @ qd)

    def accelerations(self, q, qd, qdd) -> np.ndarray:
        """Particle accelerations ``r̈_i = J_i q̈ + J̇_i q̇``, ``(N, 3)`` (L&J 8, 15)."""
        qd, qdd = np.asarray(qd, dtype=float), np.asarray(qdd, dtype=float)
        return np.array([_call(J, q, qd, (3, self.n)) @ qdd + _call(Jd, q, qd, (3, self.n)) @ qd
                         for J, Jd in zip(self._J, self._J_dot, strict=True)])

    def applied_forces(self, q, qd) -> np.ndarray:
        """Applied forces ``f_i``, ``(N, 3)``."""
        return np.array([_call(f, q, qd, (3,)) for f in self._f])

    def constraint_forces(self, q, qd) -> np.ndarray:
        r"""Forces the constraints exert, ``μ_i r̈_i − f_i``, along the computed motion.

        By D'Alembert's principle (L&J 4) they do no virtual work:
        ``Σ J_iᵀ (μ_i r̈_i − f_i) = 0``.
        """
        qdd = self.forward_dynamics(q, qd)
        return self.masses[:, None] * self.accelerations(q, qd, qdd) - self.applied_forces(q, qd)


def mass_matrix_from_jacobians(J: np.ndarray, mu: np.ndarray) -> np.ndarray:
    r"""``M = Σ μ_i J_iᵀ J_i`` from stacked numeric Jacobians (L&J 16).

    Parameters
    ----------
    J : (N, 3, n) ndarray
    mu : (N,) ndarray

    Returns
    -------
    M : (n, n) ndarray
    """
    return np.einsum("i,iaj,iak->jk", mu, J, J)                          # L&J (16)


# --- a rigid body as a cloud of particles (L&J 18–21) ---------------------------------

def sample_box(mass: float, size, n: int) -> tuple[np.ndarray, np.ndarray]:
    """A solid box centred at the origin as ``n³`` equal particles at the cell centres.

    Parameters
    ----------
    mass : float
    size : (3,) array_like
        Edge lengths along x, y, z.
    n : int
        Cells per edge.

    Returns
    -------
    points : (n³, 3) ndarray
    mu : (n³,) ndarray
    """
    size = np.asarray(size, dtype=float)
    ticks = [((np.arange(n) + 0.5) / n - 0.5) * s for s in size]
    points = np.stack(np.meshgrid(*ticks, indexing="ij"), axis=-1).reshape(-1, 3)
    return points, np.full(len(points), mass / len(points))


def sample_box_random(mass: float, size, count: int,
                      rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A solid box as ``count`` equal particles drawn uniformly at random (Monte Carlo)."""
    size = np.asarray(size, dtype=float)
    points = (rng.random((count, 3)) - 0.5) * size
    return points, np.full(count, mass / count)


def rigid_body_from_particles(points: np.ndarray, mu: np.ndarray):
    r"""Mass, centre of mass and inertia about the COM of a particle cloud.

    .. math::

        m = \sum_i \mu_i,\quad x = \frac1m\sum_i \mu_i r_i,\quad
        I_c = \sum_i -\mu_i [r_i'][r_i'],\ r_i' = r_i - x  \quad\text{(L\&J 19, 21)}

    Returns
    -------
    m : float
    x : (3,) ndarray
    Ic : (3, 3) ndarray
    """
    m = float(np.sum(mu))
    x = mu @ points / m
    r = points - x                                                         # r_i' = r_i − x
    K = np.zeros((len(r), 3, 3))                                           # [r_i'], L&J (20)
    K[:, 0, 1], K[:, 0, 2], K[:, 1, 2] = -r[:, 2], r[:, 1], -r[:, 0]
    K -= K.transpose(0, 2, 1)
    Ic = -np.einsum("i,iab,ibc->ac", mu, K, K)                              # L&J (19), (21)
    return m, x, Ic


def particle_momenta(points: np.ndarray, mu: np.ndarray, v: np.ndarray, omega: np.ndarray):
    r"""Linear and angular momentum of a particle cloud moving rigidly.

    Each particle moves with :math:`\dot r_i = v + \omega \times r_i'` where
    ``v`` is the velocity of the cloud's centre of mass.  Summing
    :math:`\mu_i \dot r_i` and :math:`r_i' \times \mu_i \dot r_i` gives the
    momenta that L&J Eqs. 18 and 19 reduce to :math:`P = m v`, :math:`L = I_c\omega`.

    Returns
    -------
    P, L : (3,) ndarray
    """
    r_prime = points - mu @ points / np.sum(mu)
    r_dot = v + np.cross(omega, r_prime)
    P = mu @ r_dot                                                         # L&J (18)
    L = np.sum(mu[:, None] * np.cross(r_prime, r_dot), axis=0)            # L&J (19)
    return P, L
