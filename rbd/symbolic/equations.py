r"""Equations of motion on symbols, rendered by the reference algorithms themselves.

The spatial algebra (:mod:`rbd.spatial`) and the joints (:mod:`rbd.joints`)
are scalar-generic, so :mod:`rbd.reference` runs unchanged on NumPy object
arrays of sympy expressions.  Nothing here derives dynamics: it hands the
recursions symbols and collects the formulas they return,

.. math::

    M(q) = \mathrm{CRBA}(q), \qquad
    h(q, \dot q) = \mathrm{RNEA}(q, \dot q, 0) = C(q, \dot q)\,\dot q + g(q), \qquad
    g(q) = \mathrm{RNEA}(q, 0, 0),

(RBDA Tables 6.2 and 5.1).  The symbols may also be the model's parameters:
:class:`SymbolicModel` is a model record that the reference functions accept
in place of an :class:`rbd.Model`, with masses, centres of mass, rotational
inertias, joint offsets and gravity given as sympy expressions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import sympy

from .._validation import as_vector
from ..errors import InputError, ModelError
from ..joints import Revolute
from ..model import Model
from ..reference import crba as _crba
from ..reference import rnea as _rnea
from ..spatial import exact, mcI, plux, plux_parts
from .trig import TrigRing

__all__ = [
    "SymbolicBody",
    "SymbolicModel",
    "EquationsOfMotion",
    "equations_of_motion",
    "planar_arm",
    "spatial_double_pendulum",
    "exact_numbers",
    "ReadableSymbol",
    "FormulaMatrix",
    "joint_symbols",
    "coordinate_joints",
    "tidy",
]

#: Keys of a body's entry in ``parameters``.
BODY_PARAMETERS = ("mass", "com", "inertia", "offset")


def exact_numbers(expr):
    """``expr`` with integral floats (``1.0``, ``-2.0``) replaced by exact integers."""
    expr = sympy.sympify(expr)
    floats = {f: sympy.Integer(int(f)) for f in expr.atoms(sympy.Float) if float(f).is_integer()}
    return expr.xreplace(floats) if floats else expr


class ReadableSymbol(sympy.Symbol):
    """A symbol whose name is code (``lc2``, ``qd1``) and which prints as math (``l_c2``, ``q̇₁``).

    ``str`` and ``lambdify`` use the name; the pretty and LaTeX printers show
    ``display``, a name in sympy's own conventions (``"l_c2"`` → :math:`l_{c2}`,
    ``"qdot1"`` → :math:`\\dot q_1`).  Otherwise an ordinary ``Symbol``.
    """

    def __new__(cls, name: str, display: str | None = None, **assumptions):
        obj = super().__new__(cls, name, **assumptions)
        obj._display = display or name
        return obj

    @classmethod
    def class_key(cls):
        return sympy.Symbol.class_key()      # sorted among symbols by name, as a Symbol

    def __getnewargs_ex__(self):
        return (self.name, self._display), self.assumptions0

    def _latex(self, printer):
        return printer._print(sympy.Symbol(self._display))

    def _pretty(self, printer):
        return printer._print(sympy.Symbol(self._display))


class FormulaMatrix(sympy.MutableDenseMatrix):
    """A sympy ``Matrix`` that prints as formulas: ``print`` gives ``sympy.pretty``, Jupyter
    LaTeX (``_repr_latex_``) and IPython's text view the pretty form."""

    def __str__(self) -> str:
        return sympy.pretty(self)

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(sympy.pretty(self))


def joint_symbols(nq: int, nv: int | None = None) -> tuple[tuple, tuple, tuple]:
    """The symbols of a state, numbered from 1 like the joints of a textbook: ``(q, q̇, q̈)``.

    ``q1 … q_nq``, ``qd1 … qd_nv`` (printed :math:`\\dot q_k`) and ``qdd1 …``
    (printed :math:`\\ddot q_k`), all real.  The one convention of
    :func:`equations_of_motion`, :func:`rbd.testing.state_symbols` and the
    reports of :func:`rbd.testing.check_consistency`; entry ``k - 1`` of a
    NumPy array holds the value of ``qk``.
    """
    nv = nq if nv is None else nv
    q = tuple(sympy.Symbol(f"q{k}", real=True) for k in range(1, nq + 1))
    qd = tuple(ReadableSymbol(f"qd{k}", f"qdot{k}", real=True) for k in range(1, nv + 1))
    qdd = tuple(ReadableSymbol(f"qdd{k}", f"qddot{k}", real=True) for k in range(1, nv + 1))
    return q, qd, qdd


