"""Bad input at the public boundary: InputError naming the argument, inputs untouched."""

import warnings

import numpy as np
import pytest

import rbd


@pytest.fixture
def model():
    return rbd.testing.random_model(3, 3, ("revolute", "spherical"), floating_base=True)


def good(model):
    q, v, a = rbd.testing.random_state(model, 0)
    return q, v, a


def calls(model, q, v, a, f):
    return {
        "rnea": lambda b: rbd.rnea(model, q, v, a, f, backend=b),
        "aba": lambda b: rbd.aba(model, q, v, a, f, backend=b),
        "crba": lambda b: rbd.crba(model, q, backend=b),
        "nonlinear_effects": lambda b: rbd.nonlinear_effects(model, q, v, backend=b),
        "kinetic_energy": lambda b: rbd.kinetic_energy(model, q, v, backend=b),
        "forward_kinematics": lambda b: rbd.forward_kinematics(model, q, backend=b),
        "integrate": lambda b: rbd.integrate(model, q, v, 0.1, backend=b),
    }


def check_raises(fn, backend, pattern, *arrays):
    before = [np.array(x, copy=True) for x in arrays]
    with pytest.raises(rbd.InputError, match=pattern):
        fn(backend)
    for x, y in zip(arrays, before, strict=True):
        assert np.array_equal(np.asarray(x), y, equal_nan=True), "input was modified"


def test_wrong_shapes(model, backend):
    q, v, a = good(model)
    check_raises(lambda b: rbd.rnea(model, q[:-1], v, a, backend=b), backend, r"\bq\b", q)
    check_raises(lambda b: rbd.rnea(model, q, v[:-1], a, backend=b), backend, r"\bv\b", v)
    check_raises(lambda b: rbd.rnea(model, q, v, a[:, None], backend=b), backend, r"\ba\b", a)
    check_raises(lambda b: rbd.aba(model, q, v, a[:2], backend=b), backend, r"\btau\b", a)
    f = np.zeros((model.nbodies + 1, 6))
    check_raises(lambda b: rbd.rnea(model, q, v, a, f, backend=b), backend, "f_ext", f)
    check_raises(lambda b: rbd.crba(model, np.zeros((2, 3, model.nq)), backend=b), backend,
                 r"\bq\b")


def test_non_finite_values(model, backend):
    q, v, a = good(model)
    v_bad = v.copy()
    v_bad[1] = np.nan
    for name, fn in calls(model, q, v_bad, a, None).items():
        if name in ("crba", "forward_kinematics"):
            continue
        check_raises(fn, backend, r"\bv\b", v_bad)
    a_bad = a.copy()
    a_bad[0] = np.inf
    check_raises(lambda b: rbd.rnea(model, q, v, a_bad, backend=b), backend, r"\ba\b", a_bad)


def test_non_unit_quaternion(model, backend):
    q, v, a = good(model)
    q_bad = q.copy()
    q_bad[3:7] *= 1.01  # the free joint's quaternion
    for fn in calls(model, q_bad, v, a, None).values():
        check_raises(fn, backend, r"\bq\b.*quaternion", q_bad)
    # within the tolerance is accepted
    q_ok = q.copy()
    q_ok[3:7] *= 1 + 1e-9
    rbd.rnea(model, q_ok, v, a, backend=backend)


def test_non_numeric_and_batch_mismatch(model, backend):
    q, v, a = good(model)
    with pytest.raises(rbd.InputError, match=r"\bq\b"):
        rbd.crba(model, "not an array", backend=backend)
    Q = np.stack([q, q, q])
    V = np.stack([v, v])
    with pytest.raises(rbd.InputError, match="batch"):
        rbd.nonlinear_effects(model, Q, V, backend=backend)


def test_bad_backend_and_model():
    model = rbd.models.double_pendulum()
    with pytest.raises(rbd.InputError, match="backend"):
        rbd.crba(model, [0.0, 0.0], backend="gpu")
    with pytest.raises(rbd.InputError, match="model"):
        rbd.crba("double_pendulum", [0.0, 0.0])
    with pytest.raises(rbd.InputError, match="pivot"):
        rbd.aba(model, [0, 0], [0, 0], [0, 0], pivot="nope")


def test_jacobian_errors(model, backend):
    q, _, _ = good(model)
    with pytest.raises(rbd.InputError, match="body"):
        rbd.jacobian(model, q, "no such body", backend=backend)
    with pytest.raises(rbd.InputError, match="point"):
        rbd.jacobian(model, q, 0, point=[1.0, 2.0], backend=backend)


def test_integrate_dt(model, backend):
    q, v, _ = good(model)
    with pytest.raises(rbd.InputError, match="dt"):
        rbd.integrate(model, q, v, float("nan"), backend=backend)
    with pytest.raises(rbd.InputError, match="dt"):
        rbd.integrate(model, q, v, "soon", backend=backend)


