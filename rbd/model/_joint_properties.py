"""Per-joint properties of a model: limits, joint dynamics, rotor inertia (checked values)."""

from __future__ import annotations

import numpy as np

from ..errors import ModelError

#: Per-joint properties: the joint's size they follow (``nq`` or ``nv``) and the default.
JOINT_PROPERTIES = {
    "lower": ("nq", -np.inf),
    "upper": ("nq", np.inf),
    "velocity_limit": ("nv", np.inf),
    "effort_limit": ("nv", np.inf),
    "damping": ("nv", 0.0),
    "friction": ("nv", 0.0),
    "armature": ("nv", 0.0),
}


def _joint_property(value, size: int, key: str, joint: str) -> np.ndarray:
    """Check one joint property value and return it as a ``(size,)`` array."""
    if np.iscomplexobj(value):
        raise ModelError(f"joint {joint!r}: {key} must be real, got {value!r}")
    try:
        arr = np.array(value, dtype=float).reshape(-1)
    except (TypeError, ValueError, OverflowError):
        raise ModelError(f"joint {joint!r}: {key} is not numeric: {value!r}") from None
    if arr.size == 1 and size != 1:
        arr = np.full(size, arr[0])
    if arr.shape != (size,):
        raise ModelError(f"joint {joint!r}: {key} needs {size} value(s), got {arr.size}")
    if np.any(np.isnan(arr)):
        raise ModelError(f"joint {joint!r}: {key} has NaN entries")
    if key in ("damping", "friction", "armature"):
        if not np.all(np.isfinite(arr)) or np.any(arr < 0):
            raise ModelError(f"joint {joint!r}: {key} must be finite and non-negative, "
                             f"got {arr.tolist()}")
    elif key in ("velocity_limit", "effort_limit") and np.any(arr < 0):
        raise ModelError(f"joint {joint!r}: {key} must be non-negative, got {arr.tolist()}")
    arr.setflags(write=False)
    return arr


def _checked_properties(joint, joint_name: str, values: dict, lower: np.ndarray,
                        upper: np.ndarray) -> dict[str, np.ndarray]:
    """``values`` checked for ``joint`` (whose current limits are ``lower`` and ``upper``)."""
    new = {}
    for key, value in values.items():
        if key not in JOINT_PROPERTIES:
            raise ModelError(f"unknown joint property {key!r}; known: "
                             f"{', '.join(JOINT_PROPERTIES)}")
        size = getattr(joint, JOINT_PROPERTIES[key][0])
        new[key] = _joint_property(value, size, key, joint_name)
        if key == "armature" and joint.kind == "free" and np.ptp(new[key][3:]) != 0:
            raise ModelError(f"joint {joint_name!r}: a free joint's armature acts on the velocity "
                             "of its origin in the parent frame (as in MuJoCo) and must be the "
                             f"same on its three linear degrees of freedom, got "
                             f"{new[key].tolist()}")
    lower = new.get("lower", lower)
    upper = new.get("upper", upper)
    if np.any(lower > upper):
        raise ModelError(f"joint {joint_name!r}: lower limit {lower.tolist()}"
                         f" above upper limit {upper.tolist()}")
    return new
