"""The math backend of :mod:`rbd.geometry`: one formula, evaluated on floats or on sympy.

Given floats the shapes compute with NumPy arrays; given sympy expressions (a
coordinate, or a shape parameter such as a symbolic radius) they compute with
sympy matrices built with ``sympy.sin``, ``sympy.sqrt``, ... .  :func:`math_for`
picks the backend from the arguments, or from ``lib="numpy"`` / ``lib="sympy"``
(the modules themselves are accepted too).  sympy is imported only when the
symbolic backend is first asked for.

The helpers below the backends (unit vectors, 2×2 inverses, derivatives of
``cos`` and ``sin``, input checks) are shared by the curves and surfaces.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import InputError


class _NumpyMath:
    """Scalars are floats, vectors ``(3,)`` arrays, matrices 2-D arrays."""

    name = "numpy"
    sin = staticmethod(np.sin)
    cos = staticmethod(np.cos)
    sqrt = staticmethod(np.sqrt)
    pi = np.pi

    @staticmethod
    def vector(x, y, z) -> np.ndarray:
        return np.array([x, y, z], dtype=float)

    @staticmethod
    def constant(values) -> np.ndarray:
        return np.array(values, dtype=float)

    @staticmethod
    def cross(a, b) -> np.ndarray:
        return np.array([a[1] * b[2] - a[2] * b[1],
                         a[2] * b[0] - a[0] * b[2],
                         a[0] * b[1] - a[1] * b[0]])

    @staticmethod
    def dot(a, b):
        return a @ b

    @staticmethod
    def matrix(rows) -> np.ndarray:
        return np.array(rows, dtype=float)

    @staticmethod
    def matvec(A, x) -> np.ndarray:
        return A @ x

    @staticmethod
    def frame(x, y, z, o) -> np.ndarray:
        E = np.eye(4)
        E[:3, 0], E[:3, 1], E[:3, 2], E[:3, 3] = x, y, z, o
        return E


class _SympyMath:
    """Scalars are sympy expressions, vectors 3×1 ``sympy.Matrix``."""

    name = "sympy"

    def __init__(self):
        import sympy

        self._sp = sympy
        self.sin, self.cos, self.sqrt, self.pi = sympy.sin, sympy.cos, sympy.sqrt, sympy.pi

    def vector(self, x, y, z):
        return self._sp.Matrix([x, y, z])

    def constant(self, values):
        return self._sp.Matrix(list(values))

    @staticmethod
    def cross(a, b):
        return a.cross(b)

    @staticmethod
    def dot(a, b):
        return a.dot(b)

    def matrix(self, rows):
        return self._sp.Matrix(rows)

    def matvec(self, A, x):
        return self._sp.Matrix(A) * x

    def frame(self, x, y, z, o):
        E = self._sp.eye(4)
        E[:3, 0], E[:3, 1], E[:3, 2], E[:3, 3] = x, y, z, o
        return E

    def exact(self, x):
        """A float as a sympy number: integral values become exact integers (0, ±1)."""
        x = float(x)
        return self._sp.Integer(int(x)) if x.is_integer() else self._sp.Float(x)

    def polynomial(self, terms):
        """``Σ c · monomial`` over ``(c, monomial)`` pairs, zero coefficients left out."""
        return self._sp.Add(*[self.exact(c) * m for c, m in terms if c != 0])


NUMPY = _NumpyMath()
_SYMPY: _SympyMath | None = None


def is_symbolic(value) -> bool:
    """Whether ``value`` (a scalar, array or nested sequence) holds a sympy object."""
    if type(value).__module__.split(".")[0] == "sympy":
        return True
    if isinstance(value, np.ndarray) and value.dtype == object:
        return any(is_symbolic(v) for v in value.flat)
    if isinstance(value, list | tuple):
        return any(is_symbolic(v) for v in value)
    return False


def math_for(values: Sequence, lib=None):
    """The backend for ``values``: sympy if any is symbolic or ``lib`` asks for it."""
    global _SYMPY
    name = getattr(lib, "__name__", lib)
    if name not in (None, "numpy", "sympy"):
        raise InputError(f"lib must be 'numpy', 'sympy' or None, got {lib!r}")
    if name == "sympy" or (name is None and any(is_symbolic(v) for v in values)):
        if _SYMPY is None:
            _SYMPY = _SympyMath()
        return _SYMPY
    return NUMPY


def unit(L, a):
    """``a / |a|`` in backend ``L``."""
    return a / L.sqrt(L.dot(a, a))


def det2(A):
    """Determinant of a 2×2 matrix."""
    return A[0, 0] * A[1, 1] - A[0, 1] * A[1, 0]


def inv2(L, A):
    """Inverse of a 2×2 matrix in backend ``L``."""
    d = det2(A)
    return L.matrix([[A[1, 1] / d, -A[0, 1] / d], [-A[1, 0] / d, A[0, 0] / d]])


def dcos(c, s, k: int):
    """:math:`d^k/dt^k \\cos t` from ``c = cos t``, ``s = sin t``."""
    return (c, -s, -c, s)[k % 4]


def dsin(c, s, k: int):
    """:math:`d^k/dt^k \\sin t` from ``c = cos t``, ``s = sin t``."""
    return (s, c, -s, -c)[k % 4]


def orders(order: int) -> list[tuple[int, int]]:
    """The keys ``(i, j)`` of the partial derivatives with ``i + j <= order``."""
    return [(i, k - i) for k in range(order + 1) for i in range(k + 1)]


def vector3(value, what: str):
    """A 3-vector of numbers (float array) or of sympy expressions (object array)."""
    out = points(value, None, what)
    if out.shape != (3,):
        raise InputError(f"{what} must be a 3-vector, got shape {out.shape}")
    return out


def points(value: Any, shape, what: str) -> np.ndarray:
    """An array of finite numbers (float) or sympy expressions (object), of ``shape`` if given."""
    if is_symbolic(value):
        out = np.array(value, dtype=object)
    else:
        try:
            out = np.array(value, dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"{what} must be numeric, got {value!r}") from None
        if not np.all(np.isfinite(out)):
            raise InputError(f"{what} must be finite")
    if shape is not None and out.shape != shape:
        raise InputError(f"{what} must have shape {shape}, got {out.shape}")
    return out
