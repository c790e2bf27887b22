# cython: language_level=3
# The compiled forward pass with contacts, limits and friction loss (forward.pyx).

from libc.stdint cimport int64_t

from rbd._kernels._model cimport ModelC, Work
from rbd._kernels.contact_set cimport ContactSetC
from rbd._kernels.equality_rows cimport EqualityC
from rbd._kernels.fluid cimport FluidC
from rbd._kernels.solver_newton cimport RowsC
from rbd._kernels.solver_newton cimport Work as NewtonWork
from rbd._kernels.stages cimport Terms
from rbd._kernels.tendon_rows cimport TendonC


cdef struct ForwardC:
    # the static data of one model's forward pass (``ForwardModel`` fills it once)
    Py_ssize_t nv
    double timestep
    double impratio
    bint elliptic                 # the friction cone: elliptic, else pyramidal
    bint pgs                      # the solver: PGS, else Newton
    bint limits                   # joint-limit rows on (rbd.forward's ``limits``)
    bint eulerdamp                # the step takes the damping implicitly (no ``eulerdamp`` flag)
    Py_ssize_t iterations
    double tolerance
    const double* dof_weight      # nv: MuJoCo's dof_invweight0
    const double* damping         # nv
    Py_ssize_t nfriction          # dofs with friction loss, their rows' constant terms:
    const int64_t* friction_dof   #   the dof
    const double* friction_loss   #   the bound
    const double* friction_b      #   aref = -b v_j
    const double* friction_R      #   R
    Py_ssize_t nlimit             # hinges and slides with a finite bound:
    const int64_t* limit_q        #   index in q
    const int64_t* limit_v        #   index in v
    const double* limit_bound     #   nlimit × 2: lower, upper (±inf where none)
    const double* limit_margin
    const double* limit_k         #   reference stiffness and damping (solreflimit)
    const double* limit_b
    const double* limit_solimp    #   nlimit × 5, clamped
    Py_ssize_t nspring            # hinges and slides with a spring:
    const int64_t* spring_q
    const int64_t* spring_v
    const double* spring_k        #   stiffness
    const double* spring_ref      #   springref
    Py_ssize_t nball              # ball and free joints with a spring:
    const int64_t* ball_q         #   the joint's first index in q
    const int64_t* ball_v         #   its first index in v
    const int64_t* ball_free      #   1 for a free joint
    const double* ball_k          #   stiffness
    const double* ball_ref        #   nball × 7: qpos_spring (position, then quaternion w x y z)
    const double* tendon_M        # nv × nv: the fixed tendons' armature in M, or NULL
    Py_ssize_t ngeom
    const int64_t* geom_body      # ngeom: rbd body index, -1 for the world
    const double* geom_weight     # ngeom: body_invweight0 (translation) of its MJCF body
    const TendonC* tendon         # the fixed tendons (tendon_rows.pxd)
    const EqualityC* equality     # the active equality constraints (equality_rows.pxd), or NULL
    const FluidC* fluid           # the fluid forces (fluid.pxd), or NULL


cdef struct ForwardWork:
    # one thread's workspace of ``forward_into`` (``ForwardWorkspace`` carves it)
    Work* w                       # the model's workspace (the stages' poses, velocities, IC)
    Terms t                       # the stages' terms (stages.pxd): q, q̇, M, L, h, g
    double* M                     # nv × nv with armature (= t.M)
    double* L                     # nv × nv: tree-sparse factor M = Lᵀ L (= t.L)
    double* bias                  # nv: h(q, v) (= t.h)
    double* a0                    # nv: unconstrained acceleration
    double* qdd                   # nv: constrained acceleration
    double* jac                   # 6 × nv: relative Jacobian at a contact point, on the
                                  #   ncols columns in cols (column t at jac[k nv + t])
    double* frame_rows            # 6 × nv: a contact's rows in its frame (the same columns)
    Py_ssize_t* cols              # nv: the dofs that move a contact's bodies, ascending
    Py_ssize_t* path              # 2 nb: those bodies, and on which body's path each lies
    double* vel                   # 10: the velocity of each row of a contact
    double* bvec                  # nv: free_joint_bias
    double* a_step                # nv: the step's acceleration (implicit damping)
    const double* warm            # nv: the Newton solve's warm start (the last step's a), or NULL
    Py_ssize_t max_rows
    Py_ssize_t nefc
    Py_ssize_t nf
    Py_ssize_t ncone
    double* J                     # max_rows × nv
    double* aref
    double* D
    double* R
    double* floss
    double* force
    int64_t* kind                 # per row: 1 friction, 2 limit, 3 contact, 4 equality
    int64_t* ids                  # per row: equality constraint (the tendon equalities after
                                  #   the others), dof or tendon (friction, limit), contact
    Py_ssize_t* cone_start        # elliptic contacts: first row, condim, mu, friction (5)
    Py_ssize_t* cone_dim
    double* cone_mu
    double* cone_friction
    Py_ssize_t* cone_at           # per row: its elliptic contact, or -1
    RowsC rows                    # the view the solvers read
    NewtonWork nw
    ContactSetC con               # the contact set (capacity contacts)
    char pad[64]                  # a cache line between two threads' ForwardWork (the
                                  #   workspace holds them in one array): no false sharing


cdef int forward_into(const ForwardC* f, const ModelC* model, ForwardWork* fw, const double* q,
                      const double* v, const double* tau, bint posed) noexcept nogil


cdef class ForwardWorkspace:
    cdef ForwardWork* fw          # one per thread
    cdef readonly int nthreads
    cdef readonly Py_ssize_t capacity
    cdef object keep


cdef class ForwardModel:
    cdef ForwardC c
    cdef object keep
    cdef readonly object compiled
    cdef readonly object tendons  # tendon_rows.TendonModel
    cdef readonly Py_ssize_t max_contacts
    cdef object _workspace        # the last ForwardWorkspace handed out, kept for the next call
    cdef bint _busy               # _workspace is in use (a call running without the GIL)
    cdef ForwardWorkspace take_workspace(self, int nthreads, Py_ssize_t capacity)
    cdef void give_back(self, ForwardWorkspace ws) noexcept
    cdef int call_options(self, ForwardC* f, str cone, str solver, Py_ssize_t iterations,
                          double tolerance, bint limits) except -1
    cdef int fill_contacts(self, ContactSetC* con, contacts) except -1

