# cython: language_level=3
"""Compiled entry points of a model with mimic joints, on its full tree's compiled model.

Part of the dispatch and validation layer of the kernels (see ``_model.pyx``),
not a derivation: it has no reference twin in ``rbd/reference/``.  Its Python
rendering is :class:`rbd.algorithms._coupled.CoupledDynamics`, which owns a
``CoupledKernel`` and hands it every single-state call of the quantities
below; batches, and a workspace already in use, take the Python path (a
method then returns None).

A mimic joint ``j`` of ``k`` has ``q_j = m q_k + o``, so with the constant
coupling matrix ``G`` (one non-zero per row: ``gain[r]`` in column
``col[r]`` for full degree of freedom ``r``)

    q_full = G_q q + o,   v_full = G v,   τ = Gᵀ τ_full,   M = Gᵀ M_full G,

and forward dynamics solves ``(Gᵀ M_full G) q̈ = τ − Gᵀ h_full`` by a Cholesky
factorization (:mod:`rbd.model.coupling`).  ``M_full`` and ``h_full`` come from the
kernels of ``crba.pyx`` and ``rnea.pyx`` on the full tree, in the full tree's
own workspace; the mapping, the projection and the factorization work in
buffers allocated once, here.  A coupled ``M`` that is not positive definite
(bodies without inertia) gives NaN, as the Python path does.
"""

cimport numpy as cnp
from libc.math cimport NAN
from libc.stdint cimport int64_t
from libc.string cimport memset

from rbd._kernels cimport _args
from rbd._kernels cimport crba as _crba
from rbd._kernels cimport rnea as _rnea
from rbd._kernels._base cimport CompiledBase
from rbd._kernels._spatial cimport cholesky_factor, cholesky_solve

import numpy as np

cnp.import_array()

__all__ = ["CoupledKernel"]


