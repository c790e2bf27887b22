"""The reference algorithms on sympy symbols: formulas that evaluate to the kernels' numbers.

Every formula here is produced by the reference text (rbd.reference) run on object
arrays of symbols; it is checked at random substitutions against the compiled kernels
of the numeric model, and, for the two-link arm, against the textbook formulas.
"""

import subprocess
import sys

import numpy as np
import pytest
import sympy
from helpers import RTOL_EXACT, assert_close
from sympy.physics import mechanics as me

import rbd
from rbd._validation import as_real_array
from rbd.reference import crba as ref_crba
from rbd.symbolic import (
    SymbolicJoint,
    SymbolicModel,
    equations_of_motion,
    lagrangian,
    planar_arm,
    spatial_double_pendulum,
)

#: A formula evaluated in double precision against the kernels: the same products in
#: another order, RTOL_EXACT (1e-10) as everywhere else in the suite.
RTOL = RTOL_EXACT


def symbols_q(n, name="q"):
    return np.array(sympy.symbols(f"{name}1:{n + 1}", real=True), dtype=object)


def cam_model():
    """A chain with a SymbolicJoint (its transform is a sympy matrix already)."""
    a, b = sympy.symbols("a b")
    R = sympy.Matrix([[sympy.cos(a), -sympy.sin(a), 0], [sympy.sin(a), sympy.cos(a), 0],
                      [0, 0, 1]])
    G = sympy.eye(4)
    G[:3, :3] = R
    G[:3, 3] = sympy.Matrix([0.3 * sympy.cos(a), 0.5 * sympy.sin(a), 0.1 * a * b + b])
    rng = np.random.default_rng(3)
    model = rbd.Model(name="cam chain")
    root = model.add_body(-1, rbd.Revolute([0, 1, 0]), None, rbd.testing.random_inertia(rng),
                          "root")
    model.add_body(root, SymbolicJoint(G, [a, b], name="cam"),
                   (rbd.testing.random_rotation(rng), [0.2, 0.1, 0.0]),
                   rbd.testing.random_inertia(rng), "cam")
    return model


def mixed_chain():
    """Prismatic, helical, universal and planar joints on axis-aligned offsets."""
    rng = np.random.default_rng(4)
    model = rbd.Model(name="mixed chain")
    parent = -1
    for k, joint in enumerate([rbd.Prismatic([1, 0, 0]), rbd.Helical([0, 0, 1], 0.2),
                               rbd.Universal([1, 0, 0], [0, 1, 0]), rbd.Planar([0, 1, 0])]):
        parent = model.add_body(parent, joint, (np.eye(3), [0.0, 0.1 * k, -0.5]),
                                rbd.testing.random_inertia(rng), f"b{k}")
    return model


#: Small models: without simplification the formulas grow quickly with depth.
NUMERIC_MODELS = {
    "double_pendulum": rbd.models.double_pendulum,
    "mixed chain": mixed_chain,
    "random pair": lambda: rbd.testing.random_model(
        5, 2, ("revolute", "prismatic", "helical", "universal", "planar"), chain=True),
    "spherical pendulum": lambda: rbd.models.pendulum(2),
    "floating base": lambda: rbd.testing.random_model(9, 2, ("revolute",), floating_base=True),
    "cam chain": cam_model,
}


@pytest.fixture(scope="module", params=list(NUMERIC_MODELS))
def numeric_model(request):
    return NUMERIC_MODELS[request.param]()


def substitute(expr, values):
    """An object array (or scalar) of formulas evaluated at ``values`` (symbol -> number)."""
    a = np.asarray(expr, dtype=object)
    return np.array([float(sympy.sympify(x).xreplace(values)) for x in a.ravel()]
                    ).reshape(a.shape)


def random_values(model, q_sym, v_sym, rng):
    q, v, a = rbd.testing.random_state(model, rng)
    values = dict(zip(q_sym, q, strict=True)) | dict(zip(v_sym, v, strict=True))
    return q, v, a, values


