# cython: language_level=3
"""Stepping with contacts, joint limits and friction loss, compiled: MuJoCo's semi-implicit Euler.

The compiled twin of ``rbd/simulation/contact.py``.  Each step (``euler_step``,
``mj_step`` with ``integrator="Euler"``):

1. the position stage at q (``stages.position``: each joint transform and body pose once a
   step, read by everything after it), and the contacts at those poses (the collision
   model's ``collide_into``, ``collision.pyx``);
2. ``forward_into``'s constrained acceleration a (``forward.pyx``, on the same poses);
3. joint damping D taken implicitly (``mj_EulerSkip``): a_E = a − (M + h D)⁻¹ h D a;
4. v⁺ = v + h a_E and q⁺ = q ⊕ h v⁺ in MuJoCo's coordinates (``euler_update``: a free
   joint's linear velocity in the world frame, ``mj_integratePos``'s quaternion update).

``simulate_contact`` runs N initial states × steps without the GIL, recording q, v, a, the contact count and the constraint forces
(``constraint_force``: Jᵀ f, MuJoCo's ``qfrc_constraint``; ``contact_frame_forces``: each
contact's force in its frame, ``mj_contactForce``) at the record stride,
and stops a state whose next step is not finite (or whose solve fails) with the samples
it computed, as the Python loop does.

On several threads a run is cut into segments of a few steps (``segment_steps``), and the
threads take the segments of all runs in turn: segment g of every run before segment
g + 1 of any (``_run_segments``, in ``contact_segments.pxi``).  A run's state between two
segments (q, v, the warm start, its sample and step counters) lives in the run's own
row, so whichever thread takes the next segment continues it, and the result is the one
thread's to the bit.  A batch of a few runs of unequal cost then ends within a segment on
every thread, where handing out whole runs leaves a thread idle for up to a run at the
end.
"""

import numpy as np

cimport numpy as cnp
cimport openmp
from cython.parallel cimport parallel, threadid
from libc.math cimport NAN, cos, isfinite, sin, sqrt
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

from rbd._kernels._base cimport (CompiledBase, Interrupt, interrupt_error, interrupt_start,
                                interrupted, omp_starting, omp_unusable)
from rbd._kernels._model cimport ModelC
from rbd._kernels.collision cimport CollisionC, CollisionModel, collide_into
from rbd._kernels.contact_set cimport ContactSetC
from rbd._kernels.crba cimport ltl, ltl_solve
from rbd._kernels.forward cimport (ForwardC, ForwardModel, ForwardWork, ForwardWorkspace,
                                   forward_into)
from rbd._kernels.kinematics cimport kinetic_energy_of, potential_energy_of
from rbd._kernels.stages cimport position

cnp.import_array()

cdef enum:
    J_SPHERICAL = 5
    J_FREE = 6

#: A collision routine: the contacts at the body poses R, p (``Work.R``, ``Work.p`` after
#: the position stage, ``stages.position``) into ``out``; returns their number, or −1 when they
#: exceed its capacity.
ctypedef int (*collide_fn)(void* data, const double* q, const double* R, const double* p,
                           ContactSetC* out) noexcept nogil


# MuJoCo's position integration (mj_integratePos)

cdef inline void _quat_integrate(double* quat, const double* omega, double h) noexcept nogil:
    # mju_quatIntegrate: quat ← quat ⊗ exp(h ω / 2), normalized; quat = (w, x, y, z)
    cdef double norm = sqrt(omega[0] * omega[0] + omega[1] * omega[1] + omega[2] * omega[2])
    cdef double angle = norm * h, s, rw, w1
    cdef double rv[3]
    cdef double v1[3]
    cdef int k
    if angle > 0:
        s = sin(angle / 2)
        rw = cos(angle / 2)
        for k in range(3):
            rv[k] = s * (omega[k] / norm)
            v1[k] = quat[1 + k]
        w1 = quat[0]
        quat[0] = w1 * rw - (v1[0] * rv[0] + v1[1] * rv[1] + v1[2] * rv[2])
        quat[1] = w1 * rv[0] + rw * v1[0] + (v1[1] * rv[2] - v1[2] * rv[1])
        quat[2] = w1 * rv[1] + rw * v1[1] + (v1[2] * rv[0] - v1[0] * rv[2])
        quat[3] = w1 * rv[2] + rw * v1[2] + (v1[0] * rv[1] - v1[1] * rv[0])
    norm = sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3])
    for k in range(4):
        quat[k] = quat[k] / norm

