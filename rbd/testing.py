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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ._testing_mujoco import MUJOCO_TIGHT as MUJOCO_TIGHT
from ._testing_mujoco import mujoco_pair as mujoco_pair
from ._testing_mujoco import mujoco_urdf_spec as mujoco_urdf_spec
from .algorithms import random_configuration
from .errors import InputError, ModelError
from .joints import Free, Helical, Joint, Planar, Prismatic, Revolute, Spherical, Universal
from .model import Model
from .spatial import plux, so3_exp

# documented here, where readers look for them (rbd/_testing_mujoco.py keeps the module short)
mujoco_pair.__module__ = mujoco_urdf_spec.__module__ = __name__

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
    "mujoco_pair",
    "mujoco_urdf_spec",
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
# A slip explains an entry when it predicts the user's value there to this relative
# accuracy at every tested state: far above rounding (1e-16 per operation on values of order
# one) and far below any real disagreement worth naming.
SLIP_TOLERANCE = 1e-6
#: Largest model whose slips are named term by term (its equations of motion are derived
#: as formulas, split by body and term); larger ones get the whole-quantity slips only.
SLIP_DOF = 6


@dataclass
class Discrepancy:
    """One entry where a function disagrees with the expected value.

    Attributes
    ----------
    index : tuple of int
        ``(row, column)`` for a matrix, ``(row,)`` for a vector (NumPy indices, from 0).
    state : dict
        The state where the entry differs most, by argument name (``q``, ``v`` and
        ``a`` or ``tau``).
    yours, expected : float
        The function's value and the reference implementation's value of that entry.
    slips : list of str
        The usual mistakes that explain the entry at every tested state (may be empty).
    coordinates : str
        The joint symbols and joints of the entry's row (and column), e.g.
        ``"row q1 (shoulder), column q2 (elbow)"``.
    difference : float
        ``|yours − expected| / max(1, max|expected|)`` at that state: the order of the list.
    """

    quantity: str
    index: tuple[int, ...]
    state: dict[str, np.ndarray]
    yours: float
    expected: float
    slips: list[str] = field(default_factory=list)
    coordinates: str = ""
    difference: float = 0.0

    @property
    def entry(self) -> str:
        return f"{_SYMBOLS[self.quantity]}[{', '.join(map(str, self.index))}]"

    def __str__(self) -> str:
        where = ", ".join(f"{k} = {np.array2string(np.asarray(x), precision=4)}"
                          for k, x in self.state.items())
        about = f" ({self.coordinates})" if self.coordinates else ""
        lines = [f"{self.entry}{about} at {where}",
                 f"  yours     {self.yours: .10g}",
                 f"  expected  {self.expected: .10g}"]
        lines += [f"  likely slip: {slip}" for slip in self.slips]
        return "\n".join(lines)


@dataclass
class ConsistencyReport:
    """Agreement of one function with every registered implementation.

    ``rows`` holds ``(implementation, max difference, note)``; a non-empty note
    (``"n/a ..."``) marks an implementation that does not handle the model: it is
    shown and counted apart, never as an agreement.  ``entries`` lists every
    entry that differs from the reference, worst first, each with the usual
    slips that explain it; ``worst`` is the first.  ``formulas`` (symbolic input
    only) maps each non-zero entry of the difference *yours − expected* to its
    formula.
    """

    quantity: str
    tolerance: float
    rows: list[tuple[str, float, str]] = field(default_factory=list)
    worst: Discrepancy | None = None
    formulas: dict[tuple[int, ...], object] = field(default_factory=dict)
    entries: list[Discrepancy] = field(default_factory=list)

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

    @property
    def slips(self) -> list[str]:
        """Every slip named, entry by entry (``"M[0, 1]: a sign error in ..."``)."""
        return [f"{e.entry}: {slip}" for e in self.entries for slip in e.slips]

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
        if self.entries and not self.ok:
            lines.append(f"{len(self.entries)} differing "
                         f"{'entry' if len(self.entries) == 1 else 'entries'}, worst first:")
            lines.append("worst entry: " + str(self.entries[0]))
            lines += [str(e) for e in self.entries[1:]]
        if self.formulas:
            lines.append("yours - expected (non-zero entries):")
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


