"""The records of a built model: :class:`Body` and :class:`Frame` (read-only)."""

from __future__ import annotations

import numpy as np

from ..spatial import inertia_parts

__all__ = ["Body", "Frame"]


def _read_only(name: str, what: str):
    raise AttributeError(
        f"{what}.{name} is read-only: a model does not change once built; use the builder "
        "(Model.add_body, Model.set_joint_properties) or Model.replace_joint for a new model"
    )


class Body:
    """One body of the tree and its parent joint (read-only)."""

    __slots__ = ("name", "parent", "joint", "joint_name", "X_tree", "inertia", "mass",
                 "com", "I_com")

    def __init__(self, name, parent, joint, joint_name, X_tree, inertia):
        mass, com, I_com = inertia_parts(inertia)
        com.setflags(write=False)
        I_com.setflags(write=False)
        for key, value in (("name", name), ("parent", parent), ("joint", joint),
                           ("joint_name", joint_name), ("X_tree", X_tree),
                           ("inertia", inertia), ("mass", mass), ("com", com),
                           ("I_com", I_com)):
            object.__setattr__(self, key, value)

    def __setattr__(self, name, value):
        _read_only(name, "Body")

    def __delattr__(self, name):
        _read_only(name, "Body")

    def __reduce__(self):
        return (Body, (self.name, self.parent, self.joint, self.joint_name, self.X_tree,
                       self.inertia))

    def __repr__(self) -> str:
        return (f"Body({self.name!r}, parent={self.parent}, joint={self.joint!r}, "
                f"mass={self.mass:g})")


class Frame:
    """A named frame rigidly attached to a body: ``X`` maps body to frame coordinates."""

    __slots__ = ("name", "body", "X")

    def __init__(self, name: str, body: int, X: np.ndarray):
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "body", body)
        object.__setattr__(self, "X", X)

    def __setattr__(self, name, value):
        _read_only(name, "Frame")

    def __delattr__(self, name):
        _read_only(name, "Frame")

    def __reduce__(self):
        return (Frame, (self.name, self.body, self.X))

    def __repr__(self) -> str:
        return f"Frame({self.name!r}, body={self.body})"