cdef inline void quat_step_xyzw(const double* q, const double* omega, double h,
                                double* out) noexcept nogil:
    # out = rbd's scalar-last quaternion q integrated with ω over h (_quat_integrate works
    # on MuJoCo's scalar-first order)
    cdef double quat[4]
    quat[0], quat[1], quat[2], quat[3] = q[3], q[0], q[1], q[2]
    _quat_integrate(quat, omega, h)
    out[0], out[1], out[2], out[3] = quat[1], quat[2], quat[3], quat[0]


cdef inline void rotate(const double* quat, const double* x, double sign,
                        double* out) noexcept nogil:
    # R(quat) x (sign 1) or R(quat)ᵀ x (sign −1) = x + 2w (u × x) + 2 u × (u × x) with the
    # scalar-last quat = (u, w), u negated for the transpose (rbd.interop._rotate)
    cdef double u0 = sign * quat[0], u1 = sign * quat[1], u2 = sign * quat[2], w = quat[3]
    cdef double t0 = 2.0 * (u1 * x[2] - u2 * x[1])
    cdef double t1 = 2.0 * (u2 * x[0] - u0 * x[2])
    cdef double t2 = 2.0 * (u0 * x[1] - u1 * x[0])
    out[0] = x[0] + w * t0 + (u1 * t2 - u2 * t1)
    out[1] = x[1] + w * t1 + (u2 * t0 - u0 * t2)
    out[2] = x[2] + w * t2 + (u0 * t1 - u1 * t0)


cdef inline void free_joint_update(const double* q, const double* v, const double* a,
                                   double h, double* q_next, double* v_next) noexcept nogil:
    # a free joint (q = [p; quat xyzw], v = [ω; u]) through MuJoCo's qvel = [R u; ω],
    # qacc = [R (u̇ + ω × u); ω̇] (rbd.mjcf.to_mujoco_state): qvel += h qacc, p += h ṗ,
    # quat integrated with ω, back with the new R (from_mujoco_state)
    cdef double lin[3]
    cdef double lin_a[3]
    cdef double wu[3]
    cdef int k
    rotate(q + 3, v + 3, 1.0, lin)
    wu[0] = a[3] + (v[1] * v[5] - v[2] * v[4])
    wu[1] = a[4] + (v[2] * v[3] - v[0] * v[5])
    wu[2] = a[5] + (v[0] * v[4] - v[1] * v[3])
    rotate(q + 3, wu, 1.0, lin_a)
    for k in range(3):
        lin[k] = lin[k] + h * lin_a[k]
        v_next[k] = v[k] + h * a[k]
        q_next[k] = q[k] + h * lin[k]
    quat_step_xyzw(q + 3, v_next, h, q_next + 3)
    rotate(q_next + 3, lin, -1.0, v_next + 3)


cdef inline void ball_joint_update(const double* q, const double* v, const double* a,
                                   double h, double* q_next, double* v_next) noexcept nogil:
    # a ball joint (q = quat xyzw, v = ω body frame): ω += h ω̇, quat integrated with ω
    cdef int k
    for k in range(3):
        v_next[k] = v[k] + h * a[k]
    quat_step_xyzw(q, v_next, h, q_next)


cdef void integrate_position(const ModelC* model, const double* q, const double* v,
                             const double* a, double h, double* q_next,
                             double* v_next) noexcept nogil:
    """v⁺ = v + h a and q⁺ = q ⊕ h v⁺ joint by joint in MuJoCo's coordinates
    (the velocity update of euler_step, then mj_integratePos)."""
    cdef Py_ssize_t i, qs, vs, k
    for i in range(model.nb):
        qs = model.q_start[i]
        vs = model.v_start[i]
        if model.jtype[i] == J_FREE:
            free_joint_update(q + qs, v + vs, a + vs, h, q_next + qs, v_next + vs)
        elif model.jtype[i] == J_SPHERICAL:
            ball_joint_update(q + qs, v + vs, a + vs, h, q_next + qs, v_next + vs)
        else:                                          # hinge, slide (fixed: nothing)
            for k in range(model.nv_j[i]):
                v_next[vs + k] = v[vs + k] + h * a[vs + k]
                q_next[qs + k] = q[qs + k] + h * v_next[vs + k]


