# cython: language_level=3
"""MuJoCo's primal Newton solver of the soft-constraint problem, compiled.

The compiled twin of ``rbd/constraints/solver_newton.py``: the same functions,
cost and branches.  The accelerations minimize

    f(a) = ½ (a − a₀)ᵀ M (a − a₀) + s(J a − aref)

with ``s`` summed row by row (``constraint_update``: equality rows quadratic,
friction-loss rows Huber, unilateral rows one-sided quadratic, elliptic
contacts by the zones of the dual cone).  ``solve_newton`` takes Newton steps
with the exact Hessian ``M + Jᵀ diag(D_active) J`` plus the cone blocks and an
exact line search (``_line_search``).  The Newton system is solved by Cholesky
(``H`` is symmetric positive definite), where the reference calls
``np.linalg.solve``, and keeps that factor between steps: the Cholesky factor of
``M + Jqᵀ D_q Jq`` is updated by one rank-one update or downdate per row that
entered or left the quadratic set (``refactor``, MuJoCo's ``HessianIncremental``;
rebuilt on the first step and when a downdate would cancel most of a pivot) and
the middle-zone cones are added to a copy of it (``add_cones``), where the
reference builds and factors ``H`` anew at every step.  Products the reference forms
anew are carried instead: ``M (a − a₀)`` along the steps (``+ α M step``) and
``J a − aref`` from the line search's ``J a`` and ``J step``; ``warm_start`` (the
compiled forward pass's choice between ``a₀`` and the last step's accelerations)
hands its residual and ``M (a − a₀)`` to ``c_solve_newton``.  The products with J run
over each row's nonzero columns (``row_pattern``); when the caller hands over M's
kinematic tree (``Work.model``: the compiled forward pass) and every row lies on one path
to the root, the Newton factor is the tree factor Lᵀ L (``crba.ltl``, which keeps the
tree's pattern), updated row by row along the rows' paths (``tree_update``) and solved by
``crba.ltl_solve``, else dense.

The rows arrive as :class:`RowsData` (flat arrays of the ``ConstraintRows``
fields); ``solve_newton`` allocates its workspace once and runs without the GIL.
"""

import numpy as np

from rbd._kernels._base import dof_paths

cimport numpy as cnp
from libc.math cimport fabs, sqrt
from libc.stdint cimport int64_t
from libc.string cimport memcpy, memset

from rbd._kernels._model cimport ModelC
from rbd._kernels._spatial cimport cholesky_factor, cholesky_solve
from rbd._kernels.crba cimport ltl, ltl_solve
from rbd._kernels.rank_one cimport cholesky_update, tree_update

cnp.import_array()

cdef enum:
    SATISFIED = 0
    QUADRATIC = 1
    CONE = 2
    #: the most dofs whose nonzero columns ``hessian`` lists (a larger model: every column)
    NZ_MAX = 128
    #: leading dimension of a cone's Hessian block (condim ≤ 6)
    LD = 6



