r"""MJCF reader (MuJoCo's model format): strict, with clear errors, safe on untrusted files.

What is read
------------
The ``<worldbody>`` tree of ``<body>`` elements with their ``pos`` and
orientation, ``<joint>`` (``hinge``, ``slide``, ``ball``, ``free``) and
``<freejoint>``, ``<inertial>`` (``pos``, orientation, ``mass``,
``diaginertia`` or ``fullinertia``) or, where MuJoCo infers it, the inertia of
the ``<geom>`` shapes (sphere, capsule, ellipsoid, cylinder, box, mesh;
``mass`` or ``density``; ``fromto``; ``shellinertia``), ``<site>`` (as
frames), ``<frame>``, ``<default>`` classes (``class``, ``childclass``,
nested classes inherit; a repeated top-level ``<default>`` adds to class
``main``, as in MuJoCo), ``<include>`` (of ``<mujoco>`` or
``<mujocoinclude>`` files), ``<asset>`` (``<mesh file scale inertia vertex
face refpos refquat>``, ``<material rgba>``), ``<option gravity>`` (and
``<flag gravity="disable">``) and ``<compiler>`` (``angle``, ``eulerseq``,
``inertiafromgeom``, ``inertiagrouprange``, ``boundmass``,
``boundinertia``, ``balanceinertia``, ``settotalmass``, ``autolimits``,
``meshdir``, ``assetdir``).  Joint ``armature``, ``damping``,
``frictionloss`` and ``range`` (when limited) become ``model.armature``,
``model.damping``, ``model.friction``, ``model.lower`` and ``model.upper``.
Every ``<geom>`` (of the world and of the bodies, heights fields and
signed-distance fields excepted) becomes a :class:`~rbd.model.geoms.Geom` in
:attr:`~rbd.model.Model.geoms`, with its pose moved into the rbd body that
carries it, its colour (``rgba`` or its material's) and MuJoCo's contact
parameters (``group``, ``contype``, ``conaffinity``, ``condim``,
``friction``, ``solref``, ``solimp``, ``solmix``, ``margin``, ``gap``,
``priority``).  A mesh geom's pose is the mesh file's frame (MuJoCo moves
it to the mesh's principal frame: ``mesh_pos``, ``mesh_quat``).

Every element and attribute is checked against MuJoCo's grammar
(:mod:`rbd.mjcf._schema`): an unknown one (``densty="100"``, ``<jiont>``)
is an :class:`~rbd.errors.MJCFError` naming it and the nearest valid
spelling, as MuJoCo refuses such files; so is an unknown value of a
keyword attribute rbd reads (``type="cylindre"``).

Bodies and joints
-----------------
Every MJCF joint keeps its name and becomes one rbd joint of the same kind:

=========  ===============================  =====  =====
MJCF       rbd joint                        nq     nv
=========  ===============================  =====  =====
hinge      :class:`~rbd.joints.Revolute`    1      1
slide      :class:`~rbd.joints.Prismatic`   1      1
ball       :class:`~rbd.joints.Spherical`   4      3
free       :class:`~rbd.joints.Free`        7      6
=========  ===============================  =====  =====

Joints are numbered as MuJoCo numbers them (bodies depth-first in document
order, the joints of a body in order), so ``model.nq`` and ``model.nv`` equal
MuJoCo's and every joint's ``q`` and ``v`` slices sit at MuJoCo's
``jnt_qposadr`` and ``jnt_dofadr``.  An unnamed joint is called
``"<body>_joint<k>"`` and an unnamed body ``"body<id>"`` (its MuJoCo id).

MuJoCo moves a body with ``n`` joints by composing them in order, each about
its own anchor ``pos`` in the body frame: with ``F_0`` the body's reference
frame, ``F_k = F_{k-1} T(p_k) Rot(a_k, q_k - ref_k) T(-p_k)`` (hinge; a
slide translates by ``a_k (q_k - ref_k)``; a ball rotates about ``p_k``).
rbd gives each joint a body whose frame sits at the joint's anchor,
``G_k = F_k T(p_k)``, so the joint is a plain rotation about the frame's
origin; ``ref`` is folded into ``X_tree`` (``Rot(a, -ref)`` or
``T(-a ref)``), so rbd's ``q`` of a hinge or slide *is* MuJoCo's ``qpos``,
and ``range`` carries over unchanged.  The joints before the last get
massless bodies called ``"<body>/<joint>"``.  The body named after the MJCF
body carries its inertia and has MuJoCo's body frame: it is the last joint's
body when that joint's anchor is the body origin, otherwise a body welded
to it by a :class:`~rbd.joints.Fixed` joint at ``T(-p_n)``.

A body without joints is welded to its parent like a URDF fixed link: its
inertia is lumped into the parent's and it stays addressable as a frame.
Bodies welded to the world are static: their inertia is dropped, they are
not frames, and the bodies below them hang from the world.  ``<site>``
elements become frames of the body carrying them, under their own names.
MuJoCo keeps body and site names apart, rbd's frames share one namespace:
a site named like a body (dm-control names many sites after their body) is
the frame ``"site:<name>"``.  Unnamed sites and sites of the world are
dropped.  Geoms of the world body never enter the dynamics; every geom is
in :attr:`~rbd.model.Model.geoms`.

Inertia
-------
As MuJoCo's compiler: ``inertiafromgeom="auto"`` (default) takes the
``<inertial>`` when present and the geoms otherwise, ``"true"`` always the
geoms, ``"false"`` never.  A geom's mass is ``mass`` or ``density`` times its
volume (density 1000 by default); only geoms in ``inertiagrouprange`` and of
mass above ``1e-14`` count; the geoms' inertias are combined by the
parallel-axis theorem.  Shapes follow
:mod:`rbd.reference.mass_properties` (closed forms for primitives, solid
or shell; the divergence theorem over a mesh's triangles under the mesh
asset's ``inertia`` rule: ``legacy`` (MuJoCo's default), ``exact``,
``convex``, ``shell``).  A mesh file is opened only when a moving body's
inertia needs it (STL and OBJ through the optional ``trimesh`` package,
MuJoCo's ``.msh`` directly; vertices rounded to single precision as MuJoCo
stores them); bodies welded to the world never need it.  MuJoCo keeps a
mesh's inertia as principal moments in a frame found by Jacobi rotations that
stop at ``1e-7`` of the largest element, dropping what is left off the
diagonal, and sums a body's geoms in its own order; rbd runs the same
iteration on the same sums (:mod:`rbd.mjcf._principal`), so that the
dynamics and the inertial frames are MuJoCo's.  A primitive
fitted to a mesh, a height field or a signed-distance field whose inertia
would be needed is an error: give the body an ``<inertial>``.  Each body's
inertia must be physical (``mass ≥ 0``,
principal moments ``≥ 0`` obeying the triangle inequality, to the tolerance
of :data:`rbd.urdf.INERTIA_RTOL`), unless ``balanceinertia`` repairs it as
MuJoCo does.

What the dynamics leaves out
----------------------------
rbd's tree dynamics has no constraints, springs or actuators.  The ``connect``,
``weld`` and ``joint`` equalities become ``model.constraints`` (with their
``solref``, ``solimp``, ``torquescale``), and the joint springs (``stiffness``,
``springref`` of hinges and slides, MuJoCo's ``qpos0`` as the rest pose of ball and
free joints, ``springdamper`` turned into stiffness and damping as MuJoCo's compiler
does) and each joint's ``solreflimit``,
``solimplimit``, ``margin``, ``solreffriction`` and ``solimpfriction`` are
kept in ``model.mujoco_joints``: :func:`rbd.forward` and the contact path of
:func:`rbd.simulate` apply them as MuJoCo does, with the ``<option><flag>``
disable flags (``model.mujoco_options["disable"]``), the
``<contact><exclude>`` body pairs (``model.contact_excludes``) and the tendons, fixed
and spatial (sites, sphere and cylinder wrapping with ``sidesite``, pulleys), with the
equality constraints between them (``model.mujoco_tendons``,
:mod:`rbd.constraints.tendon_rows`, :mod:`rbd.constraints.tendon_spatial`).  Whatever else the
file holds of equality constraints (flex), actuators,
explicit contact pairs, the enable flags ``override``, ``diagexact`` and ``sleep``,
ball-joint cone limits, gravity compensation
(``gravcomp``), the ellipsoid fluid model of mesh geoms, the
motion of mocap bodies and plugins is named in one :class:`RuntimeWarning`;
nothing is dropped silently.  A mocap body is a body on a fixed joint at its
pose in the file (MuJoCo's default ``mocap_pos``, ``mocap_quat``), without
mass: it, its sites and the bodies welded to it are frames, its geoms are
drawn there.  Joint limits, damping and friction are stored on the
model, as for URDF, and applied only by a simulation that asks.

MuJoCo's conventions
--------------------
This is the one place where MuJoCo's state conventions meet rbd's; the
functions :func:`from_mujoco_state`, :func:`to_mujoco_state`,
:func:`from_mujoco_force`, :func:`to_mujoco_force` and
:func:`mujoco_velocity_map` apply it.  Per joint (``R`` the body's
orientation in the world, ``u`` the body-frame linear velocity of the body
origin):

=========  ==========================  =========================  =====================
joint      MuJoCo                      rbd                        map
=========  ==========================  =========================  =====================
hinge      qpos θ, qvel θ̇              q θ, v θ̇                   identity
slide      qpos x, qvel ẋ              q x, v ẋ                   identity
ball       qpos (w, x, y, z)           q (x, y, z, w)             reorder
           qvel ω (body frame)         v ω (body frame)           identity
free       qpos [p; (w, x, y, z)]      q [p; (x, y, z, w)]        reorder
           qvel [R u; ω]               v [ω; u]                   ``qvel = T v``
           qacc d/dt qvel              a = v̇                      ``qacc = T a + Ṫ v``
           qfrc [f_world; n_body]      τ [n; Rᵀ f_world]          ``τ = Tᵀ qfrc``
=========  ==========================  =========================  =====================

with ``Ṫ v = [R (ω × u); 0]`` for a free joint.  MuJoCo's armature of a free
joint acts on ``qvel``, so its linear part on ``R u``: rbd's algorithms add
``a (ω × u)`` to the bias (:func:`rbd.reference.rnea.armature_bias`), and a
free joint's linear armature must be the same on its three rows.  Power is the same in both
(``τ · v = qfrc · qvel``), so the joint-space inertia maps as
``M_rbd = Tᵀ M_mujoco T`` and the bias forces as
``h_rbd = Tᵀ (qfrc_bias + M_mujoco Ṫ v)`` (MuJoCo's ``qfrc_bias`` is the
force at ``qacc = 0``, rbd's ``nonlinear_effects`` the force at ``a = 0``).

Security
--------
The XML is parsed with :mod:`defusedxml`, refusing any document type
declaration (hence entity expansion and external entities) before anything
is expanded or fetched.  ``<include file>`` paths are relative to the
model file's directory (or ``directory=``) and, as in MuJoCo, may leave it
with ``../`` (metaworld's tasks do); an include cycle, more than 1000
includes and anything but a regular file (a FIFO would block the reader
forever) are refused.  Mesh files are opened only for the inertia of a
moving body (see Inertia); no texture or plugin file is opened, and
nothing is executed.  Bodies, frames and includes are read with explicit
stacks, so a deeply nested file cannot exhaust Python's recursion limit.
"""

