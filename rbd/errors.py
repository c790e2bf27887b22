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


class MJCFError(RbdError):
    """An MJCF document is malformed, unsafe or describes an invalid tree."""


class InputError(RbdError):
    """An argument to an algorithm has the wrong shape, type or value."""


class SimulationError(RbdError):
    """A simulation could not go on: it diverged or exceeded its work limit.

    The attribute ``trajectory`` holds what was computed up to the last finite
    state (or ``None`` when nothing was), so a long run is not lost.

    For a batch (``q0`` of shape ``(N, nq)``) ``trajectory`` holds every
    rollout, with NaN after the last finite sample of each one that diverged;
    ``diverged`` lists those rollouts' indices and ``diverged_at`` the times at
    which they diverged (both ``None`` for a single run).
    """

    def __init__(self, message: str, trajectory=None, diverged=None, diverged_at=None):
        super().__init__(message)
        self.trajectory = trajectory
        self.diverged = diverged
        self.diverged_at = diverged_at


class SimulationInterrupted(KeyboardInterrupt):
    """A simulation stopped by Ctrl-C (``SIGINT``): a :class:`KeyboardInterrupt`.

    The attribute ``trajectory`` holds the samples computed before the
    interrupt (for a batch: every rollout, NaN where it had not got that far).
    """

    def __init__(self, message: str, trajectory=None):
        super().__init__(message)
        self.trajectory = trajectory


class SweepError(RbdError):
    """A point of :func:`rbd.sweep` could not be evaluated or its result not returned.

    ``index`` is the point's position in the grid (one index per axis) and
    ``point`` the arguments ``fn`` was called with there.
    """

    def __init__(self, message: str, point=None, index=None):
        super().__init__(message)
        self.point, self.index = point, index

    def __reduce__(self):                 # travels from a Dask worker with its attributes
        return type(self), (str(self), self.point, self.index)


__all__ = ["RbdError", "ModelError", "URDFError", "MJCFError", "InputError", "SimulationError",
           "SimulationInterrupted", "SweepError"]
