"""The passive compass-gait walker (Stępień, Polański & Wojciechowski §8).

The library's walker (ABA swing phase, heel strike by re-rooting, impact by
SPW (23)) is checked against the closed-form compass-gait equations written
out here, against conservation laws, and against the paper's Table 1.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import RTOL_EXACT, assert_close
from scipy.integrate import solve_ivp

import rbd
from rbd import walker
from rbd.walker import PAPER_PARAMETERS as P

#: The Newton iteration stops at |P(x) - x| < 1e-10 and the swing phase is integrated
#: with rtol 1e-10 / atol 1e-12, so an independent integration of the closed-form
#: equations reproduces the fixed point to ~1e-9; 1e-7 leaves a margin.
RTOL_CYCLE = 1e-7

#: SPW Table 1 lists the state to 4 decimals (rounding 5e-5), quoted from Hiskens (2001),
#: whose slope 0.0524 rad is itself 3° rounded; the table's state lies on our cycle to
#: 7.4e-4 (largest in the stance rate), so it is pinned at 1e-3.
ATOL_PAPER = 1e-3

#: Energy is conserved by the swing phase to the integrator's tolerance (rtol 1e-10 on
#: states of size ~1, energies ~30 J).
RTOL_ENERGY = 1e-8


@pytest.fixture(scope="module")
def cycle():
    return walker.find_limit_cycle()


# --- closed-form compass gait (absolute angles th1 = stance, th2 = swing, from the vertical)
def closed_form_mass_matrix(th1, th2, p=P):
    m, mh, l, d = p.leg_mass, p.hip_mass, p.leg_length, p.mass_position
    b = m * l * d * np.cos(th1 - th2)
    return np.array([[mh * l**2 + m * (l - d) ** 2 + m * l**2, -b], [-b, m * d**2]])


def closed_form_accelerations(th, thd, p=P):
    """Lagrange's equations of the compass gait in absolute angles."""
    m, mh, l, d, g = p.leg_mass, p.hip_mass, p.leg_length, p.mass_position, p.gravity
    s = np.sin(th[0] - th[1])
    b = m * l * d
    rhs = np.array([b * s * thd[1] ** 2 + g * (mh * l + m * (2 * l - d)) * np.sin(th[0]),
                    -b * s * thd[0] ** 2 - g * m * d * np.sin(th[1])])
    return np.linalg.solve(closed_form_mass_matrix(*th, p), rhs)


def to_absolute(x):
    """(q_st, q_sw, q̇_st, q̇_sw) -> (th1, th2), (th1', th2')."""
    return np.array([x[0], x[0] + x[1]]), np.array([x[2], x[2] + x[3]])


def closed_form_impact(th, thd, p=P):
    """Conservation of angular momentum written with point masses in the (x, z) plane."""
    m, mh, l, d = p.leg_mass, p.hip_mass, p.leg_length, p.mass_position

    def u(a):
        return np.array([-np.sin(a), np.cos(a)])

    def du(a, ad):
        return np.array([-np.cos(a), -np.sin(a)]) * ad

    def moment(r, mass, vel):          # the component about the hinge axis -y: x v_z - z v_x
        return mass * (r[0] * vel[1] - r[1] * vel[0])

    hip, v_hip = l * u(th[0]), l * du(th[0], thd[0])
    leg1, v_leg1 = (l - d) * u(th[0]), (l - d) * du(th[0], thd[0])
    leg2, v_leg2 = hip - d * u(th[1]), v_hip - d * du(th[1], thd[1])
    foot = hip - l * u(th[1])
    L_tot = sum(moment(r - foot, mass, vel)
                for r, mass, vel in ((hip, mh, v_hip), (leg1, m, v_leg1), (leg2, m, v_leg2)))
    L_trailing = moment(leg1 - hip, m, v_leg1)         # the leg leaving the ground, about the hip
    # after the impact: new stance angle th[1], new swing angle th[0]; H in relative coordinates
    B = np.array([[1.0, 0.0], [1.0, 1.0]])
    H = B.T @ closed_form_mass_matrix(th[1], th[0], p) @ B
    qd_plus = np.linalg.solve(H, [L_tot, L_trailing])
    return np.array([th[1], th[0] - th[1], *qd_plus])


