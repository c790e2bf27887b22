"""Physics of the public algorithms, on both backends (reference and kernel).

Every test runs on random trees of every joint type (``helpers.random_models``).
"""

import numpy as np
import pytest
from helpers import ALL_JOINTS, RTOL_EXACT, RTOL_FD, assert_close, python_child, random_models
from hypothesis import given, settings
from hypothesis import strategies as st

import rbd
from rbd import spatial as sp

MODELS = random_models(7)
IDS = [f"{m.name}-{i}" for i, m in enumerate(MODELS)]
H = 1e-6


@pytest.fixture(params=range(len(MODELS)), ids=IDS)
def model(request):
    return MODELS[request.param]


def state(model, seed=0):
    return rbd.testing.random_state(model, np.random.default_rng(seed))


def test_mass_matrix_is_symmetric_positive_definite(model, backend):
    q, _, _ = state(model)
    M = rbd.crba(model, q, backend=backend)
    assert M.shape == (model.nv, model.nv)
    assert np.allclose(M, M.T, rtol=0, atol=1e-12 * np.abs(M).max())
    assert np.linalg.eigvalsh(M).min() > 0


def test_forward_then_inverse_is_identity(model, backend):
    q, v, tau = state(model, 1)
    qdd = rbd.aba(model, q, v, tau, backend=backend)
    assert_close(rbd.rnea(model, q, v, qdd, backend=backend), tau, what="rnea(aba(tau))")


def test_aba_equals_crba_solve(model, backend):
    q, v, tau = state(model, 2)
    M = rbd.crba(model, q, backend=backend)
    h = rbd.nonlinear_effects(model, q, v, backend=backend)
    assert_close(rbd.aba(model, q, v, tau, backend=backend), np.linalg.solve(M, tau - h),
                 what="aba vs solve(crba, tau - h)")


def test_rnea_is_M_a_plus_h(model, backend):
    q, v, a = state(model, 3)
    M = rbd.crba(model, q, backend=backend)
    h = rbd.nonlinear_effects(model, q, v, backend=backend)
    assert_close(rbd.rnea(model, q, v, a, backend=backend), M @ a + h)
    g = rbd.gravity_forces(model, q, backend=backend)
    assert_close(g, rbd.rnea(model, q, np.zeros(model.nv), np.zeros(model.nv), backend=backend))


def test_mass_matrix_inverse(model, backend):
    q, _, _ = state(model, 4)
    Minv = rbd.mass_matrix_inverse(model, q, backend=backend)
    assert_close(Minv @ rbd.crba(model, q, backend=backend), np.eye(model.nv), rtol=1e-9)


def test_external_forces_enter_as_jacobian_transpose(model, backend):
    # τ(f_ext) − τ(0) = −Σ J_iᵀ f_i, with f_i a body-frame wrench at the body origin
    q, v, a = state(model, 5)
    f_ext = np.random.default_rng(5).normal(size=(model.nbodies, 6))
    dtau = rbd.rnea(model, q, v, a, f_ext, backend=backend) - rbd.rnea(model, q, v, a,
                                                                       backend=backend)
    T = rbd.forward_kinematics(model, q, backend="reference")
    expected = np.zeros(model.nv)
    for i in range(model.nbodies):
        J = rbd.jacobian(model, q, i, backend="reference")  # world-aligned [ω; v] at origin
        R = T[i, :3, :3]
        wrench_world = np.concatenate([R @ f_ext[i, :3], R @ f_ext[i, 3:]])
        expected -= J.T @ wrench_world
    assert_close(dtau, expected)
    # forward dynamics sees the same forces
    tau = rbd.rnea(model, q, v, a, f_ext, backend=backend)
    assert_close(rbd.aba(model, q, v, tau, f_ext, backend=backend), a, rtol=1e-9)


def test_kinetic_energy_is_quadratic_form(model, backend):
    q, v, _ = state(model, 6)
    M = rbd.crba(model, q, backend=backend)
    assert np.isclose(rbd.kinetic_energy(model, q, v, backend=backend), 0.5 * v @ M @ v,
                      rtol=RTOL_EXACT)


