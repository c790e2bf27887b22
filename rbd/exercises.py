"""The checks that grade the tutorials' exercises, in the student's terms.

:func:`check` compares a student's function with the model's own quantity and says which entry,
which term or which slip is wrong; :func:`check_against` compares with any reference function;
the ``check_*`` functions grade the exercises that are not a single quantity (a closed loop's
counts, the passes of RNEA, a sweep). :mod:`rbd.notebooks` turns the tutorials into notebooks
whose check cells call these, and grades a folder of submitted notebooks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["ExerciseResult", "check", "check_against", "check_dtau_dv", "check_post_impact_rates",
           "check_five_bar", "check_crank_drive", "check_mass_sweep", "check_rnea_passes",
           "check_frictionless_lcp"]

#: status words of an :class:`ExerciseResult`
PASS, FAIL, TODO = "pass", "fail", "not done"

# -- checks -------------------------------------------------------------------------------------


@dataclass
class ExerciseResult:
    """The outcome of one exercise's check.

    ``status`` is ``"pass"``, ``"fail"`` or ``"not done"``; ``message`` is one line in the
    student's terms (the worst entry and the slip behind it, or what is missing); ``report``
    the full :class:`rbd.testing.ConsistencyReport` when there is one.
    """

    exercise: str | None
    status: str
    message: str
    report: Any = None

    @property
    def ok(self) -> bool:
        return self.status == PASS

    def __str__(self) -> str:
        head = f"exercise {self.exercise}: " if self.exercise else ""
        text = f"{head}{self.status.upper()}: {self.message}"
        if self.report is not None and not self.ok:
            text += "\n" + str(self.report)
        return text


_RECORDED: list[ExerciseResult] | None = None


def _record(result: ExerciseResult) -> ExerciseResult:
    if _RECORDED is not None:
        _RECORDED.append(result)
    return result


def _fn_name(fn) -> str:
    return getattr(fn, "__name__", "your function") if callable(fn) else "your answer"


def _not_done(fn) -> str | None:
    """Why ``fn`` is still the stub, or None."""
    if fn is None or fn is Ellipsis:
        return "no answer yet: replace the ... with your own"
    return None


def _summary(report) -> str:
    """The report's lines below its table (the worst entry, the slip), on one line."""
    lines = [ln.strip() for ln in str(report).splitlines()]
    for k, line in enumerate(lines):
        if line.startswith("agreement:"):
            tail = [ln for ln in lines[k + 1:] if ln]
            if tail:
                return "; ".join(tail)
    named = [ln for ln in lines if "entry" in ln or "slip" in ln]
    return "; ".join(named) if named else (lines[0] if lines else "differs")


def check(model, quantity: str, fn, *, exercise: str | None = None,
          **kwargs) -> ExerciseResult:
    """Check an exercise answer with :func:`rbd.testing.check_consistency`.

    Parameters
    ----------
    model, quantity, fn
        As for :func:`rbd.testing.check_consistency`: the model, the quantity
        (``"mass_matrix"`` M(q), ``"bias_forces"`` h(q, q̇) = C(q, q̇) q̇ + g(q) of
        M q̈ + h = τ, ``"forward_dynamics"``, ...) and the student's function or sympy
        matrix.
    exercise
        The exercise's label, e.g. ``"10.1"`` (tutorial 10, exercise 1), shown in the result.
    **kwargs
        Passed on (``trials``, ``tolerance``, ``rng``).

    Returns
    -------
    ExerciseResult
        ``"not done"`` when ``fn`` is the stub (it raises :class:`NotImplementedError` or is
        ``...``), ``"fail"`` with the worst entry and the slip when it differs or raises,
        ``"pass"`` otherwise. Never raises for a wrong answer.
    """
    from rbd.testing import check_consistency

    why = _not_done(fn)
    if why is not None:
        return _record(ExerciseResult(exercise, TODO, why))
    name = _fn_name(fn)
    try:
        report = check_consistency(model, quantity, fn, **kwargs)
    except NotImplementedError:
        return _record(ExerciseResult(exercise, TODO, f"{name} is still the stub: write its body"))
    except Exception as exc:  # the student's code raised: say what, do not stop the notebook
        return _record(ExerciseResult(exercise, FAIL, f"{name} raised {type(exc).__name__}: {exc}"))
    if report.ok:
        return _record(ExerciseResult(exercise, PASS, f"{name} agrees ({quantity})", report))
    return _record(ExerciseResult(exercise, FAIL, _summary(report), report))


