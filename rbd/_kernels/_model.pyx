# cython: language_level=3
"""The compiled twin of a :class:`rbd.Model`: flat typed arrays, a workspace, validation.

This module is the dispatch and validation layer of the kernels, not a
derivation: it has no reference twin in ``rbd/reference/`` (the reference
path validates in :mod:`rbd.algorithms`, with the same conversions and
tolerance from :mod:`rbd._validation`).  It imports nothing from the Python
layer above it (only :mod:`rbd.data`, :mod:`rbd.errors` and
:mod:`rbd._validation`).

``CompiledModel(model)`` copies ``model.flat_arrays()`` into the C record
``ModelC`` (see ``_model.pxd``) and allocates a workspace (an
:class:`rbd.data.Data`).  Its methods are the compiled entry points behind
``rbd.rnea``, ``rbd.crba``, ``rbd.aba``, ...: each one checks its arguments in
compiled code (shape, finiteness, unit quaternions - normalized on a copy when
within the tolerance - agreeing batch sizes;
:class:`rbd.InputError` naming the argument otherwise), then runs the kernel of
``rnea.pyx``, ``crba.pyx``, ``aba.pyx`` (also with Pai's modified pivot,
the kernel behind ``block_elimination.pyx``), ``kinematics.pyx``,
``ploen.pyx`` (Si–Guenter recursion) or ``derivatives.pyx`` (analytical
derivatives).  ``CompiledModel.rollout`` runs whole fixed-step simulations
(``rollout.pyx``), one or a batch.

* A single state (``q`` of shape ``(nq,)``) runs in the model's own workspace
  with the GIL held; ``CompiledModel.data`` then shows its intermediate
  quantities.
* A batch (a leading axis ``N`` on any argument; the others are shared by
  every state) runs with the GIL released, ``prange`` over the states, one
  workspace per thread.  ``N = 0`` gives an empty result of shape ``(0, ...)``.

C-contiguous float64 arrays are used in place; anything else is converted
once.  Inputs are never written to.
"""

cimport numpy as cnp
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from cython.parallel cimport prange, threadid
from libc.math cimport fabs, isfinite, sqrt
from libc.stdlib cimport free, malloc

cimport openmp

from rbd._kernels cimport aba as _aba
from rbd._kernels cimport crba as _crba
from rbd._kernels cimport derivatives as _deriv
from rbd._kernels cimport kinematics as _kin
from rbd._kernels cimport ploen as _ploen
from rbd._kernels cimport rnea as _rnea
from rbd._kernels cimport rollout as _rollout
from libc.stdint cimport int64_t

# ModelC, Work, jcalc_fn and the joint codes come from _model.pxd (included automatically).

import os

import numpy as np

from rbd._validation import QUATERNION_TOLERANCE, as_real_array, as_time_step
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

__all__ = ["CompiledModel", "compiled_model", "column_slots"]

#: Name of the PyCapsule that carries a generated joint's C jcalc function.
JCALC_CAPSULE = "rbd.jcalc"


cdef enum Task:
    T_RNEA
    T_NONLINEAR
    T_GRAVITY
    T_CRBA
    T_ABA
    T_ABA_MODIFIED
    T_PLOEN
    T_MINV
    T_KINETIC
    T_POTENTIAL
    T_FK
    T_COM
    T_BODY_COM
    T_JACOBIAN
    T_INTEGRATE
    T_RNEA_DERIVATIVES
    T_ABA_DERIVATIVES


cdef struct Call:
    # One validated request: up to four inputs (q, x1, x2, f_ext), each with the number
    # of doubles between consecutive states (0 when shared by the whole batch).
    Task task
    const double* x[4]
    Py_ssize_t stride[4]
    Py_ssize_t N                  # batch size, -1 for a single state
    double* out
    Py_ssize_t out_stride
    Py_ssize_t body
    const double* point
    double dt


