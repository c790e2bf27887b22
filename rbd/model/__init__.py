r"""The kinematic tree: bodies, joints, tree transforms and inertias.

A :class:`Model` is the record of Featherstone's ``model`` structure (and of
Stępień et al., §3): the parent array :math:`\lambda`, the children sets
:math:`\mu`, the tree transforms ``X_tree`` (``X_T`` in Stępień et al.), the
joints (``jcalc``) and the spatial inertias.  Bodies are numbered so that
``parent[i] < i``; the world is ``-1``.

Models are built by appending bodies (:meth:`Model.add_body`) and are not
changed afterwards by any algorithm.  What a model holds is read-only: bodies,
frames and joints refuse attribute assignment, and their arrays (``X_tree``,
inertias, joint axes, :meth:`Model.flat_arrays`) are not writeable, so nothing
can change the numbers behind the compiled kernels' back.  Every change goes
through a builder method (:meth:`Model.add_body`, :meth:`Model.add_frame`,
:meth:`Model.set_joint_properties`, the ``gravity`` setter) or makes a new
model (:meth:`Model.replace_joint`); each of them drops the derived data (the
compiled flat arrays used by the kernels), which is rebuilt on the next call.

Building is linear in the number of bodies: names are looked up in
dictionaries, and derived arrays are assembled once, on first use.

Mimic joints (:meth:`Model.add_mimic`, URDF ``<mimic>``) make a joint's
coordinate an affine function of another's.  The model then keeps its whole
tree (:meth:`Model.full_model`) and its ``nq``, ``nv``, ``joint_names``,
``q_slice``/``v_slice``, ``q_index``/``v_index`` and per-coordinate properties
(limits, damping, armature, ...) are those of the independent coordinates;
:mod:`rbd.model.coupling` states how every algorithm maps to the full tree and back.
Beside it the package holds :mod:`rbd.model.geoms` (visual and collision shapes) and
the private pieces of the builder: bodies and frames, joint properties, mimic checks,
geoms and constraints attached to a model, and its flat arrays and printed tree.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np

from .._model_checks import MAX_MAGNITUDE as MAX_MAGNITUDE
from .._model_checks import (
    _build_order,
    _check_gravity,
    _parent_index,
    _parse_inertia,
    _parse_X_tree,
)
from ..errors import ModelError
from ..joints import Joint
from ._attachments import _Attachments
from ._body import Body, Frame
from ._joint_properties import JOINT_PROPERTIES, _checked_properties
from ._mimic import _check_mimic, _mimic_number
from ._views import MAX_INDENT as MAX_INDENT
from ._views import _flat_arrays, _tree_lines, dof_parents
from .coupling import Coupling
from .geoms import Geom

__all__ = ["Model", "Body", "Frame"]


class Model(_Attachments):
    """A kinematic tree of rigid bodies.

    Parameters
    ----------
    gravity : (3,) array_like, optional
        Gravitational acceleration in world coordinates (default ``(0, 0, -9.81)``).
    name : str, optional
        A label used in reports.

    Examples
    --------
    A planar double pendulum of two unit point masses hanging along ``-z``:

    >>> import numpy as np, rbd
    >>> model = rbd.Model(name="double pendulum")
    >>> point_mass = (1.0, [0, 0, -1], np.zeros((3, 3)))
    >>> b1 = model.add_body(-1, rbd.Revolute([0, 1, 0]), None, point_mass, "link1")
    >>> b2 = model.add_body(b1, rbd.Revolute([0, 1, 0]), (np.eye(3), [0, 0, -1]),
    ...                     point_mass, "link2")
    >>> model.nq, model.nv, model.nbodies
    (2, 2, 2)
    """

    def __init__(self, gravity: Sequence[float] = (0.0, 0.0, -9.81), name: str = "model"):
        self.name = str(name)
        self._bodies: list[Body] = []
        self._frames: dict[str, Frame] = {}
        self._geoms: dict[str, Geom] = {}  # by name, in the order added
        self._gravity = _check_gravity(gravity)
        self._q_start: list[int] = []
        self._v_start: list[int] = []
        self._nq = 0
        self._nv = 0
        self._body_by_name: dict[str, int] = {}
        self._joint_by_name: dict[str, int] = {}
        self._joint_props: dict[str, list[np.ndarray]] = {key: [] for key in JOINT_PROPERTIES}
        self._mimic: dict[int, tuple[int, float, float]] = {}
        self._constraints: tuple = ()
        self._cache: dict = {}

    # --- construction ---------------------------------------------------------
    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_cache"] = {}
        return state

    def __setstate__(self, state: dict) -> None:
        state.setdefault("_mimic", {})  # pickled before mimic joints existed
        state.setdefault("_geoms", {})  # pickled before geoms existed
        state.setdefault("_constraints", ())
        self.__dict__.update(state)
        for b in self._bodies:
            b.joint.freeze()
            for array in (b.X_tree, b.inertia, b.com, b.I_com):
                array.setflags(write=False)
        for f in self._frames.values():
            f.X.setflags(write=False)

    def _derived(self, key, factory=None):
        """A quantity derived from the model's definition, built once by ``factory()``.

        Without ``factory``, only a look: the value kept under ``key``, or None.

        The one way into the model's cache (compiled twin, coupling, full tree,
        flat arrays, symbolic records, generated equations): the value is kept
        until a builder method changes the model (``add_body``, ``add_mimic``,
        ``set_joint_properties``, the ``gravity`` setter), and it is never
        pickled.  When two threads build the same key at once, both get the
        value stored first.
        """
        try:
            return self._cache[key]
        except KeyError:
            return None if factory is None else self._cache.setdefault(key, factory())

    def _body_index(self, ref, what: str = "body") -> int:
        if ref is None:
            return -1
        if isinstance(ref, str):
            if ref in self._body_by_name:
                return self._body_by_name[ref]
            if ref in ("world", "base"):
                return -1
            raise ModelError(f"unknown {what} {ref!r}")
        if isinstance(ref, bool) or not isinstance(ref, int | np.integer):
            raise ModelError(f"{what} must be a body index or name, got {ref!r}")
        ref = int(ref)
        if not -1 <= ref < len(self._bodies):
            raise ModelError(f"unknown {what} index {ref} (model has {len(self._bodies)} bodies)")
        return ref

    def add_body(
        self,
        parent: int | str | None,
        joint: Joint,
        X_tree=None,
        inertia=None,
        name: str | None = None,
        joint_name: str | None = None,
        *,
        check_inertia: bool = True,
    ) -> int:
        """Append a body and its parent joint; return the new body's index.

        Parameters
        ----------
        parent : int or str or None
            Parent body index or name; ``-1`` or ``None`` for the world.
        joint : Joint
            The joint from the parent to the new body.
        X_tree : (6, 6) array or tuple, optional
            Plücker transform from parent-body coordinates to the joint's
            predecessor frame, or its parts ``(E, r)`` (identity by default).
        inertia : (6, 6) array or tuple, optional
            Spatial inertia about the body origin, or its parts as a tuple
            ``(mass, com, I_com)``: the mass, the centre of mass in body
            coordinates and the rotational inertia about it (zero by default).
        name : str, optional
            Unique body name (``"body<i>"`` by default).
        joint_name : str, optional
            Unique joint name (``"joint_<name>"`` by default).
        check_inertia : bool, optional
            Check that the inertia is physical (mass ≥ 0, rotational inertia
            positive semi-definite, principal moments obeying the triangle
            inequality; default).  ``False`` keeps non-physical data as given
            (the URDF reader's ``inertia="ignore"``); the dynamics may then be
            meaningless.

        Raises
        ------
        ModelError
            On an unknown parent, a duplicate name, a bad transform or inertia.

        Notes
        -----
        The joint becomes part of the model and read-only (:meth:`Joint.freeze`).
        """
        index = len(self._bodies)
        name = f"body{index}" if name is None else str(name)
        joint_name = f"joint_{name}" if joint_name is None else str(joint_name)
        if not isinstance(joint, Joint):
            raise ModelError(f"body {name!r}: joint must be an rbd Joint, got {joint!r}")
        if name in self._frames or name in self._body_by_name:
            raise ModelError(f"duplicate body or frame name {name!r}")
        if joint_name in self._joint_by_name:
            raise ModelError(f"body {name!r}: duplicate joint name {joint_name!r}")
        parent_index = self._body_index(parent, f"parent of body {name!r}")
        X = _parse_X_tree(X_tree, name)
        I = _parse_inertia(inertia, name, check_inertia)
        X.setflags(write=False)
        I.setflags(write=False)
        joint.freeze()
        self._bodies.append(Body(name, parent_index, joint, joint_name, X, I))
        self._body_by_name[name] = index
        self._joint_by_name[joint_name] = index
        for key, (size, default) in JOINT_PROPERTIES.items():
            self._joint_props[key].append(np.full(getattr(joint, size), default))
        self._q_start.append(self._nq)
        self._v_start.append(self._nv)
        self._nq += joint.nq
        self._nv += joint.nv
        self._cache.clear()
        return index

    def set_joint_properties(self, joint_name: str, **values) -> None:
        """Set limits, joint dynamics or rotor inertia of one joint.

        Parameters
        ----------
        joint_name : str
            The joint (or the name of the body it moves).
        lower, upper : float or (nq_joint,) array_like, optional
            Position limits, per coordinate (``±inf``: none).
        velocity_limit, effort_limit : float or (nv_joint,) array_like, optional
            Largest speed and generalized force magnitude (``inf``: none).
        damping, friction : float or (nv_joint,) array_like, optional
            Viscous damping (N m s/rad or N s/m) and dry friction (N m or N)
            coefficients.  Stored for simulation; the dynamics functions never
            apply them.
        armature : float or (nv_joint,) array_like, optional
            Rotor inertia reflected through the joint, added to the diagonal of
            the joint-space inertia by every algorithm.

        Raises
        ------
        ModelError
            On an unknown joint or property, a value of the wrong size, ``lower >
            upper``, a negative or non-finite damping, friction or armature, or a
            negative limit; the model is left unchanged.
        """
        i = self._joint_body(joint_name)
        body = self._bodies[i]
        new = _checked_properties(body.joint, body.joint_name, values,
                                  self._joint_props["lower"][i], self._joint_props["upper"][i])
        for key, value in new.items():
            self._joint_props[key][i] = value
        self._cache.clear()

    def add_mimic(self, joint_name: str, mimicked_joint: str, multiplier: float = 1.0,
                  offset: float = 0.0) -> None:
        """Make a joint's coordinate follow another's: ``q_j = multiplier * q_k + offset``.

        The joint keeps its body and its place in the full tree
        (:meth:`full_model`) but loses its own coordinate: ``nq`` and ``nv``
        drop by one, and every algorithm works on the independent coordinates
        through the coupling matrix ``G`` (:mod:`rbd.model.coupling`:
        ``q_full = G q + o``, ``τ = Gᵀ τ_full``, ``M = Gᵀ M_full G``).

        Parameters
        ----------
        joint_name : str
            The mimic joint ``j`` (or the name of the body it moves).
        mimicked_joint : str
            The joint ``k`` it follows; it keeps its coordinate.
        multiplier, offset : float, optional
            ``m`` and ``o`` of ``q_j = m q_k + o`` (URDF's defaults: 1 and 0).

        Raises
        ------
        ModelError
            On an unknown joint, a joint mimicking itself, a joint that already
            mimics one or is mimicked (a mimic of a mimic, hence any cycle), a
            joint other than revolute, prismatic or helical (one coordinate with
            ``q̇ = v``), or a non-finite multiplier or offset; the model is left
            unchanged.

        Examples
        --------
        A gripper: the right finger moves opposite to the left one.

        >>> import rbd
        >>> model = rbd.Model()
        >>> finger = (0.1, [0, 0, 0], [[1e-4, 0, 0], [0, 1e-4, 0], [0, 0, 1e-4]])
        >>> left = model.add_body(-1, rbd.Prismatic([0, 1, 0]), None, finger, "left")
        >>> right = model.add_body(-1, rbd.Prismatic([0, 1, 0]), None, finger, "right")
        >>> model.add_mimic("joint_right", "joint_left", multiplier=-1.0)
        >>> model.nq, model.joint_names
        (1, ['joint_left'])
        """
        j = self._joint_body(joint_name)
        k = self._joint_body(mimicked_joint)
        _check_mimic(self._bodies, self._mimic, j, k)
        name_j = self._bodies[j].joint_name
        m = _mimic_number(multiplier, "multiplier", name_j)
        o = _mimic_number(offset, "offset", name_j)
        self._mimic[j] = (k, m, o)
        self._cache.clear()

    @property
    def mimic(self) -> dict[str, tuple[str, float, float]]:
        """The mimic joints: ``{joint: (mimicked joint, multiplier, offset)}``."""
        return {self._bodies[j].joint_name: (self._bodies[k].joint_name, m, o)
                for j, (k, m, o) in sorted(self._mimic.items())}

    def coupling(self) -> Coupling:
        """The coupling of the independent coordinates to the full tree (cached).

        Index maps and the matrix ``G`` with ``v_full = G v``
        (:class:`~rbd.model.coupling.Coupling`); the identity for a model without mimic joints.
        """
        return self._derived("coupling", lambda: Coupling(self._bodies, self._q_start,
                                                           self._v_start, self._mimic))

    def _full_tree(self) -> Model:
        """The full tree as a plain model, shared by the algorithms (cached, never handed out)."""
        if not self._mimic:
            return self
        return self._derived("full", self.full_model)

    def full_model(self) -> Model:
        """A copy of the model with every mimic joint freed: one coordinate per joint.

        The algorithms of a model with mimic joints run this tree and project
        the results (:mod:`rbd.model.coupling`); for a model without mimic joints it
        is an equal copy.
        """
        new = self.copy()
        new._mimic = {}
        return new

    def add_frame(self, name: str, body: int | str, X=None) -> None:
        """Attach a named frame to ``body``; ``X`` maps body to frame coordinates."""
        if name in self._frames or any(b.name == name for b in self._bodies):
            raise ModelError(f"duplicate body or frame name {name!r}")
        index = self._body_index(body, f"body of frame {name!r}")
        if index < 0:
            raise ModelError(f"frame {name!r}: frames attach to bodies, not to the world")
        X = _parse_X_tree(X, name)
        X.setflags(write=False)
        self._frames[name] = Frame(name, index, X)

    @classmethod
    def from_arrays(cls, parent, joints, X_tree, inertias, names=None, joint_names=None,
                    gravity=(0.0, 0.0, -9.81), name="model") -> Model:
        """Build a model from Featherstone-style arrays in any order.

        The bodies are renumbered so that parents precede children.  A parent
        array with a cycle or an unknown parent raises :class:`ModelError`
        naming a body on it.
        """
        n = len(parent)
        if not (len(joints) == len(X_tree) == len(inertias) == n):
            raise ModelError("parent, joints, X_tree and inertias must have the same length")
        names = [f"body{i}" for i in range(n)] if names is None else list(names)
        joint_names = [None] * n if joint_names is None else list(joint_names)
        parent = [_parent_index(p, names[i], n) for i, p in enumerate(parent)]
        order = _build_order(parent, names)
        model = cls(gravity=gravity, name=name)
        new_index = {}
        for i in order:
            p = int(parent[i])
            new_index[i] = model.add_body(new_index.get(p, -1), joints[i], X_tree[i],
                                          inertias[i], names[i], joint_names[i])
        return model

    # --- queries --------------------------------------------------------------
    @property
    def nbodies(self) -> int:
        return len(self._bodies)

    @property
    def nq(self) -> int:
        """Number of (independent) configuration coordinates."""
        return self._nq - len(self._mimic)

    @property
    def nv(self) -> int:
        """Number of (independent) velocity coordinates."""
        return self._nv - len(self._mimic)

    @property
    def gravity(self) -> np.ndarray:
        return self._gravity

    @gravity.setter
    def gravity(self, value) -> None:
        self._gravity = _check_gravity(value)
        self._cache.clear()

    @property
    def bodies(self) -> tuple[Body, ...]:
        # cached: ``model.bodies[i]`` in a loop over the bodies must not copy the list
        cached = self._cache.get("bodies")
        if cached is None:
            cached = self._cache["bodies"] = tuple(self._bodies)
        return cached

    @property
    def parent(self) -> tuple[int, ...]:
        """The parent array λ (``-1`` for the world)."""
        cached = self._cache.get("parent")
        if cached is None:
            cached = self._cache["parent"] = tuple(b.parent for b in self._bodies)
        return cached

    @property
    def dof_parent(self) -> tuple[int, ...]:
        """λ of the degrees of freedom (``-1`` at a root): the previous one of the same joint,
        else the last one of the nearest ancestor joint that has any.  ``M[i, j]`` can be
        non-zero only when one of ``i, j`` is an ancestor of the other in this tree.  For a
        model with mimic joints, that of the full tree."""
        if self._mimic:
            return self._full_tree().dof_parent
        cached = self._cache.get("dof_parent")
        if cached is None:
            lam = dof_parents(self.parent, self._v_start, [b.joint.nv for b in self._bodies])
            cached = self._cache["dof_parent"] = tuple(int(k) for k in lam)
        return cached

    @property
    def children(self) -> tuple[tuple[int, ...], ...]:
        """The children sets μ(i)."""
        kids: list[list[int]] = [[] for _ in self._bodies]
        for i, b in enumerate(self._bodies):
            if b.parent >= 0:
                kids[b.parent].append(i)
        return tuple(tuple(k) for k in kids)

    @property
    def joints(self) -> tuple[Joint, ...]:
        return tuple(b.joint for b in self._bodies)

    @property
    def X_tree(self) -> tuple[np.ndarray, ...]:
        return tuple(b.X_tree for b in self._bodies)

    @property
    def inertias(self) -> tuple[np.ndarray, ...]:
        return tuple(b.inertia for b in self._bodies)

    @property
    def body_names(self) -> list[str]:
        return [b.name for b in self._bodies]

    @property
    def joint_names(self) -> list[str]:
        """Names of the joints that have coordinates of their own, in ``q`` order.

        A mimic joint (:attr:`mimic`) has none and is not listed.
        """
        return [b.joint_name for i, b in enumerate(self._bodies)
                if b.joint.nv > 0 and i not in self._mimic]

    @property
    def frames(self) -> dict[str, Frame]:
        """Every named frame: the bodies' own frames and the attached ones."""
        identity = np.eye(6)
        identity.setflags(write=False)
        frames = {b.name: Frame(b.name, i, identity) for i, b in enumerate(self._bodies)}
        frames.update(self._frames)
        return frames

    @property
    def total_mass(self) -> float:
        """The sum of the bodies' masses (cached: ``center_of_mass`` checks it per call)."""
        cached = self._cache.get("total_mass")
        if cached is None:
            cached = self._cache["total_mass"] = float(sum(b.mass for b in self._bodies))
        return cached

    def q_index(self, i: int) -> slice:
        """Slice of body ``i``'s joint coordinates in ``q``.

        Raises :class:`ModelError` for a mimic joint, which has none.
        """
        if self._mimic:
            return self._coupled_index(i, "q")
        return slice(self._q_start[i], self._q_start[i] + self._bodies[i].joint.nq)

    def v_index(self, i: int) -> slice:
        """Slice of body ``i``'s joint velocities in ``v`` (:class:`ModelError` for a mimic)."""
        if self._mimic:
            return self._coupled_index(i, "v")
        return slice(self._v_start[i], self._v_start[i] + self._bodies[i].joint.nv)

    def _coupled_index(self, i: int, which: str) -> slice:
        if i in self._mimic:
            k, m, o = self._mimic[i]
            raise ModelError(
                f"joint {self._bodies[i].joint_name!r} has no coordinate of its own: it mimics "
                f"{self._bodies[k].joint_name!r} (q = {m:g} * q_{self._bodies[k].joint_name} + "
                f"{o:g}); use that joint's slice, or model.full_model() for every joint")
        start = int(getattr(self.coupling(), f"{which}_start")[i])
        return slice(start, start + getattr(self._bodies[i].joint, f"n{which}"))

    def _joint_body(self, name: str) -> int:
        if name in self._joint_by_name:
            return self._joint_by_name[name]
        if name in self._body_by_name:
            return self._body_by_name[name]
        raise ModelError(f"unknown joint {name!r}; joints are {self.joint_names}")

    def q_slice(self, name: str) -> slice:
        """Slice of the named joint (or of the named body's joint) in ``q``."""
        return self.q_index(self._joint_body(name))

    def v_slice(self, name: str) -> slice:
        """Slice of the named joint (or of the named body's joint) in ``v``."""
        return self.v_index(self._joint_body(name))

    def body_index(self, name: str | int) -> int:
        """Index of a body given by name or index (a frame name gives its body)."""
        if isinstance(name, str) and name in self._frames:
            return self._frames[name].body
        index = self._body_index(name)
        if index < 0:
            raise ModelError(f"{name!r} is the world, not a body")
        return index

    def subtree(self, i: int) -> list[int]:
        """Body ``i`` and all its descendants, in increasing order."""
        inside = {i}
        for j in range(i + 1, self.nbodies):
            if self._bodies[j].parent in inside:
                inside.add(j)
        return sorted(inside)

    # --- joint limits and dynamics (q or v order) -----------------------------------
    def _joint_property(self, key: str) -> np.ndarray:
        cached = self._cache.get(("prop", key))
        if cached is None:
            parts = [p for i, p in enumerate(self._joint_props[key]) if i not in self._mimic]
            cached = np.concatenate(parts) if parts else np.zeros(0)
            cached.setflags(write=False)
            self._cache[("prop", key)] = cached
        return cached

    @property
    def lower(self) -> np.ndarray:
        """Lower position limits, ``(nq,)``, ``-inf`` where there is none."""
        return self._joint_property("lower")

    @property
    def upper(self) -> np.ndarray:
        """Upper position limits, ``(nq,)``, ``+inf`` where there is none."""
        return self._joint_property("upper")

    @property
    def velocity_limit(self) -> np.ndarray:
        """Speed limits, ``(nv,)``, ``inf`` where there is none."""
        return self._joint_property("velocity_limit")

    @property
    def effort_limit(self) -> np.ndarray:
        """Generalized force limits, ``(nv,)``, ``inf`` where there is none."""
        return self._joint_property("effort_limit")

    @property
    def damping(self) -> np.ndarray:
        """Viscous joint damping, ``(nv,)`` (applied only by a simulation that asks)."""
        return self._joint_property("damping")

    @property
    def friction(self) -> np.ndarray:
        """Dry joint friction, ``(nv,)`` (applied only by a simulation that asks)."""
        return self._joint_property("friction")

    @property
    def armature(self) -> np.ndarray:
        """Rotor inertia, ``(nv,)``: added to the diagonal of M by every algorithm."""
        return self._joint_property("armature")

    # --- derived copies ---------------------------------------------------------
    def copy(self) -> Model:
        """An independent model with the same definition (bodies are shared: read-only)."""
        new = copy.copy(self)
        new._bodies = list(self._bodies)
        new._frames = dict(self._frames)
        new._geoms = dict(self._geoms)
        new._q_start = list(self._q_start)
        new._v_start = list(self._v_start)
        new._body_by_name = dict(self._body_by_name)
        new._joint_by_name = dict(self._joint_by_name)
        new._joint_props = {key: list(parts) for key, parts in self._joint_props.items()}
        new._mimic = dict(self._mimic)
        new._cache = {}
        return new

    def replace_joint(self, name: str, joint: Joint) -> Model:
        """Return a copy with the named joint replaced by ``joint``."""
        i = self._joint_body(name)
        new = Model(gravity=self.gravity, name=self.name)
        for k, b in enumerate(self._bodies):
            new.add_body(b.parent, joint if k == i else b.joint, b.X_tree, b.inertia, b.name,
                         b.joint_name)
        for f in self._frames.values():
            new.add_frame(f.name, f.body, f.X)
        new._geoms = dict(self._geoms)
        # limits and joint dynamics carry over where the joint's size allows
        for key, parts in self._joint_props.items():
            for k, part in enumerate(parts):
                if part.shape == new._joint_props[key][k].shape:
                    new._joint_props[key][k] = part
        for j, (k, m, o) in self._mimic.items():
            new.add_mimic(self._bodies[j].joint_name, self._bodies[k].joint_name, m, o)
        new._cache.clear()
        return new

    def describe(self) -> str:
        """A multi-line text description of the tree (used by ``rbd info``)."""
        lines = [f"model {self.name!r}: {self.nbodies} bodies, nq = {self.nq}, nv = {self.nv},"
                 f" total mass {self.total_mass:.6g} kg, gravity {self.gravity.tolist()}"]
        lines += _tree_lines(self._bodies, self.children, self._mimic, self._frames)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<rbd.Model {self.name!r}: {self.nbodies} bodies, nq={self.nq}, nv={self.nv}>"

    # --- kernel support ---------------------------------------------------------
    def flat_arrays(self) -> dict[str, np.ndarray]:
        """The flat typed arrays the kernels compile from (cached).

        Keys: ``parent`` (int64, nb), ``jtype`` (int64), ``jparams`` (nb × 9),
        ``q_start``, ``v_start``, ``nq_j``, ``nv_j`` (int64), ``dof_parent`` (int64,
        nv: λ of the degrees of freedom, see :attr:`dof_parent`), ``E_tree``
        (nb × 3 × 3), ``r_tree`` (nb × 3), ``mass`` (nb), ``com`` (nb × 3),
        ``I_com`` (nb × 3 × 3), ``inertia`` (nb × 6 × 6), ``gravity`` (3),
        ``armature`` (nv).  The arrays are read-only.  For a model with mimic
        joints they are those of the full tree (:meth:`full_model`), which the
        kernels run.
        """
        if self._mimic:
            return self._full_tree().flat_arrays()
        if "flat" not in self._cache:
            self._cache["flat"] = _flat_arrays(self._bodies, self._q_start, self._v_start,
                                               self.gravity, self.armature)
        return self._cache["flat"]
