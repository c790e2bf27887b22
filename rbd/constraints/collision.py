r"""Collision detection between geoms: filters, broad phase, narrow phase, contact parameters.

The stage follows MuJoCo's ``mj_collision`` (``engine_collision_driver.c``; "Computation"
chapter, *Collision detection* and *margin and gap*) so that an MJCF file gives MuJoCo's set:

1. **Filters** (:func:`body_pair_filtered`, :func:`bitmask_compatible`): two geoms are tested
   only if their bodies are not welded together, not both static, not parent and child
   (``filterparent``: the weld body of one is the weld parent of the other, neither the
   world), the body pair is not excluded (``<contact><exclude>``), and ``contype &
   conaffinity`` of one meets the other's.  Explicit pairs (``<contact><pair>``) bypass them.
2. **Broad phase** (:func:`broad_phase`): sweep and prune over the world-axis boxes of the
   non-plane geoms (the rotated local box cut by the bounding sphere, grown by ``margin +
   gap``: MuJoCo's ``makeAAMM``; a mesh's box is its hull's, :mod:`.collision_mesh`);
   planes, and meshes without a hull, pair with every geom.
   Survivors pass the bounding-sphere test (``mj_filterSphere``) with the pair's ``margin + gap``.
   The filters and the boxes live in :mod:`.collision_broad`.
3. **Narrow phase**: the routine of :data:`PAIR_FUNCTIONS` with ``margin + gap`` keeps a contact
   below it; it is *active* (``exclude`` False) below ``includemargin = margin`` (MuJoCo's
   semantics since 3.9; before, detection at ``margin`` and ``includemargin = margin - gap``).
4. **Parameters** (:func:`mix_parameters`, ``mj_contactParam``): the geom of higher
   ``priority`` gives condim, solref, solimp and friction; on a tie condim and friction are
   the maxima, solref and solimp mixed by ``solmix`` (solref's minimum in the direct form).

Contacts come in MuJoCo's order: body pairs by (lower, higher body index), explicit pairs of a
body pair first, then its geom pairs by geom index; geom 1 is the one of lower kind in the
order plane < sphere < capsule < ellipsoid < cylinder < box.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from ..errors import InputError, ModelError
from . import _backends
from . import collision_box as _box
from . import collision_convex as _convex
from . import collision_mesh as _mesh
from . import collision_primitive as _prim
from .collision_broad import (  # noqa: F401 (re-exported: filters and bounds)
    bitmask_compatible,
    body_pair_filtered,
    local_half_extents,
    mesh_world_aabb,
    sphere_filtered,
    world_aabb,
)
from .collision_convex import bounding_radius
from .collision_records import (  # noqa: F401 (re-exported: the stage's records and defaults)
    DEFAULT_FRICTION,
    DEFAULT_SOLIMP,
    DEFAULT_SOLREF,
    MIN_FRICTION,
    BodyTree,
    ContactPair,
    Contacts,
    warn_unsupported,
)
from .mujoco_model import disabled

#: Geom kinds in MuJoCo's ``mjtGeom`` order (the order decides which geom is geom 1).
KINDS = ("plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh")
KIND_CODE = {kind: code for code, kind in enumerate(KINDS)}

#: The pair routines, keyed by (kind 1, kind 2) with kind 1 before kind 2 in :data:`KINDS`.
#: MuJoCo's other convex pairs (ellipsoids except on a plane, cylinder with capsule, box or
#: cylinder) go through GJK/EPA (:mod:`.collision_convex`, compiled too); pairs with a
#: mesh through its convex hull (:mod:`.collision_mesh`, compiled too, not in this table).
PAIR_FUNCTIONS = {**_convex.PAIR_FUNCTIONS,
    ("plane", "sphere"): _prim.plane_sphere,
    ("plane", "capsule"): _prim.plane_capsule,
    ("plane", "ellipsoid"): _prim.plane_ellipsoid,
    ("plane", "cylinder"): _prim.plane_cylinder,
    ("plane", "box"): _prim.plane_box,
    ("sphere", "sphere"): _prim.sphere_sphere,
    ("sphere", "capsule"): _prim.sphere_capsule,
    ("sphere", "cylinder"): _prim.sphere_cylinder,
    ("sphere", "box"): _box.sphere_box,
    ("capsule", "capsule"): _prim.capsule_capsule,
    ("capsule", "box"): _box.capsule_box,
    ("box", "box"): _box.box_box,
}

#: Kinds whose world box the broad phase bounds from their size (meshes: from their hull;
#: planes: paired with every geom).
BOUNDED = ("sphere", "capsule", "ellipsoid", "cylinder", "box")
#: Pairs MuJoCo has no routine for at all (it never collides them).
NEVER = {("plane", "plane"), ("plane", "hfield"), ("hfield", "hfield")}

# ----------------------------------------------------------------------------- broad phase

def broad_phase(lower: np.ndarray, upper: np.ndarray, axis: int | None = None) -> list[tuple]:
    """Index pairs (i, j), i < j, whose boxes overlap: sweep and prune.

    The boxes are sorted by their lower bound along ``axis`` (default: the axis
    of largest spread of the box centres); a sweep keeps the boxes whose
    interval is open and tests the other two axes only against those.  The work
    is O(n log n + overlaps along the axis), not O(n²).
    """
    n = lower.shape[0]
    if n < 2:
        return []
    if axis is None:
        axis = int(np.argmax(np.ptp(0.5 * (lower + upper), axis=0)))
    others = [k for k in range(3) if k != axis]
    order = np.argsort(lower[:, axis], kind="stable")
    active: list[int] = []
    pairs = []
    for i in order:
        start = lower[i, axis]
        active = [j for j in active if upper[j, axis] >= start]
        for j in active:
            if all(lower[i, k] <= upper[j, k] and lower[j, k] <= upper[i, k] for k in others):
                pairs.append((min(i, j), max(i, j)))
        active.append(i)
    return pairs


# ----------------------------------------------------------------------------- parameters

def mix_parameters(geom1, geom2) -> tuple:
    """Contact parameters of a geom pair, as MuJoCo's ``mj_contactParam``.

    Returns
    -------
    condim : int
    friction : (5,) ndarray
        The 3 geom coefficients unpacked as (slide, slide, spin, roll, roll).
    solref : (2,) ndarray
    solimp : (5,) ndarray
    """
    ref1, ref2 = np.asarray(geom1.solref, float), np.asarray(geom2.solref, float)
    imp1, imp2 = np.asarray(geom1.solimp, float), np.asarray(geom2.solimp, float)
    fr1, fr2 = np.asarray(geom1.friction, float), np.asarray(geom2.friction, float)
    if geom1.priority != geom2.priority:
        top = geom1 if geom1.priority > geom2.priority else geom2
        condim = int(top.condim)
        solref, solimp = np.asarray(top.solref, float), np.asarray(top.solimp, float)
        fri = np.asarray(top.friction, float)
    else:
        condim = max(int(geom1.condim), int(geom2.condim))
        s1, s2 = geom1.solmix, geom2.solmix
        if s1 >= _prim.MINVAL and s2 >= _prim.MINVAL:
            mix = s1 / (s1 + s2)
        elif s1 < _prim.MINVAL and s2 < _prim.MINVAL:
            mix = 0.5
        else:
            mix = 0.0 if s1 < _prim.MINVAL else 1.0
        if ref1[0] > 0 and ref2[0] > 0:
            solref = mix * ref1 + (1 - mix) * ref2
        else:                                 # direct (negative) reference: the stiffer
            solref = np.minimum(ref1, ref2)
        solimp = mix * imp1 + (1 - mix) * imp2
        fri = np.maximum(fr1, fr2)
    friction = np.array([fri[0], fri[0], fri[1], fri[2], fri[2]])
    return condim, friction, solref, solimp


# ----------------------------------------------------------------------------- the stage

def _check_poses(geoms, poses) -> np.ndarray:
    poses = np.asarray(poses, dtype=float)
    if poses.shape != (len(geoms), 4, 4):
        raise InputError(f"poses: expected shape ({len(geoms)}, 4, 4) (one world pose per geom), "
                         f"got {poses.shape}")
    if not np.all(np.isfinite(poses)):
        raise InputError("poses: non-finite value")
    return poses


def _live(geoms) -> list[int]:
    """Geoms that take part in automatic pairs: ``collision`` set and a non-zero bitmask."""
    return [i for i, g in enumerate(geoms) if getattr(g, "collision", True)
            and (g.contype or g.conaffinity)]


def _auto_key(i, j, geoms, body, bodies, weld, excluded, explicit, filterparent):
    """MuJoCo's sort key ``(body, body, 1, geom, geom)`` of automatic pair (i, j), or None
    when a q-independent filter discards it (bodies, ``<exclude>``, explicit pair, bitmask)."""
    bi, bj = body[i], body[j]
    if body_pair_filtered(bi, bj, weld, bodies.parent, bodies.ndof, filterparent):
        return None
    if (min(bi, bj), max(bi, bj)) in excluded or frozenset((i, j)) in explicit:
        return None
    if not bitmask_compatible(geoms[i], geoms[j]):
        return None
    lo, hi = (i, j) if (bi, i) < (bj, j) else (j, i)
    return (body[lo], body[hi], 1, lo, hi)


def _candidates(geoms, pos, mat, body, bodies, excluded, explicit, filterparent):
    """Automatic geom pairs that pass the filters and the broad phase, with MuJoCo's sort key."""
    live = _live(geoms)
    solids = [i for i in live if geoms[i].kind in BOUNDED
              or getattr(geoms[i], "hull", None) is not None]           # meshes: their hull
    others = [i for i in live if i not in solids]
    boxes = [world_aabb(g.kind, g.size, pos[i], mat[i], g.margin + g.gap) if g.kind != "mesh"
             else mesh_world_aabb(g.hull, *_mesh.placed(g, pos[i], mat[i])[:2], g.margin + g.gap)
             for i, g in ((i, geoms[i]) for i in solids)]
    lower = np.array([b[0] for b in boxes]).reshape(-1, 3)
    upper = np.array([b[1] for b in boxes]).reshape(-1, 3)
    found = [(solids[a], solids[b]) for a, b in broad_phase(lower, upper)]
    found += [(o, s) for o in others for s in solids]          # planes: no box
    found += [(o, p) for k, o in enumerate(others) for p in others[k + 1:]]
    weld, keys = bodies.weld, []
    for i, j in found:
        key = _auto_key(i, j, geoms, body, bodies, weld, excluded, explicit, filterparent)
        if key is not None:
            keys.append((key, key[3], key[4], None))
    return keys


