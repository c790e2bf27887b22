"""The walker's Poincaré-map Jacobian from the variational equations of the swing phase.

:func:`section_jacobian` is the exact-derivative companion of the
finite-difference Jacobian that :func:`rbd.walker.find_limit_cycle` uses for the
Floquet multipliers: the swing phase's monodromy comes from
:func:`rbd.aba_derivatives`, the heel strike's timing from the saltation matrix.
The walker itself lives in :mod:`rbd.walker`; its functions are looked up there
when a Jacobian is computed (``rbd.walker`` re-exports :func:`section_jacobian`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..algorithms import aba, aba_derivatives
from ..model import Model

__all__ = ["ALGEBRAIC_STEP", "central_jacobian", "hybrid_jacobian"]


#: Central-difference step of the two algebraic maps that :func:`section_jacobian`
#: differences (no integration inside): truncation ~h² ≈ 1e-12, rounding ~1e-16 / h ≈ 1e-10.
ALGEBRAIC_STEP = 1e-6


def central_jacobian(fun: Callable, x: np.ndarray, h: float = ALGEBRAIC_STEP) -> np.ndarray:
    """Central-difference Jacobian of an algebraic map ``fun`` at ``x`` (columns by ``e_k``)."""
    return np.column_stack([(fun(x + h * e) - fun(x - h * e)) / (2 * h) for e in np.eye(len(x))])


def _variational_flow(model: Model, x0: np.ndarray, duration: float, rtol: float,
                      atol: float, error: type[Exception]) -> np.ndarray:
    r"""Monodromy ``Φ(T) = ∂x(T)/∂x(0)`` of the swing phase, ``(4, 4)``.

    Integrates the state with :math:`\dot\Phi = A(x(t))\,\Phi`, :math:`\Phi(0) = 1`,
    where ``A = [[0, 1], [∂q̈/∂q, ∂q̈/∂q̇]]`` comes from :func:`rbd.aba_derivatives`
    (exact; both joints are revolute, so tangent and coordinate derivatives agree),
    by DOP853 at the swing phase's tolerances.
    """
    from scipy.integrate import solve_ivp

    tau, n = np.zeros(model.nv), 2 * model.nv

    def rhs(t, y):
        q, v, Phi = y[:model.nv], y[model.nv:n], y[n:].reshape(n, n)
        dqdd_dq, dqdd_dv, _ = aba_derivatives(model, q, v, tau)
        A = np.block([[np.zeros((model.nv, model.nv)), np.eye(model.nv)], [dqdd_dq, dqdd_dv]])
        return np.concatenate([v, aba(model, q, v, tau), (A @ Phi).ravel()])

    y0 = np.concatenate([x0, np.eye(n).ravel()])
    sol = solve_ivp(rhs, (0.0, duration), y0, method="DOP853", rtol=rtol, atol=atol)
    if not sol.success:
        raise error(f"the variational equations of the swing phase failed: {sol.message}")
    return sol.y[n:, -1].reshape(n, n)


def hybrid_jacobian(model: Model, x0: np.ndarray, duration: float, x_minus: np.ndarray,
                    dynamics: Callable, height: Callable, impact: Callable, rtol: float,
                    atol: float, error: type[Exception]) -> np.ndarray:
    r"""Jacobian ``∂x⁺/∂x₀`` of one step: swing flow, heel strike at a moving time, impact.

    The chain rule through a hybrid transition: the swing flow from ``x0`` for
    ``duration`` to ``x_minus``, where the event ``height(x) = 0`` fires, then the
    impact map ``x⁺ = impact(x⁻)``:

    .. math::

        \frac{\partial x^+}{\partial x_0} = D\Delta(x^-)
        \Big(1 - \frac{f(x^-)\, \nabla g^T}{\nabla g^T f(x^-)}\Big)\, \Phi(T),

    with ``Φ(T)`` the monodromy of the swing phase (:func:`_variational_flow`:
    ``Φ̇ = A(t) Φ`` with ``A`` from :func:`rbd.aba_derivatives`, exact), ``f =
    dynamics(T, x⁻)`` the swing dynamics at the strike (exact), and the bracket the
    saltation matrix that accounts for the strike time moving with ``x₀``
    (``∂T/∂x₀ = -∇gᵀΦ / ∇gᵀf``).  :func:`rbd.walker.section_jacobian` composes it
    with the section's embedding and rows.

    Notes
    -----
    Two factors are central differences, both of algebraic maps (no
    integration inside, step :data:`ALGEBRAIC_STEP`, accurate to ~1e-10): the
    gradient ``∇g`` of the event (forward kinematics), and the impact map's
    Jacobian ``DΔ`` (re-rooting plus the momentum balance SPW (23), linear in
    ``q̇⁻``).  What this replaces is the difference of whole steps in
    ``rbd.walker._section_jacobian``, whose error is set by the integration
    tolerance (~1e-10 / h ≈ 1e-5).
    """
    Phi = _variational_flow(model, x0, duration, rtol, atol, error)
    f = dynamics(duration, x_minus)
    grad_g = central_jacobian(height, x_minus)[0]
    saltation = np.eye(len(x0)) - np.outer(f, grad_g) / (grad_g @ f)
    return central_jacobian(impact, x_minus) @ saltation @ Phi
