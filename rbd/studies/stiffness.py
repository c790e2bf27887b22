r"""Formulation stiffness: how accurately each forward-dynamics method solves one system.

Pai, Ascher & Kry (§7, after Ascher, Pai & Cloutier 1997) point out that the
elimination order matters in floating point when neighbouring bodies have very
different inertias: the Composite Rigid Body Method adds a small inertia to a
large one while forming :math:`\mathcal M` and subtracts a large term again
while factoring it; the Articulated Body Method forms the projected inertia
first; the Modified ABM also keeps the body's own inertia apart inside the
joint pivot (:math:`D = H^T M H + H^T \tilde M H`).

This module measures it.  For one state of one model the blocks of Pai's
augmented system (Eq. 5) are computed once in double precision; every method
then solves *those* data, and the truth is the solution of the same matrix and
right-hand side computed with 50 significant digits (mpmath) by a generic
sparse Gaussian elimination with partial pivoting, which knows nothing of the
block structure.  The error of a method is

.. math::

    e = \frac{\lVert \ddot q - \ddot q^\star \rVert_2}{\lVert \ddot q^\star \rVert_2}.

The model-based algorithms (``rbd.reference.aba``, the modified-pivot ABA,
CRBA + Cholesky, the Si–Guenter recursion) recompute the same double-precision
blocks from the model with the same ``jcalc``; they are listed too.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

import mpmath
import numpy as np

from ..errors import InputError
from ..joints import Revolute
from ..model import Model
from ..reference import block_elimination as be
from ..reference.aba import aba
from ..reference.crba import forward_dynamics_crba
from ..reference.ploen import forward_dynamics as ploen_forward_dynamics
from ..spatial import plux, so3_exp

__all__ = [
    "PATTERNS",
    "link_masses",
    "stiff_chain",
    "mp_solve",
    "mp_forward_dynamics",
    "mp_condition_number",
    "METHODS",
    "forward_dynamics_errors",
    "stiffness_table",
]

#: Mass patterns along the chain (base first) for a neighbour ratio ``r``:
#: ``alternating`` 1, r, 1, r, …; ``light-inboard`` r, …, r, 1; ``coaxial``
#: r, 1, r, 1, … where each light link and the heavy link it carries turn
#: about the same axis (Pai §7: the light link's joint motion lies in the null
#: space of the heavy link's projected inertia).
PATTERNS = ("alternating", "light-inboard", "coaxial")

_BOX = np.diag([0.05**2 + 0.05**2, 0.3**2 + 0.05**2, 0.3**2 + 0.05**2]) / 12.0
_COM = np.array([0.15, 0.0, 0.0])


def link_masses(ratio: float, n: int, pattern: str = "alternating") -> np.ndarray:
    """Masses of the ``n`` links of a chain, base first (see :data:`PATTERNS`)."""
    if pattern == "alternating":
        return np.array([1.0 if k % 2 == 0 else ratio for k in range(n)])
    if pattern == "light-inboard":
        return np.array([ratio] * (n - 1) + [1.0])
    if pattern == "coaxial":
        return np.array([ratio if k % 2 == 0 else 1.0 for k in range(n)])
    raise InputError(f"unknown pattern {pattern!r}; choose from {PATTERNS}")


def stiff_chain(ratio: float, n: int = 6, pattern: str = "alternating",
                seed: int = 0) -> Model:
    """A 3-D revolute chain whose link masses follow ``pattern`` with neighbour ratio ``ratio``.

    Each link is a box of 0.3 × 0.05 × 0.05 m (inertia scaled with its mass)
    with its centre of mass 0.15 m along x, the next joint 0.3 m along x.  Joint
    axes and tree rotations are random (seeded), so no coordinate axis is
    aligned with a joint.  In the ``coaxial`` pattern every heavy link is
    mounted 0.05 m along the axis of the light link before it, and turns about
    that same line.
    """
    rng = np.random.default_rng(seed)
    model = Model(name=f"{pattern} chain, ratio {ratio:g}")
    parent, axis = -1, None
    for k, m in enumerate(link_masses(ratio, n, pattern)):
        E = so3_exp(rng.normal(size=3))
        if pattern == "coaxial" and k % 2 == 1:
            X_tree, axis = plux(E, 0.05 * axis), E @ axis
        else:
            axis = rng.normal(size=3)
            axis = axis / np.linalg.norm(axis)
            X_tree = np.eye(6) if k == 0 else plux(E, np.array([0.3, 0.0, 0.0]))
        parent = model.add_body(parent, Revolute(axis), X_tree, (m, _COM, m * _BOX),
                                f"link{k}")
    return model


# --------------------------------------------------------------------------------------
# The 50-digit truth
# --------------------------------------------------------------------------------------
def mp_solve(K, rhs: Sequence[float], dps: int = 50) -> list:
    """Solve the sparse system ``K x = rhs`` in ``dps``-digit arithmetic.

    Generic Gaussian elimination with partial pivoting on a dictionary-of-rows
    copy of ``K`` (entries converted exactly from double); columns in their
    natural order.  Returns a list of ``mpmath.mpf``.
    """
    with mpmath.workdps(dps):
        coo = K.tocoo()
        n = K.shape[0]
        rows: list[dict] = [{} for _ in range(n)]
        in_col: dict[int, set] = defaultdict(set)
        for i, j, x in zip(coo.row, coo.col, coo.data, strict=True):
            if x != 0.0:
                rows[i][j] = mpmath.mpf(float(x))
                in_col[j].add(i)
        b = [mpmath.mpf(float(x)) for x in rhs]
        active, pivot_row = set(range(n)), [0] * n
        for j in range(n):
            candidates = [i for i in in_col[j] if i in active and j in rows[i]]
            p = max(candidates, key=lambda i: abs(rows[i][j]))
            active.discard(p)
            pivot_row[j] = p
            for i in candidates:
                if i == p:
                    continue
                factor = rows[i].pop(j) / rows[p][j]
                for jj, x in rows[p].items():
                    if jj != j:
                        rows[i][jj] = rows[i].get(jj, 0) - factor * x
                        in_col[jj].add(i)
                b[i] -= factor * b[p]
        x = [mpmath.mpf(0)] * n
        for j in range(n - 1, -1, -1):
            p = pivot_row[j]
            s = b[p] - mpmath.fsum(v * x[jj] for jj, v in rows[p].items() if jj != j)
            x[j] = s / rows[p][j]
        return x


def mp_forward_dynamics(system: be.AugmentedSystem, dps: int = 50) -> np.ndarray:
    """``q̈`` of Pai's Eq. (5) solved in ``dps`` digits, rounded to double at the end."""
    x = mp_solve(be.kkt_matrix(system), be.kkt_rhs(system), dps)
    return be.unpack(system, np.array([float(xi) for xi in x])).qdd


