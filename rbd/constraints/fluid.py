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
(``model.mujoco_bodies["inertia"]``).

A body with a ``fluidshape="ellipsoid"`` geom takes MuJoCo's ellipsoid model
instead ("Computation", ellipsoid model; ``mj_ellipsoidFluidModel``,
``mj_addedMassForces``, ``mj_viscousForces``; the reader keeps those geoms and
their ``fluidcoef`` in ``model.mujoco_bodies["ellipsoid"]``).  Each such geom is
the ellipsoid of semi-axes :math:`r` (:func:`semi_axes`) moving at
:math:`\omega, v` (geom frame, relative to the wind, at the geom's centre); with
blunt, slender and angular drag coefficients :math:`C_b, C_s, C_a`, Kutta and
Magnus lift coefficients :math:`C_K, C_M`:

* added mass (:func:`added_mass`): :math:`f \mathrel{+}= p \times \omega`,
  :math:`g \mathrel{+}= p \times v + L \times \omega` with the virtual momenta
  :math:`p = \rho\, m_v \circ v`, :math:`L = \rho\, I_v \circ \omega`;
* Magnus lift :math:`f \mathrel{+}= C_M \rho V\, \omega \times v`, Kutta lift
  :math:`f \mathrel{+}= C_K \rho \cos\alpha\, A_p\, (n \times v) \times v`
  (:math:`A_p` the area projected along :math:`v`, :math:`n` the normal of that
  section, :math:`\cos\alpha` the cosine between them);
* drag :math:`f \mathrel{-}= [\beta\, 3\pi D + \rho |v| (C_b A_p + C_s (A_{max} - A_p))]\, v`
  and :math:`g \mathrel{-}= [\beta\, \pi D^3 + \rho\, |I_d \circ \omega|]\, \omega`
  with :math:`D = \tfrac23 (r_0 + r_1 + r_2)` and
  :math:`I_{d,i} = C_a I_i + C_s (I_{max} - I_i)`.

Geoms of other kinds (meshes) in such bodies are left out (the reader warns).
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


#: MuJoCo's 15-point Gauss-Kronrod rule on [0, 1] mapped to [0, inf) by
#: l = x^3 / (1 - x)^2: weights, nodes l and dl/dx (``mjCGeom::GetAddedMassKappa``).
_KRONROD_W = np.array([0.01146766, 0.03154605, 0.05239501, 0.07032663, 0.08450236,
                       0.09517529, 0.10221647, 0.10474107, 0.10221647, 0.09517529,
                       0.08450236, 0.07032663, 0.05239501, 0.03154605, 0.01146766])
_KRONROD_L = np.array([7.865151709349917e-08, 1.7347976913907274e-05, 0.0003548008144506193,
                       0.002846636252924549, 0.014094260903596077, 0.053063261727396636,
                       0.17041978741317773, 0.5, 1.4036301548686991, 3.9353484827022642,
                       11.644841677041734, 39.53187807410903, 177.5711362220801,
                       1429.4772912937397, 54087.416549217705])
_KRONROD_D = np.array([5.538677720489877e-05, 0.002080868285293228, 0.016514126520723166,
                       0.07261900344370877, 0.23985243401862602, 0.6868318249020725,
                       1.8551129519182894, 5.0, 14.060031152313941, 43.28941239611009,
                       156.58546376397112, 747.9826085305024, 5827.4042950027115,
                       116754.0197944512, 25482945.327264845])
_MJ_EPS = 1e-14  # MuJoCo's mjEPS


def semi_axes(kind: str, size) -> np.ndarray:
    """The semi-axes of a geom's equivalent ellipsoid (``mju_geomSemiAxes``)."""
    r = np.asarray(size, float)
    if kind == "sphere":
        return np.array([r[0], r[0], r[0]])
    if kind == "capsule":
        return np.array([r[0], r[0], r[1] + r[0]])
    if kind == "cylinder":
        return np.array([r[0], r[0], r[1]])
    return r[:3].copy()


def _kappa(dx: float, dy: float, dz: float) -> float:
    r""":math:`\kappa_x = d_x d_y d_z \int_0^\infty d\lambda /
    \sqrt{(d_x^2+\lambda)^3 (d_y^2+\lambda)(d_z^2+\lambda)}` by MuJoCo's quadrature."""
    scale = (dx**3 * dy * dz) ** 0.4
    lam = scale * _KRONROD_L
    ax, ay, az = 1 + lam / dx**2, 1 + lam / dy**2, 1 + lam / dz**2
    return float(np.sum(scale * _KRONROD_D / (ax * np.sqrt(ax * ay * az)) * _KRONROD_W)) / dx**2


def added_mass(r) -> tuple[np.ndarray, np.ndarray]:
    """Virtual mass and inertia per unit fluid density of the ellipsoid of semi-axes ``r``
    (``mjCGeom::SetFluidCoefs``)."""
    dx, dy, dz = r
    volume = 4.0 / 3.0 * np.pi * dx * dy * dz
    k = np.array([_kappa(dx, dy, dz), _kappa(dy, dz, dx), _kappa(dz, dx, dy)])

    def moment(a, b, ka, kb):
        return ((a * a - b * b) ** 2 * abs(kb - ka)
                / max(_MJ_EPS, abs(2 * (a * a - b * b) + (a * a + b * b) * (ka - kb))))

    mass = volume * k / np.maximum(_MJ_EPS, 2 - k)
    inertia = volume / 5 * np.array([moment(dy, dz, k[1], k[2]), moment(dz, dx, k[2], k[0]),
                                     moment(dx, dy, k[0], k[1])])
    return mass, inertia


def ellipsoid_wrench(r, coefs, omega, v, density: float,
                     viscosity: float) -> tuple[np.ndarray, np.ndarray]:
    """Torque and force ``(g, f)`` on the ellipsoid of semi-axes ``r`` (geom frame, at its
    centre): the module's ellipsoid equations, ``coefs`` = ``fluidcoef``."""
    blunt, slender, angular, kutta, magnus = coefs
    vmass, vinertia = added_mass(r)
    p, L = density * vmass * v, density * vinertia * omega
    g = np.cross(p, v) + np.cross(L, omega)                 # mj_addedMassForces
    f = np.cross(p, omega)
    volume = 4.0 / 3.0 * np.pi * r[0] * r[1] * r[2]
    d_max, d_min = r.max(), r.min()
    d_mid = r.sum() - d_max - d_min
    area_max = np.pi * d_max * d_mid
    yz, zx, xy = r[1] * r[2], r[2] * r[0], r[0] * r[1]
    denom = yz**4 * v[0]**2 + zx**4 * v[1]**2 + xy**4 * v[2]**2
    num = (yz * v[0])**2 + (zx * v[1])**2 + (xy * v[2])**2
    area = np.pi * np.sqrt(denom / max(_MJ_MINVAL, num))    # projected along v
    normal = np.array([yz**2 * v[0], zx**2 * v[1], xy**2 * v[2]])
    speed = np.linalg.norm(v)
    cos_alpha = num / max(_MJ_MINVAL, speed * denom)
    f += magnus * density * volume * np.cross(omega, v)
    f += np.cross(kutta * density * cos_alpha * area * np.cross(normal, v), v)
    D = 2.0 / 3.0 * r.sum()
    moments = 8.0 / 15.0 * np.pi * r * np.maximum(np.roll(r, -1), np.roll(r, -2)) ** 4
    I_max = 8.0 / 15.0 * np.pi * d_mid * d_max**4
    drag_lin = viscosity * 3.0 * np.pi * D + density * speed * (
        area * blunt + slender * (area_max - area))
    drag_ang = viscosity * np.pi * D**3 + density * np.linalg.norm(
        omega * (angular * moments + slender * (I_max - moments)))
    return g - drag_ang * omega, f - drag_lin * v


def fluid_force(model, q, v, opts: dict, poses=None) -> np.ndarray:
    """MuJoCo's ``qfrc_fluid`` (inertia-box model) in rbd's coordinates, ``(nv,)``.

    Parameters
    ----------
    model : Model
        Loaded from MJCF (``model.mujoco_bodies["inertia"]``); any other model has none.
    q, v : (nq,), (nv,) ndarray
    opts : dict
        :func:`rbd.constraints.forward.options`: ``density``, ``viscosity``, ``wind``.
    poses : (nbodies, 4, 4) ndarray, optional
        :func:`rbd.forward_kinematics` at ``q``, when the caller has it already.
    """
    from ..algorithms.kinematics import forward_kinematics, jacobian

    density, viscosity, wind = fluid_options(opts)
    out = np.zeros(model.nv)
    places = getattr(model, "mujoco_bodies", None) or {}
    if not (density or viscosity) or not places.get("inertia"):
        return out
    if poses is None:
        poses = forward_kinematics(model, q)
    ellipsoids = places.get("ellipsoid", {})
    geoms = {g.name: g for g in getattr(model, "geoms", ())}

    def apply(i, R, point, wrench):
        """Add the wrench of ``(R, twist) -> (g, f)`` (frame ``R``, at ``point`` of body i)."""
        J = jacobian(model, q, i, point)                 # world-aligned [ω; v] at the point
        twist = J @ v
        g, f = wrench(R.T @ twist[:3], R.T @ (twist[3:] - wind))
        return J.T @ np.concatenate([R @ g, R @ f])     # mj_applyFT

    for name, (body, mass, com, axes, moments) in places["inertia"].items():
        if body is None or mass < _MJ_MINVAL:
            continue
        i = model.body_index(body)
        if name not in ellipsoids:
            box = box_sides(mass, moments)
            out += apply(i, poses[i][:3, :3] @ axes, com,
                         lambda w, u, box=box: box_wrench(box, w, u, density, viscosity))
            continue
        for geom_name, coefs in ellipsoids[name]:
            geom = geoms[geom_name]
            r = semi_axes(geom.kind, geom.size)
            out += apply(i, poses[i][:3, :3] @ geom.pose[:3, :3], geom.pose[:3, 3],
                         lambda w, u, r=r, c=coefs: ellipsoid_wrench(r, c, w, u, density,
                                                                     viscosity))
    return out