def check_against(fn: Callable, expected: Callable, cases: Iterable[tuple], *,
                  tolerance: float, what: str, exercise: str | None = None) -> ExerciseResult:
    """Check ``fn(*case)`` against ``expected(*case)`` on each case, naming the worst entry.

    For exercises whose answer is not one of :func:`rbd.testing.check_consistency`'s
    quantities (a derivative, an impact map). ``tolerance`` bounds the largest absolute
    difference; ``what`` names the result in the message (``"dtau/dv"``).
    """
    why = _not_done(fn)
    if why is not None:
        return _record(ExerciseResult(exercise, TODO, why))
    name = _fn_name(fn)
    worst = (0.0, None, None, None, None)
    for case in cases:
        try:
            yours = np.asarray(fn(*case), dtype=float)
        except NotImplementedError:
            return _record(ExerciseResult(exercise, TODO, f"{name} is still the stub: "
                                                          "write its body"))
        except Exception as exc:
            return _record(ExerciseResult(exercise, FAIL,
                                          f"{name} raised {type(exc).__name__}: {exc}"))
        want = np.asarray(expected(*case), dtype=float)
        if yours.shape != want.shape:
            return _record(ExerciseResult(exercise, FAIL, f"{name} returned shape {yours.shape}, "
                                                          f"{what} has shape {want.shape}"))
        diff = np.abs(yours - want)
        k = np.unravel_index(int(np.argmax(diff)), diff.shape) if diff.size else None
        if k is not None and diff[k] > worst[0]:
            worst = (float(diff[k]), k, float(yours[k]), float(want[k]), case)
    if worst[0] <= tolerance:
        return _record(ExerciseResult(exercise, PASS, f"{name} agrees with {what} "
                                                      f"(largest difference {worst[0]:.1e})"))
    entry = ", ".join(str(int(i)) for i in worst[1])
    return _record(ExerciseResult(exercise, FAIL, f"worst entry {what}[{entry}]: yours "
                                                  f"{worst[2]:.9g}, expected {worst[3]:.9g}"))


def check_dtau_dv(fn, *, exercise: str | None = "60.1") -> ExerciseResult:
    """Tutorial 60's exercise: ∂τ/∂q̇ of inverse dynamics against :func:`rbd.rnea_derivatives`."""
    import rbd

    tree = rbd.testing.random_model(3, 6)
    cases = [(tree, *rbd.testing.random_state(tree, seed)) for seed in (4, 5)]
    # central differences of a polynomial of degree 2 in v are exact but for rounding (1e-9)
    return check_against(fn, lambda m, q, v, a: rbd.rnea_derivatives(m, q, v, a)[1], cases,
                         tolerance=1e-8, what="dtau/dv", exercise=exercise)


