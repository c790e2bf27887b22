"""Helpers for testing dynamics code: random models and states, consistency reports.

>>> import numpy as np, rbd
>>> rng = np.random.default_rng(0)
>>> model = rbd.testing.random_model(rng, nbodies=4)
>>> report = rbd.testing.check_consistency(model, "mass_matrix", rbd.reference.crba.crba)
>>> report.ok
True
"""

from __future__ import annotations

import difflib
import inspect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .algorithms import random_configuration
from .errors import InputError
from .joints import Free, Helical, Joint, Planar, Prismatic, Revolute, Spherical, Universal
from .model import Model
from .spatial import plux, so3_exp

__all__ = [
    "JOINT_FACTORIES",
    "random_rotation",
    "random_inertia",
    "random_joint",
    "random_model",
    "random_state",
    "check_consistency",
    "ConsistencyReport",
    "Discrepancy",
    "state_symbols",
    "relative_difference",
    "quantity_difference",
]


def _axis(rng):
    a = rng.normal(size=3)
    return a / np.linalg.norm(a)


#: Factories of random joints of each type, keyed by kind.
JOINT_FACTORIES: dict[str, Callable[[np.random.Generator], Joint]] = {
    "revolute": lambda rng: Revolute(_axis(rng)),
    "prismatic": lambda rng: Prismatic(_axis(rng)),
    "helical": lambda rng: Helical(_axis(rng), pitch=rng.uniform(-0.2, 0.2)),
    "universal": lambda rng: Universal(*np.linalg.qr(rng.normal(size=(3, 3)))[0][:, :2].T),
    "spherical": lambda rng: Spherical(),
    "free": lambda rng: Free(),
    "planar": lambda rng: Planar(_axis(rng)),
}


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    """A random rotation matrix."""
    return so3_exp(rng.normal(size=3))


def random_inertia(rng: np.random.Generator):
    """``(mass, com, I_com)`` of a random solid box (so the inertia is physical)."""
    m = rng.uniform(0.5, 2.0)
    a, b, c = rng.uniform(0.1, 0.6, 3)
    principal = m / 12.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    R = random_rotation(rng)
    return m, rng.uniform(-0.3, 0.3, 3), R @ np.diag(principal) @ R.T


def random_joint(rng: np.random.Generator, kinds: Sequence[str]) -> Joint:
    """A random joint of one of ``kinds``."""
    return JOINT_FACTORIES[kinds[rng.integers(len(kinds))]](rng)


def random_model(
    rng: np.random.Generator | int | None = None,
    nbodies: int = 6,
    joint_types: Sequence[str] = ("revolute", "prismatic", "helical", "universal",
                                  "spherical", "planar"),
    floating_base: bool = False,
    chain: bool = False,
    gravity=(0.0, 0.0, -9.81),
) -> Model:
    """A random tree with random geometry and inertias.

    Parameters
    ----------
    rng : Generator or seed
    nbodies : int
        Number of bodies (including a floating base when requested).
    joint_types : sequence of str
        Kinds to draw from (keys of :data:`JOINT_FACTORIES`).
    floating_base : bool
        Give body 0 a free joint.
    chain : bool
        Make a serial chain instead of a random tree.
    """
    rng = np.random.default_rng(rng)
    model = Model(gravity=gravity, name=f"random tree ({nbodies} bodies)")
    for i in range(nbodies):
        parent = -1 if i == 0 else (i - 1 if chain else int(rng.integers(0, i)))
        joint = Free() if (i == 0 and floating_base) else random_joint(rng, joint_types)
        X_tree = plux(random_rotation(rng), rng.uniform(-0.5, 0.5, 3))
        model.add_body(parent, joint, X_tree, random_inertia(rng), f"b{i}")
    return model


def random_state(model: Model, rng: np.random.Generator | int | None = None, scale: float = 1.0):
    """Random ``(q, v, a)`` (use ``a`` as ``tau`` where a force is needed)."""
    rng = np.random.default_rng(rng)
    q = random_configuration(model, rng)
    v = scale * rng.normal(size=model.nv)
    a = scale * rng.normal(size=model.nv)
    return q, v, a