import os
import re
import warnings

from .._robotfile import caller_stacklevel, quote
from ..errors import InputError, MJCFError
from ..model import Model
from ._bodies import _read_world, apply_springdamper
from ._build import _build, _scale_masses
from ._equality import read_equality
from ._geoms import _read_assets
from ._options import (
    _Context,
    _defaults,
    _dynamics_sections,
    _ignore,
    _ignored_message,
    _read_compiler,
    _read_excludes,
    _read_option,
    _read_solver_options,
)
from ._schema import check_grammar
from ._spatial_tendons import path_reader
from ._state import (
    from_mujoco_force,
    from_mujoco_state,
    mujoco_velocity_map,
    to_mujoco_force,
    to_mujoco_state,
)
from ._tendons import read_tendon_equalities, read_tendons
from ._xml import _document, _is_xml_text

__all__ = ["load_mjcf", "load", "from_mujoco_state", "to_mujoco_state", "from_mujoco_force",
           "to_mujoco_force", "mujoco_velocity_map"]


def load_mjcf(source: str | os.PathLike | bytes, *,
              directory: str | os.PathLike | None = None) -> Model:
    """Build a :class:`~rbd.model.Model` from an MJCF (MuJoCo) file or XML string.

    Parameters
    ----------
    source : str, os.PathLike or bytes
        A path to an MJCF file, or the XML document itself (a string whose
        first non-blank character is ``<``, or bytes).
    directory : str or os.PathLike, optional
        The directory ``<include>`` and mesh paths are relative to.
        Default: the model file's directory; a model given as a string has
        none, so its includes are refused unless this is given.

    Returns
    -------
    Model
        One body per MJCF body with joints (plus massless bodies for the
        extra joints of a body and a welded body where the last joint's anchor
        is off the body origin; see the module notes), joints named and
        ordered as in MuJoCo, bodies without joints merged into their parents
        and kept as frames, sites as frames.  ``model.name`` is the
        ``<mujoco model>`` name; gravity from ``<option>``.

    Raises
    ------
    MJCFError
        On malformed or unsafe XML (any DOCTYPE), a root other than
        ``<mujoco>``, an ``<include>`` in a cycle or of a file that is not
        regular, an element or attribute MuJoCo's grammar does not have, an
        unknown joint or geom type or default class, a free joint that is
        not alone or not at the top level, a bad number, a zero axis or
        quaternion, two orientations on one element, an inverted ``range``,
        a non-physical inertia, a mesh that cannot be read when a moving
        body's inertia needs it, or an element rbd cannot model rigidly
        (``<composite>``, ``<flexcomp>``, ``<replicate>``, ``<attach>``,
        ``<deformable>``).  The message names the file's element (an unnamed
        one by its place: ``<body #1> (unnamed) of body 'torso'``).  Nothing
        is returned and no model is half built.

    Warns
    -----
    RuntimeWarning
        Once, listing what the file holds that rbd's dynamics leaves out
        (flex equalities, actuators, contact pairs, the
        enable flags override, diagexact and sleep, ball-joint limits, gravity compensation,
        the ellipsoid fluid model of mesh geoms, the motion of mocap bodies, plugins).

    Notes
    -----
    Use :func:`from_mujoco_state` and its companions to pass states, forces
    and accelerations between MuJoCo and rbd (quaternion order and the free
    joint's velocity differ; see the module notes).

    Examples
    --------
    A rod of 2 kg hinged about ``y``, its centre of mass 0.5 m below the hinge:

    >>> import rbd.mjcf
    >>> xml = '''
    ... <mujoco model="pendulum">
    ...   <worldbody>
    ...     <body name="rod">
    ...       <joint name="hinge" axis="0 1 0" range="-90 90" damping="0.1"/>
    ...       <inertial pos="0 0 -0.5" mass="2" diaginertia="0.17 0.17 0.001"/>
    ...     </body>
    ...   </worldbody>
    ... </mujoco>'''
    >>> model = rbd.mjcf.load_mjcf(xml)
    >>> model.body_names, model.joint_names, model.nq
    (['rod'], ['hinge'], 1)
    >>> round(float(rbd.crba(model, [0.0])[0, 0]), 12)  # I_yy + m (0.5)^2
    0.67
    >>> [round(float(x), 6) for x in (model.lower[0], model.upper[0])]  # degrees by default
    [-1.570796, 1.570796]
    """
    root, directory = _document(source, directory)
    check_grammar(root, MJCFError)
    compiler = _read_compiler(root)
    ignored: dict[str, list[str]] = {}
    gravity = _read_option(root, ignored)
    ctx = _Context(compiler, _defaults(root), ignored)
    ctx.assets = _read_assets(root, ctx, directory)
    _read_world(root, ctx)
    _dynamics_sections(root, ignored)
    if compiler.settotalmass > 0:
        _scale_masses(ctx.bodies, compiler.settotalmass)
    model = _build(root.get("model", "MuJoCo Model"), gravity, ctx.bodies, ctx.world_geoms,
                   ctx.labels)
    apply_springdamper(model)
    read_equality(root, ctx, model, ignored)
    tendons = read_tendons(root, ctx, set(model.mujoco_joints),
                           path_reader(root, ctx, model))
    if tendons:
        model.mujoco_tendons = tendons
        model.mujoco_tendon_equalities = read_tendon_equalities(root, ctx, tendons)
    model.mujoco_options = _read_solver_options(root)
    excludes = _read_excludes(root, model)
    if excludes:
        model.contact_excludes = excludes
    if ctx.fluid_ellipsoid and (model.mujoco_options.get("density")
                                or model.mujoco_options.get("viscosity")):
        model.mujoco_bodies["ellipsoid"] = {
            body: [(g, c) for g, c in found if c is not None]
            for body, found in ctx.fluid_ellipsoid.items()}
        for found in ctx.fluid_ellipsoid.values():
            for where, _ in (x for x in found if x[1] is None):
                _ignore(ignored, "ellipsoid fluid forces (fluidshape='ellipsoid') of geoms "
                        "other than sphere, capsule, cylinder, ellipsoid and box", where)
    if ignored:
        warnings.warn(_ignored_message(model.name, ignored), RuntimeWarning,
                      stacklevel=caller_stacklevel())
    return model


