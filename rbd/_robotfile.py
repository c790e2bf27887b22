r"""What the URDF and MJCF readers share: safe XML parsing, quoting, welded links, inertias.

Both readers turn a file into a tree of rigid links and weld some links into
the bodies that carry them (URDF fixed joints, MJCF bodies without joints):
:class:`Link` is one link's mass, centre of mass and rotational inertia about
it, :func:`merge` lumps welded links into one body by the parallel-axis
theorem, and :func:`violation` and :func:`nearest_physical` are the inertia
policy (the physical conditions with their tolerance, and the repair).  Both
parse with :func:`safe_fromstring`, which refuses any document type
declaration, and quote file contents in messages with :func:`quote`.
"""

from __future__ import annotations

import itertools
import os
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np
from defusedxml.ElementTree import fromstring as _defused_fromstring

from ._model_checks import INERTIA_ATOL, INERTIA_RTOL, MAX_MAGNITUDE
from ._model_checks import inertia_violation as violation
from .errors import ModelError
from .spatial import plux_parts

__all__ = ["INERTIA_RTOL", "INERTIA_ATOL", "Link", "quote", "unique", "caller_stacklevel",
           "safe_fromstring",
           "merge", "violation", "nearest_physical"]

_QUOTE = 60  # characters of a document or file name quoted in a message

#: The triangle inequalities ``λi + λj - λk ≥ 0`` of the principal moments, one a row.
_TRIANGLE = np.array([[1.0, 1.0, -1.0], [1.0, -1.0, 1.0], [-1.0, 1.0, 1.0]])


def quote(text) -> str:
    """``repr`` of the first characters of ``text``: never a whole document in a message."""
    text = str(text)
    return repr(text if len(text) <= _QUOTE else text[:_QUOTE] + "...")


def caller_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning point at the first caller outside ``rbd``
    (however many of rbd's own functions lie between it and the reader)."""
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def unique(base: str, taken) -> str:
    """``base``, or ``base_0``, ``base_1``, ... : the first name not in ``taken``."""
    name, k = base, 0
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    return name


def safe_fromstring(text: str | bytes) -> ET.Element:
    """Parse XML with document type declarations refused (hence entities and external references).

    Raises :class:`defusedxml.DefusedXmlException`, :class:`xml.etree.ElementTree.ParseError`,
    :class:`LookupError` or :class:`ValueError`; each reader words its own message.
    """
    return _defused_fromstring(text, forbid_dtd=True, forbid_entities=True, forbid_external=True)


@dataclass
class Link:
    """A rigid link: mass, centre of mass and rotational inertia about it (link axes)."""

    name: str
    mass: float
    com: np.ndarray
    I_com: np.ndarray


# --- inertias of welded links ---------------------------------------------------------------
def merge(parts: list[tuple[Link, np.ndarray]]) -> tuple[float, np.ndarray, np.ndarray]:
    r"""Mass, centre of mass and inertia about it (body axes) of links welded into one body.

    Raises :class:`~rbd.errors.ModelError` naming the links when a result is
    beyond ``MAX_MAGNITUDE`` or overflows (the readers name the file's element).

    ``parts`` pairs each link with ``X``, the motion transform from body to link
    coordinates, ``X = plux(E, r)``.  Link ``k`` has its centre of mass at
    ``c_k = r + Eᵀ c'_k`` and the inertia ``Eᵀ I'_k E`` about it, in body
    coordinates; by the parallel-axis theorem

    .. math::

        m = \sum_k m_k, \quad c = \frac{1}{m} \sum_k m_k c_k, \quad
        I_c = \sum_k \left(E_k^T I'_k E_k + m_k (\lVert d_k \rVert^2 \mathbf 1
              - d_k d_k^T)\right), \quad d_k = c_k - c.
    """
    placed = []
    with np.errstate(over="ignore", invalid="ignore"):   # overflow is checked below
        for link, X in parts:
            E, r = plux_parts(X)
            placed.append((link.mass, r + E.T @ link.com, E.T @ link.I_com @ E))
        m = float(sum(mk for mk, _, _ in placed))
        c = sum(mk * ck for mk, ck, _ in placed) / m if m > 0 else np.zeros(3)
        Ic = np.zeros((3, 3))
        for mk, ck, Ik in placed:
            d = ck - c
            Ic += Ik + mk * (d @ d * np.eye(3) - np.outer(d, d))  # parallel-axis theorem
    check_merged(m, c, Ic, [link.name for link, _ in parts])
    return m, np.asarray(c, dtype=float), 0.5 * (Ic + Ic.T)


def check_merged(m, c, Ic, names: list) -> None:
    """Raise :class:`~rbd.errors.ModelError` naming the links when the mass, centre of mass
    or rotational inertia of their merged body is beyond ``MAX_MAGNITUDE`` or overflows."""
    for value, what in ((m, "mass"), (c, "centre of mass"), (Ic, "rotational inertia")):
        if not np.all(np.abs(value) <= MAX_MAGNITUDE):   # also NaN and inf
            listed = ", ".join(repr(name) for name in names)
            raise ModelError(f"the {what} of link{'s' if len(names) > 1 else ''} {listed} is "
                             f"beyond {MAX_MAGNITUDE:g} in magnitude or overflows (products "
                             "of masses and lengths must stay finite)")


def nearest_physical(Ic: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The physical rotational inertia nearest to ``Ic`` in the Frobenius norm.

    The valid principal moments form the convex cone ``λi + λj ≥ λk`` (which
    implies ``λ ≥ 0``), invariant under permutations, so the nearest valid
    matrix has the principal axes of ``Ic`` and the moments projected onto the
    cone.  The projection lies on one face of the cone: it is the nearest of the
    projections onto the faces (sets of active inequalities) that satisfy all
    inequalities.  Returns ``(Ic_new, moments_before, moments_after)``.
    """
    lam, V = np.linalg.eigh(Ic)
    slack = 1e-12 * float(np.abs(lam).max())  # round-off of the projection
    best = np.zeros(3)  # every inequality active: the zero inertia
    for size in (1, 2):
        for rows in itertools.combinations(range(3), size):
            A = _TRIANGLE[list(rows)]
            x = lam - A.T @ np.linalg.solve(A @ A.T, A @ lam)
            if np.all(_TRIANGLE @ x >= -slack) and (
                    np.linalg.norm(x - lam) < np.linalg.norm(best - lam)):
                best = x
    return (V * best) @ V.T, lam, best

