# cython: language_level=3
"""The inward articulated-inertia step shared by the ABA-type kernels.

Twins: ``pivot`` and ``articulated_inertia`` of ``rbd/reference/aba.py``.

``pivot`` and ``articulated_inertia`` are the one compiled home of the inward
pass's per-body work: the joint pivot ``D_i`` (standard, or Pai's modified pivot)
and its inverse, ``U_i = IA_i S_i``, and the articulated inertia handed to the
parent.
``D_i⁻¹`` is formed once from the Cholesky factor of ``D_i`` (``spd_inverse``) and
applied three times; the reference solves with that factor each time instead
(docs/design.md, "Where the twins differ").
The ABA, its modified-pivot form, the ``M⁻¹`` kernel and Si & Guenter's
recursion 4 all call them.
"""

from libc.string cimport memcpy

from rbd._kernels._model cimport ModelC, Work
from rbd._kernels._spatial cimport dot6, mat6_vec, rbi_apply, spd_inverse


cdef int aba(const ModelC* model, Work* w, const double* q, const double* qd,
             const double* tau, const double* f_ext, double* qdd,
             bint modified_pivot) noexcept nogil
cdef int mass_matrix_inverse(const ModelC* model, Work* w, const double* q,
                             double* M_inv) noexcept nogil


cdef inline int pivot(const ModelC* model, Work* w, Py_ssize_t i,
                      bint modified_pivot) noexcept nogil:
    # U_i = IA_i S_i,  D_i = S_iᵀ U_i + diag(armature_i),  D_i⁻¹;
    # returns 1 if D_i is not positive definite.
    # Modified pivot (Pai §7): IA_i holds only the children's IA~_i on entry, and
    # D_i = S_iᵀ I_i S_i + S_iᵀ IA~_i S_i is formed before IA_i = I_i + IA~_i.
    cdef Py_ssize_t nv_i = model.nv_j[i], vi = model.v_start[i], k, l
    cdef const double* S_i = w.S + 6 * vi
    cdef double* U_i = w.U + 6 * vi
    cdef double* IA_i = w.IA + 36 * i
    cdef double* D = w.D + 36 * i
    cdef double IS[36]
    for k in range(nv_i):
        # U_i = IA_i S_i   (modified: IA~_i S_i;  IS = I_i S_i)
        mat6_vec(IA_i, S_i + 6 * k, U_i + 6 * k)                           # RBDA T7.1
        if modified_pivot:
            rbi_apply(model.mass[i], model.h + 3 * i, model.Ibar + 9 * i, S_i + 6 * k,
                      IS + 6 * k)
    for k in range(nv_i):
        for l in range(nv_i):
            # D_i = S_iᵀ U_i   (modified: S_iᵀ (I_i S_i) + S_iᵀ (IA~_i S_i))
            D[6 * k + l] = dot6(S_i + 6 * k, U_i + 6 * l)                   # S&G (28)
            if modified_pivot:
                D[6 * k + l] = dot6(S_i + 6 * k, IS + 6 * l) + D[6 * k + l]  # Pai §7
        # D_i += diag(armature_i)   (rotor inertia, on the joint's own degrees of freedom)
        D[7 * k] += model.armature[vi + k]
    if modified_pivot:
        for k in range(6 * nv_i):
            # U_i = I_i S_i + IA~_i S_i
            U_i[k] += IS[k]
        for k in range(36):
            # IA_i = I_i + IA~_i
            IA_i[k] += model.inertia[36 * i + k]                            # Pai §5: M̂ = M + M̃
    if nv_i == 0:
        return 0
    return spd_inverse(D, <int>nv_i, 6, w.D_inv + 36 * i, w.scratch)


cdef inline void articulated_inertia(const ModelC* model, Work* w, Py_ssize_t i,
                                     double* Ia, double* UDinv) noexcept nogil:
    # Ia = IA_i - U_i D_i⁻¹ U_iᵀ;  UDinv = U_i D_i⁻¹ (6 × nv_i, column-major)
    cdef Py_ssize_t nv_i = model.nv_j[i], k, l, r, s
    cdef const double* U_i = w.U + 6 * model.v_start[i]
    cdef const double* D_inv = w.D_inv + 36 * i
    memcpy(Ia, w.IA + 36 * i, 36 * sizeof(double))
    for k in range(nv_i):
        for r in range(6):
            UDinv[6 * k + r] = 0.0
            for l in range(nv_i):
                UDinv[6 * k + r] += U_i[6 * l + r] * D_inv[6 * l + k]
    for k in range(nv_i):
        for r in range(6):
            for s in range(6):
                Ia[6 * r + s] -= UDinv[6 * k + r] * U_i[6 * k + s]          # S&G (27)
