# cython: language_level=3
"""The batch runner and argument checks of ``CompiledModel.rollout``.

Part of the dispatch and validation layer of the kernels (see ``_model.pyx``),
not a derivation: it has no reference twin in ``rbd/reference/`` (the kernel
it runs, ``rollout.pyx``, renders ``rbd/reference/rollout.py``).

``run_rollout(km, ...)`` checks the arguments of
:meth:`rbd._kernels._model.CompiledModel.rollout` in compiled code
(:class:`rbd.InputError` naming the argument), fills the ``Control`` and
``Plan`` records of ``rollout.pxd``, and runs one rollout, or a batch with the
GIL released: ``prange`` over the rollouts, one workspace per thread, or, when
a lane build of ``soa.pxi`` runs (``set_simd``), ``prange`` over blocks of W
rollouts in lanes (``soa_rollout.pxi``); serially in a child forked after a
parallel batch (the fork rule of ``_base.pyx``).
The calling thread runs Python's signal handlers every few milliseconds
(``interrupted`` in ``_base.pyx``); when one raises, every rollout stops and
the exception is raised with what was computed (its ``rollout`` attribute).
"""

cimport numpy as cnp
from cython.parallel cimport prange, threadid
from libc.stdlib cimport free, malloc

from rbd._kernels cimport rollout as _rollout
from rbd._kernels._args cimport as_array, batch_of, check_finite, shape_text, vector
from rbd._kernels._base cimport (CompiledBase, Interrupt, interrupt_error, interrupt_start,
                                 omp_starting, omp_unusable)
from rbd._kernels._buffers cimport lane_buffer, thread_rows
from rbd._kernels._model cimport J_FREE, J_SPHERICAL, ModelC, Work
from rbd._kernels.constrained cimport arena_size
from rbd._kernels.constraints cimport Rows, bind_rows
from rbd._kernels._soa cimport SoaKernels

import numpy as np

from rbd._kernels.rollout import Integrator
from rbd._validation import singular_inertia
from rbd.errors import InputError

cnp.import_array()


cdef inline void rollout_one(const _rollout.RolloutJob* job, Py_ssize_t k, int t) noexcept nogil:
    # rollout k in the workspace of thread t; its status in job.status[k]
    cdef const ModelC* m = job.m
    cdef _rollout.Control ctl = job.ctl[0]
    cdef _rollout.Record rec
    cdef Py_ssize_t rows = job.rows
    if ctl.tau != NULL:
        ctl.tau = ctl.tau + k * job.tau_step
    if ctl.rows != NULL:
        ctl.arena = job.arena + t * job.narena
    rec.q = job.out[0] + k * rows * m.nq
    rec.v = job.out[1] + k * rows * m.nv
    rec.a = job.out[2] + k * rows * m.nv
    rec.tau = NULL if job.out[3] == NULL else job.out[3] + k * rows * m.nv
    rec.kinetic = job.out[4] + k * rows
    rec.potential = job.out[5] + k * rows
    rec.phi = NULL if job.out[6] == NULL else job.out[6] + k * rows * job.nrows
    rec.jv = NULL if job.out[7] == NULL else job.out[7] + k * rows * job.nrows
    job.status[k] = _rollout.rollout(m, &job.works[t], &ctl, job.plan, job.q0 + k * m.nq,
                                     job.v0 + k * m.nv, job.scratch + t * job.nscratch, &rec)
    job.samples[k] = rec.samples
    job.steps[k] = rec.steps
    job.failure[k] = rec.failure
    job.failure_t[k] = rec.failure_t if rec.failure else 0.0
    if job.status[k] == 0 and rec.samples != rows:
        job.status[k] = _rollout.DIVERGED


