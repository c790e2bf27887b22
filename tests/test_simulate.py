"""Tests of rbd.simulate: integrators, events, impacts, trajectories on disk."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import python_child
from scipy.special import ellipk

import rbd
from rbd.reference.kinematics import difference
from rbd.simulation import Trajectory, simulate

G = 9.81
# RK4's global error is O(dt⁴); at dt = 5 ms on a double pendulum swinging for 1 s the
# measured relative energy drift is ~1e-9, so 1e-7 leaves a factor 100 of margin.
RK4_DRIFT_BOUND = 1e-7
# solve_ivp (DOP853) at rtol = atol = 1e-10: drift is a few 1e-11; 1e-8 is a loose bound.
IVP_DRIFT_BOUND = 1e-8
# Event times: integration error (≤ 1e-10 here) plus the location tolerance.
EVENT_TIME_TOL = 1e-8
# Quaternions are renormalized by rbd.integrate at every update: round-off only.
QUAT_NORM_TOL = 1e-12


def single_pendulum(length: float = 1.0, mass: float = 1.0, gravity=(0.0, 0.0, -G)):
    """A point mass on a massless rod, hinged about y at the origin, hanging along -z."""
    model = rbd.Model(gravity=gravity, name="pendulum")
    model.add_body(-1, rbd.Revolute([0, 1, 0]), None, (mass, [0, 0, -length], np.zeros((3, 3))),
                   "bob", "hinge")
    return model


def tilted(model, angle: float = 0.4):
    """A configuration displaced from the neutral one by ``angle`` along every coordinate."""
    return rbd.integrate(model, rbd.neutral(model), np.full(model.nv, angle), 1.0)


def quaternion_norms(model, q):
    norms = []
    for i, body in enumerate(model.bodies):
        if body.joint.kind in ("spherical", "free"):
            start = model.q_index(i).start + (3 if body.joint.kind == "free" else 0)
            norms.append(np.linalg.norm(q[:, start:start + 4], axis=1))
    return np.concatenate(norms)


# --- energy ----------------------------------------------------------------------------------
def test_rk4_conserves_energy_of_a_passive_double_pendulum():
    model = rbd.models.double_pendulum()
    traj = simulate(model, [1.0, -0.5], [0.0, 0.0], duration=1.0, dt=5e-3, integrator="rk4")
    assert traj.t[-1] == pytest.approx(1.0)
    assert np.max(traj.kinetic) > 1.0          # it really swings
    assert traj.energy_drift < RK4_DRIFT_BOUND


def test_rk4_is_fourth_order_on_quaternion_joints():
    """Halving dt divides the error by ~16 (RKMK4); the uncorrected scheme would give ~4."""
    model = rbd.models.pendulum(3)
    q0, v0 = tilted(model), np.zeros(model.nv)
    exact = simulate(model, q0, v0, 0.3, 0.05, integrator="solve_ivp", rtol=1e-12, atol=1e-12)
    errors = [np.max(np.abs(difference(model, exact.q[-1],
                                       simulate(model, q0, v0, 0.3, dt).q[-1])))
              for dt in (0.02, 0.01)]
    assert errors[0] / errors[1] > 12.0


def test_semi_implicit_euler_energy_error_stays_bounded():
    """Symplectic Euler on a pendulum: an O(dt) energy oscillation that does not grow."""
    model = single_pendulum()
    dt = 1e-2
    traj = simulate(model, [0.5], [0.0], duration=10.0, dt=dt, integrator="euler")
    err = np.abs(traj.energy_error)
    quarter = len(err) // 4
    omega = np.sqrt(G)                     # small-oscillation frequency for length 1
    assert err.max() < omega * dt           # bounded at O(dt)
    assert err[-quarter:].max() < 1.1 * err[:quarter].max()   # no secular growth


def test_solve_ivp_conserves_energy_and_agrees_with_rk4():
    model = rbd.models.pendulum(2)
    q0, v0 = tilted(model), np.zeros(model.nv)
    ivp = simulate(model, q0, v0, 0.5, 0.05, integrator="solve_ivp")
    rk4 = simulate(model, q0, v0, 0.5, 5e-3, integrator="rk4")
    assert ivp.integrator == "solve_ivp (DOP853)"
    assert ivp.energy_drift < IVP_DRIFT_BOUND
    np.testing.assert_allclose(ivp.t, np.linspace(0.0, 0.5, 11), atol=1e-15)
    assert np.max(np.abs(difference(model, rk4.q[-1], ivp.q[-1]))) < 1e-7


@pytest.mark.slow
def test_solve_ivp_recentres_the_chart_of_a_spinning_free_body():
    """A torque-free body spins through many radians: energy and world momentum conserved."""
    model = rbd.testing.random_model(3, nbodies=1, floating_base=True, gravity=(0, 0, 0))
    q0 = rbd.neutral(model)
    v0 = np.array([4.0, -3.0, 5.0, 0.5, 0.2, -0.1])
    traj = simulate(model, q0, v0, 2.0, 0.1, integrator="solve_ivp")
    assert traj.energy_drift < IVP_DRIFT_BOUND

    def world_momentum(q, v):
        T = rbd.forward_kinematics(model, q)[0]
        R, p = T[:3, :3], T[:3, 3]
        n, f = np.split(model.inertias[0] @ v, 2)
        return np.concatenate([R @ n + np.cross(p, R @ f), R @ f])

    h0, h1 = world_momentum(traj.q[0], traj.v[0]), world_momentum(traj.q[-1], traj.v[-1])
    np.testing.assert_allclose(h1, h0, atol=1e-8)


@pytest.mark.parametrize("kind", ["spherical", "free"])
def test_chart_velocity_matches_finite_differences(kind):
    """ξ̇ = dexp⁻¹_{-ξ}(v): moving q = q_c ⊕ ξ at body velocity v moves ξ at ξ̇."""
    from rbd.simulation.lie import dexp_inv_exact, dexp_inv_series

    model = rbd.testing.random_model(5, nbodies=1, joint_types=("spherical",),
                                     floating_base=kind == "free")
    rng = np.random.default_rng(6)
    q_c = rbd.random_configuration(model, rng)
    xi, v = 0.8 * rng.normal(size=model.nv), rng.normal(size=model.nv)
    q = rbd.integrate(model, q_c, xi, 1.0)
    eps = 1e-6          # central differences: O(eps²) truncation, O(1e-16/eps) round-off
    fd = (difference(model, q_c, rbd.integrate(model, q, v, eps))
          - difference(model, q_c, rbd.integrate(model, q, v, -eps))) / (2 * eps)
    np.testing.assert_allclose(dexp_inv_exact(kind, xi, v), fd, atol=1e-8)
    # the truncated series used by RK4 differs at O(|ξ|⁴)
    assert np.max(np.abs(dexp_inv_series(kind, xi, v) - fd)) < 0.05


@pytest.mark.parametrize("integrator", ["euler", "rk4", "solve_ivp"])
def test_quaternion_norms_stay_one(integrator):
    model = rbd.models.pendulum(2)
    rng = np.random.default_rng(4)
    traj = simulate(model, rbd.random_configuration(model, rng), rng.normal(size=model.nv),
                    0.3, 0.01, integrator=integrator)
    assert np.max(np.abs(quaternion_norms(model, traj.q) - 1.0)) < QUAT_NORM_TOL


def test_constant_tau_does_the_work_it_should():
    """Power balance: E(T) - E(0) = ∫ vᵀτ dt = τ (θ(T) - θ(0)) for a constant torque."""
    model = single_pendulum()
    tau = np.array([0.7])
    traj = simulate(model, [0.2], [0.0], 1.0, 5e-3, tau=tau)
    work = tau[0] * (traj.q[-1, 0] - traj.q[0, 0])
    assert traj.total[-1] - traj.total[0] == pytest.approx(work, abs=1e-9)
    np.testing.assert_array_equal(traj.tau, np.tile(tau, (len(traj), 1)))


def test_callable_f_ext_can_hold_a_pendulum_still():
    """An external force cancelling gravity at the bob: the tilted pendulum does not move."""
    model = single_pendulum()
    mass, com = 1.0, np.array([0.0, 0.0, -1.0])

    def f_ext(t, q, v):
        R = rbd.forward_kinematics(model, q)[0, :3, :3]
        F = R.T @ (-mass * model.gravity)            # body coordinates
        return np.concatenate([np.cross(com, F), F])[None, :]

    traj = simulate(model, [0.6], [0.0], 0.2, 0.01, f_ext=f_ext)
    np.testing.assert_allclose(traj.q[:, 0], 0.6, atol=1e-12)
    np.testing.assert_allclose(traj.a, 0.0, atol=1e-12)


# --- events and impacts ----------------------------------------------------------------------
def crossing_vertical(direction=-1.0, terminal=True):
    def g(t, q, v):
        return q[0]

    g.terminal, g.direction = terminal, direction
    return g


@pytest.mark.parametrize(("integrator", "dt"), [("rk4", 2e-3), ("solve_ivp", 0.01)])
def test_event_time_matches_the_quarter_period(integrator, dt):
    """Released at rest from θ₀, the pendulum reaches the vertical after a quarter period,
    √(L/g) K(sin²(θ₀/2)); for small θ₀ this tends to the small-angle (π/2) √(L/g)."""
    theta0 = 0.01
    model = single_pendulum()
    exact = np.sqrt(1.0 / G) * ellipk(np.sin(theta0 / 2) ** 2)
    assert exact == pytest.approx(np.pi / 2 / np.sqrt(G), rel=theta0**2)
    traj = simulate(model, [theta0], [0.0], 2.0, dt, integrator=integrator,
                    events=[crossing_vertical()])
    assert len(traj.events) == 1
    event = traj.events[0]
    assert event.index == 0
    assert abs(event.t - exact) < EVENT_TIME_TOL
    assert traj.t[-1] == event.t                      # terminal: the run stops there
    assert event.q[0] < 0 and traj.q[-2, 0] > 0        # the recorded state is past the crossing


def test_event_is_located_to_the_stated_tolerance():
    model = single_pendulum()
    times = {}
    for tol in (1e-4, 1e-12):
        traj = simulate(model, [0.3], [0.0], 1.0, 0.05, events=[crossing_vertical()],
                        event_tol=tol)
        times[tol] = traj.events[0].t
    assert 0.0 <= times[1e-4] - times[1e-12] <= 1e-4 + 1e-12


def test_event_direction_filters_crossings():
    model = single_pendulum()
    period = 2 * np.sqrt(1.0 / G) * ellipk(np.sin(0.1 / 2) ** 2) * 2
    both = simulate(model, [0.1], [0.0], 2.1 * period, 0.02,
                    events=[crossing_vertical(direction=0, terminal=False)])
    up = simulate(model, [0.1], [0.0], 2.1 * period, 0.02,
                  events=[crossing_vertical(direction=1, terminal=False)])
    assert len(both.events) == 4 and len(up.events) == 2
    assert all(e.v[0] > 0 for e in up.events)
    assert np.all(np.diff(both.t) >= 0)


def test_impact_map_is_applied_at_each_event():
    """A pendulum hitting a wall at the vertical with restitution 1/2."""
    model = single_pendulum()

    def bounce(q, v):
        return q, -0.5 * v

    traj = simulate(model, [0.3], [0.0], 3.0, 0.01,
                    events=[crossing_vertical(direction=-1, terminal=False)], impact=bounce)
    assert len(traj.events) >= 2
    for event in traj.events:
        k = int(np.flatnonzero(traj.t == event.t)[-1])     # the post-impact sample
        np.testing.assert_array_equal(traj.v[k], -0.5 * event.v)
        np.testing.assert_array_equal(traj.v[k - 1], event.v)
    # each bounce keeps a quarter of the kinetic energy
    assert traj.total[-1] < traj.total[0] - 0.5 * traj.kinetic[traj.t == traj.events[0].t][0]


@pytest.mark.parametrize("integrator", ["rk4", "solve_ivp"])
def test_event_just_before_the_end(integrator):
    """An impact 1e-7 s before the end: the last (tiny) step still runs and reaches the end."""
    model = rbd.models.double_pendulum()

    def late(t, q, v):
        return t - (0.3 - 1e-7)

    traj = simulate(model, [0.3, 0.0], [0.0, 0.0], 0.3, 0.01, integrator=integrator,
                    events=[late], impact=lambda q, v: (q, -v))
    assert len(traj.events) == 1
    assert traj.events[0].t == pytest.approx(0.3 - 1e-7, abs=1e-10)
    assert traj.t[-1] == 0.3
    assert np.all(np.diff(traj.t) >= 0)


def test_impact_map_may_switch_the_model():
    model = single_pendulum()
    weightless = single_pendulum(gravity=(0.0, 0.0, 0.0))

    def switch(q, v):
        return weightless, q, v

    traj = simulate(model, [0.3], [0.0], 1.0, 0.01, events=[crossing_vertical(terminal=False)],
                    impact={0: switch})
    after = traj.t > traj.events[0].t
    np.testing.assert_allclose(traj.a[after], 0.0, atol=1e-12)
    np.testing.assert_allclose(traj.potential[after], 0.0, atol=1e-12)
    assert np.ptp(traj.v[after, 0]) < 1e-12          # it keeps spinning at a constant rate


# --- trajectories on disk ------------------------------------------------------------------------
@pytest.mark.parametrize("suffix", [".npz", ".csv"])
def test_save_load_round_trip(tmp_path, suffix):
    model = rbd.models.pendulum(2)
    traj = simulate(model, tilted(model), np.zeros(model.nv), 0.3, 0.01, tau=np.full(6, 0.1),
                    events=[lambda t, q, v: t - 0.123])
    assert len(traj.events) == 1
    path = traj.save(tmp_path / f"traj{suffix}")
    back = Trajectory.load(path)
    for name in ("t", "q", "v", "a", "tau", "kinetic", "potential"):
        np.testing.assert_array_equal(getattr(back, name), getattr(traj, name), err_msg=name)
    assert back.events == traj.events
    assert (back.model_name, back.integrator, back.dt, back.steps) == (
        traj.model_name, traj.integrator, traj.dt, traj.steps)


def test_csv_has_named_columns(tmp_path):
    model = rbd.models.double_pendulum()
    traj = simulate(model, [0.1, 0.0], [0.0, 0.0], 0.05, 0.01)
    path = traj.save(tmp_path / "traj.csv")
    header = path.read_text().splitlines()[1].split(",")
    assert header == ["t", "q0", "q1", "v0", "v1", "a0", "a1", "kinetic", "potential", "total"]
    assert Trajectory.load(path).tau is None


def test_trajectory_file_errors(tmp_path):
    model = rbd.models.double_pendulum()
    traj = simulate(model, [0.1, 0.0], [0.0, 0.0], 0.02, 0.01)
    with pytest.raises(rbd.InputError, match=r"\.npz or \.csv"):
        traj.save(tmp_path / "traj.txt")
    with pytest.raises(rbd.InputError, match="no trajectory file"):
        Trajectory.load(tmp_path / "missing.npz")
    bad = tmp_path / "bad.csv"
    bad.write_text("t,q0\n0,1\n")
    with pytest.raises(rbd.InputError, match="not an rbd trajectory"):
        Trajectory.load(bad)


# --- sampling, progress, bad input ------------------------------------------------------------
def test_sampling_grid_and_short_runs():
    model = rbd.models.double_pendulum()
    traj = simulate(model, [0.1, 0.0], [0.0, 0.0], 0.105, 0.01)
    np.testing.assert_allclose(traj.t, np.r_[np.arange(11) * 0.01, 0.105], atol=1e-15)
    assert traj.steps == 11
    assert len(simulate(model, [0.1, 0.0], [0.0, 0.0], 0.0, 0.01)) == 1
    one = simulate(model, [0.1, 0.0], [0.0, 0.0], 0.005, 0.01)
    np.testing.assert_array_equal(one.t, [0.0, 0.005])


def test_progress_bar_only_when_asked(capsys):
    model = single_pendulum()
    simulate(model, [0.1], [0.0], 0.05, 0.01)
    assert capsys.readouterr().err == ""
    simulate(model, [0.1], [0.0], 0.05, 0.01, progress=True)
    assert "simulated" in capsys.readouterr().err


def _raises(match, **overrides):
    model = rbd.models.pendulum(1)
    q0, v0 = rbd.neutral(model), np.zeros(3)
    kwargs = dict(model=model, q0=q0, v0=v0, duration=0.1, dt=0.01) | overrides
    before = {k: np.array(v, copy=True) for k, v in kwargs.items() if isinstance(v, np.ndarray)}
    with pytest.raises(rbd.InputError, match=match):
        simulate(**kwargs)
    for k, v in before.items():
        np.testing.assert_array_equal(kwargs[k], v)


@pytest.mark.parametrize(("overrides", "match"), [
    (dict(dt=0.0), r"dt must be finite and > 0"),
    (dict(dt=-1e-3), r"dt must be finite and > 0"),
    (dict(duration=-1.0), r"duration must be finite and >= 0"),
    (dict(duration=float("nan")), r"duration must be finite"),
    (dict(integrator="leapfrog"), r"unknown integrator 'leapfrog'"),
    (dict(method="Euler"), r"unknown solve_ivp method"),
    (dict(q0=np.zeros(3)), r"q0 must have shape \(4,\), got \(3,\)"),
    (dict(q0=np.array([0.0, 0.0, 0.0, 2.0])), r"q0: the quaternion of joint 'ball1'"),
    (dict(v0=np.zeros(4)), r"v0 must have shape \(3,\)"),
    (dict(tau=np.zeros(2)), r"tau must have shape \(3,\)"),
    (dict(tau=lambda t, q, v: np.zeros(2)), r"tau\(t, q, v\) must have shape \(3,\)"),
    (dict(f_ext=np.zeros((2, 6))), r"f_ext must have shape \(1, 6\)"),
    (dict(events=[1.0]), r"events\[0\] must be a callable"),
    (dict(events=[lambda t, q, v: "x"]), r"event 0 must return a number"),
    (dict(impact=3), r"impact must be None, a callable"),
    (dict(events=[lambda t, q, v: t - 0.05], impact={1: print}), r"impact: key 1"),
    (dict(event_tol=0.0), r"event_tol must be finite and > 0"),
    (dict(model="pendulum"), r"model must be an rbd.Model"),
])
def test_bad_input(overrides, match):
    _raises(match, **overrides)


def test_bad_impact_result():
    def g(t, q, v):
        return t - 0.05

    _raises(r"impact map must return", events=[g], impact=lambda q, v: q)
    _raises(r"q returned by the impact map: the quaternion", events=[g],
            impact=lambda q, v: (2 * q, v))
    _raises(r"impact map changed \(nq, nv\)", events=[g],
            impact=lambda q, v: (rbd.models.double_pendulum(), q, v))


def test_bad_stop_limits():
    _raises(r"max_evaluations must be finite and > 0", max_evaluations=0)
    _raises(r"max_evaluations must be a positive integer or None", max_evaluations=2.5)
    _raises(r"max_evaluations must be a positive integer or None", max_evaluations=True)
    _raises(r"min_step must be finite and >= 0", min_step=-1e-3)


# --- runs that cannot go on ----------------------------------------------------------------------
def blow_up_after(t_blow: float):
    """A torque that is zero, then infinite for t > t_blow (a broken controller)."""
    def tau(t, q, v):
        return np.full(q.shape, np.inf) if t > t_blow else np.zeros(q.shape)

    return tau


def assert_partial(error: rbd.SimulationError, duration: float):
    """The error keeps a finite trajectory that ends before the requested duration."""
    traj = error.trajectory
    assert isinstance(traj, Trajectory) and len(traj) >= 1
    for name in ("t", "q", "v", "a"):
        assert np.all(np.isfinite(getattr(traj, name))), name
    assert traj.t[-1] < duration
    assert traj.evaluations > 0


STIFF_REPRO = """
import json, sys, time
import numpy as np
import rbd
from rbd import simulate

