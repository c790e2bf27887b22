# cython: language_level=3
"""The entry point of the compiled constrained solvers: ``ConstrainedModel``.

Part of the dispatch and validation layer of the kernels (see ``_model.pyx``),
not a derivation: it has no reference twin in ``rbd/reference/`` (the solvers
it runs, ``constrained.pyx``, render ``rbd/reference/constrained.py``).

One ``ConstrainedModel`` per model and tuple of constraints (kept by
:func:`rbd.constrained_dynamics`) validates a state or a stack of states once
(:class:`rbd.InputError` naming the argument) and runs them with the GIL
released, a stack in parallel (``prange``, one workspace and one scratch
arena per thread).  Per state (``state_terms``, ``_constrained_state.pyx``): one
outward pass over the joints, the rows ``φ``, ``J``, ``γ`` (``γ ← γ − kd J q̇ −
kp φ``), ``M`` and its tree-sparse factor ``M = Lᵀ L`` (``ltl``, ``crba.pxd``),
``Y = L⁻ᵀ Jᵀ``, ``G = Yᵀ Y``, ``h`` (RNEA at ``q̈ = 0``) and
``q̈₀ = M⁻¹(τ − h)``; then the solver of ``constrained.pyx``.
"""

cimport numpy as cnp
from cpython.object cimport PyObject_GenericSetAttr
from cython.parallel cimport prange, threadid
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

from rbd._kernels._args cimport as_array, batch_of, check_finite
from rbd._kernels._base cimport CompiledBase, omp_starting, omp_unusable
from rbd._kernels._buffers cimport thread_rows
from rbd._kernels._model cimport ModelC, Work
from rbd._kernels._constrained_state cimport solve_augmented, state_terms
from rbd._kernels.constrained cimport (Arena, Proximal, arena, arena_size, solve_impulse,
                                       solve_kkt, solve_proximal, solve_schur)
from rbd._kernels.constraints cimport Rows, bind_rows

import numpy as np

from rbd._validation import singular_inertia
from rbd.errors import InputError

cnp.import_array()

# methods (the order of rbd.algorithms.constrained.METHODS) and tasks
cdef enum:
    KKT = 0
    SCHUR = 1
    PROXIMAL = 2
    IMPULSE = 3
    DELASSUS = 4


cdef struct Job:
    # one validated request over N states (N = 1 without a batch axis)
    int task
    const ModelC* model
    const Rows* rows
    const double* x[4]            # q, q̇ (v⁻), τ, f_ext (NULL: none)
    Py_ssize_t stride[4]          # doubles between consecutive states (0: shared)
    double kp
    double kd
    double e
    Proximal prox
    double* out[2]                # q̈ (v⁺, G), f (Λ)
    int64_t* counts               # 2 × n: rank (−1: M not positive definite), iterations
    Py_ssize_t n
    Py_ssize_t out_stride[2]
    double* arena                 # nthreads × arena_size
    Py_ssize_t arena_size
    Work* works


cdef inline void run_state(const Job* job, Py_ssize_t k, int t) noexcept nogil:
    """State k of the job in the workspace and arena of thread t: rank −1 if M is not definite."""
    job.counts[k] = -1
    job.counts[job.n + k] = 0
    if solve_state(job, k, t) == 0 and job.task > PROXIMAL:
        job.counts[k] = 0


