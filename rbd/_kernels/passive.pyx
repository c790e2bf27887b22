# cython: language_level=3
"""MuJoCo's passive forces, compiled (``mj_passive``, ``engine_passive.c``).

The compiled twin of ``rbd/constraints/passive.py``: joint damping, the springs of
hinges, slides, balls and free joints (``ball_free_spring_force``) and the fixed tendons'
springs and dampers (``tendon_rows.pyx``), as
rbd's generalized force τ_p, read from the static data of the forward pass
(``ForwardC``, ``forward.pxd``).  The fluid forces (``fluid.pyx``) are added by
``forward.pyx`` once it has the world poses.
"""

from libc.math cimport atan2, sqrt

from rbd._kernels._spatial cimport quat_to_rot_T
from rbd._kernels.forward cimport ForwardC
from rbd._kernels.tendon_rows cimport tendon_passive_force

cdef double PI = 3.141592653589793


cdef void passive_force(const ForwardC* f, const double* q, const double* v,
                        double* out) noexcept nogil:
    """out = −damping v − k (q − q_spring) on hinges and slides, the springs of balls and
    free joints, the tendons' (mj_passive)."""
    cdef Py_ssize_t j, s
    for j in range(f.nv):
        out[j] = -f.damping[j] * v[j]
    for s in range(f.nspring):
        j = f.spring_v[s]
        out[j] -= f.spring_k[s] * (q[f.spring_q[s]] - f.spring_ref[s])
    ball_free_spring_force(f, q, out)
    tendon_passive_force(f.tendon, q, v, out)


cdef inline void _quat_difference(const double* qa, const double* qb,
                                  double* r) noexcept nogil:
    """r with qb ⊗ exp(r) = qa, angle in [−π, π], quaternions (w, x, y, z) (mju_subQuat)."""
    cdef double wb = qb[0], vb[3], w, vec[3], sin, angle
    cdef int k
    for k in range(3):
        vb[k] = -qb[k + 1]                                      # conj(qb)
    w = wb * qa[0] - (vb[0] * qa[1] + vb[1] * qa[2] + vb[2] * qa[3])
    vec[0] = wb * qa[1] + qa[0] * vb[0] + vb[1] * qa[3] - vb[2] * qa[2]
    vec[1] = wb * qa[2] + qa[0] * vb[1] + vb[2] * qa[1] - vb[0] * qa[3]
    vec[2] = wb * qa[3] + qa[0] * vb[2] + vb[0] * qa[2] - vb[1] * qa[1]
    sin = sqrt(vec[0] * vec[0] + vec[1] * vec[1] + vec[2] * vec[2])
    if sin == 0.0:
        r[0] = r[1] = r[2] = 0.0
        return
    angle = 2.0 * atan2(sin, w)
    if angle > PI:
        angle -= 2.0 * PI
    for k in range(3):
        r[k] = vec[k] / sin * angle


cdef void ball_free_spring_force(const ForwardC* f, const double* q,
                                 double* out) noexcept nogil:
    """out += the springs of ball and free joints (mj_springdamper): the body-frame torque
    −k r, r = subQuat(quat, qpos_spring); a free joint also Rᵀ (−k (p − p_spring))."""
    cdef Py_ssize_t s, jq, jv
    cdef double xyzw[4], wxyz[4], r[3], E[9], fw[3], n, k
    cdef const double* ref
    cdef int a, c
    for s in range(f.nball):
        jq, jv, k, ref = f.ball_q[s], f.ball_v[s], f.ball_k[s], f.ball_ref + 7 * s
        if f.ball_free[s]:
            jq += 3                                             # rbd's free q is [p; quat]
        n = sqrt(q[jq] * q[jq] + q[jq + 1] * q[jq + 1] + q[jq + 2] * q[jq + 2]
                 + q[jq + 3] * q[jq + 3])
        for a in range(4):
            xyzw[a] = q[jq + a] / n
        wxyz[0], wxyz[1], wxyz[2], wxyz[3] = xyzw[3], xyzw[0], xyzw[1], xyzw[2]
        _quat_difference(wxyz, ref + 3, r)
        for a in range(3):
            out[jv + a] -= k * r[a]
        if not f.ball_free[s]:
            continue
        quat_to_rot_T(xyzw, E)                  # rbd's free v is [ω; u] in the body frame
        for a in range(3):
            fw[a] = -k * (q[jq - 3 + a] - ref[a])
        for a in range(3):
            for c in range(3):
                out[jv + 3 + a] += E[3 * a + c] * fw[c]