@pytest.mark.slow
@pytest.mark.single_pass
def test_every_quantity_at_random_substitutions(numeric_model):
    """rnea, crba, h, g, energies, forward kinematics and the Jacobian of a numeric model,
    on symbolic q and v, evaluate to the compiled kernels' numbers (the pure-Python pass
    leaves it out: there the expected numbers would come from the same readable code)."""
    model = numeric_model
    q_sym, v_sym, a_sym = symbols_q(model.nq), symbols_q(model.nv, "v"), symbols_q(model.nv, "a")
    formulas = {
        "tau": rbd.rnea(model, q_sym, v_sym, a_sym, backend="reference"),
        "M": rbd.crba(model, q_sym, backend="reference"),
        "h": rbd.nonlinear_effects(model, q_sym, v_sym, backend="reference"),
        "g": rbd.gravity_forces(model, q_sym, backend="reference"),
        "T": rbd.kinetic_energy(model, q_sym, v_sym, backend="reference"),
        "U": rbd.potential_energy(model, q_sym, backend="reference"),
        "X": rbd.forward_kinematics(model, q_sym, backend="reference"),
        "J": rbd.jacobian(model, q_sym, model.nbodies - 1, [0.1, -0.2, 0.3],
                          backend="reference"),
    }
    assert all(np.asarray(f).dtype == object for f in formulas.values())
    rng = np.random.default_rng(5)
    for _ in range(2):
        q, v, a, values = random_values(model, q_sym, v_sym, rng)
        values |= dict(zip(a_sym, a, strict=True))
        expected = {
            "tau": rbd.rnea(model, q, v, a), "M": rbd.crba(model, q),
            "h": rbd.nonlinear_effects(model, q, v), "g": rbd.gravity_forces(model, q),
            "T": rbd.kinetic_energy(model, q, v), "U": rbd.potential_energy(model, q),
            "X": rbd.forward_kinematics(model, q),
            "J": rbd.jacobian(model, q, model.nbodies - 1, [0.1, -0.2, 0.3]),
        }
        for name, formula in formulas.items():
            assert_close(substitute(formula, values), expected[name], RTOL, name)


def test_direct_reference_call_on_symbols():
    """rbd.reference.crba.crba(model, q) with symbols (it raised 'Cannot convert
    expression to float' before the spatial algebra was scalar-generic)."""
    model = rbd.models.double_pendulum()
    q_sym = symbols_q(2)
    M = ref_crba.crba(model, q_sym)
    q = np.array([0.4, -1.1])
    assert_close(substitute(M, dict(zip(q_sym, q, strict=True))), rbd.crba(model, q), RTOL, "M")
    # the double pendulum's numbers are integral: the public call keeps them exact
    M_public = rbd.crba(model, list(q_sym), backend="reference")
    assert not any(sympy.sympify(x).atoms(sympy.Float) for x in M_public.ravel())
    assert sympy.simplify(M_public[0, 1] - (1 + sympy.cos(q_sym[1]))) == 0


# --- the two-link planar arm: textbook formulas --------------------------------------------------
@pytest.fixture(scope="module")
def arm():
    return planar_arm()


def textbook(arm, q, qd):
    s = arm.values   # keys are the arm's symbols
    m1, m2, l1, lc1, lc2, I1, I2, g = (next(k for k in s if k.name == n) for n in
                                       ("m1", "m2", "l1", "lc1", "lc2", "I1", "I2", "g"))
    c2 = sympy.cos(q[1])
    M = sympy.Matrix([[m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * c2) + I1 + I2,
                       m2 * (lc2**2 + l1 * lc2 * c2) + I2],
                      [m2 * (lc2**2 + l1 * lc2 * c2) + I2, m2 * lc2**2 + I2]])
    hh = m2 * l1 * lc2 * sympy.sin(q[1])
    C = sympy.Matrix([-hh * (2 * qd[0] * qd[1] + qd[1]**2), hh * qd[0]**2])
    gq = sympy.Matrix([(m1 * lc1 + m2 * l1) * g * sympy.cos(q[0])
                       + m2 * lc2 * g * sympy.cos(q[0] + q[1]),
                       m2 * lc2 * g * sympy.cos(q[0] + q[1])])
    U = g * (m1 * lc1 * sympy.sin(q[0])
             + m2 * (l1 * sympy.sin(q[0]) + lc2 * sympy.sin(q[0] + q[1])))
    return M, C, gq, U


