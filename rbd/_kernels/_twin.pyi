"""A compiled twin of a Model for the forward-dynamics variant kernels."""

import numpy as np

from rbd.data import Data
from rbd.model import Model

__all__ = ["KernelTwin", "twin", "arguments"]

class KernelTwin:
    data: Data
    model: Model
    def __init__(self, model: Model) -> None: ...

def twin(model: Model) -> KernelTwin: ...
def arguments(
    model: Model, q: object, v: object, tau: object, f_ext: object
) -> tuple[list[np.ndarray | None], int]: ...
