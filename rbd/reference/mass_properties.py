r"""Mass properties of shapes: volume (or area), centre of mass and inertia per unit density.

Two families, both as MuJoCo's compiler computes them (so that a body whose
inertia comes from its geoms gets MuJoCo's numbers):

* **Primitives in closed form** (:func:`primitive_inertia`): sphere, capsule,
  cylinder, ellipsoid and box, as solids or as thin shells (MuJoCo's
  ``shellinertia``).  Sizes follow MuJoCo's convention (:mod:`rbd.model.geoms`); the
  shape sits at its frame's origin with its axis along ``z``.
* **Closed triangle meshes by the divergence theorem** (:func:`mesh_inertia`).
  With outward normals, the solid is the signed sum of the tetrahedra that
  join a point ``o`` to each triangle ``(a, b, c)``,

  .. math::

      V_f = \tfrac16 (a - o)\cdot\big((b - o)\times(c - o)\big), \qquad
      V = \sum_f V_f, \qquad
      c = \frac1V \sum_f V_f\,\frac{o + a + b + c}{4},

  and with the vertices taken relative to ``o`` the second moments
  :math:`P_{jk} = \int x_j x_k\,dV` of one tetrahedron are

  .. math::

      P_{jk} = \frac{V_f}{20}\Big(2\,(a_j a_k + b_j b_k + c_j c_k)
               + a_j b_k + a_k b_j + a_j c_k + a_k c_j + b_j c_k + b_k c_j\Big)

  (Tonon, 2004, eq. 2–4; Eberly, "Polyhedral mass properties").  The inertia
  about ``o`` is :math:`I = \operatorname{tr}(P)\,\mathbf 1 - P`.  MuJoCo's
  variants (``<mesh inertia=...>``): ``"exact"`` is this formula on the
  file's triangles; ``"convex"`` on the triangles of the convex hull;
  ``"legacy"`` (MuJoCo's default) takes every tetrahedron's volume as
  positive (``|V_f|``), with the area-weighted centroid of the triangles as
  ``o`` for the volume and the centre of mass, then the centre of mass as
  ``o`` for the inertia: right for convex meshes, wrong for others;
  ``"shell"`` puts the mass on the surface (weights: triangle areas, and
  :math:`P_{jk}` with 12 in place of 20).

All functions return values per unit density (multiply by the density, or
by ``mass / volume``).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["primitive_volume", "primitive_inertia", "mesh_inertia", "MESH_INERTIA_MODES"]

#: MuJoCo's ``<mesh inertia=...>`` values.
MESH_INERTIA_MODES = ("legacy", "exact", "convex", "shell")

_MINVAL = 1e-15  # MuJoCo's mjMINVAL: smaller triangles count as zero area


# --- primitives --------------------------------------------------------------------------------
def primitive_volume(kind: str, size, shell: bool = False) -> float:
    """Volume (``shell``: surface area) of a primitive with MuJoCo's sizes."""
    s = np.asarray(size, dtype=float)
    r = s[0]
    if kind == "sphere":
        return 4 * math.pi * r * r if shell else 4 * math.pi * r ** 3 / 3
    if kind == "capsule":
        h = 2 * s[1]
        return (4 * math.pi * r * r + 2 * math.pi * r * h if shell
                else math.pi * (r * r * h + 4 * r ** 3 / 3))
    if kind == "cylinder":
        h = 2 * s[1]
        return 2 * math.pi * r * r + 2 * math.pi * r * h if shell else math.pi * r * r * h
    if kind == "ellipsoid":
        if not shell:
            return 4 * math.pi * s[0] * s[1] * s[2] / 3
        p = 1.6075  # Thomsen's approximation of the surface area
        t = (s[0] * s[1]) ** p + (s[1] * s[2]) ** p + (s[2] * s[0]) ** p
        return 4 * math.pi * (t / 3) ** (1 / p)
    if kind == "box":
        return (8 * (s[0] * s[1] + s[1] * s[2] + s[2] * s[0]) if shell
                else 8 * s[0] * s[1] * s[2])
    raise ValueError(f"no volume for a {kind!r}")


