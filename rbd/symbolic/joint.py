r"""Joints given as transforms: S and Ṡ by symbolic differentiation.

A scleronomic joint is any rigid motion :math:`G(q) \in SE(3)` of its
coordinates: the pose of the successor (body) frame in the predecessor frame.
Everything the dynamics algorithms need follows by differentiation
(Si & Guenter, §4):

.. math::

    S = \Big[\big(G^{-1}\tfrac{\partial G}{\partial q_1}\big)^\vee \;\cdots\;
             \big(G^{-1}\tfrac{\partial G}{\partial q_d}\big)^\vee\Big],
    \qquad
    \dot S = \sum_k \frac{\partial S}{\partial q_k}\,\dot q_k,

(S&G Eqs. 9 and 12).  With :math:`G = (R, p)`,
:math:`G^{-1}\partial G = \begin{bmatrix} R^T\partial R & R^T\partial p\\ 0 & 0\end{bmatrix}`,
so column ``k`` of ``S`` is :math:`[(R^T\partial_k R)^\vee;\; R^T\partial_k p]` —
the joint twist in successor coordinates, ``[ω; v]`` as everywhere in rbd.
The Plücker transform of the joint is ``X_J = plux(Rᵀ, p)``
(:math:`\mathrm{Ad}_{G^{-1}}`, S&G Eq. 8).

:class:`SymbolicJoint` derives these once with sympy and prints them as
Python functions for the reference algorithms (what ``sympy.lambdify`` does,
on a straight-line program). On request it generates and compiles a C
``jcalc`` for the compiled kernels (joint code 8).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

import numpy as np
import sympy

from ..errors import InputError, ModelError
from ..joints import Helical, Joint, Planar, Prismatic, Revolute, Universal
from ..spatial import is_symbolic
from . import build
from .program import Program

__all__ = [
    "SymbolicJoint",
    "twist_columns",
    "rotation_expr",
    "joint_transform",
    "joint_expressions",
    "twin",
]

#: Transforms up to this size (sympy ``count_ops``) get closed-form, simplified S and Ṡ;
#: larger ones are differentiated on their straight-line program.
CLOSED_FORM_LIMIT = 300
#: Derived programs are shared by joints with the same transform (a windmill's arms, a
#: chain of identical links); at most this many are kept.
DERIVED_CACHE_SIZE = 128
_DERIVED: dict[str, tuple] = {}
#: Tolerance of the rigid-motion test (orthonormality of R, det R = 1) at sample points.
RIGID_TOL = 1e-9
#: Entries of S up to this size (sympy ``count_ops``) and free of roots are expanded
#: with sin² = 1 - cos².
EXPAND_LIMIT = 2000
#: Float coefficients smaller than this after simplification are round-off and dropped.
CHOP = 1e-14


def _exact(x) -> sympy.Expr:
    """A float as sympy number: integral values become exact integers (0, ±1)."""
    x = float(x)
    return sympy.Integer(int(x)) if x.is_integer() else sympy.Float(x)


def _vector(a) -> sympy.Matrix:
    return sympy.Matrix([_exact(x) for x in np.asarray(a, dtype=float).reshape(3)])


def _skew(w) -> sympy.Matrix:
    return sympy.Matrix([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])


def rotation_expr(axis, angle) -> sympy.Matrix:
    """Rodrigues' rotation ``cos θ 1 + sin θ ã + (1 - cos θ) a aᵀ`` about a numeric unit axis."""
    a = _vector(axis)
    c, s = sympy.cos(angle), sympy.sin(angle)
    return c * sympy.eye(3) + s * _skew(a) + (1 - c) * a * a.T


def _homogeneous(R: sympy.Matrix, p: sympy.Matrix) -> sympy.Matrix:
    G = sympy.eye(4)
    G[:3, :3] = R
    G[:3, 3] = p
    return G