# one step

cdef inline void implicit_damping(const ForwardC* f, const ModelC* model, ForwardWork* fw,
                                  double h) noexcept nogil:
    # a_E = a − (M + h D)⁻¹ h D a   (mj_EulerSkip; a = fw.qdd, a_E into fw.a_step)
    cdef Py_ssize_t nv = model.nv, j
    cdef bint damped = False
    for j in range(nv):
        damped = damped or f.damping[j] > 0
    memcpy(fw.a_step, fw.qdd, nv * sizeof(double))
    if not damped or not f.eulerdamp:                  # explicit with the eulerdamp flag
        return
    memcpy(fw.L, fw.M, nv * nv * sizeof(double))
    for j in range(nv):
        fw.L[j * nv + j] += h * f.damping[j]
        fw.bvec[j] = h * f.damping[j] * fw.qdd[j]
    if ltl(model, fw.L):
        return
    ltl_solve(model, fw.L, fw.bvec, 1)
    for j in range(nv):
        fw.a_step[j] = fw.qdd[j] - fw.bvec[j]


cdef int euler_step(const ForwardC* f, const ModelC* model, ForwardWork* fw, collide_fn collide,
                    void* collider, const double* q, const double* v, const double* tau,
                    double h, double* q_next, double* v_next) noexcept nogil:
    """One semi-implicit Euler step: fw.qdd (a at the start state), fw.con (its contacts),
    q⁺, v⁺; 0, or 1 (M not positive definite), 2 (solver), 3 (too many contacts)."""
    cdef int status
    fw.con.n = 0
    # the joint transforms and body poses of q, once for the step (mj_fwdPosition)
    position(model, fw.w, &fw.t, q)
    if collide != NULL:
        # the contacts at the body poses of q (mj_collision)
        if collide(collider, q, fw.w.R, fw.w.p, &fw.con) < 0:
            return 3
    status = forward_into(f, model, fw, q, v, tau, True)
    if status:
        return status
    implicit_damping(f, model, fw, h)
    integrate_position(model, q, v, fw.a_step, h, q_next, v_next)
    return 0


# runs

cdef enum:
    #: why a run stopped early (``Run.status``)
    FINISHED = 0
    SINGULAR = 1          # M not positive definite
    SOLVER = 2            # the constraint solver failed
    CAPACITY = 3          # more contacts than the collision model holds
    DIVERGED = 4          # the next state is not finite
    INTERRUPTED = 5       # a signal handler raised (Ctrl-C): every run stops


cdef struct Run:
    # N initial states × steps of one model (``simulate_contact``)
    const ForwardC* f
    const ModelC* model
    ForwardWork* fw               # one per thread
    collide_fn collide            # NULL: no contacts
    void* collider
    const double* q0              # N × nq
    const double* v0              # N × nv
    const double* tau             # ntau × nv (row min(k, ntau − 1) at step k), or NULL
    Py_ssize_t ntau
    double h
    Py_ssize_t steps
    Py_ssize_t every              # record stride
    Py_ssize_t nsamples           # samples of a full run
    double* Q                     # N × nsamples × nq
    double* V                     # N × nsamples × nv
    double* A                     # N × nsamples × nv
    int64_t* counts               # N × nsamples: contacts at each sample
    double* F                     # N × nsamples × nv: generalized constraint force Jᵀ f
    double* CF                    # N × nsamples × width × 6: contact forces, contact frame
    Py_ssize_t width              # contacts whose force a sample holds (the first ones)
    double* T                     # N × nsamples: kinetic energy
    double* U                     # N × nsamples: potential energy
    int64_t* recorded             # N: samples written
    int64_t* status               # N: FINISHED or why it stopped
    int64_t* stopped              # N: the step it stopped at
    double* state                 # per run (state_row apart): q, v, q⁺, v⁺, the warm start
    Interrupt* interrupt          # the signal check of this call


