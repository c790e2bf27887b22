# cython: language_level=3
"""Equality constraints as MuJoCo's soft rows, compiled (``mj_instantiateEquality``, ``mj_Jdotv``).

The compiled twin of ``rbd/constraints/equality_rows.py``, run by the compiled forward
pass (``forward.pyx``) before the friction-loss rows: a connect's 3 world rows, a weld's
3 translation rows and 3 rotation rows of the quaternion error ``s vec(q̄_b ⊗ q_a)`` with
MuJoCo's sign (``weld_sign``), a joint equality's row; one impedance per constraint at
the norm of its error, and ``aref = −b J v − k d r − J̇ v`` (no ``J̇ v`` for a joint row).

The anchors' positions, Jacobians and velocity products come from the closed-loop rows of
``constraints.pyx`` (``constraint_motion``, ``anchor_rows``, ``coupling_rows``) on the
records of :func:`rbd.constraints.kinds.pack_records`; ``anchor_rows`` leaves the motion
of the two frames (``frame_motion``: R, o, ω, ȯ, ω̇, ö) in ``Work.scratch``, which the weld's
rotation rows read.  ``Work.dVdq`` holds the weld's angular rows while they are turned.
``EqualityModel`` holds the static data, built once per model
(``rbd.constraints.forward_compiled_terms.equality_data``).
"""

import numpy as np

cimport numpy as cnp
from libc.math cimport cos, sin, sqrt
from libc.stdint cimport int64_t
from libc.string cimport memcpy

from rbd._kernels._model cimport ModelC, Work
from rbd._kernels._spatial cimport rot_to_quat
from rbd._kernels.constraints cimport (K_COUPLING, K_FRAME, K_POINT, anchor_rows, bind_rows,
                                       constraint_motion, coupling_rows)
from rbd._kernels.impedance cimport impedance, regularizer

cnp.import_array()


cdef inline void qmul(const double* p, const double* q, double* out) noexcept nogil:
    # out = p ⊗ q (scalar first)
    out[0] = p[0] * q[0] - p[1] * q[1] - p[2] * q[2] - p[3] * q[3]
    out[1] = p[0] * q[1] + q[0] * p[1] + p[2] * q[3] - p[3] * q[2]
    out[2] = p[0] * q[2] + q[0] * p[2] + p[3] * q[1] - p[1] * q[3]
    out[3] = p[0] * q[3] + q[0] * p[3] + p[1] * q[2] - p[2] * q[1]


cdef inline void wxyz(const double* R, double* out) noexcept nogil:
    # the unit quaternion (w, x, y, z) of R, w ≥ 0
    cdef double xyzw[4]
    rot_to_quat(R, xyzw)
    out[0] = xyzw[3]; out[1] = xyzw[0]; out[2] = xyzw[1]; out[3] = xyzw[2]


cdef void chain_quaternion(const EqualityC* e, const ModelC* model, const double* q,
                           Py_ssize_t body, const double* T, double* Q) noexcept nogil:
    """Q = ∏ (X_treeᵀ quaternion ⊗ joint quaternion) from the root to body, ⊗ T's rotation:
    the body's world orientation as MuJoCo multiplies it out (sign kept), multiplied here
    from the body towards the root."""
    cdef double P[4]
    cdef double Jq[4]
    cdef double t[4]
    cdef double half, norm
    cdef const double* qi
    cdef Py_ssize_t i = body
    memcpy(Q, T, 4 * sizeof(double))
    while i >= 0:
        # P = X_tree quaternion ⊗ joint quaternion;  Q ← P ⊗ Q
        memcpy(P, e.tree_quat + 4 * i, 4 * sizeof(double))
        if e.chain_kind[i] == 1:
            half = 0.5 * q[e.chain_q[i]]
            Jq[0] = cos(half)
            Jq[1] = sin(half) * e.axis[3 * i]
            Jq[2] = sin(half) * e.axis[3 * i + 1]
            Jq[3] = sin(half) * e.axis[3 * i + 2]
            qmul(e.tree_quat + 4 * i, Jq, P)
        elif e.chain_kind[i] == 2:
            qi = q + e.chain_q[i]
            norm = sqrt(qi[0] * qi[0] + qi[1] * qi[1] + qi[2] * qi[2] + qi[3] * qi[3])
            Jq[0] = qi[3] / norm; Jq[1] = qi[0] / norm; Jq[2] = qi[1] / norm; Jq[3] = qi[2] / norm
            qmul(e.tree_quat + 4 * i, Jq, P)
        qmul(P, Q, t)
        memcpy(Q, t, 4 * sizeof(double))
        i = model.parent[i]


