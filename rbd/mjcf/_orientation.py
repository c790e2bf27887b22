"""Orientations and poses of MJCF elements (``quat``, ``axisangle``, ``euler``, ``xyaxes``,
``zaxis``, ``pos``, ``fromto``), as MuJoCo's compiler reads them."""

from __future__ import annotations

import math

import numpy as np

from ..errors import MJCFError
from ..spatial import axis_angle_rotation, quat_to_rot
from ._options import _MJ_EPS, _Compiler
from ._principal import mj_normalized as _normalized
from ._principal import quat_rotation
from ._xml import _numbers, _vector

_ORIENTATIONS = ("quat", "axisangle", "euler", "xyaxes", "zaxis")


def _quat_rot(wxyz: np.ndarray, where: str) -> np.ndarray:
    norm = float(np.linalg.norm(wxyz))
    if norm < _MJ_EPS:
        raise MJCFError(f"{where}: quat is zero")
    w, x, y, z = wxyz / norm
    return quat_to_rot(np.array([x, y, z, w]))


def _z_to(vec) -> np.ndarray:
    """MuJoCo's ``mjuu_z2quat`` of ``vec`` normalized (``mjuu_normvec``): the rotation about
    ``z × vec`` taking ``z`` to ``vec``, through its quaternion as MuJoCo computes it (a
    ``vec`` within 1e-7 of ±z is z itself or a half turn about x)."""
    v = _normalized([float(x) for x in vec])[0]
    axis, s = _normalized([-v[1], v[0], 0.0])                  # z × vec
    if s < 1e-10:
        axis = [1.0, 0.0, 0.0]
    angle = math.atan2(s, v[2])
    half_sin = math.sin(angle / 2)
    return quat_rotation([math.cos(angle / 2)] + [a * half_sin for a in axis])


def _euler(angles: np.ndarray, sequence: str) -> np.ndarray:
    """Lower-case axes rotate with the body (post-multiply), upper-case stay fixed."""
    R = np.eye(3)
    for angle, axis in zip(angles, sequence, strict=True):
        step = axis_angle_rotation(np.eye(3)["xyz".index(axis.lower())], angle)
        R = R @ step if axis.islower() else step @ R
    return R


def _xyaxes(values: np.ndarray, where: str) -> np.ndarray:
    x, y = values[:3], values[3:]
    if np.linalg.norm(x) < _MJ_EPS:
        raise MJCFError(f"{where}: xyaxes has a zero x axis")
    x = x / np.linalg.norm(x)
    y = y - x * (x @ y)
    if np.linalg.norm(y) < _MJ_EPS:
        raise MJCFError(f"{where}: xyaxes has a y axis parallel to x")
    y = y / np.linalg.norm(y)
    return np.column_stack([x, y, np.cross(x, y)])


def _rotation(attrs: dict, own: dict, where: str, compiler: _Compiler) -> np.ndarray:
    """Orientation from ``quat``, ``axisangle``, ``euler``, ``xyaxes`` or ``zaxis`` (one only)."""
    keys = [k for k in _ORIENTATIONS if k in own] or [k for k in _ORIENTATIONS if k in attrs]
    if len(keys) > 1:
        raise MJCFError(f"{where}: more than one orientation given ({', '.join(keys)}); "
                        "keep one")
    if not keys:
        return np.eye(3)
    key = keys[0]
    scale = math.pi / 180.0 if compiler.degree else 1.0
    if key == "quat":
        return _quat_rot(_vector(attrs, key, 4, where), where)
    if key == "axisangle":
        values = _vector(attrs, key, 4, where)
        if np.linalg.norm(values[:3]) < _MJ_EPS:
            raise MJCFError(f"{where}: axisangle has a zero axis")
        return axis_angle_rotation(values[:3] / np.linalg.norm(values[:3]), values[3] * scale)
    if key == "euler":
        return _euler(_vector(attrs, key, 3, where) * scale, compiler.eulerseq)
    if key == "xyaxes":
        return _xyaxes(_vector(attrs, key, 6, where), where)
    zaxis = _vector(attrs, key, 3, where)
    if np.linalg.norm(zaxis) < _MJ_EPS:
        raise MJCFError(f"{where}: zaxis is zero")
    return _z_to(zaxis / np.linalg.norm(zaxis))


def _pose(attrs: dict, own: dict, where: str, compiler: _Compiler):
    return _rotation(attrs, own, where, compiler), _vector(attrs, "pos", 3, where, [0, 0, 0])



def _site_pose(attrs, own, where, compiler):
    if "fromto" not in attrs:
        return _pose(attrs, own, where, compiler)
    ends = _numbers(attrs["fromto"], where, "fromto", 6)
    vec = ends[:3] - ends[3:]
    if np.linalg.norm(vec) < _MJ_EPS:
        raise MJCFError(f"{where}: fromto points coincide")
    return _z_to(vec / np.linalg.norm(vec)), (ends[:3] + ends[3:]) / 2

