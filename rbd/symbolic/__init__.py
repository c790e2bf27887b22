"""Symbolic dynamics: joints as transforms, the Guenter–Lee Lagrangian, generated code.

* :class:`SymbolicJoint` — a joint given by a sympy 4×4 rigid motion ``G(q)``;
  ``S`` and ``Ṡ`` follow by differentiation (Si & Guenter, Eqs. 9 and 12).
* :func:`lagrangian` — Guenter & Lee's symbolic equations of motion of a
  tree: inverse dynamics, ``M`` by coefficient extraction, ``c`` by
  substitution (GL Eqs. 4–14), with operation counts and generated C.
* :mod:`~rbd.symbolic.frames` — joints from curve and surface frames (GL §5, Eq. 15);
  :mod:`~rbd.symbolic.rolling` — rolling without slip by multipliers (GL Eq. 16).
* :func:`equations_of_motion` — ``M(q)``, ``h(q, q̇)`` and ``g(q)`` as formulas,
  by running the reference CRBA and RNEA on sympy symbols; :class:`SymbolicModel`
  carries symbolic masses, lengths and inertias (:func:`planar_arm`,
  :func:`spatial_double_pendulum`).
* :mod:`~rbd.symbolic.trig` — polynomials in sines and cosines, reduced by
  ``sin² = 1 − cos²`` at every product: the normal form of those formulas;
  :mod:`~rbd.symbolic.slips` — the equations split into named terms, for
  :func:`rbd.testing.check_consistency`.
* :mod:`~rbd.symbolic.program` — the straight-line programs behind both;
  :mod:`~rbd.symbolic.build` — compilation into a private, hash-keyed cache.

The function :func:`lagrangian` shadows its module's name in this namespace;
the module itself is ``importlib.import_module("rbd.symbolic.lagrangian")``.
"""

from .build import CompilationError, InsecureCacheError, compiler_available
from .equations import (
    EquationsOfMotion,
    FormulaMatrix,
    ReadableSymbol,
    SymbolicModel,
    equations_of_motion,
    joint_symbols,
    planar_arm,
    spatial_double_pendulum,
)
from .joint import SymbolicJoint, joint_transform, twin, twist_columns
from .lagrangian import CompiledLagrangian, GuenterLee, lagrangian
from .program import OperationCount, Program, count_operations

__all__ = [
    "SymbolicJoint",
    "twin",
    "joint_transform",
    "twist_columns",
    "lagrangian",
    "GuenterLee",
    "CompiledLagrangian",
    "Program",
    "OperationCount",
    "count_operations",
    "CompilationError",
    "InsecureCacheError",
    "compiler_available",
    "equations_of_motion",
    "EquationsOfMotion",
    "FormulaMatrix",
    "ReadableSymbol",
    "joint_symbols",
    "SymbolicModel",
    "planar_arm",
    "spatial_double_pendulum",
]