def _rnea_passes(model, q, qd, qdd):
    """``(v, a, f)`` of RNEA's two passes (RBDA Table 5.1), each ``(nbodies, 6)`` in body
    coordinates: the body velocities and accelerations of the outward pass (gravity as the
    base acceleration ``a_0 = -[0; g]``) and the forces across the joints after the inward
    pass added the children's."""
    from rbd.reference.rnea import outward_step

    nb = model.nbodies
    X_up, S, v = [None] * nb, [None] * nb, [None] * nb
    a, f = np.zeros((nb, 6)), np.zeros((nb, 6))
    a0 = np.concatenate([np.zeros(3), -np.asarray(model.gravity, dtype=float)])
    for i, body in enumerate(model.bodies):
        c, f[i] = outward_step(model, i, q, qd, None, X_up, S, v)
        p = body.parent
        a[i] = X_up[i] @ (a0 if p < 0 else a[p]) + c + S[i] @ qdd[model.v_index(i)]
        f[i] = body.inertia @ a[i] + f[i]                      # RBDA T5.1
    for i in range(nb - 1, -1, -1):
        p = model.bodies[i].parent
        if p >= 0:
            f[p] = f[p] + X_up[i].T @ f[i]                       # RBDA T5.1
    return np.array(v), a, f


#: what each array of tutorial 01's second exercise is, in the order the passes compute them
_PASSES = (("outward pass", "velocity v", "of body"),
           ("outward pass", "acceleration a", "of body"),
           ("inward pass", "force f", "across the joint of body"))


def check_rnea_passes(fn: Callable, *, exercise: str | None = "01.2") -> ExerciseResult:
    """Tutorial 01's second exercise: ``fn(model, q, qd, qdd) -> (tau, v, a, f)``, RNEA
    written as its two passes, compared pass by pass with :mod:`rbd.reference.rnea`.

    On a random tree of 5 bodies (joints of 1 to 6 degrees of freedom) at two random states,
    the first quantity that differs is named in the order the algorithm computes it: the
    outward pass's velocities, then its accelerations (body 0 first), then the inward pass's
    forces (from the leaves in), then ``τ_i = S_iᵀ f_i``. The tolerance, 1e-9 relative to
    the largest entry of the quantity, is rounding for derivations in double precision.
    """
    import rbd

    why = _not_done(fn)
    if why is not None:
        return _record(ExerciseResult(exercise, TODO, why))
    name = _fn_name(fn)
    model = rbd.testing.random_model(1, 5)
    for seed in (1, 2):
        q, qd, qdd = rbd.testing.random_state(model, seed)
        answer = _answer_of(fn, exercise, model, q, qd, qdd)
        if isinstance(answer, ExerciseResult):
            return answer
        expected = (*_rnea_passes(model, q, qd, qdd), rbd.rnea(model, q, qd, qdd))
        try:
            tau, *arrays = answer
            if len(arrays) != 3:
                raise ValueError
            yours = [np.asarray(x, dtype=float) for x in (*arrays, tau)]
        except (TypeError, ValueError):
            return _record(ExerciseResult(exercise, FAIL, f"{name} returned {type(answer).__name__}"
                                                          "; return (tau, v, a, f)"))
        at = f"at the state random_state(model, {seed})"
        for k, (mine, want) in enumerate(zip(yours, expected, strict=True)):
            what = _PASSES[k][1].split()[0] if k < 3 else "tau"
            if mine.shape != want.shape:
                return _record(ExerciseResult(exercise, FAIL, f"{what} has shape {mine.shape}, "
                                                              f"expected {want.shape}"))
            tol = 1e-9 * max(1.0, float(np.abs(want).max()))
            if np.abs(mine - want).max() <= tol:
                continue
            if k == 3:
                j = int(np.argmax(np.abs(mine - want)))
                return _record(ExerciseResult(
                    exercise, FAIL, f"v, a and f agree but tau[{j}] does not {at}: yours "
                    f"{mine[j]:.6g}, expected {want[j]:.6g} (the projection τ_i = S_iᵀ f_i)"))
            order = range(model.nbodies) if k < 2 else range(model.nbodies - 1, -1, -1)
            i = next(i for i in order if np.abs(mine[i] - want[i]).max() > tol)
            c = int(np.argmax(np.abs(mine[i] - want[i])))
            passname, quantity, where = _PASSES[k]
            return _record(ExerciseResult(
                exercise, FAIL, f"{passname}: {quantity}_{i} {where} {model.body_names[i]!r} "
                f"differs first {at}, component {c}: yours {mine[i][c]:.6g}, expected "
                f"{want[i][c]:.6g}"))
    return _record(ExerciseResult(exercise, PASS, f"{name}: both passes agree with the "
                                                  "reference RNEA"))


