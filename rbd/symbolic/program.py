r"""Straight-line programs of sympy scalars: the symbolic engine behind generated code.

A :class:`Program` records a computation the way Guenter's D* keeps an
expression graph: every scalar a recursion step produces is bound to its own
symbol (``x_k = e_k`` with ``e_k`` a small expression of earlier symbols and
the inputs), identical expressions are bound once (hash-consing), and the
outputs are expressions of those symbols.  On that graph

* :meth:`Program.coefficient` extracts the coefficient of an input in outputs
  that are linear in it (forward differentiation along the tape; Guenter & Lee
  use it to read the mass matrix off the equations of motion, GL (14));
* :meth:`Program.substitute` sets inputs to constants and propagates them
  (GL (14): the bias forces are the equations at :math:`\ddot q = 0`);
* :meth:`Program.optimized` removes dead code and runs common-subexpression
  elimination across all assignments;
* :func:`count_operations` counts additions and multiplications;
* :meth:`Program.c_function` and :meth:`Program.python_function` print it.

Counting rules (:func:`count_operations`): a subtraction is an addition, a
negation is free, a division is a multiplication, :math:`x^n` costs
:math:`n-1` multiplications (:math:`x^{-n}` one more, for the division),
calls of ``sin``, ``cos``, ``sqrt``, ... are counted apart, and every node of
the program counts (each assignment and each output expression).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import sympy

__all__ = ["Program", "OperationCount", "count_operations"]


# --- operation counting -----------------------------------------------------------------
@dataclass
class OperationCount:
    """Arithmetic operations of a program (see the module docstring for the rules)."""

    additions: int = 0
    multiplications: int = 0
    functions: Counter = field(default_factory=Counter)

    def as_dict(self, detail: bool = False) -> dict:
        out = {"additions": self.additions, "multiplications": self.multiplications}
        if detail:
            out["functions"] = dict(self.functions)
        return out

    def __add__(self, other: OperationCount) -> OperationCount:
        return OperationCount(self.additions + other.additions,
                              self.multiplications + other.multiplications,
                              self.functions + other.functions)


def _count(e: sympy.Expr, tally: OperationCount) -> None:
    if e.is_Atom:
        return
    if e.is_Add:
        tally.additions += len(e.args) - 1
        for a in e.args:
            _count(a, tally)
    elif e.is_Mul:
        coeff, factors = e.as_coeff_mul()
        numerator = 0 if coeff in (1, -1) else 1
        denominator = 0
        for f in factors:
            if f.is_Pow and f.exp.is_Integer and f.exp < 0:
                denominator += 1
                _count_power(f.base, -int(f.exp), tally)
            else:
                numerator += 1
                _count(f, tally)
        tally.multiplications += max(numerator - 1, 0) + denominator
    elif e.is_Pow:
        if e.exp.is_Integer:
            k = int(e.exp)
            _count_power(e.base, abs(k), tally)
            tally.multiplications += 1 if k < 0 else 0
        else:
            tally.functions["sqrt" if abs(e.exp) == sympy.S.Half else "pow"] += 1
            tally.multiplications += 1 if e.exp.is_negative else 0
            _count(e.base, tally)
    elif isinstance(e, sympy.Function):
        tally.functions[type(e).__name__] += 1
        for a in e.args:
            _count(a, tally)
    else:
        for a in e.args:
            _count(a, tally)


def _count_power(base: sympy.Expr, k: int, tally: OperationCount) -> None:
    tally.multiplications += k - 1
    _count(base, tally)


def count_operations(exprs: Iterable[sympy.Expr]) -> OperationCount:
    """Operation count of a collection of expressions (each counted in full)."""
    tally = OperationCount()
    for e in exprs:
        _count(sympy.sympify(e), tally)
    return tally


def _diff(e: sympy.Expr, s: sympy.Symbol) -> sympy.Expr:
    """``∂e/∂s`` for the sums, products and integer powers of a program (sympy otherwise)."""
    if e == s:
        return sympy.Integer(1)
    if e.is_Atom:
        return sympy.Integer(0)
    if e.is_Add:
        return sympy.Add(*[_diff(a, s) for a in e.args if s in a.free_symbols])
    if e.is_Mul:
        args = e.args
        return sympy.Add(*[sympy.Mul(*args[:k], _diff(a, s), *args[k + 1:])
                           for k, a in enumerate(args) if s in a.free_symbols])
    if e.is_Pow and e.exp.is_Integer:
        return e.exp * e.base ** (e.exp - 1) * _diff(e.base, s)
    return e.diff(s)


def _by_name(symbols: Iterable[sympy.Symbol]) -> list[sympy.Symbol]:
    """``symbols`` sorted by name: an order that is the same in every process.

    A set of symbols iterates in hash order, and string hashes change from one
    process to the next (``PYTHONHASHSEED``).  Terms summed in that order give
    sympy's float coefficients different roundings (it adds the coefficients of
    like terms as it meets them, and float addition is not associative), so the
    generated source, and the code cache key derived from it, would change too.
    """
    return sorted(symbols, key=str)


# --- printers -----------------------------------------------------------------------------
class _Printer:
    """Prints the expressions of a program as C or Python, operation for operation.

    Each printed operator is one counted operation (:func:`count_operations`):
    integer powers are written out as products, a negative coefficient becomes
    a subtraction or a unary minus, and terms are not reordered.
    """

    def __init__(self, language: str):
        self.c = language == "c"
        self.functions = ({"Abs": "fabs"} if self.c else {"Abs": "abs"})

    def number(self, e) -> str:
        text = repr(float(e))
        return f"({text})" if text.startswith("-") else text

    def __call__(self, e) -> str:
        if e.is_Symbol:
            return e.name
        if e.is_Number:
            return self.number(e)
        if e.is_Add:
            return self.add(e)
        if e.is_Mul:
            return self.mul(e)
        if e.is_Pow:
            return self.power(e)
        if isinstance(e, sympy.Function):
            name = type(e).__name__
            name = self.functions.get(name, name)
            args = ", ".join(self(a) for a in e.args)
            return f"{name}({args})" if self.c else f"math.{name}({args})"
        raise TypeError(f"cannot print {type(e).__name__}: {e}")

    def add(self, e) -> str:
        text = ""
        for k, term in enumerate(e.args):
            coeff, rest = term.as_coeff_Mul()
            if k and coeff.is_negative:
                text += " - " + self.mul_parts(-coeff, rest)
            elif k:
                text += " + " + self(term)
            else:
                text = self(term)
        return text

    def factor(self, e) -> str:
        return f"({self(e)})" if e.is_Add or (e.is_Number and e.is_negative) else self(e)

    def mul_parts(self, coeff, rest) -> str:
        if rest == 1:
            return self.number(coeff)
        if coeff == 1:
            return self(rest) if not rest.is_Add else f"({self(rest)})"
        return f"{self.number(coeff)}*{self.factor(rest)}"

    def mul(self, e) -> str:
        coeff, factors = e.as_coeff_mul()
        numerator = [] if coeff in (1, -1) else [self.number(abs(coeff))]
        denominator = []
        for f in factors:
            if f.is_Pow and f.exp.is_Integer and f.exp < 0:
                denominator.append(self.product(f.base, -int(f.exp)))
            else:
                numerator.append(self.factor(f))
        text = "*".join(numerator) if numerator else "1.0"
        if denominator:
            below = "*".join(denominator)
            text += f"/({below})" if "*" in below else f"/{below}"
        return f"-{text}" if coeff.is_negative else text

    def product(self, base, k: int) -> str:
        b = self.factor(base) if not (base.is_Mul or base.is_Pow) else f"({self(base)})"
        return "*".join([b] * k) if k > 1 else b

    def power(self, e) -> str:
        base, k = e.base, e.exp
        if k.is_Integer:
            k = int(k)
            if k > 0:
                return self.product(base, k)
            below = self.product(base, -k)
            return f"1.0/({below})" if "*" in below else f"1.0/{below}"
        if k == sympy.S.Half:
            return f"sqrt({self(base)})" if self.c else f"math.sqrt({self(base)})"
        if self.c:
            return f"pow({self(base)}, {self(k)})"
        simple = base.is_Symbol or isinstance(base, sympy.Function) or (
            base.is_Number and not base.is_negative)
        return f"{self(base) if simple else f'({self(base)})'}**({self(k)})"


_C = _Printer("c")
_PY = _Printer("python")


# --- the program ------------------------------------------------------------------------
class Program:
    """A straight-line program: named input arrays, bound scalars, named output arrays.

    Parameters
    ----------
    inputs : sequence of (str, int)
        Input array names and lengths; input ``k`` of array ``q`` is the symbol
        ``q[k]`` (which is also how the printers address it).
    prefix : str
        Name prefix of the bound symbols (``x0, x1, ...``).
    """

    def __init__(self, inputs: Sequence[tuple[str, int]], prefix: str = "x"):
        self.inputs = {name: [sympy.Symbol(f"{name}[{k}]") for k in range(n)]
                       for name, n in inputs}
        self.assignments: list[tuple[sympy.Symbol, sympy.Expr]] = []
        self.outputs: dict[str, list[sympy.Expr]] = {}
        self._prefix = prefix
        self._next = 0
        self._known: dict[sympy.Expr, sympy.Symbol] = {}

    def __getitem__(self, name: str) -> list[sympy.Symbol]:
        return self.inputs[name]

    def __len__(self) -> int:
        return len(self.assignments)

    # --- building -----------------------------------------------------------------------
    @staticmethod
    def _trivial(e: sympy.Expr) -> bool:
        if e.is_Atom:
            return True
        return bool(e.is_Mul and len(e.args) == 2 and e.args[0] == -1 and e.args[1].is_Atom)

    def _new(self, e: sympy.Expr) -> sympy.Expr:
        if self._trivial(e):
            return e
        known = self._known.get(e)
        if known is not None:
            return known
        x = sympy.Symbol(f"{self._prefix}{self._next}")
        self._next += 1
        self.assignments.append((x, e))
        self._known[e] = x
        return x

    def _bind_calls(self, e: sympy.Expr) -> sympy.Expr:
        if e.is_Atom:
            return e
        args = tuple(self._bind_calls(a) for a in e.args)
        if args != e.args:
            e = e.func(*args)
        if isinstance(e, sympy.Function) or (e.is_Pow and not e.exp.is_Integer):
            return self._new(e)
        return e

    def bind(self, e) -> sympy.Expr:
        """Bind ``e`` to a symbol (reusing an identical earlier one); return the symbol.

        Numbers, symbols and negated symbols are returned unchanged.  Function
        calls inside ``e`` (``sin``, ``cos``, ``sqrt``, ...) are bound first, so
        each is evaluated once.
        """
        return self._new(self._bind_calls(sympy.sympify(e)))

    def bind_all(self, exprs: Iterable, cse: bool = True) -> list[sympy.Expr]:
        """Bind many expressions, sharing their common subexpressions first."""
        exprs = [sympy.sympify(e) for e in exprs]
        if not cse:
            return [self.bind(e) for e in exprs]
        replacements, reduced = sympy.cse(exprs, symbols=sympy.numbered_symbols("_cse"),
                                          order="none")
        sub: dict = {}
        for s, e in replacements:
            sub[s] = self.bind(e.xreplace(sub))
        return [self.bind(e.xreplace(sub)) for e in reduced]

    def bind_matrix(self, M: sympy.MatrixBase, cse: bool = False) -> sympy.Matrix:
        """Bind every entry of a matrix."""
        return sympy.Matrix(M.rows, M.cols, self.bind_all(list(M), cse=cse))

    def set_output(self, name: str, exprs: Iterable) -> None:
        """Declare an output array (its entries may be any expressions of bound symbols)."""
        self.outputs[name] = [sympy.sympify(e) for e in exprs]

    # --- transformations ---------------------------------------------------------------------
    def copy(self) -> Program:
        new = Program([], self._prefix)
        new.inputs = dict(self.inputs)
        new.assignments = list(self.assignments)
        new.outputs = {k: list(v) for k, v in self.outputs.items()}
        new._known = dict(self._known)
        new._next = self._next
        return new

    def derivatives(self, var: sympy.Symbol, upto: int | None = None, start: int = 0
                    ) -> dict[sympy.Symbol, sympy.Expr]:
        """Append ``d x_k / d var`` for every bound ``x_k`` that depends on ``var``.

        Forward differentiation along the tape (assignments ``start`` to
        ``upto``: all by default; the earlier ones must not depend on ``var``);
        returns ``{symbol: derivative}`` (bound) for the symbols with a
        non-zero derivative, ``var`` included.
        """
        d: dict[sympy.Symbol, sympy.Expr] = {var: sympy.Integer(1)}
        for x, e in self.assignments[start:upto]:
            deps = [s for s in _by_name(e.free_symbols) if s in d]
            if deps:
                de = self.bind(sympy.Add(*[_diff(e, s) * d[s] for s in deps]))
                if de != 0:
                    d[x] = de
        return d

    def derivative_of(self, e: sympy.Expr, d: dict) -> sympy.Expr:
        """``de/dvar`` of an expression of bound symbols, given ``d = derivatives(var)``."""
        e = sympy.sympify(e)
        return self.bind(sympy.Add(*[_diff(e, s) * d[s] for s in _by_name(e.free_symbols)
                                     if s in d]))

    def coefficient(self, exprs: Sequence[sympy.Expr], var: sympy.Symbol,
                    upto: int | None = None) -> list[sympy.Expr]:
        """Coefficients of ``var`` in ``exprs`` (which must be linear in ``var``).

        The result is exact at any value of ``var``; substitute ``var = 0``
        (:meth:`substitute`) to drop the parts that only look dependent on it.
        GL (14): ``M_ij`` is the coefficient of :math:`\\ddot q_j` in ``Q_i``.
        """
        d = self.derivatives(var, upto)
        return [self.derivative_of(e, d) for e in exprs]

    def substitute(self, values: dict[sympy.Symbol, sympy.Expr]) -> Program:
        """A new program with some inputs replaced by constants, propagated through.

        Assignments that become a number, a symbol or a repeat of an earlier one
        disappear; the others keep their names.
        """
        new = self.copy()
        new.assignments, new._known = [], {}
        sub = {k: sympy.sympify(v) for k, v in values.items()}
        for x, e in self.assignments:
            if not e.free_symbols.isdisjoint(sub):
                e = e.xreplace(sub)
                if self._trivial(e):
                    sub[x] = e
                    continue
            if e in new._known:
                sub[x] = new._known[e]
                continue
            new.assignments.append((x, e))
            new._known[e] = x
        new.outputs = {k: [o.xreplace(sub) for o in v] for k, v in self.outputs.items()}
        return new

    def only(self, outputs: Sequence[str]) -> Program:
        """A pruned copy computing only the named outputs."""
        new = self.copy()
        new.outputs = {k: new.outputs[k] for k in outputs}
        return new.pruned()

    def restricted(self, inputs: Sequence[str]) -> Program:
        """A copy taking only the named inputs (the others must no longer occur)."""
        dropped = {s for name in self.inputs if name not in inputs for s in self.inputs[name]}
        used = set().union(*(e.free_symbols for _, e in self.assignments),
                           *(e.free_symbols for v in self.outputs.values() for e in v))
        if dropped & used:
            raise ValueError(f"inputs {sorted(map(str, dropped & used))} are still used")
        new = self.copy()
        new.inputs = {k: self.inputs[k] for k in inputs}
        return new

    def import_program(self, other: Program, inputs: dict) -> dict[str, list[sympy.Expr]]:
        """Append ``other``'s assignments with its inputs replaced; return its outputs.

        ``inputs`` maps ``other``'s input names to sequences of expressions of
        this program.  Repeated work is shared through :meth:`bind`.
        """
        sub = {s: sympy.sympify(v) for name, values in inputs.items()
               for s, v in zip(other.inputs[name], values, strict=True)}
        for x, e in other.assignments:
            sub[x] = self.bind(e.xreplace(sub))
        return {k: [self.bind(o.xreplace(sub)) for o in v] for k, v in other.outputs.items()}

    def _ordered(self, assignments: dict, roots: Iterable[sympy.Expr]) -> list:
        """Assignments needed by ``roots``, dependencies first (iterative DFS).

        Symbols are visited in name order, not set order, so the same program
        prints the same source in every process (the code cache is keyed by it).
        """
        done: set = set()
        order: list = []
        for root in roots:
            stack = [(s, False) for s in _by_name(root.free_symbols) if s in assignments]
            while stack:
                s, expanded = stack.pop()
                if s in done:
                    continue
                if expanded:
                    done.add(s)
                    order.append((s, assignments[s]))
                    continue
                stack.append((s, True))
                stack.extend((t, False) for t in _by_name(assignments[s].free_symbols)
                             if t in assignments and t not in done)
        return order

    def pruned(self) -> Program:
        """A copy without the assignments no output needs (dead-code elimination)."""
        table = dict(self.assignments)
        index = {x: k for k, (x, _) in enumerate(self.assignments)}
        new = self.copy()
        keep = self._ordered(table, [e for v in self.outputs.values() for e in v])
        new.assignments = sorted(keep, key=lambda a: index[a[0]])
        new._known = {e: x for x, e in new.assignments}
        return new

    def optimized(self) -> Program:
        """Dead-code elimination then common-subexpression elimination over everything."""
        prog = self.pruned()
        names = [x for x, _ in prog.assignments]
        flat_outputs = [e for v in prog.outputs.values() for e in v]
        exprs = [e for _, e in prog.assignments] + flat_outputs
        replacements, reduced = sympy.cse(exprs, symbols=sympy.numbered_symbols("y"),
                                          order="none")
        table = dict(replacements)
        table.update(zip(names, reduced[:len(names)], strict=True))
        outputs = reduced[len(names):]
        new = self.copy()
        new.assignments = self._ordered(table, outputs)
        new._known = {e: x for x, e in new.assignments}
        k = 0
        for name, v in prog.outputs.items():
            new.outputs[name] = list(outputs[k:k + len(v)])
            k += len(v)
        return new

    # --- measuring and printing ----------------------------------------------------------------
    def operation_count(self, outputs: Sequence[str] | None = None) -> OperationCount:
        """Operations of the assignments and output expressions (as the program stands)."""
        names = list(self.outputs) if outputs is None else list(outputs)
        return count_operations([e for _, e in self.assignments]
                                + [e for n in names for e in self.outputs[n]])

    def c_function(self, name: str, body_suffix: str = "") -> str:
        """C definition ``static void name(const double* <inputs>, double* <outputs>)``."""
        args = [f"const double* {n}" for n in self.inputs] + [f"double* {n}" for n in self.outputs]
        lines = [f"static void {name}({', '.join(args)})", "{"]
        lines += [f"    const double {x} = {_C(e)};" for x, e in self.assignments]
        for out, exprs in self.outputs.items():
            lines += [f"    {out}[{k}] = {_C(e)};" for k, e in enumerate(exprs)]
        if body_suffix:
            lines.append(body_suffix)
        lines.append("}")
        return "\n".join(lines)

    def python_source(self, name: str) -> str:
        """Python source of ``def name(<inputs>) -> tuple of output lists``."""
        lines = [f"def {name}({', '.join(self.inputs)}):"]
        lines += [f"    {x} = {_PY(e)}" for x, e in self.assignments]
        results = ", ".join("[" + ", ".join(_PY(e) for e in exprs) + "]"
                            for exprs in self.outputs.values())
        lines.append(f"    return ({results},)")
        return "\n".join(lines)

    def python_function(self, name: str = "generated", math_module=math):
        """Compile :meth:`python_source` (our own printed sympy, no outside strings).

        ``math_module`` supplies ``sin``, ``cos``, ``sqrt``, ... (default :mod:`math`).
        """
        namespace = {"math": math_module}
        code = compile(self.python_source(name), f"<rbd.symbolic {name}>", "exec")
        exec(code, namespace)  # noqa: S102 - source printed from sympy expressions built here
        return namespace[name]
