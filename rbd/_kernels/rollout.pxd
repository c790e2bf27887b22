# cython: language_level=3
"""Fixed-step rollouts: what the caller hands to ``rollout`` (``rollout.pyx``)."""

from rbd._kernels._base cimport Interrupt
from rbd._kernels._model cimport ModelC, Work
from rbd._kernels.constraints cimport Rows

cpdef enum Integrator:
    # the fixed-step method of rollout() (Plan.integrator): the members and values of
    # rbd.reference.rollout.Integrator, each one case of step() in rollout.pyx
    EULER = 0                   # semi-implicit Euler
    RK4 = 1                     # RK4 in the Runge-Kutta-Munthe-Kaas form


cdef enum:
    # rollout() status (besides 0 and 1 + i for a pivot error at body i)
    DIVERGED = -1               # the state or the acceleration became non-finite
    INTERRUPTED = -2            # a signal handler raised (Ctrl-C)
    NOT_DEFINITE = -3           # constrained: M is not positive definite at a finite state
    # Record.failure: what became non-finite first
    FAIL_Q = 1
    FAIL_V = 2
    FAIL_A = 3
    INTERRUPT_STEPS = 64        # steps between two interrupt checks (a flag or a clock read)


cdef struct Control:
    # the joint force at step k and state (q, v):
    #   τ = τ_ff[k] + K_p (q_ref ⊖ q) - K_d v,  and the joint damping -D v on top
    const double* tau           # τ_ff: NULL (zero), one (nv) row, or n_steps rows
    Py_ssize_t tau_rows         # 1 (constant) or n_steps (one row per step)
    const double* q_ref         # NULL: no PD law
    const double* kp            # nv
    const double* kd            # nv
    const double* damping       # NULL, or D (nv, the diagonal)
    const double* f_ext         # NULL, or nb × 6 body-frame forces (constant)
    # bilateral constraints (rows NULL: none, the ABA): q̈ of rbd.constrained_dynamics,
    # method "kkt", J q̈ = γ − kd J v − kp φ (RBDA §8.3; constrained.pyx, kkt_acceleration)
    const Rows* rows
    double baumgarte_kp
    double baumgarte_kd
    double* arena               # the thread's arena_size(m, nv) + m doubles (constrained.pxd)


cdef struct Plan:
    # the grid: t (n_steps + 1 times, step k from t[k] to t[k+1]), or with t NULL the
    # uniform grid t_k = k dt clipped to the duration (rollouts.grid_times, no array)
    const double* t
    double dt
    double duration
    Py_ssize_t n_steps
    Py_ssize_t stride           # record every stride-th step (and the last one)
    Integrator integrator       # the step of step() (rollout.pyx)
    bint curved                 # the model has spherical or free joints (RK4 transport)
    Interrupt* interrupt        # the signal check of the call (_base.pyx), or NULL


cdef struct Record:
    double* q                   # samples × nq
    double* v                   # samples × nv
    double* a                   # samples × nv
    double* tau                 # samples × nv (τ_ff + PD, without damping), or NULL
    double* kinetic             # samples
    double* potential           # samples
    double* phi                 # samples × m: φ(q) of Control.rows, or NULL
    double* jv                  # samples × m: J(q) v, or NULL
    Py_ssize_t samples          # out: the samples written
    Py_ssize_t steps            # out: the steps done to a finite state and acceleration
    int failure                 # out: FAIL_Q, FAIL_V or FAIL_A when the run diverged
    double failure_t            # out: the time (of a step or an RK4 stage) it happened at


cdef int rollout(const ModelC* m, Work* w, const Control* ctl, const Plan* plan,
                 const double* q0, const double* v0, double* scratch,
                 Record* rec) noexcept nogil


# --- what the lane rollouts (soa_rollout.pxi) take from this module, lane by lane --------
cdef void joint_force(const ModelC* m, const Control* ctl, Py_ssize_t k,
                      const double* q, const double* v, double* tau,
                      double* tau_total, double* err) noexcept nogil
cdef int evaluate(const ModelC* m, Work* w, const Control* ctl, Py_ssize_t k,
                  const double* q, const double* v, double* a,
                  double* scratch) noexcept nogil
cdef void transport(const ModelC* m, double c, const double* k_prev,
                    double* k) noexcept nogil
cdef void record(const ModelC* m, Work* w, const Control* ctl, const Record* rec,
                 Py_ssize_t r, const double* q, const double* v, const double* a,
                 const double* tau) noexcept nogil


cdef struct RolloutJob:
    # a batch of rollouts (CompiledModel.rollout, _rollout_batch.pyx): shared inputs,
    # per-thread workspaces; rollout k's outputs at row block k of out and entry k of
    # status, samples, steps, failure, failure_t
    const ModelC* m
    const Control* ctl
    const Plan* plan
    Work* works
    Py_ssize_t tau_step           # doubles between the τ tables of consecutive rollouts
    const double* q0
    const double* v0
    double* scratch               # nthreads × nscratch
    Py_ssize_t nscratch
    Py_ssize_t rows               # samples per rollout
    double* out[8]                # q, v, a, τ (or NULL), kinetic, potential, φ, J v (or NULL)
    Py_ssize_t nrows              # constraint rows (0: none; the lanes run only without)
    double* arena                 # nthreads × narena: the constrained evaluations' scratch
    Py_ssize_t narena
    int* status
    Py_ssize_t* samples           # per rollout: the samples written
    Py_ssize_t* steps             # per rollout: the steps done
    Py_ssize_t* failure           # per rollout: FAIL_Q, FAIL_V, FAIL_A or 0
    double* failure_t             # per rollout: when it diverged


# --- the grid ------------------------------------------------------------------------------
cdef inline double grid_time(const Plan* plan, Py_ssize_t k) noexcept nogil:
    # t_k: the given grid, or k dt clipped to the duration (within 1e-9 dt of it)
    cdef double t
    if plan.t != NULL:
        return plan.t[k]
    t = k * plan.dt
    return plan.duration if t > plan.duration - 1e-9 * plan.dt else t
