# cython: language_level=3
"""MuJoCo's fixed tendons in the compiled forward pass (``mj_tendon``, ``mj_springdamper``,
``mj_instantiateFriction``, ``mj_instantiateLimit``, ``mj_instantiateEquality``).

The compiled twin of ``rbd/constraints/tendon_rows.py``.  A fixed tendon has the length
L = Σ cᵢ qᵢ (``TendonC.Jq``) and the constant Jacobian J (``TendonC.Jv``); its passive force
Jᵀ(−k x − b L̇), x the distance of L outside ``springlength``, and its friction-loss, limit
and equality rows, each with the weight ``tendon_invweight0``.  The constant parts (k and
b of solref, the clamped solimp, the friction rows' R) come from the reference helpers
(``rbd.constraints.forward_compiled.tendon_kernel_data``).  Each row function writes its
rows from the given pointers on (J rows of length nv) and returns their number.
"""

import numpy as np

cimport numpy as cnp
from libc.stdint cimport int64_t
from libc.string cimport memcpy

from rbd._kernels.impedance cimport impedance, regularizer

cnp.import_array()


cdef inline double _dot(const double* a, const double* b, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t j
    cdef double s = 0.0
    for j in range(n):
        s += a[j] * b[j]
    return s


cdef void tendon_passive_force(const TendonC* t, const double* q, const double* v,
                               double* out) noexcept nogil:
    """out += Σ Jᵀ(−k x − b J v) over the fixed tendons (mj_springdamper)."""
    cdef Py_ssize_t i, j, nv = t.nv
    cdef double length, lo, hi, x, f
    for i in range(t.n):
        if t.stiffness[i] == 0.0 and t.damping[i] == 0.0:
            continue
        length = _dot(t.Jq + i * t.nq, q, t.nq)
        lo = t.springlength[2 * i]
        hi = t.springlength[2 * i + 1]
        x = length - hi if length > hi else (length - lo if length < lo else 0.0)
        f = -t.stiffness[i] * x - t.damping[i] * _dot(t.Jv + i * nv, v, nv)
        for j in range(nv):
            out[j] += t.Jv[i * nv + j] * f


cdef Py_ssize_t tendon_friction_rows(const TendonC* t, const double* q, const double* v,
                                     double* J, double* aref, double* R, double* floss,
                                     int64_t* ids) noexcept nogil:
    """Friction-loss rows J of the tendons with frictionloss > 0: aref = −b J v, R constant
    (mj_instantiateFriction)."""
    cdef Py_ssize_t s, i, nv = t.nv
    for s in range(t.nfriction):
        i = t.friction_id[s]
        memcpy(J + s * nv, t.Jv + i * nv, nv * sizeof(double))
        # aref = −b J v − k d (0 − 0)   (mj_referenceConstraint)
        aref[s] = -t.friction_b[s] * _dot(t.Jv + i * nv, v, nv) - 0.0
        R[s] = t.friction_R[s]
        floss[s] = t.friction_loss[s]
        ids[s] = i
    return t.nfriction


cdef Py_ssize_t tendon_limit_rows(const TendonC* t, const double* q, const double* v,
                                  double* J, double* aref, double* R, double* floss,
                                  int64_t* ids) noexcept nogil:
    """Limit rows of the limited tendons, lower side first: +J active when L − lo < margin,
    −J when hi − L < margin (mj_instantiateLimit)."""
    cdef Py_ssize_t s, i, j, n = 0, nv = t.nv
    cdef int side_i
    cdef double length, margin, side, dist, imp, vel
    for s in range(t.nlimit):
        i = t.limit_id[s]
        length = _dot(t.Jq + i * t.nq, q, t.nq)
        margin = t.limit_margin[s]
        for side_i in range(2):
            side = -1.0 if side_i == 0 else 1.0
            dist = side * (t.limit_range[2 * s + side_i] - length)
            if dist >= margin:
                continue
            for j in range(nv):
                J[n * nv + j] = -side * t.Jv[i * nv + j]
            vel = -side * _dot(t.Jv + i * nv, v, nv)
            imp = impedance(t.limit_solimp + 5 * s, dist, margin)
            # aref = −b J v − k d (dist − margin)   (mj_referenceConstraint)
            aref[n] = -t.limit_b[s] * vel - t.limit_k[s] * imp * (dist - margin)
            R[n] = regularizer(imp, t.limit_weight[s])
            floss[n] = 0.0
            ids[n] = i
            n += 1
    return n


cdef Py_ssize_t tendon_equality_rows(const TendonC* t, const double* q, const double* v,
                                     double* J, double* aref, double* R, double* floss,
                                     int64_t* ids) noexcept nogil:
    """Rows of the active tendon equalities: r = (L₁ − L₁⁰) − p(L₂ − L₂⁰), row
    J₁ − p′(L₂ − L₂⁰) J₂ (mj_instantiateEquality)."""
    cdef Py_ssize_t s, i1, i2, j, p, nv = t.nv
    cdef const double* c
    cdef double r, x, xp, slope, imp
    for s in range(t.nequality):
        i1 = t.eq_tendon[2 * s]
        i2 = t.eq_tendon[2 * s + 1]
        c = t.eq_polycoef + 5 * s
        r = _dot(t.Jq + i1 * t.nq, q, t.nq) - t.eq_length0[2 * s] - c[0]
        memcpy(J + s * nv, t.Jv + i1 * nv, nv * sizeof(double))
        if i2 >= 0:
            x = _dot(t.Jq + i2 * t.nq, q, t.nq) - t.eq_length0[2 * s + 1]
            # r −= Σ c_p x^p, slope = Σ p c_p x^(p−1)
            slope = 0.0
            xp = 1.0
            for p in range(1, 5):
                slope += p * c[p] * xp
                xp *= x
                r -= c[p] * xp
            for j in range(nv):
                J[s * nv + j] -= slope * t.Jv[i2 * nv + j]
        imp = impedance(t.eq_solimp + 5 * s, r if r >= 0 else -r, 0.0)
        # aref = −b J v − k d (r − 0)   (mj_referenceConstraint)
        aref[s] = -t.eq_b[s] * _dot(J + s * nv, v, nv) - t.eq_k[s] * imp * r
        R[s] = regularizer(imp, t.eq_weight[s])
        floss[s] = 0.0
        ids[s] = t.eq_id[s]
    return t.nequality


cdef class TendonModel:
    """The static data of a model's fixed tendons (``TendonC``), built once.

    Parameters
    ----------
    data : dict
        ``rbd.constraints.forward_compiled.tendon_kernel_data``: the arrays named as
        ``TendonC``'s fields, and ``nq``, ``nv``.
    """

    def __init__(self, dict data):
        ints = {k: np.ascontiguousarray(data[k], dtype=np.int64)
                for k in ("friction_id", "limit_id", "eq_id", "eq_tendon")}
        reals = {k: np.ascontiguousarray(data[k], dtype=np.float64)
                 for k in ("Jq", "Jv", "stiffness", "damping", "springlength",
                           "friction_loss", "friction_b", "friction_R", "limit_range",
                           "limit_margin", "limit_k", "limit_b", "limit_weight",
                           "limit_solimp", "eq_length0", "eq_polycoef", "eq_weight", "eq_k",
                           "eq_b", "eq_solimp")}
        for key, arr in list(ints.items()) + list(reals.items()):
            if arr.size == 0:                   # a valid pointer for an empty array
                arr = np.zeros(1, dtype=arr.dtype)
                (ints if arr.dtype == np.int64 else reals)[key] = arr
        self.keep = (ints, reals)
        self.c.n = len(data["stiffness"])
        self.c.nq = data["nq"]
        self.c.nv = data["nv"]
        self.c.Jq = _reals(reals["Jq"])
        self.c.Jv = _reals(reals["Jv"])
        self.c.stiffness = _reals(reals["stiffness"])
        self.c.damping = _reals(reals["damping"])
        self.c.springlength = _reals(reals["springlength"])
        self.c.nfriction = len(data["friction_id"])
        self.c.friction_id = _ints(ints["friction_id"])
        self.c.friction_loss = _reals(reals["friction_loss"])
        self.c.friction_b = _reals(reals["friction_b"])
        self.c.friction_R = _reals(reals["friction_R"])
        self.c.nlimit = len(data["limit_id"])
        self.c.limit_id = _ints(ints["limit_id"])
        self.c.limit_range = _reals(reals["limit_range"])
        self.c.limit_margin = _reals(reals["limit_margin"])
        self.c.limit_k = _reals(reals["limit_k"])
        self.c.limit_b = _reals(reals["limit_b"])
        self.c.limit_weight = _reals(reals["limit_weight"])
        self.c.limit_solimp = _reals(reals["limit_solimp"])
        self.c.nequality = len(data["eq_id"])
        self.c.eq_id = _ints(ints["eq_id"])
        self.c.eq_tendon = _ints(ints["eq_tendon"])
        self.c.eq_length0 = _reals(reals["eq_length0"])
        self.c.eq_polycoef = _reals(reals["eq_polycoef"])
        self.c.eq_weight = _reals(reals["eq_weight"])
        self.c.eq_k = _reals(reals["eq_k"])
        self.c.eq_b = _reals(reals["eq_b"])
        self.c.eq_solimp = _reals(reals["eq_solimp"])

    @property
    def rows(self):
        """The most rows the tendons add to one state: friction, two limit sides, equalities."""
        return self.c.nfriction + 2 * self.c.nlimit + self.c.nequality


cdef inline const double* _reals(cnp.ndarray a):
    return <const double*>cnp.PyArray_DATA(a)


cdef inline const int64_t* _ints(cnp.ndarray a):
    return <const int64_t*>cnp.PyArray_DATA(a)
