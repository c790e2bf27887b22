"""Which build of the lane kernels (``soa.pxi``) batches run on: the CPU's features decide.

``setup.py`` compiles the batched RNEA/ABA text ``soa.pxi`` three times on x86-64
(``_soa_portable``, ``_soa_avx2`` with ``-mavx2 -mfma``, ``_soa_avx512`` with
``-mavx512f -mavx2 -mfma``), once elsewhere (``_soa_portable``).  At import,
:mod:`rbd._kernels._model` takes the widest build the CPU runs, read from NumPy's
run-time CPU detection (CPUID and the registers the OS saves); the environment
variable ``RBD_SIMD`` overrides it (:data:`SIMD_CHOICES`), and
``rbd._kernels._model.set_simd`` changes it in a running process.  Part of the
dispatch layer: no reference twin.
"""

from __future__ import annotations

import importlib
import os
import platform
import warnings

from rbd.errors import InputError

#: The builds, widest first, with the CPU features each needs (NumPy's ``__cpu_features__``).
SIMD_BUILDS = {"avx512": ("AVX512F", "AVX2", "FMA3"), "avx2": ("AVX2", "FMA3"), "portable": ()}
#: The values of ``RBD_SIMD``: a build, ``"auto"`` (the widest the CPU runs) or ``"off"``
#: (batches run the one-state kernels, state by state).
SIMD_CHOICES = ("auto", "off", *SIMD_BUILDS)


def cpu_features() -> dict:
    """NumPy's run-time CPU features (``{}`` off x86-64, or when NumPy does not say)."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return {}
    for name in ("numpy._core._multiarray_umath", "numpy.core._multiarray_umath"):
        try:
            return dict(importlib.import_module(name).__cpu_features__)
        except (ImportError, AttributeError):
            continue
    return {}


def runnable(build: str) -> bool:
    """True when ``build`` was built and this CPU has its instructions."""
    features = cpu_features()
    if not all(features.get(f, False) for f in SIMD_BUILDS[build]):
        return False
    try:
        importlib.import_module(f"rbd._kernels._soa_{build}")
    except ImportError:
        return False
    return True


def choose(choice: str):
    """``(build, capsule)`` for ``choice`` (``capsule`` None for ``"off"``).

    Raises
    ------
    InputError
        On an unknown choice, or a build that was not built or that this CPU cannot run.
    """
    if choice not in SIMD_CHOICES:
        raise InputError(f"simd choice must be one of {SIMD_CHOICES}, got {choice!r}")
    if choice == "auto":
        choice = next(b for b in SIMD_BUILDS if runnable(b))
    if choice == "off":
        return choice, None
    if not runnable(choice):
        raise InputError(f"the {choice!r} lane kernels do not run here (not built, or this "
                         f"CPU lacks {', '.join(SIMD_BUILDS[choice])})")
    return choice, importlib.import_module(f"rbd._kernels._soa_{choice}").kernels()


def at_import() -> str:
    """The choice of ``RBD_SIMD`` (default ``"auto"``); one that cannot run warns: ``"auto"``."""
    choice = os.environ.get("RBD_SIMD", "auto").strip().lower() or "auto"
    try:
        choose(choice)
    except InputError as exc:
        warnings.warn(f"RBD_SIMD={choice!r}: {exc}; choosing automatically", RuntimeWarning,
                      stacklevel=2)
        return "auto"
    return choice
