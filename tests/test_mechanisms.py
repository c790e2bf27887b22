"""Mechanisms with complex joints: closed-form frames, contact kinematics, energy."""

import numpy as np
import pytest
import sympy
from helpers import RTOL_EXACT, assert_close

import rbd
from rbd import geometry
from rbd import spatial as sp
from rbd.models import mechanisms as mech
from rbd.symbolic import frames, lagrangian

#: Closed-form and generic frames are two evaluations of the same vectors.
RTOL_FRAME = 1e-12
#: rbd.simulate's RK4 with dt = 1e-3 over 0.3 s.  Its energy error is truncation error
#: (doubling dt multiplies it by 15.9-17.1 on every mechanism of SMALL, the 2⁴ of a
#: fourth-order method); the largest, 9.3e-12 relative, is TC2 on the spline.  1e-10
#: leaves a 10x margin for other platforms and is still 1e4 below what a first-order
#: error (~dt) would give.
RTOL_ENERGY = 1e-10
#: The rolling ball (KKT dynamics, the same RK4, dt = 2e-3 over 0.4 s) keeps its energy
#: to 3.9e-10 relative, again truncation error (x15 for dt doubled); 1e-8 leaves a 25x margin.
RTOL_ROLLING_ENERGY = 1e-8

u, v, s = sympy.symbols("u v s", real=True)

SURFACES = [
    geometry.Torus(0.5, 0.1),
    geometry.Sphere(0.3),
    geometry.Ellipsoid(0.4, 0.25, 0.15),
    geometry.Plane((0.1, 0.2, 0.3), (1.0, 0.0, 0.0), (0.0, 0.6, 0.8)),
    geometry.Torus(0.5, 0.1).transformed(sp.so3_exp(np.array([0.3, -0.2, 0.5])), (0, 0, 1)),
]


@pytest.mark.parametrize("surface", SURFACES, ids=repr)
def test_closed_form_surface_frames_match_geometry(surface):
    outward = sympy.lambdify((u, v), frames.surface_frame(surface, u, v))
    inward = sympy.lambdify((u, v), frames.surface_frame(surface, u, v, outward=False))
    for point in [(0.3, 0.4), (2.1, -0.9), (-1.0, 1.2)]:
        F = surface.frame(*point)
        assert_close(outward(*point), F, RTOL_FRAME, "frame")
        G = inward(*point)
        assert_close(G[:3, 2], -F[:3, 2], RTOL_FRAME, "inward normal")
        assert_close(G[:3, 3], F[:3, 3], RTOL_FRAME, "contact point")
        assert_close(G[:3, :3].T @ G[:3, :3], np.eye(3), RTOL_FRAME, "rotation")
        assert np.linalg.det(G[:3, :3]) > 0


def test_closed_form_helix_frame_matches_geometry():
    helix = geometry.Helix(0.5, 0.1)
    frame = sympy.lambdify(s, frames.curve_frame(helix, s))
    for t in (0.0, 0.7, -2.3):
        assert_close(frame(t), helix.frame(t), RTOL_FRAME, "Frenet frame")


# --- Si & Guenter, Table 1: DoF of TC10, TC20 and the windmill ---------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("builder, dof", [
    (lambda: mech.torus_chain(10), 38),
    (lambda: mech.torus_chain(20), 78),
    (mech.windmill, 73),
])
def test_table1_degrees_of_freedom(builder, dof):
    model = builder()
    assert model.nv == model.nq == dof


def body_pose(model, q, i):
    return rbd.forward_kinematics(model, q, backend="reference")[i]