def test_generalized_gravity_is_gradient_of_potential(model, backend):
    # g_k = ∂U/∂q along the tangent direction e_k (quaternion joints move on the manifold)
    q, _, _ = state(model, 7)
    g = rbd.gravity_forces(model, q, backend=backend)
    grad = np.zeros(model.nv)
    for k in range(model.nv):
        e = np.zeros(model.nv)
        e[k] = 1.0
        up = rbd.potential_energy(model, rbd.integrate(model, q, e, H), backend=backend)
        down = rbd.potential_energy(model, rbd.integrate(model, q, e, -H), backend=backend)
        grad[k] = (up - down) / (2 * H)
    assert_close(grad, g, rtol=RTOL_FD)


def test_Mdot_minus_2C_is_skew(model, backend):
    # vᵀ(Ṁ − 2C)v = 0 with C v = h − g: the power identity behind dE/dt = vᵀτ
    q, v, _ = state(model, 8)
    Mp = rbd.crba(model, rbd.integrate(model, q, v, H), backend=backend)
    Mm = rbd.crba(model, rbd.integrate(model, q, v, -H), backend=backend)
    Mdot = (Mp - Mm) / (2 * H)
    Cv = rbd.nonlinear_effects(model, q, v, backend=backend) - rbd.gravity_forces(
        model, q, backend=backend)
    lhs, rhs = v @ Mdot @ v, 2 * v @ Cv
    assert abs(lhs - rhs) <= RTOL_FD * max(1.0, abs(rhs))


def test_power_balance(model, backend):
    # dE/dt = vᵀτ along the motion produced by τ (central difference of a tiny RK4 step)
    q, v, tau = state(model, 9)

    def step(q, v, dt):
        def f(q, v):
            return v, rbd.aba(model, q, v, tau, backend=backend)

        k1 = f(q, v)
        k2 = f(rbd.integrate(model, q, k1[0], dt / 2), v + dt / 2 * k1[1])
        k3 = f(rbd.integrate(model, q, k2[0], dt / 2), v + dt / 2 * k2[1])
        k4 = f(rbd.integrate(model, q, k3[0], dt), v + dt * k3[1])
        vbar = (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0]) / 6
        return (rbd.integrate(model, q, vbar, dt),
                v + dt * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1]) / 6)

    def energy(q, v):
        return (rbd.kinetic_energy(model, q, v, backend=backend)
                + rbd.potential_energy(model, q, backend=backend))

    dt = 1e-4
    Ep, Em = energy(*step(q, v, dt)), energy(*step(q, v, -dt))
    dEdt = (Ep - Em) / (2 * dt)
    # O(dt²) from the central difference and the manifold RK4 (velocity-averaged) step
    assert abs(dEdt - v @ tau) <= 1e-4 * max(1.0, abs(v @ tau))


def test_jacobian_against_finite_differences(model, backend):
    q, v, _ = state(model, 10)
    point = np.array([0.1, -0.2, 0.3])
    for body in range(model.nbodies):
        J = rbd.jacobian(model, q, body, point, backend=backend)
        Tp = rbd.forward_kinematics(model, rbd.integrate(model, q, v, H), backend=backend)[body]
        Tm = rbd.forward_kinematics(model, rbd.integrate(model, q, v, -H), backend=backend)[body]
        pdot = ((Tp[:3, :3] - Tm[:3, :3]) @ point + Tp[:3, 3] - Tm[:3, 3]) / (2 * H)
        omega = sp.so3_log(Tp[:3, :3] @ Tm[:3, :3].T) / (2 * H)
        assert_close(J @ v, np.concatenate([omega, pdot]), rtol=RTOL_FD, what=f"body {body}")


def test_centre_of_mass(model, backend):
    q, _, _ = state(model, 11)
    C = rbd.body_centers_of_mass(model, q, backend=backend)
    T = rbd.forward_kinematics(model, q, backend=backend)
    for i, b in enumerate(model.bodies):
        assert np.allclose(C[i], T[i, :3, :3] @ b.com + T[i, :3, 3])
    masses = np.array([b.mass for b in model.bodies])
    assert np.allclose(rbd.center_of_mass(model, q, backend=backend),
                       masses @ C / masses.sum())
    assert np.isclose(rbd.potential_energy(model, q, backend=backend),
                      -masses @ C @ model.gravity)