def is_zero(e):
    return sympy.simplify(e) == 0


def test_planar_arm_mass_matrix_is_the_textbook_one(arm):
    q_sym = symbols_q(2)
    M = sympy.Matrix(rbd.crba(arm, q_sym, backend="reference").tolist())
    M_book, *_ = textbook(arm, q_sym, symbols_q(2, "v"))
    assert (M - M_book).applyfunc(sympy.simplify) == sympy.zeros(2, 2)
    # and its numbers are those of the numeric model at random parameters and angles
    rng = np.random.default_rng(6)
    for _ in range(3):
        values = {s: rng.uniform(0.2, 2.0) for s in arm.symbols}
        numeric = arm.numeric(values)
        q = rng.uniform(-np.pi, np.pi, 2)
        assert_close(substitute(M, values | dict(zip(q_sym, q, strict=True))),
                     rbd.crba(numeric, q), RTOL, "M")


def test_planar_arm_equations_and_energies(arm):
    eom = equations_of_motion(arm)
    M_book, C_book, g_book, U_book = textbook(arm, eom.q, eom.qd)
    assert eom.M == eom.M.T
    assert (eom.M - M_book).applyfunc(sympy.simplify) == sympy.zeros(2, 2)
    assert (eom.g - g_book).applyfunc(sympy.simplify) == sympy.zeros(2, 1)
    assert (eom.coriolis - C_book).applyfunc(sympy.simplify) == sympy.zeros(2, 1)
    q_sym, v_sym = np.array(eom.q, dtype=object), np.array(eom.qd, dtype=object)
    T = rbd.kinetic_energy(arm, q_sym, v_sym, backend="reference")
    qd = sympy.Matrix(eom.qd)
    assert is_zero(T - (qd.T * M_book * qd)[0] / 2)
    assert is_zero(rbd.potential_energy(arm, q_sym, backend="reference") - U_book)
    # the gravity force is dU/dq (both from the reference text, one by the RNEA)
    assert (eom.g - sympy.Matrix([U_book]).jacobian(eom.q).T).applyfunc(sympy.simplify) \
        == sympy.zeros(2, 1)


def test_planar_arm_jacobian_and_kinematics(arm):
    q_sym = symbols_q(2)
    eom_values = {s.name: s for s in arm.symbols}
    l1, lc2 = eom_values["l1"], eom_values["lc2"]
    q1, q2 = q_sym
    J = rbd.jacobian(arm, q_sym, 1, [0, 0, 0], backend="reference")
    # the second joint's origin: (l1 cos q1, l1 sin q1); its velocity is l1 (-sin, cos) q̇1
    assert is_zero(J[3, 0] + l1 * sympy.sin(q1)) and is_zero(J[4, 0] - l1 * sympy.cos(q1))
    assert J[3, 1] == 0 and J[4, 1] == 0 and J[2, 0] == 1 and J[2, 1] == 1
    X = rbd.forward_kinematics(arm, q_sym, backend="reference")
    com2 = X[1, :3, :3] @ np.array([lc2, 0, 0]) + X[1, :3, 3]
    assert is_zero(com2[0] - l1 * sympy.cos(q1) - lc2 * sympy.cos(q1 + q2))
    assert is_zero(com2[1] - l1 * sympy.sin(q1) - lc2 * sympy.sin(q1 + q2))


