"""Joints as transforms: S and Ṡ by symbolic differentiation (S&G Eqs. 9, 12), generated C."""

import ctypes
import os
import stat
import warnings

import numpy as np
import pytest
import sympy
from helpers import RTOL_EXACT, RTOL_FD, assert_close, body_twist_fd, joint_states

import rbd
from rbd import spatial as sp
from rbd.symbolic import CompilationError, InsecureCacheError, SymbolicJoint, build, twin

#: A twin and its built-in joint evaluate the same closed forms in double precision.
RTOL_TWIN = 1e-12
#: Generated C and lambdified NumPy evaluate the same expressions in double precision.
RTOL_C = 1e-12
H = 1e-6

a, b, c = sympy.symbols("a b c")


def Rz(t):
    return sympy.Matrix([[sympy.cos(t), -sympy.sin(t), 0], [sympy.sin(t), sympy.cos(t), 0],
                         [0, 0, 1]])


def Ry(t):
    return sympy.Matrix([[sympy.cos(t), 0, sympy.sin(t)], [0, 1, 0],
                         [-sympy.sin(t), 0, sympy.cos(t)]])


def Rx(t):
    return sympy.Matrix([[1, 0, 0], [0, sympy.cos(t), -sympy.sin(t)],
                         [0, sympy.sin(t), sympy.cos(t)]])


def homogeneous(R, p=(0, 0, 0)):
    G = sympy.eye(4)
    G[:3, :3] = R
    G[:3, 3] = sympy.Matrix(p)
    return G


@pytest.fixture(scope="module")
def euler():
    """A ball joint parametrized by z-y-x Euler angles: R = Rz(a) Ry(b) Rx(c)."""
    return SymbolicJoint(homogeneous(Rz(a) * Ry(b) * Rx(c)), [a, b, c], name="euler zyx")


@pytest.fixture(scope="module")
def cam():
    """A two-coordinate joint with coupled rotation and translation (no built-in twin)."""
    R = Rz(a) * Rx(b)
    p = (0.3 * sympy.cos(a) * (1 + 0.2 * sympy.sin(b)), 0.5 * sympy.sin(a), 0.1 * a * b)
    return SymbolicJoint(homogeneous(R, p), [a, b], name="cam")


# --- twins of the built-in joints ---------------------------------------------------------
BUILTINS = [
    rbd.Revolute([0, 0, 1]),
    rbd.Revolute([1, 2, 3]),
    rbd.Prismatic([1, -1, 0.5]),
    rbd.Helical([0, 1, 1], pitch=0.2),
    rbd.Universal([1, 0, 0], [0, 1, 0]),
    rbd.Planar([0, 0, 1]),
]


@pytest.mark.parametrize("joint", BUILTINS, ids=repr)
def test_twin_equals_builtin(joint):
    sym = twin(joint)
    assert sym.kind == "symbolic" and sym.code == rbd.joints.JOINT_CODES["symbolic"] == 8
    assert sym.nq == sym.nv == joint.nv
    for q, v in joint_states(joint, 5, 4):
        assert_close(sym.X_J(q), joint.X_J(q), RTOL_TWIN, "X_J")
        assert_close(sym.S(q), joint.S(q), RTOL_TWIN, "S")
        assert_close(sym.S_dot(q, v), joint.S_dot(q, v), RTOL_TWIN, "S_dot")
        assert_close(sym.c_J(q, v), joint.c_J(q, v), RTOL_TWIN, "c_J")


def test_revolute_about_z_is_constant():
    G = homogeneous(Rz(a))
    joint = SymbolicJoint(G, [a])
    assert joint.S_expr == sympy.Matrix([0, 0, 1, 0, 0, 0])
    assert joint.S_dot_expr == sympy.zeros(6, 1)


def test_prismatic_written_by_hand():
    joint = SymbolicJoint(homogeneous(sympy.eye(3), (a, 0, 0)), [a])
    builtin = rbd.Prismatic([1, 0, 0])
    q = np.array([0.7])
    assert_close(joint.X_J(q), builtin.X_J(q), RTOL_TWIN, "X_J")
    assert_close(joint.S(q), builtin.S(q), RTOL_TWIN, "S")