def relative_difference(x, y) -> float:
    """``max|x - y| / max(1, max|y|)``: the error measure used across the suite."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape:
        return float("inf")
    if x.size == 0:
        return 0.0
    return float(np.max(np.abs(x - y)) / max(1.0, float(np.max(np.abs(y)))))


def quantity_difference(quantity: str, model: Model, state, x, y) -> float:
    """Difference of two results for ``quantity`` at ``state = (q, v, a_or_tau)``.

    For inverse dynamics, mass matrices and bias forces this is
    :func:`relative_difference`.  Accelerations are compared in torque space,
    ``max|M (x - y)| / max(1, max|tau|, max|h|)``: forward dynamics amplifies
    rounding by the condition number of ``M`` (a torus chain reaches 1e6 with
    velocity terms 1e4 times the torques), while two exact algorithms agree in
    torque space to rounding whatever the conditioning.
    """
    if quantity not in ("forward_dynamics", "constrained_dynamics"):
        return relative_difference(x, y)
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape:
        return float("inf")
    if x.size == 0:
        return 0.0
    from .algorithms import crba, nonlinear_effects

    q, v, tau = state
    # the public functions: a model with mimic joints has M and h of its own coordinates
    M = crba(model, q, backend="reference")
    h = nonlinear_effects(model, q, v, backend="reference")
    scale = max(1.0, float(np.max(np.abs(tau))), float(np.max(np.abs(h))))
    return float(np.max(np.abs(M @ (x - y))) / scale)


# --- check_consistency: a user's function against every registered implementation -------------
# The arguments after ``model`` that each quantity's function takes (the registry signatures).
_ARGUMENTS = {
    "inverse_dynamics": ("q", "v", "a"),
    "mass_matrix": ("q",),
    "forward_dynamics": ("q", "v", "tau"),
    "constrained_dynamics": ("q", "v", "tau"),
    "bias_forces": ("q", "v"),
}
_SYMBOLS = {"mass_matrix": "M", "inverse_dynamics": "tau", "bias_forces": "h",
            "forward_dynamics": "qdd", "constrained_dynamics": "qdd"}
# A slip explains the worst entry when it predicts the user's value there to this relative
# accuracy at every tested state: far above rounding (1e-16 per operation on values of order
# one) and far below any real disagreement worth naming.
SLIP_TOLERANCE = 1e-6


@dataclass
class Discrepancy:
    """The entry where a function disagrees most with the expected value.

    Attributes
    ----------
    index : tuple of int
        ``(row, column)`` for a matrix, ``(row,)`` for a vector.
    state : dict
        The state where it happens, by argument name (``q``, ``v`` and ``a`` or ``tau``).
    yours, expected : float
        The function's value and the reference implementation's value of that entry.
    slips : list of str
        The usual mistakes that explain the entry at every tested state (may be empty).
    """

    quantity: str
    index: tuple[int, ...]
    state: dict[str, np.ndarray]
    yours: float
    expected: float
    slips: list[str] = field(default_factory=list)

    @property
    def entry(self) -> str:
        return f"{_SYMBOLS[self.quantity]}[{', '.join(map(str, self.index))}]"

    def __str__(self) -> str:
        where = ", ".join(f"{k} = {np.array2string(np.asarray(x), precision=4)}"
                          for k, x in self.state.items())
        lines = [f"worst entry: {self.entry} at {where}",
                 f"  yours     {self.yours: .10g}",
                 f"  expected  {self.expected: .10g}"]
        lines += [f"likely slip: {slip}" for slip in self.slips]
        return "\n".join(lines)


@dataclass
class ConsistencyReport:
    """Agreement of one function with every registered implementation.

    ``rows`` holds ``(implementation, max difference, note)``; a non-empty note
    (``"n/a ..."``) marks an implementation that does not handle the model: it is
    shown and counted apart, never as an agreement.  ``worst`` names the entry
    that differs most from the reference; ``formulas`` (symbolic input only)
    maps each non-zero entry of the simplified difference *yours − expected* to
    its formula.
    """

    quantity: str
    tolerance: float
    rows: list[tuple[str, float, str]] = field(default_factory=list)
    worst: Discrepancy | None = None
    formulas: dict[tuple[int, ...], object] = field(default_factory=dict)

    @property
    def compared(self) -> int:
        """Number of implementations compared (those that handle the model)."""
        return sum(1 for _, _, note in self.rows if not note)

    @property
    def not_applicable(self) -> int:
        """Number of implementations that do not handle the model (shown as n/a)."""
        return len(self.rows) - self.compared

    @property
    def ok(self) -> bool:
        return (self.compared > 0 and not self.formulas
                and all(err <= self.tolerance for _, err, note in self.rows if not note))

    @property
    def max_difference(self) -> float:
        errs = [err for _, err, note in self.rows if not note]
        return max(errs) if errs else 0.0

    def __str__(self) -> str:
        width = max([len(n) for n, _, _ in self.rows] + [14])
        lines = [f"{self.quantity}: max relative difference against each implementation "
                 f"(tolerance {self.tolerance:.1e})"]
        for name, err, note in self.rows:
            if note:
                lines.append(f"  {name:<{width}}  {'n/a':>10}  {note}")
            else:
                verdict = "ok" if err <= self.tolerance else "DIFFERS"
                lines.append(f"  {name:<{width}}  {err:10.3e}  {verdict}")
        lines.append(f"agreement: {'yes' if self.ok else 'NO'} ({self.compared} compared, "
                     f"{self.not_applicable} n/a, counted apart)")
        if self.worst is not None and not self.ok:
            lines.append(str(self.worst))
        if self.formulas:
            lines.append("yours - expected, simplified (non-zero entries):")
            lines += [f"  {_SYMBOLS[self.quantity]}[{', '.join(map(str, k))}] = {f}"
                      for k, f in self.formulas.items()]
        return "\n".join(lines)


def _quantity(quantity) -> str:
    from . import registry

    if quantity in registry.QUANTITIES:
        return quantity
    close = difflib.get_close_matches(str(quantity).replace(" ", "_").lower(),
                                      registry.QUANTITIES, n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise InputError(f"quantity {quantity!r} is not one of {', '.join(registry.QUANTITIES)}"
                     f"{hint}")


def _check_signature(quantity: str, fn: Callable) -> None:
    names = ("model", *_ARGUMENTS[quantity])
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return          # a builtin or extension function: nothing to inspect
    try:
        signature.bind(*names)
    except TypeError as exc:
        raise InputError(f"fn must be callable as fn({', '.join(names)}) for {quantity!r}; "
                         f"{getattr(fn, '__name__', 'fn')}{signature} cannot ({exc})") from None


def _call(quantity: str, fn: Callable, model: Model, q, v, a):
    if quantity == "mass_matrix":
        return fn(model, q)
    if quantity == "bias_forces":
        return fn(model, q, v)
    return fn(model, q, v, a)


def _state(quantity: str, q, v, a) -> dict[str, np.ndarray]:
    values = {"q": q, "v": v, "a": a, "tau": a}
    return {name: values[name] for name in _ARGUMENTS[quantity]}


def _expected_shape(quantity: str, model: Model) -> tuple[int, ...]:
    return (model.nv, model.nv) if quantity == "mass_matrix" else (model.nv,)


def _as_result(quantity: str, model: Model, value) -> np.ndarray:
    try:
        result = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"fn returned {type(value).__name__}, not numbers ({exc})") from None
    expected = _expected_shape(quantity, model)
    if result.shape != expected:
        raise InputError(f"fn returned shape {result.shape} for {quantity!r}; expected "
                         f"{expected} (nv = {model.nv})")
    return result


def _reference_name(names: list[str]) -> str:
    return "reference" if "reference" in names else names[0]


def _compare(report: ConsistencyReport, model: Model, states, mine) -> dict | None:
    """Fill ``report.rows``; return the reference implementation's values per state."""
    from . import registry

    quantity, expected = report.quantity, {}
    for name, other in registry.implementations(quantity).items():
        if not registry.supports(quantity, name, model):
            report.rows.append((name, 0.0, "n/a (does not handle this model)"))
            continue
        try:
            values = [np.asarray(_call(quantity, other, model, *s), dtype=float) for s in states]
        except Exception as exc:   # a derivation that fails on the model is not compared
            report.rows.append((name, 0.0, f"n/a (raised {type(exc).__name__}: {exc})"))
            continue
        err = max(quantity_difference(quantity, model, s, m, y)
                  for m, s, y in zip(mine, states, values, strict=True))
        report.rows.append((name, err, ""))
        expected[name] = values
    return expected[_reference_name(list(expected))] if expected else None


