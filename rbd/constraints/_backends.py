"""Which rendering of the contact pipeline runs: the readable modules or their compiled twins.

``backend`` is :func:`rbd.forward`'s argument: ``None`` (the kernels when they
are built), ``"kernel"`` or ``"reference"`` (:func:`rbd._backend.resolve`).
The twins (``rbd/_kernels/solver_newton.pyx``, ``solver_pgs.pyx``) take the
same arguments and return the same values as the modules of this package.
"""

from __future__ import annotations

import functools

from .._backend import resolve


def solvers(backend: str | None = None):
    """``(solve_newton, solve_pgs)`` of the backend."""
    if resolve(backend) == "kernel":
        from .._kernels import solver_newton, solver_pgs
    else:
        from . import solver_newton, solver_pgs
    return solver_newton.solve_newton, solver_pgs.solve_pgs


def pair_functions(table: dict, backend: str | None = None) -> dict:
    """The narrow phase's pair routines: ``table`` (the readable routines, keyed by kind
    pair, :data:`.collision.PAIR_FUNCTIONS`) or, on the kernel backend, each routine's
    compiled twin of the same name where there is one."""
    if resolve(backend) != "kernel":
        return table
    return _compiled_pairs(tuple(table.items()))


@functools.cache
def _compiled_pairs(items: tuple) -> dict:
    from .._kernels import collision_box, collision_primitive

    compiled = {**vars(collision_primitive), **vars(collision_box)}
    return {key: compiled.get(f.__name__, f) for key, f in items}


@functools.cache
def readable_only(kinds: tuple, keys: frozenset) -> frozenset:
    """The kind pairs of ``keys`` (those with a readable routine) that the compiled collision
    stage has no routine for (``CollisionModel.routine_kinds`` over ``kinds``, the kind
    names in code order); all of them when the kernels are not built.  Found once per
    process (the kernels are built or not for good)."""
    from .._backend import has_kernels

    if not has_kernels():
        return keys
    from .._kernels.collision import CollisionModel

    compiled = {(kinds[a], kinds[b]) for a, b in CollisionModel.routine_kinds(len(kinds))}
    return keys - compiled