def test_torus_chain_keeps_tubes_in_contact():
    """At any q, the parent's contact point equals the child's, normals opposite (GL (15))."""
    model = mech.torus_chain(3)
    torus = mech.body_shapes(model)["torus1"]
    rng = np.random.default_rng(21)
    q = rbd.neutral(model) + rng.uniform(-0.4, 0.4, model.nq)
    for i in (1, 2):
        u1, v1, u2, v2 = q[model.q_index(i)]
        parent = body_pose(model, q, i - 1) @ torus.frame(u1, v1)
        child = body_pose(model, q, i) @ torus.frame(u2, v2)
        assert_close(parent[:3, 3], child[:3, 3], RTOL_EXACT, "contact point")
        assert_close(parent[:3, 2], -child[:3, 2], RTOL_EXACT, "normals")


def test_torus_chain_hangs_straight_down():
    model = mech.torus_chain(4, R=0.5, r=0.1)
    T = rbd.forward_kinematics(model, rbd.neutral(model), backend="reference")
    # consecutive centres are 2 (R - r) apart along -z; each torus axis turned 90°
    assert_close(T[:, :3, 3], [[0, 0, -0.4], [0, 0, -1.2], [0, 0, -2.0], [0, 0, -2.8]],
                 RTOL_EXACT, "centres")
    for i in range(3):
        assert abs(T[i, :3, 2] @ T[i + 1, :3, 2]) < 1e-12


def test_bead_stays_on_the_wire():
    model = mech.bead_on_wire()
    helix = mech.body_shapes(model)["world"][1]
    for t in (0.0, 1.3, -4.0):
        T = body_pose(model, np.array([t]), 0)
        assert_close(T[:3, 3], helix.position(t), RTOL_EXACT, "on the wire")
        assert_close(T[:3, 0], helix.frenet(t)[0], RTOL_EXACT, "along the tangent")


def test_wheels_roll_without_slip():
    """The wheel point touching the track (or the other wheel) has the same velocity."""
    model = mech.rolling_wheels(track_radius=1.0, r1=0.3, r2=0.12)
    rng = np.random.default_rng(22)
    q, qd = rng.uniform(0.5, 2.5, 2), rng.normal(size=2)
    T = rbd.forward_kinematics(model, q, backend="reference")
    c1, c2 = T[0, :3, 3], T[1, :3, 3]
    contact1 = c1 / np.linalg.norm(c1) * 1.0
    contact2 = c1 + (c2 - c1) / np.linalg.norm(c2 - c1) * 0.3

    def point_velocity(body, world_point):
        local = T[body, :3, :3].T @ (world_point - T[body, :3, 3])
        return rbd.jacobian(model, q, body, local, backend="reference")[3:] @ qd

    assert_close(point_velocity(0, contact1), np.zeros(3), RTOL_EXACT, "on the track")
    assert_close(point_velocity(1, contact2), point_velocity(0, contact2), RTOL_EXACT,
                 "wheel on wheel")


@pytest.mark.slow
def test_four_bar_knee_closes_its_loop():
    knee = mech.KNEE
    joint = mech.four_bar_coupler(**knee)
    for theta in np.linspace(0.3, 3.0, 7):
        R, B = joint.transform(np.array([theta]))
        C = B + R @ np.array([knee["coupler"], 0.0, 0.0])
        assert np.linalg.norm(B) == pytest.approx(knee["crank"], rel=1e-12)
        assert np.linalg.norm(C - [knee["ground"], 0, 0]) == pytest.approx(knee["rocker"],
                                                                            rel=1e-12)


# --- dynamics ------------------------------------------------------------------------------
SMALL = {
    "bead": mech.bead_on_wire,
    "wheels": mech.rolling_wheels,
    "knee": mech.four_bar_knee,
    "TC2": lambda: mech.torus_chain(2),
    "TC2 on spline": lambda: mech.torus_chain_on_spline(2),
    "board": mech.board_on_bezier_surface,
}


def _backend():
    return "kernel" if rbd.has_kernels() else "reference"


def energy(model, q, qd):
    return rbd.kinetic_energy(model, q, qd) + rbd.potential_energy(model, q)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SMALL))