def coordinate_joints(model) -> tuple[str, ...]:
    """The name of the joint of each velocity coordinate (``nv`` names, in ``v`` order)."""
    return tuple(body.joint_name for i, body in enumerate(model.bodies)
                 for _ in range(model.v_index(i).stop - model.v_index(i).start))


class SymbolicBody:
    """One body of a :class:`SymbolicModel`: the attributes of :class:`rbd.model.Body`."""

    __slots__ = ("name", "parent", "joint", "joint_name", "X_tree", "inertia", "mass", "com",
                 "I_com")

    def __init__(self, body, mass, com, I_com, X_tree):
        self.name, self.parent, self.joint = body.name, body.parent, body.joint
        self.joint_name = body.joint_name
        self.mass, self.com, self.I_com = mass, com, I_com
        self.inertia = mcI(mass, com, I_com)         # spatial inertia about the body origin
        self.X_tree = X_tree

    def __repr__(self) -> str:
        return f"SymbolicBody({self.name!r}, parent={self.parent}, mass={self.mass})"


class SymbolicModel:
    """A model record whose inertial and geometric data may be sympy expressions.

    The reference algorithms (:mod:`rbd.reference`) and the public functions
    with ``backend="reference"`` accept it in place of an :class:`rbd.Model`.

    Parameters
    ----------
    model : Model
        The numeric model: topology, joints, and the values of every datum
        that ``parameters`` does not replace.  Its numbers are made exact
        (integral values become integers, :func:`rbd.spatial.exact`).
    parameters : mapping, optional
        ``{body name: {key: value}}`` with keys ``"mass"`` (scalar), ``"com"``
        (3-vector, body frame), ``"inertia"`` (3 × 3 about the COM, body axes)
        and ``"offset"`` (3-vector: the joint frame's origin in the parent
        body's frame, the ``r`` of ``X_tree = plux(E, r)``); and ``"gravity"``
        (3-vector).  Values are sympy expressions or numbers.
    values : mapping, optional
        Numeric values of the parameter symbols (for :meth:`numeric`).

    Attributes
    ----------
    model : Model
    bodies : tuple of SymbolicBody
    gravity, armature : object ndarrays
    values : dict

    Examples
    --------
    >>> import numpy as np, sympy, rbd
    >>> from rbd.symbolic import SymbolicModel
    >>> m = sympy.Symbol("m", positive=True)
    >>> pendulum = SymbolicModel(rbd.models.double_pendulum(), {"link2": {"mass": m}})
    >>> rbd.crba(pendulum, [0, 0], backend="reference")[1, 1]
    m
    """

    def __init__(self, model: Model, parameters: Mapping | None = None,
                 values: Mapping | None = None):
        if not isinstance(model, Model):
            raise InputError(f"model must be an rbd.Model, got {type(model).__name__}")
        if model._mimic:
            raise ModelError(f"{model.name}: a model with mimic joints has no symbolic record; "
                             "use model.full_model()")
        parameters = dict(parameters or {})
        unknown = set(parameters) - {"gravity"} - set(model.body_names)
        if unknown:
            raise InputError(f"parameters: no body {sorted(unknown)[0]!r} in model "
                             f"{model.name!r} (bodies: {model.body_names})")
        self.model = model
        self.name = model.name
        self.parameters = parameters
        self.values = dict(values or {})
        gravity = parameters.get("gravity", model.gravity)
        self.gravity = exact(as_vector(gravity, 3, "parameters: gravity", symbolic=True))
        self.armature = exact(model.armature)
        self.bodies = tuple(self._body(body, parameters.get(body.name, {}))
                            for body in model.bodies)

    @staticmethod
    def _body(body, given: Mapping) -> SymbolicBody:
        unknown = set(given) - set(BODY_PARAMETERS)
        if unknown:
            raise InputError(f"parameters[{body.name!r}]: unknown key {sorted(unknown)[0]!r} "
                             f"(keys: {', '.join(BODY_PARAMETERS)})")
        mass = sympy.sympify(given["mass"]) if "mass" in given else exact(body.mass)[()]
        com = exact(as_vector(given.get("com", body.com), 3, f"parameters: {body.name} com",
                              symbolic=True))
        I_com = exact(np.array(given.get("inertia", body.I_com), dtype=object))
        if I_com.shape != (3, 3):
            raise InputError(f"parameters: {body.name} inertia must be 3 × 3, got {I_com.shape}")
        E, r = plux_parts(body.X_tree)
        if "offset" in given:
            r = as_vector(given["offset"], 3, f"parameters: {body.name} offset", symbolic=True)
        r = exact(r)
        return SymbolicBody(body, mass, com, I_com, plux(exact(E), r))

    @classmethod
    def of(cls, model: Model) -> SymbolicModel:
        """The exact record of a numeric model (no symbolic parameters), cached on it."""
        return model._derived("symbolic_record", lambda: cls(model))

    # --- the queries the reference algorithms make ------------------------------------------
    @property
    def nbodies(self) -> int:
        return self.model.nbodies

    @property
    def nq(self) -> int:
        return self.model.nq

    @property
    def nv(self) -> int:
        return self.model.nv

    @property
    def body_names(self) -> list[str]:
        return self.model.body_names

    @property
    def joint_names(self) -> list[str]:
        return self.model.joint_names

    def q_index(self, i: int) -> slice:
        return self.model.q_index(i)

    def v_index(self, i: int) -> slice:
        return self.model.v_index(i)

    def body_index(self, name) -> int:
        return self.model.body_index(name)

    @property
    def _frames(self) -> dict:
        return self.model._frames

    @property
    def symbols(self) -> set:
        """The free symbols of the parameters."""
        found = set()
        for body in self.bodies:
            for a in (body.inertia, body.X_tree):
                for x in a.ravel():
                    found |= getattr(x, "free_symbols", set())
        for x in self.gravity:
            found |= getattr(x, "free_symbols", set())
        return found

    @property
    def parameter_symbols(self) -> list:
        """:attr:`symbols` in sympy's sort order: the order of generated arguments."""
        return sorted(self.symbols, key=sympy.default_sort_key)

    def numeric(self, values: Mapping | None = None) -> Model:
        """The :class:`rbd.Model` with the parameter symbols replaced by ``values``.

        ``values`` defaults to :attr:`values`; the joints are shared.
        """
        values = {**self.values, **dict(values or {})}
        missing = self.symbols - set(values)
        if missing:
            raise InputError(f"values: no value for {', '.join(sorted(map(str, missing)))}")

        def number(a) -> np.ndarray:
            return np.array([float(sympy.sympify(x).xreplace(values)) for x in np.ravel(a)]
                            ).reshape(np.shape(a))

        model = Model.from_arrays(
            [b.parent for b in self.bodies], [b.joint for b in self.bodies],
            [number(b.X_tree) for b in self.bodies], [number(b.inertia) for b in self.bodies],
            self.body_names, [b.joint_name for b in self.bodies], gravity=number(self.gravity),
            name=self.name)
        for name, i in zip(self.joint_names, range(self.nbodies), strict=False):
            armature = self.model.armature[self.v_index(i)]
            if np.any(armature):
                model.set_joint_properties(name, armature=armature)
        return model

    def __repr__(self) -> str:
        symbols = ", ".join(sorted(map(str, self.symbols)))
        return f"<SymbolicModel {self.name!r}: nv={self.nv}, symbols {{{symbols}}}>"