def primitive_inertia(kind: str, size, mass: float, shell: bool = False) -> np.ndarray:
    """Principal moments ``(Ixx, Iyy, Izz)`` about the centre of a primitive of mass ``mass``."""
    s = np.asarray(size, dtype=float)
    r = s[0]
    if kind == "sphere":
        return np.full(3, (2 / 3 if shell else 2 / 5) * mass * r * r)
    if kind == "capsule":
        return _capsule(r, s[1], mass, shell)
    if kind == "cylinder":
        return _cylinder(r, s[1], mass, shell)
    sq = s * s
    pairs = np.array([sq[1] + sq[2], sq[0] + sq[2], sq[0] + sq[1]])
    if kind == "ellipsoid":
        if not shell:
            return mass * pairs / 5
        return _ellipsoid_shell(s, mass)
    if kind == "box":
        return _box_shell(s, mass) if shell else mass * pairs / 3
    raise ValueError(f"no inertia for a {kind!r}")


def _capsule(r, half, mass, shell):
    h = 2 * half
    if not shell:
        ms = mass * 4 * r / (4 * r + 3 * h)  # the two hemispheres: a sphere's share of volume
        mc = mass - ms
        ixx = (mc * (3 * r * r + h * h) / 12 + 2 * ms * r * r / 5
               + ms * h * (3 * r + 2 * h) / 8)  # hemispheres moved to the ends
        return np.array([ixx, ixx, mc * r * r / 2 + 2 * ms * r * r / 5])
    a_sphere, a_side = 4 * math.pi * r * r, 2 * math.pi * r * h
    ms = mass * a_sphere / (a_sphere + a_side)
    mc = mass - ms
    com, pos = r / 2, half + r / 2  # a hemispherical shell's centre, and where it sits
    ixx = mc * (6 * r * r + h * h) / 12 + 2 * ms * r * r / 3 + ms * (pos * pos - com * com)
    return np.array([ixx, ixx, mc * r * r + 2 * ms * r * r / 3])


def _cylinder(r, half, mass, shell):
    h = 2 * half
    if not shell:
        return np.array([mass * (3 * r * r + h * h) / 12] * 2 + [mass * r * r / 2])
    a_disk, a_side = math.pi * r * r, 2 * math.pi * r * h
    md = mass * a_disk / (2 * a_disk + a_side)
    mc = mass - 2 * md
    ixx = mc * (6 * r * r + h * h) / 12 + 2 * (md * r * r / 4 + md * half * half)
    return np.array([ixx, ixx, mc * r * r + 2 * (md * r * r / 2)])


def _ellipsoid_shell(s, mass):
    """MuJoCo's approximation: a solid grown by 1e-6 minus the solid, at equal density."""
    eps = 1e-6
    e = s + eps
    va, vb = 4 * math.pi * np.prod(s) / 3, 4 * math.pi * np.prod(e) / 3
    density = mass / (vb - va)

    def solid(x, m):
        q = x * x
        return m * np.array([q[1] + q[2], q[0] + q[2], q[0] + q[1]]) / 5

    return solid(e, vb * density) - solid(s, va * density)


def _box_shell(s, mass):
    lx, ly, lz = 2 * s
    a0, a1, a2 = lx * ly, ly * lz, lz * lx  # faces normal to z, x and y
    total = 2 * (a0 + a1 + a2)
    m0, m1, m2 = mass * a0 / total, mass * a1 / total, mass * a2 / total
    own = (np.array([ly * ly, lx * lx, lx * lx + ly * ly]) * m0
           + np.array([ly * ly + lz * lz, lz * lz, ly * ly]) * m1
           + np.array([lz * lz, lx * lx + lz * lz, lx * lx]) * m2) / 12
    sq = s * s
    offset = np.array([m0 * sq[2] + m2 * sq[1], m0 * sq[2] + m1 * sq[0],
                       m1 * sq[0] + m2 * sq[1]])  # each pair of faces at ± its half size
    return 2 * (offset + own)


