r"""MuJoCo's soft constraints: impedance, regularization and reference acceleration.

Each constraint row :math:`i` with violation :math:`r_i = \mathrm{pos}_i -
\mathrm{margin}_i` and velocity :math:`v_i = J_i \dot q` is softened by three
numbers (MuJoCo's "Computation" chapter, *Constraint solver*, *Parameters*;
source ``engine_core_constraint.c``):

* the **impedance** :math:`d(r) \in (0, 1)` from ``solimp = (d0, dwidth, width,
  midpoint, power)``: :func:`impedance` (``getimpedance``), a sigmoid of
  :math:`|r|/\mathrm{width}` between ``d0`` and ``dwidth``;
* the **regularizer** :math:`R_i = \frac{1 - d}{d}\,\hat A_{ii}` with
  :math:`\hat A_{ii}` an approximation of the diagonal of :math:`J M^{-1} J^T`,
  and :math:`D_i = 1/R_i`: :func:`regularizer` (``mj_makeImpedance``);
* the **reference acceleration** :math:`a^{\mathrm{ref}}_i = -b\,v_i - k\,d\,r_i`
  from ``solref``: :func:`stiffness_damping` and :func:`reference_acceleration`
  (``mj_referenceConstraint``).  With ``solref = (timeconst, dampratio) > 0``,
  :math:`k = 1/(d_{\mathrm{width}}^2\,\mathrm{timeconst}^2\,\mathrm{dampratio}^2)`
  and :math:`b = 2/(d_{\mathrm{width}}\,\mathrm{timeconst})`; with the direct form
  ``solref = (-stiffness, -damping)``, :math:`k = \mathrm{stiffness}/d_{\mathrm{width}}^2`
  and :math:`b = \mathrm{damping}/d_{\mathrm{width}}`.

Contacts share one impedance over their rows (it depends on the normal
distance); their friction rows take :math:`R_1 = R_0/\mathrm{impratio}` and
:math:`R_{j+1} = R_1\,\mu_1^2/\mu_{j+1}^2` (elliptic cones), or one common
:math:`R = 2\,\mu^2 R_0` on all :math:`2(\mathrm{condim}-1)` edges of a
pyramid, with :math:`\mu = \mu_1\sqrt{R_1/R_0}`.
"""

from __future__ import annotations

import numpy as np

from .collision_primitive import MINVAL

#: MuJoCo's bounds on the impedance (``mjMINIMP``, ``mjMAXIMP``).
MIN_IMPEDANCE = 0.0001
MAX_IMPEDANCE = 0.9999


def clamp_solimp(solimp) -> np.ndarray:
    """``solimp`` within MuJoCo's bounds (``getsolparam``): d0, dwidth, midpoint in
    [0.0001, 0.9999], width ≥ 0, power ≥ 1."""
    s = np.array(solimp, dtype=float)
    for k in (0, 1, 3):
        s[k] = min(MAX_IMPEDANCE, max(MIN_IMPEDANCE, s[k]))
    s[2] = max(0.0, s[2])
    s[4] = max(1.0, s[4])
    return s


def safe_solref(solref, timestep: float) -> np.ndarray:
    """``solref`` with a standard time constant of at least two time steps (``getsolparam``)."""
    s = np.array(solref, dtype=float)
    if s[0] > 0:
        s[0] = max(s[0], 2 * timestep)
    return s


def impedance(solimp, pos: float, margin: float) -> tuple[float, float]:
    r"""Impedance :math:`d` and its derivative :math:`\partial d/\partial\,\mathrm{pos}`.

    ``getimpedance``: with :math:`x = |\mathrm{pos} - \mathrm{margin}| / \mathrm{width}`,
    :math:`d = d_0 + y(x)\,(d_{\mathrm{width}} - d_0)` where :math:`y` rises from 0
    to 1 as :math:`a x^p` up to the midpoint and :math:`1 - b (1 - x)^p` after it
    (:math:`a, b` make the two pieces meet); flat beyond ``width``.
    """
    d0, dwidth, width, mid, power = solimp
    if d0 == dwidth or width <= MINVAL:
        return 0.5 * (d0 + dwidth), 0.0
    x = (pos - margin) / width
    sign = 1.0
    if x < 0:
        x, sign = -x, -1.0
    if x >= 1 or x <= 0:
        return (dwidth if x >= 1 else d0), 0.0
    if power == 1:
        y, dy = x, 1.0
    elif x <= mid:
        a = 1 / mid ** (power - 1)
        y, dy = a * x ** power, power * a * x ** (power - 1)
    else:
        b = 1 / (1 - mid) ** (power - 1)
        y, dy = 1 - b * (1 - x) ** power, power * b * (1 - x) ** (power - 1)
    return d0 + y * (dwidth - d0), dy * sign * (dwidth - d0) / width


def stiffness_damping(solref, dwidth: float, friction_row: bool = False) -> tuple[float, float]:
    """Reference stiffness ``k`` and damping ``b`` of a row (``mj_makeImpedance``).

    ``friction_row``: dof/tendon friction loss and the tangent rows of an
    elliptic cone, which have no stiffness.
    """
    if friction_row:
        k = 0.0
    elif solref[0] > 0:
        k = 1 / max(MINVAL, dwidth * dwidth * solref[0] ** 2 * solref[1] ** 2)
    else:
        k = -solref[0] / max(MINVAL, dwidth * dwidth)
    if solref[1] > 0:
        b = 2 / max(MINVAL, dwidth * solref[0])
    else:
        b = -solref[1] / max(MINVAL, dwidth)
    return k, b


def reference_acceleration(k, b, imp, vel, pos, margin) -> np.ndarray:
    """``aref = -b vel - k imp (pos - margin)`` row by row (``mj_referenceConstraint``)."""
    violation = np.asarray(pos, float) - np.asarray(margin, float)
    return -np.asarray(b, float) * np.asarray(vel, float) - np.asarray(k, float) * imp * violation


def regularizer(imp: float, diag: float) -> float:
    r""":math:`R = \max(\mathrm{mjMINVAL}, (1 - d)\,\hat A / d)` of one row."""
    return max(MINVAL, (1 - imp) * diag / imp)


def contact_regularizers(r_normal: float, friction, condim: int, cone: str,
                         impratio: float) -> tuple[np.ndarray, float]:
    """The R of a contact's rows from its normal row's R, and the cone's ``mu``.

    Parameters
    ----------
    r_normal : float
        :func:`regularizer` of the normal direction.
    friction : (5,) array_like
        The contact's friction coefficients.
    condim : int
        3, 4 or 6 (condim 1 has a single row: ``r_normal``).
    cone : {"elliptic", "pyramidal"}
    impratio : float

    Returns
    -------
    R : (condim,) or (2 (condim - 1),) ndarray
    mu : float
        ``friction[0] * sqrt(R_1 / R_0)``, the slope of the regularized cone.
    """
    friction = np.asarray(friction, float)
    r_first = r_normal / max(MINVAL, impratio)
    mu = friction[0] * np.sqrt(r_first / r_normal)
    if cone == "elliptic":
        rows = [r_normal, r_first]
        rows += [r_first * friction[0] ** 2 / friction[j] ** 2 for j in range(1, condim - 1)]
        return np.array(rows), float(mu)
    return np.full(2 * (condim - 1), 2 * mu * mu * r_normal), float(mu)