@dataclass(frozen=True)
class EquationsOfMotion:
    r"""``M(q) q̈ + h(q, q̇) = τ`` with ``h = C(q, q̇) q̇ + g(q)``, as sympy matrices.

    Unpacks as ``M, h, g = equations``; ``q`` and ``qd`` are the symbols used
    (``q1 …``, ``qd1 …``, numbered from 1: :func:`joint_symbols`) and
    ``joints`` names the joint of each velocity coordinate.  The matrices print
    as formulas (:class:`FormulaMatrix`), and so do the equations themselves
    (``print(eom)``, or LaTeX in a notebook).
    """

    M: sympy.Matrix
    h: sympy.Matrix
    g: sympy.Matrix
    q: tuple
    qd: tuple
    joints: tuple = ()

    def __iter__(self):
        return iter((self.M, self.h, self.g))

    @property
    def coriolis(self) -> FormulaMatrix:
        """The velocity terms ``C(q, q̇) q̇ = h − g``."""
        return FormulaMatrix((self.h - self.g).applyfunc(sympy.expand))

    def _equation(self):
        qdd = sympy.Matrix([ReadableSymbol(f"qdd{k}", f"qddot{k}", real=True)
                            for k in range(1, len(self.qd) + 1)])
        return sympy.Eq(sympy.MatMul(self.M, qdd, evaluate=False) + self.h,
                        sympy.Matrix(sympy.symbols(f"tau1:{len(self.qd) + 1}")))

    def __str__(self) -> str:
        coordinates = ", ".join(f"{q} ({name})" for q, name in zip(self.q, self.joints,
                                                                    strict=False))
        head = f"M(q) q̈ + h(q, q̇) = τ; coordinates {coordinates}\n" if coordinates else ""
        return (f"{head}M =\n{sympy.pretty(self.M)}\n\nh = C(q, q̇) q̇ + g(q) =\n"
                f"{sympy.pretty(self.h)}\n\ng =\n{sympy.pretty(self.g)}")

    def _repr_latex_(self) -> str:
        return (rf"$\displaystyle M(q)\,\ddot q + h(q, \dot q) = \tau,\quad "
                rf"M = {sympy.latex(self.M)},\quad h = {sympy.latex(self.h)},\quad "
                rf"g = {sympy.latex(self.g)}$")