def _slip_predictions(quantity: str, model: Model, state, expected: np.ndarray):
    """``(description, predicted value)`` of each usual slip at one state."""
    from .algorithms import crba, gravity_forces, nonlinear_effects

    yield "a sign (yours is minus the expected value)", -expected
    yield "a factor of 2 (yours is twice the expected value)", 2.0 * expected
    yield "a factor of 2 (yours is half the expected value)", 0.5 * expected
    if quantity == "mass_matrix":
        return
    q, v, _ = state
    g = gravity_forces(model, q, backend="reference")
    cv = nonlinear_effects(model, q, v, backend="reference") - g
    if quantity == "forward_dynamics":      # the same slips, seen through M⁻¹
        M = crba(model, q, backend="reference")
        g, cv = np.linalg.solve(M, -g), np.linalg.solve(M, -cv)
    yield "a missing gravity term g(q)", expected - g
    yield "gravity with the wrong sign", expected - 2.0 * g
    if quantity != "mass_matrix" and np.any(v):
        yield "the Coriolis/centrifugal term C(q, v) v halved", expected - 0.5 * cv
        yield "a missing Coriolis/centrifugal term C(q, v) v", expected - cv
        yield "the Coriolis/centrifugal term C(q, v) v doubled", expected + cv


def _slips(quantity: str, model: Model, states, mine, expected, index) -> list[str]:
    """The usual slips that predict the user's worst entry at every state."""
    per_state = [dict(_slip_predictions(quantity, model, s, y))
                 for s, y in zip(states, expected, strict=True)]
    found = []
    for name in per_state[0]:
        if all(abs(m[index] - p[name][index]) <= SLIP_TOLERANCE * max(1.0, abs(y[index]))
               and abs(m[index] - y[index]) > SLIP_TOLERANCE * max(1.0, abs(y[index]))
               for m, y, p in zip(mine, expected, per_state, strict=True)):
            everywhere = all(np.allclose(m, p[name], rtol=SLIP_TOLERANCE, atol=SLIP_TOLERANCE)
                             for m, p in zip(mine, per_state, strict=True))
            found.append(name + (" in every entry" if everywhere else
                                 f" in entry {_SYMBOLS[quantity]}{list(index)}"))
    if _transposed(mine, expected, index):
        i, j = index
        found.append(f"a transpose: {_SYMBOLS[quantity]} is symmetric and yours is not; your "
                     f"entry [{j}, {i}] is right, so the term of [{i}, {j}] has a transposed "
                     f"factor (or fill {_SYMBOLS[quantity]} from one triangle)")
    return found