def _explicit_keys(pairs, body) -> list[tuple]:
    """Explicit pairs with MuJoCo's sort key ``(body, body, 0, k, 0)``: first in a body pair."""
    keys = []
    for k, p in enumerate(pairs):
        b1, b2 = body[p.geom1], body[p.geom2]
        keys.append(((min(b1, b2), max(b1, b2), 0, k, 0), p.geom1, p.geom2, p))
    return keys


def _resolve(geoms, bodies, pairs, excludes):
    """Checked inputs of :func:`collide`: the body tree, each geom's body index, the excluded
    body pairs (indices) and the explicit geom pairs (frozensets)."""
    bodies = bodies or BodyTree.free([g.body for g in geoms])
    index = {name: b for b, name in enumerate(bodies.names)}
    for g in geoms:
        if g.body not in index:
            raise InputError(f"geoms: geom {getattr(g, 'name', '?')!r} is on body {g.body!r}, "
                             "which is not in bodies.names")
    for g in geoms:
        if g.kind not in KIND_CODE:
            raise InputError(f"geoms: geom {getattr(g, 'name', '?')!r} has kind {g.kind!r}; "
                             f"expected one of {', '.join(KINDS)}")
    for a, b in excludes:
        if a not in index or b not in index:
            raise InputError(f"excludes: body pair ({a!r}, {b!r}) names a body not in bodies.names")
    for p in pairs:
        if not (0 <= p.geom1 < len(geoms) and 0 <= p.geom2 < len(geoms)):
            raise InputError(f"pairs: geom indices ({p.geom1}, {p.geom2}) outside "
                             f"0..{len(geoms) - 1}")
    body = [index[g.body] for g in geoms]
    excluded = {tuple(sorted((index[a], index[b]))) for a, b in excludes}
    explicit = {frozenset((p.geom1, p.geom2)) for p in pairs}
    return bodies, body, excluded, explicit


