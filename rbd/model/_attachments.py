"""What a model carries beside its tree: geometry (:mod:`rbd.model.geoms`) and bilateral
constraints (:mod:`rbd.constraints`), each added through the builder and checked at once."""

from __future__ import annotations

from ..errors import ModelError
from .geoms import Geom, placed_geom


class _Attachments:
    """The geoms and constraints of a :class:`~rbd.model.Model` (``_geoms``, ``_constraints``)."""

    def add_geom(self, name: str | Geom, body: int | str | None = None, kind: str = "sphere",
                 size=(0.0, 0.0, 0.0), pose=None, **fields) -> int:
        """Attach a shape (a name and :func:`rbd.model.geoms.make_geom`'s arguments, or a
        whole :class:`~rbd.model.geoms.Geom`) to ``body`` (None: the world); its index in
        :attr:`geoms`."""
        geom = placed_geom(self, name, body, kind, size, pose, fields)
        if geom.name in self._geoms:
            raise ModelError(f"duplicate geom name {geom.name!r}")
        self._geoms[geom.name] = geom
        return len(self._geoms) - 1

    @property
    def geoms(self) -> tuple[Geom, ...]:
        """The visual and collision shapes, :class:`~rbd.model.geoms.Geom` records (body frames)."""
        return tuple(self._geoms.values())

    def add_constraint(self, constraint) -> None:
        """Add a bilateral constraint (:mod:`rbd.constraints`) to :attr:`constraints`.

        It is resolved against the model at once, so a name the model lacks
        raises :class:`ModelError` here and the model is left unchanged.
        """
        if not callable(getattr(constraint, "resolve", None)):
            raise ModelError(f"add_constraint takes an rbd.constraints kind, got "
                             f"{type(constraint).__name__}")
        constraint.resolve(self._full_tree())
        self._constraints = (*self._constraints, constraint)

    @property
    def constraints(self) -> tuple:
        """The model's bilateral constraints (MJCF ``<equality>``, :meth:`add_constraint`)."""
        return self._constraints