def check_post_impact_rates(fn, *, exercise: str | None = "51.1") -> ExerciseResult:
    """Tutorial 51's exercise: the heel strike against :func:`rbd.walker.heel_strike`."""
    from rbd import walker

    model = walker.compass_gait()
    near = walker.find_limit_cycle().fixed_point
    rng = np.random.default_rng(51)
    states = [walker.PAPER_STATE, near] + [near + rng.normal(scale=0.02, size=4)
                                           for _ in range(3)]
    cases = [(model, x[:2], x[2:]) for x in states]
    # two exact derivations in double precision on rates of order 1 rad/s: rounding only
    return check_against(fn, lambda m, q, v: walker.heel_strike(m, q, v)[2], cases,
                         tolerance=1e-12, what="v+", exercise=exercise)


def _answer_of(fn, exercise: str | None, *args):
    """``fn(*args)``, or the :class:`ExerciseResult` that says why there is no answer to check."""
    why = _not_done(fn)
    if why is not None:
        return _record(ExerciseResult(exercise, TODO, why))
    name = _fn_name(fn)
    try:
        return fn(*args)
    except NotImplementedError:
        return _record(ExerciseResult(exercise, TODO, f"{name} is still the stub: "
                                                      "write its body"))
    except Exception as exc:
        return _record(ExerciseResult(exercise, FAIL, f"{name} raised {type(exc).__name__}: {exc}"))


def _closed_configuration(model, tries: int = 8) -> np.ndarray:
    """A configuration of ``model`` that satisfies its constraints, by :func:`rbd.assemble`
    from seeded random guesses; the last :class:`rbd.ModelError` when none closes."""
    import rbd

    rng = np.random.default_rng(41)
    error = None
    for _ in range(tries):
        try:
            return rbd.assemble(model, rng.uniform(-np.pi, np.pi, model.nq))
        except rbd.ModelError as exc:
            error = exc
    raise error


