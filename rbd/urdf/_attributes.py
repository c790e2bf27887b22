"""Numeric attributes of URDF elements, shared by the link, joint and geometry readers."""

from __future__ import annotations

import math

import numpy as np

from .._robotfile import quote
from ..errors import URDFError

_XACRO_REMEDY = "expand it to URDF first: `xacro file.xacro > file.urdf`"


def _numbers(elem, name: str, count: int, where: str, default=None,
             infinite: bool = False) -> np.ndarray:
    """Parse ``count`` numbers from attribute ``name`` (``default`` if absent).

    The numbers must be finite unless ``infinite`` allows ``±inf`` (never NaN).
    """
    if elem is None or elem.get(name) is None:
        if default is None:
            tag = "element" if elem is None else f"<{elem.tag}>"
            raise URDFError(f"{where}: {tag} has no {name!r} attribute")
        return np.array(default, dtype=float)
    text = elem.get(name)
    try:
        values = [float(token) for token in text.split()]
    except ValueError:
        hint = (f" (an unexpanded xacro expression: {_XACRO_REMEDY})"
                if "${" in text or "$(" in text else "")
        raise URDFError(f"{where}: <{elem.tag}> {name}={quote(text)} is not a list of "
                        f"numbers{hint}") from None
    if len(values) != count:
        raise URDFError(f"{where}: <{elem.tag}> {name}={quote(text)} must hold {count} "
                        f"number{'s' if count > 1 else ''}, got {len(values)}")
    if not all(math.isfinite(x) or (infinite and math.isinf(x)) for x in values):
        raise URDFError(f"{where}: <{elem.tag}> {name}={quote(text)} has a non-finite value")
    return np.array(values)
