# cython: language_level=3
"""Analytical derivatives of inverse and forward dynamics, compiled.

The compiled twin of ``rbd/reference/derivatives.py`` (after Carpentier &
Mansard, RSS 2018): RNEA's passes (``rnea.pyx``), then one tangent column per
coordinate, each an outward pass through the subtree of the joint that owns
the coordinate and an inward pass to the root; the tags ``D (n)`` are the
numbered equations of the reference module's notes.  Derivatives with respect
to ``q`` are taken in the tangent space (local increments for spherical and
free joints).  The same helpers as the reference: ``joint_partials``
(``∂S``, ``∂c_J`` of universal and planar joints), ``tangent_step`` (one body
of the outward pass), ``tangent_column`` and ``tau_partials``.

Results go to ``out``: three ``nv × nv`` row-major blocks, ``[∂τ/∂q, ∂τ/∂q̇,
M]`` or ``[∂q̈/∂q, ∂q̈/∂q̇, M⁻¹]``.  Symbolic joints are refused by the caller
(``CompiledModel``) before a kernel runs.  Both return 0, or ``1 + i`` when
the articulated inertia ``D_i`` of body ``i`` is not positive definite.
"""

from libc.string cimport memset

from rbd._kernels._model cimport J_PLANAR, J_UNIVERSAL, ModelC, Work
from rbd._kernels._spatial cimport (
    crf_apply,
    crm_apply,
    cross3,
    dot6,
    rbi_apply,
    xform_force_T_add,
    xform_motion,
)
from rbd._kernels.aba cimport aba, mass_matrix_inverse
from rbd._kernels.crba cimport crba
from rbd._kernels.rnea cimport rnea


cdef inline void planar_partials(const double* S_j, const double* qdj, Py_ssize_t k,
                                 bint wrt_q, double* dS, double* dc_J) noexcept nogil:
    # planar: with S₀ = [0; E e₁], S₁ = [0; E e₂], ∂S₀/∂θ = -S₁ and ∂S₁/∂θ = S₀
    cdef int m
    for m in range(3, 6):
        if wrt_q and k == 2:
            # ∂S = [-S₁, S₀, 0];  ∂c_J = -(S₀ q̇_x + S₁ q̇_y) θ̇
            dS[m] = -S_j[6 + m]
            dS[6 + m] = S_j[m]
            dc_J[m] = -(S_j[m] * qdj[0] + S_j[6 + m] * qdj[1]) * qdj[2]
        elif not wrt_q and k == 0:
            # ∂c_J/∂q̇_x = -S₁ θ̇
            dc_J[m] = -S_j[6 + m] * qdj[2]
        elif not wrt_q and k == 1:
            # ∂c_J/∂q̇_y = S₀ θ̇
            dc_J[m] = S_j[m] * qdj[2]
        elif not wrt_q:
            # ∂c_J/∂θ̇ = -S₁ q̇_x + S₀ q̇_y
            dc_J[m] = -S_j[6 + m] * qdj[0] + S_j[m] * qdj[1]


cdef inline void joint_partials(const ModelC* model, Work* w, Py_ssize_t j, Py_ssize_t k,
                                bint wrt_q, const double* qd, double* dS,
                                double* dc_J) noexcept nogil:
    # ∂S_j (6 × nv_j, column-major) and ∂c_J along x = δq_{j,k} (wrt_q) or q̇_{j,k};
    # non-zero for universal and planar joints only
    cdef const double* par = model.jparams + 9 * j
    cdef const double* qdj = qd + model.v_start[j]
    cdef const double* S_j = w.S + 6 * model.v_start[j]
    cdef double t[3]
    cdef double u[3]
    cdef int m
    memset(dS, 0, 36 * sizeof(double))
    memset(dc_J, 0, 6 * sizeof(double))
    if model.jtype[j] == J_UNIVERSAL:
        # t = a₂ × w,  w = E₂ a₁ = S_j[:3, 0]
        cross3(par + 3, S_j, t)
        if wrt_q and k == 1:
            # ∂S[:, 0] = [-t; 0];  ∂c_J = [(a₂ × t) q̇₁ q̇₂; 0]
            cross3(par + 3, t, u)
            for m in range(3):
                dS[m] = -t[m]
                dc_J[m] = u[m] * qdj[0] * qdj[1]
        elif not wrt_q:
            # ∂c_J/∂q̇₁ = [-t q̇₂; 0],  ∂c_J/∂q̇₂ = [-t q̇₁; 0]
            for m in range(3):
                dc_J[m] = -t[m] * qdj[1 - k]
    elif model.jtype[j] == J_PLANAR:
        planar_partials(S_j, qdj, k, wrt_q, dS, dc_J)


