"""MJCF fixed tendons and the equality constraints between them.

A ``<tendon><fixed>`` is a length :math:`L = \\sum_i c_i\\,q_i` of hinge and slide
coordinates (``<joint joint coef>``).  Its ``stiffness``, ``springlength``,
``damping``, ``frictionloss``, ``range`` (``limited``), ``margin`` and solver
parameters, and the ``<equality><tendon tendon1 [tendon2] polycoef>`` constraints on
fixed tendons, are kept in ``model.mujoco_tendons`` and
``model.mujoco_tendon_equalities`` for :mod:`rbd.constraints.tendon_rows`.  A
``<tendon><spatial>`` has the same properties and, instead of joints, a path of sites,
wrapping geoms and pulleys (``kind == "spatial"``, :mod:`._spatial_tendons`,
:mod:`rbd.constraints.tendon_spatial`); both kinds share MuJoCo's tendon numbering,
the file's order.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from .._robotfile import quote
from ..errors import MJCFError
from ._bodies import SOLIMP_DEFAULT, _leading, _solref
from ._options import _attributes, _Context, _element
from ._xml import _flag, _scalar, _vector


def _tendon_elements(root: ET.Element) -> list:
    """The ``<fixed>`` and ``<spatial>`` elements, in the file's order (MuJoCo's ids)."""
    return [e for s in root.findall("tendon") for e in s if e.tag in ("fixed", "spatial")]


def tendon_names(root: ET.Element) -> set:
    """Names of the file's tendons, fixed and spatial (those :func:`read_tendons` reads)."""
    return {e.get("name") for e in _tendon_elements(root) if e.get("name")}


def read_tendons(root: ET.Element, ctx: _Context, joint_names: set, spatial_path) -> tuple:
    """The tendons as dicts, in file order (MuJoCo's order).  ``spatial_path``:
    ``(element, where) -> path`` of a ``<spatial>`` (:func:`._spatial_tendons.path_reader`)."""
    out = []
    for k, e in enumerate(_tendon_elements(root)):
        where = _element(e.tag, e, k)
        attrs = _attributes(e, "tendon", "main", ctx, where)
        joints = []
        for j in e.findall("joint"):
            name = j.get("joint")
            if name not in joint_names:
                raise MJCFError(f"{where}: unknown joint {quote(name)}")
            joints.append((name, _scalar(j.attrib, "coef", where, 0.0)))
        rng = _vector(attrs, "range", 2, where, [0.0, 0.0])
        limited = _flag(attrs, "limited", where, "auto", ("true", "false", "auto"))
        if limited == "auto":
            limited = "true" if ctx.compiler.autolimits and np.any(rng) else "false"
        if limited == "true" and rng[0] >= rng[1]:
            raise MJCFError(f"{where}: range {rng.tolist()} must have range[0] < range[1]")
        spring = _leading(attrs, "springlength", where, [-1.0, -1.0])
        if "springlength" in attrs and len(attrs["springlength"].split()) == 1:
            spring[1] = spring[0]
        tendon = {"name": e.get("name") or f"tendon{k}", "joints": tuple(joints), "kind": e.tag,
                  "stiffness": _scalar(attrs, "stiffness", where, 0.0),
                  "damping": _scalar(attrs, "damping", where, 0.0),
                  "frictionloss": _scalar(attrs, "frictionloss", where, 0.0),
                  "springlength": tuple(spring), "limited": limited == "true",
                  "range": tuple(rng), "margin": _scalar(attrs, "margin", where, 0.0)}
        for key in ("stiffness", "damping", "frictionloss"):
            if tendon[key] < 0:
                raise MJCFError(f"{where}: {key} must not be negative, got {tendon[key]}")
        for key in ("solreflimit", "solreffriction"):
            tendon[key] = _solref(attrs, key, where)
        for key in ("solimplimit", "solimpfriction"):
            tendon[key] = _leading(attrs, key, where, SOLIMP_DEFAULT)
        armature = _scalar(attrs, "armature", where, 0.0)    # a J^T J in MuJoCo's mass matrix
        if armature < 0:
            raise MJCFError(f"{where}: armature must not be negative, got {armature}")
        tendon["armature"] = armature
        if e.tag == "spatial":
            tendon["path"] = spatial_path(e, where)
            if armature > 0 and any(p[0] == "geom" for p in tendon["path"]):
                raise MJCFError(f"{where}: armature on a path that wraps a geom is not "
                                "supported (nor by MuJoCo: its moment rate is not defined)")
        out.append(tendon)
    return tuple(out)


def read_tendon_equalities(root: ET.Element, ctx: _Context, tendons: tuple) -> tuple:
    """``<equality><tendon>`` constraints whose tendons are all ones read here."""
    names = {t["name"]: i for i, t in enumerate(tendons)}
    out = []
    for k, e in enumerate(e for s in root.findall("equality") for e in s.findall("tendon")):
        where = _element("tendon", e, k)
        attrs = _attributes(e, "equality", "main", ctx, where)
        t1, t2 = attrs.get("tendon1"), attrs.get("tendon2")
        if t1 not in names or (t2 is not None and t2 not in names):
            continue
        out.append({"name": e.get("name") or f"tendon_equality{k}",
                    "tendon1": names[t1], "tendon2": None if t2 is None else names[t2],
                    "polycoef": tuple(_vector(attrs, "polycoef", (1, 5), where,
                                              [0.0, 1.0, 0.0, 0.0, 0.0])),
                    "active": _flag(attrs, "active", where, "true") == "true",
                    "solref": _solref(attrs, "solref", where),
                    "solimp": _leading(attrs, "solimp", where, SOLIMP_DEFAULT)})
    return tuple(out)
