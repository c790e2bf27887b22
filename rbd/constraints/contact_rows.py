r"""Constraint rows of a contact: MuJoCo's frictionless, pyramidal and elliptic cones.

A contact with frame rows :math:`(n, t_1, t_2)` between bodies 1 and 2 has the
relative-velocity Jacobians :math:`J_p = J^{(2)}_{\mathrm{trans}} -
J^{(1)}_{\mathrm{trans}}` and :math:`J_r = J^{(2)}_{\mathrm{rot}} -
J^{(1)}_{\mathrm{rot}}` at the contact point.  In the contact frame
(``mj_instantiateContact``, ``engine_core_constraint.c``):

* ``condim`` 1: one row, :math:`n^T J_p`;
* ``condim`` 3: :math:`[n; t_1; t_2]^T J_p` (normal and two sliding directions);
* ``condim`` 4: plus the torsion row :math:`n^T J_r`;
* ``condim`` 6: plus the two rolling rows :math:`t_1^T J_r`, :math:`t_2^T J_r`.

An elliptic cone keeps these ``condim`` rows.  A pyramidal cone replaces them
with the :math:`2(\mathrm{condim} - 1)` edges
:math:`J_0 \pm \mu_k J_k` (``friction[k-1]`` for row :math:`k`), each a unilateral
row at the contact's distance.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError


def contact_frame_rows(frame, jacp, jacr, condim: int) -> np.ndarray:
    """The contact's ``condim`` rows in its frame (``mju_mulMatMat`` of the frame and Jacobians).

    Parameters
    ----------
    frame : (3, 3) array_like
        Rows: normal, tangent 1, tangent 2.
    jacp, jacr : (3, nv) array_like
        Translational and rotational Jacobian of body 2 minus body 1 at the point.
    condim : {1, 3, 4, 6}
    """
    if condim not in (1, 3, 4, 6):
        raise InputError(f"condim: expected 1, 3, 4 or 6, got {condim}")
    frame = np.asarray(frame, float)
    rows = frame[: 3 if condim > 1 else 1] @ np.asarray(jacp, float)
    if condim > 3:
        rows = np.vstack([rows, frame[: condim - 3] @ np.asarray(jacr, float)])
    return rows


def contact_rows(frame, jacp, jacr, condim: int, friction, cone: str = "pyramidal") -> np.ndarray:
    """The constraint Jacobian rows of one contact for MuJoCo's cone model.

    Returns
    -------
    (condim, nv) ndarray for an elliptic cone or condim 1;
    (2 (condim - 1), nv) ndarray for a pyramidal cone, edge pairs
    :math:`J_0 + \\mu_k J_k, J_0 - \\mu_k J_k` for k = 1 .. condim - 1.
    """
    if cone not in ("pyramidal", "elliptic"):
        raise InputError(f"cone: expected 'pyramidal' or 'elliptic', got {cone!r}")
    rows = contact_frame_rows(frame, jacp, jacr, condim)
    if condim == 1 or cone == "elliptic":
        return rows
    friction = np.asarray(friction, float)
    edges = []
    for k in range(1, condim):
        edges += [rows[0] + friction[k - 1] * rows[k], rows[0] - friction[k - 1] * rows[k]]
    return np.array(edges)
