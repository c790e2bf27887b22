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
``np.linalg.solve``.

The rows arrive as :class:`RowsData` (flat arrays of the ``ConstraintRows``
fields); ``solve_newton`` allocates its workspace once and runs without the GIL.
"""

import numpy as np

cimport numpy as cnp
from libc.math cimport fabs, sqrt

from rbd._kernels._spatial cimport cholesky_factor, cholesky_solve

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
        doubles = np.zeros(4 * nefc + 36 * ncone + 3 * nv + nv * nv + 1)
        flags = np.zeros(nefc + 1, dtype=np.uint8)
        states = np.zeros(ncone + 1, dtype=np.intc)
        self.keep = (doubles, flags, states)
        cdef double* p = <double*> cnp.PyArray_DATA(doubles)
        self.w.jar, self.w.force, self.w.Ja, self.w.Jstep = p, p + nefc, p + 2 * nefc, p + 3 * nefc
        p += 4 * nefc
        self.w.hcone = p
        p += 36 * ncone
        self.w.Mstep, self.w.grad, self.w.step, self.w.H = p, p + nv, p + 2 * nv, p + 3 * nv
        self.w.quadratic = <unsigned char*> cnp.PyArray_DATA(flags)
        self.w.state = <int*> cnp.PyArray_DATA(states)


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


cdef inline void residual(const RowsC* rows, const double* a, double* jar) noexcept nogil:
    # jar = J a − aref
    cdef Py_ssize_t i, j
    cdef double s
    for i in range(rows.nefc):
        s = 0.0
        for j in range(rows.nv):
            s += rows.J[i * rows.nv + j] * a[j]
        jar[i] = s - rows.aref[i]


cdef inline double derivatives(const RowsC* rows, const double* M, const double* a0,
                               const double* a, const double* step, double alpha, Work* w,
                               double* d2) noexcept nogil:
    # φ'(α) = Mstep·(x − a₀) − Jstep·f(x) and φ''(α), x = a + α step
    cdef Py_ssize_t i, j, k, start, dim
    cdef double d1 = 0.0, cost, s
    for i in range(rows.nefc):
        w.jar[i] = w.Ja[i] + alpha * w.Jstep[i] - rows.aref[i]
    constraint_update(rows, w.jar, w.force, w.quadratic, w.hcone, w.state, &cost)
    d2[0] = 0.0
    for j in range(rows.nv):
        d1 += w.Mstep[j] * (a[j] + alpha * step[j] - a0[j])
        d2[0] += step[j] * w.Mstep[j]
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


cdef double _line_search(const RowsC* rows, const double* M, const double* a0, const double* a,
                         const double* step, Work* w, double rtol) noexcept nogil:
    """The minimizer α of f(a + α step): bracket the root of φ' by doubling, then
    Newton steps on φ' kept inside the bracket (bisection when a step leaves it).
    ``w.jar`` holds J a − aref on entry."""
    cdef Py_ssize_t i, j, it
    cdef double s, tol, low = 0.0, high = 1.0, alpha, d1, d2, guess
    for i in range(rows.nv):
        # Mstep = M step
        s = 0.0
        for j in range(rows.nv):
            s += M[i * rows.nv + j] * step[j]
        w.Mstep[i] = s
    for i in range(rows.nefc):
        # Ja = J a, Jstep = J step
        w.Ja[i] = w.jar[i] + rows.aref[i]
        s = 0.0
        for j in range(rows.nv):
            s += rows.J[i * rows.nv + j] * step[j]
        w.Jstep[i] = s
    tol = rtol * fabs(derivatives(rows, M, a0, a, step, 0.0, w, &d2))
    # --- bracket: double α until φ'(α) ≥ 0 (φ is convex)
    while derivatives(rows, M, a0, a, step, high, w, &d2) < 0 and high < 1e300:
        low, high = high, 2 * high
    alpha = high
    # --- safeguarded Newton on φ'
    for it in range(60):
        d1 = derivatives(rows, M, a0, a, step, alpha, w, &d2)
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
    return alpha


cdef inline void hessian(const RowsC* rows, const double* M, Work* w) noexcept nogil:
    # H = M + Jqᵀ diag(D_q) Jq + Σ_cones Jcᵀ h Jc, its lower triangle (all cholesky_factor
    # reads); a row's products over its nonzero entries only (nz: their columns)
    cdef Py_ssize_t i, j, k, r, c, start, dim, n, nv = rows.nv
    cdef Py_ssize_t nz[NZ_MAX]
    cdef const double* row
    cdef double s
    for i in range(nv * nv):
        w.H[i] = M[i]
    for r in range(rows.nefc):
        if not w.quadratic[r]:
            continue
        row = rows.J + r * nv
        n = 0
        for i in range(nv):
            if row[i] != 0.0 or nv > NZ_MAX:
                if nv <= NZ_MAX:
                    nz[n] = i
                n += 1
        for i in range(n):
            k = nz[i] if nv <= NZ_MAX else i
            s = rows.D[r] * row[k]
            for j in range(i + 1):
                c = nz[j] if nv <= NZ_MAX else j
                w.H[k * nv + c] += s * row[c]
    for k in range(rows.ncone):
        if w.state[k] != CONE:
            continue
        start, dim = rows.cone_start[k], rows.cone_dim[k]
        for r in range(dim):
            # hJ_r = Σ_c h_rc J_c (a row of h Jc), then H += J_rᵀ hJ_r
            for j in range(nv):
                s = 0.0
                for c in range(dim):
                    s += w.hcone[LD * LD * k + LD * r + c] * rows.J[(start + c) * nv + j]
                w.grad[j] = s
            for i in range(nv):
                s = rows.J[(start + r) * nv + i]
                if s != 0.0:
                    for j in range(i + 1):
                        w.H[i * nv + j] += s * w.grad[j]


cdef int c_solve_newton(const RowsC* rows, const double* M, const double* a0, double* a,
                        double* force, Py_ssize_t iterations, double tolerance,
                        Work* w) noexcept nogil:
    """Newton steps on f(a) from ``a`` (in place); the forces at the last ``a``.
    ``tolerance``: MuJoCo's divided by its scale (the bound on the unscaled cost decrease of
    a step, gradient norm and Newton decrement, solve_newton's rule).
    Returns 0, or 1 when the Hessian is not positive definite."""
    cdef Py_ssize_t it, i, j, nv = rows.nv
    cdef double s, norm, moved, size, alpha, cost, previous = 0.0, decrement
    cdef bint small_gradient, small_decrement
    residual(rows, a, w.jar)
    for it in range(iterations + 1):
        constraint_update(rows, w.jar, w.force, w.quadratic, w.hcone, w.state, &cost)
        norm = 0.0
        for i in range(nv):
            # ∇f = M (a − a₀) − Jᵀ f (the rows without force skipped), and
            # f(a) = ½ (a − a₀)ᵀ M (a − a₀) + s
            s = 0.0
            for j in range(nv):
                s += M[i * nv + j] * (a[j] - a0[j])
            cost += 0.5 * (a[i] - a0[i]) * s
            w.grad[i] = s
        for j in range(rows.nefc):
            if w.force[j] != 0.0:
                for i in range(nv):
                    w.grad[i] -= rows.J[j * nv + i] * w.force[j]
        for i in range(nv):
            norm += w.grad[i] * w.grad[i]
        if (it > 0 and 0 < previous - cost < tolerance) or it == iterations:
            break                                      # the last step improved too little
        for i in range(nv):
            w.step[i] = -w.grad[i]
            w.Mstep[i] = w.grad[i]                     # kept: hessian() overwrites grad
        hessian(rows, M, w)
        if cholesky_factor(w.H, w.H, nv, nv):
            return 1
        # step = −H⁻¹ ∇f; the Newton decrement ½ ∇fᵀ H⁻¹ ∇f
        cholesky_solve(w.H, w.step, nv)
        decrement = 0.0
        for i in range(nv):
            decrement -= 0.5 * w.Mstep[i] * w.step[i]
        small_gradient = sqrt(norm) < tolerance
        small_decrement = max(0.0, decrement) < tolerance
        if (small_gradient and small_decrement) if it == 0 else (small_gradient
                                                                 or small_decrement):
            break
        alpha = _line_search(rows, M, a0, a, w.step, w, 1e-12)
        moved = 0.0
        size = 0.0
        for i in range(nv):
            # a ← a + α step
            moved += (alpha * w.step[i]) ** 2
            size += a[i] * a[i]
            a[i] += alpha * w.step[i]
        for i in range(rows.nefc):
            # J a − aref at the new a, from the line search's products
            w.jar[i] = w.Ja[i] + alpha * w.Jstep[i] - rows.aref[i]
        previous = cost
        if sqrt(moved) <= 1e-15 * (1 + sqrt(size)):
            break
    residual(rows, a, w.jar)
    constraint_update(rows, w.jar, force, w.quadratic, w.hcone, w.state, &cost)
    return 0


def solve_newton(M, a0, rows, a_init=None, Py_ssize_t iterations=100,
                 double tolerance=1e-14, scale=None):
    """Accelerations and constraint forces by MuJoCo's primal Newton method.

    The arguments and results of ``rbd.constraints.solver_newton.solve_newton``.
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
    if scale is None:
        scale = 1.0 / max(np.trace(Mc), np.finfo(float).tiny)
    bound = tolerance / scale
    with nogil:
        status = c_solve_newton(&data.c, <const double*> cnp.PyArray_DATA(Mc),
                                <const double*> cnp.PyArray_DATA(a0c),
                                <double*> cnp.PyArray_DATA(a), <double*> cnp.PyArray_DATA(force),
                                iterations, bound, &ws.w)
    if status:
        raise ValueError("solve_newton: the Newton matrix M + Jᵀ D J is not positive definite")
    return a, force


def primal_cost(M, a0, rows, a):
    """f(a), the cost the accelerations minimize (Gauss plus s)."""
    cdef cnp.ndarray Mc = np.ascontiguousarray(M, dtype=np.float64)
    cdef Py_ssize_t nv = Mc.shape[0]
    cdef RowsData data = RowsData(rows, nv)
    cdef _Workspace ws = _Workspace(nv, data.c.nefc, data.c.ncone)
    cdef cnp.ndarray ac = np.ascontiguousarray(a, dtype=np.float64)
    cdef double cost
    da = ac - np.asarray(a0, dtype=np.float64)
    residual(&data.c, <const double*> cnp.PyArray_DATA(ac), ws.w.jar)
    constraint_update(&data.c, ws.w.jar, ws.w.force, ws.w.quadratic, ws.w.hcone, ws.w.state,
                      &cost)
    return 0.5 * float(da @ Mc @ da) + cost
