"""Inverse and forward dynamics, the joint-space inertia and its inverse, bias forces.
"""

from __future__ import annotations

import numpy as np

from .._docstrings import shared_doc
from ..errors import InputError
from ..model import Model
from ._dispatch import _twin


# --- dynamics ---------------------------------------------------------------------------
@shared_doc
def rnea(model: Model, q, v, a, f_ext=None, *, backend: str | None = None) -> np.ndarray:
    """Inverse dynamics: the joint forces ``tau`` giving acceleration ``a``.

    {parameters_model_q}
    v, a : (nv,) or (N, nv) array_like
    {f_ext}
    {backend}

    Returns
    -------
    tau : (nv,) or (N, nv) ndarray

    Raises
    ------
    InputError
        On a wrong shape, a non-finite value or a quaternion whose norm is off by more
        than ``QUATERNION_TOLERANCE`` (one within it is normalized, on a copy).

    Notes
    -----
    The recursive Newton–Euler algorithm: velocities and accelerations outward,
    forces inward, ``tau_i = S_iᵀ f_i`` (:ref:`RBDA Table 5.1 <rbda-t5-1>`;
    S&G (8), (11), (14) in Lie-group notation).

    With mimic joints, ``tau = Gᵀ rnea_full(G q + o, G v, G a, f_ext)`` on the
    independent coordinates (:mod:`rbd.model.coupling`).

    Examples
    --------
    >>> import rbd
    >>> model = rbd.models.double_pendulum()
    >>> q = rbd.neutral(model)
    >>> rbd.rnea(model, q, [0.0, 0.0], [0.0, 0.0]).round(12)  # hanging at rest
    array([0., 0.])
    """
    return _twin(model, backend).rnea(q, v, a, f_ext)


@shared_doc
def crba(model: Model, q, *, backend: str | None = None) -> np.ndarray:
    """Joint-space inertia matrix ``M(q)``, ``(nv, nv)`` (or ``(N, nv, nv)``), symmetric.

    The composite-rigid-body algorithm: composite inertias accumulate from the
    leaves, and each column of ``M`` is the projection of a composite inertia
    on the joints up to the root (:ref:`RBDA Table 6.2 <rbda-t6-2>`).  The
    joints' rotor inertia ``model.armature`` is added to the diagonal.

    {parameters_q}

    Returns
    -------
    M : (nv, nv) or (N, nv, nv) ndarray
        Symmetric positive definite; ``T = ½ vᵀ M v``.

    {raises_bad_input}

    Notes
    -----
    With mimic joints, ``M = Gᵀ M_full G`` (:mod:`rbd.model.coupling`).

    Examples
    --------
    >>> import numpy as np, rbd
    >>> model = rbd.models.double_pendulum()   # unit masses at unit-length tips
    >>> rbd.crba(model, [0.0, np.pi / 2]).round(12)  # [[3 + 2 cos q1, 1 + cos q1], [., 1]]
    array([[3., 1.],
           [1., 1.]])
    """
    return _twin(model, backend).crba(q)


@shared_doc
def aba(model: Model, q, v, tau, f_ext=None, *, backend: str | None = None,
        pivot: str = "standard") -> np.ndarray:
    """Forward dynamics: the accelerations produced by joint forces ``tau``.

    The articulated-body algorithm: velocities outward, articulated inertias
    and bias forces inward, accelerations outward
    (:ref:`RBDA Table 7.1 <rbda-t7-1>`; S&G (17) states the result,
    ``qdd = M⁻¹ (tau − C v − g)``).

    {parameters_model_q}
    v, tau : (nv,) or (N, nv) array_like
    {f_ext}
    {backend}
    pivot : {"standard", "modified"}
        ``"modified"`` selects Pai, Ascher & Kry's modified articulated-body
        pivot (§7, :ref:`the modified pivot <pai-modified-pivot>`), which keeps
        the body's own inertia apart from its children's when forming
        ``D = Sᵀ I S + Sᵀ Ĩ S``.  Tutorial 21 measured it on chains of very
        uneven masses (a light link carrying a coaxial heavy one, mass ratios
        down to 1e-10): the standard and modified pivots had errors of the same
        size, pivot by pivot and in ``qdd`` (sometimes one smaller, sometimes the
        other), because the rounding that matters happens while the articulated
        inertia is formed, before the pivot is assembled.  The compiled kernel
        costs 2–6 % more with it (:doc:`/benchmarks`).  It is kept as a faithful
        rendering of the paper, not as an accuracy fix.

    Returns
    -------
    qdd : (nv,) or (N, nv) ndarray

    Raises
    ------
    InputError
        On an unknown ``pivot``, or on bad arrays (as :func:`rnea`).

    Notes
    -----
    With mimic joints (either pivot) it solves ``(Gᵀ M_full G) q̈ = tau − Gᵀ h_full``
    by a Cholesky factorization (:mod:`rbd.model.coupling`).

    Examples
    --------
    >>> import rbd
    >>> model = rbd.models.double_pendulum()
    >>> rbd.aba(model, [0.0, 0.0], [0.0, 0.0], [1.0, 0.0]).round(12)  # M⁻¹ [1, 0]
    array([ 1., -2.])
    >>> rbd.aba(model, [0.0, 0.0], [0.0, 0.0], [1.0, 0.0], pivot="modified").round(12)
    array([ 1., -2.])
    """
    if pivot not in ("standard", "modified"):
        raise InputError(f"pivot must be 'standard' or 'modified', got {pivot!r}")
    twin = _twin(model, backend)
    if pivot == "modified":
        return twin.aba_modified(q, v, tau, f_ext)
    return twin.aba(q, v, tau, f_ext)


