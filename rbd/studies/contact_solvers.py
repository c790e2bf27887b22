r"""Three contact models side by side: an LCP, a convex relaxation and MuJoCo's soft problem.

A time step of length :math:`h` from :math:`(q, v)` with contacts :math:`i` at gaps
:math:`\phi_i` (negative: penetration), normals :math:`n_i` and tangents
:math:`t_{i1}, t_{i2}` (rows of the relative-velocity Jacobian at the contact point,
:func:`contact_problem`) asks for the velocity :math:`v^+` and contact impulses with

.. math::

    M (v^+ - v) = h (\tau - c(q, v)) + \sum_i N_i^T \lambda_{n,i} + T_i^T \lambda_{t,i},
    \qquad q^+ = q \oplus h v^+ .

What closes it is the contact model:

* **Stewart & Trinkle (1996)**, a linear complementarity problem (LCP) with the friction
  cone replaced by the pyramid spanned by :math:`d_{ij} \in \{\pm t_{i1}, \pm t_{i2}\}`
  (friction :math:`\sum_j \beta_{ij} d_{ij}`):

  .. math::

      0 \le \lambda_{n,i} \perp \phi_i / h + n_i^T v^+ \ge 0, \quad
      0 \le \beta_{ij} \perp d_{ij}^T v^+ + \gamma_i \ge 0, \quad
      0 \le \gamma_i \perp \mu_i \lambda_{n,i} - \textstyle\sum_j \beta_{ij} \ge 0 .

  No gap opens or closes without a normal impulse, a sliding contact takes the full
  friction :math:`\mu\lambda_n` against its motion (:math:`\gamma` is the sliding speed).
  The LCP matrix is not symmetric and not positive semidefinite (only copositive):
  Stewart & Trinkle show that a solution exists, but it need not be unique.
  :func:`lcp_matrices` writes it out; :func:`solve_lcp_pgs` solves it by projected
  Gauss–Seidel on the impulses, each contact's friction projected on the pyramid of
  its current normal impulse.
* **Anitescu (2006)**, the convex relaxation: the impulse is a non-negative combination of
  the pyramid's edges :math:`n_i + \mu_i d_{ij}`, each edge a unilateral row

  .. math::

      0 \le \beta_{ij} \perp \phi_i / h + (n_i + \mu_i d_{ij})^T v^+ \ge 0 .

  These are the optimality conditions of a convex quadratic program in :math:`v^+`
  (unique).  The price: while a contact slides at :math:`v_t` against the edge
  :math:`n + \mu d`, the edge's row holds
  :math:`n^T v^+ = \mu |v_t| - \phi/h`, so after each step the gap is
  :math:`\phi^+ = \phi + h\,n^T v^+ = h \mu |v_t|`: a sliding body glides above its
  support (:func:`anitescu_rows`).
* **MuJoCo (Todorov 2014)**, the same edges (MuJoCo's pyramidal cone,
  :mod:`rbd.constraints.contact_rows`), softened: each row gets a regularizer
  :math:`R > 0` and a reference acceleration :math:`a^{\mathrm{ref}} = -b\,Jv - k\,d\,\phi`
  from ``solref``/``solimp`` (:mod:`rbd.constraints.impedance`), and the problem is
  solved in the accelerations (:func:`rbd.forward`, :func:`rbd.simulate` with
  ``integrator="euler"``).  Anitescu's step is MuJoCo's pyramidal problem with
  :math:`R = 0`, :math:`b = 1/h` and :math:`k\,d = 1/h^2` (:func:`anitescu_rows`), which is
  why it is solved here by the same solvers, :func:`rbd.constraints.solver_pgs.solve_pgs`
  and (softened by a small :math:`R`) :func:`rbd.constraints.solver_newton.solve_newton`.

References
----------
D. E. Stewart and J. C. Trinkle, "An implicit time-stepping scheme for rigid body dynamics
with inelastic collisions and Coulomb friction", Int. J. Numer. Methods Eng. 39 (1996).
M. Anitescu, "Optimization-based simulation of nonsmooth rigid multibody dynamics",
Math. Program. 105 (2006).
E. Todorov, "Convex and analytically-invertible dynamics with contacts and constraints",
ICRA 2014; MuJoCo documentation, "Computation" chapter.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..constraints.collision import collide_model
from ..constraints.contact_rows import contact_frame_rows, contact_rows
from ..constraints.forward import _geom_body, contact_jacobian
from ..constraints.solver_newton import ConstraintRows, solve_newton
from ..constraints.solver_pgs import solve_pgs
from ..errors import InputError

__all__ = ["ContactProblem", "contact_problem", "lcp_matrices", "lcp_variables",
           "complementarity_error", "project_diamond", "solve_lcp_pgs", "anitescu_rows",
           "solve_anitescu", "step", "TimeSteppingRun", "time_stepping"]

#: The contact models of :func:`step`.
METHODS = ("lcp", "anitescu")


@dataclasses.dataclass
class ContactProblem:
    r"""One time step's contact problem at :math:`(q, v)`.

    Attributes
    ----------
    M : (nv, nv) ndarray
        Joint-space inertia.
    v : (nv,) ndarray
        Velocity at the start of the step.
    v_free : (nv,) ndarray
        :math:`v + h M^{-1}(\tau - c)`, the velocity without contact impulses.
    frames : (nc, 3, nv) ndarray
        Per contact the rows :math:`n^T J, t_1^T J, t_2^T J` of the point's
        relative velocity.
    mu : (nc,) ndarray
        Sliding friction coefficients.
    phi : (nc,) ndarray
        Gaps at the start of the step (negative: penetration).
    dt : float
    """

    M: np.ndarray
    v: np.ndarray
    v_free: np.ndarray
    frames: np.ndarray
    mu: np.ndarray
    phi: np.ndarray
    dt: float

    @property
    def nc(self) -> int:
        return len(self.phi)

    def velocity(self, impulses: np.ndarray) -> np.ndarray:
        r""":math:`v^+ = v_{\mathrm{free}} + M^{-1} \sum_i F_i^T p_i` for impulses ``(nc, 3)``
        in the contact frames."""
        generalized = np.einsum("ckn,ck->n", self.frames, np.asarray(impulses, float))
        return self.v_free + np.linalg.solve(self.M, generalized)


def contact_problem(model, q, v, dt: float, tau=None) -> ContactProblem:
    r"""The contact problem of one step of ``model`` from :math:`(q, v)`.

    Every contact :func:`rbd.collide` reports enters, also those in the ``gap`` (at a
    positive distance): a time-stepping scheme must see a contact before it closes.
    The frames are :func:`rbd.constraints.contact_rows.contact_frame_rows` of the
    relative-velocity Jacobian (:func:`rbd.constraints.forward.contact_jacobian`); a
    frictionless contact (``condim`` 1) gets :math:`\mu = 0`.
    """
    from ..algorithms.dynamics import crba, nonlinear_effects
    from ..algorithms.kinematics import forward_kinematics

    q, v = np.asarray(q, float), np.asarray(v, float)
    tau = np.zeros(model.nv) if tau is None else np.asarray(tau, float)
    M = crba(model, q)
    v_free = v + dt * np.linalg.solve(M, tau - nonlinear_effects(model, q, v))
    contacts = collide_model(model, q)
    poses = forward_kinematics(model, q)
    frames = np.zeros((len(contacts), 3, model.nv))
    for c in range(len(contacts)):
        bodies = [_geom_body(model, model.geoms[g]) for g in contacts.geom[c]]
        jac = contact_jacobian(model, q, poses, contacts.pos[c], bodies)
        frames[c] = contact_frame_rows(contacts.frame[c], jac[3:], jac[:3], 3)
    frictionless = np.asarray(contacts.condim) == 1
    return ContactProblem(M=M, v=v, v_free=v_free, frames=frames,
                          mu=np.where(frictionless, 0.0, np.asarray(contacts.friction)[:, 0]),
                          phi=np.array(contacts.dist, float), dt=float(dt))


# --- Stewart & Trinkle's LCP ----------------------------------------------------------------------

#: The pyramid's directions in a contact's tangent plane: +t1, -t1, +t2, -t2.
PYRAMID = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])


def lcp_matrices(problem: ContactProblem) -> tuple[np.ndarray, np.ndarray]:
    r"""Stewart & Trinkle's LCP :math:`w = A z + b`, :math:`0 \le z \perp w \ge 0`.

    With :math:`z = (\lambda_n, \beta, \gamma)` (``nc``, ``4 nc``, ``nc``), the normal rows
    :math:`N`, the direction rows :math:`D` (:data:`PYRAMID` in each tangent plane),
    :math:`E` the contact-to-direction incidence and :math:`U = \mathrm{diag}(\mu)`
    (Stewart & Trinkle 1996, the LCP of their time-stepping scheme):

    .. math::

        A = \begin{bmatrix} N M^{-1} N^T & N M^{-1} D^T & 0 \\
                            D M^{-1} N^T & D M^{-1} D^T & E \\
                            U & -E^T & 0 \end{bmatrix}, \qquad
        b = \begin{bmatrix} N v_{\mathrm{free}} + \phi / h \\ D v_{\mathrm{free}} \\ 0
            \end{bmatrix}.

    The first block row is the gap after the step divided by :math:`h`, the second
    :math:`d^T v^+ + \gamma`, the third :math:`\mu\lambda_n - \sum_j \beta_j`.
    """
    nc = problem.nc
    N = problem.frames[:, 0]
    D = np.einsum("jk,ckn->cjn", PYRAMID, problem.frames[:, 1:]).reshape(4 * nc, -1)
    E = np.kron(np.eye(nc), np.ones((4, 1)))
    W = np.vstack([N, D])
    G = W @ np.linalg.solve(problem.M, W.T)
    A = np.zeros((6 * nc, 6 * nc))
    A[:5 * nc, :5 * nc] = G
    A[nc:5 * nc, 5 * nc:] = E
    A[5 * nc:, :nc] = np.diag(problem.mu)
    A[5 * nc:, nc:5 * nc] = -E.T
    b = np.concatenate([N @ problem.v_free + problem.phi / problem.dt, D @ problem.v_free,
                        np.zeros(nc)])
    return A, b


def lcp_variables(problem: ContactProblem, impulses: np.ndarray) -> np.ndarray:
    r"""Stewart & Trinkle's :math:`z = (\lambda_n, \beta, \gamma)` of impulses ``(nc, 3)``.

    The friction :math:`(p_1, p_2)` of a contact is split on the pyramid's directions,
    :math:`\beta = (p_1^+, p_1^-, p_2^+, p_2^-)`, and :math:`\gamma` is the largest
    sliding speed along a direction, :math:`\max_j(-d_j^T v^+)^+`, the smallest that
    keeps :math:`d_j^T v^+ + \gamma \ge 0`.
    """
    impulses = np.asarray(impulses, float)
    v_plus = problem.velocity(impulses)
    tangential = problem.frames[:, 1:] @ v_plus                      # (nc, 2)
    beta = np.maximum(impulses[:, None, 1:] * PYRAMID[None], 0.0).sum(axis=2)
    gamma = np.maximum(np.max(-tangential @ PYRAMID.T, axis=1), 0.0)
    return np.concatenate([impulses[:, 0], beta.ravel(), gamma])


def complementarity_error(A: np.ndarray, b: np.ndarray, z: np.ndarray) -> float:
    r"""How far ``z`` is from solving the LCP: :math:`\max(\|z^-\|_\infty,
    \|w^-\|_\infty, \max_k |z_k w_k|)` with :math:`w = A z + b`."""
    w = A @ z + b
    return float(max(np.max(-z, initial=0.0), np.max(-w, initial=0.0),
                     np.max(np.abs(z * w), initial=0.0)))


def project_diamond(p, radius: float) -> np.ndarray:
    r"""Euclidean projection of a tangential impulse onto the pyramid's section
    :math:`|p_1| + |p_2| \le r` (the hull of :data:`PYRAMID` scaled by :math:`r`)."""
    p1, p2 = float(p[0]), float(p[1])
    a1, a2 = abs(p1), abs(p2)
    if a1 + a2 <= radius:
        return np.array([p1, p2])
    shift = 0.5 * (a1 + a2 - radius)                 # soft threshold on both entries
    if min(a1, a2) < shift:                          # ... or on the larger one alone
        return np.array([np.copysign(radius, p1), 0.0] if a1 >= a2
                        else [0.0, np.copysign(radius, p2)])
    return np.array([np.copysign(a1 - shift, p1), np.copysign(a2 - shift, p2)])


def solve_lcp_pgs(problem: ContactProblem, iterations: int = 300,
                  tolerance: float = 1e-9, initial=None) -> np.ndarray:
    r"""Stewart & Trinkle's step by projected Gauss–Seidel on the contact impulses.

    Per contact and sweep, in the contact frame with the Delassus matrix
    :math:`G = F M^{-1} F^T` and the velocity after the step :math:`u = G p + F v_{\mathrm{free}}`:

    * normal: :math:`\lambda_n \leftarrow \max(0, \lambda_n - (u_n + \phi/h)/G_{nn})`;
    * friction: a few projected-gradient steps
      :math:`p_t \leftarrow \Pi(p_t - u_t / L)` with :math:`L` the largest eigenvalue
      of the contact's tangential block of :math:`G` and :math:`\Pi` the projection on
      the pyramid :math:`|p_1| + |p_2| \le \mu\lambda_n` spanned by :data:`PYRAMID`
      at the current normal impulse (:func:`project_diamond`).  Row by row the
      friction would stall: a force along :math:`t_1` that does no work (a rigid box's
      contacts squeezing each other) would keep the pyramid's budget from the
      direction the contact slides in.

    The pyramid moves with :math:`\lambda_n`: this is Gauss–Seidel on the
    non-symmetric LCP (:func:`lcp_matrices`), not on a minimization, so convergence is
    not guaranteed in general; on the problems of the tutorial it converges, and
    :func:`complementarity_error` of :func:`lcp_variables` says how well.

    Parameters
    ----------
    problem : ContactProblem
    iterations : int
        Sweeps at most.
    tolerance : float
        Stop when a sweep changes no contact velocity :math:`u` (and no gap rate
        :math:`u_n + \phi/h`) by more than this [m/s].  The velocities converge where the
        impulses of a statically indeterminate support (a box on four corners) drift on.
    initial : (nc, 3) array_like, optional
        Warm start (default zero), such as the previous step's impulses.

    Returns
    -------
    (nc, 3) ndarray
        :math:`(\lambda_n, p_1, p_2)` per contact.
    """
    nc = problem.nc
    F = problem.frames.reshape(3 * nc, -1)
    G = F @ np.linalg.solve(problem.M, F.T)
    offset = F @ problem.v_free
    offset[0::3] += problem.phi / problem.dt
    steps = [1 / np.linalg.eigvalsh(G[3 * c + 1:3 * c + 3, 3 * c + 1:3 * c + 3])[-1]
             for c in range(nc)]
    p = np.zeros(3 * nc) if initial is None else np.array(initial, float).ravel()
    u = G @ p + offset
    for _ in range(iterations):
        previous = u
        for c in range(nc):
            n, t = 3 * c, slice(3 * c + 1, 3 * c + 3)
            p[n] = max(0.0, p[n] - (G[n] @ p + offset[n]) / G[n, n])
            for _ in range(3):
                p[t] = project_diamond(p[t] - steps[c] * (G[t] @ p + offset[t]),
                                       problem.mu[c] * p[n])
        u = G @ p + offset
        if np.max(np.abs(u - previous), initial=0.0) <= tolerance:
            break
    return p.reshape(nc, 3)


# --- Anitescu's convex relaxation ---------------------------------------------------------------

def anitescu_rows(problem: ContactProblem, regularization: float = 0.0) -> ConstraintRows:
    r"""Anitescu's relaxation as the rows of MuJoCo's solvers (unilateral, pyramidal).

    The edges :math:`n + \mu d_j` are MuJoCo's pyramidal rows
    (:func:`rbd.constraints.contact_rows.contact_rows`).  With the step's acceleration
    :math:`a = (v^+ - v)/h`, the condition
    :math:`\phi/h + J_e v^+ \ge 0` of an edge reads :math:`J_e a \ge a^{\mathrm{ref}}` with

    .. math::

        a^{\mathrm{ref}} = -\frac{J_e v}{h} - \frac{\phi}{h^2},

    MuJoCo's reference acceleration :math:`-b J v - k d \phi` at :math:`b = 1/h`,
    :math:`k d = 1/h^2`.  ``regularization`` sets :math:`R_e = \epsilon\,(J_e M^{-1}
    J_e^T)`; Anitescu's problem is :math:`\epsilon = 0` (PGS), Newton needs
    :math:`\epsilon > 0` (its cost is :math:`\tfrac12 D\,\mathrm{jar}^2` with
    :math:`D = 1/R`).
    """
    h = problem.dt
    J, aref = [], []
    for c in range(problem.nc):
        rows = problem.frames[c]                  # already in the contact frame
        edges = contact_rows(np.eye(3), rows, np.zeros_like(rows), 3,
                             [problem.mu[c], problem.mu[c], 0, 0, 0], "pyramidal")
        J.append(edges)
        aref.append(-edges @ problem.v / h - problem.phi[c] / h ** 2)
    J = np.vstack(J) if J else np.zeros((0, len(problem.v)))
    aref = np.concatenate(aref) if aref else np.zeros(0)
    diag = np.einsum("ij,ji->i", J, np.linalg.solve(problem.M, J.T))
    R = regularization * diag
    D = np.divide(1.0, R, out=np.full_like(R, np.inf), where=R > 0)   # hard rows: D = ∞
    return ConstraintRows(J=J, aref=aref, D=D, R=R)


def solve_anitescu(problem: ContactProblem, solver: str = "pgs",
                   regularization: float | None = None,
                   initial=None) -> tuple[np.ndarray, np.ndarray]:
    r"""Anitescu's step by MuJoCo's solvers on :func:`anitescu_rows`.

    Parameters
    ----------
    problem : ContactProblem
    solver : {"pgs", "newton"}
        :func:`rbd.constraints.solver_pgs.solve_pgs` on the dual (exact, :math:`R = 0`
        by default) or :func:`rbd.constraints.solver_newton.solve_newton` on the primal
        (default :math:`\epsilon = 10^{-8}`: the solution differs from Anitescu's by
        about :math:`\epsilon` relative).
    regularization : float, optional
    initial : (4 nc,) array_like, optional
        Warm start of PGS: the edge forces of the previous step.

    Returns
    -------
    v_plus : (nv,) ndarray
    force : (4 nc,) ndarray
        The edges' forces (impulse / h), four per contact.
    """
    if solver not in ("pgs", "newton"):
        raise InputError(f"solver: expected 'pgs' or 'newton', got {solver!r}")
    if regularization is None:
        regularization = 0.0 if solver == "pgs" else 1e-8
    if solver == "newton" and regularization <= 0:
        raise InputError("regularization: Newton's method needs a positive regularizer "
                         f"(the hard problem has no smooth cost), got {regularization!r}")
    rows = anitescu_rows(problem, regularization)
    a0 = (problem.v_free - problem.v) / problem.dt
    if len(rows.aref) == 0:
        return problem.v_free.copy(), np.zeros(0)
    if solver == "pgs":
        a, force = solve_pgs(problem.M, a0, rows, iterations=5000, tolerance=1e-12,
                             force_init=initial)
    else:
        a, force = solve_newton(problem.M, a0, rows)
    return problem.v + problem.dt * a, force


# --- time stepping --------------------------------------------------------------------------------

def step(model, q, v, dt: float, method: str = "lcp", solver: str = "pgs", tau=None,
         warm=None) -> tuple[np.ndarray, np.ndarray, ContactProblem, np.ndarray]:
    r"""One time step with Stewart & Trinkle's LCP or Anitescu's relaxation.

    ``warm``, the previous step's impulses, starts PGS when the step has as many
    contacts (a contact set that changed starts from zero).

    Returns
    -------
    q_plus, v_plus : ndarray
        :math:`v^+` from the contact model, :math:`q^+ = q \oplus h v^+`
        (:func:`rbd.integrate`: semi-implicit Euler).
    problem : ContactProblem
    impulses : ndarray
        ``(nc, 3)`` contact-frame impulses (LCP) or the ``4 nc`` edge forces (Anitescu).
    """
    from ..algorithms.configuration import integrate

    if method not in METHODS:
        raise InputError(f"method: expected one of {METHODS}, got {method!r}")
    if method == "lcp" and solver != "pgs":
        raise InputError(f"solver: the LCP is solved by 'pgs' only (it is not the "
                         f"optimality condition of a convex cost), got {solver!r}")
    if solver not in ("pgs", "newton"):
        raise InputError(f"solver: expected 'pgs' or 'newton', got {solver!r}")
    problem = contact_problem(model, q, v, dt, tau)
    expected = (problem.nc, 3) if method == "lcp" else (4 * problem.nc,)
    warm = warm if warm is not None and np.shape(warm) == expected else None
    if problem.nc == 0:
        v_plus, impulses = problem.v_free, np.zeros((0, 3))
    elif method == "lcp":
        impulses = solve_lcp_pgs(problem, initial=warm)
        v_plus = problem.velocity(impulses)
    else:
        v_plus, impulses = solve_anitescu(problem, solver, initial=warm)
    return integrate(model, q, v_plus, dt), v_plus, problem, impulses


@dataclasses.dataclass
class TimeSteppingRun:
    """A run of :func:`time_stepping`: times, states, contact counts and the worst
    complementarity error of the LCP steps (NaN for Anitescu's)."""

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    contact_count: np.ndarray
    complementarity: float


def time_stepping(model, q0, v0, duration: float, dt: float, method: str = "lcp",
                  solver: str = "pgs", tau=None) -> TimeSteppingRun:
    """Simulate ``model`` with :func:`step` for ``duration`` seconds at step ``dt``."""
    if not (dt > 0 and duration > 0):
        raise InputError(f"dt, duration: expected positive numbers, got {dt!r}, {duration!r}")
    steps = int(round(duration / dt))
    q, v = np.asarray(q0, float), np.asarray(v0, float)
    qs, vs, counts = [q], [v], [0]
    worst = 0.0 if method == "lcp" else np.nan
    impulses = None
    for _ in range(steps):
        q, v, problem, impulses = step(model, q, v, dt, method, solver, tau, warm=impulses)
        if method == "lcp" and problem.nc:
            A, b = lcp_matrices(problem)
            worst = max(worst, complementarity_error(A, b, lcp_variables(problem, impulses)))
        qs.append(q)
        vs.append(v)
        counts.append(problem.nc)
    return TimeSteppingRun(t=dt * np.arange(steps + 1), q=np.array(qs), v=np.array(vs),
                           contact_count=np.array(counts), complementarity=worst)


# --- the problem set ------------------------------------------------------------------------------

#: Gravity of the problem set [m/s²].
GRAVITY = 9.81
#: Detection distance of the scenes' geoms (MJCF ``gap``): contacts up to 5 mm apart are
#: reported (inactive for MuJoCo, whose ``margin`` stays 0), so that the time-stepping
#: schemes see them before they close.
GAP = 0.005


def incline_box(theta: float, mu: float = 0.5, cone: str = "pyramidal"):
    r"""A 1 kg cube of side 0.2 m resting on a slope of angle ``theta`` [rad].

    The slope is the plane :math:`z = 0` with gravity tilted by ``theta`` about
    :math:`y`, so that the box slides along :math:`+x`:
    :math:`g = 9.81\,(\sin\theta, 0, -\cos\theta)`.  Coulomb says: the box sticks for
    :math:`\tan\theta \le \mu` and slides at :math:`g(\sin\theta - \mu\cos\theta)` above.

    Returns
    -------
    model : rbd.Model
    q0 : (7,) ndarray
        The box resting on the slope (the free joint's position, quaternion ``x y z w``).
    """
    from ..mjcf import load_mjcf

    gx, gz = GRAVITY * np.sin(theta), -GRAVITY * np.cos(theta)
    friction = f'friction="{mu} 0.005 0.0001" gap="{GAP}"'
    model = load_mjcf(f"""<mujoco model="incline"><option timestep="0.002" gravity="{gx} 0 {gz}"
      cone="{cone}"/><worldbody><geom name="slope" type="plane" size="0 0 1" {friction}/>
      <body name="box" pos="0 0 0.1"><freejoint/>
        <geom type="box" size="0.1 0.1 0.1" mass="1" {friction}/>
      </body></worldbody></mujoco>""")
    return model, np.array([0, 0, 0.1, 0, 0, 0, 1.0])


def ball_on_plane(height: float = 0.3, solref=(0.02, 1.0), solimp=(0.9, 0.95, 0.001, 0.5, 2)):
    """A 1 kg ball of radius 0.1 m with its centre ``height`` above a floor, and the
    floor's and ball's MuJoCo ``solref``/``solimp`` (frictionless contact, ``condim`` 1).

    Returns ``(model, q0)``.
    """
    from ..mjcf import load_mjcf

    soft = (f'solref="{solref[0]} {solref[1]}" solimp="{" ".join(str(x) for x in solimp)}" '
            f'condim="1" gap="{GAP}"')
    model = load_mjcf(f"""<mujoco model="ball"><option timestep="0.002"/><worldbody>
      <geom name="floor" type="plane" size="0 0 1" {soft}/>
      <body name="ball" pos="0 0 {height}"><freejoint/>
        <geom type="sphere" size="0.1" mass="1" {soft}/>
      </body></worldbody></mujoco>""")
    return model, np.array([0, 0, height, 0, 0, 0, 1.0])


def box_stack(mu: float = 0.5):
    """Two 1 kg cubes of side 0.2 m stacked on a floor, the top one shifted by 5 cm.

    Returns ``(model, q0)``; ``q0`` rests both boxes on their supports.
    """
    from ..mjcf import load_mjcf

    friction = f'friction="{mu} 0.005 0.0001" gap="{GAP}"'
    model = load_mjcf(f"""<mujoco model="stack"><option timestep="0.002"/><worldbody>
      <geom name="floor" type="plane" size="0 0 1" {friction}/>
      <body name="bottom" pos="0 0 0.1"><freejoint/>
        <geom type="box" size="0.1 0.1 0.1" mass="1" {friction}/></body>
      <body name="top" pos="0.05 0 0.3"><freejoint/>
        <geom type="box" size="0.1 0.1 0.1" mass="1" {friction}/></body>
      </worldbody></mujoco>""")
    return model, np.array([0, 0, 0.1, 0, 0, 0, 1.0, 0.05, 0, 0.3, 0, 0, 0, 1.0])