def test_backends_agree(model, require_kernels):
    """The kernel reproduces the reference to double-precision rounding."""
    q, v, a = state(model, 12)
    for fn, args in [(rbd.rnea, (q, v, a)), (rbd.crba, (q,)), (rbd.aba, (q, v, a)),
                     (rbd.nonlinear_effects, (q, v)), (rbd.gravity_forces, (q,)),
                     (rbd.forward_kinematics, (q,)), (rbd.body_centers_of_mass, (q,)),
                     (rbd.integrate, (q, v, 0.1)), (rbd.kinetic_energy, (q, v)),
                     (rbd.potential_energy, (q,)), (rbd.center_of_mass, (q,))]:
        assert_close(fn(model, *args, backend="kernel"), fn(model, *args, backend="reference"),
                     what=fn.__name__)


@pytest.mark.slow
def test_batched_equals_per_call(model, backend):
    rng = np.random.default_rng(13)
    states = [rbd.testing.random_state(model, rng) for _ in range(4)]
    Q, V, A = (np.array(x) for x in zip(*states, strict=True))
    F = rng.normal(size=(4, model.nbodies, 6))
    cases = [
        (rbd.rnea, (Q, V, A, F)), (rbd.aba, (Q, V, A, F)), (rbd.crba, (Q,)),
        (rbd.nonlinear_effects, (Q, V)), (rbd.gravity_forces, (Q,)),
        (rbd.mass_matrix_inverse, (Q,)), (rbd.kinetic_energy, (Q, V)),
        (rbd.potential_energy, (Q,)), (rbd.forward_kinematics, (Q,)),
        (rbd.center_of_mass, (Q,)), (rbd.body_centers_of_mass, (Q,)),
    ]
    for fn, args in cases:
        batched = fn(model, *args, backend=backend)
        single = np.array([fn(model, *[x[k] for x in args], backend=backend)
                           for k in range(4)])
        assert_close(batched, single, what=fn.__name__)
    batched = rbd.jacobian(model, Q, model.nbodies - 1, backend=backend)
    single = np.array([rbd.jacobian(model, Q[k], model.nbodies - 1, backend=backend)
                       for k in range(4)])
    assert_close(batched, single, what="jacobian")
    assert_close(rbd.integrate(model, Q, V, 0.1, backend=backend),
                 np.array([rbd.integrate(model, Q[k], V[k], 0.1, backend=backend)
                           for k in range(4)]), what="integrate")


def test_rotated_world_invariance(backend):
    # Rotating the world (root placements and gravity together) leaves joint-space
    # dynamics unchanged.
    rng = np.random.default_rng(14)
    model = rbd.testing.random_model(rng, 5, ("revolute", "prismatic", "spherical"))
    Q = sp.so3_exp(rng.normal(size=3))
    rotated = rbd.Model(gravity=Q @ model.gravity)
    for b in model.bodies:
        X = b.X_tree @ sp.rot(Q.T) if b.parent < 0 else b.X_tree
        rotated.add_body(b.parent, b.joint, X, b.inertia, b.name)
    q, v, a = rbd.testing.random_state(model, rng)
    assert_close(rbd.rnea(rotated, q, v, a, backend=backend),
                 rbd.rnea(model, q, v, a, backend=backend))
    assert_close(rbd.crba(rotated, q, backend=backend), rbd.crba(model, q, backend=backend))


# --- closed forms -----------------------------------------------------------------------
def test_single_pendulum_closed_form(backend):
    m, l, g = 1.7, 0.8, 9.81
    model = rbd.Model()
    model.add_body(-1, rbd.Revolute([0, 1, 0]), None, (m, [0, 0, -l], np.zeros((3, 3))))
    for theta in (-1.0, 0.3, 2.0):
        q = np.array([theta])
        assert np.isclose(rbd.crba(model, q, backend=backend)[0, 0], m * l * l)
        # hanging along -z and turning about +y: the torque of gravity is m g l sin θ
        assert np.isclose(rbd.gravity_forces(model, q, backend=backend)[0],
                          m * g * l * np.sin(theta))
        assert np.isclose(rbd.aba(model, q, [0.5], [0.0], backend=backend)[0],
                          -g / l * np.sin(theta))