cdef tuple run_rollout(CompiledBase km, object q0, object v0, object times,
                       object integrator, Py_ssize_t stride, object tau, object f_ext,
                       object q_ref, object kp, object kd, object damping, bint keep_tau,
                       object num_threads, object grid, const SoaKernels* lanes,
                       object constraints=None, object baumgarte=None):
    # the rollouts of CompiledModel.rollout (its docstring): checks, outputs, the runs;
    # a batch without constraints runs in lanes (soa_rollout.pxi) when lanes is not NULL
    cdef _rollout.Control ctl
    cdef _rollout.Plan plan
    cdef Interrupt intr
    cdef Rows crows
    cdef Py_ssize_t tau_step = 0
    cdef Py_ssize_t N, m = 0
    keep = []
    q0, v0, N = _rollout_states(km, q0, v0)
    keep.append(_rollout_plan(km, times, grid, integrator, stride, &plan))
    tau_step, tau_arr = _rollout_tau(km, tau, N, plan.n_steps, &ctl)
    keep.append(_rollout_law(km, q_ref, kp, kd, damping, f_ext, &ctl))
    ctl.rows = NULL
    ctl.arena = NULL
    ctl.baumgarte_kp = ctl.baumgarte_kd = 0.0
    if constraints is not None:
        bind_rows(&crows, constraints)           # the packed records, kept by the caller
        ctl.rows = &crows
        m = crows.m
        if baumgarte is not None:
            ctl.baumgarte_kp, ctl.baumgarte_kd = baumgarte
    rows = plan.n_steps // stride + 1 + (1 if plan.n_steps % stride else 0)
    lead = () if N < 0 else (N,)
    out = [np.empty(lead + (rows, d)) for d in (km.m.nq, km.m.nv, km.m.nv)]
    out.append(np.empty(lead + (rows, km.m.nv)) if keep_tau else None)
    out += [np.empty(lead + (rows,)), np.empty(lead + (rows,))]
    out += [np.empty(lead + (rows, m)), np.empty(lead + (rows, m))] if ctl.rows != NULL \
        else [None, None]
    status = np.zeros(max(N, 1), dtype=np.intc)
    counts = np.zeros((3, max(N, 1)), dtype=np.intp)     # samples, steps, failure
    failure_t = np.zeros(max(N, 1))
    nt = km._num_threads if num_threads is None else int(num_threads)
    if nt < 1:
        raise InputError(f"num_threads must be at least 1, got {num_threads!r}")
    interrupt_start(&intr)
    plan.interrupt = &intr
    _rollouts(km, &ctl, &plan, q0, v0, tau_step, out, rows, status, counts, failure_t,
              min(nt, max(N, 1)), lanes if N >= 0 else NULL)
    if N < 0:
        result = (*out[:6], int(status[0]), int(counts[0, 0]), int(counts[1, 0]),
                  "qva"[counts[2, 0] - 1] if counts[2, 0] else "", float(failure_t[0]), *out[6:])
    else:
        result = (*out[:6], status, counts[0], counts[1],
                  np.array(["", "q", "v", "a"])[counts[2]], failure_t, *out[6:])
    error = interrupt_error(&intr)
    if error is not None:
        try:
            error.rollout = result
        except AttributeError:
            pass
        raise error
    bad = status[status > 0]
    if bad.size:
        km._raise_status(int(bad[0]))
    if np.any(status == _rollout.NOT_DEFINITE):
        raise singular_inertia()
    return result


cdef tuple _rollout_states(CompiledBase km, object q0, object v0):
    # q0 (with its quaternions checked, normalized on a copy) and v0, one state or N
    cdef cnp.ndarray q = as_array(q0, "q0")
    cdef cnp.ndarray v = as_array(v0, "v0")
    cdef Py_ssize_t N = batch_of(q, 1, km.m.nq, 0, "q0")
    if batch_of(v, 1, km.m.nv, 0, "v0") != N:
        want = (<object>q).shape[:1] + (km.m.nv,) if N >= 0 else (km.m.nv,)
        raise InputError(f"v0 must have shape {shape_text(want)} to match q0, got "
                         f"{shape_text((<object>v).shape)}")
    check_finite(q, "q0")
    check_finite(v, "v0")
    if km.nquat and km._check_quaternions(<const double*>cnp.PyArray_DATA(q),
                                          1 if N < 0 else N):
        q = cnp.PyArray_NewCopy(q, cnp.NPY_CORDER)
        km._normalize_quaternions(<double*>cnp.PyArray_DATA(q), 1 if N < 0 else N)
    return q, v, N


