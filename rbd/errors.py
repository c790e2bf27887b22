"""Exceptions raised by rbd.

Every error the library raises on purpose derives from :class:`RbdError`, which
is a :class:`ValueError`, so ``except ValueError`` still catches them.
"""


class RbdError(ValueError):
    """Base class of every error raised by rbd on bad input or a bad model."""


class ModelError(RbdError):
    """A model is inconsistent: a cycle, an unknown parent, bad inertia, ..."""


class URDFError(RbdError):
    """A URDF document is malformed, unsafe or describes an invalid tree."""


class InputError(RbdError):
    """An argument to an algorithm has the wrong shape, type or value."""


__all__ = ["RbdError", "ModelError", "URDFError", "InputError"]
