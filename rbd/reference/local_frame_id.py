r"""Recursive inverse dynamics in local frames (Liu & Jain, §7, Eqs. 72–85).

Every link ``k`` is described in its own frame (superscript :math:`\ell` in
the paper): the origin sits on the joint to its parent, :math:`c_k` is its
centre of mass (COM), :math:`R_k` the orientation of the frame relative to the
parent's frame and :math:`d_k` the position of its origin in the parent's
frame.  In ``rbd`` terms, with ``X_up[k] = plux(E, r)``:
:math:`R_k = E^T`, :math:`d_k = r`, and :math:`c_k` is the body's ``com``.

**Pass 1 (root to leaves)** computes the angular velocity :math:`\omega_k`,
the COM velocity :math:`v_k`, and the *true* accelerations :math:`\dot\omega_k`,
:math:`\dot v_k` of each link, all in its own axes.  The paper writes the
rotational (L&J 76–80) and the translational (L&J 82–84) cases separately;
here a joint may do both at once: its relative motion, in the link's axes,
is the twist :math:`(\hat\omega; \hat v) = S\dot q_k` with
:math:`\tfrac{d}{dt}(S\dot q_k) = S\ddot q_k + \dot S\dot q_k`.  With
:math:`\bar\omega = R_k^T\omega_{p(k)}` (the parent's angular velocity in the
link's axes) and :math:`r = d_k - c_{p(k)}`:

.. math::

    \omega_k &= \bar\omega + \hat\omega  &\text{(L\&J 78)}\\
    v_k &= R_k^T\big(v_{p} + \omega_{p}\times r\big) + \hat v + \omega_k\times c_k
        &\text{(L\&J 76, 83)}\\
    \dot\omega_k &= R_k^T\dot\omega_{p} + S_\omega\ddot q_k + \dot S_\omega\dot q_k
        + \bar\omega\times\hat\omega  &\text{(L\&J 80)}\\
    \dot v_k &= R_k^T\big(\dot v_{p} + \dot\omega_{p}\times r
        + \omega_{p}\times(\omega_{p}\times r)\big)
        + S_v\ddot q_k + \dot S_v\dot q_k + (2\bar\omega + \hat\omega)\times\hat v
        + \dot\omega_k\times c_k + \omega_k\times(\omega_k\times c_k)  &\text{(L\&J 79, 84)}

For a purely rotational joint (:math:`\hat v = 0`) these are L&J 76–80.  For a
purely translational one (:math:`\hat\omega = 0`, :math:`R_k = \mathbf 1`) the
velocity is L&J 83; L&J 84 states the acceleration as the derivative of the
local coordinates :math:`\dot v^\ell`, which differs from the true acceleration
by :math:`\omega\times v` (the relation used in L&J 79) — adding it gives the
Coriolis term :math:`2\bar\omega\times\hat v` and the centripetal terms above.

The world is the parent of the root(s): it does not move, its "COM" is its
origin, and gravity enters by giving it the acceleration :math:`-g` (L&J 85),
which is the same as a force :math:`-m_k g` on every link.

**Pass 2 (leaves to root)** applies Newton–Euler to each link in its frame.
:math:`f_k, \tau_k` are the force and the torque (about the link's origin)
that the parent exerts through the joint; each child :math:`\tilde\imath`
pushes back with :math:`-R_{\tilde\imath} f_{\tilde\imath}` at
:math:`d_{\tilde\imath}` (L&J 72–73):

.. math::

    f_k &= m_k\dot v_k + \sum_{\tilde\imath} R_{\tilde\imath} f_{\tilde\imath} - f^{e}_k\\
    \tau_k &= I_{ck}\dot\omega_k + \omega_k\times I_{ck}\omega_k + c_k\times f_k
        + \sum_{\tilde\imath}\big(R_{\tilde\imath}\tau_{\tilde\imath}
        + (d_{\tilde\imath} - c_k)\times R_{\tilde\imath} f_{\tilde\imath}\big)
        - (n^{e}_k - c_k\times f^{e}_k),

where :math:`(n^e_k; f^e_k)` is an external spatial force at the link's origin.
The joint force is the projection on the joint's motion subspace,
:math:`Q_k = S_\omega^T\tau_k + S_v^T f_k` (virtual work, L&J 3).
"""

from __future__ import annotations

import numpy as np

from ..spatial import plux_parts

__all__ = ["inverse_dynamics", "bias_forces", "gravity_forces", "link_frames", "joint_forces"]


def link_frames(model, q):
    r"""``R_k`` (link axes in the parent's axes), ``d_k`` (link origin in the parent's
    frame) and ``S_k`` for every link (L&J §7.1)."""
    R, d, S = [], [], []
    for k, body in enumerate(model.bodies):
        qk = q[model.q_index(k)]
        E, r = plux_parts(body.joint.X_J(qk) @ body.X_tree)
        R.append(E.T)
        d.append(r)
        S.append(body.joint.S(qk))
    return R, d, S


