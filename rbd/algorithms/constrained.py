r"""Dynamics under bilateral constraints: closed loops, welds and joint couplings.

The constraints are those of :mod:`rbd.constraints` (by default the model's
own active ones, :attr:`rbd.Model.constraints`).  Each call computes the
joint-space terms ``M``, ``h`` on the selected backend, the constraint rows
``φ``, ``J``, ``γ = −J̇ v`` (:mod:`rbd.reference.constraints`) and solves with
:mod:`rbd.reference.constrained`.  With mimic joints the rows are computed on
the full tree and projected, ``J = J_full G``.

On the kernel backend (a model without mimic joints) :func:`constrained_dynamics`,
:func:`impulse_dynamics` and :func:`delassus` are one compiled call per state, or
per stack of states (:mod:`rbd._kernels.constrained`, run in parallel without
the GIL): its solvers are kept per model and tuple of constraints
(:func:`_solvers`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._docstrings import shared_doc
from .._validation import singular_inertia
from ..constraints.kinds import Constraint, active_constraints, pack_records
from ..errors import InputError, ModelError
from ..model import Model
from ..reference import constrained as _solve
from ..reference.constraints import constraint_rows
from ._dispatch import _F, _Q, _TAU, _V, _kernel, _twin, _validate

__all__ = ["ConstrainedDynamics", "ImpulseDynamics", "constrained_dynamics", "impulse_dynamics",
           "delassus", "constraint_jacobian", "constraint_error", "assemble", "METHODS"]

#: The solvers of :func:`constrained_dynamics`.
METHODS = ("kkt", "schur", "proximal")
_METHOD_CODE = {name: k for k, name in enumerate(METHODS)}

#: How many tuples of constraints a model keeps compiled solvers for (the oldest goes first).
_SOLVERS_KEPT = 16


@dataclass(frozen=True)
class ConstrainedDynamics:
    """Result of :func:`constrained_dynamics`: ``M q̈ + h = τ + Jᵀ force`` and ``J q̈ = γ``.

    ``qdd`` (nv,) and ``force`` (rows,) (stacked along a leading axis for a
    batch); ``rank`` of ``J``, ``iterations`` of the proximal method (1 for the
    direct ones).
    """

    qdd: np.ndarray
    force: np.ndarray
    rank: int | np.ndarray
    iterations: int | np.ndarray


@dataclass(frozen=True)
class ImpulseDynamics:
    """Result of :func:`impulse_dynamics`: post-impact ``v`` and the ``impulse`` (rows,)."""

    v: np.ndarray
    impulse: np.ndarray


class _Rows:
    """The constraints resolved on the tree the rows are computed on (the full tree for
    mimics), and the rows' derivation: the compiled twin on the kernel backend."""

    def __init__(self, model: Model, constraints, backend: str | None = None):
        if not isinstance(model, Model):
            raise InputError(f"model must be an rbd.Model, got {type(model).__name__}")
        if constraints is None:
            constraints = model.constraints
        self.model = model
        self.coupling = model.coupling() if model._mimic else None
        self.tree = model._full_tree() if model._mimic else model
        self.active = active_constraints(model, constraints)
        self.records = [c.resolve(self.tree) for c in self.active]
        self.compiled = None
        python_rows = any(r[0] == "rolling" for r in self.records)     # P(q) is Python
        twin = None if self.coupling is not None or python_rows else _kernel(model, backend)
        if twin is not None:
            from .._kernels.constraints import constraint_rows as rows

            self.packed = pack_records(self.records)
            self.compiled = lambda q, v: rows(twin, np.ascontiguousarray(q, dtype=float),
                                              np.ascontiguousarray(v, dtype=float),
                                              self.packed)

    def __call__(self, q, v):
        """``(φ, J, γ)`` at one state."""
        if self.compiled is not None:
            return self.compiled(q, v)
        if self.coupling is None:
            return constraint_rows(self.tree, q, v, self.records)
        c = self.coupling
        phi, J, gamma = constraint_rows(self.tree, c.full_q(q), c.full_v(v), self.records)
        return phi, J @ c.G, gamma