# --- the Euler-angle ball joint against the quaternion one ------------------------------------
def euler_rates_to_omega(q, qd):
    """Body angular velocity of R = Rz(a) Ry(b) Rx(c), written out by hand."""
    _, b_, c_ = q
    ad, bd, cd = qd
    return np.array([cd - ad * np.sin(b_),
                     bd * np.cos(c_) + ad * np.cos(b_) * np.sin(c_),
                     -bd * np.sin(c_) + ad * np.cos(b_) * np.cos(c_)])


def euler_omega_dot(q, qd):
    """d/dt of :func:`euler_rates_to_omega` at q̈ = 0 (the joint's c_J)."""
    _, b_, c_ = q
    ad, bd, cd = qd
    sb, cb, sc, cc = np.sin(b_), np.cos(b_), np.sin(c_), np.cos(c_)
    return np.array([-ad * bd * cb,
                     -bd * cd * sc - ad * bd * sb * sc + ad * cd * cb * cc,
                     -bd * cd * cc - ad * bd * sb * cc - ad * cd * cb * sc])


def test_euler_joint_matches_spherical(euler):
    ball = rbd.Spherical()
    rng = np.random.default_rng(6)
    for _ in range(5):
        q, qd = rng.uniform(-1.2, 1.2, 3), rng.normal(size=3)
        R, p = euler.transform(q)
        quat = sp.rot_to_quat(R)
        assert_close(euler.X_J(q), ball.X_J(quat), RTOL_TWIN, "X_J")
        omega = euler.S(q) @ qd
        assert_close(omega[:3], euler_rates_to_omega(q, qd), RTOL_TWIN, "angular velocity")
        assert_close(omega[3:], np.zeros(3), RTOL_TWIN, "linear velocity")
        # S maps Euler rates into the spherical joint's motion subspace
        assert_close(ball.S(quat) @ omega[:3], omega, RTOL_TWIN, "velocity map")
        assert_close(euler.c_J(q, qd)[:3], euler_omega_dot(q, qd), RTOL_TWIN, "c_J")


# --- S and Ṡ against finite differences of the transform ---------------------------------------
@pytest.mark.parametrize("name", ["euler", "cam"])
def test_S_and_S_dot_against_finite_differences(name, request):
    joint = request.getfixturevalue(name)
    for q, v in joint_states(joint, 7, 4):
        assert_close(joint.S(q) @ v, body_twist_fd(joint, q, v), RTOL_FD, "S v")
        Sd = (joint.S(q + H * v) - joint.S(q - H * v)) / (2 * H)
        assert_close(joint.S_dot(q, v), Sd, RTOL_FD, "S_dot")


# --- every reference algorithm on models with symbolic twins ---------------------------------
ALGORITHMS = {
    "rnea": lambda m, q, v, a: rbd.rnea(m, q, v, a, backend="reference"),
    "crba": lambda m, q, v, a: rbd.crba(m, q, backend="reference"),
    "aba": lambda m, q, v, a: rbd.aba(m, q, v, a, backend="reference"),
    "nonlinear_effects": lambda m, q, v, a: rbd.nonlinear_effects(m, q, v, backend="reference"),
    "forward_kinematics": lambda m, q, v, a: rbd.forward_kinematics(m, q, backend="reference"),
    "kinetic_energy": lambda m, q, v, a: rbd.kinetic_energy(m, q, v, backend="reference"),
}


def test_reference_algorithms_with_twins():
    rng = np.random.default_rng(8)
    model = rbd.testing.random_model(rng, 4, ("revolute", "prismatic", "helical", "planar"))
    twinned = model
    for body in model.bodies:
        twinned = twinned.replace_joint(body.joint_name, twin(body.joint))
    assert all(b.joint.kind == "symbolic" for b in twinned.bodies)
    for _ in range(3):
        q, v, acc = rbd.testing.random_state(model, rng)
        for name, fn in ALGORITHMS.items():
            assert_close(fn(twinned, q, v, acc), fn(model, q, v, acc), RTOL_EXACT, name)


