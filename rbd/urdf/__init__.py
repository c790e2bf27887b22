r"""URDF reader and writer: strict, with clear errors, safe on untrusted files.

Conventions
-----------
A URDF joint places its *joint frame* in the parent link frame by
``<origin xyz rpy>``; the child link frame coincides with the joint frame
(moved by the joint).  In ``rbd`` the body frame is the child link frame, so
a non-fixed URDF joint becomes one body whose tree transform is the Plücker
motion transform from the parent link frame to the joint frame,

.. math::

    X_\mathrm{tree} = \mathrm{plux}(R^T, p), \qquad
    R = R_z(\mathrm{yaw})\, R_y(\mathrm{pitch})\, R_x(\mathrm{roll}), \quad p = \mathrm{xyz},

and whose joint axis is ``<axis xyz>`` (unit length after normalization;
default ``(1, 0, 0)``) in the joint frame.  An ``<inertial>`` gives the mass,
the centre of mass ``c`` (its ``<origin xyz>``) and the rotational inertia
``I'`` about the centre of mass in a frame rotated by ``R_c`` (its
``<origin rpy>``); in link coordinates the inertia about the centre of mass
is ``I_c = R_c I' R_cᵀ`` and the spatial inertia about the link origin is
``mcI(m, c, I_c)``.

Joint types
-----------
=============  ==============================================  =======  =======
URDF type      rbd joint                                        nq       nv
=============  ==============================================  =======  =======
revolute       :class:`~rbd.joints.Revolute`                     1        1
continuous     :class:`~rbd.joints.Revolute` (one angle)         1        1
prismatic      :class:`~rbd.joints.Prismatic`                    1        1
planar         :class:`~rbd.joints.Planar` (``normal=axis``)     3        3
floating       :class:`~rbd.joints.Free`                         7        6
fixed          merged into the parent body (see below)           0        0
=============  ==============================================  =======  =======

Fixed joints
------------
A link attached by a fixed joint is welded into the body that carries its
parent link: its spatial inertia is moved into that body's frame and added,
``I_B += Xᵀ I_L X`` with ``X`` the motion transform from the body frame to
the link frame, and the link stays addressable as a frame of the body
(:meth:`~rbd.model.Model.add_frame`; e.g. ``rbd.jacobian(model, q, "tool0")``).
The joints below a welded link hang from the same body, with the transforms
composed.

Continuous joints
-----------------
A ``continuous`` joint is a revolute joint without position limits, and rbd
gives it one coordinate, the angle ``θ`` (``nq = nv = 1``; ``model.lower`` and
``model.upper`` are ``∓inf``).  Pinocchio instead stores the point
``(cos θ, sin θ)`` on the unit circle (``nq = 2``, ``nv = 1``), so that
configurations differing by ``2π`` are equal; to pass a configuration across,
map ``θ ↦ (cos θ, sin θ)`` and back with ``θ = atan2(sin, cos)``.  Velocities
and forces are the same scalars in both.

Limits and joint dynamics
-------------------------
``<limit lower upper velocity effort>`` and ``<dynamics damping friction>``
are stored with :meth:`~rbd.model.Model.set_joint_properties` (``model.lower``,
``model.upper``, ``model.velocity_limit``, ``model.effort_limit``,
``model.damping``, ``model.friction``); an absent attribute means no limit
(``±inf``) or no damping or friction (``0``).  A ``continuous`` joint has no
position limits, whatever its ``<limit>`` says.  URDF cannot write an infinite
number, so the writer puts ``±POSITION_BOUND`` where a limit is infinite, and
the reader takes any limit of magnitude ``POSITION_BOUND`` or more for no limit.

Mimic joints
------------
``<mimic joint="k" multiplier="m" offset="o"/>`` in joint ``j`` ties its
coordinate to joint ``k``'s, ``q_j = m q_k + o`` (``m = 1`` and ``o = 0``
when absent, as the URDF specification says), through
:meth:`~rbd.model.Model.add_mimic`: the model's ``nq`` and ``nv`` count the
independent coordinates and every algorithm works on them (see
:mod:`rbd.model.coupling`).  Both joints must be ``revolute``, ``continuous`` or
``prismatic``; a mimic of an unknown joint, of itself or of another mimic
joint (hence a cycle), and a multiplier or offset that is not a finite
number, raise :class:`~rbd.errors.URDFError` naming the joint.  A
``<mimic>`` inside a ``fixed`` joint is ignored, as Pinocchio ignores it:
the welded joint has no coordinate to tie (files that weld a gripper shut
keep the element).  Pinocchio
(``buildModelFromUrdf(..., mimic=True)``) uses the same convention.

Armature
--------
URDF has no rotor inertia.  As an rbd extension, ``<dynamics armature="…">``
gives a one-degree-of-freedom joint's armature
(:meth:`~rbd.model.Model.set_joint_properties`); :func:`to_urdf` writes it
there, and other URDF readers ignore the attribute.

Security
--------
The XML is parsed with :mod:`defusedxml`, refusing any document type
declaration: a document that declares entities ("billion laughs", quadratic
blow-up), refers to external entities or to an external DTD raises
:class:`~rbd.errors.URDFError` at the declaration, before anything is
expanded or fetched (URDF defines no DTD, so nothing legitimate is lost).
Mesh and other file names in ``<visual>`` and ``<collision>`` are never
read.  Messages quote at most a short prefix of a document or file name.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

from .._robotfile import INERTIA_ATOL, INERTIA_RTOL
from ..errors import InputError
from ..model import Model
from ._build import INERTIA_POLICIES, MIMIC_MODES, ROOT_JOINT_NAME, _build
from ._read import POSITION_BOUND, _check_mimics, _parse_robot, _parse_xml, _read_source
from ._write import _robot_element

__all__ = ["load_urdf", "to_urdf", "write_urdf", "ROOT_JOINT_NAME", "POSITION_BOUND",
           "INERTIA_POLICIES", "INERTIA_RTOL", "INERTIA_ATOL", "MIMIC_MODES"]


def load_urdf(source: str | os.PathLike | bytes, floating_base: bool = False, *,
              inertia: str = "strict", package_dirs=None,
              collision_meshes: bool = True, mimic: str = "exact") -> Model:
    """Build a :class:`~rbd.model.Model` from a URDF file or XML string.

    Parameters
    ----------
    source : str, os.PathLike or bytes
        A path to a ``.urdf`` file, or the XML document itself (a string whose
        first non-blank character, after an optional byte order mark, is
        ``<``, or bytes).
    floating_base : bool, optional
        If True, the root link becomes a body on a :class:`~rbd.joints.Free`
        joint named ``"root_joint"`` (``q = [p; quaternion (x, y, z, w)]``, the
        root link frame's pose in the world).  If False (default), the root link
        *is* the world frame.
    inertia : {"strict", "repair", "ignore"}, optional
        What to do with a body whose inertia is not physical.  The inertia of a
        body is that of its link and of the links welded to it by fixed joints,
        merged (a non-physical link inertia is harmless when the merged one is
        physical); it must have principal moments ``λ ≥ 0`` obeying the
        triangle inequality ``λi + λj ≥ λk``, both up to a tolerance of
        ``INERTIA_RTOL`` (1e-9) times the largest principal moment (with an
        absolute floor of ``INERTIA_ATOL`` (1e-15) kg m² per kg).  The root
        link of a fixed base is the world: its inertia, and that of the links
        welded to it, is discarded and never checked.

        ``"strict"`` (default)
            raise :class:`~rbd.errors.URDFError` naming the link, the broken
            condition and its numbers.
        ``"repair"``
            replace each non-physical rotational inertia by the nearest physical
            one in the Frobenius norm: the same principal axes, mass and centre
            of mass, and the principal moments projected onto the cone
            ``λi + λj ≥ λk`` (for sorted moments ``a ≤ b ≤ c`` breaking only
            ``a + b ≥ c`` by ``d``: ``a`` and ``b`` rise by ``d/3``, ``c``
            falls by ``d/3``; negative moments end at zero or above).  One
            :class:`RuntimeWarning` lists every changed link with its moments
            before and after.
        ``"ignore"``
            keep the inertias as written, unchecked.  The dynamics of a model
            with a non-physical inertia may be meaningless (a mass matrix that
            is not positive definite, negative kinetic energy).

        A negative mass is an error under every policy: no nearby physical
        inertia is a reasonable guess for it.
    package_dirs : str or sequence of str, optional
        Where ``package://`` mesh paths are looked up, as Pinocchio's
        ``package_dirs`` (``package://pkg/path`` as ``<dir>/pkg/path``, then
        ``<dir>/path``), then in the URDF file's directory and each one
        above it; relative paths are taken from the URDF file's directory
        first.
    collision_meshes : bool, optional
        If True (default), each ``<collision>`` mesh whose file is found is
        read (STL, OBJ and the other formats of the optional ``trimesh``
        package) and collides through its convex hull, as MuJoCo's URDF
        reader makes it (:attr:`~rbd.model.geoms.Geom.hull`); a file that is
        not found, or ``trimesh`` missing, leaves that geom colliding with
        nothing (one warning names them), and a file that cannot be read as a
        solid is refused.  If False, no mesh file is opened (a file from an
        untrusted source; dynamics only) and mesh geoms collide with nothing.
    mimic : {"exact", "equality"}, optional
        How a ``<mimic>`` joint follows the joint it names.  ``"exact"``
        (default, as Pinocchio): it has no coordinate of its own
        (:meth:`~rbd.model.Model.add_mimic`).  ``"equality"`` (as MuJoCo's URDF
        reader): it keeps its coordinate and a
        :class:`~rbd.constraints.JointCoupling` holds it at ``multiplier q +
        offset``, exactly in :func:`rbd.constrained_dynamics` and as a soft
        row (MuJoCo's default ``solref``/``solimp``) in :func:`rbd.forward` and
        the contact step, which then runs compiled (a model with exact mimic
        joints takes the readable step).

    Returns
    -------
    Model
        One body per link on a non-fixed joint (body name = child link name,
        joint name = URDF joint name), numbered depth-first in the document
        order of the joints, parents before children.  ``model.name`` is the
        robot's name; gravity is the default ``(0, 0, -9.81)``; joint limits,
        damping and friction as in the file (see the module notes).

    Raises
    ------
    URDFError
        On malformed or unsafe XML (any DOCTYPE, hence entity declarations
        and external references), an unknown encoding, a xacro file (by its
        ``.xacro`` suffix or xacro elements: expand it first with ``xacro
        file.xacro > file.urdf``), a root element other than ``<robot>``, an
        unknown joint type, a joint naming an undefined link, a second root,
        a cycle, a duplicate link or joint name, a link with two parents, a
        bad number (not finite, wrong count), a negative mass, a non-physical
        inertia (``inertia="strict"``), a zero axis, a lower limit above the
        upper one, a negative speed or effort limit, or a bad ``<mimic>`` (of
        an unknown joint, itself, a joint other than revolute, continuous or
        prismatic, or another mimic joint; a multiplier or offset that is not
        a finite number).  The message names the
        offending link or joint.

    Warns
    -----
    RuntimeWarning
        Once for the inertias ``inertia="repair"`` changed, and once naming the
        bodies that have zero mass and zero inertia after merging (with
        nothing massive below them moving with their joint, the mass matrix is
        singular).

    Notes
    -----
    Fixed joints are merged (see the module notes): the child link's inertia
    is lumped into the body carrying its parent link, and the link becomes a
    frame of that body, usable wherever a body name is (``rbd.jacobian``).

    With ``floating_base=False`` the root link is the world: its
    ``<inertial>`` is ignored, and so are the inertias of links welded to it
    by fixed joints.  Those world-welded links are neither bodies nor frames
    (a :class:`~rbd.model.Model` attaches frames to bodies only, and their
    pose is constant); the joints below them hang from the world with the
    composed transforms.

    A ``continuous`` joint has one coordinate, its angle, where Pinocchio has
    two, ``(cos θ, sin θ)`` (see the module notes).  A ``<mimic>`` joint
    follows the joint it names and has no coordinate of its own
    (:meth:`~rbd.model.Model.add_mimic`); ``<dynamics armature>`` is read as
    the joint's armature (an rbd extension).  ``<visual>`` and
    ``<collision>`` become :attr:`~rbd.model.Model.geoms` (poses moved into
    the body carrying the link; see :mod:`rbd.urdf._geoms`); transmissions
    are ignored; only ``<collision>`` mesh files are opened.  A ``<limit>`` without
    ``lower`` or ``upper`` gives 0 for it, as the URDF specification (and
    Pinocchio) say: a revolute or prismatic joint with neither has the range
    ``[0, 0]``, a joint held at 0 once limits are enforced in a simulation.

    Examples
    --------
    A rod of 2 kg hinged about ``y`` at its top, its centre of mass 0.5 m below:

    >>> import rbd
    >>> xml = '''
    ... <robot name="pendulum">
    ...   <link name="base"/>
    ...   <link name="rod">
    ...     <inertial>
    ...       <origin xyz="0 0 -0.5"/>
    ...       <mass value="2.0"/>
    ...       <inertia ixx="0.17" iyy="0.17" izz="0.001" ixy="0" ixz="0" iyz="0"/>
    ...     </inertial>
    ...   </link>
    ...   <joint name="hinge" type="continuous">
    ...     <parent link="base"/>
    ...     <child link="rod"/>
    ...     <axis xyz="0 1 0"/>
    ...     <dynamics damping="0.1"/>
    ...   </joint>
    ... </robot>'''
    >>> model = rbd.load_urdf(xml)
    >>> model.body_names, model.joint_names, model.nq
    (['rod'], ['hinge'], 1)
    >>> round(float(rbd.crba(model, [0.0])[0, 0]), 12)  # I_yy + m (0.5)^2
    0.67
    >>> model.upper.tolist(), model.damping.tolist()
    ([inf], [0.1])
    """
    if mimic not in MIMIC_MODES:
        raise InputError(f"mimic must be one of {', '.join(map(repr, MIMIC_MODES))}, "
                         f"got {mimic!r}")
    if inertia not in INERTIA_POLICIES:
        raise InputError(f"inertia must be one of {', '.join(map(repr, INERTIA_POLICIES))}, "
                         f"got {inertia!r}")
    if isinstance(package_dirs, str | os.PathLike):
        package_dirs = [package_dirs]
    base = None
    if isinstance(source, str | os.PathLike) and not (
            isinstance(source, str) and source.lstrip().lstrip("\ufeff").lstrip().startswith("<")):
        base = os.path.dirname(os.path.abspath(os.fspath(source)))
    robot_name, links, joints, geoms = _parse_robot(_parse_xml(_read_source(source)), base,
                                                    list(package_dirs or ()), collision_meshes)
    _check_mimics(joints)
    if not links:
        return Model(name=robot_name)
    return _build(robot_name, links, joints, bool(floating_base), inertia, geoms, mimic)



def to_urdf(model: Model, *, floating_base: bool = False) -> str:
    """Write ``model`` as a URDF document (a string).

    Parameters
    ----------
    model : Model
        Its joints must be revolute, prismatic, fixed, planar, or free
        (written as a URDF ``floating`` joint, at the root or below it).
    floating_base : bool, optional
        If False (default), a link named ``"world"`` (made unique if a body or
        frame has that name) is the URDF root and every root body hangs from
        it.  If True, the model must have one root body on a free joint with
        an identity ``X_tree``; that body is the URDF root link and its free
        joint is left implicit, for ``load_urdf(..., floating_base=True)`` (the
        free joint then gets the name ``"root_joint"``).

    Returns
    -------
    str
        The URDF XML.  Numbers are written with Python's shortest round-trip
        representation, so reading the file back reproduces the model's
        transforms and inertias to rounding.

    Raises
    ------
    URDFError
        For a joint URDF cannot express (helical, universal, spherical,
        symbolic), naming the joint.

    Warns
    -----
    RuntimeWarning
        When a planar or free joint has a non-zero armature, which is not written.

    Notes
    -----
    Each body is a link with an ``<inertial>`` (mass, centre of mass, inertia
    about the centre of mass in body axes) and its joint; each attached frame
    is a link of zero mass on a fixed joint.  A revolute or prismatic joint
    gets a ``<limit>`` (which URDF requires) from ``model.lower``,
    ``model.upper``, ``model.velocity_limit`` and ``model.effort_limit``, an
    infinite limit written as ``±POSITION_BOUND``, a ``<dynamics>`` when its
    damping, friction or armature is not zero (``armature`` is an rbd
    extension, see the module notes), and a ``<mimic>`` when it mimics another
    joint (:attr:`~rbd.model.Model.mimic`); a revolute joint is always written as
    ``revolute``, so a ``continuous`` joint comes back as a revolute joint
    with bounds ``±POSITION_BOUND``, which the reader takes for no bounds.
    Gravity and the limits of planar and free joints are not part of URDF and
    are not written.

    ``load_urdf(to_urdf(model))`` has the same bodies, joints, frames and
    dynamics, with bodies renumbered depth-first (the same order when the
    model was built depth-first, as chains are).  Bodies on
    :class:`~rbd.joints.Fixed` joints come back merged into their parents.

    Examples
    --------
    >>> import rbd
    >>> model = rbd.models.double_pendulum()
    >>> again = rbd.load_urdf(rbd.to_urdf(model))
    >>> again.joint_names, round(again.total_mass, 12)
    (['joint1', 'joint2'], 2.0)
    """
    if not isinstance(model, Model):
        raise InputError(f"model must be an rbd.Model, got {type(model).__name__}")
    robot = _robot_element(model, bool(floating_base))
    ET.indent(robot)
    return '<?xml version="1.0"?>\n' + ET.tostring(robot, encoding="unicode") + "\n"


def write_urdf(model: Model, path: str | os.PathLike, *, floating_base: bool = False) -> None:
    """Write ``to_urdf(model, floating_base=floating_base)`` to the file ``path`` (UTF-8).

    Parameters
    ----------
    model : Model
    path : str or os.PathLike
        The file to create or overwrite.
    floating_base : bool, optional
        See :func:`to_urdf`.

    Raises
    ------
    URDFError
        For a joint URDF cannot express (see :func:`to_urdf`); nothing is written then.

    Examples
    --------
    >>> import os, tempfile, rbd
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "arm.urdf")
    ...     rbd.write_urdf(rbd.models.revolute_chain(3), path)
    ...     rbd.load_urdf(path).joint_names
    ['joint1', 'joint2', 'joint3']
    """
    text = to_urdf(model, floating_base=floating_base)
    with open(os.fspath(path), "w", encoding="utf-8") as fh:
        fh.write(text)
