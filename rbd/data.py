"""The workspace of the compiled kernels, as NumPy arrays a reader may inspect.

A :class:`~rbd.model.Model` is read-only; everything an algorithm computes on
the way to its result lives in a :class:`Data` (Pinocchio's Model/Data split).
The compiled model of ``rbd.algorithms.compiled(model)`` owns one ``Data``,
exposed as ``compiled(model).data``: after a single-state call of a kernel
(``rbd.rnea(model, q, v, a)``, ...) its arrays hold that call's intermediate
quantities, in the papers' symbols.  Batched calls run in separate per-thread
workspaces and leave it untouched.

>>> import numpy as np, rbd
>>> model = rbd.models.double_pendulum()
>>> tau = rbd.rnea(model, [0.3, -0.2], [0.0, 0.0], [0.0, 0.0])
>>> if rbd.has_kernels():
...     data = rbd.algorithms.compiled(model).data
...     assert np.allclose(data.S[:, 0], [0, 1, 0, 0, 0, 0])   # joint 1 turns about y

All arrays are views into one contiguous ``buffer``; the kernels write
through raw pointers at the offsets in ``offsets``.  Only the entries the last
call computed are meaningful (an RNEA call does not touch ``IA``).
"""

from __future__ import annotations

import numpy as np

from .spatial import plux, skew

__all__ = ["Data"]


def _layout(nbodies: int, nv: int, nslots: int) -> list[tuple[str, tuple[int, ...], str]]:
    nb = nbodies
    return [
        ("E_up", (nb, 3, 3), "rotation of X_up[i] = X_J(q_i) X_tree[i] = plux(E, r)"),
        ("r_up", (nb, 3), "translation of X_up[i]: body i's origin in parent coordinates"),
        ("S_cols", (nv, 6), "motion subspace, one row per degree of freedom (see S)"),
        ("c_J", (nb, 6), "velocity-product acceleration Ṡ q̇ of each joint"),
        ("v", (nb, 6), "spatial velocity of each body, body coordinates"),
        ("a", (nb, 6), "spatial acceleration of each body (RNEA, ABA)"),
        ("f", (nb, 6), "spatial force transmitted by each body's joint (RNEA)"),
        ("c", (nb, 6), "velocity-product acceleration c_i = c_J + v_i × v_J (ABA)"),
        ("pA", (nb, 6), "articulated bias force (ABA)"),
        ("IA", (nb, 6, 6), "articulated-body inertia (ABA, M⁻¹)"),
        ("U_cols", (nv, 6), "U_i = IA_i S_i, one row per degree of freedom (see U)"),
        ("D", (nb, 6, 6), "D_i = S_iᵀ U_i in the top-left nv_i × nv_i block"),
        ("D_inv", (nb, 6, 6), "D_i⁻¹ in the top-left nv_i × nv_i block"),
        ("u", (nv,), "u_i = τ_i - S_iᵀ pA_i (ABA)"),
        ("m_C", (nb,), "composite-rigid-body inertia IC_i = (m, h, Ī): mass (CRBA)"),
        ("h_C", (nb, 3), "IC_i: first moment h = m c"),
        ("I_C", (nb, 3, 3), "IC_i: rotational inertia about the body origin Ī"),
        ("S0", (nv, 6), "S of each degree of freedom in its root body's coordinates (CRBA)"),
        ("F0", (nv, 6), "IC_i S_i of each degree of freedom in root-body coordinates (CRBA)"),
        ("R", (nb, 3, 3), "body orientation: world (kinematics) or root-body (CRBA) axes"),
        ("p", (nb, 3), "body origin: world (kinematics) or root-body (CRBA) coordinates"),
        ("C", (nb, 3), "body centre of mass in world coordinates (kinematics)"),
        ("F", (nslots, nv, 6), "per-body force, then acceleration, columns of M⁻¹, in the "
                               "slots of _model.column_slots"),
        ("scratch", (72,), "scratch space of small dense factorizations"),
        ("J", (nv, 6), "joint columns J_i = ⁱX_0⁻¹ S_i in world coordinates (derivatives)"),
        ("dVdq", (nv, 6), "∂V/∂q of each degree of freedom, W (7)–(8) (derivatives)"),
        ("dAdq", (nv, 6), "∂A/∂q of each degree of freedom, W (7)–(8) (derivatives)"),
        ("dAdv", (nv, 6), "∂A/∂q̇ of each degree of freedom, W (7)–(8) (derivatives)"),
        ("B_C", (nb, 3, 6), "composite inertia variation B^C_i: its first three columns "
                            "(the others vanish), W (6) (derivatives)"),
        ("qdd", (nv,), "accelerations q̈ = FD(q, q̇, τ) at which forward dynamics is "
                       "differentiated"),
    ]


