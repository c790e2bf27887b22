"""Analytical derivatives of inverse and forward dynamics, and the linearization.
"""

from __future__ import annotations

import numpy as np

from .._docstrings import shared_doc
from ..model import Model
from ..reference import derivatives as _deriv
from ._coupled import spd_solve
from ._dispatch import _A, _F, _Q, _TAU, _V, _kernel, _reference


# --- derivatives -------------------------------------------------------------------------------
def _three(result) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The reference's ``(A, B, C)`` per state, or stacked ``(N, 3, nv, nv)``, as a triple."""
    if isinstance(result, tuple):
        return result
    return result[:, 0], result[:, 1], result[:, 2]


def _coupled_derivatives(dyn, q, v, x, f_ext, forward: bool):
    """Derivatives of a model with mimic joints from the full tree's: ``Gᵀ (·) G``.

    ``τ = Gᵀ τ_full(G_q q + o, G v, G a)`` with a constant ``G``, so
    ``∂τ/∂y = Gᵀ ∂τ_full/∂y_full G`` (``y = q, v, a``).  Forward dynamics solves
    ``Gᵀ τ_full(…, G q̈) = τ``; differentiating this identity gives
    ``∂q̈/∂y = −(Gᵀ M_full G)⁻¹ Gᵀ ∂τ_full/∂y_full G``.
    """
    c = dyn.coupling
    if forward:
        qdd = dyn.aba(q, v, x, f_ext)
        qf, vf, af, f = dyn._args((_Q, _V, _A, _F), (q, v, qdd, f_ext))
    else:
        qf, vf, af, f = dyn._args((_Q, _V, _A, _F), (q, v, x, f_ext))
    full = rnea_derivatives(dyn.full, qf, vf, af, f, backend=dyn.backend)
    dq, dv, M = (c.G.T @ D @ c.G for D in full)
    if not forward:
        return dq, dv, c.project_matrix(full[2])
    M_inv = spd_solve(c.project_matrix(full[2]), None)
    return -M_inv @ dq, -M_inv @ dv, M_inv


def _derivatives(k, model, q, v, x, f_ext, forward: bool):
    """The derivatives of inverse (``x = a``) or forward (``x = tau``) dynamics.

    ``k`` is the compiled model when the kernel path is selected (else None).
    """
    name = "aba_derivatives" if forward else "rnea_derivatives"
    if k is not None and getattr(model, "_mimic", None):
        return _coupled_derivatives(k, q, v, x, f_ext, forward=forward)
    if k is not None:
        return getattr(k, name)(q, v, x, f_ext)
    _deriv.check_joints(model)
    kinds = (_Q, _V, _TAU if forward else _A, _F)
    return _three(_reference(getattr(_deriv, name), model, kinds, (q, v, x, f_ext)))


