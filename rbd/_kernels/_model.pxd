# cython: language_level=3
"""The compiled model and its workspace, shared by every kernel; jcalc.

``ModelC`` holds the flat arrays of ``Model.flat_arrays()`` (see rbd/model/__init__.py):
topology as integer arrays, the tree transforms as ``(E, r)``, the inertias in
the compact form ``(m, h, Ī)`` of ``_spatial.pxd`` and as 6×6 matrices, and the
joints as a type code with a parameter block (see rbd/joints.py).  ``Work``
points into one preallocated buffer laid out by :class:`rbd.data.Data`.

``jcalc`` is the one place that dispatches on the joint type code; a new joint
type is added there (and in ``rbd.joints.JOINT_CODES``).
"""

from libc.math cimport cos, sin
from libc.stdint cimport int64_t

from rbd._kernels._spatial cimport (
    axis_rotation_T,
    cross3,
    mat3_mul,
    mat3_vec,
    plux_compose,
    quat_to_rot_T,
    set_identity3,
)

# Joint type codes: rbd.joints.JOINT_CODES.
cdef enum:
    J_FIXED = 0
    J_REVOLUTE = 1
    J_PRISMATIC = 2
    J_HELICAL = 3
    J_UNIVERSAL = 4
    J_SPHERICAL = 5
    J_FREE = 6
    J_PLANAR = 7
    J_SYMBOLIC = 8

# Largest number of degrees of freedom of one joint.
cdef enum:
    MAX_JOINT_NV = 6

# The C function of a generated joint (PyCapsule "rbd.jcalc"): from q_i and q̇_i it writes
# E (3×3 row-major, the rotation of X_J = Rᵀ), r (3, X_J = plux(E, r)),
# S (6 × nv, column-major) and cJ = Ṡ q̇ (6).
ctypedef void (*jcalc_fn)(const double* q, const double* qd, double* E, double* r,
                          double* S, double* cJ) noexcept nogil


cdef struct ModelC:
    Py_ssize_t nb                 # number of bodies
    Py_ssize_t nq                 # configuration size
    Py_ssize_t nv                 # velocity size
    const int64_t* parent         # λ(i), -1 for the world
    const int64_t* jtype          # joint type code
    const double* jparams         # nb × 9 joint parameters (Joint.kernel_params)
    const int64_t* q_start        # first index of q_i in q
    const int64_t* v_start        # first index of q̇_i in q̇
    const int64_t* nq_j           # size of q_i
    const int64_t* nv_j           # size of q̇_i
    const int64_t* dof_parent     # nv: λ of the degrees of freedom (-1 at a root)
    const int64_t* dof_path       # Σ_k (d_k − 1): the ancestors of each dof, nearest first,
    const int64_t* dof_path_start #   dof k's at dof_path[dof_path_start[k]:dof_path_start[k + 1]]
                                  #   (nv + 1 starts): the tree factor's loops (crba.ltl)
    const double* E_tree          # nb × 3×3: X_tree[i] = plux(E_tree[i], r_tree[i])
    const double* r_tree          # nb × 3
    const double* mass            # m_i
    const double* com             # nb × 3: c_i, body frame
    const double* h               # nb × 3: h_i = m_i c_i
    const double* Ibar            # nb × 3×3: Ī_i = I_c + m c̃ c̃ᵀ (rotational inertia, origin)
    const double* inertia         # nb × 6×6: spatial inertia I_i about the body origin
    const double* armature        # nv: rotor inertia of each degree of freedom (M += diag)
    const jcalc_fn* jfun          # nb generated joint functions (NULL unless symbolic)
    const int64_t* col_slot       # nb: slot of body i's columns F_i in Work.F (M⁻¹ kernel)
    const int64_t* col_last       # nb: last body whose pass touches F_i (max(i, children))
    Py_ssize_t ncol_slots         # slots in use: F_i lives from body col_last[i] down to i
    Py_ssize_t dof_depths         # Σ_k d_k: lengths of the degrees of freedom's root paths
    double gravity[3]             # g, world coordinates
    double a0[6]                  # base acceleration [0; -g] (gravity as a base acceleration)