def mp_condition_number(system: be.AugmentedSystem, dps: int = 50) -> float:
    """2-norm condition number of the joint-space inertia, from ``M⁻¹`` computed in ``dps`` digits.

    Column j of ``M⁻¹`` is ``q̈`` of Eq. (5) with no bias terms and ``τ = e_j``.
    """
    nv = system.nv
    zero6 = [np.zeros(6)] * system.nbodies
    cols = []
    for j in range(nv):
        tau = np.zeros(nv)
        tau[j] = 1.0
        unit = be.AugmentedSystem(system.parent, system.X_up, system.M, system.H, zero6,
                                  zero6, [tau[s] for s in system.v_slices()])
        K, rhs = be.kkt_matrix(unit), be.kkt_rhs(unit)
        x = mp_solve(K, rhs, dps)
        offsets = be.block_offsets(unit)
        cols.append([x[offsets[i] + 12 + k] for i, s in enumerate(unit.v_slices())
                     for k in range(s.stop - s.start)])
    with mpmath.workdps(dps):
        M_inv = mpmath.matrix(cols).T
        M_inv = (M_inv + M_inv.T) / 2
        eig = mpmath.eigsy(M_inv, eigvals_only=True)
        return float(max(eig) / min(eig))


# --------------------------------------------------------------------------------------
# The methods compared and the table
# --------------------------------------------------------------------------------------
#: name -> fn(system, model, q, qd, tau) -> q̈ (double)
METHODS: dict[str, Callable] = {
    "CRBM (Pai Eq. 7)": lambda s, *m: be.solve_crbm(s).qdd,
    "ABM (Pai §5)": lambda s, *m: be.solve_abm(s, "standard").qdd,
    "Modified ABM (Pai §7)": lambda s, *m: be.solve_abm(s, "modified").qdd,
    "sparse LU (Pai Eq. 5)": lambda s, *m: be.solve_dense(s).qdd,
    "ABA (rbd.reference.aba)": lambda s, *m: aba(*m),
    "ABA, modified pivot": lambda s, *m: be.aba_modified(*m),
    "CRBA + Cholesky": lambda s, *m: forward_dynamics_crba(*m),
    "S&G recursion": lambda s, *m: ploen_forward_dynamics(*m),
}


def forward_dynamics_errors(model: Model, q, qd, tau, dps: int = 50,
                            methods: dict[str, Callable] | None = None) -> dict[str, float]:
    """Relative 2-norm error of each method's ``q̈`` against the ``dps``-digit solution."""
    methods = METHODS if methods is None else methods
    system = be.augmented_system(model, q, qd, tau)
    truth = mp_forward_dynamics(system, dps)
    scale = max(float(np.linalg.norm(truth)), np.finfo(float).tiny)
    return {name: float(np.linalg.norm(fn(system, model, q, qd, tau) - truth)) / scale
            for name, fn in methods.items()}


def stiffness_table(ratios: Sequence[float], patterns: Sequence[str] = PATTERNS,
                    n: int = 6, states: int = 5, seed: int = 0, dps: int = 50,
                    condition: bool = True) -> list[dict]:
    """One row per (pattern, ratio): the largest error of each method over ``states`` states.

    States are seeded and the same for every ratio: joint angles uniform in
    (−π, π), velocities and joint forces standard normal; gravity on.  With
    ``condition`` the row also holds ``cond₂(M)`` at the first state.
    """
    rows = []
    for pattern in patterns:
        for ratio in ratios:
            model = stiff_chain(ratio, n, pattern, seed)
            rng = np.random.default_rng(seed + 1)
            row = {"pattern": pattern, "ratio": float(ratio)}
            for k in range(states):
                q = rng.uniform(-np.pi, np.pi, model.nq)
                qd, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
                errors = forward_dynamics_errors(model, q, qd, tau, dps)
                for name, err in errors.items():
                    row[name] = max(row.get(name, 0.0), err)
                if condition and k == 0:
                    system = be.augmented_system(model, q, qd, tau)
                    row["cond(M)"] = mp_condition_number(system, dps)
            rows.append(row)
    return rows