def _symbols(given, default: tuple, n: int, what: str) -> tuple:
    if given is None:
        return default
    values = tuple(np.ravel(np.array(given, dtype=object)))
    if len(values) != n:
        raise InputError(f"{what} must have {n} entries, got {len(values)}")
    return tuple(sympy.sympify(x) for x in values)


class _RingJoint:
    """A joint whose outputs on symbols are converted to :class:`TrigPoly` scalars."""

    def __init__(self, joint, R: TrigRing):
        self.joint, self.R = joint, R
        self.nq, self.nv, self.kind = joint.nq, joint.nv, joint.kind

    def jcalc(self, q, qd):
        return tuple(self.R.array(x) for x in self.joint.jcalc(q, qd))

    def X_J(self, q):
        return self.R.array(self.joint.X_J(q))

    def S(self, q):
        return self.R.array(self.joint.S(q))


class _RingBody:
    __slots__ = ("parent", "joint", "X_tree", "inertia", "name", "joint_name")

    def __init__(self, body, R: TrigRing):
        self.parent, self.name, self.joint_name = body.parent, body.name, body.joint_name
        self.joint = _RingJoint(body.joint, R)
        self.X_tree, self.inertia = R.array(body.X_tree), R.array(body.inertia)


class _RingModel:
    """A :class:`SymbolicModel` whose data are elements of one :class:`TrigRing`: the record
    the reference CRBA and RNEA run on in :func:`equations_of_motion`."""

    def __init__(self, model: SymbolicModel, q, qd):
        formulas = [x for body in model.bodies for a in (body.X_tree, body.inertia)
                    for x in np.ravel(a)]
        formulas += list(model.gravity) + list(model.armature)
        for i, body in enumerate(model.bodies):
            for a in body.joint.jcalc(q[model.q_index(i)], qd[model.v_index(i)]):
                formulas += list(np.ravel(a))
        self.R = R = TrigRing(formulas)
        self.record = model
        self.bodies = tuple(_RingBody(body, R) for body in model.bodies)
        self.gravity, self.armature = R.array(model.gravity), R.array(model.armature)
        self.nbodies, self.nq, self.nv = model.nbodies, model.nq, model.nv
        self.q_index, self.v_index = model.q_index, model.v_index

    def matrix(self, a) -> sympy.Matrix:
        a = np.atleast_2d(np.asarray(a, dtype=object))
        return sympy.Matrix([[self.R.expr(x) for x in row] for row in a])


#: Largest system whose formulas are tidied by default (``simplify=None``): angle sums
#: recombined, common factors pulled out.  The tidy pass grows quickly with the size of
#: the formulas (0.1 s for the two-link arm, 1 s for a 3-link spatial chain, 16 s for 4).
TIDY_DOF = 2


def tidy(expr):
    """``expr`` with products of sines and cosines recombined into angle sums
    (``cos q1 cos q2 − sin q1 sin q2 → cos(q1 + q2)``, sympy's ``fu`` rule TR10i) and common
    factors pulled out of sums."""
    from sympy.simplify.fu import TR10i

    return sympy.factor_terms(TR10i(expr))