def test_passive_mechanism_conserves_energy(name):
    model = SMALL[name]()
    rng = np.random.default_rng(23)
    q0 = rbd.neutral(model) + rng.uniform(-0.2, 0.2, model.nq)
    qd0 = rng.normal(size=model.nv) * 0.5
    traj = rbd.simulate(model, q0, qd0, duration=0.3, dt=1e-3, backend=_backend())
    E0 = energy(model, q0, qd0)
    assert np.abs(traj.total - E0).max() <= RTOL_ENERGY * max(1.0, abs(E0))
    assert not np.allclose(traj.q[-1], q0)  # it moved


@pytest.mark.parametrize("name", ["bead", "wheels", "knee"])
def test_symbolic_lagrangian_on_mechanisms(name):
    model = SMALL[name]()
    gl = lagrangian(model)
    rng = np.random.default_rng(24)
    q = rbd.neutral(model) + rng.uniform(-0.3, 0.3, model.nq)
    qd, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
    assert_close(gl.forward_dynamics(q, qd, tau), rbd.aba(model, q, qd, tau,
                                                           backend="reference"), 1e-9, "aba")
    assert_close(gl.inverse_dynamics(q, qd, tau), rbd.rnea(model, q, qd, tau,
                                                           backend="reference"),
                 RTOL_EXACT, "rnea")


@pytest.mark.slow
@pytest.mark.skipif(not rbd.has_kernels(), reason="compiled kernels not built")
def test_windmill_kernel_agrees_with_reference():
    model = mech.windmill()
    rng = np.random.default_rng(25)
    q = rbd.neutral(model) + rng.uniform(-0.2, 0.2, model.nq)
    qd, tau = rng.normal(size=model.nv) * 0.3, rng.normal(size=model.nv)
    assert_close(rbd.rnea(model, q, qd, tau, backend="kernel"),
                 rbd.rnea(model, q, qd, tau, backend="reference"), RTOL_EXACT, "rnea")


def test_bad_arguments():
    with pytest.raises(rbd.ModelError, match="at least one torus"):
        mech.torus_chain(0)
    with pytest.raises(rbd.ModelError, match="0 < r < R"):
        mech.torus_chain(3, R=0.1, r=0.2)
    with pytest.raises(rbd.ModelError, match="at least one arm"):
        mech.windmill(arms=0)
    with pytest.raises(rbd.ModelError, match="at least one torus"):
        mech.torus_chain_on_spline(0)
    with pytest.raises(rbd.ModelError, match="0 < length < mast"):
        mech.board_on_bezier_surface(length=0.3, mast=0.25)
    with pytest.raises(rbd.ModelError, match="tangent at s = 1/2 is vertical"):
        mech.torus_chain_on_spline(2, control_points=[[0, 0, 0], [0, 0, 1], [0, 0, 2]])
    with pytest.raises(rbd.ModelError, match="axis must be 'x' or 'z'"):
        frames.curve_joint(geometry.Helix(), axis="y")
    points = mech.SPLINE_POINTS.copy()
    with pytest.raises(rbd.InputError, match=r"shape \(n \+ 1, 3\)"):
        frames.BezierCurve(points[:, :2])
    with pytest.raises(rbd.InputError, match=r"shape \(m \+ 1, n \+ 1, 3\)"):
        frames.BezierSurface(points)
    with pytest.raises(rbd.InputError, match="must be finite"):
        frames.BezierCurve(np.where(points == 0.0, np.nan, points))
    assert np.array_equal(points, mech.SPLINE_POINTS)


# --- rolling without slip (GL Eq. 16) ----------------------------------------------------------
@pytest.fixture(scope="module")
def bowl():
    from rbd.symbolic.rolling import ellipsoid_in_bowl

    return ellipsoid_in_bowl()


def _admissible_velocity(contact, q, weights):
    """A velocity in the null space of P(q)."""
    _, _, Vt = np.linalg.svd(contact.P(q))
    return Vt[2:].T @ weights