cdef void constraint_force(const ForwardWork* fw, Py_ssize_t nv, double* out) noexcept nogil:
    # out = Jᵀ f over the rows of the last solve (MuJoCo's qfrc_constraint)
    cdef Py_ssize_t r, j
    memset(out, 0, nv * sizeof(double))
    for r in range(fw.nefc):
        for j in range(nv):
            out[j] += fw.J[r * nv + j] * fw.force[r]


cdef void contact_frame_forces(const ForwardWork* fw, Py_ssize_t width,
                               double* out) noexcept nogil:
    # out (6 per contact of fw.con, the first ``width`` ones): each contact's force in its
    # frame (normal first), as mj_contactForce: an elliptic or frictionless contact's rows
    # as they are; a pyramidal contact's 2(dim − 1) edge forces decoded
    # (mju_decodePyramid): f_n = Σ f_i and f_t,k = (f_2k − f_2k+1) μ_k; zero for a contact
    # with no rows (in the gap) and past the contacts (all 6 width written)
    cdef Py_ssize_t r = 0, n, c, k, dim
    cdef const double* f
    memset(out, 0, 6 * width * sizeof(double))
    while r < fw.nefc:
        if fw.kind[r] != 3:
            r += 1
            continue
        c = fw.ids[r]
        n = 1
        while r + n < fw.nefc and fw.kind[r + n] == 3 and fw.ids[r + n] == c:
            n += 1
        if c >= width:
            r += n
            continue
        dim = fw.con.condim[c]
        f = fw.force + r
        if n == dim:
            for k in range(dim):
                out[6 * c + k] = f[k]
        else:
            for k in range(n):
                out[6 * c] += f[k]
            for k in range(dim - 1):
                out[6 * c + 1 + k] = (f[2 * k] - f[2 * k + 1]) * fw.con.friction[5 * c + k]
        r += n


cdef inline void record(const Run* run, Py_ssize_t s, Py_ssize_t j, const double* q,
                        const double* v, ForwardWork* fw) noexcept nogil:
    # sample j of state s: q, v, a (fw.qdd), the contact count, the constraint forces and
    # the energies (from the step's body velocities and centres of mass in fw.w)
    cdef Py_ssize_t nq = run.model.nq, nv = run.model.nv, at = s * run.nsamples + j
    memcpy(run.Q + at * nq, q, nq * sizeof(double))
    memcpy(run.V + at * nv, v, nv * sizeof(double))
    memcpy(run.A + at * nv, fw.qdd, nv * sizeof(double))
    run.counts[at] = fw.con.n
    constraint_force(fw, nv, run.F + at * nv)
    contact_frame_forces(fw, run.width, run.CF + at * run.width * 6)
    run.T[at] = kinetic_energy_of(run.model, fw.w, v)
    run.U[at] = potential_energy_of(run.model, fw.w)


cdef inline void blank(const Run* run, Py_ssize_t s, Py_ssize_t j) noexcept nogil:
    # samples j, j + 1, … of state s, which a run that stopped early never reaches: NaN,
    # and no contacts
    cdef Py_ssize_t nq = run.model.nq, nv = run.model.nv, at = s * run.nsamples + j
    cdef Py_ssize_t left = run.nsamples - j
    fill_nan(run.Q + at * nq, left * nq)
    fill_nan(run.V + at * nv, left * nv)
    fill_nan(run.A + at * nv, left * nv)
    fill_nan(run.F + at * nv, left * nv)
    fill_nan(run.CF + at * run.width * 6, left * run.width * 6)
    fill_nan(run.T + at, left)
    fill_nan(run.U + at, left)
    memset(run.counts + at, 0, left * sizeof(int64_t))


