"""The records of the collision stage (:mod:`rbd.constraints.collision`): the body tree
the filters read, an explicit geom pair, the contact set, and MuJoCo's defaults.

Kept apart so that the stage and its compiled table read them from one place; import
them from :mod:`rbd.constraints.collision`, which re-exports them.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Hashable, Sequence
from typing import NamedTuple

import numpy as np

#: MuJoCo's defaults of the contact parameters of a geom and of an explicit pair.
DEFAULT_FRICTION = (1.0, 0.005, 0.0001)
DEFAULT_SOLREF = (0.02, 1.0)
DEFAULT_SOLIMP = (0.9, 0.95, 0.001, 0.5, 2.0)
#: MuJoCo's ``mjMINMU``: the smallest friction coefficient a contact gets.
MIN_FRICTION = 1e-5


@dataclasses.dataclass(frozen=True)
class BodyTree:
    """The bodies as collision filtering sees them.

    Attributes
    ----------
    names : tuple
        Body keys (the values of ``geom.body``) in body order; ``names[0]`` is
        ``None``, the world.
    parent : (nbodies,) ints
        Parent index of each body (-1 for the world).
    ndof : (nbodies,) ints
        Degrees of freedom of the joint of each body; a body with none is
        welded to its parent.
    """

    names: tuple
    parent: tuple
    ndof: tuple

    @property
    def weld(self) -> np.ndarray:
        """Index of the body each body is welded to (MuJoCo's ``body_weldid``)."""
        weld = np.zeros(len(self.names), dtype=int)
        for b in range(1, len(self.names)):
            weld[b] = b if self.ndof[b] > 0 else weld[self.parent[b]]
        return weld

    @classmethod
    def free(cls, keys: Sequence[Hashable]) -> BodyTree:
        """Bodies each with its own degrees of freedom, children of the world (no parent filter)."""
        names = (None, *dict.fromkeys(k for k in keys if k is not None))
        return cls(names, (-1,) + (0,) * (len(names) - 1), (0,) + (6,) * (len(names) - 1))


@dataclasses.dataclass(frozen=True)
class ContactPair:
    """An explicit geom pair (MJCF ``<contact><pair>``), with its own parameters."""

    geom1: int
    geom2: int
    condim: int = 3
    friction: tuple = (1.0, 1.0, 0.005, 0.0001, 0.0001)
    solref: tuple = DEFAULT_SOLREF
    solreffriction: tuple = (0.0, 0.0)
    solimp: tuple = DEFAULT_SOLIMP
    margin: float = 0.0
    gap: float = 0.0


class Contacts(NamedTuple):
    """The contact set: k contacts, in MuJoCo's order.

    Attributes
    ----------
    pos : (k, 3) ndarray
        Contact points, midway between the surfaces.
    frame : (k, 3, 3) ndarray
        Rows: normal (from geom 1 to geom 2), tangent 1, tangent 2.
    dist : (k,) ndarray
        Signed distances (negative: penetration).
    geom : (k, 2) int ndarray
        The geoms (indices into the geom list).
    condim : (k,) int ndarray
        1 (frictionless), 3 (sliding), 4 (+ torsion), 6 (+ rolling).
    friction : (k, 5) ndarray
        sliding, sliding, torsional, rolling, rolling.
    solref, solreffriction : (k, 2) ndarray
    solimp : (k, 5) ndarray
    includemargin : (k,) ndarray
        Distance below which the contact is active.
    exclude : (k,) bool ndarray
        True for a contact in the gap (detected, not active).
    unsupported : tuple of (int, int)
        Candidate geom pairs left out because no primitive routine handles them.
    """

    pos: np.ndarray
    frame: np.ndarray
    dist: np.ndarray
    geom: np.ndarray
    condim: np.ndarray
    friction: np.ndarray
    solref: np.ndarray
    solreffriction: np.ndarray
    solimp: np.ndarray
    includemargin: np.ndarray
    exclude: np.ndarray
    unsupported: tuple = ()

    def __len__(self) -> int:  # the number of contacts, not of fields
        return self.dist.shape[0]


def warn_unsupported(geoms, unsupported, stacklevel: int) -> None:
    """Warn of the candidate pairs ``(geom1, geom2)`` left out at a state
    (``Contacts.unsupported``)."""
    if unsupported:
        kinds = sorted({(geoms[i].kind, geoms[j].kind) for i, j in unsupported})
        warnings.warn(f"collide: no routine for geom kinds {kinds} at this state (height "
                      f"fields, meshes without a hull); {len(unsupported)} candidate "
                      "pair(s) left out (see Contacts.unsupported)", stacklevel=stacklevel + 1)