def closed_form_step(x, p=P):
    """One step of the closed-form walker from the post-impact state x (relative coordinates)."""

    def f(t, y):
        th, thd = to_absolute(y)
        thdd = closed_form_accelerations(th, thd, p)
        return np.array([y[2], y[3], thdd[0], thdd[1] - thdd[0]])

    def strike(t, y):           # both feet on the ground: 2 q_st + q_sw + 2γ = 0, legs apart
        return max(2 * y[0] + y[1] + 2 * p.slope, walker.SCUFF_ANGLE - y[1])

    strike.terminal, strike.direction = True, -1
    sol = solve_ivp(f, (0, 5), x, method="DOP853", rtol=1e-11, atol=1e-13, events=strike)
    th, thd = to_absolute(sol.y_events[0][0])
    return closed_form_impact(th, thd, p), sol.t_events[0][0]


# --- the model ------------------------------------------------------------------------------
def test_model_geometry_and_mass():
    model = walker.compass_gait()
    assert model.body_names == ["leg1", "leg2"] and model.joint_names == ["stance", "hip"]
    assert model.total_mass == pytest.approx(P.hip_mass + 2 * P.leg_mass, rel=RTOL_EXACT)
    q = np.array([0.3, -0.5])
    hip = walker.frame_position(model, q, "hip")
    assert_close(hip, [-np.sin(0.3), 0, np.cos(0.3)], RTOL_EXACT, "hip leans back for q_st > 0")
    foot2 = walker.frame_position(model, q, "foot2")
    assert_close(foot2, hip + [np.sin(-0.2), 0, -np.cos(-0.2)], RTOL_EXACT, "swing foot")
    angles = walker.leg_angles(model, q, np.array([0.7, 0.2]))
    assert angles["leg1"] == pytest.approx((0.3, 0.7), rel=RTOL_EXACT)
    assert angles["leg2"] == pytest.approx((-0.2, 0.9), rel=RTOL_EXACT)


def test_swing_dynamics_match_the_closed_form_equations():
    model = walker.compass_gait()
    f = walker.swing_dynamics(model)
    rng = np.random.default_rng(0)
    for _ in range(5):
        x = rng.uniform(-1, 1, 4)
        th, thd = to_absolute(x)
        thdd = closed_form_accelerations(th, thd)
        assert_close(f(0.0, x)[2:], [thdd[0], thdd[1] - thdd[0]], RTOL_EXACT, "accelerations")


def test_either_leg_carrying_the_hip_mass_gives_the_same_inertia():
    model = walker.compass_gait()
    q = np.array([0.2, -0.6])
    other, q_other, _ = rbd.topology.reroot(model, q, np.zeros(2), "leg2",
                                            walker.frame_position(model, q, "foot2"),
                                            "revolute", axis=walker.AXIS)
    assert other.body_names == ["leg2", "leg1"]
    assert_close(rbd.crba(other, q_other), rbd.crba(model, q_other), RTOL_EXACT, "H")


# --- heel strike (SPW §8.5) -----------------------------------------------------------------
def test_heel_strike_exchanges_legs_keeps_configuration_and_conserves_momenta():
    model = walker.compass_gait()
    x = walker.PAPER_STATE
    q, v = x[:2], x[2:]
    new, q_new, v_new = walker.heel_strike(model, q, v)
    assert walker.stance_leg(new) == "leg2" and walker.swing_leg(new) == "leg1"
    for frame in ("hip", "foot1", "foot2"):
        assert_close(walker.frame_position(new, q_new, frame),
                     walker.frame_position(model, q, frame), RTOL_EXACT, frame)
    foot, hip = walker.frame_position(model, q, "foot2"), walker.frame_position(model, q, "hip")
    for point, bodies in ((foot, None), (hip, ["leg1"])):
        before = walker.angular_momentum(model, q, v, point, bodies)
        after = walker.angular_momentum(new, q_new, v_new, point, bodies)
        assert_close(after @ walker.AXIS, before @ walker.AXIS, RTOL_EXACT, "momentum")
    # the new stance foot is at rest, the trailing foot lifts off, energy is lost
    assert_close(rbd.jacobian(new, q_new, "foot2")[3:] @ v_new, np.zeros(3), RTOL_EXACT, "foot")
    lift = P.normal @ (rbd.jacobian(new, q_new, "foot1")[3:] @ v_new)
    assert lift > 0
    assert rbd.kinetic_energy(new, q_new, v_new) < rbd.kinetic_energy(model, q, v)


