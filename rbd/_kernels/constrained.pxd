# cython: language_level=3
"""The constrained solvers, compiled (``constrained.pyx``): the scratch of one state and the
solvers' C entry points, run by ``_constrained_batch.pyx``."""

from rbd._kernels._model cimport ModelC


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
