"""Argument checks of the public functions and the reference path's runner.

:func:`_validate` converts and checks the arguments of a call against the model
(shapes, finiteness, unit quaternions) as the compiled entry points do;
:func:`_reference` runs a reference derivation on them, once per state of a
batch, on numbers or on symbols.  :data:`_REFERENCES` names the derivation
behind each method of the compiled model.
"""

from __future__ import annotations

import sys

import numpy as np

from .._validation import as_real_array, as_symbolic_array, check_quaternions
from ..errors import InputError
from ..model import Model
from ..reference import kinematics as _kin


def _symbolic_record(model) -> bool:
    """Is ``model`` a :class:`rbd.symbolic.SymbolicModel` (never imports sympy)?"""
    module = sys.modules.get("rbd.symbolic.equations")
    return module is not None and isinstance(model, module.SymbolicModel)


def _array(value, name: str, symbolic: bool = False) -> np.ndarray:
    try:
        arr = as_real_array(value, name)
    except InputError:
        arr = as_symbolic_array(value) if symbolic else None
        if arr is None:
            raise
        return arr
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{name} has non-finite entries")
    return arr


def _validate(model: Model, specs, values, symbolic: bool = False):
    """Check each argument against its spec; return (arrays, batch size or None).

    ``symbolic=True`` (the reference path) also accepts arrays of sympy expressions
    and a :class:`rbd.symbolic.SymbolicModel`.
    """
    if not isinstance(model, Model) and not (symbolic and _symbolic_record(model)):
        raise InputError(f"model must be an rbd.Model, got {type(model).__name__}")
    sizes = {"q": (model.nq,), "v": (model.nv,), "f": (model.nbodies, 6)}
    arrays, batch = [], None
    for (name, kind), value in zip(specs, values, strict=True):
        if value is None and kind == "f":
            arrays.append(None)
            continue
        arr = _array(value, name, symbolic)
        shape = sizes[kind]
        if arr.shape == shape:
            n = None
        elif arr.ndim == len(shape) + 1 and arr.shape[1:] == shape:
            n = arr.shape[0]
        else:
            raise InputError(
                f"{name} must have shape {shape} or (N, {', '.join(map(str, shape))}), "
                f"got {arr.shape}"
            )
        if n is not None and batch is not None and n != batch:
            raise InputError(f"{name} has batch size {n}, other arguments have {batch}")
        if n is not None:
            batch = n
        if kind == "q":
            arr = check_quaternions(model, arr)
        arrays.append(arr)
    if batch is not None:
        for k, ((_, kind), arr) in enumerate(zip(specs, arrays, strict=True)):
            if arr is not None and arr.ndim == len(sizes[kind]):
                arrays[k] = np.broadcast_to(arr, (batch, *arr.shape))
    return arrays, batch


def _reference(fn, model, specs, values, extra=()):
    arrays, batch = _validate(model, specs, values, symbolic=True)
    if not isinstance(model, Model) or any(a is not None and a.dtype == object for a in arrays):
        return _symbolic(fn, model, specs, arrays, batch, extra)
    return _run(fn, model, specs, arrays, batch, extra)


def _run(fn, model, specs, arrays, batch, extra):
    if batch is None:
        return fn(model, *arrays, *extra)
    if batch == 0:  # an empty batch: the shape of one result, with a leading 0
        rest = {"q": _kin.neutral(model), "v": np.zeros(model.nv), "f": None}
        sample = fn(model, *[rest[kind] for _, kind in specs], *extra)
        return np.empty((0, *np.shape(sample)))
    out = [fn(model, *[None if a is None else a[k] for a in arrays], *extra)
           for k in range(batch)]
    return np.array(out)


def _symbolic(fn, model, specs, arrays, batch, extra):
    """The reference on symbols: a model's data made exact, integral floats of the result too."""
    from ..symbolic.equations import SymbolicModel, exact_numbers

    if isinstance(model, Model):
        model = SymbolicModel.of(model)
    out = _run(fn, model, specs, arrays, batch, extra)
    if np.ndim(out) == 0:
        return exact_numbers(out)
    return np.array([exact_numbers(x) for x in np.ravel(out)], dtype=object).reshape(out.shape)


_Q = ("q", "q")
_V = ("v", "v")
_A = ("a", "v")
_TAU = ("tau", "v")
_F = ("f_ext", "f")

#: The reference derivation (``module:function`` of :mod:`rbd.reference`, imported on first
#: use) behind each method of the compiled model, and the kinds of its array arguments;
#: the arguments after those are passed on as they are (a body index, a time step).
_REFERENCES = {
    "rnea": ("rnea:rnea", (_Q, _V, _A, _F)),
    "nonlinear_effects": ("rnea:nonlinear_effects", (_Q, _V)),
    "gravity_forces": ("rnea:gravity_forces", (_Q,)),
    "crba": ("crba:crba", (_Q,)),
    "mass_matrix_inverse": ("crba:mass_matrix_inverse", (_Q,)),
    "aba": ("aba:aba", (_Q, _V, _TAU, _F)),
    "aba_modified": ("block_elimination:aba_modified", (_Q, _V, _TAU, _F)),
    "kinetic_energy": ("kinematics:kinetic_energy", (_Q, _V)),
    "potential_energy": ("kinematics:potential_energy", (_Q,)),
    "forward_kinematics": ("kinematics:forward_kinematics", (_Q,)),
    "center_of_mass": ("kinematics:center_of_mass", (_Q,)),
    "body_centers_of_mass": ("kinematics:body_centers_of_mass", (_Q,)),
    "jacobian": ("kinematics:jacobian", (_Q,)),
    "integrate": ("kinematics:integrate", (_Q, _V)),
}