def test_heel_strike_matches_the_closed_form_impact():
    x = walker.PAPER_STATE
    _, q_new, v_new = walker.heel_strike(walker.compass_gait(), x[:2], x[2:])
    expected = closed_form_impact(*to_absolute(x))
    assert_close(np.concatenate([q_new, v_new]), expected, RTOL_EXACT, "post-impact state")


def test_heel_strike_matches_an_impulse_on_the_floating_walker():
    """Re-root with a free top joint, stop the foot by an impulse: M Δv = Jᵀ Λ, J v⁺ = 0."""
    model = walker.compass_gait()
    x = walker.PAPER_STATE
    foot = walker.frame_position(model, x[:2], "foot2")
    free, qf, vf = rbd.topology.reroot(model, x[:2], x[2:], "leg2", foot, "free")
    M = rbd.crba(free, qf)
    J = np.zeros((3, free.nv))
    J[:, 3:6] = np.eye(3)                            # the foot's linear velocity (body frame)
    K = np.block([[M, -J.T], [J, np.zeros((3, 3))]])
    v_plus = np.linalg.solve(K, np.concatenate([M @ vf, np.zeros(3)]))[:free.nv]
    _, q_new, v_new = walker.heel_strike(model, x[:2], x[2:])
    pinned, qp, vp = rbd.topology.reroot(free, qf, v_plus, "leg2", foot, "revolute",
                                         axis=walker.AXIS)
    assert_close(qp, q_new, RTOL_EXACT, "configuration")
    assert_close(vp, v_new, RTOL_EXACT, "post-impact velocity")


#: Three exact derivations of one impact map in double precision on angles and rates of
#: order 1: they differ by rounding only (measured 6e-15 over 200 states), so 1e-12.
ATOL_IMPACT = 1e-12


def momentum_balance(model, q, v):
    """SPW (23) in closed form: H(q) q̇⁺ = [L_tot⁻, L_sw⁻] on the walker re-rooted at the foot."""
    foot = walker.frame_position(model, q, "foot2")
    hip = walker.frame_position(model, q, "hip")
    new, q_new, _ = rbd.topology.reroot(model, q, v, "leg2", foot, "revolute", axis=walker.AXIS)
    L = [walker.AXIS @ walker.angular_momentum(model, q, v, foot),
         walker.AXIS @ walker.angular_momentum(model, q, v, hip, ["leg1"])]
    return q_new, np.linalg.solve(rbd.crba(new, q_new), L)


@pytest.mark.parametrize("seed", [None, 1, 2, 3])
def test_heel_strike_is_impulse_dynamics_with_the_landing_foot_anchored(seed):
    """The heel strike equals rbd.impulse_dynamics with a PointAnchor of the landing foot on the
    walker freed at that foot, SPW (23)'s momentum balance and the point-mass closed form."""
    x = walker.PAPER_STATE.copy()
    if seed is not None:
        x += np.random.default_rng(seed).normal(scale=0.1, size=4)
    model = walker.compass_gait()
    q, v = x[:2], x[2:]
    new, q_new, v_new = walker.heel_strike(model, q, v)
    foot = walker.frame_position(model, q, "foot2")
    free, qf, vf = rbd.topology.reroot(model, q, v, "leg2", foot, "free")
    anchor = rbd.constraints.PointAnchor("foot2", None, np.zeros(3), foot)
    impact = rbd.impulse_dynamics(free, qf, vf, [anchor])
    # the same motion seen through a free top joint again: the impulse's v⁺ (SPW A3)
    _, _, v_back = rbd.topology.reroot(new, q_new, v_new, "leg2", foot, "free")
    np.testing.assert_allclose(v_back, impact.v, rtol=0, atol=ATOL_IMPACT)
    np.testing.assert_allclose(rbd.constraint_jacobian(free, qf, [anchor]) @ impact.v,
                               np.zeros(3), rtol=0, atol=ATOL_IMPACT)
    q_spw, v_spw = momentum_balance(model, q, v)
    np.testing.assert_allclose(q_new, q_spw, rtol=0, atol=ATOL_IMPACT)
    np.testing.assert_allclose(v_new, v_spw, rtol=0, atol=ATOL_IMPACT)
    np.testing.assert_allclose(np.concatenate([q_new, v_new]),
                               closed_form_impact(*to_absolute(x)), rtol=0, atol=ATOL_IMPACT)