@pytest.mark.slow
def test_rolling_ball_keeps_contact_point_at_rest(bowl):
    from rbd.symbolic.rolling import simulate_rolling

    model, contact = bowl
    ball = geometry.Ellipsoid(0.2, 0.15, 0.12)
    q0 = np.array([0.15, 0.05, 0.0, 0.0])            # released from rest off the bottom
    t, Q, QD = simulate_rolling(model, contact, q0, np.zeros(4), 0.4, 2e-3)
    assert np.abs(Q[:, [1, 3]]).max() < 1.0          # clear of the ellipsoid charts' poles
    E = [energy(model, q, qd) for q, qd in zip(Q, QD, strict=True)]
    assert np.ptp(E) <= RTOL_ROLLING_ENERGY * max(1.0, abs(E[0]))
    for q, qd in zip(Q[::25], QD[::25], strict=True):
        point = ball.position(q[2], q[3])            # the ball's material point at the contact
        v = rbd.jacobian(model, q, 0, point, backend="reference")[3:] @ qd
        assert np.abs(v).max() < 1e-8
    assert np.abs(Q[-1] - q0).max() > 0.05           # it rolled


@pytest.mark.slow
def test_baumgarte_removes_velocity_drift(bowl):
    """A velocity error e = P q̇ decays as exp(-β t) (velocity-level Baumgarte)."""
    from rbd.symbolic.rolling import simulate_rolling

    model, contact = bowl
    q0 = np.array([0.1, -0.05, 0.0, 0.0])
    qd0 = _admissible_velocity(contact, q0, np.array([0.2, 0.1]))
    qd0 = qd0 + 0.05 * contact.P(q0)[0] / np.linalg.norm(contact.P(q0)[0])  # violate it
    beta = 20.0
    t, Q, QD = simulate_rolling(model, contact, q0, qd0, 0.25, 1e-3, beta=beta)
    e = np.array([np.linalg.norm(contact.P(q) @ qd) for q, qd in zip(Q, QD, strict=True)])
    assert e[0] > 1e-2
    assert e[-1] == pytest.approx(e[0] * np.exp(-beta * t[-1]), rel=1e-3)


@pytest.mark.slow
def test_rolling_divergence_is_a_simulation_error(bowl):
    """An explicit step far beyond 2/β blows up: SimulationError with the finite samples."""
    from rbd.symbolic.rolling import simulate_rolling

    model, contact = bowl
    q0 = np.array([0.1, -0.05, 0.0, 0.0])
    qd0 = _admissible_velocity(contact, q0, np.array([0.2, 0.1])) + 0.05 * contact.P(q0)[0]
    with np.errstate(all="ignore"), pytest.raises(rbd.SimulationError, match="diverged") as err:
        simulate_rolling(model, contact, q0, qd0, 5.0, 0.05, beta=1e4)
    t, Q, QD = err.value.trajectory
    assert 0 < len(t) < 101 and np.all(np.isfinite(Q)) and np.all(np.isfinite(QD))


@pytest.mark.slow
def test_kkt_rejects_negative_beta(bowl):
    from rbd.symbolic.rolling import kkt_forward_dynamics

    model, contact = bowl
    with pytest.raises(rbd.InputError, match="beta must be non-negative"):
        kkt_forward_dynamics(model, contact, np.zeros(4), np.zeros(4), np.zeros(4), beta=-1.0)


# --- Bézier curves and patches of any degree (Si & Guenter, Figs. 3 and 4) ---------------------
def test_bezier_curve_of_degree_three_is_the_cubic_bezier():
    """Hodograph (any degree) against the cubic Bernstein polynomials of rbd.geometry."""
    P = np.random.default_rng(30).normal(size=(4, 3))
    curve, cubic = frames.BezierCurve(P), geometry.CubicBezier(P)
    for t in (0.0, 0.3, 0.85, 1.0):
        for k, (a, b) in enumerate(zip(curve.derivatives(t, 3), cubic.derivatives(t, 3),
                                       strict=True)):
            assert_close(a, b, RTOL_FRAME, f"derivative {k}")


