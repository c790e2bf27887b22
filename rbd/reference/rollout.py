r"""Fixed-step rollouts: semi-implicit Euler and RK4 (Munthe-Kaas) steps of the ABA.

The reference twin of ``rbd/_kernels/rollout.pyx``, written from the same text
as the integrators of :mod:`rbd.simulation.integrators`:

* semi-implicit Euler: ``v₁ = v + h a``, ``q₁ = q ⊕ h v₁``;
* RK4 on ``x = (q, v)``: stages ``x ⊕ c k``, each stage velocity moved into
  the chart at ``q`` by ``dexp⁻¹_{-ξ}(v) ≈ v + ½[ξ, v] + 1/12 [ξ, [ξ, v]]`` on
  spherical and free joints, and ``q₁ = q ⊕ h k̄``,
  ``k̄ = (k₁ + 2k₂ + 2k₃ + k₄) / 6``.

The joint force at step ``k`` is ``τ = τ_ff[k] + K_p (q_ref ⊖ q) - K_d v``
plus the damping ``-D v`` (``⊖``: :func:`rbd.reference.kinematics.difference`).

The method is a member of :class:`Integrator`, the enum the compiled twin
declares too (``cpdef enum Integrator`` in ``rollout.pxd``, same members and
values); :data:`STEPS` maps each member to its step, as ``take_step`` does in
``rollout.pyx``.  :func:`transport` is the one RKMK transport of the package:
the Python path of :func:`rbd.simulate` (:mod:`rbd.simulation.integrators`)
calls it, the kernel renders it.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from ..spatial import crm, skew
from .aba import aba
from .kinematics import difference, integrate, kinetic_energy, potential_energy


class Integrator(IntEnum):
    """The fixed-step methods of :func:`rollout`, numbered as the compiled twin's enum."""

    EULER = 0       #: semi-implicit Euler, :func:`euler_step`
    RK4 = 1         #: RK4 in the Runge-Kutta-Munthe-Kaas form, :func:`rk4_step`


def joint_force(model, control: dict, k: int, q, v):
    """``(τ, τ_total)``: ``τ = τ_ff[k] + K_p (q_ref ⊖ q) - K_d v``, ``τ_total = τ - D v``."""
    ff = control.get("tau")
    if ff is None or len(ff) == 0:
        tau = np.zeros(model.nv)
    else:
        tau = np.array(ff[min(k, len(ff) - 1)], dtype=float)
    if control.get("q_ref") is not None:
        tau = tau + control["kp"] * difference(model, q, control["q_ref"]) - control["kd"] * v
    damping = control.get("damping")
    return tau, (tau if damping is None else tau - damping * v)


def evaluate(model, control: dict, k: int, q, v):
    """``(a, τ)``: the forward dynamics at step ``k``'s joint force."""
    tau, tau_total = joint_force(model, control, k, q, v)
    return aba(model, q, v, tau_total, control.get("f_ext")), tau


def dexp_inv_series(kind: str, xi, k):
    """``dexp⁻¹_{-ξ}(k) ≈ k + ½[ξ, k] + 1/12 [ξ, [ξ, k]]`` on one joint (enough for RKMK order 4).

    ``[ξ, k] = ad_ξ k``: ``ξ × k`` on so(3) (``kind == "spherical"``), ``crm(ξ) k`` on se(3).
    """
    ad = skew(xi) if kind == "spherical" else crm(xi)
    adk = ad @ k
    return k + 0.5 * adk + (ad @ adk) / 12.0


def curved_joints(model) -> list[tuple[str, slice]]:
    """``(kind, v-slice)`` of every joint whose configuration space is curved."""
    return [(b.joint.kind, model.v_index(i)) for i, b in enumerate(model.bodies)
            if b.joint.kind in ("spherical", "free")]


def transport(model, xi, k, joints=None):
    """The RKMK transport: ``k`` on flat joints, :func:`dexp_inv_series` on curved ones.

    ``joints``: :func:`curved_joints` of ``model``, when the caller keeps them.
    """
    k = np.array(k, dtype=float)
    for kind, s in curved_joints(model) if joints is None else joints:
        k[s] = dexp_inv_series(kind, xi[s], k[s])
    return k


def rk4_step(model, control: dict, step: int, h: float, q, v, a):
    """One RK4 step (Munthe-Kaas form on the curved joints) from ``(q, v)`` with ``a`` known."""
    def stage(c, kq, ka):
        q_s, v_s = integrate(model, q, kq, c), v + c * ka
        a_s, _ = evaluate(model, control, step, q_s, v_s)
        return transport(model, c * kq, v_s), a_s

    k2 = stage(0.5 * h, v, a)
    k3 = stage(0.5 * h, *k2)
    k4 = stage(h, *k3)
    kq = (v + 2.0 * k2[0] + 2.0 * k3[0] + k4[0]) / 6.0
    ka = (a + 2.0 * k2[1] + 2.0 * k3[1] + k4[1]) / 6.0
    return integrate(model, q, kq, h), v + h * ka


def euler_step(model, control: dict, step: int, h: float, q, v, a):
    """Semi-implicit Euler: ``v₁ = v + h a``, ``q₁ = q ⊕ h v₁``."""
    v1 = v + h * a
    return integrate(model, q, v1, h), v1


#: The step of each :class:`Integrator`, all with one signature ``(model, control, step,
#: h, q, v, a) -> (q₁, v₁)``; a new fixed-step method is a function and a row here.
STEPS = {Integrator.EULER: euler_step, Integrator.RK4: rk4_step}


def rollout(model, q0, v0, times, integrator=Integrator.RK4, stride=1, control=None):
    """Steps from ``(q0, v0)`` over the grid ``times``; samples every ``stride`` steps.

    ``integrator``: a member (or the value) of :class:`Integrator`.

    ``control``: ``tau`` (``(nv,)`` or one row a step), ``q_ref``, ``kp``,
    ``kd``, ``damping``, ``f_ext`` (each optional).  Returns ``(samples,
    status)``: ``samples`` a dict of ``q, v, a, tau, kinetic, potential``
    (arrays), ``status`` 0, or -1 when the state or ``a`` became non-finite.
    """
    control = dict(control or {})
    if control.get("tau") is not None:
        control["tau"] = np.atleast_2d(np.asarray(control["tau"], dtype=float))
    take_step = STEPS[Integrator(integrator)]
    n = len(times) - 1
    out = {name: [] for name in ("q", "v", "a", "tau", "kinetic", "potential")}

    def record(q, v, a, tau):
        for name, value in zip(out, (q, v, a, tau, kinetic_energy(model, q, v),
                                     potential_energy(model, q)), strict=True):
            out[name].append(value)

    def result(status):
        return {name: np.array(values) for name, values in out.items()}, status

    q, v = np.array(q0, dtype=float), np.array(v0, dtype=float)
    # --- the initial sample: a = FD(q₀, v₀, τ)
    a, tau = evaluate(model, control, 0, q, v)
    if not np.all(np.isfinite(a)):
        return result(-1)
    record(q, v, a, tau)
    # --- the steps: x_{k+1} = step(x_k), a_{k+1} = FD(x_{k+1}), a sample every stride steps
    for k in range(n):
        h = times[k + 1] - times[k]
        q, v = take_step(model, control, k, h, q, v, a)
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
            return result(-1)
        a, tau = evaluate(model, control, k + 1, q, v)
        if not np.all(np.isfinite(a)):
            return result(-1)
        if (k + 1) % stride == 0 or k + 1 == n:
            record(q, v, a, tau)
    return result(0)