class Data:
    """Preallocated workspace of the kernels for one model.

    Parameters
    ----------
    model : Model
    nslots : int, optional
        Storage slots of the M⁻¹ columns (default: one per body).

    Attributes
    ----------
    E_up, r_up : (nbodies, 3, 3), (nbodies, 3) ndarray
        ``X_up[i] = plux(E_up[i], r_up[i])`` (see :attr:`X_up`).
    v, a, f, c, pA, c_J : (nbodies, 6) ndarray
        Spatial velocities, accelerations, forces, ABA bias accelerations and
        articulated bias forces, joint velocity-product terms.
    IA : (nbodies, 6, 6) ndarray
        Articulated-body inertias.
    m_C, h_C, I_C : (nbodies,), (nbodies, 3), (nbodies, 3, 3) ndarray
        Composite-rigid-body inertias ``IC_i`` as mass, first moment ``h = m c`` and
        rotational inertia about the body origin (see :attr:`IC`).
    D, D_inv : (nbodies, 6, 6) ndarray
        ``D_i = S_iᵀ IA_i S_i`` and its inverse, top-left ``nv_i × nv_i`` block.
    u : (nv,) ndarray
        ``u_i = τ_i - S_iᵀ pA_i``.
    S0, F0 : (nv, 6) ndarray
        CRBA: ``S_i`` and ``IC_i S_i`` per degree of freedom, in root-body coordinates.
    R, p, C : world orientation, origin and centre of mass of each body
        (CRBA leaves poses relative to each tree's root body in ``R``, ``p``).
    F : (nslots, nv, 6) ndarray
        Columns used by the M⁻¹ kernel; body ``i`` uses slot ``column_slots[i]``
        (a chain needs 2 slots, a tree as many as its widest cut), so the
        workspace grows linearly with a chain's length.
    J, dVdq, dAdq, dAdv : (nv, 6) ndarray
        Analytical derivatives: each degree of freedom's joint column and its
        ``∂V/∂q``, ``∂A/∂q``, ``∂A/∂q̇`` in world coordinates
        (:mod:`rbd.reference.derivatives`, W (1), W (7)–(8)); ``v``, ``a``, ``f`` and
        ``IC`` then hold world-coordinate values.
    B_C : (nbodies, 3, 6) ndarray
        Composite inertia variation ``B^C_i`` (W (6)): its first three columns, the
        last three being zero.
    qdd : (nv,) ndarray
        The ``q̈`` of the last forward-dynamics derivative.
    buffer : (size,) ndarray
        The memory behind every array above.
    offsets : dict
        ``name -> (offset, shape)`` in ``buffer``.
    """

    def __init__(self, model, nslots: int | None = None):
        self.nbodies = int(model.nbodies)
        self.nv = int(model.nv)
        self.nslots = self.nbodies if nslots is None else int(nslots)
        self._nv_j = [b.joint.nv for b in model.bodies]
        layout = _layout(self.nbodies, self.nv, self.nslots)
        self.offsets: dict[str, tuple[int, tuple[int, ...]]] = {}
        size = 0
        for name, shape, _ in layout:
            self.offsets[name] = (size, shape)
            size += int(np.prod(shape, dtype=np.int64))
        self.size = size
        self.buffer = np.zeros(size)
        for name, (offset, shape) in self.offsets.items():
            n = int(np.prod(shape, dtype=np.int64))
            setattr(self, name, self.buffer[offset:offset + n].reshape(shape))

    @staticmethod
    def describe(nbodies: int = 0, nv: int = 0, nslots: int | None = None) -> str:
        """A table of the workspace arrays: name, shape and meaning."""
        rows = _layout(nbodies, nv, nbodies if nslots is None else nslots)
        return "\n".join(f"{name:8s} {str(shape):14s} {doc}" for name, shape, doc in rows)

    @property
    def S(self) -> np.ndarray:
        """Motion subspaces side by side, ``(6, nv)``: ``S[:, model.v_index(i)]`` is ``S_i``."""
        return self.S_cols.T

    @property
    def U(self) -> np.ndarray:
        """``U_i = IA_i S_i`` side by side, ``(6, nv)``."""
        return self.U_cols.T

    @property
    def X_up(self) -> np.ndarray:
        """The Plücker transforms ``X_up[i]`` as ``(nbodies, 6, 6)`` matrices (a copy)."""
        return np.array([plux(self.E_up[i], self.r_up[i]) for i in range(self.nbodies)]
                        ).reshape(self.nbodies, 6, 6)

    @property
    def IC(self) -> np.ndarray:
        """Composite inertias ``[[Ī, h̃], [h̃ᵀ, m 1]]`` as ``(nbodies, 6, 6)`` matrices (a copy)."""
        IC = np.zeros((self.nbodies, 6, 6))
        for i in range(self.nbodies):
            H = skew(self.h_C[i])
            IC[i, :3, :3] = self.I_C[i]
            IC[i, :3, 3:] = H
            IC[i, 3:, :3] = H.T
            IC[i, 3:, 3:] = self.m_C[i] * np.eye(3)
        return IC

    def D_block(self, i: int) -> np.ndarray:
        """``D_i`` as its ``nv_i × nv_i`` block (a view)."""
        n = self._nv_j[i]
        return self.D[i, :n, :n]

    def __repr__(self) -> str:
        return f"<rbd.Data: {self.nbodies} bodies, nv={self.nv}, {self.size} doubles>"
