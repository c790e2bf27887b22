# cython: language_level=3
"""The state of a compiled model: flat typed arrays, joint functions, workspaces.

Part of the dispatch and validation layer of the kernels (see ``_model.pyx``),
not a derivation: it has no reference twin in ``rbd/reference/``.

``CompiledBase(model)`` copies ``model.flat_arrays()`` into the C record
``ModelC`` (see ``_model.pxd``), looks up the C functions of generated joints
and the quaternions' positions in ``q``, and allocates a workspace (an
:class:`rbd.data.Data`); ``_bind`` points a ``Work`` record into such a
buffer.  :class:`rbd._kernels._model.CompiledModel` adds the checked entry
points on top of it, and ``_rollout_batch.pyx`` runs its rollouts.

The fork rule of threaded batches lives here too (``omp_unusable``,
``omp_starting``), shared by the batches of ``_model.pyx`` and the rollouts, and
the interrupt check of long compiled loops (``interrupted``).
"""

cimport numpy as cnp
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from cpython.ref cimport Py_INCREF, PyObject, Py_XDECREF
from libc.math cimport fabs, sqrt
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

cimport openmp
from cython.parallel cimport prange, threadid

from rbd._kernels._buffers cimport lane_buffer, thread_rows
from rbd._kernels._args cimport (Call, Pending, all_finite, as_array, batch_of, check_finite,
                                 check_rows, raise_non_finite)
from rbd._kernels._model cimport J_FREE, J_SPHERICAL, J_SYMBOLIC, MAX_JOINT_NV
from rbd._kernels._soa cimport SOA_ABA_DERIVATIVES, SOA_CRBA, SOA_RNEA_DERIVATIVES, soa_run_fn

import os

import numpy as np

from rbd._validation import QUATERNION_TOLERANCE, singular_pivot
from rbd.data import Data
from rbd.errors import InputError, ModelError

cnp.import_array()

# --- fork safety -------------------------------------------------------------------------------
# OpenMP's thread pool does not survive fork(): a child that enters a parallel region
# after its parent started the pool waits forever for threads that do not exist.  The
# parent records that it started the pool; a forked child then runs batches serially.
cdef bint _omp_started = False
cdef bint _omp_unusable = False


def _after_fork_in_child():
    global _omp_unusable
    _omp_unusable = _omp_started


def parallel_batches_available() -> bool:
    """False in a child forked after its parent ran a parallel batch (it runs serially)."""
    return not _omp_unusable


os.register_at_fork(after_in_child=_after_fork_in_child)


cdef bint omp_unusable() noexcept:
    # a child forked after this process ran a parallel batch: run batches serially
    return _omp_unusable


cdef void omp_starting() noexcept:
    # called before a batch enters a parallel region
    global _omp_started
    _omp_started = True


# --- interrupts --------------------------------------------------------------------------------
# Python's C signal handler only marks a signal as pending; the Python handler (for SIGINT:
# raise KeyboardInterrupt) runs when the main thread next calls PyErr_CheckSignals.  A loop
# that runs for seconds without the GIL calls interrupted() every few iterations: the
# calling thread runs the handlers under the GIL at most every INTERRUPT_INTERVAL seconds
# (a clock read otherwise), the threads of a prange only read the flag it sets.
cdef extern from "Python.h":
    int PyErr_CheckSignals() except -1
    unsigned long PyThread_get_thread_ident() nogil

#: Seconds between two runs of the signal handlers from a compiled loop.
INTERRUPT_INTERVAL = 0.02
cdef double _interval = INTERRUPT_INTERVAL
cdef Py_ssize_t LINE = 16  # ints of a 64-byte cache line (run_lanes' per-thread status)


cdef inline double _monotonic() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + 1e-9 * ts.tv_nsec


cdef void interrupt_start(Interrupt* s) noexcept:
    # before the loop, GIL held: the calling thread polls
    s.stop = 0
    s.poller = PyThread_get_thread_ident()
    s.last = _monotonic()
    s.error = NULL


cdef void _run_handlers(Interrupt* s) noexcept with gil:
    # Python's signal handlers; what one of them raises stops the loop and is kept
    try:
        PyErr_CheckSignals()
    except BaseException as exc:
        Py_INCREF(exc)
        s.error = <PyObject*>exc
        s.stop = 1