cdef inline int run_one(const ModelC* m, Work* w, const Call* c, Py_ssize_t k) noexcept nogil:
    # Run the task of c on state k in workspace w; returns the kernel's status.
    cdef const double* q = c.x[0] + k * c.stride[0]
    cdef const double* x1 = NULL
    cdef const double* x2 = NULL
    cdef const double* f = NULL
    cdef double* out = c.out + k * c.out_stride
    if c.x[1] != NULL:
        x1 = c.x[1] + k * c.stride[1]
    if c.x[2] != NULL:
        x2 = c.x[2] + k * c.stride[2]
    if c.x[3] != NULL:
        f = c.x[3] + k * c.stride[3]
    w.status = 0
    if c.task == T_RNEA or c.task == T_NONLINEAR or c.task == T_GRAVITY:
        _rnea.rnea(m, w, q, x1, x2, f, out)
    elif c.task == T_CRBA:
        _crba.crba(m, w, q, out)
    elif c.task == T_ABA:
        return _aba.aba(m, w, q, x1, x2, f, out, False)
    elif c.task == T_ABA_MODIFIED:
        return _aba.aba(m, w, q, x1, x2, f, out, True)
    elif c.task == T_PLOEN:
        return _ploen.c_forward_dynamics(m, w, q, x1, x2, f, out)
    elif c.task == T_MINV:
        return _aba.mass_matrix_inverse(m, w, q, out)
    elif c.task == T_KINETIC:
        out[0] = _kin.kinetic_energy(m, w, q, x1)
    elif c.task == T_POTENTIAL:
        out[0] = _kin.potential_energy(m, w, q)
    elif c.task == T_FK:
        _kin.forward_kinematics(m, w, q, out)
    elif c.task == T_COM:
        _kin.center_of_mass(m, w, q, out)
    elif c.task == T_BODY_COM:
        _kin.body_centers_of_mass(m, w, q, out)
    elif c.task == T_JACOBIAN:
        _kin.jacobian(m, w, q, c.body, c.point, out)
    elif c.task == T_INTEGRATE:
        _kin.integrate(m, q, x1, c.dt, out)
    elif c.task == T_RNEA_DERIVATIVES:
        return _deriv.rnea_derivatives(m, w, q, x1, x2, f, out)
    elif c.task == T_ABA_DERIVATIVES:
        return _deriv.aba_derivatives(m, w, q, x1, x2, f, out)
    return 0


# --- argument conversion -----------------------------------------------------------------

cdef inline bint _usable(object x):
    # a C-contiguous, aligned, native-endian float64 ndarray (used without a copy)
    return (type(x) is cnp.ndarray
            and cnp.PyArray_TYPE(<cnp.ndarray>x) == cnp.NPY_DOUBLE
            and cnp.PyArray_ISCARRAY_RO(<cnp.ndarray>x)
            and cnp.PyArray_ISNOTSWAPPED(<cnp.ndarray>x))


cdef cnp.ndarray _convert(object x, str name):
    # the conversion of the reference path (rbd._validation.as_real_array): one float64
    # C-contiguous array, complex values and out-of-range numbers refused with the same
    # messages on both backends
    return as_real_array(x, name)


cdef inline cnp.ndarray _as_array(object x, str name):
    if _usable(x):
        return <cnp.ndarray>x
    return _convert(x, name)


cdef int _check_finite(cnp.ndarray arr, str name) except -1:
    cdef const double* p = <const double*>cnp.PyArray_DATA(arr)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(arr), i
    for i in range(n):
        if not isfinite(p[i]):
            raise InputError(f"{name} has non-finite entries")
    return 0


cdef str _shape_text(tuple shape):
    return "(" + ", ".join([str(d) for d in shape]) + ("," if len(shape) == 1 else "") + ")"


cdef Py_ssize_t _batch_of(cnp.ndarray arr, int nd, Py_ssize_t d0, Py_ssize_t d1,
                          str name) except -2:
    # -1 for one state of shape (d0,) or (d0, d1); N for a batch (N, d0[, d1])
    cdef int ndim = cnp.PyArray_NDIM(arr)
    cdef cnp.npy_intp* dims = cnp.PyArray_DIMS(arr)
    if ndim == nd and dims[0] == d0 and (nd == 1 or dims[1] == d1):
        return -1
    if ndim == nd + 1 and dims[1] == d0 and (nd == 1 or dims[2] == d1):
        return dims[0]
    cdef tuple shape = (d0,)
    if nd == 2:
        shape = (d0, d1)
    raise InputError(
        f"{name} must have shape {_shape_text(shape)} or "
        f"(N, {', '.join([str(d) for d in shape])}), got {_shape_text((<object>arr).shape)}"
    )


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


cdef struct RolloutJob:
    # a batch of rollouts (CompiledModel.rollout): shared inputs, per-thread workspaces
    const ModelC* m
    const _rollout.Control* ctl
    const _rollout.Plan* plan
    Work* works
    Py_ssize_t tau_step           # doubles between the τ tables of consecutive rollouts
    const double* q0
    const double* v0
    double* scratch               # nthreads × nscratch
    Py_ssize_t nscratch
    Py_ssize_t rows               # samples per rollout
    double* out[6]                # q, v, a, τ (or NULL), kinetic, potential
    int* status


cdef inline void rollout_one(const RolloutJob* job, Py_ssize_t k, int t) noexcept nogil:
    # rollout k in the workspace of thread t; its status in job.status[k]
    cdef const ModelC* m = job.m
    cdef _rollout.Control ctl = job.ctl[0]
    cdef _rollout.Record rec
    cdef Py_ssize_t rows = job.rows, samples = 0
    if ctl.tau != NULL:
        ctl.tau = ctl.tau + k * job.tau_step
    rec.q = job.out[0] + k * rows * m.nq
    rec.v = job.out[1] + k * rows * m.nv
    rec.a = job.out[2] + k * rows * m.nv
    rec.tau = NULL if job.out[3] == NULL else job.out[3] + k * rows * m.nv
    rec.kinetic = job.out[4] + k * rows
    rec.potential = job.out[5] + k * rows
    job.status[k] = _rollout.rollout(m, &job.works[t], &ctl, job.plan, job.q0 + k * m.nq,
                                     job.v0 + k * m.nv, job.scratch + t * job.nscratch,
                                     &rec, &samples)
    if job.status[k] == 0 and samples != rows:
        job.status[k] = -1


