# cython: language_level=3
# The constraint rows as flat arrays, shared by the Newton and PGS kernels.

from libc.stdint cimport int64_t

from rbd._kernels._model cimport ModelC

cdef enum:
    # the compiled forward pass hands the kinematic tree to the Newton solve (row_pattern)
    # from this many dofs on: on the ant (14 dofs) the tree's updates took ~10 % more time
    # per step than the dense factor, on the humanoid (23) ~7 % fewer instructions
    # (docs/benchmarks.md; measured when the tree factor was rebuilt by rank-one updates)
    TREE_MIN_NV = 20


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
    const ModelC* model  # the kinematic tree (dof_parent) of M's tree factor, or NULL (dense)
    bint tree          # this solve's factors are Lᵀ L along the tree (row_pattern sets it)


cdef inline bint on_path(const int64_t* parent, Py_ssize_t k, Py_ssize_t j) noexcept nogil:
    # j lies on the path from dof k to the root
    while k > j:
        k = parent[k]
    return k == j


cdef inline void row_pattern(const RowsC* rows, Work* w) noexcept nogil:
    """The nonzero columns of each row of J (``w.nnz``, ``w.cols``), and ``w.tree``: M's
    kinematic tree ``w.model`` is given and every row's nonzeros lie on one path to the
    root (a contact with the world, a limit, a dof's friction loss), the rows of an
    elliptic contact on one path together, so that M + Jᵀ D J keeps M's tree pattern: its
    factor Lᵀ L is crba.ltl's, updated along those paths (``tree_update``)."""
    cdef Py_ssize_t r, j, n, k, c, nv = rows.nv
    cdef const double* row
    cdef Py_ssize_t* cols
    cdef const int64_t* parent
    cdef bint tree = w.model != NULL
    for r in range(rows.nefc):
        row = rows.J + r * nv
        cols = w.cols + r * nv
        n = 0
        for j in range(nv):
            # (written always, kept when nonzero: no branch on the value)
            cols[n] = j
            n += row[j] != 0.0
        w.nnz[r] = n
        if tree and n > 0:
            # walk from the deepest column (the largest: λ(k) < k) to the root, meeting
            # every column of the row on the way
            parent = w.model.dof_parent
            j, k = n - 1, cols[n - 1]
            while j >= 0:
                if k < 0 or cols[j] > k:
                    tree = False
                    break
                if cols[j] == k:
                    j -= 1
                k = parent[k]
    for c in range(rows.ncone if tree else 0):
        # every row of the cone on the path of its deepest column
        k = -1
        for r in range(rows.cone_start[c], rows.cone_start[c] + rows.cone_dim[c]):
            if w.nnz[r] > 0:
                k = max(k, w.cols[r * nv + w.nnz[r] - 1])
        for r in range(rows.cone_start[c], rows.cone_start[c] + rows.cone_dim[c]):
            if w.nnz[r] > 0 and not on_path(w.model.dof_parent, k,
                                              w.cols[r * nv + w.nnz[r] - 1]):
                tree = False
    w.tree = tree


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


cdef inline void mat_vec(const double* M, const double* x, Py_ssize_t n,
                         double* y) noexcept nogil:
    # y = M x (n × n, row-major), four rows at a time: each row's sum over the columns in
    # order, as one row's loop takes it, the four sums independent chains of additions
    cdef Py_ssize_t i = 0, j
    cdef double s0, s1, s2, s3
    cdef const double* r
    while i + 4 <= n:
        r = M + i * n
        s0 = s1 = s2 = s3 = 0.0
        for j in range(n):
            s0 += r[j] * x[j]
            s1 += r[n + j] * x[j]
            s2 += r[2 * n + j] * x[j]
            s3 += r[3 * n + j] * x[j]
        y[i], y[i + 1], y[i + 2], y[i + 3] = s0, s1, s2, s3
        i += 4
    while i < n:
        r = M + i * n
        s0 = 0.0
        for j in range(n):
            s0 += r[j] * x[j]
        y[i] = s0
        i += 1


cdef inline bint warm_start(const RowsC* rows, const double* M, const double* a0,
                            const double* warm, double* a, Work* w) noexcept nogil:
    # MuJoCo's warm start (mj_fwdConstraint): a ← warm, the last step's acceleration, when
    # its cost ½ (x − a₀)ᵀ M (x − a₀) + s(J x − aref) is below a₀'s (a holds a₀).  One pass
    # over J forms both residuals (a₀'s in w.jar, warm's in w.Ja); on return w.jar holds
    # J a − aref and w.Ma holds M (a − a₀) at the chosen a, and w.nnz, w.cols the rows'
    # pattern, for c_solve_newton(ready=True).  Returns whether warm was taken
    cdef Py_ssize_t i, nv = rows.nv
    cdef double cost_smooth, cost_warm, gauss = 0.0
    row_pattern(rows, w)
    for i in range(rows.nefc):
        w.jar[i] = row_dot(rows, w, i, a0) - rows.aref[i]
        w.Ja[i] = row_dot(rows, w, i, warm) - rows.aref[i]
    constraint_update(rows, w.Ja, w.force, w.quadratic, w.hcone, w.state, &cost_warm)
    constraint_update(rows, w.jar, w.force, w.quadratic, w.hcone, w.state, &cost_smooth)
    for i in range(nv):
        w.step[i] = warm[i] - a0[i]          # (w.step: free until c_solve_newton's first step)
    mat_vec(M, w.step, nv, w.Ma)
    for i in range(nv):
        gauss += w.step[i] * w.Ma[i]
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