def test_euler_joint_dynamics_equal_ball_joint(euler):
    """τ_euler = Sᵀ τ_ball when the ball moves with ω = S q̇, ω̇ = S q̈ + Ṡ q̇."""
    ball_model = rbd.models.pendulum(2)
    euler_model = ball_model.replace_joint("ball2", euler)
    rng = np.random.default_rng(9)
    for _ in range(3):
        q_e = rng.uniform(-1.0, 1.0, 3)
        qd_e, qdd_e = rng.normal(size=3), rng.normal(size=3)
        S = euler.S(q_e)[:3]
        omega, omega_dot = S @ qd_e, S @ qdd_e + euler.c_J(q_e, qd_e)[:3]
        quat1 = rbd.testing.random_state(ball_model, rng)[0][:4]
        q_b = np.concatenate([quat1, sp.rot_to_quat(euler.transform(q_e)[0])])
        v1, a1 = rng.normal(size=3), rng.normal(size=3)
        tau_b = rbd.rnea(ball_model, q_b, np.concatenate([v1, omega]),
                         np.concatenate([a1, omega_dot]), backend="reference")
        tau_e = rbd.rnea(euler_model, np.concatenate([quat1, q_e]), np.concatenate([v1, qd_e]),
                         np.concatenate([a1, qdd_e]), backend="reference")
        assert_close(tau_e, np.concatenate([tau_b[:3], S.T @ tau_b[3:]]), RTOL_EXACT, "rnea")


# --- generated C ---------------------------------------------------------------------------------
needs_compiler = pytest.mark.skipif(not build.compiler_available(), reason="no C compiler")


@needs_compiler
@pytest.mark.parametrize("name", ["euler", "cam"])
def test_generated_c_equals_lambdified(name, request):
    joint = request.getfixturevalue(name)
    for q, qd in joint_states(joint, 10, 4):
        E, r, S, cJ = joint.jcalc_compiled(q, qd)
        R, p = joint.transform(q)
        assert_close(E, R.T, RTOL_C, "E")
        assert_close(r, p, RTOL_C, "r")
        assert_close(S, joint.S(q), RTOL_C, "S")
        assert_close(cJ, joint.c_J(q, qd), RTOL_C, "cJ")


@needs_compiler
def test_kernel_capsule_calls_jcalc(cam):
    """Call the capsule's C function pointer exactly as the kernels do."""
    capsule = cam.kernel_capsule()
    api = ctypes.pythonapi
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    pointer = api.PyCapsule_GetPointer(capsule, b"rbd.jcalc")
    double_p = ctypes.POINTER(ctypes.c_double)
    jcalc = ctypes.CFUNCTYPE(None, *[double_p] * 6)(pointer)
    q, qd = np.array([0.4, -0.3]), np.array([1.5, 0.7])
    E, r, S, cJ = np.zeros(9), np.zeros(3), np.zeros(12), np.zeros(6)
    jcalc(*[x.ctypes.data_as(double_p) for x in (q, qd, E, r, S, cJ)])
    R, p = cam.transform(q)
    assert_close(E.reshape(3, 3), R.T, RTOL_C, "E row-major")
    assert_close(r, p, RTOL_C, "r")
    assert_close(S.reshape(2, 6).T, cam.S(q), RTOL_C, "S column-major")
    assert_close(cJ, cam.c_J(q, qd), RTOL_C, "cJ")


@pytest.mark.slow
@needs_compiler
def test_compiled_module_is_keyed_by_source(cam, tmp_path, monkeypatch):
    monkeypatch.setenv("RBD_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(build, "_loaded", {})
    first = SymbolicJoint(cam.G, cam.coordinates).compiled_module()
    again = SymbolicJoint(cam.G, cam.coordinates).compiled_module()
    other = SymbolicJoint(cam.G.subs(a, 2 * a), cam.coordinates).compiled_module()
    assert first is again and first is not other
    directory = tmp_path / "generated"
    assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(tmp_path).st_mode) == 0o700
    assert len(list(directory.glob("*.so"))) == 2
    assert build.clear_cache() == 2 and not list(directory.iterdir())


@needs_compiler
def test_refuses_a_cache_others_can_write(cam, tmp_path, monkeypatch):
    cache = tmp_path / "shared"
    cache.mkdir(mode=0o777)
    os.chmod(cache, 0o777)
    monkeypatch.setenv("RBD_CACHE_DIR", str(cache))
    monkeypatch.setattr(build, "_loaded", {})
    with pytest.raises(InsecureCacheError, match="writable by group or others"):
        SymbolicJoint(cam.G, cam.coordinates).kernel_capsule()
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o777  # left as found


