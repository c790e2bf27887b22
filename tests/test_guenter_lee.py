"""Guenter–Lee symbolic Lagrangian dynamics: agreement, physics, generated C, operation counts."""

import importlib
import types

import numpy as np
import pytest
import sympy
from helpers import RTOL_EXACT, assert_close

import rbd
from rbd.symbolic import (
    CompilationError,
    Program,
    SymbolicJoint,
    build,
    count_operations,
    lagrangian,
)

gl_module = importlib.import_module("rbd.symbolic.lagrangian")

#: Forward dynamics goes through a Cholesky solve; on these small models cond(M) < 1e4.
RTOL_SOLVE = 1e-9
#: Generated C and generated Python evaluate the same program in double precision.
RTOL_C = 1e-12

# Guenter & Lee, Table 1: 6-DoF revolute chain, (additions, multiplications).
PAPER_INVERSE = {"symbolic best": (328, 365), "Balafoutis": (386, 450),
                 "symbolic worst": (509, 971)}
PAPER_FORWARD = {"symbolic best": (818, 943), "Balafoutis": (790, 956),
                 "symbolic worst": (1875, 2389)}

a, b = sympy.symbols("a b")


def cam_joint():
    R = sympy.Matrix([[sympy.cos(a), -sympy.sin(a), 0], [sympy.sin(a), sympy.cos(a), 0],
                      [0, 0, 1]]) * sympy.Matrix([[1, 0, 0], [0, sympy.cos(b), -sympy.sin(b)],
                                                  [0, sympy.sin(b), sympy.cos(b)]])
    G = sympy.eye(4)
    G[:3, :3] = R
    G[:3, 3] = sympy.Matrix([0.3 * sympy.cos(a), 0.5 * sympy.sin(a), 0.1 * a * b])
    return SymbolicJoint(G, [a, b], name="cam")


def symbolic_tree():
    rng = np.random.default_rng(11)
    model = rbd.Model(name="symbolic tree")
    root = model.add_body(-1, rbd.Universal([1, 0, 0], [0, 1, 0]), None,
                          rbd.testing.random_inertia(rng), "root")
    model.add_body(root, cam_joint(), (rbd.testing.random_rotation(rng), [0.2, 0.1, 0.0]),
                   rbd.testing.random_inertia(rng), "cam")
    model.add_body(root, rbd.Helical([0, 1, 0], 0.05), (np.eye(3), [0.0, 0.0, -0.3]),
                   rbd.testing.random_inertia(rng), "screw")
    return model


MODELS = {
    "double_pendulum": rbd.models.double_pendulum,
    "RC6": lambda: rbd.models.revolute_chain(6),
    "random chain": lambda: rbd.testing.random_model(
        12, 4, ("revolute", "prismatic", "helical", "universal", "planar"), chain=True),
    "symbolic tree": symbolic_tree,
}


@pytest.fixture(scope="module", params=list(MODELS))
def model(request):
    return MODELS[request.param]()


@pytest.fixture(scope="module")
def rc6():
    return rbd.models.revolute_chain(6)


@pytest.mark.slow
def test_agrees_with_reference(model):
    gl = lagrangian(model)
    rng = np.random.default_rng(13)
    for _ in range(3):
        q, v, tau = rbd.testing.random_state(model, rng)
        assert_close(gl.inverse_dynamics(q, v, tau),
                     rbd.rnea(model, q, v, tau, backend="reference"), RTOL_EXACT, "tau")
        assert_close(gl.mass_matrix(q), rbd.crba(model, q, backend="reference"), RTOL_EXACT, "M")
        assert_close(gl.bias_forces(q, v), rbd.nonlinear_effects(model, q, v,
                                                                 backend="reference"),
                     RTOL_EXACT, "c")
        assert_close(gl.forward_dynamics(q, v, tau),
                     rbd.aba(model, q, v, tau, backend="reference"), RTOL_SOLVE, "qdd")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["double_pendulum", "RC6"])