@shared_doc
def nonlinear_effects(model: Model, q, v, *, backend: str | None = None) -> np.ndarray:
    """Bias forces ``h(q, v) = C(q, v) v + g(q)``: the joint forces at zero acceleration.

    The recursive Newton–Euler algorithm with ``a = 0``
    (:ref:`RBDA Table 5.1 <rbda-t5-1>`; S&G (17) names the terms).

    {parameters_q_v}

    Returns
    -------
    h : (nv,) or (N, nv) ndarray
        What accelerates the system is the rest of ``tau``: ``M q̈ = tau − h``.

    {raises_bad_input}

    Examples
    --------
    >>> import numpy as np, rbd
    >>> model = rbd.models.double_pendulum()
    >>> # elbow at 90°, shoulder turning: gravity (9.81, 9.81) plus the centrifugal 1 at the elbow
    >>> rbd.nonlinear_effects(model, [0.0, np.pi / 2], [1.0, 0.0]).round(12)
    array([ 9.81, 10.81])
    """
    return _twin(model, backend).nonlinear_effects(q, v)


@shared_doc
def gravity_forces(model: Model, q, *, backend: str | None = None) -> np.ndarray:
    """Generalized gravity ``g(q) = ∂U/∂q`` (as a force in velocity coordinates).

    The recursive Newton–Euler algorithm with ``v = a = 0``
    (:ref:`RBDA Table 5.1 <rbda-t5-1>`; the term ``φ(q)`` of S&G (17)).

    {parameters_q}

    Returns
    -------
    g : (nv,) or (N, nv) ndarray

    {raises_bad_input}

    Examples
    --------
    >>> import numpy as np, rbd
    >>> model = rbd.models.double_pendulum()
    >>> rbd.gravity_forces(model, [np.pi / 2, 0.0]).round(12)  # arm horizontal: (1+2) g, 1 g
    array([29.43,  9.81])
    """
    return _twin(model, backend).gravity_forces(q)


@shared_doc
def mass_matrix_inverse(model: Model, q, *, backend: str | None = None) -> np.ndarray:
    """``M(q)⁻¹``, ``(nv, nv)``, without forming ``M``.

    The articulated-body recursion applied to unit forces, the factorization
    ``M⁻¹ = (1 − Sᵀ Y Π)ᵀ Ω⁻¹ (1 − Sᵀ Y Π)`` of S&G (58).

    {parameters_q}

    Returns
    -------
    Minv : (nv, nv) or (N, nv, nv) ndarray
        Symmetric positive definite.

    {raises_bad_input}

    Notes
    -----
    With mimic joints, ``(Gᵀ M_full G)⁻¹`` by a Cholesky factorization.

    Examples
    --------
    >>> import rbd
    >>> model = rbd.models.double_pendulum()
    >>> rbd.mass_matrix_inverse(model, [0.0, 0.0]).round(12)  # inv([[5, 2], [2, 1]])
    array([[ 1., -2.],
           [-2.,  5.]])
    """
    return _twin(model, backend).mass_matrix_inverse(q)
