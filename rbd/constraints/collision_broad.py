r"""Filters and bounds of the collision stage (MuJoCo's ``mj_collision``).

* **Filters** (:func:`body_pair_filtered`, :func:`bitmask_compatible`): the body and
  bitmask tests a geom pair passes before any geometry is looked at.
* **Bounds** of the broad phase: the world-axis boxes (:func:`world_aabb`,
  :func:`mesh_world_aabb`, MuJoCo's ``makeAAMM``) that the sweep and prune of
  :func:`rbd.constraints.collision.broad_phase` compares, and the bounding-sphere test
  (:func:`sphere_filtered`, ``mj_filterSphere``).

The stage itself, its order and its parameters are :mod:`.collision`'s.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .collision_convex import bounding_radius

# ----------------------------------------------------------------------------- geometry of a geom

def local_half_extents(kind: str, size) -> np.ndarray:
    """Half-sizes of the geom's box in its own frame (MuJoCo's ``geom_aabb`` half-sizes)."""
    s = np.asarray(size, dtype=float)
    if kind == "sphere":
        return np.full(3, s[0])
    if kind == "capsule":
        return np.array([s[0], s[0], s[0] + s[1]])
    if kind == "cylinder":
        return np.array([s[0], s[0], s[1]])
    return s[:3].copy()


def world_aabb(kind, size, pos, mat, inflate) -> tuple[np.ndarray, np.ndarray]:
    """World-axis box (min, max) of a geom: its rotated local box within its bounding sphere."""
    half = np.minimum(np.abs(mat) @ local_half_extents(kind, size), bounding_radius(kind, size))
    return pos - half - inflate, pos + half + inflate


def mesh_world_aabb(hull, pos, mat, inflate) -> tuple[np.ndarray, np.ndarray]:
    """World-axis box (min, max) of a mesh geom (MuJoCo's ``makeAAMM``): its hull's box
    (``geom_aabb``, off the mesh-frame origin) rotated to the world, cut by the sphere of
    radius ``rbound`` about the origin; ``pos``, ``mat`` the mesh frame's world pose."""
    centre = mat @ (0.5 * (hull.lower + hull.upper)) + pos
    half = np.abs(mat) @ (0.5 * (hull.upper - hull.lower))
    lower = np.maximum(pos - hull.rbound, centre - half)
    upper = np.minimum(pos + hull.rbound, centre + half)
    return lower - inflate, upper + inflate


# ----------------------------------------------------------------------------- filters

def bitmask_compatible(geom1, geom2) -> bool:
    """MuJoCo's ``filterBitmask`` passed: ``contype`` of one meets ``conaffinity`` of the other."""
    return bool((geom1.contype & geom2.conaffinity) or (geom2.contype & geom1.conaffinity))


def body_pair_filtered(b1: int, b2: int, weld: np.ndarray, parent: Sequence[int],
                       ndof: Sequence[int], filterparent: bool = True) -> bool:
    """True when MuJoCo's ``filterBodyPair`` discards bodies ``b1``, ``b2``.

    Discarded: the same weld body; both weld bodies without degrees of freedom
    (static); and, with ``filterparent``, a weld body that is the other's weld
    parent when neither is the world.
    """
    w1, w2 = weld[b1], weld[b2]
    if w1 == w2:
        return True
    if ndof[w1] == 0 and ndof[w2] == 0:
        return True
    p1 = weld[parent[w1]] if w1 > 0 else 0
    p2 = weld[parent[w2]] if w2 > 0 else 0
    return bool(filterparent and w1 != 0 and w2 != 0 and (w1 == p2 or w2 == p1))


def sphere_filtered(kind1, size1, pos1, mat1, kind2, size2, pos2, margin,
                    radii: tuple | None = None) -> bool:
    """True when MuJoCo's bounding-sphere test (``mj_filterSphere``) rules the pair out.

    ``radii``: the two bounding radii when the sizes do not give them (a mesh's hull).
    """
    r1, r2 = radii or (bounding_radius(kind1, size1), bounding_radius(kind2, size2))
    if r1 > 0 and r2 > 0:
        dif = pos1 - pos2
        return bool(dif @ dif > (r1 + r2 + margin) ** 2)
    if kind1 == "plane" and r2 > 0:
        return bool((pos2 - pos1) @ mat1[:, 2] > margin + r2)
    return False
