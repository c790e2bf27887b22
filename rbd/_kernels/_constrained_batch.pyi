"""Type stub for ``rbd._kernels._constrained_batch``."""

from typing import Any

import numpy as np

from rbd._kernels._base import CompiledBase

class ConstrainedModel:
    def __init__(self, compiled: CompiledBase,
                 packed: tuple[np.ndarray, np.ndarray, np.ndarray],
                 proximal: tuple[float, float, int],
                 records: tuple[type | None, type | None] = (None, None)) -> None: ...
    @property
    def nrows(self) -> int: ...
    @property
    def packed(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...
    def dynamics(self, q: np.ndarray, v: np.ndarray, tau: np.ndarray,
                 f_ext: np.ndarray | None = None, method: int = 0, kp: float = 0.0,
                 kd: float = 0.0) -> tuple[np.ndarray, np.ndarray, int | np.ndarray,
                                           int | np.ndarray]: ...
    def solve(self, q: np.ndarray, v: np.ndarray, tau: np.ndarray, f_ext: np.ndarray | None,
              method: int, kp: float, kd: float) -> Any: ...
    def solve_impulse(self, q: np.ndarray, v_minus: np.ndarray, restitution: float) -> Any: ...
    def impulse(self, q: np.ndarray, v_minus: np.ndarray,
                restitution: float = 0.0) -> tuple[np.ndarray, np.ndarray]: ...
    def delassus(self, q: np.ndarray) -> np.ndarray: ...