cdef inline int solve_state(const Job* job, Py_ssize_t k, int t) noexcept nogil:
    # run_state's work; 1 if M is not positive definite
    cdef Arena s
    cdef const ModelC* model = job.model
    cdef Py_ssize_t m = job.rows.m, nv = model.nv, rank = 0
    cdef int its = 1
    cdef const double* q = job.x[0] + k * job.stride[0]
    cdef const double* qd = job.x[1] + k * job.stride[1]
    cdef const double* tau = NULL
    cdef const double* f_ext = NULL
    cdef double* x = job.out[0] + k * job.out_stride[0]
    cdef double* f = job.out[1] + k * job.out_stride[1]
    arena(job.arena + t * job.arena_size, m, nv, &s)
    if job.x[2] != NULL:
        tau = job.x[2] + k * job.stride[2]
    if job.x[3] != NULL:
        f_ext = job.x[3] + k * job.stride[3]
    if job.task == IMPULSE or job.task == DELASSUS:
        if state_terms(model, &job.works[t], job.rows, &s, q, qd, NULL, NULL, 0.0, 0.0):
            return 1
        if job.task == DELASSUS:
            memcpy(x, s.G, m * m * sizeof(double))
            return 0
        solve_impulse(model, &s, m, nv, qd, job.e, x, f)
        return 0
    if state_terms(model, &job.works[t], job.rows, &s, q, qd, tau, f_ext, job.kp, job.kd):
        # M is not positive definite: the augmented system (kkt only, as the reference)
        if job.task != KKT or solve_augmented(model, &job.works[t], &s, m, nv, q, qd, tau,
                                              f_ext, x, f):
            return 1
        job.counts[k] = m
        job.counts[job.n + k] = 1
        return 0
    if job.task == KKT:
        rank = solve_kkt(model, &s, m, nv, x, f)
    elif job.task == SCHUR:
        rank = solve_schur(model, &s, m, nv, x, f)
    else:
        its = solve_proximal(model, &s, m, nv, &job.prox, x, f, &rank)
        if its < 0:
            return 1
    job.counts[k] = rank
    job.counts[job.n + k] = its
    return 0


cdef object _object_new = object.__new__


cdef inline object _build(object cls, dict fields):
    # an instance of the (frozen dataclass) cls with these fields, without its __init__:
    # object.__new__(cls), and its __dict__ set past the frozen __setattr__
    out = _object_new(cls)
    PyObject_GenericSetAttr(out, "__dict__", fields)
    return out


