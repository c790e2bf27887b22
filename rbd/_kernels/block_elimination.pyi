"""Compiled articulated-body algorithm with Pai, Ascher & Kry's modified pivot (§7).

The kernel is ``aba(..., modified_pivot=True)`` of ``rbd._kernels.aba``.
"""

import numpy as np
from numpy.typing import ArrayLike

from rbd.model import Model

__all__ = ["aba_modified"]

def aba_modified(
    model: Model, q: ArrayLike, v: ArrayLike, tau: ArrayLike, f_ext: ArrayLike | None = None
) -> np.ndarray: ...