cdef class CoupledKernel:
    """Single-state ``rnea``, ``nonlinear_effects``, ``gravity_forces``, ``crba``, ``aba``
    and ``mass_matrix_inverse`` of a model with mimic joints (see the module docstring).

    Parameters
    ----------
    full : CompiledModel
        The compiled model of the full tree.
    coupling : rbd.model.coupling.Coupling
        The model's index maps (``q_keep``, ``q_mimic``, ``q_source``, ``v_keep``,
        ``v_mimic``, ``v_source``, ``multiplier``, ``offset``).
    """

    cdef CompiledBase full
    cdef Py_ssize_t nq, nv, nqf, nvf, nmim
    cdef const int64_t* q_keep          # nq: full index of each independent coordinate
    cdef const int64_t* q_mimic         # nmim: full index of each mimic coordinate
    cdef const int64_t* q_source        # nmim: independent index it follows
    cdef const double* multiplier       # nmim
    cdef const double* offset           # nmim
    cdef const int64_t* col             # nvf: the column of G holding row r's entry
    cdef const double* gain             # nvf: that entry (1, or a multiplier)
    cdef double* qf                     # nqf: q_full
    cdef double* vf                     # nvf: v_full
    cdef double* af                     # nvf: G a
    cdef double* tf                     # nvf: τ_full (or h_full)
    cdef double* Mf                     # nvf × nvf: M_full
    cdef object _arrays

    def __init__(self, full, coupling):
        self.full = <CompiledBase?>full
        c = coupling
        self.nq, self.nv = c.nq, c.nv
        self.nqf, self.nvf, self.nmim = c.nq_full, c.nv_full, len(c.q_mimic)
        col = np.empty(self.nvf, dtype=np.int64)
        gain = np.ones(self.nvf)
        col[c.v_keep] = np.arange(self.nv)
        col[c.v_mimic] = c.v_source
        gain[c.v_mimic] = c.multiplier
        ints = [np.ascontiguousarray(a, dtype=np.int64)
                for a in (c.q_keep, c.q_mimic, c.q_source, col)]
        reals = [np.ascontiguousarray(a, dtype=np.float64)
                 for a in (c.multiplier, c.offset, gain)]
        work = np.zeros(self.nqf + 3 * self.nvf + self.nvf * self.nvf)
        self._arrays = (ints, reals, work)
        self.q_keep = <const int64_t*>cnp.PyArray_DATA(ints[0])
        self.q_mimic = <const int64_t*>cnp.PyArray_DATA(ints[1])
        self.q_source = <const int64_t*>cnp.PyArray_DATA(ints[2])
        self.col = <const int64_t*>cnp.PyArray_DATA(ints[3])
        self.multiplier = <const double*>cnp.PyArray_DATA(reals[0])
        self.offset = <const double*>cnp.PyArray_DATA(reals[1])
        self.gain = <const double*>cnp.PyArray_DATA(reals[2])
        self.qf = <double*>cnp.PyArray_DATA(work)
        self.vf = self.qf + self.nqf
        self.af = self.vf + self.nvf
        self.tf = self.af + self.nvf
        self.Mf = self.tf + self.nvf

    # --- arguments: independent coordinates to the full tree's -----------------------------
    cdef int _q(self, object q) except -1:
        # q_full = G_q q + o, quaternions normalized in the buffer; 1 for a batch
        cdef cnp.ndarray arr = _args.as_array(q, "q")
        cdef Py_ssize_t k
        if _args.batch_of(arr, 1, self.nq, 0, "q") >= 0:
            return 1
        _args.check_finite(arr, "q")
        cdef const double* x = <const double*>cnp.PyArray_DATA(arr)
        for k in range(self.nq):
            self.qf[self.q_keep[k]] = x[k]
        for k in range(self.nmim):
            # q_j = m q_k + o
            self.qf[self.q_mimic[k]] = self.multiplier[k] * x[self.q_source[k]] + self.offset[k]
        if self.full.nquat and self.full._check_quaternions(self.qf, 1):
            self.full._normalize_quaternions(self.qf, 1)
        return 0

    cdef int _v(self, object v, str name, double* out) except -1:
        # out = G v; 1 for a batch
        cdef cnp.ndarray arr = _args.as_array(v, name)
        cdef Py_ssize_t r
        if _args.batch_of(arr, 1, self.nv, 0, name) >= 0:
            return 1
        _args.check_finite(arr, name)
        cdef const double* x = <const double*>cnp.PyArray_DATA(arr)
        for r in range(self.nvf):
            out[r] = self.gain[r] * x[self.col[r]]
        return 0

    cdef object _f(self, object f_ext):
        # f_ext as a (nbodies, 6) array, None when absent, False for a batch
        if f_ext is None:
            return None
        cdef cnp.ndarray arr = _args.as_array(f_ext, "f_ext")
        if _args.batch_of(arr, 2, self.full.m.nb, 6, "f_ext") >= 0:
            return False
        _args.check_finite(arr, "f_ext")
        return arr

    cdef bint _claim(self):
        # the full tree's workspace, unless a call holds it (then the Python path runs)
        if self.full.w0_busy:
            return False
        self.full.w0_busy = True
        return True

    # --- projections ------------------------------------------------------------------------
    cdef void _project(self, const double* t, double* out) noexcept nogil:
        # out = Gᵀ t
        cdef Py_ssize_t r
        memset(out, 0, self.nv * sizeof(double))
        for r in range(self.nvf):
            out[self.col[r]] += self.gain[r] * t[r]

    cdef void _project_matrix(self, double* M) noexcept nogil:
        # M = Gᵀ M_full G (nv × nv)
        cdef Py_ssize_t r, s, nv = self.nv, nvf = self.nvf
        memset(M, 0, nv * nv * sizeof(double))
        for r in range(nvf):
            for s in range(nvf):
                M[self.col[r] * nv + self.col[s]] += (self.gain[r] * self.gain[s]
                                                      * self.Mf[r * nvf + s])
        # M = ½ (M + Mᵀ): the exact symmetry the order of the sums may lose
        for r in range(nv):
            for s in range(r):
                M[r * nv + s] = M[s * nv + r] = 0.5 * (M[r * nv + s] + M[s * nv + r])

    # --- entry points -----------------------------------------------------------------------
    def rnea(self, q, v, a, f_ext=None):
        """``τ = Gᵀ τ_full(q_full, G v, G a, f)``, or None for a batch."""
        if self._q(q) or self._v(v, "v", self.vf) or self._v(a, "a", self.af):
            return None
        f = self._f(f_ext)
        if f is False or not self._claim():
            return None
        out = np.empty(self.nv)
        try:
            _rnea.rnea(&self.full.m, &self.full.w0, self.qf, self.vf, self.af,
                       NULL if f is None else <const double*>cnp.PyArray_DATA(f), self.tf)
        finally:
            self.full.w0_busy = False
        self._project(self.tf, <double*>cnp.PyArray_DATA(out))
        return out

    def nonlinear_effects(self, q, v):
        """``h = Gᵀ h_full(q_full, G v)``, or None for a batch."""
        return self._bias(q, v, True)

    def gravity_forces(self, q):
        """``g = Gᵀ g_full(q_full)``, or None for a batch."""
        return self._bias(q, None, False)

    cdef object _bias(self, object q, object v, bint moving):
        if self._q(q) or (moving and self._v(v, "v", self.vf)) or not self._claim():
            return None
        out = np.empty(self.nv)
        try:
            _rnea.rnea(&self.full.m, &self.full.w0, self.qf, self.vf if moving else NULL, NULL,
                       NULL, self.tf)
        finally:
            self.full.w0_busy = False
        self._project(self.tf, <double*>cnp.PyArray_DATA(out))
        return out

    def crba(self, q):
        """``M = Gᵀ M_full(q_full) G``, or None for a batch."""
        if self._q(q) or not self._claim():
            return None
        out = np.empty((self.nv, self.nv))
        try:
            _crba.crba(&self.full.m, &self.full.w0, self.qf, self.Mf)
        finally:
            self.full.w0_busy = False
        self._project_matrix(<double*>cnp.PyArray_DATA(out))
        return out

    def aba(self, q, v, tau, f_ext=None):
        """Solve ``(Gᵀ M_full G) q̈ = τ − Gᵀ h_full(q_full, G v, f)``, or None for a batch."""
        cdef Py_ssize_t k, nv = self.nv
        if self._q(q) or self._v(v, "v", self.vf):
            return None
        cdef cnp.ndarray t = _args.as_array(tau, "tau")
        if _args.batch_of(t, 1, nv, 0, "tau") >= 0:
            return None
        _args.check_finite(t, "tau")
        f = self._f(f_ext)
        if f is False or not self._claim():
            return None
        out = np.empty(nv)
        M = np.empty((nv, nv))
        cdef double* qdd = <double*>cnp.PyArray_DATA(out)
        cdef double* Mc = <double*>cnp.PyArray_DATA(M)
        cdef const double* tc = <const double*>cnp.PyArray_DATA(t)
        try:
            # M_full and h_full = ID(q_full, G v, 0, f) on the full tree
            _crba.crba(&self.full.m, &self.full.w0, self.qf, self.Mf)
            _rnea.rnea(&self.full.m, &self.full.w0, self.qf, self.vf, NULL,
                       NULL if f is None else <const double*>cnp.PyArray_DATA(f), self.tf)
        finally:
            self.full.w0_busy = False
        # M = Gᵀ M_full G;  q̈ = τ − Gᵀ h_full
        self._project_matrix(Mc)
        self._project(self.tf, qdd)
        for k in range(nv):
            qdd[k] = tc[k] - qdd[k]
        # q̈ = M⁻¹ (τ − h) by M = L Lᵀ
        if cholesky_factor(Mc, Mc, nv, nv):
            out.fill(NAN)
        else:
            cholesky_solve(Mc, qdd, nv)
        return out

    def mass_matrix_inverse(self, q):
        """``M⁻¹ = (Gᵀ M_full G)⁻¹`` by ``M = L Lᵀ``, or None for a batch."""
        cdef Py_ssize_t i, j, nv = self.nv
        M = self.crba(q)
        if M is None:
            return None
        cdef double* Mc = <double*>cnp.PyArray_DATA(M)
        out = np.zeros((nv, nv))
        cdef double* X = <double*>cnp.PyArray_DATA(out)
        if cholesky_factor(Mc, Mc, nv, nv):
            out.fill(NAN)
            return out
        # column j of M⁻¹ solves M x = e_j; rows of a symmetric result
        for j in range(nv):
            X[j * nv + j] = 1.0
            cholesky_solve(Mc, X + j * nv, nv)
        for i in range(nv):
            for j in range(i):
                X[i * nv + j] = X[j * nv + i] = 0.5 * (X[i * nv + j] + X[j * nv + i])
        return out
