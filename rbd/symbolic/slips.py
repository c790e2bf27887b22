r"""Naming the usual slips of a hand derivation: the equations of motion split into terms.

:func:`rbd.testing.check_consistency` asks two things of the symbolic layer:
the expected ``M``, ``h`` or ``tau`` of a model as formulas split into named
physical terms (:class:`Terms`), so that a wrong answer can be explained as one
of them flipped, dropped, doubled, halved or with cos and sin exchanged; and a
user's sympy answer read in the state symbols (:func:`in_state_symbols`) and
compared in the polynomial normal form (:func:`difference_formulas`).
"""

from __future__ import annotations

import re

import numpy as np
import sympy

from ..errors import InputError, ModelError
from ..model import Model
from .equations import equations_of_motion, joint_symbols, tidy
from .trig import TrigRing

__all__ = ["Terms", "name_slips", "whole_quantity_slips", "in_state_symbols",
           "difference_formulas", "normal_form"]


def _text(t) -> str:
    """A formula on one line, floats at the digits they were given with (0.5, not 0.500…)."""
    return sympy.sstr(t, full_prec=False)


def _short(label: str, t) -> str:
    text = _text(t)
    return f"{label} ({text})" if len(text) <= 60 else label


class Terms:
    """The expected ``M``, ``h`` or ``tau`` as formulas, split into named physical terms.

    ``M = Σ_k (M_rot,k + M_trans,k)``: link ``k``'s rotational inertia about its
    centre of mass and its mass at the centre of mass (the parallel-axis part
    m·d²), each from the equations of motion of the model with every other
    inertia zero (they are linear in the inertias).  ``h = Σ_k h_k`` likewise,
    each split by its velocity factor: Coriolis ``q̇_i q̇_j`` (i ≠ j),
    centrifugal ``q̇_i²`` and gravity (no velocity).  Each named term then splits
    into its single terms (grouped by their factor in ``q`` and ``q̇``).
    """

    def __init__(self, record, quantity: str):
        self.quantity = quantity
        self.q, self.qd, self.qdd = joint_symbols(record.nq, record.nv)
        self.params = record.parameter_symbols
        self.args = [*self.q, *self.qd, *self.qdd, *self.params]
        self.eom = equations_of_motion(record, simplify=False)
        names = record.body_names
        zero = np.zeros((3, 3))

        def only(k: int, **own) -> dict:
            others = {b: {"mass": 0, "inertia": zero} for b in names if b != names[k]}
            return {**others, names[k]: own} if own else others

        self.M_parts, self.h_parts = [], []
        if quantity in ("mass_matrix", "inverse_dynamics"):
            # the joints' rotor inertia is in every variant's M: count it once, apart
            rotors = sympy.diag(*record.armature) if record.nv else sympy.zeros(0, 0)
            if any(x != 0 for x in rotors):
                self.M_parts.append(("the rotor inertia (armature)", rotors))
            for k, b in enumerate(names):
                for label, own in ((f"the rotational inertia of {b}", {"mass": 0}),
                                   (f"the parallel-axis term m·d² of {b}", {"inertia": zero})):
                    part = equations_of_motion(record, parameters=only(k, **own),
                                               simplify=False).M
                    self.M_parts.append((label, (part - rotors).applyfunc(sympy.expand)))
        if quantity in ("bias_forces", "inverse_dynamics"):
            for k, b in enumerate(names):
                self.h_parts.append((b, equations_of_motion(record, parameters=only(k),
                                                            simplify=False).h))

    @classmethod
    def of(cls, record, quantity: str) -> Terms:
        cache = record.__dict__.setdefault("_slip_terms", {})
        if quantity not in cache:
            cache[quantity] = cls(record, quantity)
        return cache[quantity]

    # --- the named terms of one entry -------------------------------------------------------
    def _singles(self, expr, label: str):
        """The single terms of ``expr``, grouped by their factor in the state symbols."""
        groups: dict = {}
        for term in sympy.Add.make_args(sympy.expand(expr)):
            if term == 0:
                continue
            _, state = term.as_independent(*self.q, *self.qd, *self.qdd, as_Add=False)
            groups.setdefault(state, []).append(term)
        out = []
        if len(groups) > 1:
            out += [(f"the term {_text(sympy.Add(*ts))} (of {label})", sympy.Add(*ts))
                    for ts in groups.values()]
        out += [(f"the term {_text(t)} (of {label})", t) for ts in groups.values()
                if len(ts) > 1 for t in ts]
        if len(groups) == 1 and len(next(iter(groups.values()))) == 1:
            return []
        return out

    def _M_terms(self, i: int, j: int):
        for label, part in self.M_parts:
            if part[i, j] != 0:
                yield _short(label, part[i, j]), part[i, j]
        for label, part in self.M_parts:
            if part[i, j] != 0:
                yield from self._singles(part[i, j], label)

    def _velocity_kind(self, term) -> str:
        _, v = term.as_independent(*self.qd, as_Add=False)
        if v == 1:
            return "gravity"
        powers = v.as_powers_dict()
        names = [f"q̇{self.qd.index(s) + 1}" for s in powers]
        if len(powers) == 1 and sum(powers.values()) == 2:
            return f"the centrifugal term in {names[0]}²"
        return f"the Coriolis term in {'·'.join(sorted(names))}"

    def _split_h(self, expr) -> dict:
        kinds: dict = {}
        for term in sympy.Add.make_args(sympy.expand(expr)):
            if term == 0:
                continue
            kinds.setdefault(self._velocity_kind(term), []).append(term)
        return {k: sympy.Add(*ts) for k, ts in kinds.items()}

    def _h_terms(self, i: int):
        whole = self._split_h(self.eom.h[i])
        coriolis = [v for k, v in whole.items() if k.startswith("the Coriolis")]
        centrifugal = [v for k, v in whole.items() if k.startswith("the centrifugal")]
        if "gravity" in whole:
            yield _short("the gravity term", whole["gravity"]), whole["gravity"]
        if coriolis or centrifugal:
            yield "the velocity terms C(q, q̇) q̇", sympy.Add(*coriolis, *centrifugal)
        if len(coriolis) > 1:
            yield "every Coriolis term", sympy.Add(*coriolis)
        if len(centrifugal) > 1:
            yield "every centrifugal term", sympy.Add(*centrifugal)
        for kind, value in whole.items():
            if kind != "gravity":
                yield _short(kind, value), value
        for body, part in self.h_parts:
            for kind, value in self._split_h(part[i]).items():
                label = f"the gravity term of {body}" if kind == "gravity" else \
                    f"{kind} from {body}"
                yield _short(label, value), value
        for kind, value in whole.items():
            yield from self._singles(value, "gravity" if kind == "gravity" else kind)

    def _coriolis_transposed(self, i: int):
        """``(Cᵀ q̇ − C q̇)_i`` with ``C`` of Christoffel symbols of ``M`` (q̇ = dq/dt only)."""
        n = len(self.qd)
        if len(self.q) != n:
            return None
        M, q, qd = self.eom.M, self.q, self.qd

        def C(a, b):
            return sum(sympy.Rational(1, 2) * (M[a, b].diff(q[k]) + M[a, k].diff(q[b])
                                               - M[b, k].diff(q[a])) * qd[k] for k in range(n))

        return sympy.expand(sum((C(j, i) - C(i, j)) * qd[j] for j in range(n)))

    def candidates(self, index):
        """``(description, predicted yours − expected)`` of every slip at one entry."""
        if self.quantity == "mass_matrix":
            y = self.eom.M[index]
            named = list(self._M_terms(*index))
        elif self.quantity == "bias_forces":
            y = self.eom.h[index[0]]
            named = list(self._h_terms(index[0]))
        else:
            i = index[0]
            y = (self.eom.M[i, :] * sympy.Matrix(self.qdd))[0] + self.eom.h[i]
            inertial = (self.eom.M[i, :] * sympy.Matrix(self.qdd))[0]
            named = [("the inertial term M q̈", inertial)]
            qdd = sympy.Matrix(self.qdd)
            named += [(f"{label} in M q̈", (part[i, :] * qdd)[0])
                      for label, part in self.M_parts if any(x != 0 for x in part[i, :])]
            for j in range(len(self.qd)):
                named += [(f"{label} in M[{i}, {j}]·q̈{j + 1}", t * self.qdd[j])
                          for label, t in self._M_terms(i, j)]
            named += list(self._h_terms(i))
        trig = (sympy.sin, sympy.cos)

        def swapped(t):
            return t.xreplace({f: (sympy.cos if isinstance(f, sympy.sin) else sympy.sin)(*f.args)
                               for f in t.atoms(*trig)})

        out = [("a sign of the whole entry (yours is minus the expected value)", -2 * y),
               ("a factor of 2 (yours is twice the expected value)", y),
               ("a factor of 2 (yours is half the expected value)", -y / 2)]
        if y.atoms(*trig):
            out.append(("cos written for sin (and sin for cos) in the whole entry",
                        swapped(y) - y))
        if self.quantity != "mass_matrix":
            transposed = self._coriolis_transposed(index[0])
            if transposed is not None and transposed != 0:
                out.append(("a swapped index: Cᵀ(q, q̇) q̇ for C(q, q̇) q̇ (the Christoffel "
                            "symbols with their first two indices exchanged)", transposed))
        for label, t in named:
            out += [(f"a sign error in {label}", -2 * t), (f"{label} missing", -t),
                    (f"{label} doubled", t), (f"{label} halved", -t / 2)]
            if t.atoms(*trig):
                out.append((f"cos written for sin (and sin for cos) in {label}",
                            swapped(t) - t))
        return out

    def name(self, points, mine, expected, entries, tolerance: float, most: int = 3) -> None:
        """Add to each entry the (at most ``most``) slips that predict it at every point."""
        for entry in entries:
            index = entry.index
            candidates = self.candidates(index)
            f = sympy.lambdify(self.args, [d for _, d in candidates], modules="numpy")
            values = np.array([np.broadcast_to(np.asarray(f(*p), dtype=float),
                                               (len(candidates),)) for p in points])
            d = np.array([m[index] - y[index] for m, y in zip(mine, expected, strict=True)])
            scale = np.array([max(1.0, abs(y[index])) for y in expected])
            hits = np.all(np.abs(values - d[:, None]) <= tolerance * scale[:, None],
                          axis=0)
            found = [candidates[k][0] for k in np.flatnonzero(hits)]
            entry.slips += list(dict.fromkeys(found))[:most]