def test_trace_recursion_agrees(name):
    model = MODELS[name]()
    gl = lagrangian(model, recursion="trace")
    rng = np.random.default_rng(14)
    q, v, qdd = rbd.testing.random_state(model, rng)
    assert_close(gl.inverse_dynamics(q, v, qdd), rbd.rnea(model, q, v, qdd, backend="reference"),
                 RTOL_EXACT, "tau (trace)")
    assert_close(gl.mass_matrix(q), rbd.crba(model, q, backend="reference"), RTOL_EXACT,
                 "M (trace)")


@pytest.mark.slow
def test_physics(model):
    """M symmetric positive definite; inverse ∘ forward = identity."""
    gl = lagrangian(model)
    rng = np.random.default_rng(15)
    q, v, tau = rbd.testing.random_state(model, rng)
    M = gl.mass_matrix(q)
    assert np.array_equal(M, M.T)
    assert np.linalg.eigvalsh(M).min() > 0
    assert_close(gl.inverse_dynamics(q, v, gl.forward_dynamics(q, v, tau)), tau, RTOL_SOLVE,
                 "rnea(aba(tau))")
    assert_close(gl.inverse_dynamics(q, v, np.zeros(model.nv)), gl.bias_forces(q, v),
                 RTOL_EXACT, "c = tau(qdd = 0)")


@pytest.mark.slow
@pytest.mark.skipif(not build.compiler_available(), reason="no C compiler")
def test_compiled_equals_generated_python(model):
    gl = lagrangian(model)
    compiled = gl.compile()
    rng = np.random.default_rng(16)
    states = [rbd.testing.random_state(model, rng) for _ in range(3)]
    for q, v, tau in states:
        assert_close(compiled.inverse_dynamics(q, v, tau), gl.inverse_dynamics(q, v, tau),
                     RTOL_C, "tau")
        assert_close(compiled.mass_matrix(q), gl.mass_matrix(q), RTOL_C, "M")
        assert_close(compiled.bias_forces(q, v), gl.bias_forces(q, v), RTOL_C, "c")
        assert_close(compiled.forward_dynamics(q, v, tau), gl.forward_dynamics(q, v, tau),
                     RTOL_SOLVE, "qdd")
    Q, V, T = (np.array(x) for x in zip(*states, strict=True))
    assert_close(compiled.forward_dynamics(Q, V, T),
                 np.array([gl.forward_dynamics(*s) for s in states]), RTOL_SOLVE, "batch")
    assert compiled.mass_matrix(Q).shape == (3, model.nv, model.nv)


# --- operation counts (Guenter & Lee, Table 1) ----------------------------------------------
@pytest.mark.slow
def test_rc6_counts_meet_the_paper(rc6):
    count = lagrangian(rc6).operation_count()
    inverse = count["inverse_dynamics"]
    forward = count["forward_dynamics"]
    assert inverse["additions"] <= PAPER_INVERSE["Balafoutis"][0]
    assert inverse["multiplications"] <= PAPER_INVERSE["Balafoutis"][1]
    assert forward["additions"] <= PAPER_FORWARD["Balafoutis"][0]
    assert forward["multiplications"] <= PAPER_FORWARD["Balafoutis"][1]


@pytest.mark.slow
def test_rc6_counts_are_reproducible(rc6):
    """Pinned counts of the generated code (sympy 1.14): a change here is a regression or
    an improvement of the generator and should be noted in docs/benchmarks.md."""
    body = lagrangian(rc6).operation_count()
    assert body == {"inverse_dynamics": {"additions": 235, "multiplications": 293},
                    "forward_dynamics": {"additions": 419, "multiplications": 515}}
    trace = lagrangian(rc6, recursion="trace").operation_count()
    assert trace == {"inverse_dynamics": {"additions": 566, "multiplications": 872},
                     "forward_dynamics": {"additions": 1480, "multiplications": 2398}}


@pytest.mark.slow
def test_functions_counted_apart(rc6):
    detail = lagrangian(rc6).operation_count(detail=True)["inverse_dynamics"]
    # the first joint turns about the vertical: gravity never sees q0, so 5 sin and 5 cos
    assert detail["functions"] == {"sin": 5, "cos": 5}