# --- against sympy.physics.mechanics -----------------------------------------------------------
def lagrange_double_pendulum(pendulum):
    """Lagrange's equations of the spatial double pendulum, from sympy.physics.mechanics."""
    names = {s.name: s for s in pendulum.symbols}
    m1, m2, l1, l2, g = (names[n] for n in ("m1", "m2", "l1", "l2", "g"))
    q1, q2 = me.dynamicsymbols("q1 q2")
    N = me.ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [q1, N.x])
    B = A.orientnew("B", "Axis", [q2, A.y])
    O = me.Point("O")
    O.set_vel(N, 0)
    P1 = O.locatenew("P1", -l1 / 2 * A.z)
    H = O.locatenew("H", -l1 * A.z)
    P2 = H.locatenew("P2", -l2 / 2 * B.z)
    for P, frame, base in ((P1, A, O), (H, A, O), (P2, B, H)):
        P.v2pt_theory(base, N, frame)
    rod1 = me.RigidBody("rod1", P1, A, m1,
                        (me.inertia(A, m1 * l1**2 / 12, m1 * l1**2 / 12, 0), P1))
    rod2 = me.RigidBody("rod2", P2, B, m2,
                        (me.inertia(B, m2 * l2**2 / 12, m2 * l2**2 / 12, 0), P2))
    rod1.potential_energy = m1 * g * P1.pos_from(O).dot(N.z)
    rod2.potential_energy = m2 * g * P2.pos_from(O).dot(N.z)
    L = me.Lagrangian(N, rod1, rod2)
    method = me.LagrangesMethod(L, [q1, q2])
    method.form_lagranges_equations()
    return method, (q1, q2)


def test_double_pendulum_against_sympy_mechanics():
    pendulum = spatial_double_pendulum()
    eom = equations_of_motion(pendulum)
    method, (q1, q2) = lagrange_double_pendulum(pendulum)
    t = me.dynamicsymbols._t
    to_symbols = {q1.diff(t): eom.qd[0], q2.diff(t): eom.qd[1], q1: eom.q[0], q2: eom.q[1]}
    M_lag = method.mass_matrix.subs(to_symbols)
    forcing = method.forcing.subs(to_symbols)          # M q̈ = forcing = -h
    assert (eom.M - M_lag).applyfunc(sympy.simplify) == sympy.zeros(2, 2)
    assert (eom.h + forcing).applyfunc(sympy.simplify) == sympy.zeros(2, 1)
    assert (eom.g + forcing.subs({eom.qd[0]: 0, eom.qd[1]: 0})).applyfunc(sympy.simplify) \
        == sympy.zeros(2, 1)


def test_equations_agree_with_guenter_lee_and_kernels():
    pendulum = spatial_double_pendulum()
    eom = equations_of_motion(pendulum, simplify=False)
    numeric = pendulum.numeric()
    gl = lagrangian(numeric)
    rng = np.random.default_rng(8)
    q, v = rng.uniform(-2, 2, 2), rng.uniform(-2, 2, 2)
    values = pendulum.values | dict(zip(eom.q, q, strict=True)) | dict(zip(eom.qd, v, strict=True))
    assert_close(substitute(eom.M, values), gl.mass_matrix(q), RTOL, "M vs Guenter-Lee")
    assert_close(substitute(eom.h, values).ravel(), gl.bias_forces(q, v), RTOL, "h vs GL")
    assert_close(substitute(eom.g, values).ravel(), rbd.gravity_forces(numeric, q), RTOL, "g")


def test_parameters_on_a_numeric_model():
    """equations_of_motion(model, parameters=...) replaces chosen data by symbols."""
    m2, L = sympy.symbols("m2 L", positive=True)
    model = rbd.models.double_pendulum()
    eom = equations_of_motion(model, parameters={"link2": {"mass": m2, "com": (0, 0, -L)}})
    q2 = eom.q[1]
    assert is_zero(eom.M[1, 1] - m2 * L**2)
    assert is_zero(eom.M[0, 1] - m2 * (L**2 + L * sympy.cos(q2)))
    record = SymbolicModel(model, {"link2": {"mass": m2, "com": (0, 0, -L)}}, {m2: 1.0, L: 1.0})
    # numeric q on a symbolic record: the result is exact (no 1.0*m2)
    assert rbd.crba(record, [0.0, 0.0], backend="reference")[1, 1] == m2 * L**2
    assert_close(rbd.crba(record.numeric(), [0.3, 0.2]), rbd.crba(model, [0.3, 0.2]), RTOL,
                 "numeric record")


