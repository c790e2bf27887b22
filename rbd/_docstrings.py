"""Docstring blocks shared by the public functions: one text, kept in one place.

Many entry points of :mod:`rbd.algorithms` take the same arguments and raise the
same error on a bad one.  Their docstrings name such a block by a line holding
only ``{name}`` (a key of :data:`BLOCKS`), for instance ``{bad_input}`` under
``Raises``; the decorator :func:`shared_doc` replaces the line by the block,
indented as the line was, when the module is imported.  ``help()``, Sphinx and
the doctests therefore see the whole text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable)

BLOCKS = {
    "model_q": "model : Model\nq : (nq,) or (N, nq) array_like",
    "backend": 'backend : {None, "kernel", "reference"}',
    "bad_input": (
        "InputError\n"
        "    On a wrong shape, a non-finite value or a quaternion whose norm is off by more\n"
        "    than ``QUATERNION_TOLERANCE`` (as :func:`rnea`)."
    ),
    "not_a_model": "InputError\n    When ``model`` is not an :class:`rbd.Model`.",
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