def test_double_pendulum_closed_form(backend):
    m1, m2, l1, l2, g = 1.3, 0.7, 1.1, 0.6, 9.81
    model = rbd.models.double_pendulum(m1, m2, l1, l2)
    rng = np.random.default_rng(15)
    for _ in range(3):
        t1, t2 = rng.uniform(-np.pi, np.pi, 2)
        d1, d2 = rng.normal(size=2)
        q, v = np.array([t1, t2]), np.array([d1, d2])
        c2, s2 = np.cos(t2), np.sin(t2)
        M = np.array([
            [(m1 + m2) * l1**2 + m2 * l2**2 + 2 * m2 * l1 * l2 * c2,
             m2 * l2**2 + m2 * l1 * l2 * c2],
            [m2 * l2**2 + m2 * l1 * l2 * c2, m2 * l2**2],
        ])
        G = np.array([(m1 + m2) * g * l1 * np.sin(t1) + m2 * g * l2 * np.sin(t1 + t2),
                      m2 * g * l2 * np.sin(t1 + t2)])
        C = np.array([-m2 * l1 * l2 * s2 * (2 * d1 * d2 + d2**2), m2 * l1 * l2 * s2 * d1**2])
        assert_close(rbd.crba(model, q, backend=backend), M)
        assert_close(rbd.nonlinear_effects(model, q, v, backend=backend), C + G)


@pytest.mark.slow
def test_free_floating_momentum_is_conserved(backend):
    """No gravity, no joint forces: the world-frame spatial momentum stays constant."""
    rng = np.random.default_rng(16)
    model = rbd.testing.random_model(rng, 5, ("revolute", "spherical", "prismatic"),
                                     floating_base=True, gravity=(0, 0, 0))
    q, v, _ = rbd.testing.random_state(model, rng)
    zero = np.zeros(model.nv)

    def momentum(q, v):
        T = rbd.forward_kinematics(model, q, backend=backend)
        vb = rbd.reference.kinematics.body_velocities(model, q, v)
        total = np.zeros(6)
        for i, b in enumerate(model.bodies):
            hb = b.inertia @ vb[i]
            R, p = T[i, :3, :3], T[i, :3, 3]
            f = R @ hb[3:]
            total += np.concatenate([R @ hb[:3] + np.cross(p, f), f])
        return total

    h0 = momentum(q, v)
    dt = 2e-3
    for _ in range(50):
        k1 = (v, rbd.aba(model, q, v, zero, backend=backend))
        k2 = (v + dt / 2 * k1[1],
              rbd.aba(model, rbd.integrate(model, q, k1[0], dt / 2), v + dt / 2 * k1[1], zero,
                      backend=backend))
        k3 = (v + dt / 2 * k2[1],
              rbd.aba(model, rbd.integrate(model, q, k2[0], dt / 2), v + dt / 2 * k2[1], zero,
                      backend=backend))
        k4 = (v + dt * k3[1],
              rbd.aba(model, rbd.integrate(model, q, k3[0], dt), v + dt * k3[1], zero,
                      backend=backend))
        q = rbd.integrate(model, q, (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0]) / 6, dt)
        v = v + dt * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1]) / 6
    # RK4 with dt = 2e-3 over 0.1 s: local error O(dt^5) per step, far below 1e-6
    assert_close(momentum(q, v), h0, rtol=1e-6, what="momentum drift")


def test_modified_pivot_gives_the_same_accelerations(model, backend):
    # Pai, Ascher & Kry §7: a different pivot for the same elimination, same answer
    q, v, tau = state(model, 17)
    assert_close(rbd.aba(model, q, v, tau, backend=backend, pivot="modified"),
                 rbd.aba(model, q, v, tau, backend=backend), rtol=1e-9)