def _solvers(model, constraints, backend):
    """The compiled solvers of ``(model, constraints)`` on the kernel path, else None.

    Kept on the model (``model._derived``) under the tuple of the constraints
    (the kinds are immutable and compared by identity): the records are resolved
    and packed once.  The first lines are the hot path of a call on the default
    backend: a read of that table, which holds kernel solvers only (the default
    backend is the kernel one whenever the kernels are built).
    """
    if backend is None:
        try:
            key = (model._constraints if constraints is None else tuple(constraints)
                   if type(constraints) in (list, tuple) else (constraints,))
            return model._cache["constrained_solvers"][key]
        except (AttributeError, KeyError, TypeError):
            pass
    twin = _kernel(model, backend)
    if twin is None or model._mimic:
        return None
    if constraints is None:
        key = model.constraints
    elif isinstance(constraints, Constraint):
        key = (constraints,)
    elif isinstance(constraints, list | tuple):
        key = tuple(constraints)
    else:
        key = None
    kept = model._derived("constrained_solvers", dict)
    solver = kept.get(key) if key is not None else None
    if solver is None:
        from .._kernels._constrained_batch import ConstrainedModel

        rows = _Rows(model, constraints, backend)
        if rows.compiled is None:        # rows only Python derives (Rolling's P(q))
            return None
        solver = ConstrainedModel(twin, rows.packed,
                                  (_solve.PROXIMAL_MU, _solve.PROXIMAL_TOL,
                                   _solve.PROXIMAL_MAX_ITER),
                                  (ConstrainedDynamics, ImpulseDynamics))
        if key is not None:
            if len(kept) >= _SOLVERS_KEPT:
                kept.pop(next(iter(kept)))
            kept[key] = solver
    return solver


#: The gains of ``baumgarte=None``: no stabilization.
_NO_GAINS = (0.0, 0.0)


def _baumgarte(baumgarte) -> tuple[float, float] | None:
    if baumgarte is None:
        return None
    try:
        kp, kd = (float(x) for x in baumgarte)
    except (TypeError, ValueError):
        raise InputError(f"baumgarte must be None or (kp, kd), got {baumgarte!r}") from None
    if not (np.isfinite(kp) and np.isfinite(kd) and kp >= 0 and kd >= 0):
        raise InputError(f"baumgarte gains must be finite and >= 0, got ({kp}, {kd})")
    return kp, kd


def _states(model, specs, values):
    """Validated arrays and the list of per-state index tuples (one entry without a batch)."""
    arrays, batch = _validate(model, specs, values)
    return arrays, ([None] if batch is None else list(range(batch)))


def _at(arrays, k):
    return [a if k is None or a is None else a[k] for a in arrays]


def _stack(values, batch):
    return values[0] if batch == [None] else np.array(values)


@shared_doc
def constrained_dynamics(model: Model, q, v, tau, constraints=None, *, method: str = "kkt",
                         baumgarte=None, f_ext=None,
                         backend: str | None = None) -> ConstrainedDynamics:
    r"""Forward dynamics under bilateral constraints: ``q̈`` and the constraint forces.

    Solves ``M q̈ + h = τ + Jᵀ f`` with ``J q̈ = γ`` (``γ = −J̇ v``; RBDA §8.1,
    :ref:`Pai (5) <pai-5>` for joint coordinates).

    {parameters_model_q}
    v, tau : (nv,) or (N, nv) array_like
    constraints : sequence of constraint kinds, optional
        Default: the model's active :attr:`~rbd.Model.constraints`.
    method : {{"kkt", "schur", "proximal"}}
        The augmented system (LDLᵀ), the Delassus matrix through the Cholesky
        factor of ``M``, or the proximal iterations of Carpentier, Budhiraja &
        Mansard (RSS 2021).  All return the same ``q̈`` and, for redundant rows,
        the force of least norm.
    baumgarte : (kp, kd), optional
        Stabilization (RBDA §8.3): ``J q̈ = γ − kd J v − kp φ``.
    f_ext : (nbodies, 6) or (N, nbodies, 6) array_like, optional
        External spatial forces ``[n; f]`` on each body, in body coordinates
        (they enter ``h`` as in :func:`aba`).
    {backend}

    Returns
    -------
    ConstrainedDynamics
        ``.qdd``, ``.force`` (rows in the kinds' frames, :mod:`rbd.constraints`),
        ``.rank``, ``.iterations``.

    Raises
    ------
    InputError
        On a bad state (as :func:`rnea`), an unknown method or bad gains.
    ModelError
        When a constraint names a body, frame or joint the model lacks, or
        where ``M`` is not positive definite (a joint that moves no inertia); with
        ``method="kkt"`` only where the augmented matrix ``[[M, Jᵀ], [J, 0]]`` is
        singular too (independent rows that hold every joint ``M`` misses are solved).

    Examples
    --------
    >>> import numpy as np, rbd
    >>> from rbd import constraints as rc
    >>> model = rbd.models.double_pendulum()      # unit point masses at the links' ends
    >>> q = [np.pi / 2, -np.pi / 2]                # upper link horizontal, lower one hanging
    >>> pin = rc.PointAnchor("link2", None, [0, 0, -1], [-1.0, 0.0, -1.0])  # lower end held
    >>> res = rbd.constrained_dynamics(model, q, [0.0, 0.0], [0.0, 0.0], [pin])
    >>> bool(np.abs(res.qdd).max() < 1e-12), res.force.round(6)   # it carries both weights
    (True, array([ 0.  ,  0.  , 19.62]))
    """
    code = _METHOD_CODE.get(method) if type(method) is str else None
    if code is None:
        raise InputError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    gains = _NO_GAINS if baumgarte is None else _baumgarte(baumgarte)
    solver = _solvers(model, constraints, backend)
    if solver is not None:          # one compiled call, which validates the state
        return solver.solve(q, v, tau, f_ext, code, gains[0], gains[1])
    rows = _Rows(model, constraints, backend)
    arrays, batch = _states(model, (_Q, _V, _TAU, _F), (q, v, tau, f_ext))
    twin = _twin(model, backend)
    out = []
    for k in batch:
        q_k, v_k, tau_k, f_k = (None if a is None else a for a in _at(arrays, k))
        phi, J, gamma = rows(q_k, v_k)
        if baumgarte is not None:
            gamma = gamma - gains[1] * (J @ v_k) - gains[0] * phi            # RBDA §8.3
        M = twin.crba(q_k)
        h = (twin.nonlinear_effects(q_k, v_k) if f_k is None
             else twin.rnea(q_k, v_k, np.zeros(model.nv), f_k))            # h − Σ Jᵢᵀ f_ext,i
        try:
            if method == "proximal":
                qdd, f, its = _solve.solve_proximal(M, h, tau_k, J, gamma)
                rank = _solve.independent_rows(J, gamma)[0].shape[0]
            else:
                solver = _solve.solve_kkt if method == "kkt" else _solve.solve_schur
                (qdd, f, rank), its = solver(M, h, tau_k, J, gamma), 1
        except np.linalg.LinAlgError:
            raise singular_inertia() from None       # with independent rows: M not definite
        out.append((qdd, f, rank, its))
    return ConstrainedDynamics(*(_stack([o[i] for o in out], batch) for i in range(4)))