def _transposed(mine, expected, index) -> bool:
    """Entry ``(i, j)`` is wrong where its mirror ``(j, i)`` is right (``M`` is symmetric)."""
    if len(index) != 2 or index[0] == index[1]:
        return False
    i, j = index
    return all(abs(m[j, i] - y[i, j]) <= SLIP_TOLERANCE * max(1.0, abs(y[i, j]))
               < abs(m[i, j] - y[i, j]) for m, y in zip(mine, expected, strict=True))


def _worst(quantity: str, model: Model, states, mine, expected) -> Discrepancy:
    k, index, largest = 0, (0,) * mine[0].ndim, -1.0
    for i, (m, y) in enumerate(zip(mine, expected, strict=True)):
        if m.size == 0:
            continue
        d = np.abs(m - y) / max(1.0, float(np.max(np.abs(y))))
        j = np.unravel_index(int(np.argmax(d)), d.shape)
        if d[j] > largest:
            k, index, largest = i, tuple(int(x) for x in j), float(d[j])
    if largest < 0:
        return Discrepancy(quantity, index, _state(quantity, *states[0]), 0.0, 0.0)
    return Discrepancy(quantity, index, _state(quantity, *states[k]), float(mine[k][index]),
                       float(expected[k][index]),
                       _slips(quantity, model, states, mine, expected, index))