cdef class RowsData:
    """The fields of a ``ConstraintRows`` as contiguous arrays, and their C view."""

    def __init__(self, rows, Py_ssize_t nv):
        J = np.ascontiguousarray(rows.J, dtype=np.float64).reshape(-1, nv)
        nefc = J.shape[0]
        aref = np.ascontiguousarray(rows.aref, dtype=np.float64)
        D = np.ascontiguousarray(rows.D, dtype=np.float64)
        R = np.ascontiguousarray(rows.R, dtype=np.float64)
        floss = (np.zeros(nefc) if rows.frictionloss is None
                 else np.ascontiguousarray(rows.frictionloss, dtype=np.float64))
        ncone = len(rows.cones)
        start = np.zeros(ncone, dtype=np.intp)
        dim = np.zeros(ncone, dtype=np.intp)
        mu = np.zeros(ncone)
        friction = np.zeros((ncone, 5))
        cone_of = np.full(nefc, -1, dtype=np.intp)
        for k, (s, d, m, fr) in enumerate(rows.cones):
            start[k], dim[k], mu[k] = s, d, m
            fr = np.asarray(fr, dtype=np.float64)[:5]
            friction[k, :fr.shape[0]] = fr
            cone_of[s:s + d] = k
        for a in (aref, D, R, floss):
            if a.shape != (nefc,):
                raise ValueError(f"rows: expected ({nefc},) arrays beside J, got {a.shape}")
        self.keep = (J, aref, D, R, floss, start, dim, mu, friction, cone_of)
        self.c.nv, self.c.nefc, self.c.ncone = nv, nefc, ncone
        self.c.ne, self.c.nf = int(rows.ne), int(rows.nf)
        self.c.J = <const double*> cnp.PyArray_DATA(J)
        self.c.aref = <const double*> cnp.PyArray_DATA(aref)
        self.c.D = <const double*> cnp.PyArray_DATA(D)
        self.c.R = <const double*> cnp.PyArray_DATA(R)
        self.c.floss = <const double*> cnp.PyArray_DATA(floss)
        self.c.cone_start = <const Py_ssize_t*> cnp.PyArray_DATA(start)
        self.c.cone_dim = <const Py_ssize_t*> cnp.PyArray_DATA(dim)
        self.c.cone_mu = <const double*> cnp.PyArray_DATA(mu)
        self.c.cone_friction = <const double*> cnp.PyArray_DATA(friction)
        self.c.cone_at = <const Py_ssize_t*> cnp.PyArray_DATA(cone_of)


cdef class _Workspace:
    cdef Work w
    cdef object keep

    def __init__(self, Py_ssize_t nv, Py_ssize_t nefc, Py_ssize_t ncone):
        doubles = np.zeros(4 * nefc + 36 * ncone + 5 * nv + 2 * nv * nv + 1)
        flags = np.zeros(2 * (nefc + 1), dtype=np.uint8)
        states = np.zeros(ncone + 1, dtype=np.intc)
        self.keep = (doubles, flags, states)
        cdef double* p = <double*> cnp.PyArray_DATA(doubles)
        self.w.jar, self.w.force, self.w.Ja, self.w.Jstep = p, p + nefc, p + 2 * nefc, p + 3 * nefc
        p += 4 * nefc
        self.w.hcone = p
        p += 36 * ncone
        self.w.Mstep, self.w.grad, self.w.step, self.w.H = p, p + nv, p + 2 * nv, p + 3 * nv
        self.w.L, self.w.upd = p + 3 * nv + nv * nv, p + 3 * nv + 2 * nv * nv
        self.w.Ma = self.w.upd + nv
        self.w.quadratic = <unsigned char*> cnp.PyArray_DATA(flags)
        self.w.oldq = self.w.quadratic + nefc + 1
        self.w.state = <int*> cnp.PyArray_DATA(states)
        pattern = np.zeros(nefc * (nv + 1) + 1, dtype=np.intp)
        self.keep += (pattern,)
        self.w.nnz = <Py_ssize_t*> cnp.PyArray_DATA(pattern)
        self.w.cols = self.w.nnz + nefc
        self.w.model, self.w.tree = NULL, False