def test_bezier_surface_of_degree_three_is_the_bicubic_patch():
    P = np.random.default_rng(31).normal(size=(4, 4, 3))
    patch, bicubic = frames.BezierSurface(P), geometry.BezierPatch(P)
    for point in [(0.0, 0.0), (0.2, 0.7), (0.9, 0.4)]:
        d, e = patch.partials(*point, order=3), bicubic.partials(*point, order=3)
        for key in e:
            assert_close(d[key], e[key], RTOL_FRAME, f"partial {key}")


def test_bezier_curve_power_form_matches_bernstein_form():
    """The sextic of SPLINE_POINTS: symbolic power form vs numeric Bernstein form."""
    curve = frames.BezierCurve(mech.SPLINE_POINTS)
    assert curve.degree == 6
    derivatives = sympy.lambdify(s, sympy.Matrix.hstack(*curve.derivatives(s, 3)))
    frenet = sympy.lambdify(s, frames.curve_frame(curve, s))
    for t in (0.0, 0.35, 0.5, 1.0):
        assert_close(derivatives(t).T, curve.derivatives(t, 3), RTOL_FRAME, "derivatives")
        assert_close(frenet(t), curve.frame(t), RTOL_FRAME, "Frenet frame")
    assert_close(curve.position(0.0), mech.SPLINE_POINTS[0], RTOL_EXACT, "starts at P0")
    assert_close(curve.position(1.0), mech.SPLINE_POINTS[-1], RTOL_EXACT, "ends at P6")


def test_up_frame_turns_the_normal_towards_up():
    curve = frames.BezierCurve(mech.SPLINE_POINTS)
    frame = sympy.lambdify(s, frames.curve_frame(curve, s, up=mech.UP))
    for t in np.linspace(0.0, 1.0, 7):
        F = frame(t)
        T = curve.frenet(t)[0]
        assert_close(F[:3, 0], T, RTOL_FRAME, "tangent")
        assert_close(F[:3, 3], curve.position(t), RTOL_FRAME, "point")
        assert_close(F[:3, :3].T @ F[:3, :3], np.eye(3), RTOL_FRAME, "orthonormal")
        up_normal = np.array(mech.UP) - (np.array(mech.UP) @ T) * T
        assert_close(F[:3, 1], up_normal / np.linalg.norm(up_normal), RTOL_FRAME, "N")


@pytest.mark.slow
def test_bezier_patch_power_form_matches_bernstein_form():
    rng = np.random.default_rng(32)
    nets = [frames.BezierSurface.from_heights(mech.SURFACE_HEIGHTS),
            frames.BezierSurface(rng.normal(size=(5, 3, 3)) + np.array([[[0, 0, 0]], [[0, 2, 0]],
                                                                          [[0, 4, 0]],
                                                                          [[2, 0, 0]],
                                                                          [[2, 2, 0]]]))]
    for patch in nets:
        frame = sympy.lambdify((u, v), frames.surface_frame(patch, u, v))
        for point in [(0.5, 0.5), (0.1, 0.8), (0.95, 0.05)]:
            assert_close(frame(*point), patch.frame(*point), RTOL_FRAME, "surface frame")


# --- S&G Fig. 3: a torus chain sliding along a Bézier curve ------------------------------------
#: Steps of the short simulations that check the contact geometry (RK4, dt = 2e-3).
STEPS = 150


def _short_run(model, seed):
    from rbd import simulate

    rng = np.random.default_rng(seed)
    q0 = rbd.neutral(model) + rng.uniform(-0.2, 0.2, model.nq)
    qd0 = rng.normal(size=model.nv)
    traj = simulate(model, q0, qd0, duration=STEPS * 2e-3, dt=2e-3, backend=_backend())
    assert np.abs(traj.q[-1] - q0).max() > 0.01                  # it moved
    return traj.q[::15]


