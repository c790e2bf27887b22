# cython: language_level=3
"""MuJoCo's soft-constraint parameters, compiled: the twin of ``rbd/constraints/impedance.py``
(impedance, regularizer, reference stiffness and damping), inline for ``forward.pyx``."""

from libc.math cimport pow

#: MuJoCo's mjMINVAL (``rbd.constraints.collision_primitive.MINVAL``) and bounds on the
#: impedance (mjMINIMP, mjMAXIMP)
cdef extern from *:
    """
    #define RBD_MINVAL 1e-15
    #define RBD_MIN_IMPEDANCE 0.0001
    #define RBD_MAX_IMPEDANCE 0.9999
    """
    const double MINVAL "RBD_MINVAL"
    const double MIN_IMPEDANCE "RBD_MIN_IMPEDANCE"
    const double MAX_IMPEDANCE "RBD_MAX_IMPEDANCE"


cdef inline void clamp_solimp(const double* given, double* s) noexcept nogil:
    # d0, dwidth, midpoint in [0.0001, 0.9999], width ≥ 0, power ≥ 1   (getsolparam)
    cdef int k
    for k in range(5):
        s[k] = given[k]
    for k in range(4):
        if k != 2:
            s[k] = min(MAX_IMPEDANCE, max(MIN_IMPEDANCE, s[k]))
    s[2] = max(0.0, s[2])
    s[4] = max(1.0, s[4])


cdef inline double impedance(const double* solimp, double pos, double margin) noexcept nogil:
    # d = d0 + y(x) (dwidth − d0), x = |pos − margin| / width   (getimpedance)
    cdef double d0 = solimp[0], dwidth = solimp[1], width = solimp[2]
    cdef double mid = solimp[3], power = solimp[4], x, y
    if d0 == dwidth or width <= MINVAL:
        return 0.5 * (d0 + dwidth)
    x = (pos - margin) / width
    if x < 0:
        x = -x
    if x >= 1 or x <= 0:
        return dwidth if x >= 1 else d0
    if power == 1:
        y = x
    elif x <= mid:
        y = (1 / pow(mid, power - 1)) * pow(x, power)
    else:
        y = 1 - (1 / pow(1 - mid, power - 1)) * pow(1 - x, power)
    return d0 + y * (dwidth - d0)


cdef inline void stiffness_damping(const double* solref, double timestep, double dwidth,
                                   bint friction_row, double* k, double* b) noexcept nogil:
    # k, b of a row from solref (time constant at least two steps: getsolparam;
    # mj_makeImpedance); friction rows have no stiffness
    cdef double timeconst = solref[0]
    if timeconst > 0:
        timeconst = max(timeconst, 2 * timestep)
    if friction_row:
        k[0] = 0.0
    elif timeconst > 0:
        k[0] = 1 / max(MINVAL, dwidth * dwidth * timeconst * timeconst * solref[1] * solref[1])
    else:
        k[0] = -timeconst / max(MINVAL, dwidth * dwidth)
    if solref[1] > 0:
        b[0] = 2 / max(MINVAL, dwidth * timeconst)
    else:
        b[0] = -solref[1] / max(MINVAL, dwidth)


cdef inline double regularizer(double imp, double diag) noexcept nogil:
    # R = max(mjMINVAL, (1 − d) Â / d)
    return max(MINVAL, (1 - imp) * diag / imp)