@needs_compiler
def test_refuses_a_tampered_module(cam, tmp_path, monkeypatch):
    monkeypatch.setenv("RBD_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(build, "_loaded", {})
    SymbolicJoint(cam.G, cam.coordinates).compiled_module()
    (module,) = (tmp_path / "generated").glob("*.so")
    os.chmod(module, 0o777)
    monkeypatch.setattr(build, "_loaded", {})
    with pytest.raises(InsecureCacheError, match="compiled module"):
        SymbolicJoint(cam.G, cam.coordinates).compiled_module()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="changing a directory's owner needs root")
def test_refuses_a_cache_owned_by_another_user(tmp_path, monkeypatch):
    cache = tmp_path / "theirs"
    cache.mkdir(mode=0o700)
    os.chown(cache, 65534, 65534)
    monkeypatch.setenv("RBD_CACHE_DIR", str(cache))
    with pytest.raises(InsecureCacheError, match="not to the current user"):
        build.cache_directory()


def test_without_compiler_falls_back_with_one_warning(monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/cc")
    monkeypatch.setattr(build, "_warned_no_compiler", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        joint = SymbolicJoint(homogeneous(Rz(a), (0.1 * a, 0, 0)), [a])
        SymbolicJoint(homogeneous(Rx(a)), [a])
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(messages) == 1 and "no C compiler" in messages[0]
    with pytest.raises(CompilationError, match="no C compiler"):
        joint.kernel_capsule()
    model = rbd.Model()
    model.add_body(-1, joint, None, (1.0, [0.1, 0, 0], np.eye(3) * 0.01))
    q, v, acc = np.array([0.3]), np.array([0.2]), np.array([-0.5])
    tau = rbd.rnea(model, q, v, acc, backend="reference")
    assert_close(rbd.aba(model, q, v, tau, backend="reference"), acc, RTOL_EXACT, "aba∘rnea")


# --- bad transforms and coordinates -------------------------------------------------------------
@pytest.mark.parametrize("transform, coordinates, message", [
    (sympy.eye(3), [a], "must be 4×4"),
    (homogeneous(Rz(a)) + sympy.Matrix(4, 4, lambda i, j: a if (i, j) == (3, 1) else 0), [a],
     r"entry \(3, 1\) of the transform is a, not 0"),
    (homogeneous(2 * Rz(a)), [a], r"not orthonormal: entry \(0, 0\) of RᵀR is 4"),
    (homogeneous(sympy.diag(1, 1, -1) * Rz(a)), [a], "reflection"),
    (homogeneous(Rz(a)), [a, b], "coordinate.*b do not appear"),
    (homogeneous(Rz(a), (c, 0, 0)), [a], r"symbols \['c'\] that are neither"),
    (homogeneous(Rz(a)), ["a"], "is not a sympy Symbol"),
    (homogeneous(Rz(a)), [a, a], "repeated coordinates"),
])
def test_bad_transform_raises(transform, coordinates, message):
    before = sympy.Matrix(transform)
    with pytest.raises(rbd.ModelError, match=message):
        SymbolicJoint(transform, coordinates)
    assert sympy.Matrix(transform) == before


def test_parameters_are_substituted():
    length = sympy.Symbol("length")
    joint = SymbolicJoint(homogeneous(Rz(a), (length * sympy.cos(a), 0, 0)), [a],
                          parameters={length: 0.5})
    R, p = joint.transform(np.array([0.0]))
    assert_close(p, [0.5, 0.0, 0.0], RTOL_TWIN, "p")


def test_undefined_configuration_raises_input_error():
    root = SymbolicJoint(homogeneous(Rz(a), (sympy.sqrt(1 - a**2), 0, 0)), [a])
    assert_close(root.transform(np.array([0.6]))[1], [0.8, 0.0, 0.0], RTOL_TWIN, "p")
    with pytest.raises(rbd.InputError, match=r"not defined at q = \[2.0\]"):
        root.transform(np.array([2.0]))