# --- refusals ----------------------------------------------------------------------------------
def test_symbols_on_the_kernel_path_are_refused_with_a_remedy():
    model = rbd.models.double_pendulum()
    remedy = "q holds sympy symbols.*backend='reference'"
    with pytest.raises(rbd.InputError, match=remedy):
        as_real_array(symbols_q(2), "q")       # the conversion of both backends
    mimic = rbd.models.double_pendulum()
    mimic.add_mimic("joint2", "joint1")
    with pytest.raises(rbd.InputError, match=remedy):
        rbd.crba(mimic, symbols_q(1), backend="reference")
    if rbd._backend.has_kernels():             # (without kernels backend="kernel" is refused)
        with pytest.raises(rbd.InputError, match=remedy):
            rbd.crba(model, symbols_q(2), backend="kernel")
        with pytest.raises(rbd.InputError, match="SymbolicModel runs on backend='reference'"):
            rbd.crba(planar_arm(), symbols_q(2))
    with pytest.raises(rbd.InputError, match="no body 'link3'"):
        SymbolicModel(model, {"link3": {"mass": 1}})
    with pytest.raises(rbd.InputError, match="unknown key 'length'"):
        SymbolicModel(model, {"link2": {"length": 1}})
    with pytest.raises(rbd.InputError, match=r"^parameters: link2 com has non-finite entries$"):
        SymbolicModel(model, {"link2": {"com": (0.0, np.nan, -1.0)}})
    with pytest.raises(rbd.InputError, match=r"^parameters: link2 offset must have shape \(3,\)"):
        SymbolicModel(model, {"link2": {"offset": (sympy.Symbol("L"), 0)}})
    with pytest.raises(rbd.InputError, match="no value for"):
        SymbolicModel(model, {"link2": {"mass": sympy.Symbol("m")}}).numeric()


def test_numeric_path_does_not_import_sympy():
    """The float path of the public functions never loads sympy."""
    code = ("import sys, numpy as np, rbd; m = rbd.models.double_pendulum(); "
            "rbd.crba(m, [0.1, 0.2], backend='reference'); rbd.rnea(m, [0, 0], [0, 0], [0, 0]); "
            "assert 'sympy' not in sys.modules, 'sympy loaded'")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


# --- one symbol convention, readable printing ---------------------------------------------------
def test_symbols_are_numbered_from_1_and_print_as_math(arm):
    eom = equations_of_motion(arm)
    q, qd, qdd = rbd.testing.state_symbols(arm)
    assert tuple(q) == eom.q and tuple(qd) == eom.qd
    assert [s.name for s in eom.q] == ["q1", "q2"] and [s.name for s in eom.qd] == ["qd1", "qd2"]
    assert eom.joints == ("joint1", "joint2")
    assert sympy.latex(eom.qd[0]) == r"\dot{q}_{1}" and sympy.latex(qdd[1]) == r"\ddot{q}_{2}"
    assert sympy.pretty(eom.qd[0]) == "q̇₁"
    lc2 = next(s for s in arm.symbols if s.name == "lc2")
    assert sympy.pretty(lc2) == "l_c2" and sympy.latex(lc2) == "l_{c2}"
    assert str(lc2) == "lc2"                    # code and lambdify keep the name
    # the results print as formulas, not as Matrix([[...
    for shown in (str(eom.coriolis), str(eom.M), str(eom)):
        assert "Matrix(" not in shown and "⎡" in shown
    assert "q̇₁" in str(eom.coriolis)
    assert eom.coriolis._repr_latex_().startswith("$") and r"\dot{q}_{2}" in eom._repr_latex_()
    assert "q1 (joint1), q2 (joint2)" in str(eom)