cdef inline void tangent_step(const ModelC* model, Work* w, Py_ssize_t i, Py_ssize_t j,
                              const double* s, bint wrt_q, const double* qd,
                              const double* qdd, const double* dS,
                              const double* dc_J) noexcept nogil:
    # ∂v_i, ∂a_i, ∂f_i of body i in the subtree of joint j (s = S_j[:, k])
    cdef Py_ssize_t p = model.parent[i], vj = model.v_start[j], n, m
    cdef const double* E = w.E_up + 9 * i
    cdef const double* r = w.r_up + 3 * i
    cdef const double* v_i = w.v + 6 * i
    cdef const double* v_J = w.v_J + 6 * i
    cdef const double* a_p = <const double*>&model.a0[0] if p < 0 else w.a + 6 * p
    cdef double* dv = w.dv + 6 * i
    cdef double* da = w.da + 6 * i
    cdef double* df = w.df + 6 * i
    cdef double dv_J[6]
    cdef double dc[6]
    cdef double t[6]
    cdef double Iv[6]
    for n in range(6):
        dv_J[n] = 0.0
        dc[n] = dc_J[n] if i == j else 0.0
    if i == j and wrt_q:
        # ∂v_J = ∂S q̇_j;  ∂v_j = -s × (v_j - v_J) + ∂v_J
        for n in range(6):
            t[n] = v_i[n] - v_J[n]
            for m in range(model.nv_j[j]):
                dv_J[n] += dS[6 * m + n] * qd[vj + m]
        crm_apply(s, t, dv)
        # ∂a_j = -s × (X_up[j] a_λ(j)) + ∂S q̈_j
        xform_motion(E, r, a_p, t)
        crm_apply(s, t, da)
        for n in range(6):
            dv[n] = dv_J[n] - dv[n]                                         # D (2)
            da[n] = -da[n]
            for m in range(model.nv_j[j]):
                da[n] += dS[6 * m + n] * qdd[vj + m]                        # D (4)
    elif i == j:
        # ∂v_J = ∂v_j = s
        for n in range(6):
            dv_J[n] = s[n]
            dv[n] = s[n]                                                    # D (2)
            da[n] = 0.0
    else:
        # ∂v_i = X_up[i] ∂v_λ(i);  ∂a_i = X_up[i] ∂a_λ(i)
        xform_motion(E, r, w.dv + 6 * p, dv)                                # D (5)
        xform_motion(E, r, w.da + 6 * p, da)                                # D (5)
    # ∂c_i = ∂c_J + ∂v_i × v_J + v_i × ∂v_J;  ∂a_i += ∂c_i
    crm_apply(dv, v_J, t)
    for n in range(6):
        dc[n] += t[n]
    crm_apply(v_i, dv_J, t)
    for n in range(6):
        da[n] += dc[n] + t[n]                                               # D (3), D (4)
    # ∂f_i = I_i ∂a_i + ∂v_i ×* I_i v_i + v_i ×* I_i ∂v_i
    rbi_apply(model.mass[i], model.h + 3 * i, model.Ibar + 9 * i, da, df)
    rbi_apply(model.mass[i], model.h + 3 * i, model.Ibar + 9 * i, v_i, Iv)
    crf_apply(dv, Iv, t)
    for n in range(6):
        df[n] += t[n]
    rbi_apply(model.mass[i], model.h + 3 * i, model.Ibar + 9 * i, dv, Iv)
    crf_apply(v_i, Iv, t)
    for n in range(6):
        df[n] += t[n]                                                       # D (6)