def _coordinates(model: Model, index) -> str:
    joints = ["?"] * model.nv
    for name in model.joint_names:
        try:
            sl = model.v_slice(name)
        except ModelError:          # a mimic joint has no coordinate of its own
            continue
        joints[sl] = [name] * (sl.stop - sl.start)
    names = [f"q{k + 1} '{joints[k]}'" for k in index]
    if len(index) == 1:
        return f"coordinate {names[0]}"
    return f"row {names[0]}, column {names[1]}"


def _entries(quantity: str, model: Model, states, mine, expected, tolerance) -> list:
    """Every entry that differs by more than ``tolerance`` at some state, worst first."""
    found = []
    if not mine or mine[0].size == 0:
        return found
    scale = [max(1.0, float(np.max(np.abs(y)))) for y in expected]
    d = np.array([np.abs(m - y) / s for m, y, s in zip(mine, expected, scale, strict=True)])
    worst = d.max(axis=0)
    for flat in np.argsort(-worst.ravel(), kind="stable"):
        index = tuple(int(x) for x in np.unravel_index(int(flat), worst.shape))
        if worst[index] <= tolerance:
            break
        k = int(np.argmax(d[(slice(None), *index)]))
        found.append(Discrepancy(quantity, index, _state(quantity, *states[k]),
                                 float(mine[k][index]), float(expected[k][index]),
                                 coordinates=_coordinates(model, index),
                                 difference=float(worst[index])))
    return found