def check_five_bar(fn: Callable, counts: Any, *,
                   exercise: str | None = "41.1") -> ExerciseResult:
    """Tutorial 41's first exercise: the five-bar ``fn()`` and the student's
    ``counts = (rows, rank, dof)`` of its closing anchor.

    The model must have four hinges, two of them on the ground, and constraints that
    close (:func:`rbd.assemble`); at the closed configuration the constraint Jacobian's
    rows, the rank of the Delassus matrix ``G = J M⁻¹ Jᵀ`` (RBDA §8.2) and ``nv − rank``
    are computed from the student's own model and compared with ``counts``. A planar
    five-bar closed by a point anchor keeps 2 degrees of freedom.
    """
    import rbd

    model = _answer_of(fn, exercise)
    if isinstance(model, ExerciseResult):
        return model
    if not isinstance(model, rbd.Model):
        return _record(ExerciseResult(exercise, FAIL, f"{_fn_name(fn)} returned "
                                                      f"{type(model).__name__}, not an rbd.Model"))
    roots = sum(p < 0 for p in model.parent)
    if model.nbodies != 4 or model.nv != 4 or roots != 2:
        return _record(ExerciseResult(
            exercise, FAIL, f"a five-bar has four moving rods on one hinge each, two of them "
            f"cranks on the ground; yours has {model.nbodies} bodies, nv = {model.nv} and "
            f"{roots} on the ground"))
    if not model.constraints:
        return _record(ExerciseResult(exercise, FAIL, "no constraint closes the loop: pin the "
                                                      "two rods' tips with a PointAnchor"))
    try:
        q = _closed_configuration(model)
    except rbd.ModelError as exc:
        return _record(ExerciseResult(exercise, FAIL, f"the loop does not close: {exc}"))
    rows = rbd.constraint_jacobian(model, q).shape[0]
    rank = int(np.linalg.matrix_rank(rbd.delassus(model, q)))
    at = f"at the closed configuration q = {np.array2string(q, precision=3, separator=', ')}"
    if rank != 2:
        return _record(ExerciseResult(
            exercise, FAIL, f"{at} the Delassus matrix has rank {rank}, leaving "
            f"{model.nv - rank} degree(s) of freedom; a planar five-bar keeps 2 (all hinge "
            "axes parallel, the rods' tips pinned by a point, not welded)"))
    why = _not_done(counts)
    if why is not None:
        return _record(ExerciseResult(exercise, TODO, f"the five-bar closes; my_loop_counts: "
                                                      f"{why}"))
    try:
        given = tuple(int(c) for c in counts)
    except (TypeError, ValueError):
        given = ()
    if len(given) != 3:
        return _record(ExerciseResult(exercise, FAIL, f"my_loop_counts is {counts!r}; give "
                                                      "three integers (rows, rank, dof)"))
    truth = {"rows of the closing constraint": (given[0], rows, "J is "
                                                f"{rows} × {model.nv}"),
             "rank of the Delassus matrix": (given[1], rank, f"G = J M⁻¹ Jᵀ {at}"),
             "degrees of freedom left": (given[2], model.nv - rank, "nv − rank")}
    wrong = [f"{what}: yours {mine}, expected {want} ({why})"
             for what, (mine, want, why) in truth.items() if mine != want]
    if wrong:
        return _record(ExerciseResult(exercise, FAIL, "; ".join(wrong)))
    return _record(ExerciseResult(exercise, PASS, f"the five-bar closes: {rows} rows, rank "
                                                  f"{rank}, {model.nv - rank} degrees of freedom"))


#: crank speeds of tutorial 41's second exercise (rad/s), and the settling time the check
#: allows the PD law before it compares (s)
CRANK_SPEEDS, SETTLING = (2.0, 2.0), 0.5


def check_crank_drive(fn: Callable, five_bar: Callable, *,
                      exercise: str | None = "41.2") -> ExerciseResult:
    """Tutorial 41's second exercise: ``fn(model)`` drives the five-bar ``five_bar()`` and
    returns the :class:`~rbd.simulation.Trajectory`.

    After :data:`SETTLING` seconds each crank (the hinges on the ground) must turn at its
    speed of :data:`CRANK_SPEEDS` to 0.2 rad/s, and the loop must stay closed to 1e-6 m
    (RK4 with Baumgarte's stabilization keeps it near 1e-8).
    """
    import rbd

    model = _answer_of(five_bar, exercise)
    if isinstance(model, ExerciseResult):
        model.message = f"needs the five-bar of the first exercise: {model.message}"
        return model
    name = _fn_name(fn)
    traj = _answer_of(fn, exercise, model)
    if isinstance(traj, ExerciseResult):
        return traj
    if not isinstance(traj, rbd.simulation.Trajectory):
        return _record(ExerciseResult(exercise, FAIL, f"{name} returned {type(traj).__name__}, "
                                                      "not the Trajectory of rbd.simulate"))
    late = traj.t >= SETTLING
    if traj.t[-1] < 1.0 + SETTLING or traj.q.ndim != 2:
        return _record(ExerciseResult(exercise, FAIL, f"{name} simulated {traj.t[-1]:.3g} s of "
                                                      f"one run; run at least {1 + SETTLING:g} s"))
    cranks = [i for i, p in enumerate(model.parent) if p < 0]
    for i, speed in zip(cranks, CRANK_SPEEDS, strict=True):
        k = model.v_index(i).start
        off = np.abs(traj.v[late, k] - speed)
        if off.max() > 0.2:          # a PD law with a few tens of N m/rad tracks to ~0.1 rad/s
            j = int(np.argmax(off))
            return _record(ExerciseResult(
                exercise, FAIL, f"crank {model.joint_names[i]!r} turns at "
                f"{traj.v[late, k][j]:.3g} rad/s at t = {traj.t[late][j]:.3g} s, asked "
                f"{speed:g} rad/s"))
    gap = np.abs(traj.constraint_error).max()
    if gap > 1e-6:
        return _record(ExerciseResult(exercise, FAIL, f"the loop opens by {gap:.1e} m: simulate "
                                                      "enforces model.constraints unless told "
                                                      "otherwise"))
    return _record(ExerciseResult(exercise, PASS, f"both cranks turn at {CRANK_SPEEDS} rad/s, "
                                                  f"the loop stays closed to {gap:.0e} m"))


