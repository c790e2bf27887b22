"""Which implementation the public functions dispatch to.

The compiled kernels are used when they were built and the environment
variable ``RBD_NO_EXTENSIONS`` is not set to ``1``; otherwise every public
function runs the pure-Python reference in :mod:`rbd.reference`.
"""

from __future__ import annotations

import os

from .errors import InputError

_DISABLED = os.environ.get("RBD_NO_EXTENSIONS", "") not in ("", "0")

try:
    if _DISABLED:
        raise ImportError("disabled by RBD_NO_EXTENSIONS")
    from ._kernels import _model as _kernel_model  # noqa: F401

    _HAVE_KERNELS = True
    _IMPORT_ERROR: str | None = None
except ImportError as exc:  # pragma: no cover - exercised with RBD_NO_EXTENSIONS=1
    _HAVE_KERNELS = False
    _IMPORT_ERROR = str(exc)


def has_kernels() -> bool:
    """Return True when the compiled kernels are importable and enabled.

    ``RBD_NO_EXTENSIONS=1`` in the environment disables them (every public
    function then runs its reference derivation), as does a build without a C
    compiler; :func:`import_error` says why they are missing.

    Examples
    --------
    >>> import rbd
    >>> rbd.has_kernels() in (True, False)
    True
    >>> rbd.aba(rbd.models.double_pendulum(), [0.0, 0.0], [0.0, 0.0], [0.0, 0.0],
    ...         backend="reference").tolist()
    [0.0, 0.0]
    """
    return _HAVE_KERNELS


def kernels_disabled() -> bool:
    """Return True when ``RBD_NO_EXTENSIONS=1`` forces the reference path."""
    return _DISABLED


def import_error() -> str | None:
    """Why the kernels could not be imported (None when they were)."""
    return _IMPORT_ERROR


def resolve(backend: str | None) -> str:
    """Map a ``backend=`` argument to ``"kernel"`` or ``"reference"``."""
    if backend is None:
        return "kernel" if _HAVE_KERNELS else "reference"
    if backend == "reference":
        return backend
    if backend == "kernel":
        if not _HAVE_KERNELS:
            raise InputError(
                "backend='kernel' requested but the compiled kernels are not available"
                f" ({_IMPORT_ERROR})"
            )
        return backend
    raise InputError(f"backend must be None, 'kernel' or 'reference', got {backend!r}")
