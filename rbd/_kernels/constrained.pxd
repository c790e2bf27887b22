# cython: language_level=3
"""The constrained solvers, compiled (``constrained.pyx``): the scratch of one state and the
solvers' C entry points, run by ``_constrained_batch.pyx``."""

from rbd._kernels._model cimport ModelC, Work
from rbd._kernels.constraints cimport Rows


cdef struct Arena:
    # the scratch of one state (m rows, nv velocities), laid out by arena()
    double* phi                   # m
    double* gamma                 # m
    double* J                     # m × nv
    double* M                     # nv × nv: M, then its factor L (M = Lᵀ L)
    double* h                     # nv
    double* qdd0                  # nv
    double* Y                     # nv × m: Y = L⁻ᵀ Jᵀ
    double* G                     # m × m
    double* A                     # m × m: the pivoted factor of G (or of G + μ1)
    double* C                     # m × m
    double* b                     # m
    double* t                     # m
    double* u                     # m
    Py_ssize_t* piv               # m
    Py_ssize_t* rows              # nv: the rows of Y that are not all zero
    double* K                     # (nv + m)²: the augmented matrix (M not definite)
    Py_ssize_t* kpiv              # nv + m: its row exchanges


cdef inline Py_ssize_t arena_size(Py_ssize_t m, Py_ssize_t nv) noexcept nogil:
    # the doubles of one Arena (its pivots last, one double each)
    return (5 * m + 2 * m * nv + nv * nv + 3 * nv + 3 * m * m + m + 1
            + (nv + m) * (nv + m) + nv + m)


cdef inline void arena(double* base, Py_ssize_t m, Py_ssize_t nv, Arena* s) noexcept nogil:
    # lay the Arena of m rows and nv velocities out from base (arena_size(m, nv) doubles)
    s.phi = base; base += m
    s.gamma = base; base += m
    s.J = base; base += m * nv
    s.M = base; base += nv * nv
    s.h = base; base += nv
    s.qdd0 = base; base += nv
    s.Y = base; base += m * nv
    s.G = base; base += m * m
    s.A = base; base += m * m
    s.C = base; base += m * m
    s.b = base; base += m
    s.t = base; base += m
    s.u = base; base += m
    s.piv = <Py_ssize_t*>base; base += m + 1
    s.rows = <Py_ssize_t*>base; base += nv
    s.K = base; base += (nv + m) * (nv + m)
    s.kpiv = <Py_ssize_t*>base


cdef struct Proximal:
    # the settings of the reference's iteration (PROXIMAL_MU, PROXIMAL_TOL, PROXIMAL_MAX_ITER)
    double mu
    double tol
    int max_iter


cdef Py_ssize_t solve_kkt(const ModelC* model, Arena* s, Py_ssize_t m, Py_ssize_t nv,
                          double* qdd, double* f) noexcept nogil
cdef Py_ssize_t solve_schur(const ModelC* model, Arena* s, Py_ssize_t m, Py_ssize_t nv,
                            double* qdd, double* f) noexcept nogil
cdef int solve_proximal(const ModelC* model, Arena* s, Py_ssize_t m, Py_ssize_t nv,
                        const Proximal* prox, double* qdd, double* f,
                        Py_ssize_t* rank) noexcept nogil
cdef Py_ssize_t solve_impulse(const ModelC* model, Arena* s, Py_ssize_t m, Py_ssize_t nv,
                              const double* v_minus, double e, double* v_plus,
                              double* Lam) noexcept nogil