cdef class CompiledModel:
    """The compiled twin of an :class:`rbd.Model` (see the module docstring).

    Parameters
    ----------
    model : Model
        Compiled once; build a new ``CompiledModel`` after changing the model
        (``rbd.algorithms.compiled`` caches one per model and rebuilds it).

    Raises
    ------
    ModelError
        When a joint has more than six degrees of freedom, or a symbolic joint
        has no compiled C function (``joint.kernel_capsule()``).
    """

    cdef ModelC m
    cdef Work w0
    cdef bint w0_busy
    cdef Work* works
    cdef int nworks
    cdef bint works_busy
    cdef object _works_buffer
    cdef object _arrays
    cdef object _capsules
    cdef jcalc_fn* jfun
    cdef Py_ssize_t* quat_start
    cdef Py_ssize_t nquat
    cdef double quat_tol
    cdef object _quat_names
    cdef object _joint_names
    cdef readonly object data
    cdef int _num_threads

    def __cinit__(self):
        self.works = NULL
        self.jfun = NULL
        self.quat_start = NULL

    def __init__(self, model):
        if not _is_model(model):
            raise ModelError(f"CompiledModel needs an rbd.Model, got {type(model).__name__}")
        flat = model.flat_arrays()
        nb = model.nbodies
        ints = {k: np.array(flat[k], dtype=np.int64) for k in
                ("parent", "jtype", "q_start", "v_start", "nq_j", "nv_j")}
        ints["col_slot"], ints["col_last"], self.m.ncol_slots = column_slots(ints["parent"])
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

        self.data = Data(model, self.m.ncol_slots)
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
        w.v_J = base + <Py_ssize_t>off["v_J"]
        w.dv = base + <Py_ssize_t>off["dv"]
        w.da = base + <Py_ssize_t>off["da"]
        w.df = base + <Py_ssize_t>off["df"]
        w.inside = base + <Py_ssize_t>off["inside"]
        w.qdd = base + <Py_ssize_t>off["qdd"]
        w.col = base + <Py_ssize_t>off["col"]
        w.status = 0
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
        return (f"<rbd CompiledModel: {self.m.nb} bodies, nq={self.m.nq}, nv={self.m.nv}, "
                f"{self._num_threads} threads>")

    # --- argument checks ------------------------------------------------------------------
    cdef int _join(self, Call* c, Py_ssize_t n, str name) except -1:
        # the batch size shared by every argument
        if n >= 0:
            if c.N >= 0 and n != c.N:
                raise InputError(f"{name} has batch size {n}, other arguments have {c.N}")
            c.N = n
        return 0

    cdef cnp.ndarray _arg_q(self, object q, Call* c):
        cdef cnp.ndarray arr = _as_array(q, "q")
        cdef Py_ssize_t n = _batch_of(arr, 1, self.m.nq, 0, "q")
        _check_finite(arr, "q")
        if self.nquat and self._check_quaternions(<const double*>cnp.PyArray_DATA(arr),
                                                  1 if n < 0 else n):
            # a norm within the tolerance but not 1: normalize a copy (never the caller's q)
            arr = cnp.PyArray_NewCopy(arr, cnp.NPY_CORDER)
            self._normalize_quaternions(<double*>cnp.PyArray_DATA(arr), 1 if n < 0 else n)
        c.N = n
        c.x[0] = <const double*>cnp.PyArray_DATA(arr)
        c.stride[0] = 0 if n < 0 else self.m.nq
        c.x[1] = NULL
        c.x[2] = NULL
        c.x[3] = NULL
        return arr

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

    cdef cnp.ndarray _arg_v(self, object v, str name, int slot, Call* c):
        cdef cnp.ndarray arr = _as_array(v, name)
        cdef Py_ssize_t n = _batch_of(arr, 1, self.m.nv, 0, name)
        _check_finite(arr, name)
        self._join(c, n, name)
        c.x[slot] = <const double*>cnp.PyArray_DATA(arr)
        c.stride[slot] = 0 if n < 0 else self.m.nv
        return arr

    cdef object _arg_f(self, object f_ext, Call* c):
        if f_ext is None:
            c.x[3] = NULL
            return None
        cdef cnp.ndarray arr = _as_array(f_ext, "f_ext")
        cdef Py_ssize_t n = _batch_of(arr, 2, self.m.nb, 6, "f_ext")
        _check_finite(arr, "f_ext")
        self._join(c, n, "f_ext")
        c.x[3] = <const double*>cnp.PyArray_DATA(arr)
        c.stride[3] = 0 if n < 0 else 6 * self.m.nb
        return arr

    # --- running ----------------------------------------------------------------------------
    cdef object _run(self, Call* c, int nd, Py_ssize_t d0, Py_ssize_t d1, Py_ssize_t d2):
        # allocate the result (shape (d0[, d1[, d2]]) per state, a float when nd == 0)
        # and run the task on every state
        cdef cnp.npy_intp dims[4]
        cdef int k = 0
        cdef double scalar = 0.0
        cdef cnp.ndarray out
        if c.N >= 0:
            dims[0] = c.N
            k = 1
        if nd >= 1:
            dims[k] = d0
        if nd >= 2:
            dims[k + 1] = d1
        if nd >= 3:
            dims[k + 2] = d2
        c.out_stride = (d0 if nd >= 1 else 1) * (d1 if nd >= 2 else 1) * (d2 if nd >= 3 else 1)
        if c.N < 0:
            if nd == 0:
                c.out = &scalar
                self._run_single(c)
                return scalar
            out = cnp.PyArray_EMPTY(nd, dims, cnp.NPY_DOUBLE, 0)
            c.out = <double*>cnp.PyArray_DATA(out)
            self._run_single(c)
            return out
        out = cnp.PyArray_EMPTY(nd + 1, dims, cnp.NPY_DOUBLE, 0)
        c.out = <double*>cnp.PyArray_DATA(out)
        if c.N > 0:
            self._run_batch(c)
        return out

    cdef int _run_single(self, Call* c) except -1:
        # one state, GIL held: in the model's workspace (shown by .data), or in a fresh one
        # when that is in use (a generated joint function that runs Python code)
        cdef int status
        cdef Work w
        if not self.w0_busy:
            self.w0_busy = True
            try:
                status = run_one(&self.m, &self.w0, c, 0)
            finally:
                self.w0_busy = False
        else:
            buffer = np.zeros(self.data.size)
            self._bind(&w, buffer)
            status = run_one(&self.m, &w, c, 0)
        if status:
            self._raise_status(status)
        return 0

    cdef int _run_batch(self, Call* c) except -1:
        # a batch, GIL released: prange over the states, one workspace per thread
        global _omp_started
        cdef int nt = self._num_threads, t
        cdef Py_ssize_t k, N = c.N, chunk
        cdef Work* works
        cdef const ModelC* m = &self.m
        cdef bint own = False
        cdef int status = 0
        buffer = None
        if nt > N:
            nt = <int>N
        chunk = max(1, N // (16 * nt))
        if _omp_unusable:
            # a child forked after this process ran a parallel batch: the OpenMP
            # thread pool did not survive the fork, so the child runs serially
            nt = 1
        if not self.works_busy:
            # claimed before anything that may release the GIL (the allocation below
            # calls into NumPy), so no other thread can free or rebind these workspaces
            self.works_busy = True
            try:
                if self.nworks < nt:
                    self._allocate_works(nt)
            except BaseException:
                self.works_busy = False
                raise
            works = self.works
        else:
            # another thread is running a batch on this model: private workspaces
            own = True
            works = <Work*>malloc(nt * sizeof(Work))
            if works == NULL:
                raise MemoryError()
            buffer = np.zeros((nt, self.data.size))
            for t in range(nt):
                self._bind(&works[t], buffer[t])
        if nt > 1:
            _omp_started = True
        try:
            with nogil:
                if nt == 1:
                    for k in range(N):
                        works[0].status = run_one(m, &works[0], c, k)
                        if works[0].status:
                            break
                else:
                    for t in range(nt):
                        works[t].status = 0
                    # dynamic chunks keep both threads busy on a machine shared with others
                    for k in prange(N, num_threads=nt, schedule="dynamic", chunksize=chunk):
                        if works[threadid()].status == 0:
                            works[threadid()].status = run_one(m, &works[threadid()], c, k)
            for t in range(nt):
                if works[t].status:
                    status = works[t].status
        finally:
            if own:
                free(works)
            else:
                self.works_busy = False
        if status:
            self._raise_status(status)
        return 0

    cdef int _allocate_works(self, int nt) except -1:
        cdef int t
        free(self.works)
        self.works = NULL
        self.nworks = 0
        self._works_buffer = np.zeros((nt, self.data.size))
        self.works = <Work*>malloc(nt * sizeof(Work))
        if self.works == NULL:
            raise MemoryError()
        for t in range(nt):
            self._bind(&self.works[t], self._works_buffer[t])
        self.nworks = nt
        return 0

    cdef int _raise_status(self, int status) except -1:
        name = self._joint_names[status - 1]
        raise ModelError(
            f"forward dynamics is undefined: the articulated inertia D of joint {name!r} "
            f"is not positive definite (the joint moves no inertia)"
        )

    # --- dynamics -------------------------------------------------------------------------
    def rnea(self, q, v, a, f_ext=None):
        """Inverse dynamics ``tau`` (RBDA Table 5.1); see :func:`rbd.rnea`."""
        cdef Call c
        q = self._arg_q(q, &c)
        v = self._arg_v(v, "v", 1, &c)
        a = self._arg_v(a, "a", 2, &c)
        f_ext = self._arg_f(f_ext, &c)
        c.task = T_RNEA
        return self._run(&c, 1, self.m.nv, 0, 0)

    def nonlinear_effects(self, q, v):
        """Bias forces ``h = C(q, v) v + g(q)``: RNEA at zero acceleration."""
        cdef Call c
        q = self._arg_q(q, &c)
        v = self._arg_v(v, "v", 1, &c)
        c.task = T_NONLINEAR
        return self._run(&c, 1, self.m.nv, 0, 0)

    def gravity_forces(self, q):
        """Generalized gravity ``g(q)``: RNEA at zero velocity and acceleration."""
        cdef Call c
        q = self._arg_q(q, &c)
        c.task = T_GRAVITY
        return self._run(&c, 1, self.m.nv, 0, 0)

    def crba(self, q):
        """Joint-space inertia ``M(q)``, full and symmetric (RBDA Table 6.2)."""
        cdef Call c
        q = self._arg_q(q, &c)
        c.task = T_CRBA
        return self._run(&c, 2, self.m.nv, self.m.nv, 0)

    def aba(self, q, v, tau, f_ext=None):
        """Forward dynamics ``qdd`` (RBDA Table 7.1); see :func:`rbd.aba`."""
        cdef Call c
        q = self._arg_q(q, &c)
        v = self._arg_v(v, "v", 1, &c)
        tau = self._arg_v(tau, "tau", 2, &c)
        f_ext = self._arg_f(f_ext, &c)
        c.task = T_ABA
        return self._run(&c, 1, self.m.nv, 0, 0)

    def aba_modified(self, q, v, tau, f_ext=None):
        """Forward dynamics with Pai, Ascher & Kry's modified pivot (their §7).

        The kernel of ``block_elimination.pyx``; arguments, batches and errors
        as for :meth:`aba`.
        """
        cdef Call c
        q = self._arg_q(q, &c)
        v = self._arg_v(v, "v", 1, &c)
        tau = self._arg_v(tau, "tau", 2, &c)
        f_ext = self._arg_f(f_ext, &c)
        c.task = T_ABA_MODIFIED
        return self._run(&c, 1, self.m.nv, 0, 0)

    def forward_dynamics_ploen(self, q, v, tau, f_ext=None):
        """Forward dynamics by Si & Guenter's O(n) recursion (their Eqs. 18–35).

        The kernel of ``ploen.pyx``; arguments, batches and errors as for
        :meth:`aba` (a singular pivot ``Ω_k`` is reported as ``D`` of joint k).
        """
        cdef Call c
        q = self._arg_q(q, &c)
        v = self._arg_v(v, "v", 1, &c)
        tau = self._arg_v(tau, "tau", 2, &c)
        f_ext = self._arg_f(f_ext, &c)
        c.task = T_PLOEN
        return self._run(&c, 1, self.m.nv, 0, 0)

    def mass_matrix_inverse(self, q):
        """``M(q)⁻¹`` by the ABA-based factorization (Si & Guenter, Appendix B, Eq. 58)."""
        cdef Call c
        q = self._arg_q(q, &c)
        c.task = T_MINV
        return self._run(&c, 2, self.m.nv, self.m.nv, 0)

    # --- derivatives ----------------------------------------------------------------------
    cdef int _check_differentiable(self) except -1:
        # the derivative kernels know the joint types of rbd.joints, not generated joints
        cdef Py_ssize_t i
        for i in range(self.m.nb):
            if self.m.jtype[i] == J_SYMBOLIC:
                raise ModelError(
                    f"joint {self._joint_names[i]!r}: the analytical derivatives handle the "
                    "joint kinds fixed, revolute, prismatic, helical, universal, spherical, "
                    "free, planar, not 'symbolic'; differentiate such a model by finite "
                    "differences of rbd.rnea / rbd.aba")
        return 0

    cdef tuple _split3(self, object out, Py_ssize_t N):
        # three (nv, nv) blocks of one result array, as views
        if N < 0:
            return (out[0], out[1], out[2])
        return (out[:, 0], out[:, 1], out[:, 2])

    def rnea_derivatives(self, q, v, a, f_ext=None):
        """``(∂τ/∂q, ∂τ/∂v, ∂τ/∂a)``; see :func:`rbd.rnea_derivatives`."""
        cdef Call c
        self._check_differentiable()
        q = self._arg_q(q, &c)
        v = self._arg_v(v, "v", 1, &c)
        a = self._arg_v(a, "a", 2, &c)
        f_ext = self._arg_f(f_ext, &c)
        c.task = T_RNEA_DERIVATIVES
        return self._split3(self._run(&c, 3, 3, self.m.nv, self.m.nv), c.N)

    def aba_derivatives(self, q, v, tau, f_ext=None):
        """``(∂q̈/∂q, ∂q̈/∂v, ∂q̈/∂τ)``; see :func:`rbd.aba_derivatives`."""
        cdef Call c
        self._check_differentiable()
        q = self._arg_q(q, &c)
        v = self._arg_v(v, "v", 1, &c)
        tau = self._arg_v(tau, "tau", 2, &c)
        f_ext = self._arg_f(f_ext, &c)
        c.task = T_ABA_DERIVATIVES
        return self._split3(self._run(&c, 3, 3, self.m.nv, self.m.nv), c.N)

    # --- kinematics and energy --------------------------------------------------------------
    def kinetic_energy(self, q, v):
        """``T = ½ Σ v_iᵀ I_i v_i`` (a float, or ``(N,)``)."""
        cdef Call c
        q = self._arg_q(q, &c)
        v = self._arg_v(v, "v", 1, &c)
        c.task = T_KINETIC
        return self._run(&c, 0, 0, 0, 0)

    def potential_energy(self, q):
        """``U = -Σ m_i gᵀ c_i`` (a float, or ``(N,)``)."""
        cdef Call c
        q = self._arg_q(q, &c)
        c.task = T_POTENTIAL
        return self._run(&c, 0, 0, 0, 0)

    def forward_kinematics(self, q):
        """World poses of the body frames, ``(nbodies, 4, 4)``."""
        cdef Call c
        q = self._arg_q(q, &c)
        c.task = T_FK
        return self._run(&c, 3, self.m.nb, 4, 4)

    def center_of_mass(self, q):
        """The system's centre of mass, world coordinates, ``(3,)``."""
        cdef Call c
        q = self._arg_q(q, &c)
        c.task = T_COM
        return self._run(&c, 1, 3, 0, 0)

    def body_centers_of_mass(self, q):
        """Each body's centre of mass, world coordinates, ``(nbodies, 3)``."""
        cdef Call c
        q = self._arg_q(q, &c)
        c.task = T_BODY_COM
        return self._run(&c, 2, self.m.nb, 3, 0)

    def jacobian(self, q, body, point=None):
        """World-aligned ``[ω; v]`` Jacobian ``(6, nv)`` of ``point`` (body frame) on ``body``."""
        cdef Call c
        cdef cnp.ndarray p
        q = self._arg_q(q, &c)
        if isinstance(body, bool) or not isinstance(body, (int, np.integer)):
            raise InputError(f"body must be a body index, got {body!r}")
        if not 0 <= body < self.m.nb:
            raise InputError(f"body index {body} out of range (model has {self.m.nb} bodies)")
        if point is None:
            p = np.zeros(3)
        else:
            p = _as_array(point, "point")
            if cnp.PyArray_NDIM(p) != 1 or cnp.PyArray_DIMS(p)[0] != 3:
                raise InputError(
                    f"point must have shape (3,), got {_shape_text((<object>p).shape)}")
            _check_finite(p, "point")
        c.body = body
        c.point = <const double*>cnp.PyArray_DATA(p)
        c.task = T_JACOBIAN
        return self._run(&c, 2, 6, self.m.nv, 0)

    def integrate(self, q, v, dt=1.0):
        """``q ⊕ v dt`` on each joint's manifold (quaternions: ``q ⊗ exp(ω dt)``)."""
        cdef Call c
        c.dt = as_time_step(dt)
        q = self._arg_q(q, &c)
        v = self._arg_v(v, "v", 1, &c)
        c.task = T_INTEGRATE
        return self._run(&c, 1, self.m.nq, 0, 0)

    # --- rollouts ---------------------------------------------------------------------------
    def rollout(self, q0, v0, times, bint rk4=True, Py_ssize_t stride=1, tau=None,
                f_ext=None, q_ref=None, kp=None, kd=None, damping=None,
                bint keep_tau=False, num_threads=None):
        """Fixed-step simulations from ``(q0, v0)`` over the grid ``times`` (``rollout.pyx``).

        ``q0`` of shape ``(nq,)`` runs one rollout, ``(N, nq)`` (with ``v0`` of
        shape ``(N, nv)``) N rollouts in threads, ``prange`` over the rollouts, one
        workspace per thread (serially in a child forked after a parallel batch).
        The joint force is ``τ = tau[k] + kp (q_ref ⊖ q) - kd v - damping v``:
        ``tau`` is ``(nv,)`` (constant), ``(n_steps, nv)`` (one row a step) or
        ``(N, n_steps, nv)`` (one table a rollout); ``q_ref``, ``kp``, ``kd`` come
        together.  Samples: every ``stride``-th step and the last one.

        Returns
        -------
        tuple
            ``(q, v, a, tau, kinetic, potential, status)``: the samples (a leading
            ``N`` axis for a batch; ``tau`` is None unless ``keep_tau``), and per
            rollout 0 or -1 when it diverged (its samples are then incomplete).

        Raises
        ------
        InputError
            On a bad argument, named.
        ModelError
            When the forward dynamics is undefined (see :meth:`aba`).
        """
        cdef _rollout.Control ctl
        cdef _rollout.Plan plan
        cdef Py_ssize_t tau_step = 0
        cdef Py_ssize_t N
        keep = []
        q0, v0, N = self._rollout_states(q0, v0)
        keep.append(self._rollout_plan(times, rk4, stride, &plan))
        tau_step, tau_arr = self._rollout_tau(tau, N, plan.n_steps, &ctl)
        keep.append(self._rollout_law(q_ref, kp, kd, damping, f_ext, &ctl))
        rows = plan.n_steps // stride + 1 + (1 if plan.n_steps % stride else 0)
        lead = () if N < 0 else (N,)
        out = [np.empty(lead + (rows, d)) for d in (self.m.nq, self.m.nv, self.m.nv)]
        out.append(np.empty(lead + (rows, self.m.nv)) if keep_tau else None)
        out += [np.empty(lead + (rows,)), np.empty(lead + (rows,))]
        status = np.zeros(max(N, 1), dtype=np.intc)
        nt = self._num_threads if num_threads is None else int(num_threads)
        if nt < 1:
            raise InputError(f"num_threads must be at least 1, got {num_threads!r}")
        self._rollouts(&ctl, &plan, q0, v0, tau_step, out, rows, status, min(nt, max(N, 1)))
        bad = status[status > 0]
        if bad.size:
            self._raise_status(int(bad[0]))
        return (*out, int(status[0]) if N < 0 else status)

    cdef tuple _rollout_states(self, object q0, object v0):
        # q0 (with its quaternions checked, normalized on a copy) and v0, one state or N
        cdef cnp.ndarray q = _as_array(q0, "q0")
        cdef cnp.ndarray v = _as_array(v0, "v0")
        cdef Py_ssize_t N = _batch_of(q, 1, self.m.nq, 0, "q0")
        if _batch_of(v, 1, self.m.nv, 0, "v0") != N:
            want = (<object>q).shape[:1] + (self.m.nv,) if N >= 0 else (self.m.nv,)
            raise InputError(f"v0 must have shape {_shape_text(want)} to match q0, got "
                             f"{_shape_text((<object>v).shape)}")
        _check_finite(q, "q0")
        _check_finite(v, "v0")
        if self.nquat and self._check_quaternions(<const double*>cnp.PyArray_DATA(q),
                                                  1 if N < 0 else N):
            q = cnp.PyArray_NewCopy(q, cnp.NPY_CORDER)
            self._normalize_quaternions(<double*>cnp.PyArray_DATA(q), 1 if N < 0 else N)
        return q, v, N

    cdef object _rollout_plan(self, object times, bint rk4, Py_ssize_t stride,
                              _rollout.Plan* plan):
        # the grid t_0 ≤ t_1 ≤ ... (one step between consecutive times), the method, the stride
        cdef cnp.ndarray t = _as_array(times, "times")
        cdef Py_ssize_t i
        if cnp.PyArray_NDIM(t) != 1 or cnp.PyArray_DIMS(t)[0] < 1:
            raise InputError(f"times must be a non-empty 1-D array, got shape "
                             f"{_shape_text((<object>t).shape)}")
        _check_finite(t, "times")
        if np.any(np.diff(t) < 0):
            raise InputError("times must be non-decreasing")
        if stride < 1:
            raise InputError(f"stride must be a positive integer, got {stride}")
        plan.t = <const double*>cnp.PyArray_DATA(t)
        plan.n_steps = cnp.PyArray_DIMS(t)[0] - 1
        plan.stride = stride
        plan.rk4 = rk4
        plan.curved = False
        for i in range(self.m.nb):
            if self.m.jtype[i] == J_SPHERICAL or self.m.jtype[i] == J_FREE:
                plan.curved = True
        return t

    cdef tuple _rollout_tau(self, object tau, Py_ssize_t N, Py_ssize_t n_steps,
                            _rollout.Control* ctl):
        # τ_ff: None, (nv,), (n_steps, nv) or (N, n_steps, nv); returns (rollout stride, array)
        cdef cnp.ndarray arr
        cdef tuple want
        ctl.tau = NULL
        ctl.tau_rows = 0
        if tau is None:
            return 0, None
        arr = _as_array(tau, "tau")
        shape = (<object>arr).shape
        nv = self.m.nv
        if shape == (nv,):
            ctl.tau_rows = 1
        elif shape == (n_steps, nv) or (N >= 0 and shape == (N, n_steps, nv)):
            ctl.tau_rows = n_steps
        else:
            want = "(nv,) = " + _shape_text((nv,)) + f" or (steps, nv) = ({n_steps}, {nv})"
            if N >= 0:
                want = want + f" or (N, steps, nv) = ({N}, {n_steps}, {nv})"
            raise InputError(f"tau must have shape {want}, got {_shape_text(shape)}")
        _check_finite(arr, "tau")
        ctl.tau = <const double*>cnp.PyArray_DATA(arr)
        return (n_steps * nv if len(shape) == 3 else 0), arr

    cdef list _rollout_law(self, object q_ref, object kp, object kd, object damping,
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
            keep += [self._vector(q_ref, "q_ref", self.m.nq), self._vector(kp, "kp", self.m.nv),
                     self._vector(kd, "kd", self.m.nv)]
            if self.nquat:
                self._check_quaternions(<const double*>cnp.PyArray_DATA(keep[0]), 1)
            ctl.q_ref = <const double*>cnp.PyArray_DATA(keep[0])
            ctl.kp = <const double*>cnp.PyArray_DATA(keep[1])
            ctl.kd = <const double*>cnp.PyArray_DATA(keep[2])
        if damping is not None:
            arr = self._vector(damping, "damping", self.m.nv)
            keep.append(arr)
            ctl.damping = <const double*>cnp.PyArray_DATA(arr)
        if f_ext is not None:
            arr = _as_array(f_ext, "f_ext")
            if (<object>arr).shape != (self.m.nb, 6):
                raise InputError(f"f_ext must have shape ({self.m.nb}, 6), got "
                                 f"{_shape_text((<object>arr).shape)}")
            _check_finite(arr, "f_ext")
            keep.append(arr)
            ctl.f_ext = <const double*>cnp.PyArray_DATA(arr)
        return keep

    cdef cnp.ndarray _vector(self, object x, str name, Py_ssize_t n):
        cdef cnp.ndarray arr = _as_array(x, name)
        if (<object>arr).shape != (n,):
            raise InputError(f"{name} must have shape ({n},), got "
                             f"{_shape_text((<object>arr).shape)}")
        _check_finite(arr, name)
        return arr

    cdef int _rollouts(self, _rollout.Control* ctl, _rollout.Plan* plan, cnp.ndarray q0,
                       cnp.ndarray v0, Py_ssize_t tau_step, list out, Py_ssize_t rows,
                       cnp.ndarray status, int nt) except -1:
        # every rollout, GIL released: prange over the rollouts, one workspace per thread
        global _omp_started
        cdef Py_ssize_t N = 1 if cnp.PyArray_NDIM(q0) == 1 else cnp.PyArray_DIMS(q0)[0]
        cdef Py_ssize_t k, nscratch = 2 * self.m.nq + 16 * self.m.nv
        cdef int t
        cdef RolloutJob job
        if _omp_unusable:
            nt = 1       # the fork rule of _run_batch
        buffer = np.zeros((nt, self.data.size))
        scratch = np.empty((nt, nscratch))
        job.works = <Work*>malloc(nt * sizeof(Work))
        if job.works == NULL:
            raise MemoryError()
        for t in range(nt):
            self._bind(&job.works[t], buffer[t])
        job.m = &self.m
        job.ctl = ctl
        job.plan = plan
        job.tau_step = tau_step
        job.q0 = <const double*>cnp.PyArray_DATA(q0)
        job.v0 = <const double*>cnp.PyArray_DATA(v0)
        job.scratch = <double*>cnp.PyArray_DATA(scratch)
        job.nscratch = nscratch
        job.rows = rows
        for t in range(6):
            job.out[t] = NULL if out[t] is None else <double*>cnp.PyArray_DATA(out[t])
        job.status = <int*>cnp.PyArray_DATA(status)
        if nt > 1:
            _omp_started = True
        try:
            with nogil:
                if nt == 1:
                    for k in range(N):
                        rollout_one(&job, k, 0)
                else:
                    for k in prange(N, num_threads=nt, schedule="dynamic", chunksize=1):
                        rollout_one(&job, k, threadid())
        finally:
            free(job.works)
        return 0


def _is_model(model) -> bool:
    # an rbd.Model, recognized by what the kernels use of it (this layer does not import
    # rbd.model): flat_arrays(), bodies and the per-model cache
    return all(hasattr(model, name) for name in ("flat_arrays", "bodies", "_cache"))


def compiled_model(model):
    """The :class:`CompiledModel` of ``model``, built once and cached on the model.

    The cache is the one of ``rbd.algorithms.compiled`` (``model._cache["kernel"]``,
    emptied when the model changes).

    Raises
    ------
    InputError
        When ``model`` is not an :class:`rbd.Model`.
    """
    if not _is_model(model):
        raise InputError(f"model must be an rbd.Model, got {type(model).__name__}")
    try:
        return model._cache["kernel"]
    except KeyError:
        kernel = CompiledModel(model)
        model._cache["kernel"] = kernel
        return kernel
