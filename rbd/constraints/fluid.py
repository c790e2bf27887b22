r"""MuJoCo's fluid forces, inertia-box model (``<option density viscosity wind>``).

MuJoCo's "Computation" chapter, section "Fluid forces", inertia-box model
(``mj_inertiaBoxFluidModel`` in ``engine_passive.c``).  Each body of mass
:math:`m` and principal moments :math:`I_0, I_1, I_2` (about its centre of mass,
in its inertia frame) is replaced by the uniform box of the same mass and inertia,
of sides

.. math::  b_i = \sqrt{6\,(I_j + I_k - I_i)/m}, \qquad \{i, j, k\} = \{0, 1, 2\}.

With :math:`\omega` and :math:`v` the body's angular velocity and the velocity of its
centre of mass relative to the wind, both in the inertia frame, the force
:math:`f` and torque :math:`g` (inertia frame, at the centre of mass) are

.. math::

   g &= -\pi d^3 \beta\,\omega, \qquad f = -3 \pi d \beta\, v
   \qquad (d = (b_0 + b_1 + b_2)/3,\ \text{viscosity}\ \beta > 0), \\
   f_i &\mathrel{-}= \tfrac12 \rho\, b_j b_k\, |v_i|\, v_i, \qquad
   g_i \mathrel{-}= \tfrac{\rho}{64}\, b_i (b_j^4 + b_k^4)\, |\omega_i|\, \omega_i
   \qquad (\text{density}\ \rho > 0),

the Stokes drag of the sphere of diameter :math:`d` and the quadratic drag of the
box's faces.  They act on the model as the generalized force :math:`J^T [g; f]`
with :math:`J` the Jacobian of the centre of mass (``mj_applyFT``).  Bodies of
(almost) no mass are left out, as in MuJoCo.

MuJoCo's body inertia is per MJCF body, before rbd merges bodies welded to their
parent: the MJCF reader keeps each MJCF body's mass, centre and principal axes
(``model.mujoco_bodies["inertia"]``).  A body with a ``fluidshape="ellipsoid"``
geom uses MuJoCo's ellipsoid model instead, which rbd leaves out (the MJCF reader
warns of it): such bodies are named in ``model.mujoco_bodies["ellipsoid"]`` and
get no fluid force here.
"""

from __future__ import annotations

import numpy as np

_MJ_MINVAL = 1e-15  # MuJoCo's mjMINVAL


def fluid_options(opts: dict) -> tuple[float, float, np.ndarray]:
    """``(density, viscosity, wind)`` of :func:`rbd.constraints.forward.options`."""
    return (float(opts.get("density", 0.0)), float(opts.get("viscosity", 0.0)),
            np.asarray(opts.get("wind", (0.0, 0.0, 0.0)), float))


def has_fluid(model) -> bool:
    """True when the model's MJCF ``<option>`` sets a density or a viscosity (MuJoCo's
    ``mj_fluid`` runs) and a body has the inertia data the model needs."""
    opts = getattr(model, "mujoco_options", None) or {}
    density, viscosity, _ = fluid_options(opts)
    inertia = (getattr(model, "mujoco_bodies", None) or {}).get("inertia") or {}
    return bool(density or viscosity) and bool(inertia)


def box_sides(mass: float, moments) -> np.ndarray:
    r"""Sides :math:`b_i = \sqrt{6 (I_j + I_k - I_i)/m}` of the equivalent inertia box
    (each square's argument kept above MuJoCo's ``mjMINVAL``)."""
    I0, I1, I2 = np.asarray(moments, float)
    return np.sqrt(np.maximum(_MJ_MINVAL, [I1 + I2 - I0, I0 + I2 - I1, I0 + I1 - I2])
                   / mass * 6.0)


def box_wrench(box, omega, v, density: float, viscosity: float) -> tuple[np.ndarray, np.ndarray]:
    """Torque and force ``(g, f)`` on the inertia box of sides ``box`` moving at ``omega``
    and ``v`` (inertia frame, relative to the fluid): the module's equations."""
    g, f = np.zeros(3), np.zeros(3)
    if viscosity > 0:
        d = np.sum(box) / 3.0
        g -= np.pi * d**3 * viscosity * omega
        f -= 3.0 * np.pi * d * viscosity * v
    if density > 0:
        b0, b1, b2 = box
        f -= 0.5 * density * np.array([b1 * b2, b0 * b2, b0 * b1]) * np.abs(v) * v
        g -= density / 64.0 * np.array([b0 * (b1**4 + b2**4), b1 * (b0**4 + b2**4),
                                        b2 * (b0**4 + b1**4)]) * np.abs(omega) * omega
    return g, f


def fluid_force(model, q, v, opts: dict) -> np.ndarray:
    """MuJoCo's ``qfrc_fluid`` (inertia-box model) in rbd's coordinates, ``(nv,)``.

    Parameters
    ----------
    model : Model
        Loaded from MJCF (``model.mujoco_bodies["inertia"]``); any other model has none.
    q, v : (nq,), (nv,) ndarray
    opts : dict
        :func:`rbd.constraints.forward.options`: ``density``, ``viscosity``, ``wind``.
    """
    from ..algorithms.kinematics import forward_kinematics, jacobian

    density, viscosity, wind = fluid_options(opts)
    out = np.zeros(model.nv)
    places = getattr(model, "mujoco_bodies", None) or {}
    if not (density or viscosity) or not places.get("inertia"):
        return out
    poses = forward_kinematics(model, q)
    skip = places.get("ellipsoid", ())
    for name, (body, mass, com, axes, moments) in places["inertia"].items():
        if body is None or mass < _MJ_MINVAL or name in skip:
            continue
        i = model.body_index(body)
        R = poses[i][:3, :3] @ axes                      # inertia frame in the world
        J = jacobian(model, q, i, com)                   # world-aligned [ω; v] at the com
        twist = J @ v
        omega = R.T @ twist[:3]
        vel = R.T @ (twist[3:] - wind)
        g, f = box_wrench(box_sides(mass, moments), omega, vel, density, viscosity)
        out += J.T @ np.concatenate([R @ g, R @ f])     # mj_applyFT at the com
    return out