cdef int _cone_update(const double* jar, double D0, double mu, const double* friction,
                      Py_ssize_t dim, double* force, double* cost, double* h) noexcept nogil:
    """Force, cost and Hessian block (leading dimension 6) of one elliptic contact."""
    cdef double scale[6]
    cdef double u[6]
    cdef double n, t = 0.0, dm, nmt
    cdef Py_ssize_t j, k
    scale[0] = mu
    for j in range(1, dim):
        scale[j] = friction[j - 1]
    for j in range(dim):
        # u = jar ∘ (μ, μ_1, …)
        u[j] = jar[j] * scale[j]
    for j in range(1, dim):
        t += u[j] * u[j]
    # N = u_0, T = ‖u_{1:}‖
    n, t = u[0], sqrt(t)
    if n >= mu * t or (t <= 0 and n >= 0):
        # top zone: no force, no cost
        for j in range(dim):
            force[j] = 0.0
        cost[0] = 0.0
        return SATISFIED
    if mu * n + t <= 0 or (t <= 0 and n < 0):
        # bottom zone: every row quadratic
        return QUADRATIC
    # middle zone: D_m = D_0 / (μ² (1 + μ²)), cost ½ D_m (N − μ T)²
    dm = D0 / (mu * mu * (1 + mu * mu))
    nmt = n - mu * t
    force[0] = -dm * nmt * mu
    for j in range(1, dim):
        force[j] = -force[0] / t * u[j] * friction[j - 1]
    # h = [[1, −μ u/T], [·, μ N u uᵀ/T³ + (μ² − μ N / T) 1]], scaled by D_m s sᵀ
    h[0] = 1.0
    for j in range(1, dim):
        h[j] = -mu / t * u[j]
        h[LD * j] = h[j]
        for k in range(1, dim):
            h[LD * j + k] = mu * n / t ** 3 * u[j] * u[k]
        h[LD * j + j] += mu * mu - mu * n / t
    for j in range(dim):
        for k in range(dim):
            h[LD * j + k] = dm * scale[j] * h[LD * j + k] * scale[k]
    cost[0] = 0.5 * dm * nmt * nmt
    return CONE


cdef int constraint_update(const RowsC* rows, const double* jar, double* force,
                           unsigned char* quadratic, double* hcone, int* state,
                           double* cost) noexcept nogil:
    """Forces, cost s, quadratic-row mask and cone Hessian blocks at ``jar``."""
    cdef Py_ssize_t i, j, k, start, dim, lo = rows.ne + rows.nf
    cdef double c = 0.0, cc, bound
    cdef double f[6]
    for i in range(rows.nefc):
        # f_i = −D_i jar_i
        force[i] = -rows.D[i] * jar[i]
        quadratic[i] = 1
    # --- friction loss: Huber, linear beyond |jar| ≥ R floss
    for i in range(rows.ne, lo):
        bound = rows.R[i] * rows.floss[i]
        if jar[i] <= -bound:
            c += -0.5 * rows.R[i] * rows.floss[i] ** 2 - rows.floss[i] * jar[i]
            force[i], quadratic[i] = rows.floss[i], 0
        elif jar[i] >= bound:
            c += -0.5 * rows.R[i] * rows.floss[i] ** 2 + rows.floss[i] * jar[i]
            force[i], quadratic[i] = -rows.floss[i], 0
    # --- elliptic cones: by the zone of the dual cone
    for k in range(rows.ncone):
        start, dim = rows.cone_start[k], rows.cone_dim[k]
        state[k] = _cone_update(jar + start, rows.D[start], rows.cone_mu[k],
                                rows.cone_friction + 5 * k, dim, f, &cc, hcone + LD * LD * k)
        if state[k] != QUADRATIC:
            for j in range(dim):
                force[start + j], quadratic[start + j] = f[j], 0
            c += cc
    # --- unilateral rows: satisfied (jar ≥ 0) rows carry nothing
    for i in range(lo, rows.nefc):
        if rows.cone_at[i] < 0 and jar[i] >= 0:
            force[i], quadratic[i] = 0.0, 0
    for i in range(rows.nefc):
        if quadratic[i]:
            # s += ½ D_i jar_i²
            c += 0.5 * rows.D[i] * jar[i] * jar[i]
    cost[0] = c
    return 0


cdef inline void residual(const RowsC* rows, const Work* w, const double* a,
                          double* jar) noexcept nogil:
    # jar = J a − aref (the rows' pattern in w)
    cdef Py_ssize_t i
    for i in range(rows.nefc):
        jar[i] = row_dot(rows, w, i, a) - rows.aref[i]


