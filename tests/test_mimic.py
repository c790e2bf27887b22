"""Mimic joints: physics on the independent coordinates, both backends, batches, errors.

The model is a gripper on a floating wrist: a free base (so the independent
``q`` has a quaternion and ``nq != nv``), a revolute palm, two prismatic
fingers, the right one mimicking the left with multiplier -1 and an offset,
and a revolute finger tip mimicking the palm with multiplier 0.7 and an
offset.  Expected values are built here by hand from the full tree
(``q_full`` written out joint by joint), never from the coupling code.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from helpers import RTOL_EXACT, assert_close

import rbd
from rbd.spatial import so3_log

#: Finite-difference step and tolerance: central differences have an O(h²) error,
#: ~1e-10 relative for h = 1e-5 on these smooth functions of unit size, and rounding
#: of order eps / h ~ 1e-11; 1e-7 leaves a wide margin over both.
H_FD = 1e-5
RTOL_FD = 1e-7

#: The mimic relations of the gripper (joint: (mimicked joint, multiplier, offset)).
MIMIC = {"finger_r": ("finger_l", -1.0, 0.02), "tip": ("palm", 0.7, 0.1)}


def inertia(rng, mass):
    """A physical inertia: principal moments within a factor 1.5 (triangle inequality)."""
    R = rbd.testing.random_rotation(rng)
    return (mass, rng.uniform(-0.05, 0.05, 3), mass * 0.01 * R @ np.diag(rng.uniform(1, 1.5, 3))
            @ R.T)


def gripper(rng=0) -> rbd.Model:
    rng = np.random.default_rng(rng)
    model = rbd.Model(name="gripper")
    model.add_body(-1, rbd.Free(), None, inertia(rng, 2.0), "wrist", "base")
    model.add_body("wrist", rbd.Revolute([0, 0, 1]), (np.eye(3), [0, 0, 0.1]),
                   inertia(rng, 1.0), "hand", "palm")
    model.add_body("hand", rbd.Prismatic([0, 1, 0]), (np.eye(3), [0.05, 0.02, 0.1]),
                   inertia(rng, 0.2), "left", "finger_l")
    model.add_body("hand", rbd.Prismatic([0, 1, 0]), (np.eye(3), [0.05, -0.02, 0.1]),
                   inertia(rng, 0.3), "right", "finger_r")
    model.add_body("left", rbd.Revolute([1, 0, 0]), (np.eye(3), [0, 0, 0.08]),
                   inertia(rng, 0.1), "fingertip", "tip")
    model.set_joint_properties("finger_r", armature=0.05)  # reflected as (-1)² · 0.05
    model.set_joint_properties("tip", armature=0.02)       # reflected as 0.7² · 0.02
    model.set_joint_properties("palm", armature=0.01, lower=-2.0, upper=2.0)
    model.set_joint_properties("finger_l", lower=0.0, upper=0.04)
    for joint, (mimicked, multiplier, offset) in MIMIC.items():
        model.add_mimic(joint, mimicked, multiplier, offset)
    return model


# The full tree's coordinates, written out by hand: q_full = [base (7), palm, finger_l,
# finger_r, tip]; the independent q = [base (7), palm, finger_l], v = [base (6), palm, finger_l].
G = np.zeros((10, 8))
G[:8, :8] = np.eye(8)
G[8, 7] = -1.0   # finger_r = -finger_l + 0.02
G[9, 6] = 0.7    # tip = 0.7 palm + 0.1


def full_q(q):
    q = np.asarray(q)
    return np.concatenate([q[..., :9], -q[..., 8:9] + 0.02, 0.7 * q[..., 7:8] + 0.1], axis=-1)


def state(model, rng):
    q = rbd.random_configuration(model, rng)
    return q, rng.normal(size=model.nv), rng.normal(size=model.nv)


@pytest.fixture
def model():
    return gripper()


def test_independent_coordinates(model):
    assert (model.nq, model.nv, model.nbodies) == (9, 8, 5)
    assert model.joint_names == ["base", "palm", "finger_l"]
    assert model.mimic == MIMIC
    assert model.q_slice("finger_l") == slice(8, 9) and model.v_slice("palm") == slice(6, 7)
    for attribute in ("lower", "upper", "armature", "damping", "effort_limit"):
        assert getattr(model, attribute).shape == ((9,) if attribute in ("lower", "upper")
                                                   else (8,)), attribute
    assert model.armature.tolist() == [0, 0, 0, 0, 0, 0, 0.01, 0]
    full = model.full_model()
    assert (full.nq, full.nv, full.mimic) == (11, 10, {})
    assert full.armature.tolist()[-2:] == [0.05, 0.02]
    for name in ("finger_r", "tip"):
        with pytest.raises(rbd.ModelError, match=f"'{name}'.*mimics '{MIMIC[name][0]}'"):
            model.q_slice(name)
        with pytest.raises(rbd.ModelError, match=f"'{name}'.*mimics"):
            model.v_slice(name)
    assert "mimics finger_l (-1 q + 0.02)" in model.describe()


def test_neutral_and_random_configuration(model, rng):
    assert rbd.neutral(model).tolist() == [0, 0, 0, 0, 0, 0, 1, 0, 0]
    for _ in range(20):
        q = rbd.random_configuration(model, rng)
        assert q.shape == (9,)
        assert np.all(q >= model.lower) and np.all(q <= model.upper)
        assert np.linalg.norm(q[3:7]) == pytest.approx(1.0, abs=1e-15)


def test_projection_of_the_full_tree(model, backend, rng):
    """τ = Gᵀ τ_full, M = Gᵀ M_full G, h = Gᵀ h_full, g = Gᵀ g_full, J = J_full G, and the
    kinematics and energies of the full tree at q_full (G written out above)."""
    full = model.full_model()
    f_ext = rng.normal(size=(5, 6))
    for _ in range(3):
        q, v, a = state(model, rng)
        qf, vf, af = full_q(q), G @ v, G @ a
        kw = {"backend": backend}
        assert_close(rbd.rnea(model, q, v, a, f_ext, **kw),
                     G.T @ rbd.rnea(full, qf, vf, af, f_ext, **kw), RTOL_EXACT, "rnea")
        assert_close(rbd.crba(model, q, **kw), G.T @ rbd.crba(full, qf, **kw) @ G,
                     RTOL_EXACT, "crba")
        assert_close(rbd.nonlinear_effects(model, q, v, **kw),
                     G.T @ rbd.nonlinear_effects(full, qf, vf, **kw), RTOL_EXACT, "h")
        assert_close(rbd.gravity_forces(model, q, **kw),
                     G.T @ rbd.gravity_forces(full, qf, **kw), RTOL_EXACT, "g")
        assert_close(rbd.jacobian(model, q, "fingertip", [0.01, 0.02, 0.03], **kw),
                     rbd.jacobian(full, qf, "fingertip", [0.01, 0.02, 0.03], **kw) @ G,
                     RTOL_EXACT, "jacobian")
        for fn in (rbd.forward_kinematics, rbd.center_of_mass, rbd.body_centers_of_mass,
                   rbd.potential_energy):
            assert_close(fn(model, q, **kw), fn(full, qf, **kw), RTOL_EXACT, fn.__name__)
        assert_close(rbd.kinetic_energy(model, q, v, **kw),
                     rbd.kinetic_energy(full, qf, vf, **kw), RTOL_EXACT, "kinetic energy")
        assert_close(rbd.frame_pose(model, q, "right", **kw),
                     rbd.forward_kinematics(full, qf, **kw)[3], RTOL_EXACT, "frame_pose")


def test_armature_of_mimic_joints_is_reflected(model, rng):
    """M gains m² · armature of a mimic joint on its source's diagonal."""
    q = rbd.random_configuration(model, rng)
    bare = model.copy()
    for name in ("finger_r", "tip", "palm"):
        bare.set_joint_properties(name, armature=0.0)
    extra = rbd.crba(model, q) - rbd.crba(bare, q)
    expected = np.zeros((8, 8))
    expected[6, 6] = 0.01 + 0.7 ** 2 * 0.02
    expected[7, 7] = (-1.0) ** 2 * 0.05
    assert_close(extra, expected, RTOL_EXACT, "reflected armature")


