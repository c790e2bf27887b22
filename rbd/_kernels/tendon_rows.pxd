# cython: language_level=3
# MuJoCo's fixed tendons in the compiled forward pass (tendon_rows.pyx).

from libc.stdint cimport int64_t


cdef struct TendonC:
    # the static data of a model's fixed tendons (``TendonModel`` fills it once)
    Py_ssize_t n                  # tendons
    Py_ssize_t nq, nv
    const double* Jq              # n × nq: the length's coefficients on q
    const double* Jv              # n × nv: the constant Jacobian
    const double* stiffness       # n (zero with the ``spring`` flag disabled)
    const double* damping         # n (zero with the ``damper`` flag disabled)
    const double* springlength    # n × 2: the dead band [lo, hi] (qpos0's length when unset)
    Py_ssize_t nfriction          # tendons with friction loss:
    const int64_t* friction_id    #   the tendon
    const double* friction_loss   #   the bound
    const double* friction_b      #   aref = −b J v
    const double* friction_R      #   R
    Py_ssize_t nlimit             # limited tendons:
    const int64_t* limit_id
    const double* limit_range     #   nlimit × 2
    const double* limit_margin
    const double* limit_k         #   reference stiffness and damping (solreflimit)
    const double* limit_b
    const double* limit_weight    #   tendon_invweight0 (the row's Â)
    const double* limit_solimp    #   nlimit × 5, clamped
    Py_ssize_t nequality          # active tendon equalities:
    const int64_t* eq_id          #   the row id (after the model's other equalities)
    const int64_t* eq_tendon      #   nequality × 2: tendon1, tendon2 (−1: none)
    const double* eq_length0      #   nequality × 2: the two tendons' lengths at qpos0
    const double* eq_polycoef     #   nequality × 5
    const double* eq_weight       #   tendon_invweight0 of tendon1 (+ tendon2)
    const double* eq_k
    const double* eq_b
    const double* eq_solimp       #   nequality × 5, clamped


#: a row function: the rows from J, aref, R, floss, ids on (J rows of length nv); their number
ctypedef Py_ssize_t (*tendon_rows_fn)(const TendonC* t, const double* q, const double* v,
                                      double* J, double* aref, double* R, double* floss,
                                      int64_t* ids) noexcept nogil


cdef void tendon_passive_force(const TendonC* t, const double* q, const double* v,
                               double* out) noexcept nogil

cdef Py_ssize_t tendon_friction_rows(const TendonC* t, const double* q, const double* v,
                                     double* J, double* aref, double* R, double* floss,
                                     int64_t* ids) noexcept nogil

cdef Py_ssize_t tendon_limit_rows(const TendonC* t, const double* q, const double* v,
                                  double* J, double* aref, double* R, double* floss,
                                  int64_t* ids) noexcept nogil

cdef Py_ssize_t tendon_equality_rows(const TendonC* t, const double* q, const double* v,
                                     double* J, double* aref, double* R, double* floss,
                                     int64_t* ids) noexcept nogil


cdef class TendonModel:
    cdef TendonC c
    cdef object keep
