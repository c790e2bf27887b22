# cython: language_level=3
"""A contact's constraint rows, compiled: the twin of ``rbd/constraints/contact_rows.py``
(frame rows, pyramid edges), and their soft terms (``contact_soft_terms``: the twin of
``contact_regularizers`` in ``rbd/constraints/impedance.py``), inline for ``forward.pyx``."""

from libc.math cimport sqrt
from libc.string cimport memcpy, memset

from rbd._kernels._model cimport ModelC, Work
from rbd._kernels.contact_set cimport ContactSetC
from rbd._kernels.forward cimport ForwardC, ForwardWork
from rbd._kernels.kinematics cimport body_point, point_column
from rbd._kernels.impedance cimport (MINVAL, clamp_solimp, impedance, regularizer,
                                     stiffness_damping)

cdef inline void _contact_point(const Work* w, const double* point, Py_ssize_t b,
                                double* p_world) noexcept nogil:
    # the world point through body b's coordinates, local = R_bᵀ (point − p_b) and back,
    # as each body's Jacobian takes it (kinematics.jacobian_columns)
    cdef int k
    cdef double d[3]
    cdef double local[3]
    cdef const double* R_b = w.R + 9 * b
    for k in range(3):
        d[k] = point[k] - w.p[3 * b + k]
    for k in range(3):
        local[k] = R_b[k] * d[0] + R_b[3 + k] * d[1] + R_b[6 + k] * d[2]
    body_point(w, b, local, p_world)


cdef inline Py_ssize_t contact_jacobian(const ModelC* model, ForwardWork* fw, const double* point,
                                 Py_ssize_t body1, Py_ssize_t body2) noexcept nogil:
    """fw.jac = J⁽²⁾ − J⁽¹⁾ at a world point, rows [ω; ṗ] world-aligned (mj_jacDifPair), on
    the columns of the dofs that move body1 or body2 (the others are zero): their indices
    ascending in fw.cols, column t of row k at fw.jac[k nv + t]; returns their number.  A
    body −1 (the world) does not move.  Needs the world poses in the workspace."""
    cdef Py_ssize_t nv = model.nv, i1 = body1, i2 = body2, m = 0, n = 0, t, b, l, col
    cdef Py_ssize_t* bodies = fw.path
    cdef Py_ssize_t* side = fw.path + model.nb
    cdef int k
    cdef double p1[3]
    cdef double p2[3]
    cdef double column[6]
    if body1 >= 0:
        _contact_point(fw.w, point, body1, p1)
    if body2 >= 0:
        _contact_point(fw.w, point, body2, p2)
    # the bodies on either path to the root, deepest first (λ(i) < i); side: 1 on body1's,
    # 2 on body2's, 3 on both
    while i1 >= 0 or i2 >= 0:
        if i1 > i2:
            bodies[m], side[m], i1 = i1, 1, model.parent[i1]
        elif i2 > i1:
            bodies[m], side[m], i2 = i2, 2, model.parent[i2]
        else:
            bodies[m], side[m] = i1, 3
            i1, i2 = model.parent[i1], model.parent[i2]
        m += 1
    for t in range(m - 1, -1, -1):
        b = bodies[t]
        for l in range(model.nv_j[b]):
            col = model.v_start[b] + l
            fw.cols[n] = col
            for k in range(6):
                fw.jac[k * nv + n] = 0.0
            if side[t] & 1:
                point_column(fw.w, b, col, p1, column)
                for k in range(6):
                    fw.jac[k * nv + n] += -1.0 * column[k]
            if side[t] & 2:
                point_column(fw.w, b, col, p2, column)
                for k in range(6):
                    fw.jac[k * nv + n] += column[k]
            n += 1
    return n


cdef inline void contact_frame_rows(ForwardWork* fw, Py_ssize_t nv, Py_ssize_t ncols,
                                    const double* frame, Py_ssize_t condim) noexcept nogil:
    # rows [n; t1; t2]ᵀ J_p (one row for condim 1), then n, t1, t2 of J_r up to condim
    # (rbd.constraints.contact_rows.contact_frame_rows), on the ncols columns of fw.jac
    # (contact_jacobian: the others are zero), row r at fw.frame_rows + r nv
    cdef Py_ssize_t r, k, j, ntrans = 3 if condim > 1 else 1
    cdef double s
    for r in range(condim):
        for j in range(ncols):
            s = 0.0
            for k in range(3):
                if r < ntrans:                         # J_p: rows 3..5 of jac
                    s += frame[3 * r + k] * fw.jac[(3 + k) * nv + j]
                else:                                  # J_r: rows 0..2 of jac
                    s += frame[3 * (r - 3) + k] * fw.jac[k * nv + j]
            fw.frame_rows[r * nv + j] = s