def test_dynamics_identities(model, backend, rng):
    """M symmetric positive definite, M⁻¹ M = 1, rnea ∘ aba = 1, aba = M⁻¹ (τ − h),
    T = ½ vᵀ M v."""
    kw = {"backend": backend}
    for _ in range(3):
        q, v, tau = state(model, rng)
        f_ext = rng.normal(size=(5, 6))
        M = rbd.crba(model, q, **kw)
        assert np.array_equal(M, M.T)
        assert np.linalg.eigvalsh(M)[0] > 0
        assert_close(rbd.mass_matrix_inverse(model, q, **kw) @ M, np.eye(8), RTOL_EXACT, "M⁻¹")
        qdd = rbd.aba(model, q, v, tau, f_ext, **kw)
        assert_close(rbd.rnea(model, q, v, qdd, f_ext, **kw), tau, RTOL_EXACT, "rnea ∘ aba")
        h = rbd.nonlinear_effects(model, q, v, **kw)
        assert_close(qdd, np.linalg.solve(M, tau - rbd.rnea(model, q, v, 0 * v, f_ext, **kw)),
                     RTOL_EXACT, "aba")
        assert_close(rbd.aba(model, q, v, tau, pivot="modified", **kw),
                     np.linalg.solve(M, tau - h), RTOL_EXACT, "aba (modified pivot)")
        assert_close(rbd.kinetic_energy(model, q, v, **kw), 0.5 * v @ M @ v, RTOL_EXACT, "T")