cdef inline void tangent_column(const ModelC* model, Work* w, Py_ssize_t j, Py_ssize_t k,
                                bint wrt_q, const double* qd, const double* qdd,
                                double* dtau) noexcept nogil:
    # ∂τ/∂x for x = δq_{j,k} (wrt_q) or q̇_{j,k}: entry r goes to dtau[nv r]
    cdef Py_ssize_t nb = model.nb, nv = model.nv, i, p, m, vi
    cdef const double* s = w.S + 6 * (model.v_start[j] + k)
    cdef bint at_j
    cdef double dS[36]
    cdef double dc_J[6]
    cdef double t[6]
    joint_partials(model, w, j, k, wrt_q, qd, dS, dc_J)
    memset(w.df, 0, 6 * nb * sizeof(double))
    memset(w.inside, 0, nb * sizeof(double))

    # --- outward pass: tangents of velocities, accelerations and forces (subtree of j)
    for i in range(j, nb):
        p = model.parent[i]
        if i == j or (p >= 0 and w.inside[p] != 0.0):
            w.inside[i] = 1.0
            tangent_step(model, w, i, j, s, wrt_q, qd, qdd, dS, dc_J)

    # --- inward pass: tangents of joint forces
    for i in range(nb - 1, -1, -1):
        vi = model.v_start[i]
        p = model.parent[i]
        at_j = i == j and wrt_q
        for m in range(model.nv_j[i]):
            # ∂τ_i = S_iᵀ ∂f_i (+ ∂S_jᵀ f_j at i = j)
            dtau[nv * (vi + m)] = dot6(w.S + 6 * (vi + m), w.df + 6 * i)    # D (7)
            if at_j:
                dtau[nv * (vi + m)] += dot6(dS + 6 * m, w.f + 6 * i)        # D (7)
        if p < 0 or (i > j and w.inside[i] == 0.0):
            continue
        # ∂f_λ(i) += X_up[i]ᵀ (∂f_i + [i = j] s ×* f_j)
        if at_j:
            crf_apply(s, w.f + 6 * i, t)
            for m in range(6):
                t[m] += w.df[6 * i + m]
            xform_force_T_add(w.E_up + 9 * i, w.r_up + 3 * i, t, w.df + 6 * p)  # D (8)
        else:
            xform_force_T_add(w.E_up + 9 * i, w.r_up + 3 * i, w.df + 6 * i,
                              w.df + 6 * p)                                 # D (8)


cdef inline void tau_partials(const ModelC* model, Work* w, const double* q,
                              const double* qd, const double* qdd, const double* f_ext,
                              double* dtau_dq, double* dtau_dv) noexcept nogil:
    # (∂τ/∂q, ∂τ/∂q̇) at (q, q̇, q̈), row-major nv × nv, one column per coordinate
    cdef Py_ssize_t i, j, k, n, col
    # RNEA: X_up, S, v, a and the accumulated body forces f (τ itself is not needed)
    rnea(model, w, q, qd, qdd, f_ext, w.col)
    for i in range(model.nb):
        # v_J = S_i q̇_i
        for n in range(6):
            w.v_J[6 * i + n] = 0.0
            for k in range(model.nv_j[i]):
                w.v_J[6 * i + n] += w.S[6 * (model.v_start[i] + k) + n] * qd[model.v_start[i] + k]
    for j in range(model.nb):
        for k in range(model.nv_j[j]):
            col = model.v_start[j] + k
            tangent_column(model, w, j, k, True, qd, qdd, dtau_dq + col)
            tangent_column(model, w, j, k, False, qd, qdd, dtau_dv + col)


cdef inline void minus_product(Py_ssize_t n, const double* A, double* B,
                               double* col) noexcept nogil:
    # B = -A B for n × n row-major matrices, one column of B at a time (col: n doubles)
    cdef Py_ssize_t r, c, m
    for c in range(n):
        for r in range(n):
            col[r] = B[n * r + c]
        for r in range(n):
            B[n * r + c] = 0.0
            for m in range(n):
                B[n * r + c] -= A[n * r + m] * col[m]


cdef int rnea_derivatives(const ModelC* model, Work* w, const double* q, const double* qd,
                          const double* qdd, const double* f_ext,
                          double* out) noexcept nogil:
    """out = [∂τ/∂q, ∂τ/∂q̇, ∂τ/∂q̈ = M] at (q, q̇, q̈, f_ext)."""
    cdef Py_ssize_t n2 = model.nv * model.nv
    tau_partials(model, w, q, qd, qdd, f_ext, out, out + n2)
    # ∂τ/∂q̈ = M (armature included)
    crba(model, w, q, out + 2 * n2)
    return 0


cdef int aba_derivatives(const ModelC* model, Work* w, const double* q, const double* qd,
                         const double* tau, const double* f_ext, double* out) noexcept nogil:
    """out = [∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂τ = M⁻¹] at (q, q̇, τ, f_ext)."""
    cdef Py_ssize_t n2 = model.nv * model.nv
    cdef int status
    # q̈ = FD(q, q̇, τ)
    status = aba(model, w, q, qd, tau, f_ext, w.qdd, False)
    if status:
        return status
    tau_partials(model, w, q, qd, w.qdd, f_ext, out, out + n2)
    status = mass_matrix_inverse(model, w, q, out + 2 * n2)
    if status:
        return status
    # ∂q̈/∂x = -M⁻¹ ∂τ/∂x   (x = q, q̇)
    minus_product(model.nv, out + 2 * n2, out, w.col)
    minus_product(model.nv, out + 2 * n2, out + n2, w.col)
    return 0