def candidate_pairs(geoms: Sequence, bodies: BodyTree | None = None,
                    pairs: Sequence[ContactPair] = (), excludes: Sequence[tuple] = (),
                    filterparent: bool = True) -> list[tuple]:
    """Every geom pair :func:`collide` may test, whatever the poses: the static pair table.

    The q-independent part of ``mj_collision``: automatic pairs of live geoms that
    pass the body, ``<exclude>``, explicit-pair and bitmask filters, and the explicit
    pairs, in MuJoCo's order (module notes), each with geom 1 first in kind order
    (:func:`ordered`).  Arguments as :func:`collide`.

    Returns
    -------
    list of (g1, g2, pair)
        ``pair`` the :class:`ContactPair` of an explicit pair, else None.
    """
    bodies, body, excluded, explicit = _resolve(geoms, bodies, pairs, excludes)
    live, weld, keys = _live(geoms), bodies.weld, []
    for a, i in enumerate(live):
        for j in live[a + 1:]:
            key = _auto_key(i, j, geoms, body, bodies, weld, excluded, explicit, filterparent)
            if key is not None:
                keys.append((key, key[3], key[4], None))
    keys += _explicit_keys(pairs, body)
    keys.sort(key=lambda item: item[0])
    return [(*ordered(geoms, g1, g2), pair) for _, g1, g2, pair in keys]


