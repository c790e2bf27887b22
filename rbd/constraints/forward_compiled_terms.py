"""The static data of the compiled equality rows and fluid forces
(``rbd/_kernels/equality_rows.pyx``, ``rbd/_kernels/fluid.pyx``), computed once per model
from the readable modules' own helpers (:mod:`.equality_rows`, :mod:`.fluid`), so that the
compiled terms cannot drift from them."""

from __future__ import annotations

import numpy as np

from .equality_rows import _weights, _wxyz, chain_quaternion
from .fluid import _MJ_MINVAL, added_mass, box_sides, fluid_options, semi_axes
from .impedance import clamp_solimp, safe_solref, stiffness_damping
from .kinds import pack_records
from .mujoco_model import mujoco_reference_configuration, options

#: The equality kinds the compiled rows render (MJCF connect, weld and joint).
COMPILED_EQUALITIES = ("point", "frame", "coupling")


def equality_data(model, equalities, weight_of, dof_weight, timestep) -> dict | None:
    """The arrays of ``EqualityC`` (``rbd/_kernels/equality_rows.pxd``) for the active
    equality constraints ``equalities`` (None when there are none): the packed records,
    each constraint's k, b (``solref``), clamped ``solimp``, ``torquescale``, the weights
    of its translation and rotation rows (``_weights``), the sign of a weld's MuJoCo error
    at ``qpos0`` (``weld_sign``'s), and the constant quaternions of ``chain_quaternion``."""
    if not equalities:
        return None
    records = [c.resolve(model) if c.kind == "coupling" else c.anchors(model)
               for c in equalities]
    q0 = mujoco_reference_configuration(model)
    rows = {k: [] for k in ("k", "b", "solimp", "torquescale", "weight", "sign0",
                            "frame_quat")}
    for c, record in zip(equalities, records, strict=True):
        solimp = clamp_solimp(c.solimp)
        k, b = stiffness_damping(safe_solref(c.solref, timestep), solimp[1])
        weight = _weights(c, record, weight_of, dof_weight)
        rows["k"].append(k)
        rows["b"].append(b)
        rows["solimp"].append(solimp)
        rows["torquescale"].append(float(getattr(c, "torquescale", 1.0)))
        rows["weight"].append((weight[0], weight[-1]))
        rows["sign0"].append(_start_sign(model, q0, record))
        poses = record[3:5] if record[0] != "coupling" else (np.eye(4), np.eye(4))
        rows["frame_quat"].append(np.concatenate([_wxyz(T[:3, :3]) for T in poses]))
    data = {k: np.array(v, float) for k, v in rows.items()}
    data["packed"] = pack_records(records)
    data.update(_chains(model))
    return data


def _start_sign(model, q0, record) -> float:
    """The sign of the scalar part of MuJoCo's weld error at ``q0`` (0 where
    :func:`.equality_rows.weld_sign` is always 1: not a weld, or no chain)."""
    if record[0] != "frame":
        return 0.0
    _, a, b, Ta, Tb = record
    qa, qb = chain_quaternion(model, q0, a, Ta), chain_quaternion(model, q0, b, Tb)
    if qa is None or qb is None:
        return 0.0
    return float(np.sign(qb[0] * qa[0] + qb[1:] @ qa[1:]))


def _chains(model) -> dict:
    """Per body: the quaternion of ``X_treeᵀ``'s rotation, the kind of its joint's
    quaternion (0 none, 1 hinge, 2 ball or free) with its place in q, and a hinge's axis."""
    tree, kind, place, axis = [], [], [], []
    for i, b in enumerate(model.bodies):
        tree.append(_wxyz(np.asarray(b.X_tree)[:3, :3].T))
        j = b.joint
        kind.append({"revolute": 1, "spherical": 2, "free": 2}.get(j.kind, 0))
        qs = model.q_index(i) if kind[-1] else slice(0, 0)
        place.append(qs.stop - 4 if kind[-1] == 2 else qs.start)
        axis.append(np.asarray(j.axis, float) if j.kind == "revolute" else np.zeros(3))
    return {"tree_quat": np.array(tree), "chain_kind": np.array(kind, dtype=np.int64),
            "chain_q": np.array(place, dtype=np.int64), "axis": np.array(axis)}


def fluid_data(model) -> dict | None:
    """The arrays of ``FluidC`` (``rbd/_kernels/fluid.pxd``), in :func:`.fluid.fluid_force`'s
    order (None when no body takes a fluid force): per MJCF body its inertia box (sides,
    axes and centre), or per ellipsoid geom its frame, semi-axes, ``fluidcoef`` and
    virtual mass and inertia (:func:`.fluid.added_mass`)."""
    density, viscosity, wind = fluid_options(options(model))
    places = getattr(model, "mujoco_bodies", None) or {}
    if not (density or viscosity) or not places.get("inertia"):
        return None
    ellipsoids = places.get("ellipsoid", {})
    geoms = {g.name: g for g in getattr(model, "geoms", ())}
    kind, body, frame, shape = [], [], [], []
    for name, (owner, mass, com, axes, moments) in places["inertia"].items():
        if owner is None or mass < _MJ_MINVAL:
            continue
        i = model.body_index(owner)
        if name not in ellipsoids:
            kind.append(0)
            body.append(i)
            frame.append(np.r_[np.ravel(axes), com])
            shape.append(np.r_[box_sides(mass, moments), np.zeros(11)])
            continue
        for geom_name, coefs in ellipsoids[name]:
            geom = geoms[geom_name]
            r = semi_axes(geom.kind, geom.size)
            kind.append(1)
            body.append(i)
            frame.append(np.r_[np.ravel(geom.pose[:3, :3]), geom.pose[:3, 3]])
            shape.append(np.r_[r, coefs, np.concatenate(added_mass(r))])
    if not kind:
        return None
    return {"density": density, "viscosity": viscosity, "wind": wind, "kind": kind,
            "body": body, "frame": frame, "shape": shape}
