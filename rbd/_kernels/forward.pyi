"""Type stub for ``rbd._kernels.forward``: the compiled forward pass (``forward_into``)."""

from typing import Any

import numpy as np

from rbd._kernels._base import CompiledBase

class ForwardWorkspace:
    nthreads: int
    capacity: int
    def __init__(self, fm: ForwardModel, nthreads: int, capacity: int) -> None: ...

class ForwardModel:
    compiled: CompiledBase
    max_contacts: int
    def __init__(self, compiled: CompiledBase, data: dict[str, Any],
                 max_contacts: int) -> None: ...
    def workspace(self, nthreads: int, capacity: int) -> ForwardWorkspace: ...
    def forward(self, q: np.ndarray, v: np.ndarray, tau: np.ndarray, contacts: Any,
                cone: str = "pyramidal", solver: str = "newton", iterations: int = 100,
                tolerance: float = 1e-14, limits: bool = True
                ) -> tuple[int, dict[str, Any]]: ...