def check_mass_sweep(fn: Callable, *, exercise: str | None = "52.1") -> ExerciseResult:
    """Tutorial 52's exercise: the flip-time map ``fn()`` over ``m2 × theta1``.

    The :class:`~rbd.sweeps.SweepResult` must have the axes ``("m2", "theta1")`` over
    [0.2, 2] kg × [1.6, 3.1] rad; four of its points, drawn at random, are compared with the
    tutorial's simulation run directly (3 s, RK4 at 2 ms, every 5th sample kept). The same
    steps in another process give the same numbers, so the tolerance is rounding (1e-12 s).
    """
    import rbd
    from rbd.sweeps import SweepResult

    result = _answer_of(fn, exercise)
    if isinstance(result, ExerciseResult):
        return result
    if not isinstance(result, SweepResult):
        return _record(ExerciseResult(exercise, FAIL, f"{_fn_name(fn)} returned "
                                                      f"{type(result).__name__}, not the result "
                                                      "of rbd.sweep"))
    if tuple(result.names) != ("m2", "theta1"):
        return _record(ExerciseResult(exercise, FAIL, f"the axes are named {result.names}, "
                                                      "asked ('m2', 'theta1')"))
    for axis, (low, high) in (("m2", (0.2, 2.0)), ("theta1", (1.6, 3.1))):
        values = np.asarray(result.grid[axis], dtype=float)
        if not (np.isclose(values.min(), low) and np.isclose(values.max(), high)):
            return _record(ExerciseResult(exercise, FAIL, f"axis {axis} runs from "
                                                          f"{values.min():g} to {values.max():g}, "
                                                          f"asked {low:g} to {high:g}"))
    rng = np.random.default_rng(52)
    shape = np.shape(result.values)
    for i, j in zip(rng.integers(0, shape[0], 4), rng.integers(0, shape[1], 4), strict=True):
        m2, th1 = float(result.grid["m2"][i]), float(result.grid["theta1"][j])
        traj = rbd.simulate(rbd.models.double_pendulum(m2=m2), [th1, -th1], [0.0, 0.0], 3.0,
                            2e-3, record_every=5)
        over = (np.abs(np.cumsum(traj.q, axis=1)) > np.pi).any(axis=1)
        expected = traj.t[over.argmax()] if over.any() else np.nan
        yours = float(result.values[i, j])
        if not np.allclose(yours, expected, rtol=0, atol=1e-12, equal_nan=True):
            return _record(ExerciseResult(
                exercise, FAIL, f"flip time at m2 = {m2:.3g} kg, theta1 = {th1:.3g} rad: yours "
                f"{yours:.6g} s, direct simulation {expected:.6g} s"))
    return _record(ExerciseResult(exercise, PASS, f"the map {shape} agrees with direct "
                                                  "simulations at four points"))