def ordered(geoms, g1: int, g2: int) -> tuple[int, int]:
    """The pair as MuJoCo passes it to a routine: geom 1 of the lower kind (:data:`KINDS`)."""
    if KIND_CODE[geoms[g1].kind] > KIND_CODE[geoms[g2].kind]:
        return g2, g1
    return g1, g2


def pair_parameters(a, b, pair=None) -> tuple:
    """Contact parameters of geoms ``a``, ``b`` (in routine order) or of an explicit ``pair``.

    Returns
    -------
    margin, gap : float
        Of the pair (an explicit pair's own, else the geoms' sums).
    condim, friction, solref, solimp, solreffriction
        As :func:`mix_parameters` (friction not yet raised to :data:`MIN_FRICTION`);
        ``solreffriction`` is an explicit pair's, else (0, 0).
    """
    if pair:
        return (pair.margin, pair.gap, pair.condim, np.asarray(pair.friction, float),
                np.asarray(pair.solref, float), np.asarray(pair.solimp, float),
                np.asarray(pair.solreffriction, float))
    return (a.margin + b.margin, a.gap + b.gap, *mix_parameters(a, b), np.zeros(2))


def collide(geoms: Sequence, poses, bodies: BodyTree | None = None,
            pairs: Sequence[ContactPair] = (), excludes: Sequence[tuple] = (),
            filterparent: bool = True, backend: str | None = None,
            multiccd: bool = True) -> Contacts:
    """Contacts between geoms at given world poses, as MuJoCo's ``mj_collision``.

    Parameters
    ----------
    geoms : sequence of geom records
        Each with ``kind``, ``size`` (3,) in MuJoCo's convention, ``body`` (a key
        of ``bodies.names``; None is the world), ``contype``, ``conaffinity``,
        ``condim``, ``friction`` (3,), ``solref`` (2,), ``solimp`` (5,),
        ``solmix``, ``margin``, ``gap``, ``priority`` and optionally ``collision``
        (False: never collides), as :class:`rbd.model.geoms.Geom`.
    poses : (ngeoms, 4, 4) array_like
        World pose of each geom.
    bodies : BodyTree, optional
        Body order, parents and degrees of freedom (weld and parent filters);
        default :meth:`BodyTree.free`: every body its own weld, no parent filter.
    pairs : sequence
        Explicit pairs (:class:`~rbd.constraints.collision_records.ContactPair`): tested
        whatever the filters, with their own parameters.
    excludes : sequence of (body key, body key)
        Body pairs never tested automatically (``<contact><exclude>``).
    filterparent : bool
        MuJoCo's parent–child filter (its ``filterparent`` disable flag off).
    backend : {None, "kernel", "reference"}, optional
        The pair routines' rendering: the compiled twins
        (``rbd/_kernels/collision_primitive.pyx``; the default when the kernels are
        built) or the readable modules.
    multiccd : bool
        MuJoCo's multi-contact of convex pairs (its ``multiccd`` disable flag off).
        False: one GJK/EPA contact per convex pair (:mod:`.collision_convex`,
        :mod:`.collision_mesh`).

    Returns
    -------
    Contacts
        In MuJoCo's order (see the module notes).  A candidate pair without a routine
        (:data:`PAIR_FUNCTIONS`) is listed in ``unsupported`` with a warning, never silently
        dropped.
    """
    poses = _check_poses(geoms, poses)
    bodies, body, excluded, explicit = _resolve(geoms, bodies, pairs, excludes)
    pos, mat = poses[:, :3, 3], poses[:, :3, :3]
    keys = _candidates(geoms, pos, mat, body, bodies, excluded, explicit, filterparent)
    keys += _explicit_keys(pairs, body)
    keys.sort(key=lambda item: item[0])
    return _narrow_phase(geoms, pos, mat, [item[1:] for item in keys],
                         _backends.pair_functions(PAIR_FUNCTIONS, backend), multiccd)


