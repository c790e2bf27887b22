"""Building the model of a parsed URDF: the tree walk, welded links, the inertia policy.

See :mod:`rbd.urdf` for the conventions (fixed joints merged, the root joint,
:func:`~rbd.urdf.load_urdf`'s ``inertia`` policies).
"""

from __future__ import annotations

import warnings

import numpy as np

from .._robotfile import caller_stacklevel, merge, nearest_physical, unique, violation
from ..errors import ModelError, URDFError
from ..joints import Free
from ..model import Model
from ..spatial import plux_parts
from ._read import _topology

#: Name of the free joint that ``load_urdf(..., floating_base=True)`` adds at the root.
ROOT_JOINT_NAME = "root_joint"

#: What :func:`load_urdf` does with a non-physical inertia (see its ``inertia`` argument).
INERTIA_POLICIES = ("strict", "repair", "ignore")


_LISTED = 12  # massless bodies named in the warning


def _tree(root: str, children, floating_base: bool):
    """Walk the tree depth-first: links in preorder, their owner bodies, the moving joints.

    ``owner[link] = (link of the body carrying it, or None for the world; X body -> link)``.
    """
    owner: dict[str, tuple[str | None, np.ndarray]] = {
        root: (root if floating_base else None, np.eye(6))}
    preorder, moving = [], {}
    stack = [root]
    while stack:
        link = stack.pop()
        preorder.append(link)
        body_link, X_link = owner[link]
        for joint in reversed(children[link]):
            if joint.kind == "fixed":
                owner[joint.child] = (body_link, joint.X @ X_link)
            else:
                owner[joint.child] = (joint.child, np.eye(6))
                moving[joint.child] = (body_link, joint.X @ X_link, joint)
            stack.append(joint.child)
    return preorder, owner, moving


def _body_inertias(links, preorder, owner, policy: str):
    """Merged ``(m, c, Ic)`` of each body, checked under ``policy``; the repairs made."""
    parts: dict[str, list] = {}
    for link in preorder:
        body_link, X = owner[link]
        if body_link is not None:
            parts.setdefault(body_link, []).append((links[link], X))
    inertias, repairs = {}, []
    for body_link, welded in parts.items():
        try:
            m, c, Ic = merge(welded)
        except ModelError as exc:
            raise URDFError(f"link {body_link!r}: {exc}") from None
        problem = None if policy == "ignore" else violation(m, Ic)
        if problem is not None:
            others = [repr(lk.name) for lk, _ in welded[1:]]
            names = repr(body_link) + (f" (with its welded link{'s' if len(others) > 1 else ''} "
                                       + ", ".join(others) + ")" if others else "")
            if policy == "strict":
                raise URDFError(
                    f"link {names}: non-physical inertia: {problem}. Pass inertia='repair' "
                    "to load_urdf to use the nearest physical inertia instead (or correct "
                    "the file)")
            Ic, before, after = nearest_physical(Ic)
            change = np.linalg.norm(after - before) / max(float(np.abs(before).max()), 1e-300)
            repairs.append(f"link {names}: principal moments "
                           f"[{', '.join(f'{x:.6g}' for x in before)}] -> "
                           f"[{', '.join(f'{x:.6g}' for x in after)}] kg m^2 "
                           f"(relative change {change:.2g})")
        inertias[body_link] = (m, c, Ic)
    return inertias, repairs


def _warn_about(repairs: list[str], massless: list[str]) -> None:
    if repairs:
        warnings.warn(f"inertia='repair' replaced {len(repairs)} non-physical inertia"
                      f"{'s' if len(repairs) > 1 else ''} by the nearest physical one: "
                      + "; ".join(repairs), RuntimeWarning, stacklevel=caller_stacklevel())
    if massless:
        shown = ", ".join(repr(name) for name in massless[:_LISTED])
        more = f" and {len(massless) - _LISTED} more" if len(massless) > _LISTED else ""
        warnings.warn(f"bod{'ies' if len(massless) > 1 else 'y'} {shown}{more} "
                      + ("have" if len(massless) > 1 else "has")
                      + " zero mass and zero inertia (welded links included): unless bodies "
                      "below carry inertia along the joint, the mass matrix is singular and "
                      "forward dynamics undefined", RuntimeWarning, stacklevel=caller_stacklevel())


#: ``load_urdf(mimic=...)``: a coordinate removed (Pinocchio's reading) or a coupling row
#: (MuJoCo's: ``<equality><joint polycoef="offset multiplier 0 0 0">``).
MIMIC_MODES = ("exact", "equality")


def _add_mimic(model: Model, joint: str, leader: str, multiplier: float, offset: float,
               mode: str) -> None:
    if mode == "exact":
        model.add_mimic(joint, leader, multiplier, offset)
        return
    from ..constraints.kinds import JointCoupling

    if joint not in model.joint_names or leader not in model.joint_names:
        fixed = joint if joint not in model.joint_names else leader
        raise ModelError(f"joint {fixed!r} has no coordinate (a fixed joint)")
    model.add_constraint(JointCoupling(joint, leader, (offset, multiplier),
                                       name=f"mimic {joint}"))


def _build(robot_name, links, joints, floating_base: bool, policy: str, geoms=None,
           mimic: str = "exact") -> Model:
    """Turn the checked tree into a Model: bodies depth-first, fixed joints merged; mimic
    joints as ``mimic`` says (``load_urdf``'s keyword)."""
    root, _, children = _topology(links, joints)
    preorder, owner, moving = _tree(root, children, floating_base)
    inertias, repairs = _body_inertias(links, preorder, owner, policy)
    model = Model(name=robot_name)
    index: dict[str | None, int] = {None: -1}
    massless, taken = [], set()
    for link in preorder:
        if owner[link][0] != link:
            continue
        if link == root:
            parent, X_tree, urdf_joint = None, None, None
            joint, joint_name = Free(), unique(ROOT_JOINT_NAME, {j.name for j in joints})
        else:
            parent, X_tree, urdf_joint = moving[link]
            joint, joint_name = urdf_joint.to_rbd(), urdf_joint.name
        m, c, Ic = inertias[link]
        if m == 0.0 and not np.any(Ic):
            massless.append(link)
        try:
            index[link] = model.add_body(index[parent], joint, X_tree, (m, c, Ic), link,
                                         joint_name, check_inertia=False)
            if urdf_joint is not None and urdf_joint.properties:
                model.set_joint_properties(joint_name, **urdf_joint.properties)
        except ModelError as exc:
            raise URDFError(f"link {link!r}: {exc}") from None
    for link in preorder:
        body_link, X = owner[link]
        if body_link is not None and body_link != link:
            model.add_frame(link, index[body_link], X)
    for link in preorder:
        body_link, X = owner[link]
        E, r = plux_parts(X)
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = E.T, r  # the link frame in the frame of its body
        for geom in (geoms or {}).get(link, ()):
            name = unique(geom.name, taken)
            taken.add(name)
            model.add_geom(geom.replace(name=name, body=body_link, pose=T @ geom.pose))
    for joint in joints:
        if joint.mimic is not None:
            try:
                _add_mimic(model, joint.name, *joint.mimic, mimic)
            except ModelError as exc:
                raise URDFError(f"joint {joint.name!r}: <mimic>: {exc}") from None
    _warn_about(repairs, massless)
    return model