_SYMBOL_NAME = re.compile(r"^(q|v|qd|dq|qdot|a|qdd|ddq|qddot|tau)_?\{?(\d+)\}?$")
_ROLE = {"q": "q", "v": "v", "qd": "v", "dq": "v", "qdot": "v", "a": "a", "qdd": "a",
         "ddq": "a", "qddot": "a", "tau": "a"}



def in_state_symbols(record, expr):
    """``expr`` with the user's symbols renamed to those of :func:`state_symbols` and the
    record's parameters (matched by name)."""
    q, v, a = (sympy.Matrix(list(s)) for s in joint_symbols(record.nq, record.nv))
    columns = {"q": q, "v": v, "a": a}
    parameters = {s.name: s for s in record.symbols}
    joints = record.joint_names
    rename = {}
    for s in expr.free_symbols:
        if s.name in parameters:
            rename[s] = parameters[s.name]
            continue
        match = _SYMBOL_NAME.match(s.name)
        role = _ROLE[match.group(1)] if match else None
        size = len(columns[role]) if role else 0
        if match is None or not 1 <= int(match.group(2)) <= size:
            zero = " (rbd numbers the state symbols from 1, like the joints)" \
                if match is not None and int(match.group(2)) == 0 else ""
            params = f"; parameters {', '.join(sorted(parameters))}" if parameters else ""
            raise InputError(f"symbol {s.name!r} is not a state symbol of this model{zero}; "
                             f"use rbd.testing.state_symbols(model): q1..q{len(q)} "
                             f"(q1 = {joints[0] if joints else '-'}), qd1.., qdd1..{params}")
        rename[s] = columns[role][int(match.group(2)) - 1]
    return expr.xreplace(rename)