def _narrow_phase(geoms, pos, mat, candidates, functions=PAIR_FUNCTIONS,
                  multiccd: bool = True) -> Contacts:
    """Run the pair routines on ordered candidates ``(g1, g2, pair or None)``, set parameters."""
    rows, unsupported = [], []
    for g1, g2, pair in candidates:
        g1, g2 = ordered(geoms, g1, g2)
        a, b = geoms[g1], geoms[g2]
        margin, gap, *params = pair_parameters(a, b, pair)
        # mesh pairs, and every GJK pair without multi-CCD: collision_mesh.mesh_pair
        general = (_mesh.routed(a, b)
                   or not multiccd and (a.kind, b.kind) in _convex.PAIR_FUNCTIONS)
        if general:                                     # the mesh frame, the hull's radius
            placed1, placed2 = _mesh.placed(a, pos[g1], mat[g1]), _mesh.placed(b, pos[g2], mat[g2])
        else:
            placed1 = (pos[g1], mat[g1], np.asarray(a.size, float), None)
            placed2 = (pos[g2], mat[g2], np.asarray(b.size, float), None)
        if sphere_filtered(a.kind, a.size, placed1[0], placed1[1], b.kind, b.size, placed2[0],
                           margin + gap, (placed1[3], placed2[3]) if general else None):
            continue
        function = functions.get((a.kind, b.kind))
        if function is None and not general:
            if (a.kind, b.kind) not in NEVER:
                unsupported.append((g1, g2))
            continue
        found = _prim.PairContacts(*(
            _mesh.mesh_pair(a.kind, b.kind, *placed1, *placed2, margin + gap, multiccd)
            if general
            else function(*placed1[:3], *placed2[:3], margin + gap)))
        if not len(found.dist):
            continue
        rows.append((found, g1, g2, margin, params))
    warn_unsupported(geoms, unsupported, stacklevel=4)
    return _assemble(rows, tuple(unsupported))