def _accelerations(method: str, backend: str):
    """Registry entry: ``fn(model, q, v, tau, constraints=None) -> q̈`` of one method."""
    def fn(model, q, v, tau, constraints=None):
        return constrained_dynamics(model, q, v, tau, constraints, method=method,
                                    backend=backend).qdd
    fn.__name__ = f"constrained_dynamics_{method}_{backend}"
    return fn


kkt_reference = _accelerations("kkt", "reference")
schur_reference = _accelerations("schur", "reference")
proximal_reference = _accelerations("proximal", "reference")
kkt_kernel = _accelerations("kkt", "kernel")
schur_kernel = _accelerations("schur", "kernel")
proximal_kernel = _accelerations("proximal", "kernel")


def impulse_dynamics(model: Model, q, v_minus, constraints=None, restitution: float = 0.0, *,
                     backend: str | None = None) -> ImpulseDynamics:
    r"""Velocities after an impact that makes the constraints hold: ``v⁺`` and the impulses.

    Solves ``M (v⁺ − v⁻) = Jᵀ Λ`` with ``J v⁺ = −e J v⁻`` (``e = restitution``).
    With ``e = 0`` this is the projection of ``v⁻`` onto ``J v = 0`` in the
    kinetic-energy metric (the plastic impact).

    Parameters
    ----------
    model : Model
    q : (nq,) or (N, nq) array_like
    v_minus : (nv,) or (N, nv) array_like
    constraints : sequence of constraint kinds, optional
    restitution : float
        In ``[0, 1]``.
    backend : {None, "kernel", "reference"}

    Returns
    -------
    ImpulseDynamics
        ``.v`` (nv,), ``.impulse`` (rows,).
    """
    e = float(restitution) if isinstance(restitution, int | float | np.floating) else None
    if e is None or not 0.0 <= e <= 1.0:
        raise InputError(f"restitution must be a number in [0, 1], got {restitution!r}")
    solver = _solvers(model, constraints, backend)
    if solver is not None:
        return solver.solve_impulse(q, v_minus, e)
    rows = _Rows(model, constraints, backend)
    arrays, batch = _states(model, (_Q, ("v_minus", "v")), (q, v_minus))
    twin = _twin(model, backend)
    out = []
    for k in batch:
        q_k, v_k = _at(arrays, k)
        _, J, _ = rows(q_k, v_k)
        out.append(_solve.solve_impulse(twin.crba(q_k), v_k, J, e))
    return ImpulseDynamics(*(_stack([o[i] for o in out], batch) for i in range(2)))


