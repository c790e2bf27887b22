r"""Mimic joints: coordinates that are affine functions of others.

A URDF ``<mimic joint="k" multiplier="m" offset="o"/>`` on joint ``j`` ties
its coordinate to another one, ``q_j = m q_k + o``.  A model with such joints
(:meth:`rbd.Model.add_mimic`) keeps its whole kinematic tree, the *full*
model (:meth:`rbd.Model.full_model`: every one-degree-of-freedom joint with a
coordinate of its own), and exposes only the *independent* coordinates: its
``nq``, ``nv``, ``joint_names``, ``q_slice`` and limits leave the mimic
joints out.

The coupling matrix
-------------------
Mimic joints are one-degree-of-freedom joints (revolute, prismatic,
helical: ``nq = nv = 1`` and ``q̇ = v``), so the full coordinates are an
affine function of the independent ones, with a constant matrix ``G``
(``nv_full × nv``; a row of the identity for an independent coordinate, ``m``
in the column of ``k`` for a mimic joint) and offsets ``o`` (zero but at the
mimic joints):

.. math::

    q_\text{full} = G_q\, q + o, \qquad v_\text{full} = G v, \qquad
    \dot v_\text{full} = G \dot v

(``G_q`` is ``G`` with quaternion rows where a spherical or free joint has
four ``q`` coordinates and three ``v`` ones; ``G`` is constant, so there is no
``\dot G v`` term).  The Lagrangian of the coupled system is the full one at
these coordinates, and the principle of virtual work
(``τ_fullᵀ δq_full = τ_fullᵀ G δq``) projects every generalized force:

.. math::

    \tau = G^T \tau_\text{full}, \qquad M = G^T M_\text{full} G, \qquad
    h = G^T h_\text{full}, \qquad J = J_\text{full} G,

and forward dynamics solves the projected system by a Cholesky factorization,

.. math::

    (G^T M_\text{full} G)\, \ddot q = \tau - G^T h_\text{full}(q_\text{full}, G v, f),
    \qquad M^{-1} = (G^T M_\text{full} G)^{-1}.

Energies, poses, centres of mass are those of the full tree at
``q_full``; :func:`rbd.integrate` moves the full coordinates with ``G v`` and
keeps the independent ones.  A mimic joint's armature enters ``M_full`` and
so ``M`` (reflected as ``m² · armature``); its limits are not enforced.

This module holds the index maps (:class:`Coupling`), which belong to the
model; every public function runs the mapping around the full model's own
algorithm (the compiled kernel or the reference derivation) through
:class:`rbd.algorithms._coupled.CoupledDynamics`, which has the methods of a
compiled model and is what ``rbd.algorithms`` dispatches to for a model with
mimic joints.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Coupling", "MIMIC_KINDS"]

#: Joint kinds that may mimic or be mimicked: one coordinate with ``q̇ = v``.
MIMIC_KINDS = ("revolute", "prismatic", "helical")


class Coupling:
    """Index maps and the coupling matrix ``G`` of a model with mimic joints.

    Parameters
    ----------
    bodies : sequence of Body
        The full tree's bodies.
    q_start, v_start : sequence of int
        Each body's first coordinate in the full ``q`` and ``v``.
    mimic : dict
        ``{body index: (mimicked body index, multiplier, offset)}``.

    Attributes
    ----------
    q_start, v_start : (nbodies,) int ndarray
        Each body's first independent coordinate (``-1`` for a mimic joint).
    q_keep, v_keep : int ndarray
        Full indices of the independent coordinates, in order.
    G : (nv_full, nv) ndarray
        The coupling matrix, ``v_full = G v``.
    """

    def __init__(self, bodies, q_start, v_start, mimic: dict):
        nb = len(bodies)
        self.nq_full = int(sum(b.joint.nq for b in bodies))
        self.nv_full = int(sum(b.joint.nv for b in bodies))
        self.q_start = np.full(nb, -1, dtype=np.int64)
        self.v_start = np.full(nb, -1, dtype=np.int64)
        q_keep, v_keep, nq, nv = [], [], 0, 0
        for i, b in enumerate(bodies):
            if i in mimic:
                continue
            self.q_start[i], self.v_start[i] = nq, nv
            q_keep.extend(range(q_start[i], q_start[i] + b.joint.nq))
            v_keep.extend(range(v_start[i], v_start[i] + b.joint.nv))
            nq, nv = nq + b.joint.nq, nv + b.joint.nv
        self.nq, self.nv = nq, nv
        self.q_keep = np.array(q_keep, dtype=np.int64)
        self.v_keep = np.array(v_keep, dtype=np.int64)
        order = sorted(mimic)
        self.q_mimic = np.array([q_start[i] for i in order], dtype=np.int64)
        self.v_mimic = np.array([v_start[i] for i in order], dtype=np.int64)
        self.q_source = np.array([self.q_start[mimic[i][0]] for i in order], dtype=np.int64)
        self.v_source = np.array([self.v_start[mimic[i][0]] for i in order], dtype=np.int64)
        self.multiplier = np.array([mimic[i][1] for i in order], dtype=float)
        self.offset = np.array([mimic[i][2] for i in order], dtype=float)
        self.G = np.zeros((self.nv_full, nv))
        self.G[self.v_keep, np.arange(nv)] = 1.0
        self.G[self.v_mimic, self.v_source] = self.multiplier
        for array in vars(self).values():
            if isinstance(array, np.ndarray):
                array.setflags(write=False)

    def full_q(self, q: np.ndarray) -> np.ndarray:
        """``q_full = G_q q + o``: independent configurations, ``(..., nq)``, to full ones."""
        out = np.empty((*q.shape[:-1], self.nq_full))
        out[..., self.q_keep] = q
        out[..., self.q_mimic] = self.multiplier * q[..., self.q_source] + self.offset
        return out

    def full_v(self, v: np.ndarray) -> np.ndarray:
        """``v_full = G v`` (also accelerations), ``(..., nv)`` to ``(..., nv_full)``."""
        out = np.empty((*v.shape[:-1], self.nv_full))
        out[..., self.v_keep] = v
        out[..., self.v_mimic] = self.multiplier * v[..., self.v_source]
        return out

    def project(self, tau_full: np.ndarray) -> np.ndarray:
        """``Gᵀ τ_full``: a generalized force ``(..., nv_full)`` on the independent coordinates."""
        return tau_full @ self.G

    def project_matrix(self, M_full: np.ndarray) -> np.ndarray:
        """``Gᵀ M_full G`` for ``(..., nv_full, nv_full)``, symmetric as ``M_full``."""
        M = self.G.T @ M_full @ self.G
        return 0.5 * (M + np.swapaxes(M, -1, -2))   # the exact symmetry rounding may lose
