r"""Guenter & Lee's symbolic Lagrangian dynamics of a tree.

The equations of motion come from projecting Newton–Euler onto the
constraint manifold (GL Eqs. 4–6): for every coordinate :math:`q_j`

.. math::

    Q_j = \sum_i \Big( \mathbf a_i^T \frac{\partial \mathbf r_{cm_i}}{\partial q_j}
          + \mathbf b_i^T \boldsymbol\omega_{q_j} \Big),
    \qquad \mathbf a_i = m_i(\ddot{\mathbf r}_{cm_i} - \mathbf g),\;
    \mathbf b_i = I_i\dot{\boldsymbol\omega}_i + \boldsymbol\omega_i\times I_i\boldsymbol\omega_i,

and the trace identity :math:`\mathrm{tr}(\mathbf y\mathbf x^T) = \mathbf x^T\mathbf y`
factors the sum over descendants into one backward recursion (GL Eq. 13):

.. math::

    Q_j = \mathrm{tr}\Big\{W_{\lambda(j)}\frac{\partial A_j}{\partial q_j}\,\phi_j\Big\},
    \qquad
    \phi_j = \mathbf t_{cm_j}\mathbf a_j^T - \tfrac12 B_j U_j^T
             + \sum_{k\in\mu(j)} A_k\,\phi_k .

Two renderings of that recursion are generated here (``recursion=``):

``"trace"``
    GL Eq. 13 as written: world poses :math:`W_i = W_{\lambda(i)} A_i` and
    their first two time derivatives as 4×4 recursions, world-frame
    :math:`\mathbf a_i`, and the 4×4 accumulators :math:`\phi_j`.

``"body"`` (default)
    The same sum carried in each body's own frame.  Writing
    :math:`\Psi_j = \phi_j W_j`, the trace becomes
    :math:`Q_j = \mathrm{tr}(\hat S_j \Psi_j)` with
    :math:`\hat S_j = A_j^{-1}\partial A_j/\partial q_j` (S&G Eq. 9), and
    :math:`\Psi_j` is, entry for entry, the spatial force
    :math:`\mathbf f_j` of the subtree at ``j`` (its antisymmetric 3×3 part is
    the moment, its last row the force).  The recursion is then
    :math:`\mathbf f_j = I_j\mathbf a_j + \mathbf v_j\times^* I_j\mathbf v_j
    + \sum_k X_k^T\mathbf f_k`, :math:`Q_j = S_j^T \mathbf f_j` — the same
    numbers as the trace form with fewer operations.

Either way every scalar a step produces is bound to its own symbol
(:class:`~rbd.symbolic.program.Program`), so the equations are a
straight-line program of O(n) operations.  ``M`` is read off by coefficient
extraction and ``c`` by substituting :math:`\ddot q = 0` (GL Eq. 14);
forward dynamics solves :math:`M\ddot q = \tau - c` by Cholesky.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
import sympy

from ..errors import InputError, ModelError
from ..model import Model
from ..spatial import plux_parts
from . import build
from .compiled_lagrangian import CompiledLagrangian, _cholesky_solve_c, _lower
from .joint import _exact, joint_expressions
from .program import Program

__all__ = [
    "GuenterLee",
    "CompiledLagrangian",
    "lagrangian",
    "supports",
    "inverse_dynamics",
    "mass_matrix",
    "bias_forces",
    "forward_dynamics",
    "SUPPORTED_JOINTS",
    "MAX_REGISTRY_DOF",
]

#: Joint kinds whose velocity is q̇ (so the Lagrangian in q, q̇ applies).
SUPPORTED_JOINTS = ("revolute", "prismatic", "helical", "universal", "planar", "symbolic",
                    "fixed")
#: Largest model the registry derives on the fly (derivation time grows quickly).
MAX_REGISTRY_DOF = 8
RECURSIONS = ("body", "trace")


def _check_model(model) -> None:
    if not isinstance(model, Model):
        raise ModelError(f"expected an rbd.Model, got {type(model).__name__}")
    for body in model.bodies:
        if body.joint.kind not in SUPPORTED_JOINTS or body.joint.nq != body.joint.nv:
            raise ModelError(
                f"Guenter–Lee dynamics needs joints whose velocity is q̇; joint "
                f"{body.joint_name!r} is {body.joint.kind} (supported: "
                f"{', '.join(SUPPORTED_JOINTS)})")


def supports(model) -> bool:
    """Registry predicate: supported joints only and at most ``MAX_REGISTRY_DOF`` DoF."""
    try:
        _check_model(model)
    except ModelError:
        return False
    return 0 < model.nv <= MAX_REGISTRY_DOF


def _exact_matrix(a: np.ndarray) -> sympy.Matrix:
    """A numeric array as a sympy matrix with exact 0 and ±1 (see :func:`_exact`)."""
    a = np.asarray(a, dtype=float)
    return sympy.Matrix(*(a.shape if a.ndim == 2 else (a.size, 1)),
                        [_exact(x) for x in a.ravel()])


# --- small vector algebra on lists of sympy scalars, each result bound -------------------------
def _matvec(P: Program, A, x) -> list:
    return [P.bind(sympy.Add(*[A[r, k] * x[k] for k in range(len(x))]))
            for r in range(A.rows)]


def _cross(P: Program, a, b) -> list:
    return [P.bind(a[1] * b[2] - a[2] * b[1]), P.bind(a[2] * b[0] - a[0] * b[2]),
            P.bind(a[0] * b[1] - a[1] * b[0])]


def _add(P: Program, *vectors) -> list:
    return [P.bind(sympy.Add(*parts)) for parts in zip(*vectors, strict=True)]


def _matmul(P: Program, A, B) -> sympy.Matrix:
    return P.bind_matrix(A * B)


class _Recursion:
    """Per-body symbolic data shared by both recursions."""

    def __init__(self, model: Model, P: Program):
        self.model = model
        self.P = P
        q, qd = P["q"], P["qd"]
        self.G, self.S, self.S_dot, self.q, self.qd, self.qdd = [], [], [], [], [], []
        self.start = []
        for i, body in enumerate(model.bodies):
            sl = model.v_index(i)
            qi, qdi = q[sl], qd[sl]
            self.start.append(len(P))
            G, S, S_dot = joint_expressions(body.joint, qi, qdi, P)
            self.G.append(G)
            self.S.append(S)
            self.S_dot.append(S_dot)
            self.q.append(qi)
            self.qd.append(qdi)
            self.qdd.append(P["qdd"][sl])


def _body_recursion(model: Model, P: Program) -> list:
    """Eq. 13 in body coordinates: outward velocities/accelerations, inward forces."""
    data = _Recursion(model, P)
    g = [_exact(x) for x in model.gravity]
    zero = [sympy.Integer(0)] * 6
    a0 = [0, 0, 0, -g[0], -g[1], -g[2]]
    E_up, r_up, S, v, a, f = [], [], [], [], [], []
    for i, body in enumerate(model.bodies):
        E_t, r_t = (_exact_matrix(m) for m in plux_parts(body.X_tree))
        R, p = data.G[i][:3, :3], data.G[i][:3, 3]
        E = P.bind_matrix(R.T * E_t)                                       # S&G (8)
        r = P.bind_all(list(r_t + E_t.T * p), cse=False)                   # S&G (8)
        Si = P.bind_matrix(data.S[i])                                      # S&G (9)
        qd_i = sympy.Matrix(data.qd[i])
        v_J = P.bind_all(list(Si * qd_i), cse=False)
        c_J = P.bind_all(list(P.bind_matrix(data.S_dot[i]) * qd_i), cse=False)  # S&G (12)
        p_i = body.parent
        v_p = zero if p_i < 0 else v[p_i]
        a_p = a0 if p_i < 0 else a[p_i]
        v_i = _add(P, _xmotion(P, E, r, v_p), v_J)                          # S&G (8)
        a_i = _add(P, _xmotion(P, E, r, a_p), list(Si * sympy.Matrix(data.qdd[i])), c_J,
                   _crm(P, v_i, v_J))                                       # S&G (11)
        I = _exact_matrix(body.inertia)
        f_i = _add(P, _matvec(P, I, a_i), _crf(P, v_i, _matvec(P, I, v_i)))  # S&G (14)
        E_up.append(E)
        r_up.append(r)
        S.append(Si)
        v.append(v_i)
        a.append(a_i)
        f.append(f_i)
    tau = [sympy.Integer(0)] * model.nv
    for i in range(model.nbodies - 1, -1, -1):
        sl = model.v_index(i)
        tau[sl] = _matvec(P, S[i].T, f[i])                                  # S&G (15)
        p_i = model.bodies[i].parent
        if p_i >= 0:
            f[p_i] = _add(P, f[p_i], _xforce_T(P, E_up[i], r_up[i], f[i]))  # S&G (14)
    return tau


def _xmotion(P: Program, E, r, m) -> list:
    """``X m`` with ``X = plux(E, r)``: ``[E ω; E (v - r × ω)]``."""
    w = _matvec(P, E, m[:3])
    u = _matvec(P, E, _add(P, m[3:], [-x for x in _cross(P, r, m[:3])]))
    return w + u


def _xforce_T(P: Program, E, r, f) -> list:
    """``Xᵀ f`` with ``X = plux(E, r)``: ``[Eᵀ n + r × Eᵀ f; Eᵀ f]``."""
    f_lin = _matvec(P, E.T, f[3:])
    n = _add(P, _matvec(P, E.T, f[:3]), _cross(P, r, f_lin))
    return n + f_lin


def _crm(P: Program, v, m) -> list:
    """``v × m`` (motion): ``[ω × m_ω; ω × m_v + v_lin × m_ω]``."""
    return _cross(P, v[:3], m[:3]) + _add(P, _cross(P, v[:3], m[3:]), _cross(P, v[3:], m[:3]))


def _crf(P: Program, v, h) -> list:
    """``v ×* h`` (force): ``[ω × h_n + v_lin × h_f; ω × h_f]``."""
    return _add(P, _cross(P, v[:3], h[:3]), _cross(P, v[3:], h[3:])) + _cross(P, v[:3], h[3:])


def _trace_recursion(model: Model, P: Program) -> list:
    """GL Eq. 13 as written: world poses and their derivatives, 4×4 accumulators φ."""
    data = _Recursion(model, P)
    g = sympy.Matrix([_exact(x) for x in model.gravity])
    nb = model.nbodies
    A, dA, W, Wd, Wdd, L = [None] * nb, [None] * nb, [None] * nb, [None] * nb, [None] * nb, \
        [None] * nb
    for i, body in enumerate(model.bodies):
        E_t, r_t = plux_parts(body.X_tree)
        T_tree = sympy.eye(4)
        T_tree[:3, :3] = _exact_matrix(E_t.T)
        T_tree[:3, 3] = _exact_matrix(r_t)
        G, qi, qdi, qddi = data.G[i], data.q[i], data.qd[i], data.qdd[i]
        A[i] = P.bind_matrix(T_tree * G)                                    # GL (1)
        dG = _partials(P, G, qi, data.start[i])
        dA[i] = [P.bind_matrix(T_tree * dGk) for dGk in dG]
        A_dot = P.bind_matrix(sum((dA[i][k] * qdi[k] for k in range(len(qi))),
                                  sympy.zeros(4, 4)))
        A_ddot = sum((dA[i][k] * qddi[k] for k in range(len(qi))), sympy.zeros(4, 4))
        for k in range(len(qi)):
            for m, d2G in enumerate(_partials(P, dG[k], qi, data.start[i])):
                A_ddot += P.bind_matrix(T_tree * d2G) * qdi[k] * qdi[m]
        A_ddot = P.bind_matrix(A_ddot)
        p = body.parent
        if p < 0:
            W[i], Wd[i], Wdd[i] = A[i], A_dot, A_ddot
        else:
            W[i] = _matmul(P, W[p], A[i])                                   # GL (1)
            Wd[i] = P.bind_matrix(Wd[p] * A[i] + W[p] * A_dot)
            Wdd[i] = P.bind_matrix(Wdd[p] * A[i] + 2 * Wd[p] * A_dot + W[p] * A_ddot)
        L[i] = _local_term(P, body, W[i], Wd[i], Wdd[i], g)
    phi = list(L)
    tau = [sympy.Integer(0)] * model.nv
    for i in range(nb - 1, -1, -1):
        p = model.bodies[i].parent
        W_p = sympy.eye(4) if p < 0 else W[p]
        for k, j in enumerate(range(model.v_index(i).start, model.v_index(i).stop)):
            dW = _matmul(P, W_p, dA[i][k])                                  # GL (8)
            tau[j] = P.bind(sympy.Add(*[dW[r, c] * phi[i][c, r]
                                        for r in range(3) for c in range(4)]))  # GL (13)
        if p >= 0:
            phi[p] = P.bind_matrix(phi[p] + A[i] * phi[i])                  # GL (13)
    return tau


def _partials(P: Program, G: sympy.Matrix, q, start: int) -> list[sympy.Matrix]:
    """``[∂G/∂q_k]``: by sympy for closed forms, along the tape for bound entries."""
    bound = {x for x, _ in P.assignments[start:]}
    if not any(s in bound for e in G for s in e.free_symbols):
        return [G.diff(x) for x in q]
    out = []
    for x in q:
        d = P.derivatives(x, start=start)
        out.append(G.applyfunc(lambda e, d=d: P.derivative_of(e, d)))
    return out


def _local_term(P: Program, body, W, Wd, Wdd, g) -> sympy.Matrix:
    """``t_cm aᵀ - ½ B Uᵀ`` of one body (GL Eqs. 4, 5, 12)."""
    m = _exact(body.mass)
    t = sympy.Matrix([*[_exact(x) for x in body.com], 1])
    r_ddot = (Wdd * t)[:3, 0]
    a = P.bind_all(list(m * (r_ddot - g)), cse=False)                      # GL (4)
    R, R_dot, R_ddot = W[:3, :3], Wd[:3, :3], Wdd[:3, :3]
    Om = P.bind_matrix(R.T * R_dot)
    Om_dot = P.bind_matrix(R.T * R_ddot)
    w = [Om[2, 1], Om[0, 2], Om[1, 0]]                                     # GL fn. 4
    w_dot = [P.bind((Om_dot[2, 1] - Om_dot[1, 2]) / 2), P.bind((Om_dot[0, 2] - Om_dot[2, 0]) / 2),
             P.bind((Om_dot[1, 0] - Om_dot[0, 1]) / 2)]
    Ic = _exact_matrix(body.I_com)
    b = _add(P, _matvec(P, Ic, w_dot), _cross(P, w, _matvec(P, Ic, w)))   # GL (5)
    B = sympy.Matrix([[0, -b[2], b[1]], [b[2], 0, -b[0]], [-b[1], b[0], 0]])
    BU = P.bind_matrix(B * R.T)
    L = sympy.zeros(4, 4)
    for r in range(4):
        for c in range(3):
            L[r, c] = t[r] * a[c] - (BU[r, c] / 2 if r < 3 else 0)          # GL (13)
    return P.bind_matrix(L)


# --- the derived equations -------------------------------------------------------------------
class GuenterLee:
    """Symbolic equations of motion of a tree (Guenter & Lee), evaluated and compiled.

    Parameters
    ----------
    model : Model
        A tree whose joints have velocity ``q̇`` (revolute, prismatic, helical,
        universal, planar, fixed and :class:`~rbd.symbolic.SymbolicJoint`).
        Masses, inertias and geometry enter as numbers.
    recursion : {"body", "trace"}
        How GL Eq. 13 is rendered (see the module docstring).

    Notes
    -----
    ``program`` is the inverse-dynamics program ``τ(q, q̇, q̈)``.  The
    forward-dynamics equations are the lower triangle of ``M`` — the
    coefficients of ``q̈`` in ``τ`` — and ``c = τ(q, q̇, 0)`` (GL Eq. 14),
    one program sharing all common work.  Results evaluate through generated
    Python until :meth:`compile` builds C.

    Examples
    --------
    >>> import numpy as np, rbd
    >>> from rbd.symbolic import lagrangian
    >>> model = rbd.models.double_pendulum()
    >>> gl = lagrangian(model)
    >>> q, qd = np.array([0.3, -0.2]), np.array([0.1, 0.4])
    >>> bool(np.allclose(gl.mass_matrix(q), rbd.crba(model, q, backend="reference")))
    True
    """

    def __init__(self, model: Model, recursion: str = "body"):
        _check_model(model)
        if recursion not in RECURSIONS:
            raise InputError(f"recursion must be one of {RECURSIONS}, got {recursion!r}")
        self.model = model
        self.recursion = recursion
        self.n = n = model.nv
        P = Program([("q", n), ("qd", n), ("qdd", n)])
        tau = (_body_recursion if recursion == "body" else _trace_recursion)(model, P)
        P.set_output("tau", tau)
        self.program = P
        self._compiled: CompiledLagrangian | None = None

    # --- programs ------------------------------------------------------------------------------
    @cached_property
    def _equations(self) -> Program:
        """``τ`` plus the coefficient of each ``q̈_j`` in ``τ_i`` (i ≥ j), before substitution."""
        P = self.program.copy()
        tau = P.outputs["tau"]
        qdd = P["qdd"]
        M = {}
        upto = len(P)
        for j in range(self.n):
            for i, coeff in zip(range(j, self.n), P.coefficient(tau[j:], qdd[j], upto),
                                strict=True):
                M[i, j] = coeff                                             # GL (14)
        P.set_output("M", [M[ij] for ij in _lower(self.n)])
        return P

    @staticmethod
    def _restricted(P: Program, inputs: tuple[str, ...], outputs: tuple[str, ...],
                    zero: tuple[str, ...]) -> Program:
        values = {s: 0 for name in zero for s in P[name]}
        Q = P.copy()
        Q.outputs = {k: Q.outputs[k] for k in outputs}
        Q = Q.substitute(values).pruned()
        Q.inputs = {k: Q.inputs[k] for k in inputs}
        return Q

    @cached_property
    def inverse_dynamics_program(self) -> Program:
        """``tau(q, qd, qdd)``."""
        return self.program.pruned()

    @cached_property
    def equations_program(self) -> Program:
        """``M`` (lower triangle, row by row) and ``c`` from ``(q, qd)`` (GL Eq. 14)."""
        P = self._equations.copy()
        P.outputs = {"M": P.outputs["M"], "c": P.outputs["tau"]}
        return self._restricted(P, ("q", "qd"), ("M", "c"), ("qdd",))

    @cached_property
    def mass_matrix_program(self) -> Program:
        """``M`` (lower triangle, row by row) from ``q``."""
        return self._restricted(self._equations, ("q",), ("M",), ("qd", "qdd"))

    @cached_property
    def bias_forces_program(self) -> Program:
        """``c(q, qd) = τ(q, qd, 0)``."""
        P = self.program.copy()
        P.outputs = {"c": P.outputs["tau"]}
        return self._restricted(P, ("q", "qd"), ("c",), ("qdd",))

    @cached_property
    def _optimized(self) -> dict[str, Program]:
        return {"inverse_dynamics": self.inverse_dynamics_program.optimized(),
                "forward_dynamics": self.equations_program.optimized()}

    def operation_count(self, detail: bool = False) -> dict:
        """Additions and multiplications of the generated equations, after CSE.

        ``"inverse_dynamics"`` counts ``τ(q, q̇, q̈)``; ``"forward_dynamics"``
        counts the equations of motion (``M``'s lower triangle and ``c``),
        without the linear solve.  Rules: a subtraction is an addition, a
        negation is free, a division is a multiplication, ``xⁿ`` is ``n - 1``
        multiplications; ``sin``/``cos`` calls are counted apart (under
        ``"functions"`` when ``detail=True``).
        """
        return {name: prog.operation_count().as_dict(detail)
                for name, prog in self._optimized.items()}

    # --- numeric evaluation (generated Python) -----------------------------------------------
    @cached_property
    def _functions(self) -> dict:
        return {"inverse_dynamics": self.inverse_dynamics_program.python_function("tau"),
                "equations": self.equations_program.python_function("equations"),
                "mass_matrix": self.mass_matrix_program.python_function("mass"),
                "bias_forces": self.bias_forces_program.python_function("bias")}

    def _vec(self, x, name: str) -> list:
        x = np.asarray(x, dtype=float)
        if x.shape != (self.n,):
            raise InputError(f"{name} must have shape ({self.n},), got {x.shape}")
        if not np.all(np.isfinite(x)):
            raise InputError(f"{name} has non-finite entries")
        return x.tolist()

    def _full(self, lower) -> np.ndarray:
        M = np.zeros((self.n, self.n))
        for (i, j), value in zip(_lower(self.n), lower, strict=True):
            M[i, j] = M[j, i] = value
        return M

    def inverse_dynamics(self, q, qd, qdd) -> np.ndarray:
        """``τ = M(q) q̈ + c(q, q̇)``, shape ``(nv,)``."""
        (tau,) = self._functions["inverse_dynamics"](self._vec(q, "q"), self._vec(qd, "qd"),
                                                     self._vec(qdd, "qdd"))
        return np.array(tau, dtype=float)

    def mass_matrix(self, q) -> np.ndarray:
        """``M(q)``, shape ``(nv, nv)``, symmetric."""
        (lower,) = self._functions["mass_matrix"](self._vec(q, "q"))
        return self._full(lower)

    def bias_forces(self, q, qd) -> np.ndarray:
        """``c(q, q̇) = C(q, q̇) q̇ + g(q)``, shape ``(nv,)``."""
        (c,) = self._functions["bias_forces"](self._vec(q, "q"), self._vec(qd, "qd"))
        return np.array(c, dtype=float)

    def forward_dynamics(self, q, qd, tau) -> np.ndarray:
        """``q̈ = M⁻¹ (τ - c)`` by a Cholesky solve, shape ``(nv,)``."""
        lower, c = self._functions["equations"](self._vec(q, "q"), self._vec(qd, "qd"))
        M = self._full(lower)
        L = np.linalg.cholesky(M)
        y = np.linalg.solve(L, np.asarray(self._vec(tau, "tau")) - np.array(c))
        return np.linalg.solve(L.T, y)

    # --- generated C -----------------------------------------------------------------------------
    def c_functions(self) -> list[build.CFunction]:
        """Generated C for the four quantities (``forward_dynamics`` includes a Cholesky solve)."""
        n, opt = self.n, self._optimized
        nm = n * (n + 1) // 2
        return [
            build.CFunction("inverse_dynamics", opt["inverse_dynamics"].c_function(
                "inverse_dynamics"), (("q", n), ("qd", n), ("qdd", n)), (("tau", n),)),
            build.CFunction("mass_matrix", self.mass_matrix_program.optimized().c_function(
                "mass_matrix"), (("q", n),), (("M", nm),)),
            build.CFunction("bias_forces", self.bias_forces_program.optimized().c_function(
                "bias_forces"), (("q", n), ("qd", n)), (("c", n),)),
            build.CFunction("equations", opt["forward_dynamics"].c_function("equations"),
                            (("q", n), ("qd", n)), (("M", nm), ("c", n))),
            build.CFunction("forward_dynamics", _cholesky_solve_c(n),
                            (("q", n), ("qd", n), ("tau", n)), (("qdd", n),)),
        ]

    def compile(self) -> CompiledLagrangian:
        """Generate C for the equations, compile it (cached on disk) and return the evaluator.

        Raises
        ------
        rbd.symbolic.CompilationError
            If no C compiler is available.
        """
        if self._compiled is None:
            self._compiled = CompiledLagrangian(self, build.build_module(self.c_functions()))
        return self._compiled

    def __repr__(self) -> str:
        return (f"<GuenterLee {self.model.name!r}: nv={self.n}, recursion={self.recursion!r}, "
                f"{len(self.program)} bound scalars>")


def lagrangian(model: Model, recursion: str = "body") -> GuenterLee:
    """The Guenter–Lee symbolic equations of motion of ``model`` (cached on the model).

    Parameters
    ----------
    model : Model
    recursion : {"body", "trace"}
        ``"trace"`` renders GL Eq. 13 literally with world-frame 4×4 matrices;
        ``"body"`` carries the same accumulators in body coordinates.

    Returns
    -------
    GuenterLee
        With ``inverse_dynamics``, ``mass_matrix``, ``bias_forces``,
        ``forward_dynamics``, ``operation_count`` and ``compile``.
    """
    if not isinstance(model, Model):
        return GuenterLee(model, recursion)
    return model._derived(("guenter_lee", recursion), lambda: GuenterLee(model, recursion))


def _external(model: Model, q, f_ext) -> np.ndarray:
    """``Σ_i J_iᵀ f_i``: generalized force of body-frame external forces (one backward pass)."""
    f = np.array(f_ext, dtype=float).reshape(model.nbodies, 6)
    tau = np.zeros(model.nv)
    for i in range(model.nbodies - 1, -1, -1):
        body = model.bodies[i]
        qi = q[model.q_index(i)]
        tau[model.v_index(i)] = body.joint.S(qi).T @ f[i]
        if body.parent >= 0:
            X_up = body.joint.X_J(qi) @ body.X_tree
            f[body.parent] += X_up.T @ f[i]
    return tau


def _registry_model(model) -> GuenterLee:
    if not supports(model):
        _check_model(model)
        raise ModelError(f"the symbolic Guenter–Lee derivation is limited to models with "
                         f"1..{MAX_REGISTRY_DOF} DoF (this one has {model.nv}); call "
                         "rbd.symbolic.lagrangian(model) directly for larger ones")
    return lagrangian(model)


def inverse_dynamics(model, q, v, a, f_ext=None):
    """Registry entry: inverse dynamics from the generated Guenter–Lee equations."""
    tau = _registry_model(model).inverse_dynamics(q, v, a)
    if f_ext is not None:
        tau = tau - _external(model, np.asarray(q, dtype=float), f_ext)
    return tau


def mass_matrix(model, q):
    """Registry entry: ``M`` by coefficient extraction (GL Eq. 14)."""
    return _registry_model(model).mass_matrix(q)


def bias_forces(model, q, v):
    """Registry entry: ``c`` by substituting ``q̈ = 0`` (GL Eq. 14)."""
    return _registry_model(model).bias_forces(q, v)


def forward_dynamics(model, q, v, tau, f_ext=None):
    """Registry entry: ``M q̈ = τ - c`` by Cholesky on the generated equations."""
    tau = np.asarray(tau, dtype=float)
    if f_ext is not None:
        tau = tau + _external(model, np.asarray(q, dtype=float), f_ext)
    return _registry_model(model).forward_dynamics(q, v, tau)