def equations_of_motion(model: Model | SymbolicModel, q: Sequence | None = None,
                        v: Sequence | None = None, parameters: Mapping | None = None,
                        simplify: bool | None = None) -> EquationsOfMotion:
    r"""``M(q)``, ``h(q, q̇)`` and ``g(q)`` as formulas, from the reference CRBA and RNEA.

    Parameters
    ----------
    model : Model or SymbolicModel
    q : sequence of sympy expressions, optional
        The configuration (``nq`` entries); default symbols ``q1 … qn`` (real).
    v : sequence of sympy expressions, optional
        The velocity (``nv`` entries); default ``qd1 … qdn``.
    parameters : mapping, optional
        Symbolic masses, centres of mass, inertias, offsets and gravity, as for
        :class:`SymbolicModel` (merged over those of a ``SymbolicModel``).
    simplify : bool or None
        Every entry is always brought to its normal form as a polynomial in the
        sines, cosines, velocities and parameters, with ``sin² x = 1 − cos² x``
        applied (:mod:`rbd.symbolic.trig`): exact cancellation, no ``simplify``
        needed for zero entries to be zero.  ``True`` also applies :func:`tidy`
        (angle sums recombined, common factors out: the textbook form of the
        two-link arm); ``None`` (default) does so for systems of at most
        ``TIDY_DOF`` (2) DoF, whose formulas tidy quickly.

    Returns
    -------
    EquationsOfMotion
        ``M`` (nv × nv), ``h`` and ``g`` (nv × 1), and the symbols ``q``, ``qd``.

    Notes
    -----
    ``M`` is :func:`rbd.reference.crba.crba` (RBDA T6.2), ``h`` is
    :func:`rbd.reference.rnea.nonlinear_effects` and ``g`` is
    :func:`rbd.reference.rnea.gravity_forces` (RBDA T5.1), run on a record of
    the model whose numbers and formulas are elements of one
    :class:`~rbd.symbolic.trig.TrigRing`, so every product the recursions form
    is reduced as it is formed (a 5-link spatial chain takes about 1.5 s, where
    sympy trees and ``simplify`` at the end took minutes for 4 links; see
    ``docs/benchmarks.md``).  Floats of a numeric model stay floats, integral
    ones become integers.  Spherical and free joints give ``M`` in their
    quaternion symbols, taken as a unit quaternion (``|q| = 1`` is not applied).

    Examples
    --------
    >>> import rbd
    >>> from rbd.symbolic import equations_of_motion, planar_arm
    >>> M, h, g = equations_of_motion(planar_arm())
    >>> M[1, 1]
    I2 + lc2**2*m2
    """
    if isinstance(model, SymbolicModel):
        if parameters:
            merged = {**model.parameters}
            for key, value in parameters.items():
                merged[key] = ({**merged.get(key, {}), **value} if isinstance(value, Mapping)
                               else value)
            model = SymbolicModel(model.model, merged, model.values)
    elif isinstance(model, Model):
        model = SymbolicModel(model, parameters) if parameters else SymbolicModel.of(model)
    else:
        raise InputError(f"model must be an rbd.Model or a SymbolicModel, got "
                         f"{type(model).__name__}")
    q_default, qd_default, _ = joint_symbols(model.nq, model.nv)
    q = _symbols(q, q_default, model.nq, "q")
    qd = _symbols(v, qd_default, model.nv, "v")
    q_arr, qd_arr = np.array(q, dtype=object), np.array(qd, dtype=object)
    ring = _RingModel(model, q_arr, qd_arr)
    M = ring.matrix(_crba.crba(ring, q_arr))                               # RBDA T6.2
    h = ring.matrix(_rnea.nonlinear_effects(ring, q_arr, qd_arr))          # RBDA T5.1
    g = ring.matrix(_rnea.gravity_forces(ring, q_arr))                     # RBDA T5.1
    if simplify or (simplify is None and model.nv <= TIDY_DOF):
        M, h, g = (x.applyfunc(tidy) for x in (M, h, g))
    joints = coordinate_joints(model)
    return EquationsOfMotion(FormulaMatrix(M), FormulaMatrix(h.reshape(model.nv, 1)),
                             FormulaMatrix(g.reshape(model.nv, 1)), q, qd, joints)


# --- two textbook systems ------------------------------------------------------------------------
_Z = np.array([0.0, 0.0, 1.0])