def _assemble(rows, unsupported) -> Contacts:
    """Stack the pairs' contacts and repeat each pair's parameters over its contacts."""
    if not rows:
        empty = np.zeros(0)
        return Contacts(np.zeros((0, 3)), np.zeros((0, 3, 3)), empty, np.zeros((0, 2), int),
                        np.zeros(0, int), np.zeros((0, 5)), np.zeros((0, 2)), np.zeros((0, 2)),
                        np.zeros((0, 5)), empty, np.zeros(0, bool), unsupported)
    counts = [len(found.dist) for found, *_ in rows]

    def per_pair(values, dtype=float):
        return np.repeat(np.array(values, dtype=dtype), counts, axis=0)

    dist = np.concatenate([found.dist for found, *_ in rows])
    margin = per_pair([r[3] for r in rows])
    params = [r[4] for r in rows]
    return Contacts(
        pos=np.concatenate([found.pos for found, *_ in rows]),
        frame=np.concatenate([found.frame for found, *_ in rows]),
        dist=dist,
        geom=per_pair([(r[1], r[2]) for r in rows], int),
        condim=per_pair([p[0] for p in params], int),
        friction=np.maximum(per_pair([p[1] for p in params]), MIN_FRICTION),
        solref=per_pair([p[2] for p in params]),
        solreffriction=per_pair([p[4] for p in params]),
        solimp=per_pair([p[3] for p in params]),
        includemargin=margin,
        exclude=dist >= margin,
        unsupported=unsupported,
    )


def body_tree(model) -> BodyTree:
    """The :class:`BodyTree` of an rbd model: world first, then ``model.body_names``
    (the model keeps it)."""
    return model._derived("collision_body_tree", lambda: _body_tree(model))


def _body_tree(model) -> BodyTree:
    """:func:`body_tree`, computed."""
    names = (None, *model.body_names)
    parent = [-1, *(p + 1 for p in model.parent)]
    ndof = [0, *(body.joint.nv for body in model.bodies)]
    # An MJCF body with several joints becomes a chain "name/joint1", ... , "name":
    # for the filters, "name" is one body with all the chain's dofs and the chain's parent.
    for b in range(1, len(names)):
        while parent[b] > 0 and str(names[parent[b]]).startswith(f"{names[b]}/"):
            ndof[b] += ndof[parent[b]]
            parent[b] = parent[parent[b]]
    return BodyTree(names, tuple(parent), tuple(ndof))


def collide_model(model, q, backend: str | None = None,
                  body_poses=None) -> Contacts | list[Contacts]:
    """Contacts of a model's collision geoms at configuration ``q`` (``rbd.collide``).

    Reads ``model.geoms`` and their world poses (``rbd.geom_poses``), the body
    tree for the weld and parent filters, and ``model.contact_pairs`` /
    ``model.contact_excludes`` when the model carries them.  MuJoCo's disable flags
    (``model.mujoco_options["disable"]``): ``contact`` or ``constraint`` give no
    contacts, ``filterparent`` turns the parent–child filter off, ``multiccd`` gives one
    contact per convex pair.

    Parameters
    ----------
    model : rbd.Model
    q : (nq,) or (N, nq) array_like
        One configuration, or a stack of them.
    backend : {None, "kernel", "reference"}, optional
        ``"kernel"`` (the default when the kernels are built): the compiled stage
        (``rbd/_kernels/collision.pyx``, its static pair table from
        :func:`compiled_collision`), the same contacts in the same order;
        ``"reference"``: :func:`collide` on the geom poses.  A model with mimic
        joints, or one that does not compile, takes :func:`collide` on either.
    body_poses : (nbodies, 4, 4) array_like, optional
        :func:`rbd.forward_kinematics` at ``q`` (one configuration), when the caller
        has it already.

    Returns
    -------
    Contacts, or a list of N Contacts for stacked configurations
        See :func:`collide`; contact counts differ from one state to the next.

    Raises
    ------
    rbd.ModelError
        If the model has no geometry description (``model.geoms``).
    """
    geoms = getattr(model, "geoms", None)
    if geoms is None:
        raise ModelError("collide: this model has no geoms (model.geoms); load it from an MJCF "
                         "or URDF file with collision geometry, or add geoms to it")
    if disabled(model, "contact") or disabled(model, "constraint"):
        geoms = ()                                          # mj_collision: no contacts
    compiled = (_compiled_kinematics(model, backend)
                if geoms and not reference_only(model) else None)
    if compiled is not None:
        T = (compiled.forward_kinematics(q) if body_poses is None or np.ndim(q) == 2
             else np.asarray(body_poses, dtype=float))
        found = compiled_collision(model).collide(T[..., :3, :3], T[..., :3, 3])
        found = [Contacts(*f) for f in (found if T.ndim == 4 else [found])]
        return found[0] if T.ndim == 3 else found
    from ..algorithms.kinematics import geom_poses

    if np.ndim(q) == 2:
        return [collide_model(model, row, backend) for row in np.asarray(q)]
    poses = (geom_poses(model, q, backend=backend, body_poses=body_poses) if len(geoms)
             else np.zeros((0, 4, 4)))
    return collide(geoms, poses, body_tree(model), getattr(model, "contact_pairs", ()),
                   getattr(model, "contact_excludes", ()),
                   filterparent=not disabled(model, "filterparent"), backend=backend,
                   multiccd=not disabled(model, "multiccd"))