# --- the limit cycle -------------------------------------------------------------------------
def test_limit_cycle_entry_point_returns_the_documented_attributes(cycle):
    assert isinstance(cycle.post_impact, np.ndarray) and cycle.post_impact.shape == (4,)
    assert isinstance(cycle.multipliers, np.ndarray) and cycle.multipliers.shape == (3,)
    assert isinstance(cycle.step_period, float) and isinstance(cycle.step_length, float)
    assert cycle.residual < 1e-10
    assert "Floquet multipliers" in str(cycle)


def test_fixed_point_is_a_fixed_point_of_the_closed_form_walker(cycle):
    x_next, period = closed_form_step(cycle.post_impact)
    assert_close(x_next, cycle.post_impact, RTOL_CYCLE, "P(x*)")
    assert period == pytest.approx(cycle.step_period, rel=RTOL_CYCLE)


def test_limit_cycle_agrees_with_the_paper_table_1(cycle):
    """SPW Table 1 (after Hiskens 2001): the walker's state at heel strike, before the impact."""
    paper = walker.PAPER_STATE              # q_st, q_sw, q̇_st, q̇_sw = -0.3236, 0.5424, ...
    np.testing.assert_allclose(cycle.fixed_point, paper, atol=ATOL_PAPER, rtol=0)
    # both feet on the slope at the strike: q_sw = -2 q_st - 2γ (Table 1 satisfies it too)
    assert paper[1] == pytest.approx(-2 * paper[0] - 2 * P.slope, abs=1e-4)
    assert cycle.step_length == pytest.approx(
        2 * P.leg_length * np.sin(cycle.post_impact[1] / -2), rel=RTOL_EXACT)


def test_the_paper_state_walks_onto_the_cycle(cycle):
    """From Table 1 the walker settles: the gap shrinks like max|λ| per step."""
    model = walker.compass_gait()
    x = walker.PAPER_STATE
    new, q, v = walker.heel_strike(model, x[:2], x[2:])
    steps = walker.walk(np.concatenate([q, v]), 10, model=new)
    assert len(steps) == 10
    gaps = [np.linalg.norm(s.x_plus - cycle.post_impact) for s in steps]
    assert gaps[-1] < 1e-4 < ATOL_PAPER
    assert gaps[-1] < gaps[0] * 2 * np.max(np.abs(cycle.multipliers)) ** 8


def test_floquet_multipliers_describe_the_linearized_map(cycle):
    assert cycle.stable and np.max(np.abs(cycle.multipliers)) < 1
    # small kicks along the section come back scaled by the Jacobian (a central difference
    # over 1e-5 of a map integrated to ~1e-10 is good to ~1e-5; 1e-4 leaves a margin)
    z, dz = cycle.post_impact[[0, 2, 3]], np.array([1.0, -2.0, 0.5])
    plus = walker.poincare_map(walker.on_section(z + 1e-5 * dz))
    minus = walker.poincare_map(walker.on_section(z - 1e-5 * dz))
    assert_close((plus - minus)[[0, 2, 3]] / 2e-5, cycle.jacobian @ dz, 1e-4, "linearization")
    assert np.prod(cycle.multipliers).real == pytest.approx(np.linalg.det(cycle.jacobian),
                                                            rel=1e-8)