cdef inline double derivatives(const RowsC* rows, double gauss0, double gauss1, double alpha,
                               Work* w, double* d2) noexcept nogil:
    # φ'(α) = Mstep·(x − a₀) − Jstep·f(x) and φ''(α), x = a + α step, where
    # Mstep·(x − a₀) = gauss0 + α gauss1 (gauss0 = stepᵀ M (a − a₀), gauss1 = stepᵀ M step)
    cdef Py_ssize_t i, j, k, start, dim
    cdef double d1 = gauss0 + alpha * gauss1, cost, s
    for i in range(rows.nefc):
        w.jar[i] = w.Ja[i] + alpha * w.Jstep[i] - rows.aref[i]
    constraint_update(rows, w.jar, w.force, w.quadratic, w.hcone, w.state, &cost)
    d2[0] = gauss1
    for i in range(rows.nefc):
        d1 -= w.Jstep[i] * w.force[i]
        if w.quadratic[i]:
            d2[0] += rows.D[i] * w.Jstep[i] * w.Jstep[i]
    for k in range(rows.ncone):
        if w.state[k] != CONE:
            continue
        start, dim = rows.cone_start[k], rows.cone_dim[k]
        for i in range(dim):
            s = 0.0
            for j in range(dim):
                s += w.hcone[LD * LD * k + LD * i + j] * w.Jstep[start + j]
            d2[0] += w.Jstep[start + i] * s
    return d1


cdef double _line_search(const RowsC* rows, const double* M, const double* step, Work* w,
                         double rtol) noexcept nogil:
    """The minimizer α of f(a + α step): bracket the root of φ' by doubling, then
    Newton steps on φ' kept inside the bracket (bisection when a step leaves it).
    ``w.jar`` holds J a − aref and ``w.Ma`` M (a − a₀) on entry; on return ``w.Ja``,
    ``w.Jstep`` and ``w.Mstep`` hold J a, J step and M step."""
    cdef Py_ssize_t i, it
    cdef double tol, low = 0.0, high = 1.0, alpha, d1, d2, guess
    cdef double gauss0 = 0.0, gauss1 = 0.0
    # Mstep = M step; stepᵀ M (a − a₀) and stepᵀ M step (M is symmetric)
    mat_vec(M, step, rows.nv, w.Mstep)
    for i in range(rows.nv):
        gauss0 += step[i] * w.Ma[i]
        gauss1 += step[i] * w.Mstep[i]
    for i in range(rows.nefc):
        # Ja = J a, Jstep = J step
        w.Ja[i] = w.jar[i] + rows.aref[i]
        w.Jstep[i] = row_dot(rows, w, i, step)
    tol = rtol * fabs(derivatives(rows, gauss0, gauss1, 0.0, w, &d2))
    # --- bracket: double α until φ'(α) ≥ 0 (φ is convex)
    d1 = derivatives(rows, gauss0, gauss1, high, w, &d2)
    while d1 < 0 and high < 1e300:
        low, high = high, 2 * high
        d1 = derivatives(rows, gauss0, gauss1, high, w, &d2)
    alpha = high
    # --- safeguarded Newton on φ' (each point evaluated once)
    for it in range(60):
        if fabs(d1) <= tol:
            break
        if d1 > 0:
            high = alpha
        else:
            low = alpha
        guess = alpha - d1 / d2 if d2 > 0 else 0.5 * (low + high)
        if not (low < guess < high):
            guess = 0.5 * (low + high)
        if fabs(guess - alpha) <= 1e-15 * alpha:
            break
        alpha = guess
        d1 = derivatives(rows, gauss0, gauss1, alpha, w, &d2)
    return alpha


cdef inline void hessian(const RowsC* rows, const double* M, Work* w) noexcept nogil:
    # L ← M + Jqᵀ diag(D_q) Jq, its lower triangle (all cholesky_factor reads); a row's
    # products over its nonzero columns only (w.cols).  The cones: add_cones
    cdef Py_ssize_t i, j, k, r, n, nv = rows.nv
    cdef const Py_ssize_t* nz
    cdef const double* row
    cdef double* Lk
    cdef double s
    memcpy(w.L, M, nv * nv * sizeof(double))
    for r in range(rows.nefc):
        if not w.quadratic[r]:
            continue
        row = rows.J + r * nv
        nz = w.cols + r * nv
        n = w.nnz[r]
        for i in range(n):
            k = nz[i]
            s = rows.D[r] * row[k]
            Lk = w.L + k * nv
            for j in range(i + 1):
                Lk[nz[j]] += s * row[nz[j]]