def check_consistency(
    model: Model,
    quantity: str,
    fn,
    rng: np.random.Generator | int | None = 0,
    trials: int = 5,
    tolerance: float = 1e-8,
) -> ConsistencyReport:
    """Compare ``fn`` with every registered implementation of ``quantity``; find the wrong term.

    Parameters
    ----------
    model : Model
    quantity : {"mass_matrix", "inverse_dynamics", "bias_forces", "forward_dynamics",
        "constrained_dynamics"}
    fn : callable or sympy.Matrix
        A function with the registry signature of ``quantity``: ``fn(model, q)``
        for ``M``, ``fn(model, q, v)`` for ``h = C v + g``, ``fn(model, q, v, a)``
        for ``tau`` and ``fn(model, q, v, tau)`` for ``qdd``.  It may return a
        sympy Matrix, or be one, written in the symbols of
        :func:`state_symbols` (``q0, q1, ...``, ``v0, ...``, ``a0, ...``): the
        difference to the symbolic equations of motion is then simplified and
        its non-zero entries are reported as formulas.
    rng : Generator or seed
        Draws the ``trials`` random states.
    tolerance : float
        Largest accepted difference (see :func:`quantity_difference`).

    Returns
    -------
    ConsistencyReport
        ``report.ok``; ``print(report)`` shows one row per implementation
        (``n/a`` for those that do not handle the model, counted apart), and when
        they disagree the worst entry (row, column), the state where it happens,
        your value beside the expected one, and the usual slip that explains it
        (a sign, a factor of 2, a transpose, a missing gravity term, the
        Coriolis term halved, ...).

    Raises
    ------
    InputError
        An unknown quantity (with the closest name), a function whose signature
        does not fit the quantity, or a result of the wrong shape.

    Examples
    --------
    >>> import numpy as np, rbd
    >>> model = rbd.models.double_pendulum(1.0, 1.0, 1.0, 1.0)
    >>> def my_M(model, q):   # the coupling term should be 1 + cos(q1)
    ...     c = np.cos(q[1])
    ...     return np.array([[3 + 2 * c, 2 + 2 * c], [2 + 2 * c, 1.0]])
    >>> report = rbd.testing.check_consistency(model, "mass_matrix", my_M)
    >>> report.ok, report.worst.entry
    (False, 'M[0, 1]')
    >>> report.worst.slips[0]
    'a factor of 2 (yours is twice the expected value) in entry M[0, 1]'
    """
    quantity = _quantity(quantity)
    formulas: dict = {}
    if _is_sympy_matrix(fn) or callable(fn):
        if callable(fn):
            _check_signature(quantity, fn)
    else:
        raise InputError(f"fn must be a function or a sympy Matrix, got {type(fn).__name__}")
    rng = np.random.default_rng(rng)
    states = [random_state(model, rng) for _ in range(trials)]
    first = fn if _is_sympy_matrix(fn) else _call(quantity, fn, model, *states[0])
    if _is_sympy_matrix(first):
        fn, formulas = _symbolic(quantity, model, first if _is_sympy_matrix(fn) else fn, states)
    mine = [_as_result(quantity, model, _call(quantity, fn, model, *s)) for s in states]
    report = ConsistencyReport(quantity, tolerance, formulas=formulas)
    expected = _compare(report, model, states, mine)
    if expected is not None:
        report.worst = _worst(quantity, model, states, mine, expected)
    return report


# --- the symbolic comparison ------------------------------------------------------------------
_SYMBOL_NAME = re.compile(r"^(q|v|qd|dq|a|qdd|ddq|tau)_?\[?(\d+)\]?$")
_ROLE = {"q": "q", "v": "v", "qd": "v", "dq": "v", "a": "a", "qdd": "a", "ddq": "a",
         "tau": "a"}


def _is_sympy_matrix(x) -> bool:
    try:
        import sympy
    except ImportError:
        return False
    return isinstance(x, sympy.MatrixBase)


def state_symbols(model: Model):
    """Sympy symbols ``(q, v, a)`` for a symbolic :func:`check_consistency`.

    Each is a column ``sympy.Matrix`` of ``model.nv`` symbols named ``q0, q1, ...``,
    ``v0, ...`` and ``a0, ...`` (``a`` stands for ``tau`` in forward dynamics).
    Symbols of your own named ``q1``, ``q_1``, ``qd1``, ``qdd1`` and so on are
    recognized too.

    Examples
    --------
    >>> import rbd
    >>> q, v, a = rbd.testing.state_symbols(rbd.models.double_pendulum())
    >>> q.T
    Matrix([[q0, q1]])
    """
    import sympy

    return tuple(sympy.Matrix(sympy.symbols(f"{s}0:{model.nv}") if model.nv else [])
                 for s in ("q", "v", "a"))