def test_variational_jacobian_agrees_with_the_differenced_steps(cycle):
    """Monodromy by rbd.aba_derivatives + saltation + impact Jacobian vs differenced steps.

    The differenced Jacobian (steps of 1e-5 of a map integrated to rtol 1e-10) carries
    an error of ~1e-10 / 1e-5 = 1e-5; the variational one is good to the integration
    tolerance and the 1e-10 of its two differenced algebraic factors.  The two agree
    to 1e-7 in practice; 1e-5 is the differenced Jacobian's own error bound.
    """
    assert cycle.variational_jacobian.shape == (3, 3)
    assert_close(cycle.variational_jacobian, cycle.jacobian, 1e-5, "section Jacobian")
    np.testing.assert_allclose(cycle.variational_multipliers, cycle.multipliers, atol=1e-5)
    assert "from the variational equations" in str(cycle)
    # and it predicts a kick: a central difference of whole steps over 1e-4 carries
    # ~1e-10 / 1e-4 = 1e-6 of integration error and ~1e-8 of truncation
    z, dz = cycle.post_impact[[0, 2, 3]], np.array([1.0, -2.0, 0.5])
    plus = walker.poincare_map(walker.on_section(z + 1e-4 * dz))[[0, 2, 3]]
    minus = walker.poincare_map(walker.on_section(z - 1e-4 * dz))[[0, 2, 3]]
    assert_close((plus - minus) / 2e-4, cycle.variational_jacobian @ dz, 1e-6, "kick")


def test_energy_is_conserved_in_flight_and_the_impact_pays_for_the_descent(cycle):
    s = walker.step(walker.compass_gait(), cycle.post_impact, samples=50)
    E = [rbd.kinetic_energy(s.model, x[:2], x[2:]) + rbd.potential_energy(s.model, x[:2])
         for x in s.x]
    assert np.ptp(E) <= RTOL_ENERGY * abs(E[0])
    lost = (rbd.kinetic_energy(s.model, s.x_minus[:2], s.x_minus[2:])
            - rbd.kinetic_energy(s.next_model, s.x_plus[:2], s.x_plus[2:]))
    descent = s.model.total_mass * P.gravity * s.length * np.sin(P.slope)
    assert lost == pytest.approx(descent, rel=1e-8)


def test_two_steps_return_to_the_fixed_point_with_the_legs_back(cycle):
    steps = walker.walk(cycle.post_impact, 2)
    assert [walker.stance_leg(s.model) for s in steps] == ["leg1", "leg2"]
    assert walker.stance_leg(steps[-1].next_model) == "leg1"
    assert_close(steps[-1].x_plus, cycle.post_impact, RTOL_CYCLE, "x after two steps")


@pytest.mark.slow
def test_the_walker_keeps_walking_for_forty_steps(cycle):
    """Each heel strike re-roots the tree; the rotations it composes stay proper rotations.

    Before they were re-orthonormalized, rounding in the composed rotations grew
    step after step until the 19th step's model was refused ("X_tree rotation is
    not a proper rotation").  On the stable cycle every step ends on the fixed
    point again, with the legs exchanged.
    """
    steps = walker.walk(cycle.post_impact, 40)
    assert len(steps) == 40
    assert_close(steps[-1].x_plus, cycle.post_impact, RTOL_CYCLE, "x after forty steps")
    for body in steps[-1].next_model.bodies:
        E = body.X_tree[:3, :3]
        assert np.abs(E @ E.T - np.eye(3)).max() < 1e-14


def test_a_walker_pushed_too_hard_falls():
    x = walker.on_section([0.35, -0.2, 0.0])        # leaning back with no forward speed
    with pytest.raises(walker.FallError, match="the walker fell"):
        walker.step(walker.compass_gait(), x)


def test_bad_parameters_raise_input_error():
    with pytest.raises(rbd.InputError, match="hip_mass must be a positive number"):
        walker.find_limit_cycle(hip_mass=-1.0)
    with pytest.raises(rbd.InputError, match="mass_position must lie on the leg"):
        walker.WalkerParameters(mass_position=2.0)
    with pytest.raises(rbd.InputError, match="slope must be in"):
        walker.WalkerParameters(slope=np.nan)


