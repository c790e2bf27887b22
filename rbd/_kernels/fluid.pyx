# cython: language_level=3
"""MuJoCo's fluid forces, compiled (``mj_inertiaBoxFluidModel``, ``mj_ellipsoidFluidModel``).

The compiled twin of ``rbd/constraints/fluid.py``: per MJCF body, the inertia box of its
mass and principal moments (``box_wrench``: Stokes drag of the mean-side sphere and the
quadratic drag of the faces), or per ``fluidshape="ellipsoid"`` geom the ellipsoid model
(``ellipsoid_wrench``: added mass, Magnus and Kutta lift, viscous and quadratic drag),
each at the velocity of its frame relative to the wind and applied as ``Jᵀ [g; f]``
through the Jacobian of its centre (``fluid_force``, ``mj_applyFT``).  The virtual masses
of the ellipsoids (``added_mass``, MuJoCo's quadrature) depend on the geom only and are
computed once, with the rest of the static data, by
``rbd.constraints.forward_compiled_terms.fluid_data``.

``fluid_force`` reads the world poses R, p and S of the workspace (after ``world_poses``)
and uses ``Work.J`` for the Jacobian of one centre.
"""

import numpy as np

cimport numpy as cnp
from libc.math cimport M_PI, fabs, fmax, fmin, sqrt
from libc.stdint cimport int64_t
from libc.string cimport memset

from rbd._kernels._model cimport ModelC, Work
from rbd._kernels._spatial cimport cross3
from rbd._kernels.impedance cimport MINVAL
from rbd._kernels.kinematics cimport jacobian_columns

cnp.import_array()


cdef void box_wrench(const double* box, const double* omega, const double* v, double density,
                     double viscosity, double* g, double* f) noexcept nogil:
    """Torque g and force f on the inertia box of sides ``box`` moving at ω, v (its frame,
    relative to the fluid)."""
    cdef double d, b0 = box[0], b1 = box[1], b2 = box[2]
    cdef double face[3]
    cdef double arm[3]
    cdef int i
    memset(g, 0, 3 * sizeof(double))
    memset(f, 0, 3 * sizeof(double))
    if viscosity > 0:
        # g = −π d³ β ω,  f = −3π d β v,  d = (b₀ + b₁ + b₂)/3
        d = (b0 + b1 + b2) / 3.0
        for i in range(3):
            g[i] -= M_PI * d * d * d * viscosity * omega[i]
            f[i] -= 3.0 * M_PI * d * viscosity * v[i]
    if density > 0:
        # f_i −= ½ ρ b_j b_k |v_i| v_i,  g_i −= ρ/64 b_i (b_j⁴ + b_k⁴) |ω_i| ω_i
        face[0] = b1 * b2; face[1] = b0 * b2; face[2] = b0 * b1
        arm[0] = b0 * (b1 ** 4 + b2 ** 4)
        arm[1] = b1 * (b0 ** 4 + b2 ** 4)
        arm[2] = b2 * (b0 ** 4 + b1 ** 4)
        for i in range(3):
            f[i] -= 0.5 * density * face[i] * fabs(v[i]) * v[i]
            g[i] -= density / 64.0 * arm[i] * fabs(omega[i]) * omega[i]


cdef void ellipsoid_wrench(const double* shape, const double* omega, const double* v,
                           double density, double viscosity, double* g,
                           double* f) noexcept nogil:
    """Torque g and force f on the ellipsoid of ``shape`` (semi-axes r, fluidcoef, virtual
    mass and inertia) moving at ω, v (geom frame, at its centre, relative to the fluid)."""
    cdef const double* r = shape
    cdef double blunt = shape[3], slender = shape[4], angular = shape[5]
    cdef double kutta = shape[6], magnus = shape[7]
    cdef double p[3]
    cdef double L[3]
    cdef double t[3]
    cdef double normal[3]
    cdef double kn[3]
    cdef double moments[3]
    cdef double volume, d_max, d_min, d_mid, area_max, yz, zx, xy, denom, num, area, speed
    cdef double cos_alpha, D, I_max, drag_lin, drag_ang, s
    cdef int i
    # added mass: p = ρ m_v ∘ v, L = ρ I_v ∘ ω;  g = p × v + L × ω, f = p × ω
    for i in range(3):
        p[i] = density * shape[8 + i] * v[i]
        L[i] = density * shape[11 + i] * omega[i]
    cross3(p, v, g)
    cross3(L, omega, t)
    for i in range(3):
        g[i] += t[i]
    cross3(p, omega, f)
    volume = 4.0 / 3.0 * M_PI * r[0] * r[1] * r[2]
    d_max = fmax(r[0], fmax(r[1], r[2]))
    d_min = fmin(r[0], fmin(r[1], r[2]))
    d_mid = r[0] + r[1] + r[2] - d_max - d_min
    area_max = M_PI * d_max * d_mid
    # A_p, the area projected along v, and the normal n of that section
    yz = r[1] * r[2]; zx = r[2] * r[0]; xy = r[0] * r[1]
    denom = yz ** 4 * v[0] * v[0] + zx ** 4 * v[1] * v[1] + xy ** 4 * v[2] * v[2]
    num = (yz * v[0]) ** 2 + (zx * v[1]) ** 2 + (xy * v[2]) ** 2
    area = M_PI * sqrt(denom / fmax(MINVAL, num))
    normal[0] = yz * yz * v[0]; normal[1] = zx * zx * v[1]; normal[2] = xy * xy * v[2]
    speed = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    cos_alpha = num / fmax(MINVAL, speed * denom)
    # Magnus f += C_M ρ V ω × v;  Kutta f += C_K ρ cos α A_p (n × v) × v
    cross3(omega, v, t)
    for i in range(3):
        f[i] += magnus * density * volume * t[i]
    cross3(normal, v, t)
    for i in range(3):
        kn[i] = kutta * density * cos_alpha * area * t[i]
    cross3(kn, v, t)
    for i in range(3):
        f[i] += t[i]
    # drag: f −= [β 3π D + ρ |v| (C_b A_p + C_s (A_max − A_p))] v,
    #       g −= [β π D³ + ρ |I_d ∘ ω|] ω,  I_d,i = C_a I_i + C_s (I_max − I_i)
    D = 2.0 / 3.0 * (r[0] + r[1] + r[2])
    for i in range(3):
        moments[i] = 8.0 / 15.0 * M_PI * r[i] * fmax(r[(i + 1) % 3], r[(i + 2) % 3]) ** 4
    I_max = 8.0 / 15.0 * M_PI * d_mid * d_max ** 4
    drag_lin = viscosity * 3.0 * M_PI * D + density * speed * (
        area * blunt + slender * (area_max - area))
    s = 0.0
    for i in range(3):
        s += (omega[i] * (angular * moments[i] + slender * (I_max - moments[i]))) ** 2
    drag_ang = viscosity * M_PI * D * D * D + density * sqrt(s)
    for i in range(3):
        g[i] -= drag_ang * omega[i]
        f[i] -= drag_lin * v[i]