def check_consistency(
    model,
    quantity: str,
    fn,
    rng: np.random.Generator | int | None = 0,
    trials: int = 5,
    tolerance: float = 1e-8,
) -> ConsistencyReport:
    """Compare ``fn`` with every registered implementation of ``quantity``; name the slip.

    Parameters
    ----------
    model : Model or rbd.symbolic.SymbolicModel
        A symbolic model (e.g. :func:`rbd.symbolic.planar_arm`) is compared at
        its numeric values (``model.numeric()``); a sympy answer may then use
        its parameter symbols (``m1``, ``lc2``, ...).
    quantity : {"mass_matrix", "inverse_dynamics", "bias_forces", "forward_dynamics",
        "constrained_dynamics"}
    fn : callable or sympy.Matrix
        A function with the registry signature of ``quantity``: ``fn(model, q)``
        for ``M``, ``fn(model, q, v)`` for ``h = C v + g``, ``fn(model, q, v, a)``
        for ``tau`` and ``fn(model, q, v, tau)`` for ``qdd``.  It may return a
        sympy Matrix, or be one, written in the symbols of
        :func:`state_symbols` (``q1, q2, ...``, ``qd1, ...``, ``qdd1, ...``,
        numbered from 1 like the joints, as :func:`rbd.symbolic.equations_of_motion`;
        ``v1``, ``q_1``, ``dq1``, ``a1`` are understood too): the difference to
        the symbolic equations of motion is then reported entry by entry as a
        formula.
    rng : Generator or seed
        Draws the ``trials`` random states.
    tolerance : float
        Largest accepted difference (see :func:`quantity_difference`).

    Returns
    -------
    ConsistencyReport
        ``report.ok``; ``print(report)`` shows one row per implementation
        (``n/a`` for those that do not handle the model, counted apart), and when
        they disagree every differing entry, worst first: its row and column
        with their joint symbols and joints, the state where it differs most,
        your value beside the expected one, and the usual slips that explain it.
        For M, h and tau of models of at most ``SLIP_DOF`` DoF the expected
        equations are split into named terms (per link: the rotational
        inertia and the parallel-axis part m·d² of M; the Coriolis terms
        ``q̇_i q̇_j``, the centrifugal terms ``q̇_i²`` and the gravity terms of
        h; then the single terms of each formula), and a slip is named when it
        predicts your value at every state: a term with its sign flipped,
        missing, doubled or halved, cos written for sin, an index swapped
        (transpose, ``Cᵀ q̇`` for ``C q̇``), a factor of 2 or a sign of the
        whole entry.

    Raises
    ------
    InputError
        An unknown quantity (with the closest name), a function whose signature
        does not fit the quantity, a result of the wrong shape, or a sympy symbol
        that is not a state symbol (numbered from 1) or parameter of the model.

    Examples
    --------
    >>> import numpy as np, rbd
    >>> model = rbd.models.double_pendulum(1.0, 1.0, 1.0, 1.0)
    >>> def my_M(model, q):   # the coupling term should be 1 + cos(q2)
    ...     c = np.cos(q[1])
    ...     return np.array([[3 + 2 * c, 1 - c], [1 - c, 1.0]])
    >>> report = rbd.testing.check_consistency(model, "mass_matrix", my_M)
    >>> report.ok, [e.entry for e in report.entries]
    (False, ['M[0, 1]', 'M[1, 0]'])
    >>> report.worst.slips[0]
    'a sign error in the term cos(q2) (of the parallel-axis term m·d² of link2)'
    """
    from .symbolic.equations import SymbolicModel
    from .symbolic.slips import name_slips

    quantity = _quantity(quantity)
    record = model if isinstance(model, SymbolicModel) else None
    if record is not None:
        model = record.numeric()
    elif not isinstance(model, Model):
        raise InputError(f"model must be an rbd.Model or a SymbolicModel, got "
                         f"{type(model).__name__}")
    formulas: dict = {}
    slip_data = None
    if _is_sympy_matrix(fn) or callable(fn):
        if callable(fn):
            _check_signature(quantity, fn)
    else:
        raise InputError(f"fn must be a function or a sympy Matrix, got {type(fn).__name__}")
    rng = np.random.default_rng(rng)
    states = [random_state(model, rng) for _ in range(trials)]
    first = fn if _is_sympy_matrix(fn) else _call(quantity, fn, model, *states[0])
    if _is_sympy_matrix(first):
        if record is None:
            record = SymbolicModel.of(model)
        fn, formulas, slip_data = _symbolic(quantity, model, record,
                                            first if _is_sympy_matrix(fn) else fn, states, rng)
    mine = [_as_result(quantity, model, _call(quantity, fn, model, *s)) for s in states]
    report = ConsistencyReport(quantity, tolerance, formulas=formulas)
    expected = _compare(report, model, states, mine)
    if expected is not None and not report.ok:
        report.entries = _entries(quantity, model, states, mine, expected, tolerance)
        if slip_data is not None:       # named where the parameters vary too
            points, mine_p, expected_p = slip_data
            name_slips(quantity, model, record, states, mine_p, expected_p, report.entries,
                       points, SLIP_TOLERANCE, SLIP_DOF, _SYMBOLS[quantity])
        else:
            if record is None and not model._mimic:     # (mimic joints: no symbolic record)
                record = SymbolicModel.of(model)
            values = [float(record.values[p]) for p in record.parameter_symbols] \
                if record is not None else []
            points = [[*s[0], *s[1], *s[2], *values] for s in states]
            name_slips(quantity, model, record, states, mine, expected, report.entries,
                       points, SLIP_TOLERANCE, SLIP_DOF, _SYMBOLS[quantity])
        report.worst = report.entries[0] if report.entries else None
    return report


# --- the symbolic comparison ------------------------------------------------------------------
def _is_sympy_matrix(x) -> bool:
    try:
        import sympy
    except ImportError:
        return False
    return isinstance(x, sympy.MatrixBase)