def planar_arm() -> SymbolicModel:
    r"""The two-link planar arm with symbolic masses, lengths and inertias.

    Two revolute joints about ``z``; link ``k`` has mass ``m_k``, its centre of
    mass ``lc_k`` (printed :math:`l_{ck}`) along its ``x`` axis, inertia ``I_k``
    about ``z`` at the centre of mass; the second joint sits ``l1`` along the first link; gravity is
    ``-g`` along ``y``, so ``q = 0`` is horizontal.  The textbook mass matrix is

    .. math::

        M_{11} = m_1 l_{c1}^2 + m_2 (l_1^2 + l_{c2}^2 + 2 l_1 l_{c2} \cos q_2) + I_1 + I_2,

        M_{12} = m_2 (l_{c2}^2 + l_1 l_{c2} \cos q_2) + I_2, \qquad M_{22} = m_2 l_{c2}^2 + I_2.

    The symbols are in ``arm.values`` (with sample numbers) and ``arm.symbols``.
    """
    m1, m2, l1, I1, I2, g = sympy.symbols("m1 m2 l1 I1 I2 g", positive=True)
    lc1, lc2 = (ReadableSymbol(f"lc{k}", f"l_c{k}", positive=True) for k in (1, 2))
    numbers = {m1: 1.0, m2: 0.8, l1: 1.0, lc1: 0.5, lc2: 0.4, I1: 0.1, I2: 0.06, g: 9.81}
    skeleton = Model(gravity=(0.0, -9.81, 0.0), name="planar_arm")
    b1 = skeleton.add_body(-1, Revolute(_Z), None, (1.0, [0.5, 0, 0], np.diag([0, 0.1, 0.1])),
                           "link1", "joint1")
    skeleton.add_body(b1, Revolute(_Z), plux(np.eye(3), [1.0, 0, 0]),
                      (0.8, [0.4, 0, 0], np.diag([0, 0.06, 0.06])), "link2", "joint2")
    parameters = {
        "gravity": (0, -g, 0),
        "link1": {"mass": m1, "com": (lc1, 0, 0), "inertia": np.diag([0, I1, I1])},
        "link2": {"mass": m2, "com": (lc2, 0, 0), "inertia": np.diag([0, I2, I2]),
                  "offset": (l1, 0, 0)},
    }
    return SymbolicModel(skeleton, parameters, numbers)


def spatial_double_pendulum() -> SymbolicModel:
    r"""A 3-D double pendulum of two uniform rods, hinged about ``x`` then about ``y``.

    Rod ``k`` (mass ``m_k``, length ``l_k``) hangs along ``-z`` at ``q = 0``; its
    centre of mass is at ``-l_k/2`` and its inertia about it is
    ``diag(m_k l_k²/12, m_k l_k²/12, 0)``.  The first hinge turns about the world
    ``x`` axis, the second, at the end of the first rod, about the first rod's
    ``y`` axis, so the second rod swings out of the first one's plane.  Gravity is
    ``-g`` along ``z``.
    """
    m1, m2, l1, l2, g = sympy.symbols("m1 m2 l1 l2 g", positive=True)
    numbers = {m1: 1.0, m2: 0.7, l1: 1.0, l2: 0.8, g: 9.81}
    skeleton = Model(name="spatial_double_pendulum")
    rod = np.diag([1.0, 1.0, 0.0]) / 12
    b1 = skeleton.add_body(-1, Revolute([1.0, 0, 0]), None, (1.0, [0, 0, -0.5], rod),
                           "rod1", "hinge1")
    skeleton.add_body(b1, Revolute([0, 1.0, 0]), plux(np.eye(3), [0, 0, -1.0]),
                      (0.7, [0, 0, -0.4], 0.7 * 0.64 * rod), "rod2", "hinge2")

    def rod_inertia(m, length):
        return np.diag([m * length**2 / 12, m * length**2 / 12, 0])

    parameters = {
        "gravity": (0, 0, -g),
        "rod1": {"mass": m1, "com": (0, 0, -l1 / 2), "inertia": rod_inertia(m1, l1)},
        "rod2": {"mass": m2, "com": (0, 0, -l2 / 2), "inertia": rod_inertia(m2, l2),
                 "offset": (0, 0, -l1)},
    }
    return SymbolicModel(skeleton, parameters, numbers)