#: The kind pairs with a readable primitive routine.
_ROUTINE_PAIRS = frozenset(PAIR_FUNCTIONS)


def reference_only(model) -> bool:
    """True when a candidate pair has a readable routine only (``_backends.readable_only``).
    Every mesh pair and every GJK pair, with or without ``multiccd``, has its compiled twin
    (``rbd/_kernels/collision_mesh.pyx``, ``collision_convex.pyx``, ``collision_multi.pyx``,
    ``collision_multiccd.pyx``)."""
    readable = _backends.readable_only(KINDS, _ROUTINE_PAIRS)
    geoms = model.geoms
    return model._derived(("collision_reference_only", readable), lambda: any(
        (geoms[i].kind, geoms[j].kind) in readable
        for i, j, _ in candidate_pairs(geoms, body_tree(model),
                                       getattr(model, "contact_pairs", ()),
                                       getattr(model, "contact_excludes", ()))))


def _compiled_kinematics(model, backend):
    """The compiled model whose world poses feed the compiled collision stage, or None
    (reference backend, kernels not built, mimic joints, a model that cannot compile)."""
    global _CompiledModel
    if not hasattr(model, "_derived"):
        return None
    if backend in (None, "kernel") and type(model._derived("kernel")) is _CompiledModel:
        return model._derived("kernel")                 # the hot path: compiled before
    from ..algorithms._dispatch import _kernel

    kernel = _kernel(model, backend)
    if kernel is None:
        return None
    from .._kernels._model import CompiledModel

    _CompiledModel = CompiledModel
    return kernel if isinstance(kernel, CompiledModel) else None


#: ``rbd._kernels._model.CompiledModel`` once a compiled model has been seen.
_CompiledModel = None


def static_table(geoms: Sequence, bodies: BodyTree | None = None,
                 pairs: Sequence[ContactPair] = (), excludes: Sequence[tuple] = (),
                 filterparent: bool = True) -> dict:
    """The arguments of ``rbd._kernels.collision.CollisionModel``: per geom its kind code, body
    (row ``b - 1`` of the body poses for body ``b`` of ``bodies.names``; -1 the world), size,
    ``pose`` (4, 4) in its body, margin, gap, bounding radius and local half-sizes; the pairs
    of :func:`candidate_pairs` (less those MuJoCo never collides) with :func:`pair_parameters`.

    Raises
    ------
    rbd.InputError
        As :func:`collide`, and for a geom without a finite (4, 4) pose.
    """
    table = [(g1, g2, pair) for g1, g2, pair in
             candidate_pairs(geoms, bodies, pairs, excludes, filterparent)
             if (geoms[g1].kind, geoms[g2].kind) not in NEVER]
    bodies = bodies or BodyTree.free([g.body for g in geoms])
    return {**_geom_arrays(geoms, bodies), **_pair_arrays(geoms, table)}


def _boxed(geom) -> bool:
    """Whether the broad phase boxes the geom: of a :data:`BOUNDED` kind, or a hulled mesh."""
    return geom.kind in BOUNDED or _mesh.hulled(geom)