def energy(model, q, v, backend):
    return (rbd.kinetic_energy(model, q, v, backend=backend)
            + rbd.potential_energy(model, q, backend=backend))


def test_power_balance_and_gravity_gradient(model, backend, rng):
    """dE/dt = vᵀ τ along q̈ = aba(q, v, τ), and g = ∂U/∂q, by central differences."""
    kw = {"backend": backend}
    q, v, tau = state(model, rng)
    qdd = rbd.aba(model, q, v, tau, **kw)
    E = [energy(model, rbd.integrate(model, q, v, s * H_FD, **kw), v + s * H_FD * qdd, backend)
         for s in (1.0, -1.0)]
    assert_close((E[0] - E[1]) / (2 * H_FD), v @ tau, RTOL_FD, "power")
    g = rbd.gravity_forces(model, q, **kw)
    for k in range(model.nv):
        e = np.eye(model.nv)[k]
        U = [rbd.potential_energy(model, rbd.integrate(model, q, e, s * H_FD, **kw), **kw)
             for s in (1.0, -1.0)]
        assert_close((U[0] - U[1]) / (2 * H_FD), g[k], RTOL_FD, f"∂U/∂q[{k}]")


def test_jacobian_against_finite_differences(model, backend, rng):
    """J v is the world-aligned [ω; v] of the point, from poses at q ± h v."""
    kw = {"backend": backend}
    point = np.array([0.02, -0.01, 0.03])
    for body in ("right", "fingertip"):
        q, v, _ = state(model, rng)
        T = [rbd.frame_pose(model, rbd.integrate(model, q, v, s * H_FD, **kw), body, **kw)
             for s in (1.0, -1.0)]
        p = [t[:3, :3] @ point + t[:3, 3] for t in T]
        omega = so3_log(T[0][:3, :3] @ T[1][:3, :3].T) / (2 * H_FD)
        J = rbd.jacobian(model, q, body, point, **kw)
        assert_close(J @ v, np.concatenate([omega, (p[0] - p[1]) / (2 * H_FD)]), RTOL_FD, body)


def test_integrate_moves_the_mimic_joints_along(model, backend, rng):
    q, v, _ = state(model, rng)
    q1 = rbd.integrate(model, q, v, 0.3, backend=backend)
    full = model.full_model()
    assert_close(full_q(q1), rbd.integrate(full, full_q(q), G @ v, 0.3, backend=backend),
                 RTOL_EXACT, "integrate")


