"""The path of an MJCF ``<tendon><spatial>``: sites, wrapping geoms and pulleys.

Each element of the path becomes one tuple, in the file's order:

* ``("site", body, point)``: the site's rbd body (None for the world, a static body or
  a site of ``<worldbody>``) and its position in that body's coordinates (world
  coordinates for the world);
* ``("geom", index, side)``: a sphere or cylinder of ``model.geoms`` to wrap around,
  ``side`` its ``sidesite`` as ``(body, point)`` or None;
* ``("pulley", divisor)``.

The path is checked as MuJoCo's compiler checks it (``mjCTendon::Compile``): at least
two elements, a geom between two sites, no pulley last or after another, a site next to
something other than a pulley and not repeated, a geom of type sphere or cylinder, a
positive divisor (MuJoCo takes a zero one, which makes the length infinite).
:mod:`rbd.constraints.tendon_spatial` turns it into the tendon's length and moment.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from .._robotfile import quote
from ..errors import MJCFError
from ..spatial import plux_parts
from ._equality import _Resolver
from ._options import _Context
from ._xml import _scalar


def path_reader(root: ET.Element, ctx: _Context, model):
    """The function ``(element, where) -> path`` reading a ``<spatial>``'s children."""
    resolver = _Resolver(model, ctx, root)
    geoms = {g.name: i for i, g in enumerate(model.geoms)}

    def site(name, where):
        if name is None:
            raise MJCFError(f"{where}: missing attribute 'site'")
        frame = resolver.attachment(name, where, site=True)
        if frame is None:                   # fixed to the world
            return None, resolver.world_pose(name, site=True)[:3, 3].copy()
        record = model._frames[frame]
        return model.body_names[record.body], plux_parts(record.X)[1].copy()

    def read(elem: ET.Element, where: str) -> tuple:
        path = []
        for k, e in enumerate(elem):
            here = f"<{e.tag} #{k}> of {where}"
            if e.tag == "site":
                path.append(("site", *site(e.get("site"), here)))
            elif e.tag == "geom":
                name = e.get("geom")
                if name not in geoms:
                    raise MJCFError(f"{here}: unknown geom {quote(name)}")
                kind = model.geoms[geoms[name]].kind
                if kind not in ("sphere", "cylinder"):
                    raise MJCFError(f"{here}: geom {quote(name)} is a {kind}; a tendon wraps "
                                    "only spheres and cylinders")
                side = e.get("sidesite")
                path.append(("geom", geoms[name], None if side is None else site(side, here)))
            elif e.tag == "pulley":
                divisor = _scalar(e.attrib, "divisor", here, None)
                if divisor is None or not divisor > 0:
                    raise MJCFError(f"{here}: divisor must be positive, got {divisor}")
                path.append(("pulley", divisor))
        _check(path, [e.get("site") for e in elem], where)
        return tuple(path)

    return read


def _check(path: list, site_names: list, where: str) -> None:
    """MuJoCo's rules for a spatial path (``mjCTendon::Compile``)."""
    kinds = [p[0] for p in path]
    n = len(kinds)
    if n < 2:
        raise MJCFError(f"{where}: a spatial tendon needs at least two path elements, got {n}")
    for i, kind in enumerate(kinds):
        before = kinds[i - 1] if i > 0 else None
        after = kinds[i + 1] if i < n - 1 else None
        if kind == "pulley" and (before == "pulley" or after is None):
            what = "follows another pulley" if before == "pulley" else "ends the path"
            raise MJCFError(f"{where}: pulley #{i} {what}")
        if kind == "site":
            if before in (None, "pulley") and after in (None, "pulley"):
                raise MJCFError(f"{where}: site #{i} needs a neighbour that is not a pulley")
            if after == "site" and site_names[i] == site_names[i + 1]:
                raise MJCFError(f"{where}: site {quote(site_names[i])} is repeated")
        if kind == "geom" and (before != "site" or after != "site"):
            raise MJCFError(f"{where}: geom #{i} must be between two sites")