cdef inline void scaled_row(const RowsC* rows, const Work* w, Py_ssize_t r,
                            double scale) noexcept nogil:
    # w.upd = scale J_r (zero off the row's nonzero columns)
    cdef Py_ssize_t j, c
    memset(w.upd, 0, rows.nv * sizeof(double))
    for j in range(w.nnz[r]):
        c = w.cols[r * rows.nv + j]
        w.upd[c] = scale * rows.J[r * rows.nv + c]


cdef inline bint tree_update_at(const ModelC* model, double* L, double* x, Py_ssize_t top,
                                bint plus) noexcept nogil:
    # rank_one.tree_update along the path of dof ``top`` to the root (x zero off it; nothing
    # for top −1, an x of zeros)
    if top < 0:
        return 0
    cdef Py_ssize_t at = model.dof_path_start[top]
    return tree_update(L, model.dof_path + at, model.dof_path_start[top + 1] - at, x, top,
                       model.nv, plus)


cdef inline bint row_update(const RowsC* rows, Work* w, double* L, Py_ssize_t r,
                            bint plus) noexcept nogil:
    # L's factor ± D_r J_rᵀ J_r (the tree's or the dense one, by w.tree); 1 when a downdate
    # fails
    scaled_row(rows, w, r, sqrt(rows.D[r]))
    if w.tree:
        return tree_update_at(w.model, L, w.upd, w.cols[r * rows.nv + w.nnz[r] - 1],
                              plus) if w.nnz[r] > 0 else 0
    return cholesky_update(L, w.upd, rows.nv, plus)


cdef inline int refactor(const RowsC* rows, const double* M, Work* w,
                         bint rebuild) noexcept nogil:
    # L Lᵀ = M + Jqᵀ diag(D_q) Jq at the current quadratic rows: rebuilt and factored when
    # ``rebuild`` (the first iteration), else updated from the last iteration's rows w.oldq by
    # a rank-one update (a row turned quadratic) or downdate (a row left) with √D_r J_r each,
    # MuJoCo's HessianIncremental; rebuilt when a downdate fails.  Returns 1 when M + Jqᵀ D Jq
    # is not positive definite
    # With w.tree the factor is Lᵀ L along the tree, rebuilt by crba.ltl: every quadratic
    # row lies on one path to the root, so that M + Jqᵀ D_q Jq keeps M's tree pattern (one
    # factorization costs about what two rows' rank-one updates along their paths do)
    cdef Py_ssize_t r, nv = rows.nv
    if not rebuild:
        for r in range(rows.nefc):
            if w.quadratic[r] == w.oldq[r]:
                continue
            if row_update(rows, w, w.L, r, w.quadratic[r]):
                rebuild = True
                break
    if rebuild:
        hessian(rows, M, w)
        if ltl(w.model, w.L) if w.tree else cholesky_factor(w.L, w.L, nv, nv):
            return 1
    for r in range(rows.nefc):
        w.oldq[r] = w.quadratic[r]
    return 0