class _Counted:
    """A float that counts the arithmetic done on it (negation free)."""

    tally = {"add": 0, "mul": 0, "sin": 0, "cos": 0}

    def __init__(self, x):
        self.x = float(x)

    @staticmethod
    def _v(y):
        return y.x if isinstance(y, _Counted) else float(y)

    def _op(self, kind, value):
        _Counted.tally[kind] += 1
        return _Counted(value)

    def __add__(self, y):
        return self._op("add", self.x + self._v(y))

    __radd__ = __add__

    def __sub__(self, y):
        return self._op("add", self.x - self._v(y))

    def __rsub__(self, y):
        return self._op("add", self._v(y) - self.x)

    def __mul__(self, y):
        return self._op("mul", self.x * self._v(y))

    __rmul__ = __mul__

    def __truediv__(self, y):
        return self._op("mul", self.x / self._v(y))

    def __rtruediv__(self, y):
        return self._op("mul", self._v(y) / self.x)

    def __pow__(self, k):
        _Counted.tally["mul"] += abs(k) - 1 + (k < 0)
        return _Counted(self.x ** k)

    def __neg__(self):
        return _Counted(-self.x)


def _counting_math():
    def call(name, f):
        def g(x):
            _Counted.tally[name] += 1
            return _Counted(f(_Counted._v(x)))
        return g
    return types.SimpleNamespace(sin=call("sin", np.sin), cos=call("cos", np.cos))


def test_counts_equal_operations_executed(rc6):
    """Run the printed, optimized program on counting numbers: the static count is exact."""
    gl = lagrangian(rc6)
    for name, program in gl._optimized.items():
        fn = program.python_function("counted", math_module=_counting_math())
        _Counted.tally = dict.fromkeys(_Counted.tally, 0)
        args = [[_Counted(0.1 * (k + 1)) for k in range(rc6.nv)] for _ in program.inputs]
        fn(*args)
        static = gl.operation_count(detail=True)[name]
        assert (_Counted.tally["add"], _Counted.tally["mul"]) == (
            static["additions"], static["multiplications"]), name
        assert _Counted.tally["sin"] == static["functions"]["sin"]


@pytest.mark.parametrize("expr, additions, multiplications", [
    ("x - y", 1, 0),
    ("-x", 0, 0),
    ("-x - y + z", 2, 0),
    ("x / y", 0, 1),
    ("1 / y", 0, 1),
    ("x**3", 0, 2),
    ("x**(-2)", 0, 2),
    ("2 * x * y", 0, 2),
    ("-x * y", 0, 1),
    ("2 * x * (y + 1)", 1, 2),
    ("sin(x) * cos(x)", 0, 1),
])
def test_counting_rules(expr, additions, multiplications):
    count = count_operations([sympy.sympify(expr, evaluate=True)])
    assert (count.additions, count.multiplications) == (additions, multiplications)


def test_sin_cos_and_sqrt_are_counted_apart():
    x = sympy.Symbol("x")
    count = count_operations([sympy.sin(x) + sympy.cos(x) * sympy.sqrt(x)])
    assert dict(count.functions) == {"sin": 1, "cos": 1, "sqrt": 1}
    assert (count.additions, count.multiplications) == (1, 1)


def test_program_coefficient_and_substitute():
    P = Program([("u", 2)])
    u0, u1 = P["u"]
    x = P.bind(3 * u0 + u1 * u1)
    y = P.bind(x * u1 + 2 * u0)               # 3 u0 u1 + u1³ + 2 u0: linear in u0
    (k,) = P.coefficient([y], u0)
    P.set_output("k", [k])
    Q = P.substitute({u0: 0}).pruned()
    (fn,) = [Q.python_function("k")]
    assert fn([0.0, 0.7])[0][0] == pytest.approx(3 * 0.7 + 2)
    assert len(Q.assignments) <= 2


# --- entry points and errors ------------------------------------------------------------------
def test_lagrangian_is_cached(rc6):
    assert lagrangian(rc6) is lagrangian(rc6)
    assert lagrangian(rc6, "trace") is not lagrangian(rc6)