cdef object _rollout_plan(CompiledBase km, object times, object grid, object integrator,
                          Py_ssize_t stride, _rollout.Plan* plan):
    # the grid t_0 ≤ t_1 ≤ ... (one step between consecutive times) or the uniform grid
    # (dt, duration, n_steps), the method (a member of Integrator, rollout.pxd), the stride
    cdef cnp.ndarray t
    cdef Py_ssize_t i
    if stride < 1:
        raise InputError(f"stride must be a positive integer, got {stride}")
    members = {int(m): m for m in Integrator}     # a flag enum: Integrator(3) would pass
    if isinstance(integrator, bool) or not hasattr(integrator, "__index__") \
            or integrator.__index__() not in members:
        raise InputError(f"integrator must be a member of rbd._kernels.rollout.Integrator "
                         f"{[m.name for m in Integrator]} or its value, got {integrator!r}")
    plan.stride = stride
    plan.integrator = <_rollout.Integrator><int>integrator.__index__()
    plan.curved = False
    plan.interrupt = NULL
    for i in range(km.m.nb):
        if km.m.jtype[i] == J_SPHERICAL or km.m.jtype[i] == J_FREE:
            plan.curved = True
    if (times is None) == (grid is None):
        raise InputError("give either times or grid = (dt, duration, n_steps)")
    if grid is not None:
        dt, duration, n_steps = grid
        plan.t = NULL
        plan.dt = float(dt)
        plan.duration = float(duration)
        plan.n_steps = int(n_steps)
        if not (plan.dt > 0 and plan.duration >= 0 and plan.n_steps >= 0
                and np.isfinite(plan.dt) and np.isfinite(plan.duration)):
            raise InputError(f"grid must be (dt > 0, duration >= 0, n_steps >= 0), got {grid!r}")
        return None
    t = as_array(times, "times")
    if cnp.PyArray_NDIM(t) != 1 or cnp.PyArray_DIMS(t)[0] < 1:
        raise InputError(f"times must be a non-empty 1-D array, got shape "
                         f"{shape_text((<object>t).shape)}")
    check_finite(t, "times")
    if np.any(np.diff(t) < 0):
        raise InputError("times must be non-decreasing")
    plan.t = <const double*>cnp.PyArray_DATA(t)
    plan.n_steps = cnp.PyArray_DIMS(t)[0] - 1
    return t


cdef tuple _rollout_tau(CompiledBase km, object tau, Py_ssize_t N, Py_ssize_t n_steps,
                        _rollout.Control* ctl):
    # τ_ff: None, (nv,), (n_steps, nv) or (N, n_steps, nv); returns (rollout stride, array)
    cdef cnp.ndarray arr
    cdef tuple want
    ctl.tau = NULL
    ctl.tau_rows = 0
    if tau is None:
        return 0, None
    arr = as_array(tau, "tau")
    shape = (<object>arr).shape
    nv = km.m.nv
    if shape == (nv,):
        ctl.tau_rows = 1
    elif shape == (n_steps, nv) or (N >= 0 and shape == (N, n_steps, nv)):
        ctl.tau_rows = n_steps
    else:
        want = "(nv,) = " + shape_text((nv,)) + f" or (steps, nv) = ({n_steps}, {nv})"
        if N >= 0:
            want = want + f" or (N, steps, nv) = ({N}, {n_steps}, {nv})"
        raise InputError(f"tau must have shape {want}, got {shape_text(shape)}")
    check_finite(arr, "tau")
    ctl.tau = <const double*>cnp.PyArray_DATA(arr)
    return (n_steps * nv if len(shape) == 3 else 0), arr


cdef list _rollout_law(CompiledBase km, object q_ref, object kp, object kd, object damping,
                       object f_ext, _rollout.Control* ctl):
    # the PD law (q_ref, kp, kd), the damping D and f_ext; returns the arrays to keep
    cdef list keep = []
    ctl.q_ref = NULL
    ctl.kp = NULL
    ctl.kd = NULL
    ctl.damping = NULL
    ctl.f_ext = NULL
    if (q_ref is None) != (kp is None) or (q_ref is None) != (kd is None):
        raise InputError("q_ref, kp and kd go together: give all three or none")
    if q_ref is not None:
        keep += [vector(q_ref, "q_ref", km.m.nq), vector(kp, "kp", km.m.nv),
                 vector(kd, "kd", km.m.nv)]
        if km.nquat:
            km._check_quaternions(<const double*>cnp.PyArray_DATA(keep[0]), 1)
        ctl.q_ref = <const double*>cnp.PyArray_DATA(keep[0])
        ctl.kp = <const double*>cnp.PyArray_DATA(keep[1])
        ctl.kd = <const double*>cnp.PyArray_DATA(keep[2])
    if damping is not None:
        arr = vector(damping, "damping", km.m.nv)
        keep.append(arr)
        ctl.damping = <const double*>cnp.PyArray_DATA(arr)
    if f_ext is not None:
        arr = as_array(f_ext, "f_ext")
        if (<object>arr).shape != (km.m.nb, 6):
            raise InputError(f"f_ext must have shape ({km.m.nb}, 6), got "
                             f"{shape_text((<object>arr).shape)}")
        check_finite(arr, "f_ext")
        keep.append(arr)
        ctl.f_ext = <const double*>cnp.PyArray_DATA(arr)
    return keep


