"""Dispatch of the public functions: the compiled twin of a model, the reference path.

See :mod:`rbd.algorithms` for how a call is routed.  The model keeps what is
built here (``model._derived``): under ``"kernel"`` its compiled model
(built only by :func:`rbd._kernels._model.compiled_model`) or, for a model
with mimic joints, the :class:`~rbd.algorithms._coupled.CoupledDynamics` of
the default backend; under ``("coupled", backend)`` that of a named backend.
"""

from __future__ import annotations

import warnings
from importlib import import_module

from .. import _backend
from ..errors import InputError, ModelError
from ..model import Model
from ._checks import (  # noqa: F401  (the helpers of every public function, imported from here)
    _A,
    _F,
    _Q,
    _REFERENCES,
    _TAU,
    _V,
    _array,
    _reference,
    _symbolic_record,
    _validate,
)
from ._coupled import CoupledDynamics

_HAVE_KERNELS = _backend.has_kernels()


def compiled(model: Model):
    """The compiled twin of ``model`` (flat arrays + workspace), built once and cached.

    For a model with mimic joints: its :class:`~rbd.algorithms._coupled.CoupledDynamics`
    over the compiled full tree.
    """
    if not isinstance(model, Model):
        raise InputError(f"model must be an rbd.Model, got {type(model).__name__}")
    if model._mimic:
        return _coupled(model, "kernel")
    from .._kernels._model import compiled_model

    return compiled_model(model)


def _kernel(model, backend):
    """Return the compiled model when the kernel path is selected, else None.

    The first lines are the hot path of every call: a model compiled before
    answers with one dictionary lookup (a read of the model's cache).  A model
    with mimic joints gets its :class:`~rbd.algorithms._coupled.CoupledDynamics`
    on every backend (the one of the default backend is kept under the same key).
    """
    if backend is None:
        try:
            return model._cache["kernel"]
        except (AttributeError, KeyError):
            if getattr(model, "_mimic", None):
                return _coupled(model, None)
            if not _HAVE_KERNELS:
                return None
    elif _backend.resolve(backend) != "kernel":
        return _coupled(model, "reference") if getattr(model, "_mimic", None) else None
    if not isinstance(model, Model):
        if _symbolic_record(model):
            raise InputError("model: a SymbolicModel runs on backend='reference' only")
        raise InputError(f"model must be an rbd.Model, got {type(model).__name__}")
    if model._mimic:
        return _coupled(model, "kernel")
    if backend is None and model._derived("kernel_unavailable") is not None:
        return None
    try:
        return compiled(model)
    except ModelError as exc:
        if backend is not None or not any(b.joint.kind == "symbolic" for b in model.bodies):
            raise
        # A symbolic joint without compiled C (no compiler at run time): the reference
        # derivations evaluate its generated Python functions instead.
        reason = str(exc)
        model._derived("kernel_unavailable", lambda: reason)
        warnings.warn(f"{model.name}: the compiled kernels cannot run this model ({reason}); "
                      "using the reference implementation", RuntimeWarning, stacklevel=3)
        return None


def _coupled(model: Model, backend: str | None):
    """The :class:`~rbd.algorithms._coupled.CoupledDynamics` of a model with mimic joints.

    Kept on the model: the default backend's under ``"kernel"`` (the hot-path key),
    a named backend's under ``("coupled", backend)``.
    """
    if not isinstance(model, Model):
        raise InputError(f"model must be an rbd.Model, got {type(model).__name__}")
    key = "kernel" if backend is None else ("coupled", backend)
    return model._derived(key, lambda: CoupledDynamics(model, _twin(model._full_tree(), backend),
                                                       backend))


def _twin(model, backend):
    """What runs a call: the compiled model, or the reference derivations under its method names.

    ``_twin(model, backend).crba(q)`` is ``compiled(model).crba(q)`` when the kernel
    path is selected (:func:`_kernel`), else the reference ``crba`` behind
    :func:`_reference` (arguments validated, batches looped).
    """
    k = _kernel(model, backend)
    return _ReferencePath(model) if k is None else k


class _ReferencePath:
    """The reference derivation of each method of the compiled model (:data:`_REFERENCES`)."""

    __slots__ = ("model",)

    def __init__(self, model):
        self.model = model

    def __getattr__(self, method: str):
        try:
            where, specs = _REFERENCES[method]
        except KeyError:
            raise AttributeError(method) from None
        module, name = where.split(":")
        fn = getattr(import_module(f"rbd.reference.{module}"), name)
        return lambda *args: _reference(fn, self.model, specs, args[:len(specs)],
                                        args[len(specs):])