@pytest.mark.slow
def test_registry_entries_handle_external_forces():
    model = MODELS["random chain"]()
    rng = np.random.default_rng(17)
    q, v, qdd = rbd.testing.random_state(model, rng)
    f_ext = rng.normal(size=(model.nbodies, 6))
    tau = gl_module.inverse_dynamics(model, q, v, qdd, f_ext)
    assert_close(tau, rbd.rnea(model, q, v, qdd, f_ext, backend="reference"), RTOL_EXACT,
                 "tau with f_ext")
    assert_close(gl_module.forward_dynamics(model, q, v, tau, f_ext), qdd, RTOL_SOLVE,
                 "qdd with f_ext")


def test_predicate_and_errors():
    ball = rbd.models.pendulum(2)
    assert not gl_module.supports(ball)
    with pytest.raises(rbd.ModelError, match="joint 'ball1' is spherical"):
        lagrangian(ball)
    big = rbd.models.revolute_chain(gl_module.MAX_REGISTRY_DOF + 1)
    assert not gl_module.supports(big)
    with pytest.raises(rbd.ModelError, match="limited to models with 1..8 DoF"):
        gl_module.mass_matrix(big, np.zeros(big.nv))
    assert gl_module.supports(rbd.models.revolute_chain(6))
    with pytest.raises(rbd.InputError, match="recursion must be one of"):
        lagrangian(rbd.models.double_pendulum(), recursion="newton")
    gl = lagrangian(rbd.models.double_pendulum())
    q = np.array([0.1, 0.2])
    with pytest.raises(rbd.InputError, match=r"qd must have shape \(2,\)"):
        gl.bias_forces(q, np.zeros(3))
    with pytest.raises(rbd.InputError, match="q has non-finite entries"):
        gl.mass_matrix(np.array([np.nan, 0.0]))
    assert q.tolist() == [0.1, 0.2]


def test_compile_without_compiler_raises(monkeypatch):
    model = rbd.models.double_pendulum(1.0, 2.0, 0.5, 0.7)
    monkeypatch.setenv("CC", "/nonexistent/cc")
    with pytest.raises(CompilationError, match="no C compiler"):
        lagrangian(model).compile()


@pytest.mark.parametrize("expr", [
    "x/y**3", "-x/(y**2*z)", "1/(x*y)**2", "x**(-3)", "(x*y)**1.5", "(x + y)**(-0.5)",
    "-2*x*y/(z + 1)**2", "x - 2*y/z**2", "sin(x)**2/cos(y)**3", "(x**2)**0.25 - y",
])
def test_printed_code_evaluates_the_expression(expr):
    """Generated Python and C compute what the sympy expression says (precedence, powers)."""
    x, y, z = sympy.symbols("x y z")
    e = sympy.sympify(expr)
    P = Program([("v", 3)])
    P.set_output("out", [e.xreplace(dict(zip((x, y, z), P["v"], strict=True)))])
    values = [0.7, 1.3, 0.4]
    expected = float(e.subs(dict(zip((x, y, z), values, strict=True))))
    (got,) = P.python_function("f")(values)
    assert got[0] == pytest.approx(expected, rel=1e-13)
    if build.compiler_available():
        module = build.build_module([build.CFunction("f", P.c_function("f"), (("v", 3),),
                                                     (("out", 1),))])
        out = np.zeros(1)
        module.f(1, np.array(values), out)
        assert out[0] == pytest.approx(expected, rel=1e-13)


@pytest.mark.skipif(not build.compiler_available(), reason="no C compiler")
def test_compiled_rejects_bad_input(rc6):
    compiled = lagrangian(rc6).compile()
    q = np.zeros(6)
    bad = q.copy()
    bad[3] = np.inf
    with pytest.raises(rbd.InputError, match="qd has non-finite entries"):
        compiled.forward_dynamics(q, bad, q)
    with pytest.raises(rbd.InputError, match=r"tau must have shape \(6,\) or \(N, 6\)"):
        compiled.forward_dynamics(q, q, np.zeros(5))
    assert np.isinf(bad[3]) and not q.any()
