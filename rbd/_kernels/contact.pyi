"""Type stub for ``rbd._kernels.contact``: the compiled contact step and its batched run."""

import numpy as np

from rbd._kernels.collision import CollisionModel
from rbd._kernels.forward import ForwardModel

def simulate_contact(fm: ForwardModel, q0: np.ndarray, v0: np.ndarray,
                     tau: np.ndarray | None, h: float, steps: int, every: int = 1,
                     collide: CollisionModel | None = None,
                     cone: str = "pyramidal", solver: str = "newton", iterations: int = 100,
                     tolerance: float = 1e-14, num_threads: int | None = None,
                     contact_width: int = 32) -> dict[str, np.ndarray]: ...
