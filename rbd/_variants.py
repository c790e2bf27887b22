"""Registry entry points of the compiled forward-dynamics variants.

The compiled Si–Guenter recursion (``rbd/_kernels/ploen.pyx``) and the
articulated-body algorithm with Pai, Ascher & Kry's modified pivot
(``rbd/_kernels/block_elimination.pyx``) under the registry's uniform
signature ``fn(model, q, v, tau, f_ext=None)``.  This module imports without
the kernels; :func:`kernels_available` is the registry predicate that hides
the variants when they are not built (or ``RBD_NO_EXTENSIONS=1``).
"""

from __future__ import annotations

import importlib

import numpy as np

from . import _backend
from .errors import InputError

__all__ = ["ploen_kernel", "aba_modified_kernel", "kernels_available"]


def _kernel_module(name: str):
    if not _backend.has_kernels():
        raise InputError(f"the compiled kernel rbd._kernels.{name} is not available "
                         f"({_backend.import_error() or 'RBD_NO_EXTENSIONS=1'})")
    try:
        return importlib.import_module(f"rbd._kernels.{name}")
    except ImportError as exc:
        raise InputError(f"the compiled kernel rbd._kernels.{name} did not build: {exc}") from None


def kernels_available(model=None) -> bool:
    """Whether the compiled kernels are enabled (registry predicate; ``model`` unused).

    Only ``RBD_NO_EXTENSIONS=1`` or a failed build of the whole kernel package hides
    the variants; a variant module that is missing while the kernels are enabled
    makes its registry entry raise, so the shared tests report it.
    """
    return _backend.has_kernels()


def ploen_kernel(model, q, v, tau, f_ext=None) -> np.ndarray:
    """Forward dynamics by the compiled Si–Guenter O(n) recursion (S&G Eqs. 18–35)."""
    return _kernel_module("ploen").forward_dynamics(model, q, v, tau, f_ext)


def aba_modified_kernel(model, q, v, tau, f_ext=None) -> np.ndarray:
    """Forward dynamics by the compiled ABA with Pai's modified pivot (Pai §7)."""
    return _kernel_module("block_elimination").aba_modified(model, q, v, tau, f_ext)