def joint_transform(joint: Joint, q: Sequence[sympy.Symbol]) -> sympy.Matrix:
    """The 4×4 transform ``G(q)`` of a joint as a sympy matrix in the symbols ``q``.

    Supports :class:`SymbolicJoint` and the built-in joints whose velocity is
    ``q̇`` (revolute, prismatic, helical, universal, planar); raises
    :class:`~rbd.errors.ModelError` for the others (spherical and free joints
    use quaternions).
    """
    if isinstance(joint, SymbolicJoint):
        return joint.G.xreplace(dict(zip(joint.coordinates, q, strict=True)))
    if isinstance(joint, Helical):
        return _homogeneous(rotation_expr(joint.axis, q[0]),
                            _vector(joint.axis) * _exact(joint.pitch) * q[0])
    if isinstance(joint, Revolute):
        return _homogeneous(rotation_expr(joint.axis, q[0]), sympy.zeros(3, 1))
    if isinstance(joint, Prismatic):
        return _homogeneous(sympy.eye(3), _vector(joint.axis) * q[0])
    if isinstance(joint, Universal):
        R = rotation_expr(joint.axis1, q[0]) * rotation_expr(joint.axis2, q[1])
        return _homogeneous(R, sympy.zeros(3, 1))
    if isinstance(joint, Planar):
        return _homogeneous(rotation_expr(joint.normal, q[2]),
                            _vector(joint.e1) * q[0] + _vector(joint.e2) * q[1])
    if joint.nv == 0:
        return sympy.eye(4)
    raise ModelError(f"joint {joint!r} has no transform in symbolic form "
                     "(quaternion joints are not supported)")


def _chop(e: sympy.Expr) -> sympy.Expr:
    """Drop floating-point coefficients below ``CHOP`` (round-off left by simplification)."""
    return e.xreplace({f: sympy.Integer(0) for f in e.atoms(sympy.Float) if abs(f) < CHOP})


def joint_expressions(joint: Joint, q: Sequence[sympy.Expr], qd: Sequence[sympy.Expr],
                      program: Program | None = None
                      ) -> tuple[sympy.Matrix, sympy.Matrix, sympy.Matrix]:
    """``(G, S, Ṡ)`` of a joint as sympy matrices in the symbols ``q`` and ``qd``.

    Built-in joints use their closed forms (the same as :mod:`rbd.joints`).
    A :class:`SymbolicJoint` contributes its derived program: imported into
    ``program`` when one is given (entries are then bound symbols of it),
    otherwise inlined into one expression per entry.
    """
    if isinstance(joint, SymbolicJoint):
        if program is None:
            sub = dict(zip(joint.coordinates, q, strict=True))
            sub.update(zip(joint.velocities, qd, strict=True))
            return (joint.G.xreplace(sub), joint.S_expr.xreplace(sub),
                    joint.S_dot_expr.xreplace(sub))
        out = program.import_program(joint.program, {"q": q, "qd": qd})
        G = sympy.eye(4)
        G[:3, :3] = sympy.Matrix(3, 3, out["R"])
        G[:3, 3] = sympy.Matrix(out["p"])
        return (G, sympy.Matrix(joint.nv, 6, out["S"]).T,
                sympy.Matrix(joint.nv, 6, out["S_dot"]).T)
    G = joint_transform(joint, q)
    S, S_dot = sympy.zeros(6, joint.nv), sympy.zeros(6, joint.nv)
    if isinstance(joint, Helical):
        S[:3, 0], S[3:, 0] = _vector(joint.axis), _vector(joint.axis) * _exact(joint.pitch)
    elif isinstance(joint, Revolute):
        S[:3, 0] = _vector(joint.axis)
    elif isinstance(joint, Prismatic):
        S[3:, 0] = _vector(joint.axis)
    elif isinstance(joint, Universal):
        a1, a2 = _vector(joint.axis1), _vector(joint.axis2)
        R2 = rotation_expr(joint.axis2, q[1])
        S[:3, 0], S[:3, 1] = R2.T * a1, a2
        S_dot[:3, 0] = -_skew(a2) * R2.T * a1 * qd[1]
    elif isinstance(joint, Planar):
        e1, e2, n = _vector(joint.e1), _vector(joint.e2), _vector(joint.normal)
        c, s = sympy.cos(q[2]), sympy.sin(q[2])
        S[3:, 0], S[3:, 1], S[:3, 2] = c * e1 - s * e2, s * e1 + c * e2, n
        S_dot[3:, 0] = (-s * e1 - c * e2) * qd[2]
        S_dot[3:, 1] = (c * e1 - s * e2) * qd[2]
    return G, S, S_dot