cdef int _rollouts(CompiledBase km, _rollout.Control* ctl, _rollout.Plan* plan,
                   cnp.ndarray q0, cnp.ndarray v0, Py_ssize_t tau_step, list out,
                   Py_ssize_t rows, cnp.ndarray status, cnp.ndarray counts,
                   cnp.ndarray failure_t, int nt, const SoaKernels* lanes) except -1:
    # every rollout, GIL released: prange over the rollouts, one workspace per thread;
    # with lanes, prange over blocks of W rollouts (block b: rollouts b W .. b W + W - 1
    # whatever the thread count), one lane workspace per thread besides
    cdef Py_ssize_t N = 1 if cnp.PyArray_NDIM(q0) == 1 else cnp.PyArray_DIMS(q0)[0]
    cdef Py_ssize_t k, nscratch = 3 * km.m.nq + 20 * km.m.nv, b, nblocks = 0, size = 0
    cdef Py_ssize_t m = 0 if ctl.rows == NULL else ctl.rows.m
    cdef Py_ssize_t W = 1
    cdef int t
    cdef double* lane_work = NULL
    cdef _rollout.RolloutJob job
    if ctl.rows != NULL:
        lanes = NULL         # constrained evaluations: the one-state stepper (rollout.pyx)
    if lanes != NULL:
        W = lanes.lanes
        nblocks = (N + W - 1) // W
        nt = <int>max(1, min(nt, nblocks))     # one workspace also for an empty batch
        size = lanes.rollout_size(&km.m)
    if omp_unusable():
        nt = 1       # the fork rule (_base.pyx)
    # each thread's workspace, scratch and arena rows a cache line apart (thread_rows)
    buffer = thread_rows(nt, km.data.size, True)
    scratch = thread_rows(nt, nscratch, False)
    nscratch = cnp.PyArray_DIMS(scratch)[1]
    job.nrows = m
    arenas = thread_rows(nt, 0 if ctl.rows == NULL else arena_size(m, km.m.nv) + m, False)
    job.narena = 0 if ctl.rows == NULL else cnp.PyArray_DIMS(arenas)[1]
    job.arena = <double*>cnp.PyArray_DATA(arenas)
    job.works = <Work*>malloc(nt * sizeof(Work))
    if job.works == NULL:
        raise MemoryError()
    for t in range(nt):
        km._bind(&job.works[t], buffer[t])
    job.m = &km.m
    job.ctl = ctl
    job.plan = plan
    job.tau_step = tau_step
    job.q0 = <const double*>cnp.PyArray_DATA(q0)
    job.v0 = <const double*>cnp.PyArray_DATA(v0)
    job.scratch = <double*>cnp.PyArray_DATA(scratch)
    job.nscratch = nscratch
    job.rows = rows
    for t in range(8):
        job.out[t] = NULL if out[t] is None else <double*>cnp.PyArray_DATA(out[t])
    job.status = <int*>cnp.PyArray_DATA(status)
    job.samples = <Py_ssize_t*>cnp.PyArray_DATA(counts)
    job.steps = job.samples + cnp.PyArray_DIMS(counts)[1]
    job.failure = job.steps + cnp.PyArray_DIMS(counts)[1]
    job.failure_t = <double*>cnp.PyArray_DATA(failure_t)
    if lanes != NULL:
        try:
            lane_work = lane_buffer(nt, &size)
        except MemoryError:
            free(job.works)
            raise
    if nt > 1:
        omp_starting()
    try:
        with nogil:
            if lanes != NULL and nt == 1:
                for b in range(nblocks):
                    lanes.rollout(&job, 0, lane_work, b * W, min(W, N - b * W))
            elif lanes != NULL:
                for b in prange(nblocks, num_threads=nt, schedule="dynamic", chunksize=1):
                    lanes.rollout(&job, threadid(), lane_work + threadid() * size, b * W,
                                  min(W, N - b * W))
            elif nt == 1:
                for k in range(N):
                    rollout_one(&job, k, 0)
            else:
                for k in prange(N, num_threads=nt, schedule="dynamic", chunksize=1):
                    rollout_one(&job, k, threadid())
    finally:
        free(job.works)
        free(lane_work)
    return 0