def state_symbols(model):
    """Sympy symbols ``(q, q̇, q̈)`` for a symbolic :func:`check_consistency`.

    Each is a column ``sympy.Matrix``: ``q1 … q_nq``, ``qd1 … qd_nv`` (printed
    :math:`\\dot q_k`) and ``qdd1 …`` (printed :math:`\\ddot q_k`; they stand for
    ``tau`` in forward dynamics), numbered from 1 like the joints of a textbook
    and the symbols of :func:`rbd.symbolic.equations_of_motion`
    (:func:`rbd.symbolic.joint_symbols`): ``qk`` is ``q[k - 1]``.  Symbols of
    your own named ``q_1``, ``v1``, ``dq1``, ``a1`` and so on are recognized
    too; ``model`` may be a :class:`~rbd.symbolic.SymbolicModel`.

    Examples
    --------
    >>> import rbd
    >>> q, qd, qdd = rbd.testing.state_symbols(rbd.models.double_pendulum())
    >>> q.T, qd.T
    (Matrix([[q1, q2]]), Matrix([[qd1, qd2]]))
    """
    import sympy

    from .symbolic.equations import joint_symbols

    return tuple(sympy.Matrix(list(s)) if s else sympy.zeros(0, 1)
                 for s in joint_symbols(model.nq, model.nv))


def _symbolic(quantity: str, model: Model, record, fn, states, rng):
    """A numeric function for the user's sympy result, the formulas of the difference, and
    ``(points, yours, expected)`` for naming slips where the parameters vary too."""
    import sympy

    from .symbolic.equations import equations_of_motion
    from .symbolic.slips import difference_formulas, in_state_symbols

    if quantity == "forward_dynamics":
        raise InputError("a symbolic 'forward_dynamics' cannot be compared: the symbolic "
                         "equations cover M, tau and h; pass a numeric function instead")
    if model.nv > SLIP_DOF + 2:
        raise InputError(f"a symbolic {quantity!r} is compared for models of at most "
                         f"{SLIP_DOF + 2} DoF ({model.name!r} has {model.nv}); pass a "
                         "numeric function instead")
    symbols = state_symbols(record)
    if _is_sympy_matrix(fn):
        mine = fn
    else:
        mine = _call(quantity, fn, model, *symbols)
        if not _is_sympy_matrix(mine):
            raise InputError(f"fn returned a sympy Matrix for numbers but "
                             f"{type(mine).__name__} for symbols")
    mine = in_state_symbols(record, sympy.Matrix(mine))
    shape = _expected_shape(quantity, model)
    if quantity != "mass_matrix" and mine.shape in ((1, model.nv), (model.nv, 1)):
        mine = mine.reshape(model.nv, 1)
    elif mine.shape != shape:
        raise InputError(f"the sympy Matrix has shape {mine.shape} for {quantity!r}; expected "
                         f"{shape} (nv = {model.nv})")
    eom = equations_of_motion(record, simplify=False)
    expected = {"mass_matrix": lambda: eom.M, "bias_forces": lambda: eom.h,
                "inverse_dynamics": lambda: eom.M * symbols[2] + eom.h}[quantity]()
    params = record.parameter_symbols
    args = [s for column in symbols for s in column] + params
    numeric = sympy.lambdify(args, mine, modules="numpy")
    reference = sympy.lambdify(args, expected, modules="numpy")
    values = [float(record.values[p]) for p in params]

    def evaluate(model_, q, v=None, a=None):
        zeros = np.zeros(model.nv)
        point = [*q, *(zeros if v is None else v), *(zeros if a is None else a), *values]
        return np.asarray(numeric(*point), dtype=float).reshape(shape)

    points = [[*s[0], *s[1], *s[2], *(rng.uniform(0.5, 2.0, len(params)) if model.nv <= SLIP_DOF
                                       else values)] for s in states]
    yours = [np.asarray(numeric(*p), dtype=float).reshape(shape) for p in points]
    theirs = [np.asarray(reference(*p), dtype=float).reshape(shape) for p in points]
    return evaluate, difference_formulas(mine - expected, args, points), (points, yours, theirs)