def _body_inertias(source, *, directory=None) -> list:
    """Each MJCF body's own inertia (:class:`~rbd._robotfile.Link`, body frame), in MuJoCo's
    body order (id 1 first), before welded bodies are merged; None for bodies welded to the
    world.  For comparisons with MuJoCo's ``body_mass``, ``body_ipos`` and ``body_inertia``."""
    root, directory = _document(source, directory)
    ctx = _Context(_read_compiler(root), _defaults(root), {})
    ctx.assets = _read_assets(root, ctx, directory)
    _read_world(root, ctx)
    if ctx.compiler.settotalmass > 0:
        _scale_masses(ctx.bodies, ctx.compiler.settotalmass)
    moving = []
    for body in ctx.bodies:
        moving.append(bool(body.joints) or (body.parent >= 0 and moving[body.parent]))
    return [body.link if keep else None for body, keep in zip(ctx.bodies, moving, strict=True)]


# --- choosing the reader ----------------------------------------------------------------------
_MARKUP = re.compile(r"\s*(<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>]*>)", re.S)


def _root_tag(head: str) -> str | None:
    """The name of the first element of an XML text (declarations and comments skipped)."""
    head = head.lstrip("\ufeff")
    position = 0
    while match := _MARKUP.match(head, position):
        position = match.end()
    found = re.match(r"\s*<([A-Za-z_][\w.:-]*)", head[position:])
    return found.group(1) if found else None


