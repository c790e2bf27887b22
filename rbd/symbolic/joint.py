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

:class:`SymbolicJoint` derives these once with sympy, lambdifies them for the
reference algorithms, and on request generates and compiles a C ``jcalc``
for the compiled kernels (joint code 8).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

import numpy as np
import sympy

from ..errors import InputError, ModelError
from ..joints import Helical, Joint, Planar, Prismatic, Revolute, Universal
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

#: Tolerance of the rigid-motion test (orthonormality of R, det R = 1) at sample points.
RIGID_TOL = 1e-9
#: Entries of S up to this size (sympy ``count_ops``) are expanded with sin² = 1 - cos².
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


def joint_expressions(joint: Joint, q: Sequence[sympy.Symbol], qd: Sequence[sympy.Symbol]
                      ) -> tuple[sympy.Matrix, sympy.Matrix, sympy.Matrix]:
    """``(G, S, Ṡ)`` of a joint as sympy matrices in the symbols ``q`` and ``qd``.

    Built-in joints use their closed forms (the same as :mod:`rbd.joints`);
    a :class:`SymbolicJoint` its derived ``S_expr`` and ``S_dot_expr``.
    """
    G = joint_transform(joint, q)
    if isinstance(joint, SymbolicJoint):
        sub = dict(zip(joint.coordinates, q, strict=True))
        sub.update(zip(joint.velocities, qd, strict=True))
        return G, joint.S_expr.xreplace(sub), joint.S_dot_expr.xreplace(sub)
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
    squares = {sympy.sin(f.args[0]) ** 2: 1 - sympy.cos(f.args[0]) ** 2
               for f in e.atoms(sympy.sin)}
    return sympy.expand(e.xreplace(squares)) if squares else e


def _simplify(e: sympy.Expr) -> sympy.Expr:
    """Simplify an entry of S (cos² + sin² → 1 and the like); keep the cheaper form."""
    if e.is_Number or sympy.count_ops(e) > EXPAND_LIMIT:
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
    The reference algorithms call lambdified NumPy versions; :meth:`kernel_capsule`
    compiles a C ``jcalc`` for the kernels (this needs a C compiler).

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
        self._check_rigid()
        self.S_expr = twist_columns(G, q)                                   # S&G (9)
        self.S_dot_expr = sympy.zeros(6, self.nv)                           # S&G (12)
        for qk, qdk in zip(q, self.velocities, strict=True):
            self.S_dot_expr += self.S_expr.diff(qk) * qdk
        self.c_J_expr = self.S_dot_expr * sympy.Matrix(self.velocities)
        self._lambdify()
        self._capsule = None
        self._module = None
        self._key = hashlib.sha256(
            (sympy.srepr(G) + repr([s.name for s in q])).encode()).hexdigest()
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

    def _check_rigid(self) -> None:
        G = self.G
        for j, target in enumerate((0, 0, 0, 1)):
            e = G[3, j]
            if e != target and sympy.simplify(e - target) != 0:
                raise ModelError(
                    f"SymbolicJoint: entry (3, {j}) of the transform is {e}, not {target}: "
                    "the bottom row of a rigid motion must be [0, 0, 0, 1]")
        f = sympy.lambdify(self.coordinates, G, modules="numpy")
        rng = np.random.default_rng(0)
        finite = 0
        for qs in _sample_points(self._neutral, rng):
            with np.errstate(all="ignore"):
                T = np.asarray(f(*qs), dtype=float)
            if not np.all(np.isfinite(T)):
                continue
            finite += 1
            R = T[:3, :3]
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

    # --- numeric evaluation (reference algorithms) --------------------------------------------
    def _lambdify(self) -> None:
        q, qd = self.coordinates, self.velocities
        self._f_G = sympy.lambdify(q, self.G, modules="numpy", cse=True)
        self._f_S = sympy.lambdify(q, self.S_expr, modules="numpy", cse=True)
        self._f_S_dot = sympy.lambdify(q + qd, self.S_dot_expr, modules="numpy", cse=True)

    def _q(self, q) -> np.ndarray:
        q = np.asarray(q, dtype=float).reshape(-1)
        if q.shape != (self.nq,):
            raise InputError(f"q must have shape ({self.nq},), got {q.shape}")
        return q

    def transform(self, q):
        T = np.asarray(self._f_G(*self._q(q)), dtype=float)
        return T[:3, :3], T[:3, 3]

    def S(self, q):
        return np.asarray(self._f_S(*self._q(q)), dtype=float).reshape(6, self.nv)

    def S_dot(self, q, v):
        v = np.asarray(v, dtype=float).reshape(self.nv)
        return np.asarray(self._f_S_dot(*self._q(q), *v), dtype=float).reshape(6, self.nv)

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
        prog = Program([("q", self.nv), ("qd", self.nv)])
        sub = dict(zip(self.coordinates, prog["q"], strict=True))
        sub.update(zip(self.velocities, prog["qd"], strict=True))
        R, p = self.G[:3, :3], self.G[:3, 3]
        E = [R[b, a] for a in range(3) for b in range(3)]
        S = [self.S_expr[row, k] for k in range(self.nv) for row in range(6)]
        exprs = [e.xreplace(sub) for e in [*E, *p, *S, *self.c_J_expr]]
        values = prog.bind_all(exprs)
        prog.set_output("E", values[:9])
        prog.set_output("r", values[9:12])
        prog.set_output("S", values[12:12 + 6 * self.nv])
        prog.set_output("cJ", values[12 + 6 * self.nv:])
        return prog

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
        for key in ("_f_G", "_f_S", "_f_S_dot", "_capsule", "_module"):
            state[key] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lambdify()


def twin(joint: Joint) -> SymbolicJoint:
    """The symbolic twin of a built-in joint: same transform, written as sympy."""
    q = sympy.symbols(f"q0:{joint.nv}")
    return SymbolicJoint(joint_transform(joint, q), q, name=f"{joint.kind} twin")