def normal_form(expr):
    """``expr`` as a polynomial in sines and cosines with ``sin² = 1 − cos²`` applied, angle
    sums expanded first; terms below 1e-12 of the largest (rounding of float data) dropped."""
    e = sympy.expand(sympy.expand_trig(sympy.expand(expr)))
    R = TrigRing([e])
    p = R.element(e)
    if R.had_floats and p.p:
        largest = max(abs(float(c)) for c in p.p.values())
        for monom in [m for m, c in p.p.items() if abs(float(c)) < 1e-12 * largest]:
            del p.p[monom]
    return R.expr(p)


def difference_formulas(difference, args, points) -> dict:
    """Non-zero entries of the difference in normal form (checked numerically at ``points``)."""
    formulas = {}
    for index in np.ndindex(*difference.shape):
        expr = difference[index]
        if expr == 0:
            continue
        f = sympy.lambdify(args, expr, modules="numpy")
        values = [abs(float(f(*p))) for p in points]
        # Both sides are exact formulas; float coefficients (9.81, lengths) round at 1e-15.
        if max(values) <= 1e-10:
            continue
        key = (index[0],) if difference.shape[1] == 1 else tuple(int(i) for i in index)
        formulas[key] = tidy(normal_form(expr))
    return formulas


def whole_quantity_slips(quantity: str, model: Model, state, expected: np.ndarray):
    """``(description, predicted value)`` of the slips of a whole quantity at one state: the
    fallback for forward dynamics and for models too large to name terms."""
    from ..algorithms import crba, gravity_forces, nonlinear_effects

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
    yield "the gravity term g(q) missing", expected - g
    yield "gravity with the wrong sign", expected - 2.0 * g
    if np.any(v):
        yield "the Coriolis/centrifugal term C(q, q̇) q̇ halved", expected - 0.5 * cv
        yield "the Coriolis/centrifugal term C(q, q̇) q̇ missing", expected - cv
        yield "the Coriolis/centrifugal term C(q, q̇) q̇ doubled", expected + cv


