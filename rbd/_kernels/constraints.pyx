# cython: language_level=3
"""Constraint rows of closed loops (RBDA §8.2), compiled.

The compiled twin of ``rbd/reference/constraints.py``: the same functions and
formulas.  ``constraint_motion`` is one outward pass (the shared
``velocity_step`` of ``rnea.pxd``, then ``a_i = X_up[i] a_λ(i) + c_i`` with
``q̈ = 0`` and no gravity, and the world pose ``world_pose`` of
``kinematics.pxd``); ``anchor_rows`` and ``coupling_rows`` fill the rows of one
constraint; ``c_constraint_rows`` (C, declared in ``constraints.pxd``, also
run by the constrained solvers) fills all of them from the records packed by
:func:`rbd.constraints.kinds.pack_records`; ``constraint_rows`` is its
Python entry point, called by
:func:`rbd.constrained_dynamics` on the kernel backend with a validated
state, one state at a time with the GIL held (the model's workspace, or a
fresh one when it is in use).

Workspace use (``Work``): ``v`` body velocities, ``a`` velocity-product
accelerations, ``R``/``p`` world poses, ``scratch`` the motion of two frames,
``J`` and ``dVdq`` the two point Jacobians of an anchor.
The resolved records of :mod:`rbd.constraints.kinds` arrive packed as arrays
(``Rows`` of ``constraints.pxd``): a kind code per constraint (0 point,
1 frame, 2 coupling), the two bodies (or joint coordinates), two 4×4 poses
and the coupling coefficients.
"""

import numpy as np

cimport numpy as cnp
from libc.math cimport atan2, sqrt
from libc.stdint cimport int64_t
from libc.string cimport memset

from rbd._kernels._base cimport CompiledBase
from rbd._kernels._model cimport ModelC, Work
from rbd._kernels._spatial cimport crm_apply, cross3, mat3_vec, xform_motion
from rbd._kernels.kinematics cimport jacobian_columns, world_pose
from rbd._kernels.rnea cimport velocity_step

cnp.import_array()

# the constraint kinds K_POINT, K_FRAME, K_COUPLING: constraints.pxd


cdef void constraint_motion(const ModelC* model, Work* w, const double* q,
                            const double* qd) noexcept nogil:
    """World poses R_i, p_i; body velocities v_i; velocity-product accelerations
    c_i = c_J + v_i × v_J (w.c); accelerations a_i at q̈ = 0 without gravity (w.a)."""
    cdef Py_ssize_t i, k, lam
    cdef double v_J[6]
    cdef double c[6]
    # --- outward pass: poses, velocities, velocity-product accelerations
    for i in range(model.nb):
        # X_up[i], S_i, c_J = jcalc(q_i, q̇_i);  v_i = X_up[i] v_λ(i) + S_i q̇_i
        velocity_step(model, w, i, q, qd, v_J)                              # S&G (8)
        # c = c_J + v_i × v_J
        crm_apply(w.v + 6 * i, v_J, c)
        for k in range(6):
            c[k] += w.c_J[6 * i + k]                                        # S&G (11)
            w.c[6 * i + k] = c[k]
        lam = model.parent[i]
        if lam < 0:
            # a_i = c
            for k in range(6):
                w.a[6 * i + k] = c[k]                                       # S&G (11), q̈ = 0
        else:
            # a_i = X_up[i] a_λ(i) + c
            xform_motion(w.E_up + 9 * i, w.r_up + 3 * i, w.a + 6 * lam, w.a + 6 * i)
            for k in range(6):
                w.a[6 * i + k] += c[k]                                      # S&G (11), q̈ = 0
        # R_i = R_λ(i) E_upᵀ, p_i = p_λ(i) + R_λ(i) r_up
        world_pose(model, w, i)