def _rows_only(model, q, constraints, which: int, backend=None):
    rows = _Rows(model, constraints, backend)
    (q_arr,), batch = _states(model, (_Q,), (q,))
    zero = np.zeros(model.nv)
    return rows, q_arr, batch, [rows(q_arr if k is None else q_arr[k], zero)[which]
                                for k in batch]


def constraint_jacobian(model: Model, q, constraints=None, *,
                        backend: str | None = None) -> np.ndarray:
    """The stacked constraint Jacobian ``J(q)``, ``(rows, nv)``, acting on ``v``.

    Rows in the order of ``constraints`` (default: the model's active ones),
    each kind's rows in its frame (:mod:`rbd.constraints`).
    """
    _, _, batch, J = _rows_only(model, q, constraints, 1, backend)
    return _stack(J, batch)


def constraint_error(model: Model, q, constraints=None, *,
                     backend: str | None = None) -> np.ndarray:
    """The position error ``φ(q)`` of the constraints, ``(rows,)``; zero where they hold."""
    _, _, batch, phi = _rows_only(model, q, constraints, 0, backend)
    return _stack(phi, batch)


def delassus(model: Model, q, constraints=None, *, backend: str | None = None) -> np.ndarray:
    """The Delassus matrix ``G = J M⁻¹ Jᵀ``, ``(rows, rows)``, through the factor of ``M``.

    Its rank is that of ``J``: a singular ``G`` means redundant rows (RBDA §8.1).
    """
    solver = _solvers(model, constraints, backend)
    if solver is not None:
        return solver.delassus(q)
    rows, q_arr, batch, J = _rows_only(model, q, constraints, 1, backend)
    twin = _twin(model, backend)
    out = [_solve.delassus_factor(twin.crba(q_arr if k is None else q_arr[k]), J_k)[0]
           for k, J_k in zip(batch, J, strict=True)]
    return _stack(out, batch)


def assemble(model: Model, q_guess, constraints=None, *, tol: float = 1e-12,
             max_iter: int = 50, backend: str | None = None) -> np.ndarray:
    """A configuration near ``q_guess`` where the constraints hold: ``φ(q) = 0``.

    Gauss–Newton on the manifold: ``q ← integrate(q, −J⁺ φ(q))`` with the
    least-norm step ``J⁺ φ`` (RBDA §8.3, the position projection), until
    ``max|φ| ≤ tol``.  Velocity-only kinds (``holonomic = False``, such as
    :class:`rbd.constraints.Rolling`) have no ``φ`` and are left out.  A
    velocity is made consistent with :func:`impulse_dynamics` at
    ``restitution=0``.

    Raises
    ------
    ModelError
        When the loop cannot close (no convergence within ``max_iter``),
        naming the constraint with the largest remaining error.
    InputError
        On a bad ``q_guess`` (as :func:`rnea`) or batch input.
    """
    rows = _Rows(model, constraints, backend)
    (q,), batch = _states(model, (_Q,), (q_guess,))
    if batch != [None]:
        raise InputError("q_guess: assemble takes one configuration (nq,), not a batch")
    twin = _twin(model, backend)
    zero = np.zeros(model.nv)
    q = np.array(q, dtype=float)
    # velocity-only rows (Rolling) have no position error to project away
    held = np.concatenate([np.full(c.rows, c.holonomic) for c in rows.active] + [np.zeros(0)])
    held = held.astype(bool)
    for _ in range(int(max_iter)):
        phi, J, _ = rows(q, zero)
        phi, J = phi[held], J[held]
        if phi.size == 0 or np.max(np.abs(phi)) <= tol:
            return q
        step = np.linalg.lstsq(J, phi, rcond=None)[0]
        q = twin.integrate(q, -step, 1.0)
    phi = rows(q, zero)[0][held]
    if phi.size == 0 or np.max(np.abs(phi)) <= tol:
        return q
    k = int(np.flatnonzero(held)[np.argmax(np.abs(phi))])
    owner = rows.active[int(np.searchsorted(np.cumsum([c.rows for c in rows.active]), k,
                                            side="right"))]
    phi = rows(q, zero)[0]
    raise ModelError(f"assemble: {owner!r} cannot close: its error stays {abs(phi[k]):.3g} "
                     f"(row {k}) after {int(max_iter)} Gauss-Newton steps from q_guess")