# --- triangle meshes ---------------------------------------------------------------------------
def _triangles(vertices, faces):
    """Corners ``(m, 3, 3)``, unit normals, centres and areas (zero below MuJoCo's mjMINVAL)."""
    T = vertices[faces]
    n = np.cross(T[:, 1] - T[:, 0], T[:, 2] - T[:, 0])
    length = np.linalg.norm(n, axis=1)
    small = length < _MINVAL
    area = np.where(small, 0.0, 0.5 * length)
    unit = np.where(small[:, None], n, n / np.where(small, 1.0, length)[:, None])
    return T, unit, T.sum(axis=1) / 3, area


def _hull_faces(vertices):
    """Outward-oriented triangles of the convex hull (Qhull, as MuJoCo)."""
    from scipy.spatial import ConvexHull

    hull = ConvexHull(vertices)
    faces = hull.simplices.copy()
    a, b, c = (vertices[faces[:, k]] for k in range(3))
    flip = np.einsum("ij,ij->i", np.cross(b - a, c - a), hull.equations[:, :3]) < 0
    faces[flip] = faces[flip][:, ::-1]
    return faces


def mesh_inertia(vertices, faces, mode: str = "exact"):
    r"""Volume (``"shell"``: area), centre of mass and inertia about it, per unit density.

    Parameters
    ----------
    vertices : (n, 3) array_like
    faces : (m, 3) array_like of int
        Triangles, counter-clockwise seen from outside (outward normals).
    mode : str
        ``"exact"``, ``"convex"``, ``"legacy"`` or ``"shell"`` (module notes).

    Returns
    -------
    volume : float
    com : (3,) ndarray
    I : (3, 3) ndarray
        Inertia about ``com`` for density 1 (times the mass over the volume
        for a body of given mass).
    """
    V = np.asarray(vertices, dtype=float)
    F = np.asarray(faces, dtype=np.int64)
    if mode not in MESH_INERTIA_MODES:
        raise ValueError(f"mode must be one of {MESH_INERTIA_MODES}, got {mode!r}")
    T, normal, centre, area = _triangles(V, F)
    o = (area @ centre) / area.sum()          # area-weighted centroid of the triangles
    if mode == "shell":
        weight = area
        com = weight @ centre / weight.sum()
    else:
        if mode == "convex":
            F = _hull_faces(V)
            T, normal, centre, area = _triangles(V, F)
        weight = np.einsum("ij,ij->i", centre - o, normal) * area / 3   # V_f
        if mode == "legacy":
            weight = np.abs(weight)
        com = weight @ (0.75 * centre + 0.25 * o) / weight.sum()
    # second moments about the centre of mass (apex of the tetrahedra, legacy's o)
    a, b, c = (T[:, k] - com for k in range(3))
    if mode == "shell":
        w, C = area, 12.0
    else:
        w = np.einsum("ij,ij->i", (a + b + c) / 3, normal) * area / 3
        w, C = (np.abs(w) if mode == "legacy" else w), 20.0
    outer = (np.einsum("f,fj,fk->jk", w, a, a) + np.einsum("f,fj,fk->jk", w, b, b)
             + np.einsum("f,fj,fk->jk", w, c, c))
    mixed = (np.einsum("f,fj,fk->jk", w, a, b) + np.einsum("f,fj,fk->jk", w, a, c)
             + np.einsum("f,fj,fk->jk", w, b, c))
    P = (2 * outer + mixed + mixed.T) / C                        # Tonon (2)-(4)
    return float(w.sum()), com, np.trace(P) * np.eye(3) - P