cdef inline void frame_motion(const Work* w, Py_ssize_t i, const double* T,
                              double* out) noexcept nogil:
    # out = [R (9), o, ω, ȯ, ω̇, ö] in world axes of the frame T (4×4) fixed on body i
    cdef double r[3]
    cdef double vel[3]
    cdef double acc[3]
    cdef double t[3]
    cdef const double* R = w.R + 9 * i
    cdef const double* v = w.v + 6 * i
    cdef const double* a = w.a + 6 * i
    cdef int k, l, m
    memset(out, 0, 24 * sizeof(double))
    if i < 0:
        for k in range(3):
            for l in range(3):
                out[3 * k + l] = T[4 * k + l]
            out[9 + k] = T[4 * k + 3]
        return
    for k in range(3):
        r[k] = T[4 * k + 3]
        for l in range(3):      # R_frame = R_i T_R
            for m in range(3):
                out[3 * k + l] += R[3 * k + m] * T[4 * m + l]
    # vel = v + ω × r;  acc = v̇ + ω̇ × r + ω × vel   (body axes)
    cross3(v, r, vel)
    cross3(a, r, acc)
    for k in range(3):
        vel[k] += v[3 + k]
    cross3(v, vel, t)
    for k in range(3):
        acc[k] += a[3 + k] + t[k]
    # o = p_i + R_i r;  ω, ȯ, ω̇, ö = R_i (ω, vel, ω̇, acc)
    mat3_vec(R, r, out + 9)
    for k in range(3):
        out[9 + k] += w.p[3 * i + k]
    mat3_vec(R, v, out + 12)
    mat3_vec(R, vel, out + 15)
    mat3_vec(R, a, out + 18)
    mat3_vec(R, acc, out + 21)


cdef inline void rotation_log(const double* R, double* out) noexcept nogil:
    # out = log(R)^∨ as spatial.so3_log: s = vee(R − Rᵀ)/2 = sin θ a, cos θ = (tr R − 1)/2,
    # θ = atan2(|s|, cos θ); up to a right angle out = θ s/|s|, beyond it the axis is the
    # largest column of (R + Rᵀ)/2 − cos θ 1 = (1 − cos θ) a aᵀ, signed by s
    cdef double theta, c, sn, norm = 0.0, dot = 0.0
    cdef double axis[3]
    cdef int k, j = 0
    out[0] = 0.5 * (R[7] - R[5]); out[1] = 0.5 * (R[2] - R[6]); out[2] = 0.5 * (R[3] - R[1])
    c = 0.5 * (R[0] + R[4] + R[8] - 1.0)
    sn = sqrt(out[0] * out[0] + out[1] * out[1] + out[2] * out[2])
    theta = atan2(sn, c)
    if c >= 0.0:
        # θ/sin θ → 1 as θ → 0, where s is already the rotation vector
        if sn > 0.0:
            out[0] *= theta / sn; out[1] *= theta / sn; out[2] *= theta / sn
        return
    for k in range(1, 3):
        if R[4 * k] > R[4 * j]:
            j = k
    for k in range(3):
        axis[k] = 0.5 * (R[3 * k + j] + R[3 * j + k]) - (c if k == j else 0.0)
        norm += axis[k] * axis[k]
        dot += axis[k] * out[k]
    sn = (theta if dot >= 0 else -theta) / sqrt(norm)
    for k in range(3):
        out[k] = sn * axis[k]


