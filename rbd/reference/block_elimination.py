r"""Forward dynamics as block elimination on Pai, Ascher & Kry's augmented system.

Pai, Ascher & Kry write the Newton–Euler equations of every body, the joint
kinematics and the joint-force projections of a chain as one sparse linear
system (their Eq. 5) and obtain the classical forward-dynamics algorithms as
different ways of eliminating it:

* direct sparse LU of the whole system (the reference truth, ``pai-dense``);
* block-row elimination that keeps the joint accelerations last, which forms
  the joint-space inertia :math:`\mathcal M = H^T A^T M A H` — the Composite
  Rigid Body Method (their Eq. 7, ``pai-crbm``);
* block elimination body by body from the free end, which never creates
  fill-in outside the diagonal blocks and updates each body's inertia to its
  articulated-body inertia — the Articulated Body Method (§5, ``pai-abm``);
* the same elimination with the pivot :math:`D_k = H_k^T M_k H_k +
  H_k^T \tilde M_k H_k` formed in two parts — the Modified ABM (§7,
  ``pai-modified-abm``).

Their chain is numbered from the free end; here the chain is any tree with the
parent array λ (``λ(i) < i``), and "from the free end" becomes "children
before parents", i.e. bodies in decreasing index.

Symbols (Pai → this module → Featherstone / :mod:`rbd.reference.aba`):

=============  ==================  ===========================================
Pai            here                meaning
=============  ==================  ===========================================
``M_k``        ``M[i]``            spatial inertia of body i (``body.inertia``)
``H_k``        ``H[i]``            joint matrix = motion subspace ``S_i``
``Ad``         ``X_up[i]``         motion transform parent → body i
``φ̇_k``        ``phidot[i]``       spatial acceleration of body i
``f_k``        ``f[i]``            force across joint i onto body i
``b_k``        ``b[i]``            gyroscopic force − external force
``a_k``        ``a[i]``            velocity-product acceleration (+ gravity at a root)
``M̂_k``        ``M_hat[i]``        articulated-body inertia ``IA[i]``
``D_k``        ``D[i]``            joint pivot ``Sᵀ IA S``
=============  ==================  ===========================================

Gravity enters, as everywhere in ``rbd``, as the base acceleration
``a_0 = [0; -g]``: the known acceleration of a root body is
``a_i = c_i + X_up[i] a_0``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..errors import InputError
from .aba import aba, pivot_inverse
from .rnea import outward_step

__all__ = [
    "AugmentedSystem",
    "Solution",
    "Elimination",
    "augmented_system",
    "block_offsets",
    "kkt_matrix",
    "kkt_rhs",
    "symmetric_kkt",
    "unpack",
    "solve_dense",
    "global_blocks",
    "crbm_mass_matrix",
    "solve_crbm",
    "eliminate",
    "back_substitute",
    "solve_abm",
    "eliminated_matrix",
    "crbm_eliminated_matrix",
    "forward_dynamics_dense",
    "forward_dynamics_crbm",
    "mass_matrix_crbm",
    "forward_dynamics_abm",
    "forward_dynamics_modified_abm",
    "articulated_inertias",
    "aba_modified",
]

PIVOTS = ("standard", "modified")


# --------------------------------------------------------------------------------------
# The augmented system (Pai Eqs. 2–5)
# --------------------------------------------------------------------------------------
@dataclass
class AugmentedSystem:
    """The blocks of Pai's augmented system for one state of one model.

    Attributes
    ----------
    parent : tuple of int
        Parent array λ (``-1`` for the world).
    X_up : list of (6, 6) ndarray
        Motion transform parent → body i (Pai's ``Ad``).
    M : list of (6, 6) ndarray
        Spatial inertia of each body.
    H : list of (6, nv_i) ndarray
        Joint matrices (motion subspaces).
    b : list of (6,) ndarray
        Gyroscopic force minus external force, ``v × * M v − f_ext`` (Pai Eq. 2).
    a : list of (6,) ndarray
        Known part of each body's acceleration (Pai Eq. 3).
    tau : list of (nv_i,) ndarray
        Joint forces (Pai Eq. 4).
    """

    parent: tuple[int, ...]
    X_up: list
    M: list
    H: list
    b: list
    a: list
    tau: list

    @property
    def nbodies(self) -> int:
        return len(self.parent)

    @property
    def nv(self) -> int:
        return int(sum(H.shape[1] for H in self.H))

    @property
    def order(self) -> list[int]:
        """Pai's block order: children before parents (bodies in decreasing index)."""
        return list(range(self.nbodies - 1, -1, -1))

    def children(self, i: int) -> list[int]:
        return [k for k, p in enumerate(self.parent) if p == i]

    def v_slices(self) -> list[slice]:
        """Slice of each body's joint velocities in ``qdd`` (body order)."""
        out, start = [], 0
        for H in self.H:
            out.append(slice(start, start + H.shape[1]))
            start += H.shape[1]
        return out


@dataclass
class Solution:
    """Every unknown of the augmented system.

    ``qdd`` is ``(nv,)``; ``phidot`` (body accelerations) and ``f`` (joint
    forces onto each body) are ``(nbodies, 6)``, in body coordinates.
    """

    qdd: np.ndarray
    phidot: np.ndarray
    f: np.ndarray


def augmented_system(model, q, qd, tau, f_ext=None) -> AugmentedSystem:
    """Collect the blocks of Pai's Eq. (5) for ``model`` at state ``(q, qd)``.

    Examples
    --------
    >>> import numpy as np, rbd
    >>> from rbd.reference import block_elimination as be
    >>> model = rbd.models.double_pendulum()
    >>> system = be.augmented_system(model, np.array([0.3, -0.2]), np.zeros(2), np.zeros(2))
    >>> be.kkt_matrix(system).shape          # 12 per body + one per joint
    (26, 26)
    >>> qdd = [be.solve_dense(system).qdd, be.solve_crbm(system).qdd, be.solve_abm(system).qdd]
    >>> all(np.allclose(x, rbd.aba(model, [0.3, -0.2], [0, 0], [0, 0])) for x in qdd)
    True

    Parameters are those of :func:`rbd.reference.aba.aba`: ``model, q, qd, tau, f_ext``.

    Returns
    -------
    AugmentedSystem
    """
    nb = model.nbodies
    a0 = np.concatenate([np.zeros(3), -np.asarray(model.gravity, dtype=float)])
    X_up, S, v = [None] * nb, [None] * nb, [None] * nb
    M, H, b, a, taus = [], [], [], [], []
    for i, body in enumerate(model.bodies):
        # the outward step of RNEA and ABA: Pai (3) velocity and a_k, Pai (2) b_k
        a_i, b_i = outward_step(model, i, q, qd, f_ext, X_up, S, v)
        if body.parent < 0:
            a_i = a_i + X_up[i] @ a0                                   # gravity: base accel.
        M.append(np.array(body.inertia, dtype=float))
        H.append(np.asarray(S[i], dtype=float).reshape(6, -1))
        b.append(b_i)
        a.append(a_i)
        taus.append(np.asarray(tau[model.v_index(i)], dtype=float))
    return AugmentedSystem(tuple(model.parent), X_up, M, H, b, a, taus)


def block_offsets(system: AugmentedSystem) -> dict[int, int]:
    """Row/column offset of each body's block ``(f, −φ̇, q̈)`` in Pai's order."""
    offsets, start = {}, 0
    for i in system.order:
        offsets[i] = start
        start += 12 + system.H[i].shape[1]
    return offsets


def kkt_matrix(system: AugmentedSystem) -> sp.csr_matrix:
    r"""Pai's augmented matrix (Eq. 5), generalized from a chain to a tree.

    Unknowns per body (in Pai's order, children first): ``(f_i, −φ̇_i, q̈_i)``;
    rows per body: Newton–Euler (Eq. 2), joint kinematics (Eq. 3) and joint
    force (Eq. 4).  The diagonal block is

    .. math::

        \begin{pmatrix} 1 & M_i & 0 \\ 0 & 1 & H_i \\ H_i^T & 0 & 0 \end{pmatrix},

    a child ``k`` of ``i`` contributes ``−X_kᵀ`` at (Newton–Euler row of i,
    ``f_k``) and ``−X_k`` at (kinematics row of k, ``−φ̇_i``).

    Returns
    -------
    K : scipy.sparse.csr_matrix, shape (12 nbodies + nv, 12 nbodies + nv)
    """
    off = block_offsets(system)
    n = sum(12 + H.shape[1] for H in system.H)
    K = sp.lil_matrix((n, n))
    for i in system.order:
        o, nv_i, H = off[i], system.H[i].shape[1], system.H[i]
        K[o:o + 6, o:o + 6] = np.eye(6)                                # Pai (2): f_i
        K[o:o + 6, o + 6:o + 12] = system.M[i]                         # Pai (2): M_i (−φ̇_i)
        K[o + 6:o + 12, o + 6:o + 12] = np.eye(6)                      # Pai (3): −φ̇_i
        if nv_i:
            K[o + 6:o + 12, o + 12:o + 12 + nv_i] = H                  # Pai (3): H_i q̈_i
            K[o + 12:o + 12 + nv_i, o:o + 6] = H.T                     # Pai (4): H_iᵀ f_i
        p = system.parent[i]
        if p >= 0:
            op = off[p]
            K[op:op + 6, o:o + 6] = -system.X_up[i].T                  # Pai (2): −Adᵀ f_child
            K[o + 6:o + 12, op + 6:op + 12] = -system.X_up[i]          # Pai (3): −Ad (−φ̇_parent)
    return K.tocsr()


def kkt_rhs(system: AugmentedSystem) -> np.ndarray:
    """Right-hand side ``(b_i, −a_i, τ_i)`` of Pai's Eq. (5), in Pai's order."""
    return np.concatenate([np.concatenate([system.b[i], -system.a[i], system.tau[i]])
                           for i in system.order] or [np.zeros(0)])


def unpack(system: AugmentedSystem, x: np.ndarray) -> Solution:
    """Split a solution vector in Pai's order into ``(q̈, φ̇, f)`` in body order."""
    off, nb = block_offsets(system), system.nbodies
    qdd, phidot, f = np.zeros(system.nv), np.zeros((nb, 6)), np.zeros((nb, 6))
    for i, vs in enumerate(system.v_slices()):
        o = off[i]
        f[i], phidot[i], qdd[vs] = x[o:o + 6], -x[o + 6:o + 12], x[o + 12:o + 12 + vs.stop - vs.start]
    return Solution(qdd, phidot, f)


def symmetric_kkt(system: AugmentedSystem) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    r"""The symmetric (KKT) arrangement of Eq. (5) used in Pai's Eq. (7).

    Unknowns ``(−φ̇, f, q̈)`` and rows (Newton–Euler, kinematics, joint), each
    group in body order:

    .. math::

        \begin{pmatrix} M & A^{-T} & 0 \\ A^{-1} & 0 & H \\ 0 & H^T & 0 \end{pmatrix}
        \begin{pmatrix} -\dot\phi \\ f \\ \ddot q \end{pmatrix} =
        \begin{pmatrix} b \\ -a \\ \tau \end{pmatrix}.

    Returns
    -------
    K_sym : csr_matrix
        The permuted matrix (symmetric).
    rhs : ndarray
    perm : ndarray of int
        The row permutation: ``K_sym`` holds the rows ``K[perm]`` of
        :func:`kkt_matrix`, with the columns of Eq. (5) reordered to
        ``(−φ̇, f, q̈)``.
    """
    off, nb = block_offsets(system), system.nbodies
    body = [off[i] + k for i in range(nb) for k in range(6)]
    kin = [off[i] + 6 + k for i in range(nb) for k in range(6)]
    joint = [off[i] + 12 + k for i in range(nb) for k in range(system.H[i].shape[1])]
    rows = np.array(body + kin + joint, dtype=int)
    cols = np.array(kin + body + joint, dtype=int)    # column of −φ̇_i is at off+6, f_i at off
    K = kkt_matrix(system)
    return K[rows][:, cols].tocsr(), kkt_rhs(system)[rows], rows


# --------------------------------------------------------------------------------------
# (a) direct sparse solve: the reference truth
# --------------------------------------------------------------------------------------
def solve_dense(system: AugmentedSystem) -> Solution:
    """Solve Pai's Eq. (5) by sparse LU (SuperLU): no structure used but sparsity."""
    x = spla.spsolve(kkt_matrix(system).tocsc(), kkt_rhs(system))
    return unpack(system, np.atleast_1d(x))


# --------------------------------------------------------------------------------------
# (b) Composite Rigid Body Method: block-row elimination (Pai Eq. 7)
# --------------------------------------------------------------------------------------
def global_blocks(system: AugmentedSystem):
    """The stacked blocks of Pai's Eq. (7), in body order.

    Returns
    -------
    A_inv : csr_matrix, (6n, 6n)
        Unit block lower triangular, ``-X_up[i]`` at block ``(i, λ(i))`` (Pai Eq. 3).
    M : csr_matrix, (6n, 6n)
        Block diagonal of the body inertias.
    H : (6n, nv) ndarray
        Block diagonal of the joint matrices.
    a, b : (6n,) ndarray
        Stacked known accelerations and gyroscopic/external forces.
    """
    nb = system.nbodies
    A_inv = sp.lil_matrix((6 * nb, 6 * nb))
    for i in range(nb):
        A_inv[6 * i:6 * i + 6, 6 * i:6 * i + 6] = np.eye(6)
        p = system.parent[i]
        if p >= 0:
            A_inv[6 * i:6 * i + 6, 6 * p:6 * p + 6] = -system.X_up[i]  # Pai (3)
    M = sp.block_diag(system.M, format="csr") if nb else sp.csr_matrix((0, 0))
    H = np.zeros((6 * nb, system.nv))
    for i, vs in enumerate(system.v_slices()):
        H[6 * i:6 * i + 6, vs] = system.H[i]
    a = np.concatenate(system.a) if nb else np.zeros(0)
    b = np.concatenate(system.b) if nb else np.zeros(0)
    return A_inv.tocsr(), M, H, a, b


def _solve_Apivot_inverse(A_inv: sp.csr_matrix, rhs: np.ndarray) -> np.ndarray:
    """``A · rhs``: forward substitution with the unit block-lower-triangular ``A⁻¹``."""
    if rhs.shape[0] == 0:
        return rhs.copy()
    return spla.spsolve_triangular(A_inv, rhs, lower=True, unit_diagonal=True)


def crbm_mass_matrix(system: AugmentedSystem) -> np.ndarray:
    r"""Joint-space inertia :math:`\mathcal M = H^T A^T M A H` (Pai Eq. 7)."""
    A_inv, M, H, _, _ = global_blocks(system)
    AH = _solve_Apivot_inverse(A_inv, H)
    return AH.T @ (M @ AH)                                             # Pai (7)


def solve_crbm(system: AugmentedSystem) -> Solution:
    r"""Block-row elimination of Eq. (7), then back-substitution.

    .. math::

        \mathcal M \ddot q = \tau - c, \quad
        \mathcal M = H^T A^T M A H, \quad c = H^T A^T (M A a + b),

        -\dot\phi = -A (a + H \ddot q), \quad f = A^T (b + M A (a + H\ddot q)).

    ``𝓜`` is factored by Cholesky.
    """
    A_inv, M, H, a, b = global_blocks(system)
    AH = _solve_Apivot_inverse(A_inv, H)
    Aa = _solve_Apivot_inverse(A_inv, a)
    Mcal = AH.T @ (M @ AH)                                             # Pai (7)
    c = AH.T @ (M @ Aa + b)                                            # Pai (7)
    tau = np.concatenate(system.tau) if system.nbodies else np.zeros(0)
    qdd = scipy.linalg.cho_solve(scipy.linalg.cho_factor(Mcal), tau - c) if Mcal.size \
        else np.zeros(0)
    phidot = Aa + AH @ qdd                                             # Pai (7), row 2
    f = spla.spsolve_triangular(A_inv.T.tocsr(), b + M @ phidot, lower=False,
                                unit_diagonal=True)                    # Pai (7), row 1
    nb = system.nbodies
    return Solution(qdd, phidot.reshape(nb, 6), np.asarray(f).reshape(nb, 6))


# --------------------------------------------------------------------------------------
# (c, d) Articulated Body Method and Modified ABM: block elimination from the leaves
# --------------------------------------------------------------------------------------
@dataclass
class Elimination:
    """The blocks that the elimination from the leaves updates, per body.

    ``M_hat[i]`` is the updated inertia block (the articulated-body inertia),
    ``M_tilde[i]`` the part of it contributed by the children, ``D[i]`` the
    pivot, ``b_hat[i]`` the updated Newton–Euler right-hand side and ``u[i]``
    the updated joint right-hand side ``τ_i − c_i``.
    """

    M_hat: list
    M_tilde: list
    D: list
    b_hat: list
    u: list
    pivot: str


def eliminate(system: AugmentedSystem, pivot: str = "standard") -> Elimination:
    r"""Block Gaussian elimination of Eq. (5), one body at a time, children first.

    Within body k's block the pivots are the identity of the Newton–Euler row
    (for ``f_k``), the identity of the kinematics row (for ``−φ̇_k``) and the
    joint pivot ``D_k`` (for ``q̈_k``).  Folding the eliminated rows into the
    parent's Newton–Euler row changes only the parent's inertia block and
    right-hand side (Pai §5):

    .. math::

        \hat M_p = M_p + \sum_k X_k^T \big(\hat M_k - \hat M_k H_k D_k^{-1}
                   H_k^T \hat M_k\big) X_k, \qquad D_k = H_k^T \hat M_k H_k,

        \tau_k - c_k = \tau_k - H_k^T \hat b_k - H_k^T \hat M_k a_k,

        \hat b_p = b_p + \sum_k X_k^T\big(\hat b_k + \hat M_k a_k
                   + \hat M_k H_k D_k^{-1}(\tau_k - c_k)\big).

    With ``pivot="modified"`` the pivot is formed in two parts,
    ``D_k = H_kᵀ M_k H_k + H_kᵀ M̃_k H_k`` with ``M̃_k = M̂_k − M_k`` the
    children's contribution (Pai §7, the Modified ABM).

    Parameters
    ----------
    system : AugmentedSystem
    pivot : {"standard", "modified"}

    Returns
    -------
    Elimination
    """
    if pivot not in PIVOTS:
        raise InputError(f"pivot must be one of {PIVOTS}, got {pivot!r}")
    nb = system.nbodies
    M_tilde = [np.zeros((6, 6)) for _ in range(nb)]
    b_hat = [np.array(b_i, dtype=float) for b_i in system.b]
    M_hat, D, u = [None] * nb, [None] * nb, [None] * nb
    for k in system.order:
        H, X, a = system.H[k], system.X_up[k], system.a[k]
        M_hat[k] = system.M[k] + M_tilde[k]                            # Pai §5: M̂_k
        if pivot == "modified":
            D[k] = H.T @ system.M[k] @ H + H.T @ M_tilde[k] @ H        # Pai §7: modified pivot
        else:
            D[k] = H.T @ M_hat[k] @ H                                  # Pai §5: D_k
        u[k] = system.tau[k] - H.T @ b_hat[k] - H.T @ M_hat[k] @ a     # Pai §5: τ_k − c_k
        p = system.parent[k]
        if p >= 0:
            U = M_hat[k] @ H
            D_inv = pivot_inverse(D[k])
            M_tilde[p] = M_tilde[p] + X.T @ (M_hat[k] - U @ D_inv @ U.T) @ X   # Pai §5: M̂_{k+1}
            b_hat[p] = b_hat[p] + X.T @ (b_hat[k] + M_hat[k] @ a + U @ D_inv @ u[k])  # Pai §5: b̂
    return Elimination(M_hat, M_tilde, D, b_hat, u, pivot)


def back_substitute(system: AugmentedSystem, elim: Elimination) -> Solution:
    r"""Solve the eliminated (block upper-triangular) system, parents first.

    .. math::

        \ddot q_k = D_k^{-1}\big(\tau_k - c_k - H_k^T \hat M_k X_k \dot\phi_{\lambda(k)}\big),
        \quad \dot\phi_k = X_k \dot\phi_{\lambda(k)} + H_k \ddot q_k + a_k,
        \quad f_k = \hat b_k + \hat M_k \dot\phi_k.
    """
    nb = system.nbodies
    qdd, phidot, f = np.zeros(system.nv), np.zeros((nb, 6)), np.zeros((nb, 6))
    for k, vs in enumerate(system.v_slices()):
        p, H, X = system.parent[k], system.H[k], system.X_up[k]
        Xphi = X @ phidot[p] if p >= 0 else np.zeros(6)
        qdd_k = pivot_inverse(elim.D[k]) @ (elim.u[k] - H.T @ elim.M_hat[k] @ Xphi)    # Pai §5, row 3k
        phidot[k] = Xphi + H @ qdd_k + system.a[k]                     # Pai (3)
        f[k] = elim.b_hat[k] + elim.M_hat[k] @ phidot[k]               # Pai (2), eliminated
        qdd[vs] = qdd_k
    return Solution(qdd, phidot, f)


def solve_abm(system: AugmentedSystem, pivot: str = "standard") -> Solution:
    """Articulated Body Method (``pivot="standard"``) or Modified ABM (``"modified"``)."""
    return back_substitute(system, eliminate(system, pivot))


def eliminated_matrix(system: AugmentedSystem,
                      elim: Elimination) -> tuple[sp.csr_matrix, np.ndarray]:
    r"""The block upper-triangular matrix and right-hand side left by :func:`eliminate`.

    Same unknowns and order as :func:`kkt_matrix`; per body k the rows read

    .. math::

        f_k + \hat M_k(-\dot\phi_k) = \hat b_k, \quad
        (-\dot\phi_k) + H_k \ddot q_k - X_k(-\dot\phi_{\lambda(k)}) = -a_k, \quad
        D_k \ddot q_k - H_k^T \hat M_k X_k (-\dot\phi_{\lambda(k)}) = \tau_k - c_k.
    """
    off = block_offsets(system)
    n = sum(12 + H.shape[1] for H in system.H)
    U = sp.lil_matrix((n, n))
    rhs = np.zeros(n)
    for k in system.order:
        o, H, nv_k = off[k], system.H[k], system.H[k].shape[1]
        U[o:o + 6, o:o + 6] = np.eye(6)
        U[o:o + 6, o + 6:o + 12] = elim.M_hat[k]
        U[o + 6:o + 12, o + 6:o + 12] = np.eye(6)
        if nv_k:
            U[o + 6:o + 12, o + 12:o + 12 + nv_k] = H
            U[o + 12:o + 12 + nv_k, o + 12:o + 12 + nv_k] = elim.D[k]
        p = system.parent[k]
        if p >= 0:
            op = off[p]
            U[o + 6:o + 12, op + 6:op + 12] = -system.X_up[k]
            if nv_k:
                U[o + 12:o + 12 + nv_k, op + 6:op + 12] = -H.T @ elim.M_hat[k] @ system.X_up[k]
        rhs[o:o + 12 + nv_k] = np.concatenate([elim.b_hat[k], -system.a[k], elim.u[k]])
    return U.tocsr(), rhs


# --------------------------------------------------------------------------------------
# Registry entry points (uniform signatures)
# --------------------------------------------------------------------------------------
def forward_dynamics_dense(model, q, qd, tau, f_ext=None) -> np.ndarray:
    """``q̈`` from a sparse LU solve of Pai's whole augmented system (Eq. 5)."""
    return solve_dense(augmented_system(model, q, qd, tau, f_ext)).qdd


def forward_dynamics_crbm(model, q, qd, tau, f_ext=None) -> np.ndarray:
    """``q̈`` by Pai's block-row elimination, the Composite Rigid Body Method (Eq. 7)."""
    return solve_crbm(augmented_system(model, q, qd, tau, f_ext)).qdd


def mass_matrix_crbm(model, q) -> np.ndarray:
    """Joint-space inertia ``𝓜 = HᵀAᵀMAH`` of Pai's Eq. (7), ``(nv, nv)``."""
    zero = np.zeros(model.nv)
    return crbm_mass_matrix(augmented_system(model, q, zero, zero))


def forward_dynamics_abm(model, q, qd, tau, f_ext=None) -> np.ndarray:
    """``q̈`` by block elimination from the leaves, the Articulated Body Method (Pai §5)."""
    return solve_abm(augmented_system(model, q, qd, tau, f_ext), "standard").qdd


def forward_dynamics_modified_abm(model, q, qd, tau, f_ext=None) -> np.ndarray:
    """``q̈`` by the Modified ABM: elimination with the two-part pivot (Pai §7)."""
    return solve_abm(augmented_system(model, q, qd, tau, f_ext), "modified").qdd


def articulated_inertias(model, q) -> np.ndarray:
    """The updated inertia blocks ``M̂_i`` of the elimination, ``(nbodies, 6, 6)``.

    They are Featherstone's articulated-body inertias ``IA_i`` (Pai §5).
    """
    zero = np.zeros(model.nv)
    elim = eliminate(augmented_system(model, q, zero, zero))
    return np.array(elim.M_hat).reshape(model.nbodies, 6, 6)


def aba_modified(model, q, qd, tau, f_ext=None):
    """Featherstone's articulated-body algorithm with Pai's modified pivot (§7).

    Identical to :func:`rbd.reference.aba.aba` except that the children's
    articulated inertias are kept apart from the body's own inertia
    (``IA_i = I_i + IA~_i``) and the pivot is formed as
    ``D_i = S_iᵀ I_i S_i + S_iᵀ IA~_i S_i``, so the body's own contribution to
    the joint pivot is never rounded away against large outboard terms: it is
    ``aba(..., modified_pivot=True)`` (see :func:`rbd.reference.aba.pivot`), as
    the compiled entry point ``rbd/_kernels/block_elimination.pyx`` runs the
    ABA kernel with the same flag.

    Parameters are those of :func:`rbd.reference.aba.aba`: ``model, q, qd, tau, f_ext``.

    Returns
    -------
    qdd : (nv,) ndarray
    """
    return aba(model, q, qd, tau, f_ext, modified_pivot=True)


# --------------------------------------------------------------------------------------
# Pictures
# --------------------------------------------------------------------------------------
def crbm_eliminated_matrix(system: AugmentedSystem) -> sp.csr_matrix:
    """Eq. (7) after block-row elimination: the joint rows become ``[0, 0, 𝓜]``."""
    K_sym, _, _ = symmetric_kkt(system)
    n6 = 12 * system.nbodies
    K = K_sym.tolil()
    K[n6:, :] = 0.0
    K[n6:, n6:] = crbm_mass_matrix(system)
    return K.tocsr()