def test_empty_batch_has_the_shape_of_a_result(backend):
    model = rbd.testing.random_model(18, 3, ("revolute", "spherical"))
    Q = np.zeros((0, model.nq))
    V = np.zeros((0, model.nv))
    assert rbd.crba(model, Q, backend=backend).shape == (0, model.nv, model.nv)
    assert rbd.rnea(model, Q, V, V, backend=backend).shape == (0, model.nv)
    assert rbd.forward_kinematics(model, Q, backend=backend).shape == (0, model.nbodies, 4, 4)
    assert rbd.kinetic_energy(model, Q, V, backend=backend).shape == (0,)


def test_symbolic_joint_without_compiled_code_falls_back_once(monkeypatch, require_kernels):
    """No C compiler at run time: one warning, then the reference path, same numbers."""
    import sympy

    from rbd.symbolic import SymbolicJoint

    t = sympy.Symbol("t")
    c, s = sympy.cos(t), sympy.sin(t)
    hinge = SymbolicJoint(sympy.Matrix([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0],
                                        [0, 0, 0, 1]]), [t])

    def no_compiler():
        raise RuntimeError("no C compiler")

    monkeypatch.setattr(hinge, "kernel_capsule", no_compiler)
    model = rbd.models.revolute_chain(3).replace_joint("joint2", hinge)
    q, v, tau = rbd.testing.random_state(model, 19)
    with pytest.warns(RuntimeWarning, match="using the reference implementation"):
        first = rbd.aba(model, q, v, tau)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        second = rbd.aba(model, q, v, tau)
    assert_close(first, rbd.aba(model, q, v, tau, backend="reference"))
    assert_close(second, first)
    with pytest.raises(rbd.ModelError, match="joint2"):
        rbd.aba(model, q, v, tau, backend="kernel")


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), nbodies=st.integers(1, 7),
       kinds=st.sets(st.sampled_from(ALL_JOINTS + ("free",)), min_size=1),
       floating=st.booleans())
def test_hypothesis_forward_inverse_and_crba_agree(seed, nbodies, kinds, floating):
    """Random trees drawn by Hypothesis: aba, rnea and crba tell one consistent story."""
    model = rbd.testing.random_model(seed, nbodies, sorted(kinds), floating_base=floating)
    q, v, tau = rbd.testing.random_state(model, seed)
    qdd = rbd.aba(model, q, v, tau)
    M = rbd.crba(model, q)
    h = rbd.nonlinear_effects(model, q, v)
    # the condition number of M of these trees stays below ~1e6, so 1e-8 is ample
    assert_close(rbd.rnea(model, q, v, qdd), tau, rtol=1e-8)
    assert_close(M @ qdd + h, tau, rtol=1e-8)


def test_quaternions_within_tolerance_are_normalized(require_kernels):
    """A quaternion off by 1e-7 (accepted: the tolerance is 1e-6) is normalized at the
    boundary by both backends, on a copy: they agree to 1e-14 (rounding of two exact
    algorithms on O(1) numbers) and equal the result of the normalized input.  Before,
    each backend ran on the raw input and they differed by up to 3e-8."""
    model = rbd.testing.random_model(3, 4, ("spherical", "revolute"), floating_base=True)
    q, v, tau = state(model, 5)
    q_off = q.copy()
    q_off[3:7] *= 1 + 1e-7
    q_before = q_off.copy()
    q_unit = q_off.copy()
    q_unit[3:7] /= np.linalg.norm(q_unit[3:7])
    for name, call in {
        "aba": lambda x, b: rbd.aba(model, x, v, tau, backend=b),
        "rnea": lambda x, b: rbd.rnea(model, x, v, tau, backend=b),
        "crba": lambda x, b: rbd.crba(model, x, backend=b),
        "forward_kinematics": lambda x, b: rbd.forward_kinematics(model, x, backend=b),
        "integrate": lambda x, b: rbd.integrate(model, x, v, 0.01, backend=b),
        "aba batched": lambda x, b: rbd.aba(model, np.stack([x, x]), v, tau, backend=b)[1],
    }.items():
        ref, ker = call(q_off, "reference"), call(q_off, "kernel")
        assert_close(ker, ref, rtol=1e-14, what=f"{name}: kernel vs reference")
        for b, result in (("reference", ref), ("kernel", ker)):
            assert_close(result, call(q_unit, b), rtol=1e-14, what=f"{name} ({b}) vs unit q")
        assert np.array_equal(q_off, q_before), "q was modified"