def test_torus_chain_on_spline_degrees_of_freedom_and_straight_hang():
    model = mech.torus_chain_on_spline(3)
    assert model.nq == model.nv == 2 + 4 * 2
    T = rbd.forward_kinematics(model, rbd.neutral(model), backend="reference")
    curve = mech.body_shapes(model)["world"][1]
    centre = curve.position(0.5)
    # the chain hangs straight down from the middle of the curve, centres 2 (R - r) apart
    assert_close(T[:, :3, 3], centre + np.outer([0.0, 1.0, 2.0], [0.0, 0.0, -0.8]),
                 RTOL_EXACT, "centres")


@pytest.mark.slow
def test_first_torus_rides_the_spline():
    """Its centre is on the curve and its axis on the tangent along a simulation (S&G Fig. 3)."""
    model = mech.torus_chain_on_spline(2)
    curve = mech.body_shapes(model)["world"][1]
    torus = mech.body_shapes(model)["torus1"]
    for q in _short_run(model, 33):
        T = rbd.forward_kinematics(model, q, backend="reference")
        s_ = q[0]
        assert_close(T[0, :3, 3], curve.position(s_), RTOL_EXACT, "centre on the curve")
        assert_close(T[0, :3, 2], curve.frenet(s_)[0], RTOL_EXACT, "axis on the tangent")
        u1, v1, u2, v2 = q[2:6]                                   # the link still in contact
        parent, child = T[0] @ torus.frame(u1, v1), T[1] @ torus.frame(u2, v2)
        assert_close(parent[:3, 3], child[:3, 3], RTOL_EXACT, "contact point")


# --- S&G Fig. 4: a board sliding on a Bézier surface -------------------------------------------
@pytest.mark.slow
def test_board_lies_in_the_tangent_plane():
    """Origin on the surface, z axis = surface normal, x axis turned by ψ (S&G Fig. 4)."""
    model = mech.board_on_bezier_surface()
    assert model.nv == 4
    patch = mech.body_shapes(model)["world"][1]
    for q in _short_run(model, 34):
        uq, vq, psi = q[:3]
        T = rbd.forward_kinematics(model, q, backend="reference")[0]
        F = patch.frame(uq, vq)
        assert_close(T[:3, 3], patch.position(uq, vq), RTOL_EXACT, "origin on the surface")
        assert_close(T[:3, 2], patch.normal(uq, vq), RTOL_EXACT, "normal")
        assert_close(T[:3, 0], np.cos(psi) * F[:3, 0] + np.sin(psi) * F[:3, 1], RTOL_EXACT,
                     "turned by psi")


@pytest.mark.slow
@pytest.mark.skipif(not rbd.has_kernels(), reason="compiled kernels not built")
@pytest.mark.parametrize("builder", [lambda: mech.torus_chain_on_spline(3),
                                     mech.board_on_bezier_surface], ids=["spline", "board"])
def test_bezier_mechanisms_kernel_agrees_with_reference(builder):
    model = builder()
    rng = np.random.default_rng(35)
    q = rbd.neutral(model) + rng.uniform(-0.3, 0.3, model.nq)
    qd, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
    assert_close(rbd.aba(model, q, qd, tau), rbd.aba(model, q, qd, tau, backend="reference"),
                 RTOL_EXACT, "aba")
    assert_close(rbd.rnea(model, q, qd, tau, backend="kernel"),
                 rbd.rnea(model, q, qd, tau, backend="reference"), RTOL_EXACT, "rnea")


# --- a velocity constraint: rolling without slip (Guenter & Lee's Eq. 16) -------------------
#: Central differences of P along q + t q̇ with step 1e-6 on O(1) entries: truncation ~1e-12,
#: rounding ~1e-10, so 1e-6 relative.
H_FD, RTOL_FD = 1e-6, 1e-6


@pytest.fixture(scope="module")
def rolling_bowl(bowl):
    model, contact = bowl
    return model, contact, contact.constraint(model, name="no slip")


def _rolling_state(rng):
    """A state inside the charts of the bowl and the ball (|u|, |v| < 0.3)."""
    return rng.uniform(-0.3, 0.3, 4), rng.normal(size=4), rng.normal(size=4)