def joint_forces(model, q, v, a, f_ext=None) -> tuple[np.ndarray, np.ndarray]:
    r"""The two passes: force ``f_k`` and torque ``τ_k`` (about link ``k``'s origin) that
    each parent exerts on link ``k`` through the joint, in link ``k``'s axes.

    Parameters
    ----------
    model : Model
    q : (nq,) ndarray
    v, a : (nv,) ndarray
    f_ext : (nbodies, 6) ndarray, optional
        External spatial forces ``[n; f]`` on each body at its origin, in its axes.

    Returns
    -------
    f, tau : (nbodies, 3) ndarray
    """
    q, v, a = (np.asarray(x, dtype=float) for x in (q, v, a))
    nb = model.nbodies
    R, d, S = link_frames(model, q)
    w, vc, w_dot, vc_dot = [None] * nb, [None] * nb, [None] * nb, [None] * nb
    zero = np.zeros(3)

    # --- pass 1 (root to leaves): velocities and accelerations in local frames
    for k, body in enumerate(model.bodies):
        p = body.parent
        qd_k, qdd_k = v[model.v_index(k)], a[model.v_index(k)]
        c_p = zero if p < 0 else model.bodies[p].com
        w_p, v_p = (zero, zero) if p < 0 else (w[p], vc[p])
        w_dot_p = zero if p < 0 else w_dot[p]
        v_dot_p = -np.asarray(model.gravity) if p < 0 else vc_dot[p]      # L&J (85)
        c_J = body.joint.S_dot(q[model.q_index(k)], qd_k) @ qd_k
        w_hat, v_hat = S[k][:3] @ qd_k, S[k][3:] @ qd_k
        w_bar = R[k].T @ w_p
        r, c = d[k] - c_p, body.com
        w[k] = w_bar + w_hat                                                          # L&J (78)
        vc[k] = R[k].T @ (v_p + np.cross(w_p, r)) + v_hat + np.cross(w[k], c)        # L&J (76), (83)
        w_dot[k] = R[k].T @ w_dot_p + S[k][:3] @ qdd_k + c_J[:3] + np.cross(w_bar, w_hat)  # L&J (80)
        vc_dot[k] = (R[k].T @ (v_dot_p + np.cross(w_dot_p, r) + np.cross(w_p, np.cross(w_p, r)))
                     + S[k][3:] @ qdd_k + c_J[3:] + np.cross(2 * w_bar + w_hat, v_hat)
                     + np.cross(w_dot[k], c) + np.cross(w[k], np.cross(w[k], c)))      # L&J (79), (84)

    # --- pass 2 (leaves to root): forces and torques from Newton–Euler
    f, tau = np.zeros((nb, 3)), np.zeros((nb, 3))
    children = model.children
    for k in range(nb - 1, -1, -1):
        body = model.bodies[k]
        c, Ic = body.com, body.I_com
        f_k = body.mass * vc_dot[k]                                                   # L&J (72)
        t_k = Ic @ w_dot[k] + np.cross(w[k], Ic @ w[k])                               # L&J (73)
        for i in children[k]:
            f_k = f_k + R[i] @ f[i]                                                   # L&J (72)
            t_k = t_k + R[i] @ tau[i] + np.cross(d[i] - c, R[i] @ f[i])               # L&J (73)
        if f_ext is not None:
            n_e, f_e = np.asarray(f_ext[k][:3]), np.asarray(f_ext[k][3:])
            f_k = f_k - f_e
            t_k = t_k - (n_e - np.cross(c, f_e))
        f[k], tau[k] = f_k, t_k + np.cross(c, f_k)                                   # L&J (73)
    return f, tau


def inverse_dynamics(model, q, v, a, f_ext=None) -> np.ndarray:
    """Joint forces ``τ`` that produce accelerations ``a`` at the state ``(q, v)``.

    :func:`joint_forces` projected on each joint's motion subspace,
    ``Q_k = S_ωᵀ τ_k + S_vᵀ f_k`` (virtual work, L&J 3).

    Parameters are those of :func:`joint_forces`: ``model, q, v, a, f_ext``.

    Returns
    -------
    tau : (nv,) ndarray

    Examples
    --------
    >>> import numpy as np, rbd
    >>> model = rbd.models.double_pendulum()
    >>> q, v, a = np.array([0.3, -0.2]), np.array([1.0, 0.5]), np.array([0.1, 0.2])
    >>> np.allclose(inverse_dynamics(model, q, v, a), rbd.rnea(model, q, v, a))
    True
    """
    q = np.asarray(q, dtype=float)
    f, tau = joint_forces(model, q, v, a, f_ext)
    Q = np.zeros(model.nv)
    for k, body in enumerate(model.bodies):
        S = body.joint.S(q[model.q_index(k)])
        Q[model.v_index(k)] = S[:3].T @ tau[k] + S[3:].T @ f[k]                      # L&J (3)
    return Q


def bias_forces(model, q, v) -> np.ndarray:
    """``h(q, v) = C(q, v) + g(q)``: :func:`inverse_dynamics` at zero acceleration."""
    return inverse_dynamics(model, q, v, np.zeros(model.nv))


def gravity_forces(model, q) -> np.ndarray:
    """``g(q)``: :func:`inverse_dynamics` at zero velocity and acceleration."""
    return inverse_dynamics(model, q, np.zeros(model.nv), np.zeros(model.nv))