_MEMORY_SCRIPT = """
import resource, sys, tracemalloc
import rbd
backend, n = sys.argv[1], int(sys.argv[2])
model = rbd.models.revolute_chain(n)
q = rbd.random_configuration(model, 0)
if backend == "kernel":
    # the workspace is allocated (not touched) when the model compiles; what the call
    # touches shows in the resident set
    rbd.algorithms.compiled(model)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    M_inv = rbd.mass_matrix_inverse(model, q, backend=backend)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
else:
    tracemalloc.start()
    M_inv = rbd.mass_matrix_inverse(model, q, backend=backend)
    peak = tracemalloc.get_traced_memory()[1]
print(peak / M_inv.nbytes)
"""


@pytest.mark.slow
@pytest.mark.parametrize("nbodies", [{"kernel": 2000, "reference": 300}])
def test_mass_matrix_inverse_memory(backend, nbodies):
    """Peak memory of M⁻¹ is a small multiple of its result (measured in a fresh process).

    Before: the kernel touched nbodies × nv × 6 doubles of columns (a 5000-body chain
    peaked at 1343 MiB for a 191 MiB result, 7.0×; 2000 bodies: 6.9×) and the reference
    held five nv × nv matrices.  After: the kernel's columns live in 2 slots on a chain
    (5000 bodies: 201 MiB, 1.05×) and the reference factors and inverts in M's storage.
    2.5× leaves room for the resident-set noise of a process (a few MiB against 31 MiB).
    """

    out = python_child(_MEMORY_SCRIPT, backend, str(nbodies[backend]), timeout=300)
    assert out.returncode == 0, out.stderr
    ratio = float(out.stdout.strip())
    assert ratio < 2.5, f"{backend}: peak {ratio:.2f} × the result"


@pytest.mark.slow
def test_random_configuration_respects_limits():
    """Both limits finite: uniform between them; one finite: clipped; none: the joint's
    own draw (angles over (-π, π]); quaternions stay unit.  Before, limits were ignored."""
    model = rbd.Model(name="limited")
    inertia = (1.0, [0.1, 0.0, 0.0], 0.01 * np.eye(3))
    base = model.add_body(-1, rbd.Free(), None, inertia, "base")
    for name in ("both", "lower_only", "upper_only", "free"):
        base = model.add_body(base, rbd.Revolute([0, 0, 1]), None, inertia, name)
    model.set_joint_properties("base", lower=[-1, -2, 0.5, -np.inf, -np.inf, -np.inf, -np.inf],
                               upper=[1, -1, 0.5, np.inf, np.inf, np.inf, np.inf])
    model.set_joint_properties("both", lower=0.2, upper=0.5)
    model.set_joint_properties("lower_only", lower=0.0)
    model.set_joint_properties("upper_only", upper=-1.0)
    rng = np.random.default_rng(3)
    Q = np.array([rbd.random_configuration(model, rng) for _ in range(2000)])
    assert np.all(Q >= model.lower) and np.all(Q <= model.upper)
    both = Q[:, model.q_slice("both")][:, 0]
    # uniform on [0.2, 0.5]: 2000 draws come within 0.01 of each end (miss chance ~1e-26)
    assert both.min() < 0.21 and both.max() > 0.49
    assert abs(both.mean() - 0.35) < 0.01  # standard error 0.0019: 5 sigma
    lower_only = Q[:, model.q_slice("lower_only")][:, 0]
    assert 0.4 < np.mean(lower_only == 0.0) < 0.6  # half of (-π, π] is clipped to 0
    upper_only = Q[:, model.q_slice("upper_only")][:, 0]
    assert np.mean(upper_only == -1.0) > 0.5 and upper_only.min() < -3.0
    free = Q[:, model.q_slice("free")][:, 0]
    assert free.min() < -3.0 and free.max() > 3.0
    position = Q[:, :3]
    assert position[:, 0].min() < -0.99 and position[:, 0].max() > 0.99
    assert np.all(position[:, 2] == 0.5)
    assert np.allclose(np.linalg.norm(Q[:, 3:7], axis=1), 1.0, atol=1e-12)