def _symbolic_expected(quantity: str, model: Model):
    """The Guenter–Lee equations of ``quantity`` in the symbols of :func:`state_symbols`."""
    import sympy

    from .symbolic.lagrangian import lagrangian, supports

    if quantity == "forward_dynamics" or not supports(model):
        raise InputError(f"a symbolic {quantity!r} cannot be compared for {model.name!r}: the "
                         "symbolic equations cover M, tau and h of models with revolute, "
                         "prismatic and helical joints of at most 8 DoF; pass a numeric "
                         "function instead")
    gl = lagrangian(model)
    program, output = {"mass_matrix": (gl.mass_matrix_program, "M"),
                       "inverse_dynamics": (gl.inverse_dynamics_program, "tau"),
                       "bias_forces": (gl.bias_forces_program, "c")}[quantity]
    q, v, a = state_symbols(model)
    rename = {}
    for role, mine in (("q", q), ("qd", v), ("qdd", a)):
        rename.update(zip(program.inputs.get(role, []), mine, strict=False))
    inlined: dict = {}
    for symbol, expr in program.assignments:
        inlined[symbol] = expr.xreplace(inlined)
    values = [e.xreplace(inlined).xreplace(rename) for e in program.outputs[output]]
    if quantity != "mass_matrix":
        return sympy.Matrix(values)
    M = sympy.zeros(model.nv, model.nv)
    it = iter(values)
    for i in range(model.nv):
        for j in range(i + 1):
            M[i, j] = M[j, i] = next(it)
    return M


def _in_state_symbols(model: Model, expr):
    """``expr`` with the user's symbols renamed to those of :func:`state_symbols`."""
    q, v, a = state_symbols(model)
    columns = {"q": q, "v": v, "a": a}
    rename = {}
    for s in expr.free_symbols:
        match = _SYMBOL_NAME.match(s.name)
        if match is None or int(match.group(2)) >= model.nv:
            raise InputError(f"symbol {s.name!r} is not a state symbol of this model; use "
                             f"rbd.testing.state_symbols(model): q0..q{model.nv - 1}, "
                             f"v0.., a0..")
        rename[s] = columns[_ROLE[match.group(1)]][int(match.group(2))]
    return expr.xreplace(rename)


def _symbolic(quantity: str, model: Model, fn, states):
    """A numeric function for the user's sympy result, and the formulas of the difference."""
    import sympy

    symbols = state_symbols(model)
    if _is_sympy_matrix(fn):
        mine = fn
    else:
        _check_signature(quantity, fn)
        mine = _call(quantity, fn, model, *symbols)
        if not _is_sympy_matrix(mine):
            raise InputError(f"fn returned a sympy Matrix for numbers but "
                             f"{type(mine).__name__} for symbols")
    mine = _in_state_symbols(model, sympy.Matrix(mine))
    shape = _expected_shape(quantity, model)
    if quantity != "mass_matrix" and mine.shape in ((1, model.nv), (model.nv, 1)):
        mine = mine.reshape(model.nv, 1)
    elif mine.shape != shape:
        raise InputError(f"the sympy Matrix has shape {mine.shape} for {quantity!r}; expected "
                         f"{shape} (nv = {model.nv})")
    expected = _symbolic_expected(quantity, model).reshape(*mine.shape)
    args = [s for column in symbols for s in column]
    numeric = sympy.lambdify(args, mine, modules="numpy")

    def evaluate(model_, q, v=None, a=None):
        zeros = np.zeros(model.nv)
        values = [*q, *(zeros if v is None else v), *(zeros if a is None else a)]
        return np.asarray(numeric(*values), dtype=float).reshape(shape)

    return evaluate, _difference_formulas(mine - expected, args, states)


def _difference_formulas(difference, args, states) -> dict:
    """Non-zero entries of the simplified difference (checked numerically at ``states``)."""
    import sympy

    formulas = {}
    for index in np.ndindex(*difference.shape):
        expr = difference[index]
        if expr == 0:
            continue
        f = sympy.lambdify(args, expr, modules="numpy")
        values = [abs(float(f(*s[0], *s[1], *s[2]))) for s in states]
        # Both sides are exact formulas; float coefficients (9.81, lengths) round at 1e-15.
        if max(values) <= 1e-10:
            continue
        simplified = sympy.nsimplify(sympy.simplify(expr), tolerance=1e-12, rational=False)
        key = (index[0],) if difference.shape[1] == 1 else tuple(int(i) for i in index)
        formulas[key] = simplified
    return formulas