cdef inline void fill_nan(double* x, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t k
    for k in range(n):
        x[k] = NAN


cdef inline bint finite(const double* x, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t k
    for k in range(n):
        if not isfinite(x[k]):
            return False
    return True


cdef inline Py_ssize_t state_row(Py_ssize_t nq, Py_ssize_t nv) noexcept nogil:
    # doubles per run in Run.state: q, v, q⁺, v⁺, the warm start, rounded up to whole
    # cache lines and one more, so that no two threads write to one line
    return (2 * nq + 3 * nv + 15) // 8 * 8


cdef void c_simulate_contact(const Run* run, Py_ssize_t s, int t) noexcept nogil:
    """The run of initial state s in thread t's workspace (simulate_contact's loop)."""
    start_run(run, s)
    _advance(run, s, t, run.steps + 1)


cdef inline void start_run(const Run* run, Py_ssize_t s) noexcept nogil:
    # run s at its initial state, before step 0
    cdef Py_ssize_t nq = run.model.nq, nv = run.model.nv
    cdef double* q = run.state + s * state_row(nq, nv)
    memcpy(q, run.q0 + s * nq, nq * sizeof(double))
    memcpy(q + nq, run.v0 + s * nv, nv * sizeof(double))
    run.status[s] = FINISHED
    run.recorded[s] = 0
    run.stopped[s] = 0


cdef inline bint _advance(const Run* run, Py_ssize_t s, int t, Py_ssize_t until) noexcept nogil:
    """Steps ``run.stopped[s]``, …, ``until`` − 1 of run s in thread t's workspace (the run's
    counters: the next step in ``stopped``, the samples written in ``recorded``); True when
    the run has ended (its last step taken, or stopped early)."""
    cdef Py_ssize_t nq = run.model.nq, nv = run.model.nv
    cdef Py_ssize_t k = run.stopped[s], j = run.recorded[s]
    cdef ForwardWork* fw = &run.fw[t]
    cdef double* q = run.state + s * state_row(nq, nv)
    cdef double* v = q + nq
    cdef double* q_next = v + nv
    cdef double* v_next = q_next + nq
    cdef double* warm = v_next + nv
    cdef const double* tau_k
    cdef int status
    cdef bint kept
    fw.warm = NULL if k == 0 else warm                 # the first step starts from a₀
    while k < until:
        tau_k = NULL if run.tau == NULL else run.tau + min(k, run.ntau - 1) * nv
        status = euler_step(run.f, run.model, fw, run.collide, run.collider, q, v, tau_k,
                            run.h, q_next, v_next)
        kept = k % run.every == 0 or k == run.steps
        if kept:
            record(run, s, j, q, v, fw)
            j += 1
        if k == run.steps:
            break
        if status == 0 and not (finite(q_next, nq) and finite(v_next, nv)):
            status = DIVERGED
        if status == 0 and interrupted(run.interrupt):
            status = INTERRUPTED
        if status:
            if not kept:                               # keep the last state reached
                record(run, s, j, q, v, fw)
                j += 1
            run.status[s] = status
            break
        memcpy(q, q_next, nq * sizeof(double))
        memcpy(v, v_next, nv * sizeof(double))
        # the next solve starts from this step's a when that is cheaper (mj_step's warm start)
        memcpy(warm, fw.qdd, nv * sizeof(double))
        fw.warm = warm
        k += 1
    run.recorded[s] = j
    run.stopped[s] = k
    if k < until:                                      # the last step, or stopped early
        blank(run, s, j)
        return True
    return False


cdef inline int _collide_compiled(void* data, const double* q, const double* R, const double* p,
                                  ContactSetC* out) noexcept nogil:
    # the compiled collision stage of the model (collision.pyx: mj_collision)
    return collide_into(<const CollisionC*>data, R, p, out)


include "contact_segments.pxi"


cdef inline Py_ssize_t sample_count(Py_ssize_t steps, Py_ssize_t every):
    """Samples of a run of ``steps`` steps recorded every ``every``: steps 0, every, …, and
    the last."""
    return (steps // every) + 1 + (1 if steps % every else 0)


cdef inline dict _outputs(Run* run, Py_ssize_t N, Py_ssize_t S, Py_ssize_t nq, Py_ssize_t nv):
    # the arrays a run writes (simulate_contact's result), bound to run (run.width set);
    # left unset here: every element is written by the thread that runs its state (record,
    # blank), so that no thread zeroes them first and the pages are first touched there
    out = {"q": np.empty((N, S, nq)), "v": np.empty((N, S, nv)), "a": np.empty((N, S, nv)),
           "contact_count": np.empty((N, S), dtype=np.int64),
           "constraint_force": np.empty((N, S, nv)),
           "contact_force": np.empty((N, S, run.width, 6)),
           "kinetic": np.empty((N, S)), "potential": np.empty((N, S)),
           "recorded": np.empty(N, dtype=np.int64), "status": np.empty(N, dtype=np.int64),
           "stopped": np.empty(N, dtype=np.int64)}
    run.Q = <double*>cnp.PyArray_DATA(out["q"])
    run.V = <double*>cnp.PyArray_DATA(out["v"])
    run.A = <double*>cnp.PyArray_DATA(out["a"])
    run.counts = <int64_t*>cnp.PyArray_DATA(out["contact_count"])
    run.F = <double*>cnp.PyArray_DATA(out["constraint_force"])
    run.CF = <double*>cnp.PyArray_DATA(out["contact_force"])
    run.T = <double*>cnp.PyArray_DATA(out["kinetic"])
    run.U = <double*>cnp.PyArray_DATA(out["potential"])
    run.recorded = <int64_t*>cnp.PyArray_DATA(out["recorded"])
    run.status = <int64_t*>cnp.PyArray_DATA(out["status"])
    run.stopped = <int64_t*>cnp.PyArray_DATA(out["stopped"])
    return out


cdef inline Py_ssize_t _bind_collider(Run* run, collide) except -1:
    # run.collide and run.collider for a CollisionModel (collide_into) or None (no contacts);
    # returns the contact bound it needs
    run.collide = NULL
    run.collider = NULL
    if collide is None:
        return 0
    if not isinstance(collide, CollisionModel):
        raise TypeError(f"collide: expected a CollisionModel or None, got {type(collide)}")
    run.collide = _collide_compiled
    run.collider = <void*>&(<CollisionModel>collide).c
    return (<CollisionModel>collide).c.max_contacts


def simulate_contact(ForwardModel fm, q0, v0, tau, double h, Py_ssize_t steps,
                     Py_ssize_t every=1, collide=None, str cone="pyramidal",
                     str solver="newton", Py_ssize_t iterations=100, double tolerance=1e-14,
                     num_threads=None, Py_ssize_t contact_width=32):
    """N runs of MuJoCo's semi-implicit Euler with contacts, without the GIL.

    Parameters
    ----------
    fm : ForwardModel
    q0, v0 : (N, nq), (N, nv) ndarray
        Initial states (float64, validated).
    tau : None or (T, nv) ndarray
        Joint forces, row min(k, T − 1) at step k (shared by the runs).
    h : float
        Time step.
    steps, every : int
        Steps, and the record stride.
    collide : CollisionModel, optional
        The model's compiled collision stage (``rbd.constraints.collision.compiled_collision``:
        ``collide_into`` from the body poses, without the GIL); None for no contacts.
    cone, solver, iterations, tolerance
        As :func:`rbd.forward`.
    num_threads : int, optional
        Default: the compiled model's.
    contact_width : int
        The contacts of a sample whose force is recorded (the first ones).

    Returns
    -------
    dict
        ``q``, ``v``, ``a``, ``constraint_force`` (N, samples, ·), ``contact_force``
        (N, samples, width, 6: zero beyond each sample's count; see below for the width),
        ``contact_count``,
        ``kinetic``, ``potential`` (N, samples; past the samples a run recorded, NaN and
        a count of 0), ``recorded``,
        ``status`` (0 finished, 1 singular M, 2 solver failure, 3 too many contacts,
        4 diverged) and ``stopped`` (the step it stopped at), each (N,); and, as ints,
        ``failures`` (runs that stopped early) and ``evaluations`` (forward passes of all
        runs, Σ (steps taken + 1)).
        ``contact_force`` is cut to the most contacts of any sample (at most
        ``contact_width``).

    Raises
    ------
    KeyboardInterrupt
        (or what another signal handler raised): every run stops within a step.
    """
    cdef CompiledBase cm = fm.compiled
    cdef Run run
    cdef Py_ssize_t N, nq = cm.m.nq, nv = cm.m.nv, S = sample_count(steps, every), capacity
    cdef int nt = cm._num_threads if num_threads is None else int(num_threads)
    cdef ForwardWorkspace ws
    cdef ForwardC f                         # this call's options (ForwardModel.call_options)
    qa = np.ascontiguousarray(q0, dtype=np.float64).reshape(-1, nq)
    va = np.ascontiguousarray(v0, dtype=np.float64).reshape(-1, nv)
    N = qa.shape[0]
    ta = None if tau is None else np.ascontiguousarray(tau, dtype=np.float64).reshape(-1, nv)
    capacity = max(fm.max_contacts, _bind_collider(&run, collide))
    run.width = min(capacity, max(0, contact_width))
    out = _outputs(&run, N, S, nq, nv)
    if N == 1 or nt < 1 or omp_unusable():
        nt = 1
    nt = min(nt, N)
    fm.call_options(&f, cone, solver, iterations, tolerance, True)
    state = np.zeros((N, state_row(nq, nv)))
    run.f, run.model = &f, &cm.m
    run.q0 = <const double*>cnp.PyArray_DATA(qa)
    run.v0 = <const double*>cnp.PyArray_DATA(va)
    run.tau = NULL if ta is None else <const double*>cnp.PyArray_DATA(ta)
    run.ntau = 0 if ta is None else ta.shape[0]
    run.h, run.steps, run.every, run.nsamples = h, steps, every, S
    run.state = <double*>cnp.PyArray_DATA(state)
    # the model's kept workspace when free (ForwardModel.take_workspace), else a new one
    ws = fm.take_workspace(nt, capacity)
    try:
        run.fw = ws.fw
        _run(&run, N, nt)
    finally:
        fm.give_back(ws)
    _summarize(&run, N, out)
    return out


cdef inline int _summarize(const Run* run, Py_ssize_t N, dict out) except -1:
    # the batch's totals in ``out`` (``failures``, ``evaluations``), and
    # ``contact_force`` cut to the most contacts of any sample when that is below run.width:
    # what the caller would otherwise take from the arrays with a few array operations each
    cdef Py_ssize_t s, j, n = N * run.nsamples, widest = 0, failures = 0
    cdef Py_ssize_t evaluations = 0
    for j in range(n):
        widest = max(widest, <Py_ssize_t>run.counts[j])
    for s in range(N):
        failures += run.status[s] != FINISHED
        evaluations += (run.stopped[s] if run.status[s] != FINISHED else run.steps) + 1
    out["failures"] = failures
    out["evaluations"] = evaluations
    widest = min(widest, run.width)
    if widest < run.width:
        cut = np.empty((N, run.nsamples, widest, 6))
        _cut_rows(run.CF, <double*>cnp.PyArray_DATA(cut), n, run.width * 6, widest * 6)
        out["contact_force"] = cut
    return 0


cdef inline void _cut_rows(const double* src, double* dst, Py_ssize_t rows, Py_ssize_t width,
                           Py_ssize_t kept) noexcept nogil:
    # the first ``kept`` of each row of ``width`` doubles, rows after rows
    cdef Py_ssize_t r
    if kept == 0:
        return
    for r in range(rows):
        memcpy(dst + r * kept, src + r * width, kept * sizeof(double))


cdef inline int _run(Run* run, Py_ssize_t N, int nt) except -1:
    # the N runs of ``run`` on nt threads (simulate_contact's loop); raises what a signal
    # handler raised during them
    cdef Interrupt intr
    cdef Py_ssize_t s
    interrupt_start(&intr)
    run.interrupt = &intr
    if nt == 1:
        with nogil:
            for s in range(N):
                c_simulate_contact(run, s, 0)
    else:
        omp_starting()
        _run_segments(run, N, nt)
    error = interrupt_error(&intr)
    if error is not None:
        raise error
    return 0
