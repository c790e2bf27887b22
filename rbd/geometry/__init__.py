r"""Parametric curves and surfaces with moving frames.

The shapes here serve two users.  Joints built from geometry (a bead on a
wire, a body sliding on a surface, two surfaces held in contact: Guenter &
Lee, §5; :mod:`rbd.symbolic.frames`) need a curve's Frenet frame or a surface
frame as a 4×4 pose, often as a *symbolic* expression to be differentiated.
Contact dynamics in contact coordinates (Pai, Ascher & Kry, §6;
:mod:`rbd.contact_coordinates`) needs the same frames numerically, with the metric,
curvature and torsion of the surface and the first two time derivatives of
the frame.

Every formula is written once against a small math backend
(:mod:`~rbd.geometry.backend`): given floats the methods return NumPy
arrays; given sympy expressions (a coordinate, or a shape parameter such as a
symbolic radius) they return sympy matrices.  The backend is detected from
the arguments or forced with ``lib="numpy"`` / ``lib="sympy"``.

>>> import numpy as np, sympy
>>> sphere = Sphere(2.0)
>>> sphere.frame(0.3, 0.1).shape
(4, 4)
>>> u, v = sympy.symbols("u v")
>>> sphere.frame(u, v).shape
(4, 4)

Modules
-------
* :mod:`~rbd.geometry.curves` — :class:`Curve` and its Frenet frame
  ``[[T, N, B, x], [0, 0, 0, 1]]``; :class:`Line`, :class:`Helix`, :class:`Circle`.
* :mod:`~rbd.geometry.surfaces` — :class:`Surface` and its surface frame
  ``[[x̂, ŷ, n, x], [0, 0, 0, 1]]``; :class:`Plane`, :class:`Ellipsoid`,
  :class:`Sphere`, :class:`Torus`.
* :mod:`~rbd.geometry.forms` — fundamental forms, Montana's contact forms
  (:func:`contact_forms`) and the frame's time derivatives (:func:`frame_jet`),
  with the curvature sign conventions.
* :mod:`~rbd.geometry.bezier` — Bézier curves and patches of any degree
  (:class:`BezierCurve`, :class:`BezierSurface`), their cubic members
  (:class:`CubicBezier`, :class:`BezierPatch`) and :class:`BezierSpline`.
"""

from .bezier import (
    BezierCurve,
    BezierPatch,
    BezierSpline,
    BezierSurface,
    CubicBezier,
    bernstein,
    bernstein3,
    bernstein_to_power,
)
from .curves import Circle, Curve, Helix, Line
from .forms import contact_forms, frame_jet
from .surfaces import Ellipsoid, Plane, Sphere, Surface, Torus

__all__ = [
    "Curve",
    "Line",
    "Circle",
    "Helix",
    "CubicBezier",
    "BezierSpline",
    "BezierCurve",
    "Surface",
    "Plane",
    "Ellipsoid",
    "Sphere",
    "Torus",
    "BezierPatch",
    "BezierSurface",
    "bernstein",
    "bernstein3",
    "bernstein_to_power",
    "frame_jet",
    "contact_forms",
]