def test_backends_agree(model, rng):
    if not rbd.has_kernels():
        pytest.skip("RBD_NO_EXTENSIONS=1: kernels disabled")
    q, v, a = state(model, rng)
    for fn, args in ((rbd.rnea, (q, v, a)), (rbd.crba, (q,)), (rbd.aba, (q, v, a)),
                     (rbd.mass_matrix_inverse, (q,)), (rbd.jacobian, (q, "left"))):
        assert_close(fn(model, *args, backend="kernel"), fn(model, *args, backend="reference"),
                     RTOL_EXACT, fn.__name__)


def test_batched_equals_per_state(model, backend, rng):
    states = [state(model, rng) for _ in range(3)]
    Q, V, A = (np.array(x) for x in zip(*states, strict=True))
    F = rng.normal(size=(3, 5, 6))
    kw = {"backend": backend}
    calls = {
        "rnea": (rbd.rnea, (Q, V, A, F)), "crba": (rbd.crba, (Q,)),
        "aba": (rbd.aba, (Q, V, A, F)), "h": (rbd.nonlinear_effects, (Q, V)),
        "g": (rbd.gravity_forces, (Q,)), "Minv": (rbd.mass_matrix_inverse, (Q,)),
        "T": (rbd.kinetic_energy, (Q, V)), "U": (rbd.potential_energy, (Q,)),
        "fk": (rbd.forward_kinematics, (Q,)), "com": (rbd.center_of_mass, (Q,)),
        "coms": (rbd.body_centers_of_mass, (Q,)), "J": (rbd.jacobian, (Q, "right")),
        "integrate": (rbd.integrate, (Q, V, 0.1)), "pose": (rbd.frame_pose, (Q, "fingertip")),
    }
    for what, (fn, args) in calls.items():
        batch = fn(model, *args, **kw)
        single = [fn(model, *[x[k] if isinstance(x, np.ndarray) and x.ndim > 0
                              and x.shape[0] == 3 else x for x in args], **kw) for k in range(3)]
        assert_close(batch, np.array(single), RTOL_EXACT, what)
    assert rbd.crba(model, Q[:0], **kw).shape == (0, 8, 8)


def test_bad_arguments_are_refused(model, backend):
    q = rbd.neutral(model)
    with pytest.raises(rbd.InputError, match=r"q must have shape \(9,\)"):
        rbd.crba(model, rbd.neutral(model.full_model()), backend=backend)
    with pytest.raises(rbd.InputError, match="v must have shape"):
        rbd.rnea(model, q, np.zeros(10), np.zeros(8), backend=backend)
    with pytest.raises(rbd.InputError, match="tau has non-finite"):
        rbd.aba(model, q, np.zeros(8), np.full(8, np.nan), backend=backend)


def test_singular_mass_matrix_gives_nan_like_the_recursion(backend):
    """Bodies without inertia: forward dynamics is undefined, and says so with NaN."""
    model = rbd.Model()
    model.add_body(-1, rbd.Prismatic([1, 0, 0]), None, None, "a")
    model.add_body(-1, rbd.Prismatic([1, 0, 0]), None, None, "b")
    model.add_mimic("joint_b", "joint_a")
    assert np.isnan(rbd.aba(model, [0.0], [0.0], [1.0], backend=backend)).all()
    assert np.isnan(rbd.mass_matrix_inverse(model, [0.0], backend=backend)).all()


# --- the builder -------------------------------------------------------------------------------
def plain_gripper() -> rbd.Model:
    model = gripper()
    return model.full_model()


@pytest.mark.parametrize(("args", "message"), [
    (("nope", "palm"), "unknown joint 'nope'"),
    (("tip", "nope"), "unknown joint 'nope'"),
    (("tip", "tip"), "'tip' cannot mimic itself"),
    (("base", "palm"), "'base' is free: only one-coordinate joints"),
    (("tip", "base"), "'base' is free"),
    (("tip", "palm", float("nan")), "'tip': mimic multiplier must be a finite"),
    (("tip", "palm", 1.0, "x"), "'tip': mimic offset must be a finite"),
    (("tip", "palm", 1j), "'tip': mimic multiplier"),
])
def test_bad_mimic_is_refused(args, message):
    model = plain_gripper()
    model.add_mimic("finger_r", "finger_l")
    before = (model.nq, model.mimic)
    with pytest.raises(rbd.ModelError, match=message):
        model.add_mimic(*args)
    assert (model.nq, model.mimic) == before