cdef class ConstrainedModel:
    """The constrained solvers of one compiled model and one tuple of resolved constraints.

    Parameters
    ----------
    compiled : CompiledModel
        :func:`rbd.algorithms.compiled` of the model.
    packed : tuple of ndarray
        The constraints resolved on the model (``Constraint.resolve``), packed by
        :func:`rbd.constraints.kinds.pack_records`.
    proximal : (mu, tol, max_iter)
        The proximal iteration's settings: ``PROXIMAL_MU``, ``PROXIMAL_TOL`` and
        ``PROXIMAL_MAX_ITER`` of :mod:`rbd.reference.constrained`.
    records : (type, type), optional
        The result classes of :meth:`solve` and :meth:`solve_impulse`
        (:class:`rbd.algorithms.constrained.ConstrainedDynamics` and
        ``ImpulseDynamics``): their instances are built here with the fields written
        to ``__dict__`` at once, without the frozen dataclasses' ``__init__``.
    """

    cdef CompiledBase cm
    cdef Rows rows
    cdef object packed
    cdef Py_ssize_t size
    cdef object buffer
    cdef bint busy
    cdef object zero
    cdef Proximal prox
    cdef object records

    def __init__(self, CompiledBase compiled, packed, proximal, records=(None, None)):
        self.cm = compiled
        self.records = records
        self.packed = packed
        bind_rows(&self.rows, self.packed)
        self.size = arena_size(self.rows.m, compiled.m.nv)
        self.buffer = np.zeros(self.size)
        self.busy = False
        self.zero = np.zeros(compiled.m.nv)
        self.prox.mu, self.prox.tol, self.prox.max_iter = proximal

    @property
    def nrows(self) -> int:
        """Number of constraint rows."""
        return self.rows.m

    @property
    def packed(self):
        """The packed records the rows are computed from (``CompiledModel.rollout``'s
        ``constraints``)."""
        return self.packed

    cdef cnp.ndarray _arg(self, object x, str name, Py_ssize_t n, Job* job, int slot,
                          Py_ssize_t* N):
        cdef cnp.ndarray arr = as_array(x, name)
        cdef Py_ssize_t k = batch_of(arr, 1, n, 0, name)
        check_finite(arr, name)
        if slot == 0 and self.cm.nquat and self.cm._check_quaternions(
                <const double*>cnp.PyArray_DATA(arr), 1 if k < 0 else k):
            arr = cnp.PyArray_NewCopy(arr, cnp.NPY_CORDER)
            self.cm._normalize_quaternions(<double*>cnp.PyArray_DATA(arr), 1 if k < 0 else k)
        if k >= 0:
            if N[0] >= 0 and N[0] != k:
                raise InputError(f"{name} has batch size {k}, other arguments have {N[0]}")
            N[0] = k
        job.x[slot] = <const double*>cnp.PyArray_DATA(arr)
        job.stride[slot] = 0 if k < 0 else n
        return arr

    cdef cnp.ndarray _arg_f(self, object f_ext, Job* job, Py_ssize_t* N):
        cdef cnp.ndarray arr = as_array(f_ext, "f_ext")
        cdef Py_ssize_t k = batch_of(arr, 2, self.cm.m.nb, 6, "f_ext")
        check_finite(arr, "f_ext")
        if k >= 0:
            if N[0] >= 0 and N[0] != k:
                raise InputError(f"f_ext has batch size {k}, other arguments have {N[0]}")
            N[0] = k
        job.x[3] = <const double*>cnp.PyArray_DATA(arr)
        job.stride[3] = 0 if k < 0 else 6 * self.cm.m.nb
        return arr

    cdef Work* _claim(self, int nt, list keep) except NULL:
        # the model's workspaces (w0 for one thread, its batch ones for nt), or private ones
        # (their buffer in keep) when those are in use; _release gives them back
        cdef Work* works
        cdef int t
        if nt == 1 and not self.cm.w0_busy:
            self.cm.w0_busy = True
            return &self.cm.w0
        if nt > 1 and not self.cm.works_busy:
            self.cm.works_busy = True
            try:
                if self.cm.nworks < nt:
                    self.cm._allocate_works(nt)
            except BaseException:
                self.cm.works_busy = False
                raise
            return self.cm.works
        works = <Work*>malloc(nt * sizeof(Work))
        if works == NULL:
            raise MemoryError()
        buffer = thread_rows(nt, self.cm.data.size, True)     # rows a cache line apart
        keep.append(buffer)
        for t in range(nt):
            self.cm._bind(&works[t], buffer[t])
        return works

    cdef void _release(self, Work* works, int nt, list keep):
        if keep:
            free(works)
        elif nt == 1:
            self.cm.w0_busy = False
        else:
            self.cm.works_busy = False

    cdef object _run(self, Job* job, Py_ssize_t N, Py_ssize_t width):
        # outputs (q̈ or v⁺ or G: width; f: m; rank and iterations), then every state
        cdef Py_ssize_t n = 1 if N < 0 else N, k, m = self.rows.m
        cdef int nt = self.cm._num_threads, nd = 1 if N < 0 else 2
        cdef bint failed = False, own_arena
        cdef list keep = []
        cdef Work* works
        cdef cnp.npy_intp dims[2]
        cdef cnp.ndarray x, f, counts = None
        cdef int64_t one[2]
        dims[0] = n
        dims[1] = width
        x = cnp.PyArray_EMPTY(nd, &dims[2 - nd], cnp.NPY_DOUBLE, 0)
        dims[1] = m
        f = cnp.PyArray_EMPTY(nd, &dims[2 - nd], cnp.NPY_DOUBLE, 0)
        if N < 0:
            job.counts = one                   # one state: rank and iterations as ints
        else:
            dims[0] = 2
            dims[1] = n
            counts = cnp.PyArray_EMPTY(2, dims, cnp.NPY_INT64, 0)
            job.counts = <int64_t*>cnp.PyArray_DATA(counts)
        job.model = &self.cm.m
        job.rows = &self.rows
        job.prox = self.prox
        job.out[0] = <double*>cnp.PyArray_DATA(x)
        job.out[1] = <double*>cnp.PyArray_DATA(f)
        job.out_stride[0] = width
        job.out_stride[1] = m
        job.n = n
        if N < 0 or N == 1 or nt == 1 or omp_unusable():
            nt = 1
        elif nt > N:
            nt = <int>N
        own_arena = self.busy or nt > 1
        arena_buffer = thread_rows(nt, self.size, False) if own_arena else self.buffer
        job.arena = <double*>cnp.PyArray_DATA(arena_buffer)
        # each thread's arena a cache line from the next one's (thread_rows)
        job.arena_size = cnp.PyArray_DIMS(arena_buffer)[1] if own_arena else self.size
        self.busy = True
        try:
            works = self._claim(nt, keep)
            job.works = works
            try:
                if nt == 1:
                    with nogil:
                        for k in range(n):
                            run_state(job, k, 0)
                else:
                    omp_starting()
                    with nogil:
                        for k in prange(n, num_threads=nt, schedule="static"):
                            run_state(job, k, threadid())
            finally:
                self._release(works, nt, keep)
        finally:
            if not own_arena:
                self.busy = False
        for k in range(n):
            failed = failed or job.counts[k] < 0
        if failed:
            raise singular_inertia()
        if N < 0:
            return x, f, job.counts[0], job.counts[1]
        return x, f, counts[0], counts[1]

    def dynamics(self, q, v, tau, f_ext=None, int method=KKT, double kp=0.0, double kd=0.0):
        """``(q̈, f, rank, iterations)`` of ``method`` (0 kkt, 1 schur, 2 proximal); rank and
        iterations are ints for one state, int64 arrays for a stack."""
        return self._dynamics(q, v, tau, f_ext, method, kp, kd)

    def solve(self, q, v, tau, f_ext, int method, double kp, double kd):
        """:meth:`dynamics` as an instance of the ``record`` class (``qdd``, ``force``,
        ``rank``, ``iterations``): the result of :func:`rbd.constrained_dynamics`."""
        qdd, force, rank, iterations = self._dynamics(q, v, tau, f_ext, method, kp, kd)
        return _build(self.records[0], {"qdd": qdd, "force": force, "rank": rank,
                                        "iterations": iterations})

    def solve_impulse(self, q, v_minus, double restitution):
        """:meth:`impulse` as an instance of the second ``records`` class (``v``,
        ``impulse``): the result of :func:`rbd.impulse_dynamics`."""
        v, impulse = self.impulse(q, v_minus, restitution)
        return _build(self.records[1], {"v": v, "impulse": impulse})

    cdef tuple _dynamics(self, q, v, tau, f_ext, int method, double kp, double kd):
        cdef Job job
        cdef Py_ssize_t N = -1
        cdef Py_ssize_t nq = self.cm.m.nq, nv = self.cm.m.nv
        if method < KKT or method > PROXIMAL:
            raise InputError(f"method must be 0, 1 or 2, got {method}")
        job.task = method
        job.kp = kp
        job.kd = kd
        job.e = 0.0
        q_ = self._arg(q, "q", nq, &job, 0, &N)
        v_ = self._arg(v, "v", nv, &job, 1, &N)
        t_ = self._arg(tau, "tau", nv, &job, 2, &N)
        f_ = None
        job.x[3] = NULL
        job.stride[3] = 0
        if f_ext is not None:
            f_ = self._arg_f(f_ext, &job, &N)
        return self._run(&job, N, nv)

    def impulse(self, q, v_minus, double restitution=0.0):
        """``(v⁺, Λ)``: the impulse problem of :func:`rbd.impulse_dynamics`."""
        cdef Job job
        cdef Py_ssize_t N = -1
        job.task = IMPULSE
        job.kp = job.kd = 0.0
        job.e = restitution
        q_ = self._arg(q, "q", self.cm.m.nq, &job, 0, &N)
        v_ = self._arg(v_minus, "v_minus", self.cm.m.nv, &job, 1, &N)
        job.x[2] = NULL
        job.x[3] = NULL
        job.stride[2] = job.stride[3] = 0
        x, f, _, _ = self._run(&job, N, self.cm.m.nv)
        return x, f

    def delassus(self, q):
        """``G = J M⁻¹ Jᵀ`` (rows × rows) at ``q``, or stacked."""
        cdef Job job
        cdef Py_ssize_t N = -1, m = self.rows.m
        job.task = DELASSUS
        job.kp = job.kd = job.e = 0.0
        q_ = self._arg(q, "q", self.cm.m.nq, &job, 0, &N)
        job.x[1] = <const double*>cnp.PyArray_DATA(self.zero)
        job.stride[1] = 0
        job.x[2] = NULL
        job.x[3] = NULL
        job.stride[2] = job.stride[3] = 0
        x, _, _, _ = self._run(&job, N, m * m)
        if N < 0:
            return x.reshape(m, m)
        return x.reshape(N, m, m)
