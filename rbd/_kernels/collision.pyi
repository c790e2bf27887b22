"""Type stub for ``rbd._kernels.collision``.

The C function ``collide_into`` and the structs ``CollisionC``, ``GeomC``, ``PairC`` are
declared in ``collision.pxd`` for compiled callers; Python code builds a
:class:`CollisionModel` through
:func:`rbd.constraints.collision.compiled_collision`
and calls :func:`rbd.collide`.
"""

from collections.abc import Sequence
from typing import Any

from numpy.typing import ArrayLike

class CollisionModel:
    """The static pair table of a set of geoms, in C."""

    def __init__(
        self, kind: ArrayLike, body: ArrayLike, bounded: ArrayLike, size: ArrayLike,
        pose: ArrayLike, margin: ArrayLike, gap: ArrayLike, rbound: ArrayLike, half: ArrayLike,
        pair_geom: ArrayLike, pair_boxed: ArrayLike, pair_condim: ArrayLike,
        pair_friction: ArrayLike, pair_solref: ArrayLike, pair_solreffriction: ArrayLike,
        pair_solimp: ArrayLike, pair_margin: ArrayLike, pair_gap: ArrayLike,
        sweep: int = -1, hull: Sequence[Any] | None = None, multiccd: bool = True,
    ) -> None: ...
    @staticmethod
    def routine_kinds(nkinds: int = 8) -> dict[tuple[int, int], int]: ...
    @property
    def max_contacts(self) -> int: ...
    @property
    def npairs(self) -> int: ...
    @property
    def nunsupported(self) -> int: ...
    @property
    def nbodies(self) -> int: ...
    def table(self) -> list[tuple[int, int]]: ...
    def collide(
        self, R: ArrayLike, p: ArrayLike, capacity: int = -1
    ) -> tuple[Any, ...] | list[tuple[Any, ...]]: ...
    def _time_into(self, R: ArrayLike, p: ArrayLike, repeat: int = 1000) -> float: ...

class ContactArrays:
    """N contact sets of ``capacity`` contacts each, as NumPy arrays."""

    def __init__(self, N: int, capacity: int) -> None: ...