cdef struct Work:
    double* E_up                  # nb × 3×3: X_up[i] = plux(E_up[i], r_up[i]) = X_J X_tree
    double* r_up                  # nb × 3
    double* S                     # nv × 6: motion subspace, one 6-vector per degree of freedom
    double* c_J                   # nb × 6: Ṡ q̇ of each joint
    double* v                     # nb × 6: body velocities
    double* a                     # nb × 6: body accelerations
    double* f                     # nb × 6: body forces (RNEA)
    double* c                     # nb × 6: velocity-product accelerations (ABA)
    double* pA                    # nb × 6: articulated bias forces
    double* IA                    # nb × 6×6: articulated inertias
    double* U                     # nv × 6: U_i = IA_i S_i
    double* D                     # nb × 6×6: D_i = S_iᵀ U_i (top-left nv_i × nv_i block)
    double* D_inv                 # nb × 6×6: D_i⁻¹
    double* u                     # nv: u_i = τ_i - S_iᵀ pA_i
    double* m_C                   # nb: composite inertia IC_i = (m_C, h_C, I_C) (CRBA) -
    double* h_C                   # nb × 3:   a rigid-body inertia in the compact form of
    double* I_C                   # nb × 3×3:   _spatial.pxd
    double* S0                    # nv × 6: S in the coordinates of the root body (CRBA)
    double* F0                    # nv × 6: F = IC S in the coordinates of the root body (CRBA)
    double* R                     # nb × 3×3: body orientation in world coordinates
    double* p                     # nb × 3: body origin in world coordinates
    double* C                     # nb × 3: body centre of mass in world coordinates
    double* F                     # ncol_slots × nv × 6: force / acceleration columns (M⁻¹)
    double* scratch               # 72 doubles for small dense factorizations
    double* J                     # nv × 6: joint columns in world coordinates (derivatives)
    double* dVdq                  # nv × 6: ∂V/∂q of each degree of freedom (derivatives)
    double* dAdq                  # nv × 6: ∂A/∂q of each degree of freedom (derivatives)
    double* dAdv                  # nv × 6: ∂A/∂q̇ of each degree of freedom (derivatives)
    double* B_C                   # nb × 3 × 6: composite inertia variation, first 3 columns
    double* qdd                   # nv: q̈ at which forward dynamics is differentiated
    int status                    # 0, or 1 + the body whose D_i is not positive definite


cdef inline void jcalc_universal(const double* par, const double* qi, const double* qdi,
                                 double* E, double* S, double* c_J) noexcept nogil:
    # E = (exp(ã₁q₁) exp(ã₂q₂))ᵀ = E₂ E₁;  S = [[E₂ a₁, a₂]; 0]   (rbd.joints.Universal)
    cdef double E1[9]
    cdef double E2[9]
    cdef double t[3]
    axis_rotation_T(par, qi[0], sin(qi[0]), cos(qi[0]), E1)
    axis_rotation_T(par + 3, qi[1], sin(qi[1]), cos(qi[1]), E2)
    mat3_mul(E2, E1, E)
    mat3_vec(E2, par, S)
    S[3] = 0.0; S[4] = 0.0; S[5] = 0.0
    S[6] = par[3]; S[7] = par[4]; S[8] = par[5]; S[9] = 0.0; S[10] = 0.0; S[11] = 0.0
    if qdi != NULL:
        # c_J = [-(a₂ × E₂ a₁) q̇₁ q̇₂; 0]
        cross3(par + 3, S, t)
        c_J[0] = -t[0] * qdi[0] * qdi[1]
        c_J[1] = -t[1] * qdi[0] * qdi[1]
        c_J[2] = -t[2] * qdi[0] * qdi[1]