# --- every public function, every array argument: complex values and huge Python ints ------
def public_calls(model, q, v, a, f):
    """``{function: (call(backend, **overrides), argument names)}`` for the public API."""
    def args(over, **base):
        return {**base, **over}

    return {
        "rnea": (lambda b, **o: rbd.rnea(model, **args(o, q=q, v=v, a=a, f_ext=f), backend=b),
                 ("q", "v", "a", "f_ext")),
        "aba": (lambda b, **o: rbd.aba(model, **args(o, q=q, v=v, tau=a, f_ext=f), backend=b),
                ("q", "v", "tau", "f_ext")),
        "aba(pivot='modified')": (
            lambda b, **o: rbd.aba(model, **args(o, q=q, v=v, tau=a, f_ext=f), backend=b,
                                   pivot="modified"), ("q", "v", "tau", "f_ext")),
        "crba": (lambda b, **o: rbd.crba(model, **args(o, q=q), backend=b), ("q",)),
        "nonlinear_effects": (
            lambda b, **o: rbd.nonlinear_effects(model, **args(o, q=q, v=v), backend=b),
            ("q", "v")),
        "gravity_forces": (lambda b, **o: rbd.gravity_forces(model, **args(o, q=q), backend=b),
                           ("q",)),
        "mass_matrix_inverse": (
            lambda b, **o: rbd.mass_matrix_inverse(model, **args(o, q=q), backend=b), ("q",)),
        "kinetic_energy": (
            lambda b, **o: rbd.kinetic_energy(model, **args(o, q=q, v=v), backend=b),
            ("q", "v")),
        "potential_energy": (
            lambda b, **o: rbd.potential_energy(model, **args(o, q=q), backend=b), ("q",)),
        "forward_kinematics": (
            lambda b, **o: rbd.forward_kinematics(model, **args(o, q=q), backend=b), ("q",)),
        "frame_pose": (
            lambda b, **o: rbd.frame_pose(model, **args(o, q=q, name="b1"), backend=b), ("q",)),
        "center_of_mass": (
            lambda b, **o: rbd.center_of_mass(model, **args(o, q=q), backend=b), ("q",)),
        "body_centers_of_mass": (
            lambda b, **o: rbd.body_centers_of_mass(model, **args(o, q=q), backend=b), ("q",)),
        "jacobian": (
            lambda b, **o: rbd.jacobian(model, **args(o, q=q, body=2, point=[0.1, 0.0, 0.2]),
                                        backend=b), ("q", "point")),
        "integrate": (
            lambda b, **o: rbd.integrate(model, **args(o, q=q, v=v, dt=0.1), backend=b),
            ("q", "v", "dt")),
    }


def _bad_values(good_value, kind):
    """Bad variants of one argument: complex (array and list), and a huge Python int."""
    arr = np.asarray(good_value, dtype=float)
    huge = arr.tolist()
    if kind == "dt":
        return {"complex": 0.1 + 5j, "huge int": 10**400}
    flat = huge
    while isinstance(flat[0], list):
        flat = flat[0]
    flat[0] = 10**400
    as_list = arr.astype(complex).tolist()
    return {"complex array": arr + 5j, "complex list": as_list, "huge int": huge}


@pytest.mark.parametrize("function", sorted(public_calls(None, *[None] * 4)))
def test_complex_and_huge_values_refused(model, backend, function):
    """Complex values are refused (never cut to their real part with a warning) and huge
    Python ints raise InputError (not OverflowError), naming the argument, on both backends;
    nothing passed in is modified."""
    q, v, a = good(model)
    f = np.zeros((model.nbodies, 6))
    call, names = public_calls(model, q, v, a, f)[function]
    goods = {"q": q, "v": v, "a": a, "tau": a, "f_ext": f, "point": [0.1, 0.0, 0.2], "dt": 0.1}
    for name in names:
        for what, bad in _bad_values(goods[name], name).items():
            before = [np.array(x, copy=True) for x in (q, v, a, f)]
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # a ComplexWarning would fail here
                with pytest.raises(rbd.InputError, match=rf"^{name}\b") as info:
                    call(backend, **{name: bad})
            assert isinstance(info.value, rbd.InputError), (function, name, what)
            for x, y in zip((q, v, a, f), before, strict=True):
                assert np.array_equal(x, y), f"{function}: {name} ({what}) modified an input"


def test_same_messages_on_both_backends(model, require_kernels):
    """The two backends share one conversion: the same message for the same mistake."""
    q, v, a = good(model)
    f = np.zeros((model.nbodies, 6))
    goods = {"q": q, "v": v, "a": a, "tau": a, "f_ext": f, "point": [0.1, 0.0, 0.2], "dt": 0.1}
    for function, (call, names) in public_calls(model, q, v, a, f).items():
        for name in names:
            for what, bad in [*_bad_values(goods[name], name).items(),
                              ("text", "oops"), ("nan", np.full(np.shape(goods[name]), np.nan))]:
                messages = []
                for b in ("reference", "kernel"):
                    with pytest.raises(rbd.InputError) as info:
                        call(b, **{name: bad})
                    messages.append(str(info.value))
                assert messages[0] == messages[1], (function, name, what, messages)


@pytest.mark.parametrize("function", ["crba", "rnea", "aba", "integrate"])
def test_ragged_input_is_an_input_error_naming_it(model, backend, function):
    """A nested list with rows of different lengths: InputError, not NumPy's ValueError."""
    q, v, a = good(model)
    ragged = [list(q[:2]), list(q[2:])] if function != "rnea" else q
    v_ragged = [[1.0, 2.0], [3.0]] if function == "rnea" else v
    fn = {"crba": lambda b: rbd.crba(model, ragged, backend=b),
          "rnea": lambda b: rbd.rnea(model, q, v_ragged, a, backend=b),
          "aba": lambda b: rbd.aba(model, ragged, v, a, backend=b),
          "integrate": lambda b: rbd.integrate(model, ragged, v, 0.1, backend=b)}[function]
    name = "v" if function == "rnea" else "q"
    check_raises(fn, backend, rf"^{name} is ragged", q, v, a)


def test_the_report_s_ragged_call(backend):
    with pytest.raises(rbd.InputError, match="^q is ragged"):
        rbd.crba(rbd.models.double_pendulum(), [[1.0, 2.0], [3.0]], backend=backend)