def _explains(mine, expected, predicted, index, tolerance: float) -> bool:
    """``predicted`` gives the user's (wrong) entry at every state."""
    return all(abs(m[index] - p[index]) <= tolerance * max(1.0, abs(y[index]))
               for m, y, p in zip(mine, expected, predicted, strict=True))


def _transposed(mine, expected, index, tolerance: float) -> bool:
    """Entry ``(i, j)`` is wrong where its mirror ``(j, i)`` is right (``M`` is symmetric)."""
    if len(index) != 2 or index[0] == index[1]:
        return False
    i, j = index
    return all(abs(m[j, i] - y[i, j]) <= tolerance * max(1.0, abs(y[i, j]))
               < abs(m[i, j] - y[i, j]) for m, y in zip(mine, expected, strict=True))


def name_slips(quantity, model, record, states, mine, expected, entries, points,
               tolerance: float, most_dof: int, symbol: str) -> None:
    """Fill ``entry.slips`` of every differing entry.

    Term by term (:class:`Terms`) for M, h and tau of models of at most
    ``most_dof`` DoF with a symbolic ``record``; otherwise (``record`` None: mimic
    joints) the slips of the whole quantity.  ``points`` are
    the arguments of the formulas at each state (``q, q̇, q̈`` and the parameter
    values ``mine`` and ``expected`` were evaluated at).
    """
    if not entries:
        return
    terms = None
    if record is not None and quantity != "forward_dynamics" and 0 < model.nv <= most_dof:
        try:
            terms = Terms.of(record, quantity)
        except ModelError:      # a model without a symbolic record (mimic joints)
            terms = None
    if terms is not None:
        terms.name(points, mine, expected, entries, tolerance)
    else:
        per_state = [dict(whole_quantity_slips(quantity, model, s, y))
                     for s, y in zip(states, expected, strict=True)]
        for entry in entries:
            entry.slips += [name for name in per_state[0] if _explains(
                mine, expected, [p[name] for p in per_state], entry.index, tolerance)]
    for entry in entries:
        if _transposed(mine, expected, entry.index, tolerance):
            i, j = entry.index
            entry.slips.append(f"a swapped index (transpose): {symbol} is symmetric and yours "
                               f"is not; your entry [{j}, {i}] is right, so the term of "
                               f"[{i}, {j}] has a transposed factor (or fill {symbol} from "
                               f"one triangle)")
    # a slip of the whole quantity that explains every entry is said once more, as such
    if len(entries) == mine[0].size:
        common = set(entries[0].slips).intersection(*(e.slips for e in entries[1:]))
        for entry in entries:
            entry.slips = [s + (" (in every entry)" if s in common else "")
                           for s in entry.slips]