cdef inline const double* add_cones(const RowsC* rows, Work* w) noexcept nogil:
    # The factor of H = L Lᵀ + Σ Jcᵀ h Jc over the cones in the middle zone: L when there is
    # none, else w.H, a copy of L updated with dim rank-one terms per cone.  In the scaled
    # coordinates u = jar ∘ s (_cone_update), h = D_m S (g gᵀ + c P) S with g = (1, −μ t̂),
    # t̂ = u_T / T, c = μ² − μ N / T > 0 and P = 1 − t̂ t̂ᵀ on the tangential rows, and
    # P = Σ_k p_k p_kᵀ with p_k = P e_k (P is a projector): the terms are Jcᵀ S g √D_m and
    # Jcᵀ S p_k √(c D_m), k = 1 … dim − 1
    cdef Py_ssize_t i, j, k, r, start, dim, top, nv = rows.nv
    cdef bint copied = False
    cdef double u[6]
    cdef double v[6]
    cdef double n, t, dm, c, root
    for k in range(rows.ncone):
        if w.state[k] != CONE:
            continue
        if not copied:
            for i in range(nv * nv):
                w.H[i] = w.L[i]
            copied = True
        start, dim = rows.cone_start[k], rows.cone_dim[k]
        t = 0.0
        for j in range(1, dim):
            u[j] = w.jar[start + j] * rows.cone_friction[5 * k + j - 1]
            t += u[j] * u[j]
        n, t = w.jar[start] * rows.cone_mu[k], sqrt(t)
        dm = rows.D[start] / (rows.cone_mu[k] ** 2 * (1 + rows.cone_mu[k] ** 2))
        c = rows.cone_mu[k] ** 2 - rows.cone_mu[k] * n / t
        top = -1
        for i in range(dim):
            if w.nnz[start + i] > 0:
                top = max(top, w.cols[(start + i) * nv + w.nnz[start + i] - 1])
        for i in range(dim):
            # v = √D_m S g (i = 0), then √(c D_m) S p_i
            root = sqrt(dm if i == 0 else c * dm)
            for j in range(dim):
                if i == 0:
                    v[j] = 1.0 if j == 0 else -rows.cone_mu[k] * u[j] / t
                else:
                    v[j] = 0.0 if j == 0 else (j == i) - u[i] * u[j] / (t * t)
                v[j] *= root * (rows.cone_mu[k] if j == 0 else rows.cone_friction[5 * k + j - 1])
            for j in range(nv):
                # the term Jcᵀ v
                w.upd[j] = 0.0
                for r in range(dim):
                    w.upd[j] += v[r] * rows.J[(start + r) * nv + j]
            if w.tree:
                tree_update_at(w.model, w.H, w.upd, top, True)
            else:
                cholesky_update(w.H, w.upd, nv, True)
    return w.H if copied else w.L


cdef int c_solve_newton(const RowsC* rows, const double* M, const double* a0, double* a,
                        double* force, Py_ssize_t iterations, double tolerance,
                        Work* w, bint ready) noexcept nogil:
    """Newton steps on f(a) from ``a`` (in place); the forces at the last ``a``.
    ``tolerance``: MuJoCo's divided by its scale (the bound on the unscaled cost decrease of
    a step, gradient norm and Newton decrement, solve_newton's rule).  ``ready``: w.jar and
    w.Ma already hold J a − aref and M (a − a₀) (``warm_start`` leaves them).
    Returns 0, or 1 when the Hessian is not positive definite."""
    cdef Py_ssize_t it, i, j, k, nv = rows.nv
    cdef double s, norm, moved, size, alpha, cost, previous = 0.0, decrement
    cdef bint small_gradient, small_decrement, current = False
    if not ready:
        row_pattern(rows, w)
        residual(rows, w, a, w.jar)
        for i in range(nv):
            w.step[i] = a[i] - a0[i]
        mat_vec(M, w.step, nv, w.Ma)
    for it in range(iterations + 1):
        constraint_update(rows, w.jar, w.force, w.quadratic, w.hcone, w.state, &cost)
        current = True                  # w.force: the forces at a
        norm = 0.0
        for i in range(nv):
            # ∇f = M (a − a₀) − Jᵀ f (the rows without force skipped), and
            # f(a) = ½ (a − a₀)ᵀ M (a − a₀) + s
            cost += 0.5 * (a[i] - a0[i]) * w.Ma[i]
            w.grad[i] = w.Ma[i]
        for j in range(rows.nefc):
            if w.force[j] != 0.0:
                for k in range(w.nnz[j]):
                    i = w.cols[j * nv + k]
                    w.grad[i] -= rows.J[j * nv + i] * w.force[j]
        for i in range(nv):
            norm += w.grad[i] * w.grad[i]
        if (it > 0 and 0 < previous - cost < tolerance) or it == iterations:
            break                                      # the last step improved too little
        for i in range(nv):
            w.step[i] = -w.grad[i]
        # H's factor: M + Jqᵀ D Jq updated from the last iteration's (rebuilt on the first),
        # then the cones in the middle zone
        if refactor(rows, M, w, it == 0):
            return 1
        # step = −H⁻¹ ∇f; the Newton decrement ½ ∇fᵀ H⁻¹ ∇f
        if w.tree:
            ltl_solve(w.model, add_cones(rows, w), w.step, 1)
        else:
            cholesky_solve(add_cones(rows, w), w.step, nv)
        decrement = 0.0
        for i in range(nv):
            decrement -= 0.5 * w.grad[i] * w.step[i]
        small_gradient = sqrt(norm) < tolerance
        small_decrement = max(0.0, decrement) < tolerance
        if (small_gradient and small_decrement) if it == 0 else (small_gradient
                                                                 or small_decrement):
            break
        alpha = _line_search(rows, M, w.step, w, 1e-12)
        moved = 0.0
        size = 0.0
        for i in range(nv):
            # a ← a + α step, M (a − a₀) ← M (a − a₀) + α M step
            moved += (alpha * w.step[i]) ** 2
            size += a[i] * a[i]
            a[i] += alpha * w.step[i]
            w.Ma[i] += alpha * w.Mstep[i]
        for i in range(rows.nefc):
            # J a − aref at the new a, from the line search's products
            w.jar[i] = w.Ja[i] + alpha * w.Jstep[i] - rows.aref[i]
        current = False
        previous = cost
        if sqrt(moved) <= 1e-15 * (1 + sqrt(size)):
            break
    # the forces at the last a (w.jar holds its J a − aref)
    if current:
        memcpy(force, w.force, rows.nefc * sizeof(double))
    else:
        constraint_update(rows, w.jar, force, w.quadratic, w.hcone, w.state, &cost)
    return 0