# --- the polynomial normal form: textbook form, exact zeros, numbers of the kernels ------------
def test_planar_arm_comes_out_in_textbook_form(arm):
    """Structurally (no simplify in the test): M in cos q2, g with cos(q1 + q2)."""
    eom = equations_of_motion(arm)
    s = {x.name: x for x in arm.symbols}
    m1, m2, l1, lc1, lc2, I1, I2, g = (s[n] for n in ("m1", "m2", "l1", "lc1", "lc2", "I1",
                                                      "I2", "g"))
    q1, q2 = eom.q
    qd1, qd2 = eom.qd
    c2 = sympy.cos(q2)
    # the textbook's terms, one by one (m2 not collected)
    assert eom.M[0, 0] == (m1 * lc1**2 + m2 * l1**2 + m2 * lc2**2 + 2 * m2 * l1 * lc2 * c2
                           + I1 + I2)
    assert eom.M[0, 1] == m2 * lc2**2 + m2 * l1 * lc2 * c2 + I2
    assert eom.M[1, 1] == m2 * lc2**2 + I2
    assert eom.g[1] == g * lc2 * m2 * sympy.cos(q1 + q2)
    assert eom.coriolis[1] == m2 * l1 * lc2 * sympy.sin(q2) * qd1**2


@pytest.mark.parametrize("n", [3, 4])
def test_chains_at_random_substitutions_and_without_squared_sines(n):
    """RC3 and RC4 (minutes before the normal form): the kernels' numbers, and every
    sin² already replaced by 1 − cos², so nothing is left for simplify to find."""
    model = rbd.models.revolute_chain(n)
    eom = equations_of_motion(model)
    sines = [sympy.sin(x) for x in eom.q]
    for entry in [*eom.M, *eom.h]:
        assert not any(p.base in sines and p.exp >= 2 for p in entry.atoms(sympy.Pow))
    rng = np.random.default_rng(11)
    for _ in range(2):
        q, v, _ = rbd.testing.random_state(model, rng)
        values = dict(zip(eom.q, q, strict=True)) | dict(zip(eom.qd, v, strict=True))
        assert_close(substitute(eom.M, values), rbd.crba(model, q), RTOL, "M")
        assert_close(substitute(eom.h, values).ravel(), rbd.nonlinear_effects(model, q, v),
                     RTOL, "h")
        assert_close(substitute(eom.g, values).ravel(), rbd.gravity_forces(model, q), RTOL,
                     "g")


def test_a_vanishing_entry_is_exactly_zero_without_simplify():
    """The 3-D double pendulum's coupling M12 cancels as the recursion runs."""
    eom = equations_of_motion(spatial_double_pendulum(), simplify=False)
    assert eom.M[0, 1] == 0 and eom.M[1, 0] == 0


def test_the_normal_form_reduces_squared_sines():
    from rbd.symbolic.trig import TrigRing

    x, y = sympy.symbols("x y")
    e = sympy.sin(x) ** 4 + 2 * sympy.sin(x) ** 2 * sympy.cos(x) ** 2 + sympy.cos(x) ** 4 \
        + y * sympy.sin(x) ** 3
    R = TrigRing([e])
    # (sin² + cos²)² = 1 and sin³ = sin (1 − cos²)
    assert R.expr(R.element(e)) == 1 + y * sympy.sin(x) - y * sympy.sin(x) * sympy.cos(x) ** 2
    assert R.expr(R.element(0.1) * R.element(sympy.sin(x))) == sympy.Float(0.1) * sympy.sin(x)


@pytest.mark.slow
def test_equations_of_motion_of_every_joint_kind(numeric_model):
    """The normal form handles every joint the reference handles: prismatic, helical,
    universal, planar, spherical and free (quaternion symbols), symbolic joints."""
    model = numeric_model
    eom = equations_of_motion(model, simplify=False)
    q, v, _ = rbd.testing.random_state(model, np.random.default_rng(12))
    values = dict(zip(eom.q, q, strict=True)) | dict(zip(eom.qd, v, strict=True))
    assert_close(substitute(eom.M, values), rbd.crba(model, q), RTOL, "M")
    assert_close(substitute(eom.h, values).ravel(), rbd.nonlinear_effects(model, q, v), RTOL,
                 "h")