cdef inline Py_ssize_t contact_rows(ForwardWork* fw, Py_ssize_t nv, Py_ssize_t ncols,
                                    Py_ssize_t condim, const double* friction,
                                    bint elliptic) noexcept nogil:
    # the contact's rows at fw.nefc: its frame rows (elliptic, condim 1) or the pyramid's
    # edges J_0 ± μ_k J_k (rbd.constraints.contact_rows.contact_rows), from the frame rows
    # on the ncols columns fw.cols (zero on the others); returns their number
    cdef Py_ssize_t k, j, n = condim if (condim == 1 or elliptic) else 2 * (condim - 1)
    cdef double* top = fw.J + fw.nefc * nv
    cdef const double* fr = fw.frame_rows
    cdef const Py_ssize_t* cols = fw.cols
    memset(top, 0, n * nv * sizeof(double))
    if condim == 1 or elliptic:
        for k in range(condim):
            for j in range(ncols):
                top[k * nv + cols[j]] = fr[k * nv + j]
        return n
    for k in range(1, condim):
        for j in range(ncols):
            top[(2 * k - 2) * nv + cols[j]] = fr[j] + friction[k - 1] * fr[k * nv + j]
            top[(2 * k - 1) * nv + cols[j]] = fr[j] - friction[k - 1] * fr[k * nv + j]
    return n


cdef inline void contact_soft_terms(const ForwardC* f, ForwardWork* fw, const ContactSetC* con,
                             Py_ssize_t c, Py_ssize_t n, double tran) noexcept nogil:
    """R and aref of contact c's n rows at fw.nefc (mj_makeImpedance, contact_regularizers
    of rbd/constraints/impedance.py), and its cone when elliptic."""
    cdef Py_ssize_t r, j, start = fw.nefc, condim = con.condim[c]
    cdef const double* fr = con.friction + 5 * c
    cdef const double* ref = con.solreffriction + 2 * c
    cdef double solimp[5]
    cdef double k, b, bb, imp, diag0, r0, r_first, mu, violation
    cdef double dist = con.dist[c], margin = con.includemargin[c]
    clamp_solimp(con.solimp + 5 * c, solimp)
    imp = impedance(solimp, dist, margin)
    stiffness_damping(con.solref + 2 * c, f.timestep, solimp[1], False, &k, &b)
    violation = dist - margin
    diag0 = tran if (condim == 1 or f.elliptic) else tran + fr[0] * fr[0] * tran
    r0 = regularizer(imp, diag0)
    for r in range(n):
        # aref = −b J v − k d (pos − margin)   (mj_referenceConstraint)
        fw.aref[start + r] = -b * fw.vel[r] - k * imp * violation
        fw.R[start + r] = r0
    if condim == 1:
        return
    r_first = r0 / max(MINVAL, f.impratio)
    mu = fr[0] * sqrt(r_first / r0)
    if not f.elliptic:
        for r in range(n):
            fw.R[start + r] = 2 * mu * mu * r0
        return
    # elliptic: R_1 = R_0 / impratio, R_{j+1} = R_1 μ_1² / μ_{j+1}²; friction rows without
    # stiffness, damped by solreffriction when given
    bb = b
    if ref[0] != 0.0 or ref[1] != 0.0:
        stiffness_damping(ref, 0.0, solimp[1], True, &k, &bb)
    fw.R[start + 1] = r_first
    for j in range(1, condim - 1):
        fw.R[start + 1 + j] = r_first * fr[0] * fr[0] / (fr[j] * fr[j])
    for r in range(1, condim):
        fw.aref[start + r] = -bb * fw.vel[r] - 0.0
    fw.cone_start[fw.ncone] = start
    fw.cone_dim[fw.ncone] = condim
    fw.cone_mu[fw.ncone] = mu
    memcpy(fw.cone_friction + 5 * fw.ncone, fr, 5 * sizeof(double))
    for r in range(condim):
        fw.cone_at[start + r] = fw.ncone
    fw.ncone += 1
