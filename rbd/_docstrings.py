"""Docstring blocks shared by the public functions: one text, kept in one place.

Many entry points of :mod:`rbd.algorithms` take the same arguments and raise the
same error on a bad one.  Their docstrings name such a block by a line holding
only ``{name}`` (a key of :data:`BLOCKS`), for instance ``{bad_input}`` under
``Raises``, or ``{parameters_q}`` for a whole ``Parameters`` section; the
decorator :func:`shared_doc` replaces the line by the block, indented as the
line was, when the module is imported.  ``help()``, Sphinx and the doctests
therefore see the whole text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable)

_MODEL_Q = "model : Model\nq : (nq,) or (N, nq) array_like"
_V = "v : (nv,) or (N, nv) array_like"
_BACKEND = 'backend : {None, "kernel", "reference"}'
_BAD_INPUT = (
    "InputError\n"
    "    On a wrong shape, a non-finite value or a quaternion whose norm is off by more\n"
    "    than ``QUATERNION_TOLERANCE`` (as :func:`rnea`)."
)
_NOT_A_MODEL = "InputError\n    When ``model`` is not an :class:`rbd.Model`."

BLOCKS = {
    # single entries, for a section that also lists other parameters or errors
    "model_q": _MODEL_Q,
    "backend": _BACKEND,
    "bad_input": _BAD_INPUT,
    "not_a_model": _NOT_A_MODEL,
    "f_ext": ("f_ext : (nbodies, 6) or (N, nbodies, 6) array_like, optional\n"
              "    External spatial forces ``[n; f]`` on each body, in body coordinates."),
    # a section's opening, its other entries written after it
    "parameters_model_q": f"Parameters\n----------\n{_MODEL_Q}",
    # whole sections, for the functions of ``(model, q[, v], *, backend)``
    "parameters_q": f"Parameters\n----------\n{_MODEL_Q}\n{_BACKEND}",
    "parameters_q_v": f"Parameters\n----------\n{_MODEL_Q}\n{_V}\n{_BACKEND}",
    "raises_bad_input": f"Raises\n------\n{_BAD_INPUT}",
    "raises_not_a_model": f"Raises\n------\n{_NOT_A_MODEL}",
    # entries of the reference derivations (:mod:`rbd.reference`), on one state, no batch
    "reference_model_q": "model : Model\nq : (nq,) ndarray",
    "reference_f_ext": ("f_ext : (nbodies, 6) ndarray, optional\n"
                        "    External spatial forces on each body, in body coordinates."),
}


def shared_doc(func: F) -> F:
    """Replace each line ``{name}`` of ``func.__doc__`` by ``BLOCKS[name]``, indented alike.

    Raises
    ------
    KeyError
        On a ``{name}`` line that names no block (at import, so a typo cannot ship).
    """
    if func.__doc__ is None:  # docstrings stripped (python -OO)
        return func
    lines = []
    for line in func.__doc__.split("\n"):
        stripped = line.strip()
        if stripped.startswith("{") and stripped.endswith("}") and stripped[1:-1].isidentifier():
            indent = line[: len(line) - len(line.lstrip())]
            lines.extend(indent + part for part in BLOCKS[stripped[1:-1]].split("\n"))
        else:
            lines.append(line)
    func.__doc__ = "\n".join(lines)
    return func