cdef void fluid_force(const FluidC* fl, const ModelC* model, Work* w, const double* v,
                      double* out) noexcept nogil:
    """out += MuJoCo's qfrc_fluid in rbd's coordinates: each box's or ellipsoid's wrench
    Jᵀ [R g; R f] at its centre, R its frame in world axes (mj_applyFT)."""
    cdef Py_ssize_t k, i, j, l, nv = model.nv
    cdef double* J = w.J
    cdef double Rf[9]
    cdef double twist[6]
    cdef double omega[3]
    cdef double vel[3]
    cdef double g[3]
    cdef double f[3]
    cdef double wrench[6]
    cdef const double* frame
    cdef const double* R_i
    for k in range(fl.n):
        i = fl.body[k]
        frame = fl.frame + 12 * k
        R_i = w.R + 9 * i
        # J at the centre (world-aligned [ω; v]);  twist = J v;  R = R_i R_frame
        jacobian_columns(model, w, i, frame + 9, J)
        for l in range(6):
            twist[l] = 0.0
            for j in range(nv):
                twist[l] += J[l * nv + j] * v[j]
        for l in range(3):
            for j in range(3):
                Rf[3 * l + j] = (R_i[3 * l] * frame[j] + R_i[3 * l + 1] * frame[3 + j]
                                 + R_i[3 * l + 2] * frame[6 + j])
        # ω, v in the frame, v relative to the wind
        for l in range(3):
            omega[l] = Rf[l] * twist[0] + Rf[3 + l] * twist[1] + Rf[6 + l] * twist[2]
            vel[l] = (Rf[l] * (twist[3] - fl.wind[0]) + Rf[3 + l] * (twist[4] - fl.wind[1])
                      + Rf[6 + l] * (twist[5] - fl.wind[2]))
        if fl.kind[k] == 0:
            box_wrench(fl.shape + 14 * k, omega, vel, fl.density, fl.viscosity, g, f)
        else:
            ellipsoid_wrench(fl.shape + 14 * k, omega, vel, fl.density, fl.viscosity, g, f)
        # out += Jᵀ [R g; R f]
        for l in range(3):
            wrench[l] = Rf[3 * l] * g[0] + Rf[3 * l + 1] * g[1] + Rf[3 * l + 2] * g[2]
            wrench[3 + l] = Rf[3 * l] * f[0] + Rf[3 * l + 1] * f[1] + Rf[3 * l + 2] * f[2]
        for j in range(nv):
            for l in range(6):
                out[j] += J[l * nv + j] * wrench[l]


cdef class FluidModel:
    """The static data of a model's compiled fluid forces (``FluidC``), built once.

    Parameters
    ----------
    data : dict
        ``rbd.constraints.forward_compiled_terms.fluid_data``: ``density``, ``viscosity``,
        ``wind`` and the arrays named as ``FluidC``'s fields.
    """

    def __init__(self, dict data):
        kind = np.ascontiguousarray(data["kind"], dtype=np.int64)
        body = np.ascontiguousarray(data["body"], dtype=np.int64)
        frame = np.ascontiguousarray(data["frame"], dtype=np.float64).reshape(-1, 12)
        shape = np.ascontiguousarray(data["shape"], dtype=np.float64).reshape(-1, 14)
        if not len(kind) == len(body) == len(frame) == len(shape) > 0:
            raise ValueError("FluidModel: kind, body, frame and shape need one row per body")
        self.keep = (kind, body, frame, shape)
        self.c.density = data["density"]
        self.c.viscosity = data["viscosity"]
        for i in range(3):
            self.c.wind[i] = data["wind"][i]
        self.c.n = len(kind)
        self.c.kind = <const int64_t*>cnp.PyArray_DATA(kind)
        self.c.body = <const int64_t*>cnp.PyArray_DATA(body)
        self.c.frame = <const double*>cnp.PyArray_DATA(frame)
        self.c.shape = <const double*>cnp.PyArray_DATA(shape)