def _with_frames(model, seed=0):
    """A copy of ``model`` with a frame at a random offset on every body."""
    model = model.copy()
    rng = np.random.default_rng(seed)
    for i in range(model.nbodies):
        model.add_frame(f"tool{i}", i, sp.plux(rbd.testing.random_rotation(rng),
                                               rng.uniform(-0.5, 0.5, 3)))
    return model


def test_frame_pose(model, backend):
    """Bodies: the forward-kinematics pose.  Attached frames (X = plux(E, r) maps body to
    frame coordinates, so a point p_f of the frame is p_b = Eᵀ p_f + r on the body): the
    body pose applied to p_b.  The frame origin moves with the Jacobian's linear part."""
    framed = _with_frames(model)
    q, v, _ = state(model, 11)
    T = rbd.forward_kinematics(framed, q, backend=backend)
    p_f = np.array([0.3, -0.2, 0.7])
    for i, name in enumerate(framed.body_names):
        assert_close(rbd.frame_pose(framed, q, name, backend=backend), T[i], what=name)
        assert_close(rbd.frame_pose(framed, q, i, backend=backend), T[i], what=f"body {i}")
        frame = framed.frames[f"tool{i}"]
        E, r = sp.plux_parts(frame.X)
        pose = rbd.frame_pose(framed, q, f"tool{i}", backend=backend)
        assert pose.shape == (4, 4)
        assert_close(pose @ np.append(p_f, 1.0), T[i] @ np.append(E.T @ p_f + r, 1.0),
                     what=f"tool{i}: a point of the frame")
        assert_close(pose[:3, :3] @ pose[:3, :3].T, np.eye(3), what="rotation")
        # d/dt origin = J_v v  (central differences, error O(H²))
        moved = [rbd.frame_pose(framed, rbd.integrate(framed, q, v, s * H), f"tool{i}",
                                backend=backend)[:3, 3] for s in (1, -1)]
        J = rbd.jacobian(framed, q, f"tool{i}", backend=backend)
        assert_close((moved[0] - moved[1]) / (2 * H), J[3:] @ v, rtol=RTOL_FD,
                     what=f"tool{i}: origin velocity")


def test_frame_pose_batches_and_errors(backend):
    framed = _with_frames(MODELS[1], 3)
    Q = np.stack([state(framed, s)[0] for s in range(4)])
    poses = rbd.frame_pose(framed, Q, "tool2", backend=backend)
    assert poses.shape == (4, 4, 4)
    for k in range(4):
        assert_close(poses[k], rbd.frame_pose(framed, Q[k], "tool2", backend=backend))
    assert rbd.frame_pose(framed, Q[:0], "tool2", backend=backend).shape == (0, 4, 4)
    with pytest.raises(rbd.InputError, match=r"^name: no body or frame 'nowhere'"):
        rbd.frame_pose(framed, Q[0], "nowhere", backend=backend)
    with pytest.raises(rbd.InputError, match=r"\bq\b"):
        rbd.frame_pose(framed, Q[0, :-1], "tool2", backend=backend)


def test_frame_pose_of_merged_urdf_link(backend):
    """A link welded by a fixed joint is merged into its parent and stays addressable."""
    urdf = """<robot name="r">
      <link name="base"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1"
        ixy="0" ixz="0" iyz="0"/></inertial></link>
      <link name="arm"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1"
        ixy="0" ixz="0" iyz="0"/></inertial></link>
      <link name="tip"/>
      <joint name="j" type="revolute"><parent link="base"/><child link="arm"/>
        <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
      <joint name="weld" type="fixed"><parent link="arm"/><child link="tip"/>
        <origin xyz="1 0 0"/></joint>
    </robot>"""
    model = rbd.load_urdf(urdf)
    pose = rbd.frame_pose(model, [np.pi / 2], "tip", backend=backend)
    # the arm turns a quarter turn about z: the tip, 1 m along the arm's x, is at (0, 1, 0)
    assert_close(pose[:3, 3], [0.0, 1.0, 0.0], what="tip position")
    assert_close(pose[:3, :3], sp.so3_exp([0.0, 0.0, np.pi / 2]), what="tip axes")