model = rbd.models.double_pendulum()
start = time.perf_counter()
try:
    simulate(model, [0.3, 0.0], [0.0, 0.0], 1e-3, 1e-4, integrator="solve_ivp",
             tau=lambda t, q, v: 1e6 * v, backend=sys.argv[1])
    print(json.dumps({"error": None}))
except rbd.SimulationError as error:
    traj = error.trajectory
    print(json.dumps({
        "error": str(error), "seconds": time.perf_counter() - start,
        "t_end": float(traj.t[-1]), "evaluations": traj.evaluations,
        "finite": bool(np.all(np.isfinite(traj.q)) and np.all(np.isfinite(traj.v))),
    }))
"""


@pytest.mark.slow
def test_unstable_solve_ivp_run_stops_at_the_evaluation_limit(backend):
    """τ = 10⁶ v on a double pendulum (growth rate ~6·10⁶ /s): DOP853's step collapses.

    Before the limit this ran for hours (4.7 M evaluations in 40 s reached t = 1e-5 of
    1e-3 s); with the default limit it stops after ~10⁴ evaluations, about 0.4 s on the
    kernels and a few seconds on the reference here.  The evaluation count is the check;
    the 300 s timeout only guards against a hang on a loaded machine.
    """
    import json

    done = python_child(STIFF_REPRO, backend, timeout=300)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["error"] is not None
    assert "max_evaluations" in out["error"]
    assert "rtol or atol will not help" in out["error"]
    assert "'Radau'" in out["error"]
    assert out["finite"]
    assert 0.0 < out["t_end"] < 1e-3
    # default limit for duration 1e-3 s, dt 1e-4 s: 10_000 + 100 + 2 * 11 = 10_122, plus the
    # one evaluation that records the last accepted state
    assert out["evaluations"] == 10_123


def test_max_evaluations_and_min_step_are_configurable():
    model = rbd.models.double_pendulum()
    args = (model, [0.3, 0.0], [0.0, 0.0], 1.0, 0.01)
    with pytest.raises(rbd.SimulationError, match=r"max_evaluations = 200\b") as info:
        simulate(*args, integrator="solve_ivp", max_evaluations=200)
    assert_partial(info.value, 1.0)
    assert info.value.trajectory.evaluations == 201   # the limit plus the last state recorded
    with pytest.raises(rbd.SimulationError, match=r"max_evaluations = 50\b.*larger dt"):
        simulate(*args, integrator="rk4", max_evaluations=50)
    # the non-stiff run needs ~10³ evaluations a simulated second (measured: 841)
    full = simulate(*args, integrator="solve_ivp", max_evaluations=5_000)
    assert full.t[-1] == 1.0
    with pytest.raises(rbd.SimulationError, match=r"fell below min_step = 0\.5 s") as info:
        simulate(*args, integrator="solve_ivp", min_step=0.5)
    assert_partial(info.value, 1.0)


def test_min_step_ignores_the_last_clipped_step():
    """An event 1e-7 s before the end leaves a 1e-7 s step: it is not a collapse."""
    model = rbd.models.double_pendulum()
    traj = simulate(model, [0.3, 0.0], [0.0, 0.0], 0.3, 0.01, integrator="solve_ivp",
                    events=[lambda t, q, v: t - (0.3 - 1e-7)], impact=lambda q, v: (q, -v),
                    min_step=1e-4)
    assert traj.t[-1] == 0.3


def test_min_step_stops_a_collapsing_run():
    model = rbd.models.double_pendulum()
    with pytest.raises(rbd.SimulationError, match=r"fell below min_step = 1e-08 s") as info:
        simulate(model, [0.3, 0.0], [0.0, 0.0], 1e-3, 1e-4, integrator="solve_ivp",
                 tau=lambda t, q, v: 1e6 * v, min_step=1e-8)
    assert_partial(info.value, 1e-3)
    assert info.value.trajectory.evaluations < 10_000


def crossing(t, q, v):
    return q[0]


@pytest.mark.slow
@pytest.mark.parametrize("events", [(), (crossing,)], ids=["no-events", "events"])
@pytest.mark.parametrize("integrator", ["euler", "rk4", "solve_ivp"])
def test_infinite_torque_is_a_divergence_with_the_trajectory_kept(backend, integrator, events):
    model = rbd.models.double_pendulum()
    with pytest.raises(rbd.SimulationError) as info:
        simulate(model, [0.3, 0.1], [0.0, 0.0], 0.5, 1e-3, integrator=integrator,
                 tau=blow_up_after(0.1), events=list(events), backend=backend)
    message = str(info.value)
    assert message.startswith("The simulation diverged at t = ")
    assert "tau(t, q, v) returned non-finite entries" in message
    assert "(step " in message and "check tau(t, q, v)" in message.lower()
    t_div = float(message.split("t = ")[1].split(" s")[0])
    assert t_div > 0.1
    assert_partial(info.value, 0.5)
    traj = info.value.trajectory
    assert traj.t[-1] <= 0.1
    if integrator != "solve_ivp":            # fixed steps record every step up to the last
        np.testing.assert_allclose(traj.t, np.arange(101) * 1e-3, atol=1e-12)


@pytest.mark.parametrize("events", [(), (crossing,)], ids=["no-events", "events"])
@pytest.mark.parametrize("integrator", ["euler", "rk4"])
def test_unstable_fixed_step_run_diverges_with_a_clear_error(backend, integrator, events):
    """τ = 10³ v pumps energy at a rate ~6·10³ /s: the state overflows within 0.2 s."""
    model = rbd.models.double_pendulum()
    with np.errstate(over="ignore", invalid="ignore"):
        with pytest.raises(rbd.SimulationError, match=r"diverged at t = .* \(step \d+, ") as info:
            simulate(model, [0.3, 0.1], [0.0, 0.0], 1.0, 1e-3, integrator=integrator,
                     tau=lambda t, q, v: 1e3 * v, events=list(events), backend=backend)
    assert "smaller dt" in str(info.value)
    assert_partial(info.value, 1.0)
    assert np.max(np.abs(info.value.trajectory.v)) > 1e10        # it really ran away


@pytest.mark.slow
@pytest.mark.parametrize("integrator", ["euler", "rk4", "solve_ivp"])
def test_huge_gain_stops_with_a_simulation_error(backend, integrator):
    """τ = 10²⁰⁰ v: the first steps overflow (fixed steps) or the step collapses (solve_ivp)."""
    model = rbd.models.double_pendulum()
    with np.errstate(over="ignore", invalid="ignore"):
        with pytest.raises(rbd.SimulationError) as info:
            simulate(model, [0.3, 0.1], [0.0, 0.0], 0.5, 1e-3, integrator=integrator,
                     tau=lambda t, q, v: 1e200 * v, backend=backend, max_evaluations=3_000)
    assert_partial(info.value, 0.5)


def test_non_finite_force_at_the_start_keeps_no_trajectory():
    model = rbd.models.double_pendulum()
    with pytest.raises(rbd.SimulationError, match="f_ext.*non-finite.*No state was recorded"):
        simulate(model, [0.3, 0.1], [0.0, 0.0], 0.5, 1e-3,
                 f_ext=lambda t, q, v: np.full((2, 6), np.nan))


def test_progress_bar_is_closed_when_a_run_diverges(capsys):
    model = single_pendulum()
    with pytest.raises(rbd.SimulationError):
        simulate(model, [0.1], [0.0], 0.5, 0.01, tau=blow_up_after(0.2), progress=True)
    assert "simulated" in capsys.readouterr().err


def test_rbd_simulate_is_the_function_and_rbd_simulation_the_package():
    """``rbd.simulate(...)`` as the README writes it; the package under its own name."""
    import importlib

    import rbd.simulation

    assert callable(rbd.simulate) and rbd.simulate is rbd.simulation.simulate
    assert importlib.import_module("rbd.simulation").Trajectory is Trajectory
    traj = rbd.simulate(rbd.models.double_pendulum(), [0.5, -0.3], [0.0, 0.0], 0.1, 0.01)
    assert isinstance(traj, Trajectory) and traj.q.shape == (11, 2)


def test_the_kept_joint_layout_follows_a_new_body():
    """The model keeps the joint layout simulate stores on a trajectory; a body added later
    gives a new one."""
    from rbd.simulation.trajectory import joint_layout

    model = single_pendulum()
    assert joint_layout(model) is joint_layout(model)
    model.add_body(0, rbd.Revolute([0, 1, 0]), None, (1.0, [0, 0, -1.0], np.zeros((3, 3))),
                   joint_name="elbow")
    assert [row[0] for row in joint_layout(model)][-1] == "elbow"
    traj = simulate(model, np.zeros(2), np.zeros(2), 0.01, 0.01)
    assert len(traj.joints) == 2