@shared_doc
def rnea_derivatives(model: Model, q, v, a, f_ext=None, *, backend: str | None = None
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Partial derivatives of inverse dynamics: ``(∂τ/∂q, ∂τ/∂v, ∂τ/∂a)``.

    Parameters
    ----------
    {model_q}
    v, a : (nv,) or (N, nv) array_like
    f_ext : (nbodies, 6) or (N, nbodies, 6) array_like, optional
        External spatial forces in body coordinates, held fixed in the body frames.
    {backend}

    Returns
    -------
    dtau_dq, dtau_dv, dtau_da : (nv, nv) or (N, nv, nv) ndarray
        ``∂τ/∂a = M(q)`` (armature included).

    Raises
    ------
    InputError
        On bad arguments, as :func:`rnea`.
    ModelError
        For a model with a symbolic joint (no generated second derivatives).

    Notes
    -----
    Derivatives with respect to ``q`` are taken in the tangent space: column
    ``c`` is ``∂/∂ε τ(integrate(q, ε e_c), v, a)`` at ``ε = 0``.  For a spherical
    or free joint ``e_c`` is a local (body-frame) increment — a rotation
    ``q ⊗ exp(ε e)`` about a body axis, or for a free joint a body-frame twist
    ``[ω; v]`` — so the matrix has ``nv`` columns, not ``nq``; for every other joint
    it is the ordinary partial derivative.  The recursion differentiates each
    pass of the RNEA (:mod:`rbd.reference.derivatives`, after Carpentier &
    Mansard, RSS 2018), in O(nv · nbodies).  With mimic joints,
    ``∂τ/∂y = Gᵀ ∂τ_full/∂y_full G`` (:mod:`rbd.model.coupling`).

    Examples
    --------
    >>> import rbd
    >>> model = rbd.models.double_pendulum()
    >>> dq, dv, da = rbd.rnea_derivatives(model, [0.0, 0.0], [0.0, 0.0], [0.0, 0.0])
    >>> dq.round(6)   # hanging at rest: ∂²U/∂q² = g [[m₁l₁ + m₂(l₁ + l₂), m₂l₂], [m₂l₂, m₂l₂]]
    array([[29.43,  9.81],
           [ 9.81,  9.81]])
    """
    return _derivatives(_kernel(model, backend), model, q, v, a, f_ext, forward=False)


def aba_derivatives(model: Model, q, v, tau, f_ext=None, *, backend: str | None = None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Partial derivatives of forward dynamics: ``(∂q̈/∂q, ∂q̈/∂v, ∂q̈/∂τ)``.

    ``∂q̈/∂x = −M⁻¹ ∂τ/∂x`` at ``q̈ = aba(q, v, tau)`` (``x = q, v``) and
    ``∂q̈/∂τ = M⁻¹``; ``q`` in the tangent space as for :func:`rnea_derivatives`.
    Arguments, shapes and errors as :func:`rnea_derivatives`; a model whose
    forward dynamics is undefined raises :class:`~rbd.errors.ModelError` as
    :func:`aba` does on the kernel backend.  With mimic joints,
    ``∂q̈/∂y = −(Gᵀ M_full G)⁻¹ Gᵀ ∂τ_full/∂y_full G``.
    """
    return _derivatives(_kernel(model, backend), model, q, v, tau, f_ext, forward=True)


def linearize(model: Model, q, v, tau, f_ext=None, *, backend: str | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
    """First-order dynamics ``ẋ ≈ A x + B u`` about ``(q, v, tau)``.

    The state is ``x = (δq, δv)`` (``2 nv``) and the input ``u = δτ`` (``nv``):

    .. math::

        A = \\begin{bmatrix} 0 & 1 \\\\ \\partial\\ddot q/\\partial q &
        \\partial\\ddot q/\\partial v \\end{bmatrix}, \\qquad
        B = \\begin{bmatrix} 0 \\\\ M^{-1} \\end{bmatrix}.

    Returns
    -------
    A : (2 nv, 2 nv) or (N, 2 nv, 2 nv) ndarray
    B : (2 nv, nv) or (N, 2 nv, nv) ndarray

    Notes
    -----
    ``δq`` is a tangent-space coordinate: the configuration is
    ``integrate(q, δq)``.  For revolute, prismatic, helical, universal and planar
    joints this is ``q + δq``.  For a spherical joint ``δq`` is a rotation vector
    in the body frame (the configuration is ``q ⊗ exp(δq)``), and for a free joint
    a body-frame twist ``[δθ; δp]`` applied on the right (``T(q) exp(δq)``), so
    ``δq`` has ``nv`` entries where ``q`` has ``nq``.  Near ``δq = 0`` the
    kinematics is ``d(δq)/dt = v`` to first order, which is the identity block
    of ``A``; use :func:`integrate` to map a linear prediction back to ``q``.
    ``(q, v, tau)`` need not be an equilibrium: the drift ``[v; q̈]`` is then the
    constant term left out of ``A x + B u``.

    Examples
    --------
    >>> import numpy as np, rbd
    >>> model = rbd.models.double_pendulum()
    >>> A, B = rbd.linearize(model, [0.0, 0.0], [0.0, 0.0], [0.0, 0.0])
    >>> bool(np.all(abs(np.linalg.eigvals(A).real) < 1e-9))   # hanging: oscillates
    True
    """
    dq, dv, M_inv = aba_derivatives(model, q, v, tau, f_ext, backend=backend)
    nv = dq.shape[-1]
    batch = dq.shape[:-2]
    A = np.zeros((*batch, 2 * nv, 2 * nv))
    A[..., :nv, nv:] = np.eye(nv)
    A[..., nv:, :nv] = dq
    A[..., nv:, nv:] = dv
    B = np.zeros((*batch, 2 * nv, nv))
    B[..., nv:, :] = M_inv
    return A, B