def _lcp_cases() -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Tutorial 42's LCPs ``(what, A, b)``: frictionless contact problems of the dropped
    ball (landing at 1 m/s) and the two-box stack (at rest) over one step of 5 ms, and a
    random symmetric positive definite one."""
    from rbd.studies import contact_solvers as cs

    cases = []
    for what, (model, q0), speed in (("the ball landing", cs.ball_on_plane(0.104), 1.0),
                                     ("the two-box stack", cs.box_stack(), 0.0)):
        v = np.zeros(model.nv)
        v[5] = -speed                          # the first body's vertical velocity
        problem = cs.contact_problem(model, q0, v, 0.005)
        N = problem.frames[:, 0]
        A = N @ np.linalg.solve(problem.M, N.T)
        b = N @ problem.v_free + problem.phi / problem.dt
        cases.append((what, A, b))
    rng = np.random.default_rng(42)
    X = rng.normal(size=(6, 6))
    cases.append(("a random 6 x 6 LCP", X @ X.T + 0.1 * np.eye(6), rng.normal(size=6)))
    return cases


def check_frictionless_lcp(fn: Callable, *, exercise: str | None = "42.1") -> ExerciseResult:
    """Tutorial 42's exercise: ``fn(A, b) -> λ`` solves the LCP ``0 ≤ λ ⊥ A λ + b ≥ 0``.

    On the frictionless contact problems of the tutorial's ball (one contact) and stack
    (eight contacts, a singular ``A``: the normal impulses of a box on four corners are not
    unique, only complementarity is asked) and on a random positive definite LCP, the
    answer must satisfy ``λ ≥ 0``, ``w = A λ + b ≥ 0`` and ``λ_k w_k = 0`` to 1e-8 relative
    to the problem's scale ``max |b| (1 + max |λ|)`` (PGS reaches it within a few hundred
    sweeps).
    """
    why = _not_done(fn)
    if why is not None:
        return _record(ExerciseResult(exercise, TODO, why))
    name = _fn_name(fn)
    for what, A, b in _lcp_cases():
        lam = _answer_of(fn, exercise, A.copy(), b.copy())
        if isinstance(lam, ExerciseResult):
            return lam
        lam = np.asarray(lam, dtype=float)
        if lam.shape != b.shape:
            return _record(ExerciseResult(exercise, FAIL, f"{name} returned shape {lam.shape} "
                                                          f"for {what}; expected {b.shape}"))
        w = A @ lam + b
        scale = np.abs(b).max() * (1 + np.abs(lam).max())
        tol = 1e-8 * scale
        k = int(np.argmin(lam))
        if lam[k] < -tol:
            return _record(ExerciseResult(exercise, FAIL, f"{what}: λ[{k}] = {lam[k]:.3g} < 0; "
                                                          "project each update onto λ ≥ 0"))
        k = int(np.argmin(w))
        if w[k] < -tol:
            return _record(ExerciseResult(
                exercise, FAIL, f"{what}: w[{k}] = (A λ + b)[{k}] = {w[k]:.3g} < 0: contact {k} "
                "still closes (penetrates); iterate until no row changes"))
        k = int(np.argmax(np.abs(lam * w)))
        if abs(lam[k] * w[k]) > tol:
            return _record(ExerciseResult(
                exercise, FAIL, f"{what}: contact {k} pushes (λ = {lam[k]:.3g}) while it "
                f"separates (w = {w[k]:.3g}): λ w must be 0"))
    return _record(ExerciseResult(exercise, PASS, f"{name} solves the three LCPs "
                                                  "(λ ≥ 0, Aλ + b ≥ 0, λ ⟂ Aλ + b)"))


#: exercises whose check cell is replaced by a call of a dedicated check: label -> (function,
#: the answers in the notebook it is called with)
CUSTOM_CHECKS = {"01.2": ("check_rnea_passes", "my_rnea"),
                 "41.1": ("check_five_bar", "my_five_bar, my_loop_counts"),
                 "41.2": ("check_crank_drive", "my_drive, my_five_bar"),
                 "42.1": ("check_frictionless_lcp", "my_lcp_pgs"),
                 "51.1": ("check_post_impact_rates", "my_post_impact_rates"),
                 "52.1": ("check_mass_sweep", "my_mass_map"),
                 "60.1": ("check_dtau_dv", "my_dtau_dv")}
