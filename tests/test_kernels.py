"""The compiled kernels against the reference derivations, batches, validation, threads.

Tolerances
----------
``RTOL_KERNEL = 1e-12`` (about 4500 ε): kernel and reference compute the same
exact recursions in double precision, differing only in the order of the
floating-point operations (fused 3-vector algebra instead of 6×6 products,
Rodrigues instead of the matrix exponential).  Each result is an O(n) sum of
O(1) products, so the two differ by a few tens of ε relative to the largest
entry; 1e-12 leaves a margin of ~100.  Forward dynamics and ``M⁻¹`` solve with
``M`` (the reference by Cholesky, the kernel by articulated-body elimination):
their forward errors scale with ``κ(M) ε``, so the tolerance there is
``RTOL_KERNEL · max(1, κ(M) / 1e4)`` — still 1e-12 on the models below, whose
``κ(M)`` is at most ~1e4.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from helpers import assert_batch_row

import rbd
from rbd.testing import random_model, random_state, relative_difference

RTOL_KERNEL = 1e-12
KINDS = ("revolute", "prismatic", "helical", "universal", "spherical", "planar", "free")

pytestmark = pytest.mark.usefixtures("require_kernels")


def test_kernels_built():
    """Fails when the compiled kernels did not build (unless RBD_NO_EXTENSIONS=1)."""
    if rbd._backend.kernels_disabled():
        pytest.skip("RBD_NO_EXTENSIONS=1: the pure-Python path is forced")
    assert rbd.has_kernels(), f"kernels did not import: {rbd._backend.import_error()}"
    from rbd._kernels._model import CompiledModel

    assert isinstance(rbd.algorithms.compiled(rbd.models.arm7()), CompiledModel)


def test_kernels_import_nothing_above_them():
    """``_model.pyx`` takes its conversions and tolerance from ``rbd._validation``, the same
    values the public layer uses, and caches the compiled model where it does (the
    sources' imports are checked in tests/test_twins.py)."""
    from rbd import _validation
    from rbd._kernels import _model

    assert rbd.algorithms.QUATERNION_TOLERANCE == _validation.QUATERNION_TOLERANCE
    model = rbd.models.arm7()
    assert _model.compiled_model(model) is rbd.algorithms.compiled(model)
    with pytest.raises(rbd.InputError, match="model must be an rbd.Model, got str"):
        _model.compiled_model("arm7")
    with pytest.raises(rbd.ModelError, match="needs an rbd.Model"):
        _model.CompiledModel(object())


def test_quaternion_tolerance_matches_the_public_one():
    model = rbd.models.pendulum(1)
    q = np.array([0.0, 0.0, 0.0, 1.0 + 0.9 * rbd.algorithms.QUATERNION_TOLERANCE])
    rbd.crba(model, q, backend="kernel")
    q[3] = 1.0 + 1.1 * rbd.algorithms.QUATERNION_TOLERANCE
    with pytest.raises(rbd.InputError, match="q: the quaternion"):
        rbd.crba(model, q, backend="kernel")


# --- models ------------------------------------------------------------------------------
def with_fixed_joints(seed: int) -> rbd.Model:
    """A random tree with welded bodies at the root, in the middle and at a leaf."""
    rng = np.random.default_rng(seed)
    base = random_model(rng, 5, KINDS[:-1])
    model = rbd.Model(gravity=(0.3, -1.0, -9.0))
    fixed = {0, 2}
    index = {}
    for i, body in enumerate(base.bodies):
        parent = -1 if body.parent < 0 else index[body.parent]
        joint = rbd.Fixed() if i in fixed else body.joint
        index[i] = model.add_body(parent, joint, body.X_tree, body.inertia, body.name)
    model.add_body(index[4], rbd.Fixed(), (np.eye(3), [0.1, 0.0, 0.2]),
                   (0.5, [0.0, 0.1, 0.0], 0.01 * np.eye(3)), "tool")
    return model


MODELS = {
    **{f"chain-{kind}": (lambda kind=kind, s=s: random_model(100 + s, 4, (kind,), chain=True))
       for s, kind in enumerate(KINDS)},
    "tree-mixed": lambda: random_model(7, 8, KINDS[:-1]),
    "tree-floating": lambda: random_model(8, 7, KINDS[:-1], floating_base=True),
    "tree-free-inside": lambda: random_model(9, 5, ("free", "spherical", "universal")),
    "fixed-joints": lambda: with_fixed_joints(10),
    "one-body": lambda: rbd.models.revolute_chain(1),
    "humanoid": rbd.models.humanoid,
}


@pytest.fixture(params=sorted(MODELS))
def model(request):
    return MODELS[request.param]()


def solve_tolerance(model, q) -> float:
    kappa = np.linalg.cond(rbd.crba(model, q, backend="reference")) if model.nv else 1.0
    return RTOL_KERNEL * max(1.0, kappa / 1e4)


def close(name, kernel, reference, rtol=RTOL_KERNEL):
    err = relative_difference(kernel, reference)
    assert err <= rtol, f"{name}: kernel and reference differ by {err:.2e} (> {rtol:.1e})"


# --- kernel == reference ---------------------------------------------------------------------
@pytest.mark.slow
def test_dynamics_match_reference(model):
    rng = np.random.default_rng(1)
    for _ in range(2):
        q, v, a = random_state(model, rng)
        f = rng.normal(size=(model.nbodies, 6))
        tol = solve_tolerance(model, q)
        for name, args, rtol in [
            ("rnea", (q, v, a), RTOL_KERNEL),
            ("rnea", (q, v, a, f), RTOL_KERNEL),
            ("nonlinear_effects", (q, v), RTOL_KERNEL),
            ("gravity_forces", (q,), RTOL_KERNEL),
            ("crba", (q,), RTOL_KERNEL),
            ("aba", (q, v, a), tol),
            ("aba", (q, v, a, f), tol),
            ("mass_matrix_inverse", (q,), tol),
        ]:
            fn = getattr(rbd, name)
            close(name, fn(model, *args, backend="kernel"), fn(model, *args, backend="reference"),
                  rtol)


def test_kinematics_match_reference(model):
    rng = np.random.default_rng(2)
    q, v, _ = random_state(model, rng)
    for name, args in [
        ("kinetic_energy", (q, v)),
        ("potential_energy", (q,)),
        ("forward_kinematics", (q,)),
        ("center_of_mass", (q,)),
        ("body_centers_of_mass", (q,)),
    ]:
        fn = getattr(rbd, name)
        close(name, fn(model, *args, backend="kernel"), fn(model, *args, backend="reference"))
    for body in range(model.nbodies):
        point = rng.uniform(-0.5, 0.5, 3)
        close(f"jacobian of body {body}",
              rbd.jacobian(model, q, body, point, backend="kernel"),
              rbd.jacobian(model, q, body, point, backend="reference"))


@pytest.mark.parametrize("scale", [1.0, 1e-9, 1e-13, 30.0])
def test_integrate_matches_reference(model, scale):
    """Large and tiny steps (the small-angle branches of exp) and both signs of dt."""
    q, v, _ = random_state(model, 3)
    for dt in (0.05, -0.3):
        close("integrate", rbd.integrate(model, q, scale * v, dt, backend="kernel"),
              rbd.integrate(model, q, scale * v, dt, backend="reference"))


def test_gravity_enters_as_base_acceleration():
    model = random_model(11, 4, KINDS, gravity=(1.0, 2.0, -3.0))
    q, v, a = random_state(model, 4)
    close("rnea", rbd.rnea(model, q, v, a, backend="kernel"),
          rbd.rnea(model, q, v, a, backend="reference"))
    close("potential_energy", rbd.potential_energy(model, q, backend="kernel"),
          rbd.potential_energy(model, q, backend="reference"))


def test_zero_external_force_is_no_external_force(model):
    q, v, a = random_state(model, 5)
    zero = np.zeros((model.nbodies, 6))
    np.testing.assert_array_equal(rbd.rnea(model, q, v, a, zero, backend="kernel"),
                                  rbd.rnea(model, q, v, a, backend="kernel"))
    np.testing.assert_array_equal(rbd.aba(model, q, v, a, zero, backend="kernel"),
                                  rbd.aba(model, q, v, a, backend="kernel"))


# --- symbolic joints ---------------------------------------------------------------------------
@pytest.mark.slow
def test_symbolic_joints_through_generated_c():
    symbolic = pytest.importorskip("rbd.symbolic")
    if not symbolic.compiler_available():
        pytest.skip("no C compiler: symbolic joints cannot enter the kernels")
    rng = np.random.default_rng(12)
    # axis-aligned joints keep the symbolic simplification quick
    joints = [rbd.Universal([1, 0, 0], [0, 1, 0]), rbd.Revolute([0, 0, 1]),
              rbd.Planar([0, 0, 1]), rbd.Helical([0, 1, 0], 0.1)]
    base, model = rbd.Model(), rbd.Model()
    for i, joint in enumerate(joints):
        X_tree = rbd.spatial.plux(rbd.testing.random_rotation(rng), rng.uniform(-0.5, 0.5, 3))
        inertia = rbd.testing.random_inertia(rng)
        base.add_body(i - 1, joint, X_tree, inertia)
        model.add_body(i - 1, joint if joint.kind == "revolute" else symbolic.twin(joint),
                       X_tree, inertia)
    assert sum(j.kind == "symbolic" for j in model.joints) == 3
    q, v, a = random_state(model, 6)
    f = np.random.default_rng(6).normal(size=(model.nbodies, 6))
    for name, args in [("rnea", (q, v, a, f)), ("crba", (q,)), ("aba", (q, v, a, f)),
                       ("forward_kinematics", (q,)), ("kinetic_energy", (q, v)),
                       ("integrate", (q, v, 0.1))]:
        fn = getattr(rbd, name)
        kernel = fn(model, *args, backend="kernel")
        close(name, kernel, fn(model, *args, backend="reference"), solve_tolerance(model, q))
        # the built-in joint of the same motion gives the same numbers
        close(name, kernel, fn(base, *args, backend="reference"), solve_tolerance(model, q))
    batch = rbd.aba(model, np.stack([q, q]), v, a, backend="kernel")
    assert_batch_row("aba", batch[0], rbd.aba(model, q, v, a, backend="kernel"), model,
                     (q, v, a))


class _NoCapsule(rbd.Revolute):
    """A symbolic-kind joint without generated code."""

    kind = "symbolic"


class _BrokenCapsule(rbd.Revolute):
    kind = "symbolic"

    def kernel_capsule(self):
        raise RuntimeError("no C compiler")


@pytest.mark.parametrize("joint", [_NoCapsule(), _BrokenCapsule()])
def test_symbolic_joint_without_c_function_is_a_model_error(joint):
    from rbd._kernels._model import CompiledModel

    model = rbd.Model()
    model.add_body(-1, joint, None, (1.0, [0.1, 0, 0], 0.01 * np.eye(3)), "link",
                   "bad_joint")
    with pytest.raises(rbd.ModelError, match="bad_joint.*no compiled C function"):
        CompiledModel(model)
    with pytest.raises(rbd.ModelError, match="bad_joint"):
        rbd.rnea(model, [0.1], [0.0], [0.0], backend="kernel")


# --- batches -------------------------------------------------------------------------------
def _batch(model, n, seed=7):
    rng = np.random.default_rng(seed)
    states = [random_state(model, rng) for _ in range(n)]
    Q = np.array([s[0] for s in states]).reshape(n, model.nq)
    V = np.array([s[1] for s in states]).reshape(n, model.nv)
    A = np.array([s[2] for s in states]).reshape(n, model.nv)
    F = rng.normal(size=(n, model.nbodies, 6))
    return Q, V, A, F


def _methods(Q, V, A, F):
    return {
        "rnea": (Q, V, A, F),
        "nonlinear_effects": (Q, V),
        "gravity_forces": (Q,),
        "crba": (Q,),
        "aba": (Q, V, A, F),
        "aba_modified": (Q, V, A, F),
        "forward_dynamics_ploen": (Q, V, A, F),
        "mass_matrix_inverse": (Q,),
        "kinetic_energy": (Q, V),
        "potential_energy": (Q,),
        "forward_kinematics": (Q,),
        "center_of_mass": (Q,),
        "body_centers_of_mass": (Q,),
        "integrate": (Q, V, 0.01),
    }


def test_batched_equals_per_call(model):
    """The same compiled code on the same numbers: bit-for-bit equal (to rounding for the
    batches that run in lanes, ``helpers.assert_batch_row``)."""
    Q, V, A, F = _batch(model, 9)
    kernel = rbd.algorithms.compiled(model)
    for name, args in _methods(Q, V, A, F).items():
        method = getattr(kernel, name)
        batch = method(*args)
        for k in range(len(Q)):
            single = method(*[x[k] if isinstance(x, np.ndarray) else x for x in args])
            assert_batch_row(name, batch[k], single, model, (Q[k], V[k], A[k]))
    batch = kernel.jacobian(Q, model.nbodies - 1, [0.1, 0.2, 0.3])
    for k in range(len(Q)):
        np.testing.assert_array_equal(
            batch[k], kernel.jacobian(Q[k], model.nbodies - 1, [0.1, 0.2, 0.3]))


def test_single_arguments_broadcast_over_a_batch():
    model = random_model(13, 5, KINDS)
    Q, V, A, F = _batch(model, 4)
    tau = rbd.rnea(model, Q[0], V, A[0], F[1], backend="kernel")
    assert tau.shape == (4, model.nv)
    for k in range(4):
        assert_batch_row("rnea", tau[k], rbd.rnea(model, Q[0], V[k], A[0], F[1],
                                                  backend="kernel"))


@pytest.mark.parametrize("n", [0, 1])
def test_batches_of_size_zero_and_one(n):
    """A batch of N states gives a result with a leading axis N, also for N = 0 and 1."""
    model = random_model(14, 4, KINDS, floating_base=True)
    Q, V, A, F = _batch(model, max(n, 1))
    Q, V, A, F = Q[:n], V[:n], A[:n], F[:n]
    kernel = rbd.algorithms.compiled(model)
    nb, nv, nq = model.nbodies, model.nv, model.nq
    shapes = {
        "rnea": (nv,), "nonlinear_effects": (nv,), "gravity_forces": (nv,),
        "crba": (nv, nv), "aba": (nv,), "aba_modified": (nv,), "forward_dynamics_ploen": (nv,),
        "mass_matrix_inverse": (nv, nv),
        "kinetic_energy": (), "potential_energy": (), "forward_kinematics": (nb, 4, 4),
        "center_of_mass": (3,), "body_centers_of_mass": (nb, 3), "integrate": (nq,),
    }
    for name, args in _methods(Q, V, A, F).items():
        out = getattr(kernel, name)(*args)
        assert out.shape == (n, *shapes[name]), name
        if n == 1:
            single = getattr(kernel, name)(*[x[0] if isinstance(x, np.ndarray) else x
                                             for x in args])
            assert_batch_row(name, out[0], single, model, (Q[0], V[0], A[0]))
    assert kernel.jacobian(Q, 0).shape == (n, 6, nv)


def test_scalar_results_are_floats():
    model = rbd.models.double_pendulum()
    T = rbd.kinetic_energy(model, [0.1, 0.2], [0.3, 0.4], backend="kernel")
    U = rbd.potential_energy(model, [0.1, 0.2], backend="kernel")
    assert type(T) is float and type(U) is float


def _on_threads(kernel, counts, run) -> list:
    """``run()`` with ``kernel.num_threads`` set to each of ``counts`` in turn (then restored)."""
    saved = kernel.num_threads
    try:
        results = []
        for n in counts:
            kernel.num_threads = n
            results.append(run())
        return results
    finally:
        kernel.num_threads = saved


def test_thread_count_does_not_change_results():
    model = random_model(15, 6, KINDS, floating_base=True)
    Q, V, A, F = _batch(model, 37)
    kernel = rbd.algorithms.compiled(model)
    serial, parallel = _on_threads(kernel, (1, 3), lambda: kernel.aba(Q, V, A, F))
    np.testing.assert_array_equal(serial, parallel)
    with pytest.raises(rbd.InputError, match="num_threads"):
        kernel.num_threads = 0


def test_concurrent_calls_from_python_threads():
    """Batched and single calls on one model from several threads at once."""
    model = random_model(16, 6, KINDS, floating_base=True)
    Q, V, A, F = _batch(model, 64)
    expected_batch = rbd.aba(model, Q, V, A, F, backend="kernel")
    expected_single = [rbd.rnea(model, Q[k], V[k], A[k], backend="kernel") for k in range(8)]
    errors = []
    barrier = threading.Barrier(4)

    def batched():
        barrier.wait()
        for _ in range(20):
            if not np.array_equal(rbd.aba(model, Q, V, A, F, backend="kernel"),
                                  expected_batch):
                errors.append("batched aba differs")

    def single():
        barrier.wait()
        for _ in range(50):
            for k in range(8):
                if not np.array_equal(rbd.rnea(model, Q[k], V[k], A[k], backend="kernel"),
                                      expected_single[k]):
                    errors.append("single rnea differs")

    threads = [threading.Thread(target=t) for t in (batched, batched, single, single)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]


# --- inputs -------------------------------------------------------------------------------
def test_other_input_types_are_converted():
    """Lists, float32, Fortran order, strided and byte-swapped arrays: converted once."""
    model = random_model(17, 4, ("revolute", "universal"))
    Q, V, A, _ = _batch(model, 3)
    expected = rbd.aba(model, Q, V, A, backend="kernel")
    strided = np.zeros((3, 2 * model.nv))
    strided[:, ::2] = V
    for q, v, a in [
        (Q.tolist(), V.tolist(), A.tolist()),
        (np.asfortranarray(Q), np.asfortranarray(V), np.asfortranarray(A)),
        (Q, strided[:, ::2], A),
        (Q.astype(">f8"), V, A.astype(np.longdouble)),
    ]:
        np.testing.assert_array_equal(rbd.aba(model, q, v, a, backend="kernel"), expected)
    # float32 inputs are the float64 numbers they round to
    Q32, V32, A32 = (x.astype(np.float32) for x in (Q, V, A))
    np.testing.assert_array_equal(
        rbd.aba(model, Q32, V32, A32, backend="kernel"),
        rbd.aba(model, Q32.astype(float), V32.astype(float), A32.astype(float),
                backend="kernel"))


def _expect_input_error(fn, pattern, *arrays):
    before = [np.array(x, copy=True) for x in arrays]
    with pytest.raises(rbd.InputError, match=pattern):
        fn()
    for x, y in zip(arrays, before, strict=True):
        np.testing.assert_array_equal(np.asarray(x), y, err_msg="an input was modified")


@pytest.fixture
def floating():
    return random_model(18, 4, ("revolute", "spherical"), floating_base=True)


def test_wrong_shapes_name_the_argument(floating):
    kernel = rbd.algorithms.compiled(floating)
    q, v, a = random_state(floating, 0)
    f = np.zeros((floating.nbodies, 6))
    nq, nv, nb = floating.nq, floating.nv, floating.nbodies
    cases = [
        (lambda: kernel.rnea(q[:-1], v, a),
         rf"^q must have shape \({nq},\) or \(N, {nq}\), got \({nq - 1},\)", q),
        (lambda: kernel.rnea(q[None, None], v, a), r"^q must have shape", q),
        (lambda: kernel.rnea(q, v[1:], a), rf"^v must have shape \({nv},\)", v),
        (lambda: kernel.rnea(q, v, a[:, None]), r"^a must have shape", a),
        (lambda: kernel.aba(q, v, a[:2]), r"^tau must have shape", a),
        (lambda: kernel.rnea(q, v, a, f[1:]),
         rf"^f_ext must have shape \({nb}, 6\) or \(N, {nb}, 6\)", f),
        (lambda: kernel.aba(q, v, a, f.ravel()), r"^f_ext must have shape", f),
        (lambda: kernel.crba(np.float64(1.0)), r"^q must have shape .* got \(\)", ),
        (lambda: kernel.jacobian(q, 1, [1.0, 2.0]), r"^point must have shape \(3,\)", ),
    ]
    for fn, pattern, *arrays in cases:
        _expect_input_error(fn, pattern, *arrays)


def test_non_numeric_and_non_finite_name_the_argument(floating):
    kernel = rbd.algorithms.compiled(floating)
    q, v, a = random_state(floating, 1)
    for bad in ("abc", [None] * floating.nv, {"a": 1}, np.array([1j] * floating.nv)):
        _expect_input_error(lambda bad=bad: kernel.aba(q, bad, a), r"^v (must be|has non-fin)")
        _expect_input_error(lambda bad=bad: kernel.aba(q, v, bad), r"^tau (must be|has non-fin)")
    for value in (np.nan, np.inf, -np.inf):
        for slot, name in ((0, "q"), (1, "v"), (2, "a")):
            args = [q.copy(), v.copy(), a.copy()]
            args[slot][0] = value
            _expect_input_error(lambda args=args: kernel.rnea(*args), rf"^{name} has non-finite",
                                *args)
        f = np.zeros((floating.nbodies, 6))
        f[2, 3] = value
        _expect_input_error(lambda f=f: kernel.rnea(q, v, a, f), r"^f_ext has non-finite", f)
        point = np.array([0.0, value, 0.0])
        _expect_input_error(lambda p=point: kernel.jacobian(q, 1, p), r"^point has non-finite",
                            point)
        _expect_input_error(lambda value=value: kernel.integrate(q, v, value), r"^dt must be")
    _expect_input_error(lambda: kernel.integrate(q, v, "soon"), r"^dt must be a number")


def test_non_unit_quaternions_name_the_joint(floating):
    kernel = rbd.algorithms.compiled(floating)
    q, v, a = random_state(floating, 2)
    Q = np.stack([q, q, q])
    Q[2, 3:7] *= 1.01  # the free joint's quaternion of the third state
    for name in ("crba", "forward_kinematics", "potential_energy", "mass_matrix_inverse"):
        _expect_input_error(lambda name=name: getattr(kernel, name)(Q),
                            r"^q: the quaternion of joint 'joint_b0' \(q\[3:7\]\) has norm 1.01",
                            Q)
    bad = q.copy()
    spherical = [i for i, b in enumerate(floating.bodies) if b.joint.kind == "spherical"][0]
    start = floating.q_index(spherical).start
    bad[start:start + 4] = 0.0
    _expect_input_error(lambda: kernel.aba(bad, v, a), rf"^q: .*\(q\[{start}:{start + 4}\]\) "
                        r"has norm 0, not 1", bad)
    _expect_input_error(lambda: kernel.integrate(bad, v, 0.1), r"^q: the quaternion", bad)


def test_batch_sizes_must_agree(floating):
    kernel = rbd.algorithms.compiled(floating)
    Q, V, A, F = _batch(floating, 3)
    _expect_input_error(lambda: kernel.rnea(Q, V[:2], A), r"^v has batch size 2, other "
                        r"arguments have 3", Q, V, A)
    _expect_input_error(lambda: kernel.aba(Q, V, A[:1]), r"^tau has batch size 1", A)
    _expect_input_error(lambda: kernel.rnea(Q, V, A, F[:2]), r"^f_ext has batch size 2", F)
    _expect_input_error(lambda: kernel.integrate(Q[:2], V, 0.1), r"^v has batch size 3")


def test_jacobian_body_index(floating):
    kernel = rbd.algorithms.compiled(floating)
    q, _, _ = random_state(floating, 3)
    for body in (-1, floating.nbodies, 1.0, True, "b1"):
        with pytest.raises(rbd.InputError, match="^body"):
            kernel.jacobian(q, body)


def test_singular_articulated_inertia_is_a_model_error():
    """A joint that moves no mass has D = 0: forward dynamics is undefined."""
    model = rbd.Model()
    b = model.add_body(-1, rbd.Revolute([0, 0, 1]), None, (1.0, [0.2, 0, 0], 0.01 * np.eye(3)))
    model.add_body(b, rbd.Revolute([1, 0, 0]), None, None, "massless", "idle_joint")
    for fn in (lambda: rbd.aba(model, [0.1, 0.2], [0, 0], [0, 0], backend="kernel"),
               lambda: rbd.aba(model, [[0.1, 0.2]] * 3, [0, 0], [0, 0], backend="kernel"),
               lambda: rbd.mass_matrix_inverse(model, [0.1, 0.2], backend="kernel")):
        with pytest.raises(rbd.ModelError, match="'idle_joint' is not positive definite"):
            fn()
    rbd.rnea(model, [0.1, 0.2], [0, 0], [0, 0], backend="kernel")  # inverse dynamics is fine


# --- the workspace ---------------------------------------------------------------------------
def test_data_shows_the_last_single_call():
    from rbd.reference.kinematics import body_velocities

    model = random_model(19, 5, KINDS, floating_base=True)
    kernel = rbd.algorithms.compiled(model)
    q, v, a = random_state(model, 4)
    rbd.rnea(model, q, v, a, backend="kernel")
    data = kernel.data
    assert isinstance(data, rbd.data.Data)
    close("v", data.v, body_velocities(model, q, v))
    for i, body in enumerate(model.bodies):
        qi = q[model.q_index(i)]
        close(f"X_up[{i}]", data.X_up[i], body.joint.X_J(qi) @ body.X_tree)
        close(f"S[{i}]", data.S[:, model.v_index(i)], body.joint.S(qi))
    Q = np.stack([q, q])
    before = data.buffer.copy()
    rbd.aba(model, Q, 2 * v, a, backend="kernel")  # batches use their own workspaces
    np.testing.assert_array_equal(data.buffer, before)
    rbd.crba(model, q, backend="kernel")
    X_up = [b.joint.X_J(q[model.q_index(i)]) @ b.X_tree for i, b in enumerate(model.bodies)]
    IC = [np.array(b.inertia) for b in model.bodies]
    for i in range(model.nbodies - 1, -1, -1):
        if model.bodies[i].parent >= 0:
            IC[model.bodies[i].parent] += X_up[i].T @ IC[i] @ X_up[i]
    close("IC", data.IC, np.array(IC))
    rbd.aba(model, q, v, a, backend="kernel")
    for i in range(model.nbodies):
        n = model.bodies[i].joint.nv
        S = data.S[:, model.v_index(i)]
        close(f"D[{i}]", data.D_block(i), S.T @ data.IA[i] @ S)
        close(f"D_inv[{i}]", data.D_inv[i, :n, :n] @ data.D_block(i), np.eye(n))


def test_modified_pivot_through_the_compiled_model():
    model = random_model(20, 5, KINDS, floating_base=True)
    Q, V, A, F = _batch(model, 3)
    kernel = rbd.algorithms.compiled(model)
    close("aba_modified", kernel.aba_modified(Q, V, A, F), kernel.aba(Q, V, A, F),
          solve_tolerance(model, Q[0]))
    close("aba_modified", rbd.aba(model, Q[0], V[0], A[0], pivot="modified", backend="kernel"),
          rbd.aba(model, Q[0], V[0], A[0], backend="reference"), solve_tolerance(model, Q[0]))


# --- the forward-dynamics variants on the compiled model -------------------------------------
def _variants():
    from rbd._kernels import block_elimination, ploen

    return {"aba_modified": block_elimination.aba_modified,
            "ploen": ploen.forward_dynamics}


def test_variant_batches_equal_per_call_on_any_thread_count():
    """The variants' batches run on the compiled model's threads: bit-for-bit per-call results."""
    model = random_model(21, 6, KINDS, floating_base=True)
    Q, V, A, F = _batch(model, 23)
    kernel = rbd.algorithms.compiled(model)
    for name, fn in _variants().items():
        parallel, serial = _on_threads(kernel, (2, 1), lambda fn=fn: fn(model, Q, V, A, F))
        np.testing.assert_array_equal(parallel, serial, err_msg=name)
        for k in range(len(Q)):
            np.testing.assert_array_equal(parallel[k], fn(model, Q[k], V[k], A[k], F[k]),
                                          err_msg=name)
        # shared arguments broadcast over the batch
        np.testing.assert_array_equal(fn(model, Q[0], V, A[0]),
                                      [fn(model, Q[0], V[k], A[0]) for k in range(len(Q))],
                                      err_msg=name)


def test_variants_name_the_bad_argument(floating):
    q, v, tau = random_state(floating, 5)
    f = np.zeros((floating.nbodies, 6))
    Q = np.stack([q, q, q])
    bad_quaternion = Q.copy()
    bad_quaternion[1, 3:7] *= 1.01
    v_nan = v.copy()
    v_nan[2] = np.nan
    f_inf = f.copy()
    f_inf[1, 4] = np.inf
    nq, nv, nb = floating.nq, floating.nv, floating.nbodies
    for fn in _variants().values():
        cases = [
            (lambda fn=fn: fn(floating, q[:-1], v, tau),
             rf"^q must have shape \({nq},\) or \(N, {nq}\)", q),
            (lambda fn=fn: fn(floating, q, v[1:], tau), rf"^v must have shape \({nv},\)", v),
            (lambda fn=fn: fn(floating, q, v, tau[:, None]), r"^tau must have shape", tau),
            (lambda fn=fn: fn(floating, q, v, tau, f[:, :5]),
             rf"^f_ext must have shape \({nb}, 6\)", f),
            (lambda fn=fn: fn(floating, q, v_nan, tau), r"^v has non-finite entries", v_nan),
            (lambda fn=fn: fn(floating, q, v, "abc"), r"^tau must be a numeric array"),
            (lambda fn=fn: fn(floating, q, v, tau, f_inf), r"^f_ext has non-finite", f_inf),
            (lambda fn=fn: fn(floating, bad_quaternion, v, tau),
             r"^q: the quaternion of joint 'joint_b0' \(q\[3:7\]\) has norm 1.01",
             bad_quaternion),
            (lambda fn=fn: fn(floating, Q, np.stack([v, v]), tau),
             r"^v has batch size 2, other arguments have 3", Q),
            (lambda fn=fn: fn(object(), q, v, tau), r"^model must be an rbd.Model"),
        ]
        for call, pattern, *arrays in cases:
            _expect_input_error(call, pattern, *arrays)


def test_variants_report_a_joint_without_inertia_in_a_batch():
    model = rbd.Model()
    b = model.add_body(-1, rbd.Revolute([0, 0, 1]), None, (1.0, [0.2, 0, 0], 0.01 * np.eye(3)))
    model.add_body(b, rbd.Revolute([1, 0, 0]), None, None, "massless", "idle_joint")
    for fn in _variants().values():
        with pytest.raises(rbd.ModelError, match="'idle_joint' is not positive definite"):
            fn(model, [[0.1, 0.2]] * 5, [0, 0], [0, 0])