cdef double weld_sign(const EqualityC* e, const ModelC* model, const double* q,
                      Py_ssize_t k) noexcept nogil:
    """The sign of MuJoCo's weld error q̄_b ⊗ q_a against rbd's (scalar part ≥ 0): the sign
    of its scalar part from the chain quaternions, times its sign at qpos0; 1 for a zero."""
    cdef const int64_t* c = e.rows.code + 8 * k
    cdef double qa[4]
    cdef double qb[4]
    cdef double now
    if e.sign0[k] == 0.0:
        return 1.0
    chain_quaternion(e, model, q, c[2], e.frame_quat + 8 * k, qa)
    chain_quaternion(e, model, q, c[3], e.frame_quat + 8 * k + 4, qb)
    # scalar part of q̄_b ⊗ q_a
    now = qb[0] * qa[0] + qb[1] * qa[1] + qb[2] * qa[2] + qb[3] * qa[3]
    if now == 0.0:
        return 1.0
    return e.sign0[k] if now > 0 else -e.sign0[k]


cdef inline void weld_rotation(const double* fa, const double* fb, double ts, double* e,
                               double* G, double* Gdot_dw) noexcept nogil:
    # e = q̄_b ⊗ q_a (scalar part ≥ 0), G = ½ s (e₀ 1 − [e_v]×) R_bᵀ and Ġ δω of the frames
    # fa, fb ([R, o, ω, ȯ, ω̇, ö]); s the torquescale
    cdef double Rrel[9]
    cdef double qa[4]
    cdef double qb[4]
    cdef double dq[4]
    cdef double t[4]
    cdef double u[4]
    cdef double dw[4]
    cdef double A[9]
    cdef int i, j, l
    for i in range(3):
        for j in range(3):
            # R_rel = R_bᵀ R_a
            Rrel[3 * i + j] = (fb[i] * fa[j] + fb[3 + i] * fa[3 + j] + fb[6 + i] * fa[6 + j])
    wxyz(Rrel, e)
    wxyz(fb, qb)
    qmul(qb, e, qa)
    # A = e₀ 1 − [e_v]×;  G = ½ s A R_bᵀ
    A[0] = e[0]; A[1] = e[3]; A[2] = -e[2]
    A[3] = -e[3]; A[4] = e[0]; A[5] = e[1]
    A[6] = e[2]; A[7] = -e[1]; A[8] = e[0]
    for i in range(3):
        for j in range(3):
            G[3 * i + j] = 0.0
            for l in range(3):
                G[3 * i + j] += 0.5 * ts * A[3 * i + l] * fb[3 * j + l]
    # Ġ δω = ½ s vec(conj(q̇_b) ⊗ δω ⊗ q_a + conj(q_b) ⊗ δω ⊗ q̇_a),  q̇_x = ½ (0, ω_x) ⊗ q_x
    dw[0] = 0.0
    for i in range(3):
        dw[1 + i] = fa[12 + i] - fb[12 + i]
    u[0] = 0.0; u[1] = 0.5 * fb[12]; u[2] = 0.5 * fb[13]; u[3] = 0.5 * fb[14]
    qmul(u, qb, dq)                                   # q̇_b
    dq[1] = -dq[1]; dq[2] = -dq[2]; dq[3] = -dq[3]
    qmul(dq, dw, t)
    qmul(t, qa, u)                                    # conj(q̇_b) ⊗ δω ⊗ q_a
    memcpy(Gdot_dw, u + 1, 3 * sizeof(double))
    t[0] = 0.0; t[1] = 0.5 * fa[12]; t[2] = 0.5 * fa[13]; t[3] = 0.5 * fa[14]
    qmul(t, qa, dq)                                   # q̇_a
    qb[1] = -qb[1]; qb[2] = -qb[2]; qb[3] = -qb[3]
    qmul(qb, dw, t)
    qmul(t, dq, u)                                    # conj(q_b) ⊗ δω ⊗ q̇_a
    for i in range(3):
        Gdot_dw[i] = 0.5 * ts * (Gdot_dw[i] + u[1 + i])


cdef void anchor_terms(const EqualityC* e, const ModelC* model, Work* w, const double* q,
                       Py_ssize_t k, double* r, double* J, double* jdot) noexcept nogil:
    """MuJoCo's error r, rows J (at J, rows × nv) and J̇ v of anchor k: a connect's 3 rows,
    a weld's 6 (translation, then rotation), after ``constraint_motion``."""
    cdef const int64_t* c = e.rows.code + 8 * k
    cdef const double* T = e.rows.T + 32 * k
    cdef Py_ssize_t nv = model.nv, i, j, l
    cdef double phi[6]
    cdef double gamma[6]
    cdef double quat[4]
    cdef double G[9]
    cdef double Gdot_dw[3]
    cdef double s, ts = e.torquescale[k]
    cdef double* Jw = w.dVdq
    if c[0] == K_POINT:
        # r = o_a − o_b, J = J_a − J_b, J̇ v = −γ
        anchor_rows(model, w, q, K_POINT, c[2], c[3], T, T + 16, r, J, gamma)
        for i in range(3):
            jdot[i] = -gamma[i]
        return
    anchor_rows(model, w, q, K_FRAME, c[2], c[3], T, T + 16, phi, J, gamma)
    weld_rotation(w.scratch, w.scratch + 24, ts, quat, G, Gdot_dw)
    s = weld_sign(e, model, q, k)
    # rows: J_v first, then s G (J_ω,a − J_ω,b)
    memcpy(Jw, J, 3 * nv * sizeof(double))
    memcpy(J, J + 3 * nv, 3 * nv * sizeof(double))
    for i in range(3):
        r[i] = phi[3 + i]
        jdot[i] = -gamma[3 + i]
        r[3 + i] = s * ts * quat[1 + i]
        # J̇ v = s (G (ω̇_a − ω̇_b) + Ġ δω)
        jdot[3 + i] = s * (Gdot_dw[i] - G[3 * i] * gamma[0] - G[3 * i + 1] * gamma[1]
                           - G[3 * i + 2] * gamma[2])
        for j in range(nv):
            J[(3 + i) * nv + j] = 0.0
            for l in range(3):
                J[(3 + i) * nv + j] += s * G[3 * i + l] * Jw[l * nv + j]