def test_mimic_of_a_mimic_and_cycles_are_refused():
    model = plain_gripper()
    model.add_mimic("finger_r", "finger_l")
    with pytest.raises(rbd.ModelError, match="'tip' cannot mimic 'finger_r', which mimics "
                                             "'finger_l'.*mimic that joint directly"):
        model.add_mimic("tip", "finger_r")
    with pytest.raises(rbd.ModelError, match="'finger_l' cannot mimic 'tip': 'finger_r' "
                                             "mimics 'finger_l'"):
        model.add_mimic("finger_l", "tip")
    with pytest.raises(rbd.ModelError, match="'finger_l' cannot mimic 'finger_r'"):
        model.add_mimic("finger_l", "finger_r")  # a cycle of two
    with pytest.raises(rbd.ModelError, match="'finger_r' already mimics 'finger_l'"):
        model.add_mimic("finger_r", "palm")
    assert model.mimic == {"finger_r": ("finger_l", 1.0, 0.0)}


def test_spherical_joint_cannot_be_mimicked():
    model = rbd.Model()
    model.add_body(-1, rbd.Spherical(), None, (1.0, [0, 0, 0], np.eye(3)), "ball")
    model.add_body(-1, rbd.Revolute([0, 0, 1]), None, (1.0, [0, 0, 0], np.eye(3)), "hinge")
    with pytest.raises(rbd.ModelError, match="'joint_ball' is spherical"):
        model.add_mimic("joint_hinge", "joint_ball")


def test_adding_a_mimic_drops_the_compiled_form(backend, rng):
    """The builder clears the cache: a model used before add_mimic answers in its new size."""
    model = plain_gripper()
    q = rbd.random_configuration(model, rng)
    assert rbd.crba(model, q, backend=backend).shape == (10, 10)
    model.add_mimic("finger_r", "finger_l", -1.0, 0.02)
    model.add_mimic("tip", "palm", 0.7, 0.1)
    q = q[:9]
    assert_close(rbd.crba(model, q, backend=backend), rbd.crba(gripper(), q, backend=backend),
                 RTOL_EXACT, "crba after add_mimic")


def test_ordinary_models_keep_the_compiled_model_on_the_hot_path():
    if not rbd.has_kernels():
        pytest.skip("RBD_NO_EXTENSIONS=1: kernels disabled")
    plain, coupled = plain_gripper(), gripper()
    rbd.crba(plain, rbd.neutral(plain))
    rbd.crba(coupled, rbd.neutral(coupled))
    assert type(plain._cache["kernel"]).__name__ == "CompiledModel"
    assert type(coupled._cache["kernel"]).__name__ == "CoupledDynamics"


# --- copies ------------------------------------------------------------------------------------
@pytest.mark.parametrize("how", ["pickle", "deepcopy", "copy", "replace_joint"])
def test_copies_keep_the_mimic_joints(how, backend, rng):
    model = gripper()
    q, v, a = state(model, rng)
    tau = rbd.rnea(model, q, v, a, backend=backend)  # compiled before copying
    other = {"pickle": lambda m: pickle.loads(pickle.dumps(m)), "deepcopy": copy.deepcopy,
             "copy": lambda m: m.copy(),
             "replace_joint": lambda m: m.replace_joint("palm", rbd.Revolute([0, 0, 1]))}[how](
        model)
    assert other.mimic == MIMIC and (other.nq, other.nv) == (9, 8)
    assert_close(rbd.rnea(other, q, v, a, backend=backend), tau, RTOL_EXACT, how)
    assert other.armature.tolist() == model.armature.tolist()


def test_replacing_a_mimicked_joint_by_a_ball_is_refused():
    with pytest.raises(rbd.ModelError, match="'palm' is spherical"):
        gripper().replace_joint("palm", rbd.Spherical())