def _pythagoras(e: sympy.Expr) -> sympy.Expr:
    """Expand and replace sin² by 1 - cos² (cheap; settles most rotation twists)."""
    e = sympy.expand(e)
    powers = {}
    for f in e.atoms(sympy.Pow):
        if isinstance(f.base, sympy.sin) and f.exp.is_Integer and f.exp >= 2:
            k = int(f.exp)
            powers[f] = (1 - sympy.cos(f.base.args[0]) ** 2) ** (k // 2) * f.base ** (k % 2)
    return sympy.expand(e.xreplace(powers)) if powers else e


def _simplify(e: sympy.Expr) -> sympy.Expr:
    """Simplify an entry of S (cos² + sin² → 1 and the like); keep the cheaper form."""
    if e.is_Number or sympy.count_ops(e) > EXPAND_LIMIT or any(
            not f.exp.is_Integer for f in e.atoms(sympy.Pow)):
        return e
    return min([e, _chop(_pythagoras(e))], key=sympy.count_ops)


def twist_columns(G: sympy.Matrix, q: Sequence[sympy.Symbol],
                  simplify: bool = True) -> sympy.Matrix:
    r"""``S = [(G⁻¹ ∂G/∂q_k)^∨]``, 6 × len(q), ``[ω; v]`` in successor coordinates (S&G (9)).

    Uses :math:`G^{-1}\partial G = [R^T\partial R,\ R^T\partial p]` and reads
    ω from the entries (2,1), (0,2), (1,0) of the skew matrix :math:`R^T\partial R`.
    """
    R, p = G[:3, :3], G[:3, 3]
    columns = []
    for qk in q:
        W = R.T * R.diff(qk)                                            # S&G (9)
        v = R.T * p.diff(qk)                                            # S&G (9)
        columns.append([W[2, 1], W[0, 2], W[1, 0], v[0], v[1], v[2]])
    S = sympy.Matrix(columns).T if columns else sympy.zeros(6, 0)
    return S.applyfunc(_simplify) if simplify else S


def _tape_twists(P: Program, Rp: list, q, qd) -> list:
    r"""S and Ṡ (column-major) of the bound transform entries ``Rp`` by forward differentiation.

    Column k of S is :math:`[(R^T\partial_k R)^\vee;\ R^T\partial_k p]`
    (S&G (9)); :math:`\dot S = \sum_k \partial_k S\, \dot q_k` (S&G (12)).
    """
    R = sympy.Matrix(3, 3, Rp[:9])
    p = sympy.Matrix(Rp[9:])
    upto = len(P)
    S = []
    for qk in q:
        d = P.derivatives(qk, upto=upto)
        dR = R.applyfunc(lambda e, d=d: P.derivative_of(e, d))
        dp = p.applyfunc(lambda e, d=d: P.derivative_of(e, d))
        W = [sympy.Add(*[R[m, i] * dR[m, j] for m in range(3)]) for i, j in ((2, 1), (0, 2),
                                                                          (1, 0))]
        v = list(R.T * dp)
        S += [P.bind(e) for e in W + v]                                     # S&G (9)
    upto = len(P)
    S_dot = [sympy.Integer(0)] * len(S)
    for k, qk in enumerate(q):
        d = P.derivatives(qk, upto=upto)
        S_dot = [a + P.derivative_of(e, d) * qd[k] for a, e in zip(S_dot, S, strict=True)]
    return S + [P.bind(e) for e in S_dot]                                   # S&G (12)


def _sample_points(neutral: np.ndarray, rng: np.random.Generator, count: int = 4):
    yield neutral
    for _ in range(count):
        yield neutral + rng.uniform(-0.7, 0.7, neutral.shape)


class SymbolicJoint(Joint):
    r"""A joint defined by a symbolic rigid motion ``G(q)`` (4×4 homogeneous matrix).

    Parameters
    ----------
    transform : (4, 4) sympy matrix (or nested sequence)
        Pose of the successor (body) frame in the predecessor frame as a
        function of ``coordinates``: ``[[R, p], [0, 1]]``.
    coordinates : sympy Symbol or sequence of Symbols
        The joint coordinates ``q``; their time derivatives are the joint
        velocities (``nq = nv = len(coordinates)``, ``integrate`` is ``q + v dt``).
    parameters : mapping Symbol -> float, optional
        Values for every other symbol of ``transform`` (shape constants).
    neutral : (nq,) array_like, optional
        The neutral configuration (default zeros); sample points for the
        rigid-motion check and :meth:`random` are drawn around it.
    name : str, optional
        A label for ``repr``.

    Raises
    ------
    ModelError
        If ``transform`` is not 4×4, is not a rigid motion (bottom row not
        ``[0, 0, 0, 1]``, rotation block not orthonormal with determinant 1 —
        the message names the entry), if a coordinate does not appear in it, or
        if it has symbols that are neither coordinates nor parameters.

    Notes
    -----
    ``S(q)`` and ``S_dot(q, v)`` are S&G (9) and (12), see :func:`twist_columns`.
    The reference algorithms call them as generated Python functions;
    :meth:`kernel_capsule` compiles a C ``jcalc`` for the kernels (this needs a
    C compiler).

    Examples
    --------
    A revolute joint about z written as a transform:

    >>> import sympy
    >>> from rbd.symbolic import SymbolicJoint
    >>> t = sympy.Symbol("t")
    >>> G = sympy.Matrix([[sympy.cos(t), -sympy.sin(t), 0, 0],
    ...                   [sympy.sin(t), sympy.cos(t), 0, 0],
    ...                   [0, 0, 1, 0], [0, 0, 0, 1]])
    >>> joint = SymbolicJoint(G, [t])
    >>> joint.S_expr.T
    Matrix([[0, 0, 1, 0, 0, 0]])
    """

    kind = "symbolic"

    def __init__(self, transform, coordinates, parameters: Mapping | None = None,
                 neutral=None, name: str | None = None):
        G = self._as_transform(transform)
        q = self._as_coordinates(coordinates)
        if parameters:
            G = G.subs({sympy.sympify(k): _exact(v) for k, v in parameters.items()})
        missing = [s for s in q if s not in G.free_symbols]
        if missing:
            raise ModelError(f"SymbolicJoint: coordinate(s) {', '.join(map(str, missing))} "
                             "do not appear in the transform")
        extra = G.free_symbols - set(q)
        if extra:
            raise ModelError(
                f"SymbolicJoint: the transform has symbols {sorted(map(str, extra))} that are "
                "neither coordinates nor parameters (give their values in `parameters`)")
        self.G = G
        self.coordinates = q
        self.nq = self.nv = len(q)
        self.velocities = tuple(sympy.Dummy(f"{s.name}_dot") for s in q)
        self.name = name
        self._neutral = (np.zeros(self.nq) if neutral is None
                         else np.asarray(neutral, dtype=float).reshape(self.nq))
        self._check_bottom_row()
        self._key = hashlib.sha256(
            (sympy.srepr(G) + repr([s.name for s in q])).encode()).hexdigest()
        derived = _DERIVED.get(self._key)
        if derived is None:
            self._derive()
            _DERIVED[self._key] = (self.program, self._closed_form, self._transform_fn,
                                   self._S_fn, self._S_dot_fn)
            while len(_DERIVED) > DERIVED_CACHE_SIZE:
                _DERIVED.pop(next(iter(_DERIVED)))
        else:
            (self.program, self._closed_form, self._transform_fn, self._S_fn,
             self._S_dot_fn) = derived
            self._check_rigid()
        self._capsule = None
        self._module = None
        if not build.compiler_available():
            build.warn_no_compiler("symbolic joints")

    # --- validation ------------------------------------------------------------------------
    @staticmethod
    def _as_transform(transform) -> sympy.Matrix:
        try:
            G = sympy.Matrix(transform)
        except (TypeError, ValueError, sympy.SympifyError) as exc:
            raise ModelError(f"SymbolicJoint: transform is not a matrix ({exc})") from None
        if G.shape != (4, 4):
            raise ModelError(f"SymbolicJoint: transform must be 4×4, got {G.shape[0]}×"
                             f"{G.shape[1]}")
        return G

    @staticmethod
    def _as_coordinates(coordinates) -> tuple[sympy.Symbol, ...]:
        if isinstance(coordinates, sympy.Symbol):
            coordinates = [coordinates]
        q = tuple(coordinates)
        if not q:
            raise ModelError("SymbolicJoint: at least one coordinate is needed")
        for s in q:
            if not isinstance(s, sympy.Symbol):
                raise ModelError(f"SymbolicJoint: coordinate {s!r} is not a sympy Symbol")
        if len(set(q)) != len(q):
            raise ModelError(f"SymbolicJoint: repeated coordinates in {q}")
        return q

    def _check_bottom_row(self) -> None:
        for j, target in enumerate((0, 0, 0, 1)):
            e = self.G[3, j]
            if e != target and sympy.simplify(e - target) != 0:
                raise ModelError(
                    f"SymbolicJoint: entry (3, {j}) of the transform is {e}, not {target}: "
                    "the bottom row of a rigid motion must be [0, 0, 0, 1]")

    def _check_rigid(self) -> None:
        """Orthonormal R with det R = 1 at the neutral configuration and a few points near it."""
        rng = np.random.default_rng(0)
        finite = 0
        for qs in _sample_points(self._neutral, rng):
            try:
                R, _ = self.transform(qs)
            except InputError:
                continue
            if not np.all(np.isfinite(R)):
                continue
            finite += 1
            RtR = R.T @ R
            bad = np.argwhere(np.abs(RtR - np.eye(3)) > RIGID_TOL)
            if bad.size:
                a, b = bad[0]
                raise ModelError(
                    f"SymbolicJoint: the rotation block is not orthonormal: entry ({a}, {b}) "
                    f"of RᵀR is {RtR[a, b]:.6g}, not {float(a == b):g}, at q = {qs.tolist()}")
            if np.linalg.det(R) < 0:
                raise ModelError(
                    f"SymbolicJoint: det R = {np.linalg.det(R):.6g} at q = {qs.tolist()}: "
                    "the transform is a reflection, not a rigid motion")
        if finite == 0:
            raise ModelError("SymbolicJoint: the transform is not finite at the neutral "
                             "configuration or near it (give `neutral`)")

    # --- derivation ------------------------------------------------------------------------
    def _derive(self) -> Program:
        """The program ``q, q̇ → R (row-major), p, S, Ṡ (column-major)`` of this joint.

        Small transforms get closed-form, simplified ``S`` and ``Ṡ``
        (:func:`twist_columns`, S&G (9) and (12)); large ones are differentiated
        on the program itself (forward mode), which keeps shared subexpressions
        shared instead of expanding them.
        """
        nv = self.nv
        P = Program([("q", nv), ("qd", nv)])
        sub = dict(zip(self.coordinates, P["q"], strict=True))
        sub.update(zip(self.velocities, P["qd"], strict=True))
        G = self.G.xreplace(sub)
        q, qd = P["q"], P["qd"]
        closed = sympy.count_ops(G) <= CLOSED_FORM_LIMIT
        Rp = P.bind_all([*G[:3, :3], *G[:3, 3]])
        P.set_output("R", Rp[:9])
        P.set_output("p", Rp[9:])
        self._transform_fn = P.pruned().restricted(("q",)).python_function("transform")
        self._check_rigid()
        if closed:
            S = twist_columns(G, q)                                        # S&G (9)
            S_dot = sympy.zeros(6, nv)
            for qk, qdk in zip(q, qd, strict=True):
                S_dot += S.diff(qk) * qdk                                   # S&G (12)
            values = P.bind_all([*S.T, *S_dot.T])
        else:
            values = _tape_twists(P, Rp, q, qd)
        P.set_output("S", values[:6 * nv])
        P.set_output("S_dot", values[6 * nv:])
        self._closed_form = closed
        self.program = P
        self._functions()
        return P

    def _functions(self) -> None:
        P = self.program
        self._transform_fn = P.only(("R", "p")).restricted(("q",)).python_function("transform")
        self._S_fn = P.only(("S",)).restricted(("q",)).python_function("S")
        self._S_dot_fn = P.only(("S_dot",)).python_function("S_dot")

    def _inline(self, name: str) -> sympy.Matrix:
        """An output of the program as one expression per entry, in the joint's own symbols."""
        sub = dict(zip(self.program["q"], self.coordinates, strict=True))
        sub.update(zip(self.program["qd"], self.velocities, strict=True))
        for x, e in self.program.assignments:
            sub[x] = e.xreplace(sub)
        return sympy.Matrix(self.nv, 6, [e.xreplace(sub) for e in self.program.outputs[name]]).T

    @property
    def S_expr(self) -> sympy.Matrix:
        """``S(q)`` as a 6 × nv sympy matrix in the joint's coordinates (S&G (9))."""
        return self._inline("S")

    @property
    def S_dot_expr(self) -> sympy.Matrix:
        """``Ṡ(q, q̇)`` as a 6 × nv sympy matrix; ``q̇`` are :attr:`velocities` (S&G (12))."""
        return self._inline("S_dot")

    def _symbols(self, q, v=None) -> dict:
        """Substitution of the joint's coordinates (and velocities) by the symbolic ``q``, ``v``."""
        sub = dict(zip(self.coordinates, np.asarray(q).reshape(-1), strict=True))
        if v is not None:
            sub.update(zip(self.velocities, np.asarray(v).reshape(-1), strict=True))
        return {k: sympy.sympify(x) for k, x in sub.items()}

    @staticmethod
    def _array(M: sympy.Matrix, sub: dict) -> np.ndarray:
        return np.array(M.xreplace(sub).tolist(), dtype=object)

    def _q(self, q) -> np.ndarray:
        q = np.asarray(q, dtype=float).reshape(-1)
        if q.shape != (self.nq,):
            raise InputError(f"q must have shape ({self.nq},), got {q.shape}")
        return q

    def _evaluate(self, fn, *args):
        try:
            return fn(*[a.tolist() for a in args])
        except (ValueError, ZeroDivisionError, OverflowError) as exc:
            raise InputError(f"{self!r} is not defined at q = {args[0].tolist()} ({exc})"
                             ) from None

    def transform(self, q):
        if is_symbolic(q):   # the transform itself, in the given symbols
            G = self._array(self.G, self._symbols(q))
            return G[:3, :3], G[:3, 3]
        R, p = self._evaluate(self._transform_fn, self._q(q))
        return np.array(R).reshape(3, 3), np.array(p)

    def S(self, q):
        if is_symbolic(q):
            return self._array(self.S_expr, self._symbols(q))
        (S,) = self._evaluate(self._S_fn, self._q(q))
        return np.array(S).reshape(self.nv, 6).T

    def S_dot(self, q, v):
        if is_symbolic(q) or is_symbolic(v):
            return self._array(self.S_dot_expr, self._symbols(q, v))
        v = np.asarray(v, dtype=float).reshape(self.nv)
        (S_dot,) = self._evaluate(self._S_dot_fn, self._q(q), v)
        return np.array(S_dot).reshape(self.nv, 6).T

    def neutral(self):
        return self._neutral.copy()

    def random(self, rng):
        return self._neutral + rng.uniform(-0.5, 0.5, self.nq)

    # --- generated C (kernels) ----------------------------------------------------------------
    def jcalc_program(self) -> Program:
        """The straight-line program of the kernel ``jcalc`` (before optimization).

        Inputs ``q``, ``qd`` (nv each); outputs ``E = Rᵀ`` (3×3 row-major),
        ``r = p`` (3), ``S`` (6×nv column-major) and ``cJ = Ṡ q̇`` (6).
        """
        P = self.program.copy()
        R, S_dot, qd = P.outputs["R"], P.outputs["S_dot"], P["qd"]
        E = [R[3 * b + a] for a in range(3) for b in range(3)]
        cJ = [P.bind(sympy.Add(*[S_dot[6 * k + row] * qd[k] for k in range(self.nv)]))
              for row in range(6)]                                          # S&G (12)
        P.outputs = {"E": E, "r": P.outputs["p"], "S": P.outputs["S"], "cJ": cJ}
        return P

    def c_function(self) -> build.CFunction:
        """The generated C ``void jcalc(const double* q, const double* qd, double* E,
        double* r, double* S, double* cJ)``, exported as PyCapsule ``"rbd.jcalc"``."""
        prog = self.jcalc_program().optimized()
        return build.CFunction("jcalc", prog.c_function("jcalc"),
                               (("q", self.nv), ("qd", self.nv)),
                               (("E", 9), ("r", 3), ("S", 6 * self.nv), ("cJ", 6)),
                               capsule="rbd.jcalc")

    def compiled_module(self):
        """The compiled extension module of this joint (built and cached on first use)."""
        if self._module is None:
            self._module = build.build_module([self.c_function()])
        return self._module

    def kernel_capsule(self):
        """PyCapsule ``"rbd.jcalc"`` wrapping the compiled C ``jcalc`` of this joint.

        The C signature is ``void jcalc(const double* q, const double* qd,
        double* E, double* r, double* S, double* cJ)``; it keeps no state and
        takes no lock, so kernels call it without the GIL.

        Raises
        ------
        rbd.symbolic.CompilationError
            When no C compiler is available: the kernels cannot use this joint
            (the reference algorithms still can).
        """
        if self._capsule is None:
            self._capsule = self.compiled_module().jcalc_capsule
        return self._capsule

    def jcalc_compiled(self, q, qd):
        """Evaluate the compiled C ``jcalc``: ``(E (3, 3), r (3,), S (6, nv), cJ (6,))``."""
        q = np.ascontiguousarray(self._q(q))
        qd = np.ascontiguousarray(np.asarray(qd, dtype=float).reshape(self.nv))
        E, r, S, cJ = np.zeros(9), np.zeros(3), np.zeros(6 * self.nv), np.zeros(6)
        self.compiled_module().jcalc(1, q, qd, E, r, S, cJ)
        return E.reshape(3, 3), r, S.reshape(self.nv, 6).T, cJ

    # --- identity -------------------------------------------------------------------------------
    def __eq__(self, other) -> bool:
        return isinstance(other, SymbolicJoint) and self._key == other._key

    def __hash__(self) -> int:
        return hash(("SymbolicJoint", self._key))

    def __repr__(self) -> str:
        label = f"{self.name!r}, " if self.name else ""
        return f"SymbolicJoint({label}coordinates={[s.name for s in self.coordinates]})"

    def __getstate__(self):
        state = dict(self.__dict__)
        for key in ("_transform_fn", "_S_fn", "_S_dot_fn", "_capsule", "_module"):
            state[key] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._functions()


def twin(joint: Joint) -> SymbolicJoint:
    """The symbolic twin of a built-in joint: same transform, written as sympy."""
    q = sympy.symbols(f"q0:{joint.nv}")
    return SymbolicJoint(joint_transform(joint, q), q, name=f"{joint.kind} twin")