cdef Py_ssize_t equality_rows(const EqualityC* e, const ModelC* model, Work* w, const double* q,
                              const double* v, double* J, double* aref, double* R,
                              int64_t* ids) noexcept nogil:
    """The soft rows of the active equality constraints at (q, v), in their order: J (rows ×
    nv), aref, R and each row's constraint; returns the number of rows."""
    cdef Py_ssize_t k, i, j, n, row = 0, nv = model.nv
    cdef const int64_t* c
    cdef double r[6]
    cdef double jdot[6]
    cdef double norm, imp, vel
    cdef bint motion = False
    for k in range(e.rows.n):
        motion = motion or e.rows.code[8 * k] != K_COUPLING
    if motion:
        constraint_motion(model, w, q, v)
    for k in range(e.rows.n):
        c = e.rows.code + 8 * k
        n = c[1]
        if c[0] == K_COUPLING:
            coupling_rows(q, v, nv, c[2], c[3], c[4], c[5], e.rows.coef + c[6], c[7], r,
                          J + row * nv, jdot)
            jdot[0] = 0.0                           # MuJoCo's mj_Jdotv skips couplings
        else:
            anchor_terms(e, model, w, q, k, r, J + row * nv, jdot)
        norm = 0.0
        for i in range(n):
            norm += r[i] * r[i]
        # one impedance at the norm of the whole error (getposdim)
        imp = impedance(e.solimp + 5 * k, sqrt(norm), 0.0)
        for i in range(n):
            vel = 0.0
            for j in range(nv):
                vel += J[(row + i) * nv + j] * v[j]
            # aref = −b J v − k d r − J̇ v   (mj_referenceConstraint);  R = (1 − d) Â / d
            aref[row + i] = -e.b[k] * vel - e.k[k] * imp * r[i] - jdot[i]
            R[row + i] = regularizer(imp, e.weight[2 * k + (1 if i >= 3 else 0)])
            ids[row + i] = k
        row += n
    return row


cdef class EqualityModel:
    """The static data of a model's compiled equality rows (``EqualityC``), built once.

    Parameters
    ----------
    data : dict
        ``rbd.constraints.forward_compiled_terms.equality_data``: ``packed`` (the three arrays
        of :func:`rbd.constraints.kinds.pack_records`) and the arrays named as ``EqualityC``'s
        fields.
    """

    def __init__(self, dict data):
        code, T, coef = (np.ascontiguousarray(data["packed"][0], dtype=np.int64),
                         np.ascontiguousarray(data["packed"][1], dtype=np.float64),
                         np.ascontiguousarray(data["packed"][2], dtype=np.float64))
        reals = {k: np.ascontiguousarray(data[k], dtype=np.float64).ravel()
                 for k in ("k", "b", "solimp", "torquescale", "weight", "sign0", "frame_quat",
                           "tree_quat", "axis")}
        ints = {k: np.ascontiguousarray(data[k], dtype=np.int64) for k in ("chain_kind",
                                                                          "chain_q")}
        for arr in reals.values():
            if arr.size == 0:
                raise ValueError("EqualityModel: every array needs an entry")
        self.keep = (code, T, coef, reals, ints)
        bind_rows(&self.c.rows, (code, T, coef))
        self.m = self.c.rows.m
        self.c.k = _data(reals["k"])
        self.c.b = _data(reals["b"])
        self.c.solimp = _data(reals["solimp"])
        self.c.torquescale = _data(reals["torquescale"])
        self.c.weight = _data(reals["weight"])
        self.c.sign0 = _data(reals["sign0"])
        self.c.frame_quat = _data(reals["frame_quat"])
        self.c.tree_quat = _data(reals["tree_quat"])
        self.c.axis = _data(reals["axis"])
        self.c.chain_kind = <const int64_t*>cnp.PyArray_DATA(ints["chain_kind"])
        self.c.chain_q = <const int64_t*>cnp.PyArray_DATA(ints["chain_q"])


cdef inline const double* _data(cnp.ndarray a):
    return <const double*>cnp.PyArray_DATA(a)