cdef class _Tree:
    """The kinematic tree of a workspace's tree path, M checked positive definite along it
    (crba.ltl): the ``dof_parent`` of the Python-facing functions, or nothing (their dense
    path)."""
    cdef ModelC m
    cdef object keep

    def __init__(self, Mc, dof_parent, _Workspace ws):
        cdef Py_ssize_t nv = Mc.shape[0]
        ws.w.model = NULL
        if dof_parent is None:
            return
        parent = np.ascontiguousarray(dof_parent, dtype=np.int64)
        if parent.shape != (nv,) or np.any(parent >= np.arange(nv)) or np.any(parent < -1):
            raise ValueError(f"dof_parent: expected ({nv},) parents λ(k) < k, got {parent}")
        Lm = np.array(Mc, dtype=np.float64, order="C")
        path, start = dof_paths(parent)
        self.keep = (parent, path, start)
        self.m.nv = nv
        self.m.dof_parent = <const int64_t*> cnp.PyArray_DATA(parent)
        self.m.dof_path = <const int64_t*> cnp.PyArray_DATA(path)
        self.m.dof_path_start = <const int64_t*> cnp.PyArray_DATA(start)
        if ltl(&self.m, <double*> cnp.PyArray_DATA(Lm)):
            raise ValueError("dof_parent: M is not positive definite along that tree")
        ws.w.model = &self.m


def solve_newton(M, a0, rows, a_init=None, Py_ssize_t iterations=100,
                 double tolerance=1e-14, scale=None, dof_parent=None):
    """Accelerations and constraint forces by MuJoCo's primal Newton method.

    The arguments and results of ``rbd.constraints.solver_newton.solve_newton``, and
    ``dof_parent`` (nv, optional): the parent of each dof in M's kinematic tree; when
    given (and every row lies on one path to the root, ``row_pattern``) the Newton
    factor is M's tree factor updated row by row (``tree_update``), as in the
    compiled forward pass, else dense.
    """
    cdef cnp.ndarray Mc = np.ascontiguousarray(M, dtype=np.float64)
    cdef Py_ssize_t nv = Mc.shape[0]
    cdef cnp.ndarray a0c = np.ascontiguousarray(a0, dtype=np.float64)
    cdef RowsData data = RowsData(rows, nv)
    cdef _Workspace ws = _Workspace(nv, data.c.nefc, data.c.ncone)
    cdef cnp.ndarray a = np.array(a0c if a_init is None else a_init, dtype=np.float64)
    cdef cnp.ndarray force = np.zeros(data.c.nefc)
    cdef int status
    cdef double bound
    if Mc.shape[1] != nv or a0c.shape[0] != nv or a.shape[0] != nv:
        raise ValueError(f"M, a0: expected ({nv}, {nv}) and ({nv},)")
    tree = _Tree(Mc, dof_parent, ws)
    if scale is None:
        scale = 1.0 / max(np.trace(Mc), np.finfo(float).tiny)
    bound = tolerance / scale
    with nogil:
        status = c_solve_newton(&data.c, <const double*> cnp.PyArray_DATA(Mc),
                                <const double*> cnp.PyArray_DATA(a0c),
                                <double*> cnp.PyArray_DATA(a), <double*> cnp.PyArray_DATA(force),
                                iterations, bound, &ws.w, False)
    if status:
        raise ValueError("solve_newton: the Newton matrix M + Jᵀ D J is not positive definite")
    return a, force