def load(source: str | os.PathLike | bytes, **kwargs) -> Model:
    """Load a URDF or an MJCF model, choosing the reader from the file.

    Parameters
    ----------
    source : str, os.PathLike or bytes
        A file path or the XML document itself.  A ``.urdf`` file is read as
        URDF; otherwise the root element decides: ``<robot>`` is URDF,
        ``<mujoco>`` is MJCF.
    **kwargs
        Passed to :func:`rbd.urdf.load_urdf` or :func:`load_mjcf`.

    Returns
    -------
    Model

    Raises
    ------
    InputError
        When the root element is neither ``<robot>`` nor ``<mujoco>``.
    URDFError, MJCFError
        From the chosen reader.

    Examples
    --------
    >>> import rbd.mjcf
    >>> rbd.mjcf.load('<mujoco><worldbody><body><freejoint name="j"/>'
    ...               '<geom size="0.1"/></body></worldbody></mujoco>').nv
    6
    """
    from ..urdf import load_urdf

    if not _is_xml_text(source) and isinstance(source, str | os.PathLike):
        if os.fspath(source).lower().endswith((".urdf", ".xacro")):
            return load_urdf(source, **kwargs)
        try:
            with open(os.fspath(source), "rb") as fh:
                head = fh.read(65536)
        except (OSError, ValueError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            raise InputError(f"cannot read model file {quote(source)}: {reason}") from None
    elif _is_xml_text(source):
        head = source[:65536]
    else:
        raise InputError(f"expected a model file path or XML, got {type(source).__name__}")
    text = head.decode("utf-8", "replace") if isinstance(head, bytes | bytearray) else head
    tag = _root_tag(text)
    if tag == "robot":
        return load_urdf(source, **kwargs)
    if tag == "mujoco":
        return load_mjcf(source, **kwargs)
    raise InputError(f"{quote(source)}: the root element is "
                     f"{'<' + tag + '>' if tag else 'missing'}; expected <robot> (URDF) or "
                     "<mujoco> (MJCF)")