cdef inline void jcalc_planar(const double* par, const double* qi, const double* qdi,
                              double* E, double* r, double* S, double* c_J) noexcept nogil:
    # E = exp(ñ θ)ᵀ, r = x e₁ + y e₂;  S = [[0, 0, n]; [E e₁, E e₂, 0]]   (rbd.joints.Planar)
    cdef double s = sin(qi[2]), co = cos(qi[2]), w0, w1
    cdef int k
    axis_rotation_T(par, qi[2], s, co, E)
    for k in range(3):
        r[k] = qi[0] * par[3 + k] + qi[1] * par[6 + k]
        S[k] = 0.0
        S[3 + k] = co * par[3 + k] - s * par[6 + k]
        S[6 + k] = 0.0
        S[9 + k] = s * par[3 + k] + co * par[6 + k]
        S[12 + k] = par[k]
        S[15 + k] = 0.0
    if qdi != NULL:
        # c_J = Ṡ q̇ = [0; ((-s e₁ - c e₂) q̇_x + (c e₁ - s e₂) q̇_y) θ̇]
        w0 = qdi[0] * qdi[2]
        w1 = qdi[1] * qdi[2]
        for k in range(3):
            c_J[3 + k] = ((-s * par[3 + k] - co * par[6 + k]) * w0
                          + (co * par[3 + k] - s * par[6 + k]) * w1)


cdef inline void jcalc(const ModelC* model, Py_ssize_t i, const double* q, const double* qd,
                       double* E, double* r, double* S, double* c_J) noexcept nogil:
    # X_J = plux(E, r), S (6 × nv_i, column-major) and c_J = Ṡ q̇ of joint i at q_i
    # (= q + q_start[i]) and q̇_i (= qd + v_start[i]; NULL for q̇ = 0: c_J is then 0).
    # Formulas: the Joint classes of rbd/joints.py.
    cdef const double* par = model.jparams + 9 * i
    cdef const double* qi = q + model.q_start[i]
    cdef const double* qdi = NULL
    cdef int64_t code = model.jtype[i]
    cdef double zero[MAX_JOINT_NV]
    cdef double cJ_unused[6]
    cdef int k
    if qd != NULL:
        qdi = qd + model.v_start[i]
    for k in range(6):
        c_J[k] = 0.0
    r[0] = 0.0; r[1] = 0.0; r[2] = 0.0
    if code == J_REVOLUTE:
        # E = exp(ã q)ᵀ, r = 0;  S = [a; 0]
        axis_rotation_T(par, qi[0], sin(qi[0]), cos(qi[0]), E)
        S[0] = par[0]; S[1] = par[1]; S[2] = par[2]; S[3] = 0.0; S[4] = 0.0; S[5] = 0.0
    elif code == J_PRISMATIC:
        # E = 1, r = a q;  S = [0; a]
        set_identity3(E)
        r[0] = par[0] * qi[0]; r[1] = par[1] * qi[0]; r[2] = par[2] * qi[0]
        S[0] = 0.0; S[1] = 0.0; S[2] = 0.0; S[3] = par[0]; S[4] = par[1]; S[5] = par[2]
    elif code == J_HELICAL:
        # E = exp(ã q)ᵀ, r = a h q;  S = [a; h a]   (h = pitch)
        axis_rotation_T(par, qi[0], sin(qi[0]), cos(qi[0]), E)
        r[0] = par[0] * par[3] * qi[0]; r[1] = par[1] * par[3] * qi[0]
        r[2] = par[2] * par[3] * qi[0]
        S[0] = par[0]; S[1] = par[1]; S[2] = par[2]
        S[3] = par[3] * par[0]; S[4] = par[3] * par[1]; S[5] = par[3] * par[2]
    elif code == J_UNIVERSAL:
        # E = (exp(ã₁q₁) exp(ã₂q₂))ᵀ = E₂ E₁;  S = [[E₂ a₁, a₂]; 0];  c_J
        jcalc_universal(par, qi, qdi, E, S, c_J)
    elif code == J_SPHERICAL:
        # E = R(quat)ᵀ, r = 0;  S = [1; 0]
        quat_to_rot_T(qi, E)
        for k in range(18):
            S[k] = 0.0
        S[0] = 1.0; S[7] = 1.0; S[14] = 1.0
    elif code == J_FREE:
        # E = R(quat)ᵀ, r = p;  S = 1 (6×6)
        quat_to_rot_T(qi + 3, E)
        r[0] = qi[0]; r[1] = qi[1]; r[2] = qi[2]
        for k in range(36):
            S[k] = 0.0
        for k in range(6):
            S[7 * k] = 1.0
    elif code == J_PLANAR:
        # E = exp(ñ θ)ᵀ, r = x e₁ + y e₂;  S = [[0, 0, n]; [E e₁, E e₂, 0]];  c_J
        jcalc_planar(par, qi, qdi, E, r, S, c_J)
    elif code == J_SYMBOLIC:
        # the generated C function of the joint
        if qdi == NULL:
            for k in range(MAX_JOINT_NV):
                zero[k] = 0.0
            model.jfun[i](qi, zero, E, r, S, cJ_unused)
        else:
            model.jfun[i](qi, qdi, E, r, S, c_J)
    else:
        # fixed: E = 1, r = 0, no S
        set_identity3(E)