def hessian_factor(M, rows, jar, previous=None, dof_parent=None):
    """The lower Cholesky factor of the Newton matrix at ``jar``: built and factored at
    ``previous`` (default ``jar``), then updated to ``jar`` by ``refactor`` (one rank-one
    update or downdate per row that changed state) and ``add_cones``.  With ``dof_parent``
    (``solve_newton``'s) and rows on paths to the root: the tree factor L, H = Lᵀ L, whose
    entries off the tree's pattern are not part of it (returned as zeros)."""
    cdef cnp.ndarray Mc = np.ascontiguousarray(M, dtype=np.float64)
    cdef Py_ssize_t nv = Mc.shape[0]
    cdef RowsData data = RowsData(rows, nv)
    cdef _Workspace ws = _Workspace(nv, data.c.nefc, data.c.ncone)
    cdef const double* factor = NULL
    cdef double cost
    cdef cnp.ndarray at
    cdef int k
    tree = _Tree(Mc, dof_parent, ws)
    row_pattern(&data.c, &ws.w)
    for k, point in enumerate((jar if previous is None else previous, jar)):
        at = np.ascontiguousarray(point, dtype=np.float64)
        if at.shape[0] != data.c.nefc:
            raise ValueError(f"jar, previous: expected ({data.c.nefc},), got {np.shape(point)}")
        memcpy(ws.w.jar, cnp.PyArray_DATA(at), data.c.nefc * sizeof(double))
        constraint_update(&data.c, ws.w.jar, ws.w.force, ws.w.quadratic, ws.w.hcone,
                          ws.w.state, &cost)
        if refactor(&data.c, <const double*> cnp.PyArray_DATA(Mc), &ws.w, k == 0):
            raise ValueError("hessian_factor: M + Jᵀ D J is not positive definite")
    factor = add_cones(&data.c, &ws.w)
    L = np.tril(np.array(<double[:nv * nv]> factor).reshape(nv, nv))
    if ws.w.tree:
        parent = np.asarray(dof_parent)
        for k in range(nv):
            keep = {k}
            j = parent[k]
            while j >= 0:
                keep.add(int(j))
                j = parent[j]
            L[k, [j for j in range(nv) if j not in keep]] = 0.0
    return L


def primal_cost(M, a0, rows, a):
    """f(a), the cost the accelerations minimize (Gauss plus s)."""
    cdef cnp.ndarray Mc = np.ascontiguousarray(M, dtype=np.float64)
    cdef Py_ssize_t nv = Mc.shape[0]
    cdef RowsData data = RowsData(rows, nv)
    cdef _Workspace ws = _Workspace(nv, data.c.nefc, data.c.ncone)
    cdef cnp.ndarray ac = np.ascontiguousarray(a, dtype=np.float64)
    cdef double cost
    da = ac - np.asarray(a0, dtype=np.float64)
    row_pattern(&data.c, &ws.w)
    residual(&data.c, &ws.w, <const double*> cnp.PyArray_DATA(ac), ws.w.jar)
    constraint_update(&data.c, ws.w.jar, ws.w.force, ws.w.quadratic, ws.w.hcone, ws.w.state,
                      &cost)
    return 0.5 * float(da @ Mc @ da) + cost