cdef bint interrupted(Interrupt* s) noexcept nogil:
    # True once a signal handler raised (then the loop ends and its caller raises that)
    cdef double now
    if s.stop:
        return True
    if PyThread_get_thread_ident() != s.poller:
        return False
    now = _monotonic()
    if now - s.last < _interval:
        return False
    s.last = now
    _run_handlers(s)
    return s.stop != 0


cdef object interrupt_error(Interrupt* s):
    # after the loop, GIL held: what a signal handler raised (the reference passes to the
    # caller), or None
    if s.error == NULL:
        return None
    exc = <object>s.error
    Py_XDECREF(s.error)
    s.error = NULL
    return exc


# --- batches in lanes ---------------------------------------------------------------------------
cdef int run_lanes(const ModelC* m, const SoaKernels* K, int task, const double** x,
                   const Py_ssize_t* stride, double* out, Py_ssize_t out_stride, Py_ssize_t N,
                   int num_threads, Pending* pending) except -1:
    # a batch of RNEA, ABA or CRBA (task of _soa.pxd) in blocks of W states (soa.pxi,
    # soa_crba.pxi), or of their derivatives (soa_derivatives.pxi), GIL released: prange
    # over the blocks, one lane workspace per thread.  Block b always holds states
    # b W .. b W + W - 1, so no result depends on the number of threads.
    # The value checks of the inputs (pending, when active) run on each block before it:
    # after a failed one (pending.failed) the remaining blocks are skipped.
    # Returns 0, or the kernel's status (1 + the body of a singular pivot).
    cdef int nt = num_threads, t, failed = 0
    cdef Py_ssize_t W = K.lanes, nblocks = (N + K.lanes - 1) // K.lanes, b
    cdef bint derivs = task == SOA_RNEA_DERIVATIVES or task == SOA_ABA_DERIVATIVES
    cdef soa_run_fn run = (K.run_derivatives if derivs
                           else K.crba if task == SOA_CRBA else K.run)
    cdef Py_ssize_t size = (K.derivatives_size(m) if derivs else K.size(m)) + 8, chunk
    cdef double* work
    cdef int* status
    cdef Interrupt intr
    if nt > nblocks:
        nt = <int>nblocks
    if omp_unusable():
        # a child forked after a parallel batch: serially (the fork rule above)
        nt = 1
    chunk = max(1, nblocks // (16 * nt))
    status = <int*>malloc(nt * LINE * sizeof(int))  # each thread's on its own cache line
    if status == NULL:
        raise MemoryError()
    try:
        work = lane_buffer(nt, &size)
    except MemoryError:
        free(status)
        raise
    for t in range(nt):
        status[LINE * t] = 0
    if nt > 1:
        omp_starting()
    interrupt_start(&intr)
    try:
        with nogil:
            if nt == 1:
                for b in range(nblocks):
                    if pending.active and check_rows(pending, b * W, min(W, N - b * W)):
                        break
                    status[0] = run(m, work, task, x, stride, out, out_stride, b * W,
                                    min(W, N - b * W))
                    if status[0] or (b % 8 == 7 and interrupted(&intr)):
                        break
            else:
                for b in prange(nblocks, num_threads=nt, schedule="dynamic", chunksize=chunk):
                    if status[LINE * threadid()] == 0 and not (
                            b % 8 == 7 and interrupted(&intr)) and not intr.stop and not (
                            pending.active and (pending.failed or check_rows(
                                pending, b * W, min(W, N - b * W)))):
                        status[LINE * threadid()] = run(m, work + threadid() * size, task, x,
                                                 stride, out, out_stride, b * W,
                                                 min(W, N - b * W))
        error = interrupt_error(&intr)
        if error is not None:
            raise error
        for t in range(nt):
            if status[LINE * t]:
                failed = status[LINE * t]
    finally:
        free(work)
        free(status)
    return failed


__all__ = ["CompiledBase", "column_slots", "parallel_batches_available"]

#: Name of the PyCapsule that carries a generated joint's C jcalc function.
JCALC_CAPSULE = "rbd.jcalc"


def _is_model(model) -> bool:
    # an rbd.Model, recognized by what the kernels use of it (this layer does not import
    # rbd.model): flat_arrays(), bodies and the per-model cache of derived quantities
    return all(hasattr(model, name) for name in ("flat_arrays", "bodies", "_derived"))


def check_index_arrays(model, flat) -> None:
    """Refuse index arrays that do not describe the model's ``q`` and ``v``.

    The kernels index ``q`` and ``v`` through ``q_start``/``nq_j`` and
    ``v_start``/``nv_j`` and size their inputs and results by ``model.nq`` and
    ``model.nv``; these must agree (``nq = Σ nq_j``, ``nv = Σ nv_j``, each joint's
    block right after the previous one), or a kernel reads and writes past the
    end of its arrays.  A model with mimic joints fails here: its ``nq`` and ``nv``
    count the independent coordinates while its arrays are the full tree's.
    """
    nq_j, nv_j = np.asarray(flat["nq_j"]), np.asarray(flat["nv_j"])
    sums = (int(nq_j.sum()), int(nv_j.sum()))
    if sums != (model.nq, model.nv):
        hint = (" (its mimic joints keep only the independent coordinates: compile the "
                "full tree, model.full_model(), and map with model.coupling())"
                if getattr(model, "mimic", None) else "")
        raise ModelError(
            f"model {getattr(model, 'name', '?')!r}: the compiled arrays describe "
            f"nq = Σ nq_j = {sums[0]}, nv = Σ nv_j = {sums[1]}, but the model has "
            f"nq = {model.nq}, nv = {model.nv}{hint}")
    starts = (np.asarray(flat["q_start"]), np.asarray(flat["v_start"]))
    for start, size, name in ((starts[0], nq_j, "q_start"), (starts[1], nv_j, "v_start")):
        expected = np.concatenate(([0], np.cumsum(size)[:len(size) - 1])) if len(size) else size
        if not np.array_equal(start, expected):
            raise ModelError(f"model {getattr(model, 'name', '?')!r}: {name} does not place "
                             "each joint's coordinates right after the previous joint's")


def dof_paths(dof_parent) -> tuple[np.ndarray, np.ndarray]:
    """``(path, start)``: each dof k's ancestors, nearest first, at ``path[start[k]:start[k + 1]]``
    (int64): the tree factor's loops (``crba.pyx``, ``rank_one.pxd``) run over them."""
    path, start = [], [0]
    for j in dof_parent:
        while j >= 0:
            path.append(j)
            j = dof_parent[j]
        start.append(len(path))
    return np.array(path, dtype=np.int64), np.array(start, dtype=np.int64)


def column_slots(parent) -> tuple[np.ndarray, np.ndarray, int]:
    """Storage slots of the M⁻¹ kernel's per-body columns (``aba.pyx``).

    ``F_i`` (6 × nv) is live from the inward pass's step at ``last[i] = max(i,
    children of i)`` (the first child that pushes into it) down to step ``i``, and
    the outward pass uses it over the same bodies.  Overlapping intervals get
    distinct slots (greedy interval colouring, optimal): a chain needs 2 slots
    instead of ``nbodies``, a tree as many as its widest cut.

    Returns ``(slot, last, nslots)``.
    """
    nb = len(parent)
    last = np.arange(nb, dtype=np.int64)
    for i in range(nb):
        if parent[i] >= 0:
            last[parent[i]] = max(last[parent[i]], i)
    slot = np.full(nb, -1, dtype=np.int64)
    free_slots, nslots = [], 0
    for t in range(nb - 1, -1, -1):
        # F_t (a leaf) and F_λ(t) (when t is its last child) come alive at step t
        for b in (t, parent[t]):
            if b >= 0 and last[b] == t and slot[b] < 0:
                if free_slots:
                    slot[b] = free_slots.pop()
                else:
                    slot[b] = nslots
                    nslots += 1
        # F_t is dead once step t has pushed it to its parent
        free_slots.append(slot[t])
    return slot, last, nslots


cdef class CompiledBase:
    """The arrays, joint functions and workspaces of a compiled model.

    The base of :class:`rbd._kernels._model.CompiledModel` (its parameters and
    errors); it has no entry points of its own.
    """

    def __cinit__(self):
        self.works = NULL
        self.jfun = NULL
        self.quat_start = NULL

    def __init__(self, model):
        if not _is_model(model):
            raise ModelError(f"CompiledModel needs an rbd.Model, got {type(model).__name__}")
        flat = model.flat_arrays()
        check_index_arrays(model, flat)
        nb = model.nbodies
        ints = {k: np.array(flat[k], dtype=np.int64) for k in
                ("parent", "jtype", "q_start", "v_start", "nq_j", "nv_j", "dof_parent")}
        ints["col_slot"], ints["col_last"], self.m.ncol_slots = column_slots(ints["parent"])
        ints["dof_path"], ints["dof_path_start"] = dof_paths(ints["dof_parent"])
        reals = {k: np.array(flat[k], dtype=np.float64, order="C") for k in
                 ("jparams", "E_tree", "r_tree", "mass", "com", "inertia", "armature")}
        inertia = reals["inertia"].reshape(nb, 6, 6)
        # h = m c and Ī from the spatial inertia [[Ī, h̃], [h̃ᵀ, m 1]]
        reals["h"] = np.ascontiguousarray(np.stack(
            [inertia[:, 2, 4], inertia[:, 0, 5], inertia[:, 1, 3]], axis=-1).reshape(nb, 3))
        reals["Ibar"] = np.ascontiguousarray(inertia[:, :3, :3])
        reals["mass"] = np.ascontiguousarray(inertia[:, 5, 5])
        self._arrays = [ints, reals]
        self._joint_names = [b.joint_name for b in model.bodies]
        self.quat_tol = QUATERNION_TOLERANCE

        self.m.nb = nb
        self.m.nq = model.nq
        self.m.nv = model.nv
        self.m.parent = <const int64_t*>cnp.PyArray_DATA(ints["parent"])
        self.m.jtype = <const int64_t*>cnp.PyArray_DATA(ints["jtype"])
        self.m.q_start = <const int64_t*>cnp.PyArray_DATA(ints["q_start"])
        self.m.v_start = <const int64_t*>cnp.PyArray_DATA(ints["v_start"])
        self.m.nq_j = <const int64_t*>cnp.PyArray_DATA(ints["nq_j"])
        self.m.nv_j = <const int64_t*>cnp.PyArray_DATA(ints["nv_j"])
        self.m.dof_parent = <const int64_t*>cnp.PyArray_DATA(ints["dof_parent"])
        self.m.dof_path = <const int64_t*>cnp.PyArray_DATA(ints["dof_path"])
        self.m.dof_path_start = <const int64_t*>cnp.PyArray_DATA(ints["dof_path_start"])
        self.m.dof_depths = model.nv + len(ints["dof_path"])      # Σ_k d_k, k included
        self.m.col_slot = <const int64_t*>cnp.PyArray_DATA(ints["col_slot"])
        self.m.col_last = <const int64_t*>cnp.PyArray_DATA(ints["col_last"])
        self.m.jparams = <const double*>cnp.PyArray_DATA(reals["jparams"])
        self.m.E_tree = <const double*>cnp.PyArray_DATA(reals["E_tree"])
        self.m.r_tree = <const double*>cnp.PyArray_DATA(reals["r_tree"])
        self.m.mass = <const double*>cnp.PyArray_DATA(reals["mass"])
        self.m.com = <const double*>cnp.PyArray_DATA(reals["com"])
        self.m.h = <const double*>cnp.PyArray_DATA(reals["h"])
        self.m.Ibar = <const double*>cnp.PyArray_DATA(reals["Ibar"])
        self.m.inertia = <const double*>cnp.PyArray_DATA(reals["inertia"])
        self.m.armature = <const double*>cnp.PyArray_DATA(reals["armature"])
        g = np.asarray(flat["gravity"], dtype=np.float64)
        for k in range(3):
            self.m.gravity[k] = g[k]
            # a_0 = [0; -g]
            self.m.a0[k] = 0.0
            self.m.a0[3 + k] = -g[k]
        self._compile_joints(model)

        self.data = Data(model, self.m.ncol_slots, terms=False)
        self._bind(&self.w0, self.data.buffer)
        self.w0_busy = False
        self.works_busy = False
        self.nworks = 0
        self._num_threads = max(1, openmp.omp_get_max_threads())

    def __dealloc__(self):
        free(self.works)
        free(self.jfun)
        free(self.quat_start)

    cdef int _compile_joints(self, model) except -1:
        # joint sizes, quaternion positions in q, generated C functions of symbolic joints
        cdef Py_ssize_t i, nb = self.m.nb
        cdef object capsule
        free(self.jfun)
        free(self.quat_start)
        self.jfun = <jcalc_fn*>malloc(max(nb, 1) * sizeof(jcalc_fn))
        self.quat_start = <Py_ssize_t*>malloc(max(nb, 1) * sizeof(Py_ssize_t))
        if self.jfun == NULL or self.quat_start == NULL:
            raise MemoryError()
        self.m.jfun = self.jfun
        self._capsules = []
        self._quat_names = []
        self.nquat = 0
        for i, body in enumerate(model.bodies):
            joint = body.joint
            self.jfun[i] = NULL
            if self.m.nv_j[i] > MAX_JOINT_NV:
                raise ModelError(f"joint {body.joint_name!r} has {self.m.nv_j[i]} degrees of "
                                 f"freedom; the kernels handle at most {MAX_JOINT_NV}")
            if self.m.jtype[i] == J_SPHERICAL or self.m.jtype[i] == J_FREE:
                self.quat_start[self.nquat] = (self.m.q_start[i]
                                               + (3 if self.m.jtype[i] == J_FREE else 0))
                self._quat_names.append(body.joint_name)
                self.nquat += 1
            elif self.m.jtype[i] == J_SYMBOLIC:
                make = getattr(joint, "kernel_capsule", None)
                why = "it has no kernel_capsule() method"
                capsule = None
                if make is not None:
                    try:
                        capsule = make()
                    except Exception as exc:
                        why = f"kernel_capsule() failed: {exc}"
                    else:
                        why = f"kernel_capsule() returned {type(capsule).__name__}"
                if capsule is None or not PyCapsule_IsValid(capsule, b"rbd.jcalc"):
                    raise ModelError(
                        f"symbolic joint {body.joint_name!r} has no compiled C function "
                        f"({why}; a PyCapsule named {JCALC_CAPSULE!r} is needed); "
                        f"use backend='reference' for this model"
                    )
                if self.m.nq_j[i] != self.m.nv_j[i]:
                    raise ModelError(f"symbolic joint {body.joint_name!r} must have nq == nv")
                self.jfun[i] = <jcalc_fn>PyCapsule_GetPointer(capsule, b"rbd.jcalc")
                self._capsules.append(capsule)
        return 0

    cdef int _bind(self, Work* w, cnp.ndarray buffer) except -1:
        # point the workspace's arrays into buffer at the offsets of rbd.data.Data
        cdef double* base = <double*>cnp.PyArray_DATA(buffer)
        off = {name: offset for name, (offset, _) in self.data.offsets.items()}
        w.E_up = base + <Py_ssize_t>off["E_up"]
        w.r_up = base + <Py_ssize_t>off["r_up"]
        w.S = base + <Py_ssize_t>off["S_cols"]
        w.c_J = base + <Py_ssize_t>off["c_J"]
        w.v = base + <Py_ssize_t>off["v"]
        w.a = base + <Py_ssize_t>off["a"]
        w.f = base + <Py_ssize_t>off["f"]
        w.c = base + <Py_ssize_t>off["c"]
        w.pA = base + <Py_ssize_t>off["pA"]
        w.IA = base + <Py_ssize_t>off["IA"]
        w.U = base + <Py_ssize_t>off["U_cols"]
        w.D = base + <Py_ssize_t>off["D"]
        w.D_inv = base + <Py_ssize_t>off["D_inv"]
        w.u = base + <Py_ssize_t>off["u"]
        w.m_C = base + <Py_ssize_t>off["m_C"]
        w.h_C = base + <Py_ssize_t>off["h_C"]
        w.I_C = base + <Py_ssize_t>off["I_C"]
        w.S0 = base + <Py_ssize_t>off["S0"]
        w.F0 = base + <Py_ssize_t>off["F0"]
        w.R = base + <Py_ssize_t>off["R"]
        w.p = base + <Py_ssize_t>off["p"]
        w.C = base + <Py_ssize_t>off["C"]
        w.F = base + <Py_ssize_t>off["F"]
        w.scratch = base + <Py_ssize_t>off["scratch"]
        w.J = base + <Py_ssize_t>off["J"]
        w.dVdq = base + <Py_ssize_t>off["dVdq"]
        w.dAdq = base + <Py_ssize_t>off["dAdq"]
        w.dAdv = base + <Py_ssize_t>off["dAdv"]
        w.B_C = base + <Py_ssize_t>off["B_C"]
        w.qdd = base + <Py_ssize_t>off["qdd"]
        w.status = 0
        return 0

    cdef int _allocate_works(self, int nt) except -1:
        # the per-thread workspaces of a batch (kept for the next one)
        cdef int t
        free(self.works)
        self.works = NULL
        self.nworks = 0
        self._works_buffer = thread_rows(nt, self.data.size, True)
        self.works = <Work*>malloc(nt * sizeof(Work))
        if self.works == NULL:
            raise MemoryError()
        for t in range(nt):
            self._bind(&self.works[t], self._works_buffer[t])
        self.nworks = nt
        return 0

    # --- properties --------------------------------------------------------------------------
    @property
    def nq(self) -> int:
        return self.m.nq

    @property
    def nv(self) -> int:
        return self.m.nv

    @property
    def nbodies(self) -> int:
        return self.m.nb

    @property
    def num_threads(self) -> int:
        """Threads used for a batch (default: OpenMP's maximum)."""
        return self._num_threads

    @num_threads.setter
    def num_threads(self, value):
        value = int(value)
        if value < 1:
            raise InputError(f"num_threads must be at least 1, got {value}")
        self._num_threads = value

    def __repr__(self):
        return (f"<rbd {type(self).__name__}: {self.m.nb} bodies, nq={self.m.nq}, nv={self.m.nv}, "
                f"{self._num_threads} threads>")

    # --- arguments of the compiled entry points (_model.pyx) ------------------------------------------------------------------
    cdef int _join(self, Call* c, Py_ssize_t n, str name) except -1:
        # the batch size shared by every argument
        if n >= 0:
            if c.N >= 0 and n != c.N:
                raise InputError(f"{name} has batch size {n}, other arguments have {c.N}")
            c.N = n
        return 0

    cdef tuple _arg_q(self, object q, Call* c):
        # q of one state: checked here; of a batch: its values checked block by block in the
        # batch's threads (c.pending, check_rows), quaternions normalized into a copy
        # (never the caller's q; the lanes take q as given, _model.pyx _run_lanes).  The
        # arrays to keep alive.
        cdef cnp.ndarray arr = as_array(q, "q")
        cdef Py_ssize_t n = batch_of(arr, 1, self.m.nq, 0, "q")
        cdef cnp.ndarray used = arr
        cdef Pending* p = &c.pending
        cdef int s
        for s in range(4):
            p.src[s] = NULL
        p.active, p.failed, p.q_out = False, 0, NULL
        p.width[0], p.width[1], p.width[2] = self.m.nq, self.m.nv, self.m.nv
        p.width[3] = 6 * self.m.nb
        p.quat_start, p.nquat, p.quat_tol = self.quat_start, self.nquat, self.quat_tol
        c.name[0] = <PyObject*>"q"
        if n < 0:
            check_finite(arr, "q")
            if self.nquat and self._check_quaternions(<const double*>cnp.PyArray_DATA(arr), 1):
                used = cnp.PyArray_NewCopy(arr, cnp.NPY_CORDER)
                self._normalize_quaternions(<double*>cnp.PyArray_DATA(used), 1)
        else:
            p.active = True
            p.src[0] = <const double*>cnp.PyArray_DATA(arr)
            if self.nquat:
                used = cnp.PyArray_EMPTY(2, cnp.PyArray_DIMS(arr), cnp.NPY_DOUBLE, 0)
                p.q_out = <double*>cnp.PyArray_DATA(used)
        c.N = n
        c.x[0] = <const double*>cnp.PyArray_DATA(used)
        c.stride[0] = 0 if n < 0 else self.m.nq
        c.x[1] = c.x[2] = c.x[3] = NULL
        return (arr, used)

    cdef cnp.ndarray _arg_v(self, object v, str name, int slot, Call* c):
        cdef cnp.ndarray arr = as_array(v, name)
        cdef Py_ssize_t n = batch_of(arr, 1, self.m.nv, 0, name)
        self._defer(c, arr, n, name, slot)
        self._join(c, n, name)
        c.x[slot] = <const double*>cnp.PyArray_DATA(arr)
        c.stride[slot] = 0 if n < 0 else self.m.nv
        return arr

    cdef object _arg_f(self, object f_ext, Call* c):
        if f_ext is None:
            c.x[3] = NULL
            return None
        cdef cnp.ndarray arr = as_array(f_ext, "f_ext")
        cdef Py_ssize_t n = batch_of(arr, 2, self.m.nb, 6, "f_ext")
        self._defer(c, arr, n, "f_ext", 3)
        self._join(c, n, "f_ext")
        c.x[3] = <const double*>cnp.PyArray_DATA(arr)
        c.stride[3] = 0 if n < 0 else 6 * self.m.nb
        return arr

    cdef int _defer(self, Call* c, cnp.ndarray arr, Py_ssize_t n, str name, int slot) except -1:
        # the finite check of an input: with the batch's (c.pending) when it is a batch of
        # q's size, else here
        c.name[slot] = <PyObject*>name
        if n >= 0 and n == c.N and c.pending.active:
            c.pending.src[slot] = <const double*>cnp.PyArray_DATA(arr)
        else:
            check_finite(arr, name)
        return 0

    cdef list _inputs(self, Call* c, object q, object x1, str name1, object x2, str name2,
                      object f_ext):
        # q, x1 (slot 1, when named), x2 (slot 2, when named), f_ext, in this order; an error of
        # a later argument comes after the value errors of the earlier ones, as when each
        # argument is checked whole before the next (_settle)
        held = [self._arg_q(q, c)]
        try:
            if name1 is not None:
                held.append(self._arg_v(x1, name1, 1, c))
            if name2 is not None:
                held.append(self._arg_v(x2, name2, 2, c))
            held.append(self._arg_f(f_ext, c))
        except InputError:
            self._settle(c)
            raise
        return held

    cdef int _settle(self, Call* c) except -1:
        # the pending checks over the whole batch, argument by argument (the first failure
        # raised with the message of a single state's check), then q's normalized copy
        cdef Pending* p = &c.pending
        cdef Py_ssize_t s
        if not p.active:
            return 0
        for s in range(4):
            if p.src[s] != NULL and not all_finite(p.src[s], c.N * p.width[s]):
                raise_non_finite(<str>c.name[s])
            if s == 0 and self.nquat:
                self._check_quaternions(p.src[0], c.N)
        check_rows(p, 0, c.N)
        p.active = False
        return 0

    # --- unit quaternions and failures ------------------------------------------------------
    cdef int _check_quaternions(self, const double* q, Py_ssize_t N) except -1:
        # InputError on a norm off by more than the tolerance; 1 when some norm is not
        # exactly 1 (the caller normalizes a copy), else 0
        cdef Py_ssize_t k, j
        cdef const double* quat
        cdef double norm
        cdef int off = 0
        for k in range(N):
            for j in range(self.nquat):
                quat = q + k * self.m.nq + self.quat_start[j]
                # |quat| = sqrt(x² + y² + z² + w²)
                norm = sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2]
                            + quat[3] * quat[3])
                if fabs(norm - 1.0) > self.quat_tol:
                    start = self.quat_start[j]
                    raise InputError(
                        f"q: the quaternion of joint {self._quat_names[j]!r} "
                        f"(q[{start}:{start + 4}]) has norm {norm:.9g}, not 1"
                    )
                if norm != 1.0:
                    off = 1
        return off

    cdef void _normalize_quaternions(self, double* q, Py_ssize_t N) noexcept:
        cdef Py_ssize_t k, j, l
        cdef double* quat
        cdef double norm
        for k in range(N):
            for j in range(self.nquat):
                quat = q + k * self.m.nq + self.quat_start[j]
                # quat = quat / |quat|
                norm = sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2]
                            + quat[3] * quat[3])
                for l in range(4):
                    quat[l] = quat[l] / norm

    cdef int _raise_status(self, int status) except -1:
        raise singular_pivot(self._joint_names[status - 1])