# --- figures and the command ------------------------------------------------------------------
@pytest.mark.slow
def test_figures_show_two_branches_and_energy_lines(cycle):
    pytest.importorskip("matplotlib")
    from rbd import plotting

    fig = plotting.plot_walker_phase_portrait(cycle, steps=2)
    lines = [line for line in fig.axes[0].lines if len(line.get_xdata()) > 2]
    assert len(lines) == 2                              # stance and swing branches
    fig2 = plotting.plot_walker_energy(cycle, steps=2)
    assert [t.get_text() for t in fig2.axes[0].texts] == ["A", "B", "C", "A'", "B'", "C'"]


def test_swing_samples_are_equally_spaced_and_end_at_the_strike(cycle):
    s = walker.step(walker.compass_gait(), cycle.post_impact, samples=7)
    assert s.t.shape == (7,) and s.x.shape == (7, 4)
    np.testing.assert_allclose(np.diff(s.t), s.duration / 6, rtol=1e-12)
    assert s.t[-1] == s.duration
    # the sampling run ends at the strike time without the event: the same state to the
    # solver's tolerance (rtol 1e-10 on states of size ~1)
    assert_close(s.x[-1], s.x_minus, 1e-8, "last sample")


# --- basin of attraction on Dask --------------------------------------------------------------
def test_basin_of_attraction_on_a_local_cluster(cycle):
    distributed = pytest.importorskip("dask.distributed", reason="needs the 'parallel' extra")
    x = cycle.post_impact
    angles = [x[0] - 0.1, x[0], x[0] + 0.1]
    rates = [x[3] - 0.3, x[3], x[3] + 0.3]
    with distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=1,
                                  dashboard_address=None) as cluster:
        basin = walker.basin_of_attraction(angles, rates, steps=2, cycle=cycle,
                                           scheduler=cluster.scheduler_address, progress=False)
    assert basin.steps_taken.shape == basin.converged.shape == (3, 3)
    assert basin.converged[1, 1] and basin.distance[1, 1] < 1e-8
    assert basin.steps_taken[2, 1] < 2                 # leaning far back, it falls at once
    assert basin.steps_taken.min() >= 0 and basin.steps_taken.max() <= 2
    pytest.importorskip("matplotlib")
    from rbd.plotting import plot_basin

    fig = plot_basin(basin)
    assert fig.axes[0].get_xlabel().startswith("swing rate")


def test_basin_without_dask_says_which_extra_to_install(monkeypatch, cycle):
    import sys

    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    with pytest.raises(ImportError, match=r"install the 'parallel' extra"):
        walker.basin_of_attraction([0.2], [0.7], cycle=cycle, progress=False)


def test_basin_rejects_bad_arguments(cycle):
    pytest.importorskip("dask.distributed", reason="needs the 'parallel' extra")
    with pytest.raises(rbd.InputError, match="steps must be at least 1"):
        walker.basin_of_attraction([0.2], [0.7], steps=0, cycle=cycle, progress=False)
    with pytest.raises(rbd.InputError, match="scheduler must be None"):
        walker.basin_of_attraction([0.2], [0.7], cycle=cycle, scheduler=3, progress=False)


def _grid_cell(a, b):
    return 10 * a + b


def test_sweep_maps_over_the_grid_in_chunks_and_keeps_its_shape():
    distributed = pytest.importorskip("dask.distributed", reason="needs the 'parallel' extra")
    from rbd.sweeps import sweep

    with distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=1,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        out = sweep(_grid_cell, {"a": [1, 2, 3], "b": np.array([0.5, 0.25])}, chunk=4,
                    scheduler=client, progress=False)
    assert out.shape == (3, 2)
    assert out.tolist() == [[10.5, 10.25], [20.5, 20.25], [30.5, 30.25]]
    with pytest.raises(rbd.InputError, match="chunk must be a positive integer"):
        sweep(_grid_cell, {"a": [1]}, chunk=0, progress=False)
    with pytest.raises(rbd.InputError, match="grid must be a non-empty mapping"):
        sweep(_grid_cell, {}, progress=False)