def _geom_arrays(geoms, bodies) -> dict:
    index = {name: b for b, name in enumerate(bodies.names)}
    poses = [np.asarray(getattr(g, "pose", None), dtype=float) for g in geoms]
    for k, pose in enumerate(poses):
        if pose.shape != (4, 4) or not np.all(np.isfinite(pose)):
            raise InputError(f"geoms: geom {getattr(geoms[k], 'name', k)!r} has no finite "
                             "(4, 4) pose")
    return {
        "kind": np.array([KIND_CODE[g.kind] for g in geoms], dtype=np.intp),
        "body": np.array([index[g.body] - 1 for g in geoms], dtype=np.intp),
        "bounded": np.array([_boxed(g) for g in geoms], dtype=bool),
        "size": np.array([np.resize(np.asarray(g.size, float), 3) for g in geoms]).reshape(-1, 3),
        "pose": np.array(poses).reshape(-1, 4, 4),
        "margin": np.array([g.margin for g in geoms], dtype=float),
        "gap": np.array([g.gap for g in geoms], dtype=float),
        "rbound": np.array([g.hull.rbound if _mesh.hulled(g) else bounding_radius(g.kind, g.size)
                            for g in geoms]),
        "half": np.array([local_half_extents(g.kind, g.size) if g.kind in BOUNDED
                          else np.zeros(3) for g in geoms]).reshape(-1, 3),
        "hull": [g.hull if _mesh.hulled(g) else None for g in geoms],
    }


def _pair_arrays(geoms, table) -> dict:
    rows = [pair_parameters(geoms[g1], geoms[g2], pair) for g1, g2, pair in table]

    def column(k, width=None, dtype=float):
        values = np.array([row[k] for row in rows], dtype=dtype)
        return values.reshape(-1) if width is None else values.reshape(-1, width)

    return {
        "pair_geom": np.array([(g1, g2) for g1, g2, _ in table], dtype=np.intp).reshape(-1, 2),
        "pair_boxed": np.array([pair is None and _boxed(geoms[g1]) and _boxed(geoms[g2])
                                for g1, g2, pair in table], dtype=bool),
        "pair_margin": column(0), "pair_gap": column(1), "pair_condim": column(2, dtype=np.intp),
        "pair_friction": np.maximum(column(3, 5), MIN_FRICTION),
        "pair_solref": column(4, 2), "pair_solimp": column(5, 5),
        "pair_solreffriction": column(6, 2),
    }


def compiled_collision(model):
    """The compiled static pair table of a model (``rbd._kernels.collision.CollisionModel``),
    built from :func:`static_table` on first use and kept in the model's cache under the
    identity of the geoms and pairs and the excludes it was built from, so that a geom added
    later gets a new table (a tree change clears the cache).  Pairs without a primitive
    routine: warned once, when built."""
    geoms = model.geoms
    pairs = tuple(getattr(model, "contact_pairs", ()))
    excludes = tuple(map(tuple, getattr(model, "contact_excludes", ())))
    filterparent = not disabled(model, "filterparent")
    multiccd = not disabled(model, "multiccd")
    key = ("collision", tuple(map(id, geoms)), tuple(map(id, pairs)), excludes, filterparent,
           multiccd)
    return model._derived(key, lambda: _build_table(model, geoms, pairs, excludes,
                                                    filterparent, multiccd))[-1]


def _build_table(model, geoms, pairs, excludes, filterparent, multiccd=True) -> tuple:
    """(geoms, pairs, CollisionModel): the records held so that their ids stay theirs."""
    from .._kernels.collision import CollisionModel

    arrays = static_table(geoms, body_tree(model), pairs, excludes, filterparent)
    compiled = CollisionModel(**arrays, multiccd=multiccd)
    if compiled.nunsupported:
        kinds = sorted({(geoms[i].kind, geoms[j].kind) for i, j in arrays["pair_geom"]
                        if (geoms[i].kind, geoms[j].kind) not in PAIR_FUNCTIONS
                        and not _mesh.routed(geoms[i], geoms[j])})
        warnings.warn(f"collide: no primitive routine for geom kinds {kinds}; "
                      f"{compiled.nunsupported} candidate pair(s) never tested (see "
                      "Contacts.unsupported)", stacklevel=4)
    return geoms, pairs, compiled