cdef void anchor_rows(const ModelC* model, Work* w, const double* q, int kind, Py_ssize_t a,
                      Py_ssize_t b, const double* Ta, const double* Tb, double* phi,
                      double* J, double* gamma) noexcept nogil:
    """φ, J (rows × nv) and γ of a point anchor (3 rows) or a frame anchor (6 rows [ω; v]),
    on the world poses R, p and S of the outward pass (w)."""
    cdef Py_ssize_t nv = model.nv, k, l, j, row0 = 0 if kind == K_POINT else 3
    cdef double* fa = w.scratch
    cdef double* fb = w.scratch + 24
    cdef double* Jb = w.J                        # nv × 6 doubles of the workspace: 6 × nv here
    cdef double* Ja = w.dVdq                     # likewise, J_a of a point anchor
    cdef double Rrel[9]
    cdef double point[3]
    frame_motion(w, a, Ta, fa)
    frame_motion(w, b, Tb, fb)
    # φ = o_a − o_b (and log(R_a R_bᵀ));  γ = −(ö_a − ö_b) (and −(ω̇_a − ω̇_b))
    for k in range(3):
        phi[row0 + k] = fa[9 + k] - fb[9 + k]
        gamma[row0 + k] = -(fa[21 + k] - fb[21 + k])                      # RBDA §8.2
    if kind == K_FRAME:
        for k in range(3):
            for l in range(3):
                Rrel[3 * k + l] = 0.0
                for j in range(3):
                    Rrel[3 * k + l] += fa[3 * k + j] * fb[3 * l + j]
            gamma[k] = -(fa[18 + k] - fb[18 + k])                           # RBDA §8.2
        rotation_log(Rrel, phi)
    # J = J_a − J_b: world-aligned [ω; v] rows of the two points (v rows only for a point)
    memset(Jb, 0, 6 * nv * sizeof(double))
    if b >= 0:
        point[0] = Tb[3]; point[1] = Tb[7]; point[2] = Tb[11]
        jacobian_columns(model, w, b, point, Jb)
    point[0] = Ta[3]; point[1] = Ta[7]; point[2] = Ta[11]
    if a >= 0:
        jacobian_columns(model, w, a, point, J if kind == K_FRAME else Ja)
    else:
        memset(J if kind == K_FRAME else Ja, 0, 6 * nv * sizeof(double))     # the world
    for k in range(6 - 3 * (kind == K_POINT)):
        for j in range(nv):
            if kind == K_FRAME:
                J[k * nv + j] -= Jb[k * nv + j]                              # RBDA §8.2
            else:
                J[k * nv + j] = Ja[(3 + k) * nv + j] - Jb[(3 + k) * nv + j]


cdef void coupling_rows(const double* q, const double* qd, Py_ssize_t nv, Py_ssize_t qj,
                        Py_ssize_t vj, Py_ssize_t qs, Py_ssize_t vs, const double* c,
                        Py_ssize_t nc, double* phi, double* J, double* gamma) noexcept nogil:
    """One row of q_j = p(q_s): φ = q_j − p(q_s), J = e_j − p'(q_s) e_s, γ = p''(q_s) q̇_s²."""
    cdef double x, p0 = 0.0, p1 = 0.0, p2 = 0.0
    cdef Py_ssize_t k
    memset(J, 0, nv * sizeof(double))
    J[vj] = 1.0
    if qs < 0:
        phi[0] = q[qj] - c[0]
        gamma[0] = 0.0
        return
    x = q[qs]
    # p, p', p'' by Horner's rule
    for k in range(nc - 1, -1, -1):
        p2 = p2 * x + 2.0 * p1
        p1 = p1 * x + p0
        p0 = p0 * x + c[k]
    phi[0] = q[qj] - p0
    J[vs] = -p1
    gamma[0] = p2 * qd[vs] * qd[vs]


cdef void c_constraint_rows(const ModelC* model, Work* w, const Rows* r, const double* q,
                    const double* qd, double* phi, double* J, double* gamma) noexcept nogil:
    """φ (m), J (m × nv, row-major) and γ (m) of the packed records at one state."""
    cdef Py_ssize_t k
    cdef bint motion = False
    for k in range(r.n):
        motion = motion or r.code[8 * k] != K_COUPLING
    if motion:
        constraint_motion(model, w, q, qd)
    rows_after_motion(model, w, r, q, qd, phi, J, gamma)


def constraint_rows(CompiledBase cm, const double[::1] q, const double[::1] qd, packed):
    """``(φ, J, γ)`` of resolved records at one state, packed by
    :func:`rbd.constraints.kinds.pack_records`."""
    cdef ModelC* model = &cm.m
    cdef Work fresh
    cdef Work* w = &cm.w0
    cdef Rows r
    cdef double[::1] phi_v, gamma_v
    cdef double[:, ::1] J_v
    bind_rows(&r, packed)
    phi, J, gamma = np.zeros(r.m), np.zeros((r.m, model.nv)), np.zeros(r.m)
    if r.m == 0:
        return phi, J, gamma
    phi_v, J_v, gamma_v = phi, J, gamma
    busy = cm.w0_busy
    if busy:
        buffer = np.zeros(cm.data.size)
        cm._bind(&fresh, buffer)
        w = &fresh
    cm.w0_busy = True
    try:
        c_constraint_rows(model, w, &r, &q[0], &qd[0], &phi_v[0], &J_v[0, 0], &gamma_v[0])
    finally:
        cm.w0_busy = busy
    return phi, J, gamma
