r"""Polynomials in sines and cosines, reduced by :math:`\sin^2 x + \cos^2 x = 1` at every product.

The reference recursions multiply joint transforms whose entries are
polynomials in :math:`\cos q_i`, :math:`\sin q_i`, the joint positions, the
velocities and the model's parameters.  Carried as sympy trees these products
nest and grow, and ``sympy.simplify`` of the result takes minutes for a
four-link chain.  Here every scalar is an element of a polynomial ring over the
rationals whose generators are those atoms, and every product is brought to the
normal form in which no :math:`\sin x` appears squared
(:math:`\sin^2 x \to 1 - \cos^2 x`; the polynomials :math:`s^2 + c^2 - 1` of
distinct angles have coprime leading terms, so they form a Gröbner basis and
the normal form is unique).  Equal formulas therefore have equal normal forms:
cancellations happen as the recursion runs, and the results need no
simplification to be zero where they are zero.

Floats of a numeric model enter as the decimal rationals that print as them
(``0.1`` as ``1/10``), and leave as floats again.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import sympy
from sympy.polys.domains import QQ
from sympy.polys.rings import ring as _ring

__all__ = ["TrigRing", "TrigPoly"]

_SORT_KEY = sympy.core.basic._args_sortkey if hasattr(sympy.core.basic, "_args_sortkey") \
    else sympy.default_sort_key


def _atoms(expr, found: dict) -> None:
    """Collect the atoms of ``expr``: the factors that are not sums, products or powers by
    positive integers (symbols, ``cos(x)``, ``sin(x)``, ``1/m``, ``sqrt(k)``, ...)."""
    if expr.is_Number:
        return
    if expr.is_Add or expr.is_Mul:
        for arg in expr.args:
            _atoms(arg, found)
    elif expr.is_Pow and expr.exp.is_Integer and expr.exp > 0:
        _atoms(expr.base, found)
    else:
        found.setdefault(expr, None)


def _rational(x) -> sympy.Rational:
    """A float as the decimal rational that prints as it (``0.1 → 1/10``)."""
    return sympy.Rational(repr(float(x)))


class TrigRing:
    """The ring of polynomials in the atoms of some formulas, with ``sin² x → 1 − cos² x``.

    Parameters
    ----------
    formulas : iterable of sympy expressions
        Every formula that will be converted (:meth:`element`); their atoms
        become the generators, ``cos(x)`` and ``sin(x)`` of one argument a pair.
    """

    def __init__(self, formulas: Iterable):
        found: dict = {}
        for f in formulas:
            _atoms(sympy.sympify(f), found)
        atoms = sorted(found, key=sympy.default_sort_key)
        self.atoms = atoms
        self.gens = [sympy.Dummy(f"x{k}") for k in range(len(atoms))]
        self._to_gen = dict(zip(atoms, self.gens, strict=True))
        self.had_floats = False
        if atoms:
            self.ring, *ring_gens = _ring(self.gens, QQ)
        else:   # a ring needs a generator: a spare one that never appears
            self.ring, *ring_gens = _ring([sympy.Dummy("x")], QQ)
        index = {a: k for k, a in enumerate(atoms)}
        # (position of sin x, position of cos x) for every argument x with both
        self.pairs = [(index[a], index[sympy.cos(a.args[0])]) for a in atoms
                      if isinstance(a, sympy.sin) and sympy.cos(a.args[0]) in index]
        self._one_minus_cos2 = {s: self.ring.one - ring_gens[c] ** 2 for s, c in self.pairs}
        self._memo: dict = {}
        self._powers: dict = {}

    # --- conversion -------------------------------------------------------------------------
    def element(self, expr) -> TrigPoly:
        """``expr`` (a number or a formula in the ring's atoms) as a reduced element."""
        key = expr if isinstance(expr, sympy.Basic) else float(expr)
        try:
            return self._memo[key]
        except KeyError:
            pass
        e = sympy.sympify(expr)
        floats = e.atoms(sympy.Float)
        if floats:
            self.had_floats = True
            e = e.xreplace({f: _rational(f) for f in floats})
        value = TrigPoly(self, self.reduce(self.ring.from_expr(e.xreplace(self._to_gen))
                                           if not e.is_Number else self.ring(e)))
        self._memo[key] = value
        return value

    def array(self, a) -> np.ndarray:
        """An array of numbers or formulas as an object array of elements."""
        a = np.asarray(a, dtype=object)
        return np.array([self.element(x) for x in a.ravel()], dtype=object).reshape(a.shape)

    def expr(self, x) -> sympy.Expr:
        """An element (or a number) back as a sympy formula in the original atoms.

        The terms are assembled in sympy's canonical argument order directly
        (``Mul._from_args``, ``Add._from_args``): the atoms are distinct, so
        nothing is left to combine, and the result is the object that
        ``sympy.Add(*terms)`` would build, at a fraction of the cost.
        """
        if not isinstance(x, TrigPoly):
            return sympy.nsimplify(x) if isinstance(x, float) and x.is_integer() else \
                sympy.sympify(x)
        terms = []
        for monom, coeff in x.p.terms():
            c = sympy.Rational(coeff.numerator, coeff.denominator)
            if self.had_floats and not c.is_Integer:
                c = sympy.Float(c, 15)
            factors = [self._power(k, e) for k, e in enumerate(monom) if e]
            if not factors:
                terms.append(c)
                continue
            factors.sort(key=_SORT_KEY)
            if c != 1:
                factors.insert(0, c)
            terms.append(factors[0] if len(factors) == 1 else
                         sympy.Mul._from_args(factors, is_commutative=True))
        if not terms:
            return sympy.Integer(0)
        if len(terms) == 1:
            return terms[0]
        numbers = [t for t in terms if t.is_Number]
        others = sorted((t for t in terms if not t.is_Number), key=_SORT_KEY)
        return sympy.Add._from_args(numbers + others, is_commutative=True)

    def _power(self, k: int, e: int):
        key = (k, e)
        try:
            return self._powers[key]
        except KeyError:
            value = self._powers[key] = self.atoms[k] if e == 1 else sympy.Pow(self.atoms[k], e)
            return value

    # --- the normal form --------------------------------------------------------------------
    def reduce(self, p):
        """``p`` with every ``sin² x`` replaced by ``1 − cos² x``.

        A term with ``sin²`` of the angles in ``K`` becomes
        ``Σ_{T ⊆ K} (−1)^{|T|} Π_{i∈T} cos² x_i`` times the rest, repeated while a
        sine degree is 2 or more (the factors of a product are reduced, so there it
        is one step; a converted formula may hold any power).
        """
        if not self.pairs:
            return p
        pairs = self.pairs
        bad = [m for m in p if any(m[s] >= 2 for s, _ in pairs)]
        if not bad:
            return p
        out = p.copy()
        zero = self.ring.domain.zero
        for monom in bad:
            coeff = out.pop(monom)
            expansions = [(list(monom), coeff)]
            for s, c in pairs:
                while any(m[s] >= 2 for m, _ in expansions):
                    grown = []
                    for m, k in expansions:
                        if m[s] < 2:
                            grown.append((m, k))
                            continue
                        m = m.copy()
                        m[s] -= 2
                        grown.append((m, k))
                        m2 = m.copy()
                        m2[c] += 2
                        grown.append((m2, -k))
                    expansions = grown
            for m, k in expansions:
                key = tuple(m)
                value = out.get(key, zero) + k
                if value:
                    out[key] = value
                else:
                    out.pop(key, None)
        return out


class TrigPoly:
    """One reduced element of a :class:`TrigRing`: a scalar for the reference recursions.

    Supports ``+``, ``-``, ``*`` with elements and numbers, and division by numbers.
    """

    __slots__ = ("R", "p")

    def __init__(self, R: TrigRing, p):
        self.R, self.p = R, p

    def _other(self, x):
        if isinstance(x, TrigPoly):
            return x.p
        if isinstance(x, int):
            return self.R.ring(x)
        return self.R.element(x).p

    def __add__(self, x):
        return TrigPoly(self.R, self.p + self._other(x))

    __radd__ = __add__

    def __sub__(self, x):
        return TrigPoly(self.R, self.p - self._other(x))

    def __rsub__(self, x):
        return TrigPoly(self.R, self._other(x) - self.p)

    def __neg__(self):
        return TrigPoly(self.R, -self.p)

    def __pos__(self):
        return self

    def __mul__(self, x):
        if isinstance(x, int) and x in (0, 1):
            return self if x == 1 else TrigPoly(self.R, self.R.ring.zero)
        other = self._other(x)
        if not other or not self.p:
            return TrigPoly(self.R, self.R.ring.zero)
        return TrigPoly(self.R, self.R.reduce(self.p * other))

    __rmul__ = __mul__

    def __truediv__(self, x):
        if isinstance(x, TrigPoly):
            if x.p.is_ground:
                x = x.p.LC
            else:
                raise TypeError("division by a non-constant polynomial")
        return TrigPoly(self.R, self.p * QQ.convert(sympy.Rational(x) if isinstance(x, int)
                                                    else _rational(x) if isinstance(x, float)
                                                    else sympy.nsimplify(x)))

    def __eq__(self, x):
        return self.p == self._other(x)

    def __hash__(self):
        return hash(self.p)

    def __bool__(self):
        return bool(self.p)

    def __repr__(self):
        return f"TrigPoly({self.R.expr(self)})"
