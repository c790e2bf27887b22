"""Compiled Si–Guenter O(n) forward dynamics (Eqs. 18–35)."""

import numpy as np
from numpy.typing import ArrayLike

from rbd.model import Model

__all__ = ["forward_dynamics"]

def forward_dynamics(
    model: Model, q: ArrayLike, v: ArrayLike, tau: ArrayLike, f_ext: ArrayLike | None = None
) -> np.ndarray: ...
