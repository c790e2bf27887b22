"""Named example systems.

Each builder returns a fresh :class:`~rbd.model.Model`; :func:`get` maps the
names used on the command line (``"RC50"``, ``"tree31"``, ...) to them.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable

import numpy as np

from ..errors import ModelError
from ..joints import Free, Revolute, Spherical, Universal
from ..model import Model
from ..spatial import plux

#: The builders of the mechanisms with symbolic joints (Guenter & Lee §5, in
#: :mod:`rbd.models.mechanisms`, loaded with sympy on first use).
_MECHANISM_BUILDERS = ("torus_chain", "windmill", "bead_on_wire", "rolling_wheels",
                       "four_bar_knee", "torus_chain_on_spline", "board_on_bezier_surface")

__all__ = [
    "rod_inertia",
    "box_inertia",
    "revolute_chain",
    "binary_tree",
    "double_pendulum",
    "pendulum",
    "arm7",
    "humanoid",
    "bundled_urdf",
    "get",
    "resolve",
    "names",
    "register_model",
    *_MECHANISM_BUILDERS,
]

_X, _Y, _Z = np.eye(3)


def box_inertia(mass: float, size, com=(0.0, 0.0, 0.0)):
    """``(mass, com, I_com)`` of a solid box with edge lengths ``size``."""
    a, b, c = size
    Ic = mass / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    return mass, np.asarray(com, dtype=float), Ic


def rod_inertia(mass: float, length: float, axis: int = 0, radius: float = 0.02):
    """A slender rod from the body origin along coordinate ``axis``, COM at mid-length."""
    size = np.full(3, 2 * radius)
    size[axis] = length
    com = np.zeros(3)
    com[axis] = length / 2
    return box_inertia(mass, size, com)


def revolute_chain(n: int, link_length: float = 0.1, link_mass: float = 1.0) -> Model:
    """A serial chain of ``n`` revolute joints with alternating axes (3-D).

    Links lie along x; joint axes alternate between z and y, so the chain
    moves in three dimensions (Si & Guenter's RC20/RC50/RC100 for ``n`` =
    20, 50, 100).
    """
    if n < 1:
        raise ModelError(f"a chain needs at least one body, got n={n}")
    model = Model(name=f"RC{n}")
    parent = -1
    for i in range(n):
        X_tree = np.eye(6) if i == 0 else plux(np.eye(3), link_length * _X)
        axis = _Z if i % 2 == 0 else _Y
        parent = model.add_body(parent, Revolute(axis), X_tree,
                                rod_inertia(link_mass, link_length), f"link{i + 1}",
                                f"joint{i + 1}")
    return model


def binary_tree(depth: int = 5, link_length: float = 0.2, link_mass: float = 1.0) -> Model:
    """A binary tree of revolute joints with ``2**depth - 1`` bodies (depth 5: 31)."""
    if depth < 1:
        raise ModelError(f"depth must be at least 1, got {depth}")
    model = Model(name=f"tree{2 ** depth - 1}")
    for i in range(2 ** depth - 1):
        parent = -1 if i == 0 else (i - 1) // 2
        side = 0.0 if i == 0 else (1.0 if i % 2 else -1.0)
        X_tree = np.eye(6) if i == 0 else plux(np.eye(3), link_length * (_X + 0.5 * side * _Y))
        axis = [_Z, _Y, _X][i % 3]
        model.add_body(parent, Revolute(axis), X_tree, rod_inertia(link_mass, link_length),
                       f"node{i}", f"joint{i}")
    return model


def double_pendulum(m1: float = 1.0, m2: float = 1.0, l1: float = 1.0,
                    l2: float = 1.0) -> Model:
    """Planar double pendulum of point masses at the link ends, hinges about y.

    At ``q = 0`` both links hang along ``-z``.
    """
    model = Model(name="double_pendulum")
    zero = np.zeros((3, 3))
    b1 = model.add_body(-1, Revolute(_Y), None, (m1, -l1 * _Z, zero), "link1", "joint1")
    model.add_body(b1, Revolute(_Y), plux(np.eye(3), -l1 * _Z), (m2, -l2 * _Z, zero),
                   "link2", "joint2")
    return model


def pendulum(n: int = 3, link_length: float = 0.5, link_mass: float = 1.0) -> Model:
    """A 3-D pendulum of ``n`` rods joined by spherical joints, hanging along ``-z``."""
    if n < 1:
        raise ModelError(f"a pendulum needs at least one link, got n={n}")
    model = Model(name=f"pendulum{n}")
    parent = -1
    mass, com, Ic = rod_inertia(link_mass, link_length, axis=2)
    for i in range(n):
        X_tree = np.eye(6) if i == 0 else plux(np.eye(3), -link_length * _Z)
        parent = model.add_body(parent, Spherical(), X_tree, (mass, -com, Ic),
                                f"link{i + 1}", f"ball{i + 1}")
    return model


def arm7() -> Model:
    """A 7-DoF serial arm (axes z y z y z y z), proportions of a collaborative arm."""
    lengths = [0.34, 0.0, 0.40, 0.0, 0.40, 0.0, 0.126]
    masses = [4.0, 4.0, 3.0, 2.7, 1.7, 1.8, 0.3]
    axes = [_Z, _Y, _Z, _Y, _Z, _Y, _Z]
    model = Model(name="arm7")
    parent, offset = -1, 0.0
    for i in range(7):
        X_tree = plux(np.eye(3), offset * _Z)
        length = max(lengths[i], 0.1)
        parent = model.add_body(parent, Revolute(axes[i]), X_tree,
                                rod_inertia(masses[i], length, axis=2, radius=0.06),
                                f"arm_link{i + 1}", f"arm_joint{i + 1}")
        offset = lengths[i]
    return model


def humanoid() -> Model:
    """A free-floating humanoid-like tree: torso, head, arms, legs (nq = 32, nv = 6 + 21)."""
    model = Model(name="humanoid")
    torso = model.add_body(-1, Free(), None, box_inertia(20.0, (0.3, 0.4, 0.6)), "torso",
                           "root")
    model.add_body(torso, Revolute(_Z), plux(np.eye(3), 0.35 * _Z),
                   box_inertia(4.0, (0.2, 0.2, 0.25), (0, 0, 0.12)), "head", "neck")
    for side, sign in (("left", 1.0), ("right", -1.0)):
        shoulder = model.add_body(torso, Spherical(), plux(np.eye(3), [0, sign * 0.25, 0.25]),
                                  rod_inertia(2.0, 0.3, axis=2), f"{side}_upper_arm",
                                  f"{side}_shoulder")
        model.add_body(shoulder, Revolute(_Y), plux(np.eye(3), -0.3 * _Z),
                       rod_inertia(1.5, 0.3, axis=2), f"{side}_forearm", f"{side}_elbow")
        hip = model.add_body(torso, Spherical(), plux(np.eye(3), [0, sign * 0.1, -0.3]),
                             (7.0, np.array([0, 0, -0.2]), np.diag([0.1, 0.1, 0.02])),
                             f"{side}_thigh", f"{side}_hip")
        knee = model.add_body(hip, Revolute(_Y), plux(np.eye(3), -0.4 * _Z),
                              (4.0, np.array([0, 0, -0.2]), np.diag([0.05, 0.05, 0.01])),
                              f"{side}_shank", f"{side}_knee")
        model.add_body(knee, Universal(_Y, _X), plux(np.eye(3), -0.4 * _Z),
                       box_inertia(1.0, (0.2, 0.1, 0.05), (0.05, 0, -0.03)), f"{side}_foot",
                       f"{side}_ankle")
    return model


def bundled_urdf(name: str, floating_base: bool = False) -> Model:
    """Load the URDF bundled as ``rbd/models/urdf/<name>.urdf`` (``"arm6"``, ``"planar2"``)."""
    from importlib.resources import files

    from ..urdf import load_urdf

    resource = files(__package__) / "urdf" / f"{name}.urdf"
    if not str(name).isidentifier() or not resource.is_file():
        raise ModelError(f"no bundled URDF named {name!r}")
    return load_urdf(resource.read_text(encoding="utf-8"), floating_base=floating_base)


_REGISTRY: dict[str, Callable[[], Model]] = {
    "RC20": lambda: revolute_chain(20),
    "RC50": lambda: revolute_chain(50),
    "RC100": lambda: revolute_chain(100),
    "tree31": lambda: binary_tree(5),
    "double_pendulum": double_pendulum,
    "pendulum3": lambda: pendulum(3),
    "arm7": arm7,
    "humanoid": humanoid,
    "arm6": lambda: bundled_urdf("arm6"),
    "planar2": lambda: bundled_urdf("planar2"),
    "compass_gait": lambda: _walker().compass_gait(),
    "TC10": lambda: _mechanisms().torus_chain(10),
    "TC20": lambda: _mechanisms().torus_chain(20),
    "windmill": lambda: _mechanisms().windmill(),
    "bead_on_wire": lambda: _mechanisms().bead_on_wire(),
    "rolling_wheels": lambda: _mechanisms().rolling_wheels(),
    "four_bar_knee": lambda: _mechanisms().four_bar_knee(),
    "torus_chain_on_spline": lambda: _mechanisms().torus_chain_on_spline(),
    "board_on_bezier_surface": lambda: _mechanisms().board_on_bezier_surface(),
}

#: Other names accepted by :func:`get`: earlier names, and the names that models
#: report (``model.name``) where they differ from the name they are registered under.
_ALIASES: dict[str, str] = {
    "arm6_urdf": "arm6",
    "planar2_urdf": "planar2",
    "compass gait": "compass_gait",
    "TC4 on spline": "torus_chain_on_spline",
    "board on Bézier surface": "board_on_bezier_surface",
}

#: Mechanisms with symbolic joints (Guenter & Lee §5), loaded with sympy on first use.
_MECHANISMS = (*_MECHANISM_BUILDERS, "four_bar_coupler", "KNEE", "body_shapes", "torus_inertia",
               "ellipsoid_inertia")


def _mechanisms():
    import importlib

    # imported on demand (it needs sympy), by its full name: ``from . import mechanisms``
    # would ask this module's __getattr__ for it first
    return importlib.import_module(f"{__name__}.mechanisms")


def __getattr__(name: str):
    if name == "mechanisms":            # ``rbd.models.mechanisms`` without a separate import
        return _mechanisms()
    if name in _MECHANISMS:
        return getattr(_mechanisms(), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _walker():
    from .. import walker  # imported on demand: it needs scipy

    return walker


def register_model(name: str, builder: Callable[[], Model]) -> None:
    """Make ``builder`` available as ``rbd.models.get(name)`` and on the command line."""
    _REGISTRY[name] = builder


def names() -> list[str]:
    """Names accepted by :func:`get`."""
    return sorted(_REGISTRY)


def resolve(name: str) -> str:
    """The registered name that ``name`` refers to (case-insensitive; aliases accepted).

    Raises
    ------
    ModelError
        For an unknown name, with the closest known names ("did you mean").
    """
    wanted = str(name).lower()
    for key in _REGISTRY:
        if key.lower() == wanted:
            return key
    for alias, key in _ALIASES.items():
        if alias.lower() == wanted and key in _REGISTRY:
            return key
    known = {key.lower(): key for key in [*_REGISTRY, *_ALIASES]}
    close = [known[k] for k in difflib.get_close_matches(wanted, list(known), n=3, cutoff=0.6)]
    hint = f"did you mean {' or '.join(map(repr, close))}? " if close else ""
    raise ModelError(f"unknown model {name!r}; {hint}known models: {', '.join(names())}")


def get(name: str) -> Model:
    """Build the named model (case-insensitive), e.g. ``get("RC50")``.

    A model is also found by the name it reports (``get(model.name)``, e.g.
    ``get("arm6")`` for the bundled URDF); see :func:`resolve`.
    """
    return _REGISTRY[resolve(name)]()
