# cython: language_level=3
# The constraint rows as flat arrays, shared by the Newton and PGS kernels.

from rbd._kernels._model cimport ModelC

cdef struct RowsC:
    Py_ssize_t nv, nefc, ne, nf, ncone
    const double* J            # nefc × nv, row-major
    const double* aref
    const double* D
    const double* R
    const double* floss        # friction-loss bound per row (0 outside ne .. ne + nf)
    const Py_ssize_t* cone_start
    const Py_ssize_t* cone_dim
    const double* cone_mu
    const double* cone_friction  # ncone × 5
    const Py_ssize_t* cone_at  # per row: the elliptic contact it belongs to, or -1


cdef class RowsData:
    """The arrays behind a :c:type:`RowsC`, kept alive as long as the view is used."""
    cdef RowsC c
    cdef object keep


cdef int constraint_update(const RowsC* rows, const double* jar, double* force,
                           unsigned char* quadratic, double* hcone, int* state,
                           double* cost) noexcept nogil


cdef struct Work:
    # the Newton iteration's workspace (``_Workspace`` in solver_newton.pyx allocates one)
    double* jar        # nefc: J a − aref
    double* force      # nefc
    unsigned char* quadratic
    double* hcone      # ncone × 6 × 6: Hessian blocks of the cones in the middle zone
    int* state         # ncone: SATISFIED, QUADRATIC or CONE
    double* Ja         # nefc: J a (line search)
    double* Jstep      # nefc: J step
    double* Mstep      # nv
    double* grad       # nv
    double* step       # nv
    double* H          # nv × nv: the Cholesky factor of the Hessian with the cones (add_cones)
    double* L          # nv × nv: the Cholesky factor of M + Jqᵀ D_q Jq, kept between iterations
    unsigned char* oldq  # nefc: the quadratic rows L was factored for
    double* upd        # nv: the vector of a rank-one update of L or H
    double* Ma         # nv: M (a − a₀), carried along the steps
    # the rows' sparsity (``row_pattern``) and the tree (``tree_update``):
    Py_ssize_t* nnz    # nefc: the nonzero entries of each row of J
    Py_ssize_t* cols   # nefc × nv: their columns, ascending (the first nnz[r] of row r)
    const double* Lm   # nv × nv: M = Lmᵀ Lm along the kinematic tree (crba.ltl), or NULL
    const ModelC* model  # its dof_parent (with Lm)
    bint tree          # this solve's factors are Lᵀ L along the tree (row_pattern sets it)


cdef void row_pattern(const RowsC* rows, Work* w) noexcept nogil


cdef inline double row_dot(const RowsC* rows, const Work* w, Py_ssize_t r,
                           const double* x) noexcept nogil:
    # J_r x over the row's nonzero columns (row_pattern)
    cdef const double* row = rows.J + r * rows.nv
    cdef const Py_ssize_t* cols = w.cols + r * rows.nv
    cdef Py_ssize_t j, c
    cdef double s = 0.0
    for j in range(w.nnz[r]):
        c = cols[j]
        s += row[c] * x[c]
    return s


cdef inline bint warm_start(const RowsC* rows, const double* M, const double* a0,
                            const double* warm, double* a, Work* w) noexcept nogil:
    # MuJoCo's warm start (mj_fwdConstraint): a ← warm, the last step's acceleration, when
    # its cost ½ (x − a₀)ᵀ M (x − a₀) + s(J x − aref) is below a₀'s (a holds a₀).  One pass
    # over J forms both residuals (a₀'s in w.jar, warm's in w.Ja); on return w.jar holds
    # J a − aref and w.Ma holds M (a − a₀) at the chosen a, and w.nnz, w.cols the rows'
    # pattern, for c_solve_newton(ready=True).  Returns whether warm was taken
    cdef Py_ssize_t i, j, nv = rows.nv
    cdef double cost_smooth, cost_warm, s, gauss = 0.0
    row_pattern(rows, w)
    for i in range(rows.nefc):
        w.jar[i] = row_dot(rows, w, i, a0) - rows.aref[i]
        w.Ja[i] = row_dot(rows, w, i, warm) - rows.aref[i]
    constraint_update(rows, w.Ja, w.force, w.quadratic, w.hcone, w.state, &cost_warm)
    constraint_update(rows, w.jar, w.force, w.quadratic, w.hcone, w.state, &cost_smooth)
    for i in range(nv):
        s = 0.0
        for j in range(nv):
            s += M[i * nv + j] * (warm[j] - a0[j])
        w.Ma[i] = s
        gauss += (warm[i] - a0[i]) * s
    if cost_warm + 0.5 * gauss < cost_smooth:
        for i in range(nv):
            a[i] = warm[i]
        for i in range(rows.nefc):
            w.jar[i] = w.Ja[i]
        return True
    for i in range(nv):
        w.Ma[i] = 0.0                    # a = a₀
    return False


cdef int c_solve_newton(const RowsC* rows, const double* M, const double* a0, double* a,
                        double* force, Py_ssize_t iterations, double tolerance,
                        Work* w, bint ready) noexcept nogil