@pytest.mark.parametrize("seed", range(4))
def test_rolling_kind_gives_the_symbolic_kkt_dynamics(seed, rolling_bowl, backend):
    """constrained_dynamics with the Rolling kind equals rolling.py's KKT system of GL (16)
    (its own M, c, P and Ṗq̇ solve), with Baumgarte's kd the velocity rate β of that module."""
    from rbd.symbolic.rolling import kkt_forward_dynamics

    model, contact, rolling = rolling_bowl
    q, qd, tau = _rolling_state(np.random.default_rng(700 + seed))
    for beta in (0.0, 20.0):
        qdd, lam = kkt_forward_dynamics(model, contact, q, qd, tau, beta=beta)
        gains = None if beta == 0 else (0.0, beta)
        M = rbd.crba(model, q)
        scale = float(np.abs(tau - rbd.nonlinear_effects(model, q, qd)).max())
        for method in ("kkt", "schur", "proximal"):
            res = rbd.constrained_dynamics(model, q, qd, tau, [rolling], method=method,
                                           baumgarte=gains, backend=backend)
            # accelerations compared in torque space, as rbd.testing.quantity_difference does
            assert float(np.abs(M @ (res.qdd - qdd)).max()) < RTOL_EXACT * scale, method
            assert_close(res.force, lam, RTOL_EXACT, f"{method} multipliers")


def test_rolling_rows_are_p_and_minus_pdot_qd_and_have_no_position_error(rolling_bowl):
    """J = P in the joint's columns (GL (16)); γ = −d/dt(P q̇) at q̈ = 0 by central differences
    along q + t q̇; φ is zero; assemble leaves a configuration with only velocity rows as is."""
    model, contact, rolling = rolling_bowl
    q, qd, _ = _rolling_state(np.random.default_rng(710))
    assert rolling.holonomic is False and rolling.rows == 2
    assert_close(rbd.constraint_jacobian(model, q, [rolling]), contact.P(q), RTOL_EXACT, "J")
    assert np.all(rbd.constraint_error(model, q, [rolling]) == 0.0)
    Pdot_qd = (contact.P(q + H_FD * qd) - contact.P(q - H_FD * qd)) / (2 * H_FD) @ qd
    rate = rbd.constrained_dynamics(model, q, qd, np.zeros(4), [rolling])
    assert_close(rbd.constraint_jacobian(model, q, [rolling]) @ rate.qdd, -Pdot_qd, RTOL_FD,
                 "J q̈ = γ")
    assert np.array_equal(rbd.assemble(model, q, [rolling]), q)


def test_rolling_impulse_stops_the_slip_and_loses_energy(rolling_bowl, backend):
    model, _, rolling = rolling_bowl
    q, qd, _ = _rolling_state(np.random.default_rng(720))
    impact = rbd.impulse_dynamics(model, q, qd, [rolling], backend=backend)
    assert_close(rbd.constraint_jacobian(model, q, [rolling]) @ impact.v, np.zeros(2),
                 RTOL_EXACT, "slip after the impact")
    assert rbd.kinetic_energy(model, q, impact.v) < rbd.kinetic_energy(model, q, qd)


def test_rolling_refuses_bad_arguments(rolling_bowl):
    model, contact, _ = rolling_bowl
    with pytest.raises(rbd.InputError, match="jacobian must be callable"):
        rbd.constraints.Rolling("contact", None, contact.P_dot_qd)
    with pytest.raises(rbd.InputError, match="rows must be a positive integer"):
        rbd.constraints.Rolling("contact", contact.P, contact.P_dot_qd, rows=0)
    with pytest.raises(rbd.ModelError, match="'nowhere' is not a joint"):
        rbd.constraint_jacobian(model, np.zeros(4), [rbd.constraints.Rolling("nowhere", contact.P,
                                                                contact.P_dot_qd)])