cdef inline void joint_step(const ModelC* model, Work* w, Py_ssize_t i, const double* q,
                            const double* qd) noexcept nogil:
    # X_J, S_i, c_J = jcalc(q_i, q̇_i);  X_up[i] = X_J X_tree[i]   (S&G (8))
    cdef double E_J[9]
    cdef double r_J[3]
    cdef const double* E_T = model.E_tree + 9 * i
    cdef const double* r_T = model.r_tree + 3 * i
    cdef double* E_up = w.E_up + 9 * i
    cdef double* r_up = w.r_up + 3 * i
    cdef int k
    jcalc(model, i, q, qd, E_J, r_J, w.S + 6 * model.v_start[i], w.c_J + 6 * i)
    if (E_T[0] == 1.0 and E_T[4] == 1.0 and E_T[8] == 1.0 and E_T[1] == 0.0 and E_T[2] == 0.0
            and E_T[3] == 0.0 and E_T[5] == 0.0 and E_T[6] == 0.0 and E_T[7] == 0.0):
        # X_tree a pure translation: E_up = E_J,  r_up = r_tree + r_J
        for k in range(9):
            E_up[k] = E_J[k]
        for k in range(3):
            r_up[k] = r_T[k] + r_J[k]
    else:
        # E_up = E_J E_tree,  r_up = r_tree + E_treeᵀ r_J
        plux_compose(E_J, r_J, E_T, r_T, E_up, r_up)


cdef inline void armature_bias_add(const ModelC* model, Py_ssize_t i, const double* qd,
                                   double scale, double* out) noexcept nogil:
    # out[v_i + 3 + k] += scale a_k (ω × u)_k on a free joint's linear rows (q̇_i = [ω; u]):
    # the velocity product of its armature acting on the world-frame ṗ = R u
    # (rbd.reference.rnea.armature_bias); nothing for other joints or a NULL q̇
    cdef Py_ssize_t vi = model.v_start[i], k
    cdef const double* a = model.armature + vi + 3
    cdef double wu[3]
    if model.jtype[i] != J_FREE or qd == NULL or (a[0] == 0.0 and a[1] == 0.0 and a[2] == 0.0):
        return
    cross3(qd + vi, qd + vi + 3, wu)
    for k in range(3):
        out[vi + 3 + k] += scale * a[k] * wu[k]


cdef inline void armature_bias_jacobian_add(const ModelC* model, Py_ssize_t i,
                                            const double* qd, double* dv) noexcept nogil:
    # dv (nv × nv, row-major) += ∂/∂q̇ of armature_bias_add on joint i's rows:
    # ∂(ω × u)/∂ω = -ũ, ∂(ω × u)/∂u = ω̃   (rbd.reference.rnea.armature_bias_jacobian)
    cdef Py_ssize_t nv = model.nv, vi = model.v_start[i], k
    cdef const double* a = model.armature + vi + 3
    cdef const double* w = qd + vi
    cdef const double* u = qd + vi + 3
    cdef double* row
    if model.jtype[i] != J_FREE or qd == NULL or (a[0] == 0.0 and a[1] == 0.0
                                                    and a[2] == 0.0):
        return
    for k in range(3):
        row = dv + (vi + 3 + k) * nv + vi
        # row k of -ũ (columns of ω) and of ω̃ (columns of u)
        row[(k + 1) % 3] += a[k] * u[(k + 2) % 3]
        row[(k + 2) % 3] -= a[k] * u[(k + 1) % 3]
        row[3 + (k + 1) % 3] -= a[k] * w[(k + 2) % 3]
        row[3 + (k + 2) % 3] += a[k] * w[(k + 1) % 3]
