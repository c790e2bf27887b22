r"""Contact geometry of a surface: fundamental forms, Montana's forms, frame jets.

The surface frame (GL §5; the contact frame of Pai §6) is
:math:`\hat x = x_u/\lVert x_u\rVert`, unit normal
:math:`n = (x_u\times x_v)/\lVert x_u\times x_v\rVert`, and
:math:`\hat y = n\times\hat x`; ``frame(u, v) = [[x̂, ŷ, n, x], [0, 0, 0, 1]]``.

Curvature conventions
---------------------
First and second fundamental forms are the textbook ones,
:math:`I = [x_i\cdot x_j]` and :math:`II = [n\cdot x_{ij}]`, and the shape
operator is :math:`S = I^{-1} II` (Weingarten: :math:`n_{,j} = -x_k S_{kj}`).
With an *outward* normal a convex surface therefore has negative principal
curvatures (a sphere of radius r: :math:`S = -\mathbf 1/r`).  The contact
geometry of Montana (Pai's reference [18]) uses the opposite sign: in the
frame basis, the metric :math:`M`, curvature form :math:`K` and torsion form
:math:`T` are defined by

.. math::

    R^T [x_u\; x_v] = \begin{bmatrix} M \\ 0 \end{bmatrix},\qquad
    [\hat x\;\hat y]^T [n_{,u}\; n_{,v}] = K M,\qquad
    \hat y^T [\hat x_{,u}\;\hat x_{,v}] = T M,

so :math:`K = -M S M^{-1}` is positive definite on a convex surface with
outward normal (a sphere: :math:`K = \mathbf 1/r`).
"""

from __future__ import annotations

import numpy as np

from .backend import NUMPY, inv2, math_for, unit

__all__ = ["frame_jet", "contact_forms", "fundamental_forms"]


def _jet(d, i, j, du, dv) -> np.ndarray:
    """Rows: value, first, second t-derivative of ``∂u^i ∂v^j x`` along ``(u, v) + t (du, dv)``."""
    return np.array([d[i, j],
                     d[i + 1, j] * du + d[i, j + 1] * dv,
                     d[i + 2, j] * du**2 + 2 * d[i + 1, j + 1] * du * dv + d[i, j + 2] * dv**2])


def _cross_jet(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Second-order jet of ``a × b`` from the jets of ``a`` and ``b`` (Leibniz rule)."""
    cross = NUMPY.cross
    return np.array([cross(a[0], b[0]),
                     cross(a[1], b[0]) + cross(a[0], b[1]),
                     cross(a[2], b[0]) + 2 * cross(a[1], b[1]) + cross(a[0], b[2])])


def _unit_jet(w: np.ndarray) -> np.ndarray:
    r"""Second-order jet of :math:`\hat w = w/\lVert w\rVert`.

    With :math:`s = \lVert w\rVert`, :math:`\dot s = \hat w\cdot\dot w` and
    :math:`P = 1 - \hat w\hat w^T`:
    :math:`\dot{\hat w} = P\dot w/s` and
    :math:`\ddot{\hat w} = (P\ddot w - 2\dot s\,\dot{\hat w}
    - \hat w\,(\dot{\hat w}\cdot\dot w))/s`.
    """
    w0, w1, w2 = w
    s = np.sqrt(w0 @ w0)
    h0 = w0 / s
    s1 = h0 @ w1
    h1 = (w1 - h0 * s1) / s
    h2 = (w2 - h0 * (h0 @ w2) - 2 * s1 * h1 - h0 * (h1 @ w1)) / s
    return np.array([h0, h1, h2])


def frame_jet(partials: dict, du: float, dv: float) -> tuple:
    r"""The surface frame and its first two time derivatives along a straight parameter path.

    Parameters
    ----------
    partials : dict
        Numeric partial derivatives up to order 3, from :meth:`Surface.partials`.
    du, dv : float
        Parameter rates :math:`(\dot u, \dot v)` (parameter accelerations zero).

    Returns
    -------
    E, E_dot, E_ddot : (4, 4) ndarrays
        :math:`E`, :math:`\dot E`, :math:`\ddot E` of ``frame(u + t du, v + t dv)``
        at ``t = 0``, by second-order Taylor arithmetic on :math:`x_u, x_v`.
    """
    p = _jet(partials, 0, 0, du, dv)
    a = _jet(partials, 1, 0, du, dv)  # jet of x_u
    b = _jet(partials, 0, 1, du, dv)  # jet of x_v
    xh = _unit_jet(a)  # Pai §6: ¹x = c_s / |c_s|
    n = _unit_jet(_cross_jet(a, b))  # Pai §6: ¹z
    yh = _cross_jet(n, xh)  # Pai §6: ¹y
    E = np.zeros((3, 4, 4))
    E[:, :3, 0], E[:, :3, 1], E[:, :3, 2], E[:, :3, 3] = xh, yh, n, p
    E[0, 3, 3] = 1.0
    return E[0], E[1], E[2]


def fundamental_forms(d: dict, L):
    """``(x_u, x_v, n, I, II)`` from partial derivatives up to order 2."""
    xu, xv = d[1, 0], d[0, 1]
    n = unit(L, L.cross(xu, xv))
    F, M = L.dot(xu, xv), L.dot(n, d[1, 1])
    I = L.matrix([[L.dot(xu, xu), F], [F, L.dot(xv, xv)]])
    II = L.matrix([[L.dot(n, d[2, 0]), M], [M, L.dot(n, d[0, 2])]])
    return xu, xv, n, I, II


def contact_forms(partials: dict, lib=None) -> tuple:
    r"""Montana's metric ``M`` (2×2), curvature form ``K`` (2×2) and torsion ``T`` (1×2).

    In the frame basis :math:`(\hat x, \hat y)` (module notes):

    .. math::

        M = \begin{bmatrix}\hat x\cdot x_u & \hat x\cdot x_v\\
                             0 & \hat y\cdot x_v\end{bmatrix},\quad
        K = -M S M^{-1},\quad
        T = \frac{1}{\lVert x_u\rVert}
            [\hat y\cdot x_{uu},\ \hat y\cdot x_{uv}]\, M^{-1},

    with :math:`S = I^{-1} II` the shape operator.  These give the frame's
    twist relative to the surface, Pai (9) (:func:`rbd.contact_coordinates.frame_jacobian`).

    Parameters
    ----------
    partials : dict
        Partial derivatives up to order 2 (:meth:`Surface.partials`).
    """
    L = math_for(list(partials.values()), lib)
    xu, xv, n, I, II = fundamental_forms(partials, L)
    r = L.sqrt(L.dot(xu, xu))
    xh = xu / r
    yh = L.cross(n, xh)
    M = L.matrix([[r, L.dot(xh, xv)], [0 * r, L.dot(yh, xv)]])
    Minv = inv2(L, M)
    K = -(M @ inv2(L, I) @ II @ Minv)
    T = L.matrix([[L.dot(yh, partials[2, 0]) / r, L.dot(yh, partials[1, 1]) / r]]) @ Minv
    return M, K, T
