"""Reading an MJCF document: the source, ``<include>`` files, attribute values."""

from __future__ import annotations

import os
import stat
import xml.etree.ElementTree as ET

import numpy as np
from defusedxml import DefusedXmlException

from .._robotfile import quote, safe_fromstring
from ..errors import MJCFError

_MAX_INCLUDES = 1000  # included files per model (a guard against exponential include trees)


def _read_file(path) -> bytes:
    try:
        if not stat.S_ISREG(os.stat(os.fspath(path)).st_mode):
            raise MJCFError(f"cannot read MJCF file {quote(path)}: not a regular file (a "
                            "directory, FIFO or device would be read forever or not at all)")
        with open(os.fspath(path), "rb") as fh:
            return fh.read()
    except (OSError, ValueError) as exc:  # ValueError: a NUL character in the name
        reason = getattr(exc, "strerror", None) or str(exc)
        raise MJCFError(f"cannot read MJCF file {quote(path)}: {reason}") from None


def _is_xml_text(source) -> bool:
    return isinstance(source, bytes | bytearray) or (
        isinstance(source, str) and source.lstrip().lstrip("\ufeff").lstrip().startswith("<"))


def _parse_xml(text, what: str = "the document") -> ET.Element:
    """Parse with document type declarations (hence entities and external references) refused."""
    if isinstance(text, str):
        text = text.lstrip().lstrip("\ufeff").lstrip()
    try:
        return safe_fromstring(text)
    except DefusedXmlException as exc:
        raise MJCFError(f"{what}: unsafe XML refused ({type(exc).__name__}): an MJCF file may "
                        "not have a DOCTYPE, declare entities or refer to external resources"
                        ) from None
    except ET.ParseError as exc:
        raise MJCFError(f"{what}: malformed XML: {exc}") from None
    except (LookupError, ValueError) as exc:
        raise MJCFError(f"{what}: cannot parse the XML ({quote(exc)}); save it as UTF-8"
                        ) from None


def _expand_includes(top: ET.Element, directory: str | None, stack: tuple, count: list) -> None:
    """Replace every ``<include file>`` below ``top`` by the children of the file's root.

    As MuJoCo: the path is relative to the main model's directory (``../`` may leave
    it), the included root is ``<mujoco>`` or ``<mujocoinclude>``.  The walk keeps
    its own stack, so any nesting depth is read without recursion.
    """
    pending = [(top, stack)]
    while pending:
        elem, chain = pending.pop()
        queue, kept, k = [(child, chain) for child in elem], [], 0
        while k < len(queue):
            child, within = queue[k]
            k += 1
            if child.tag == "include":
                root, path = _included(child, directory, within, count)
                queue[k:k] = [(grandchild, (*within, path)) for grandchild in root]
                continue
            kept.append(child)
            pending.append((child, within))
        elem[:] = kept


def _included(child: ET.Element, directory: str | None, stack: tuple, count: list):
    """The parsed root of one ``<include>``'s file and the file's real path."""
    name = child.get("file")
    if not name:
        raise MJCFError("<include> has no 'file' attribute")
    if directory is None:
        raise MJCFError(f"<include file={quote(name)}>: a model given as a string has no "
                        "directory; pass directory= to load_mjcf or load the file by path")
    path = os.path.realpath(os.path.join(directory, name))
    if path in stack:
        chain = " -> ".join(quote(os.path.basename(p)) for p in (*stack, path))
        raise MJCFError(f"<include file={quote(name)}> closes an include cycle: {chain}")
    count[0] += 1
    if count[0] > _MAX_INCLUDES:
        raise MJCFError(f"more than {_MAX_INCLUDES} <include> elements: refused")
    root = _parse_xml(_read_file(path), f"included file {quote(name)}")
    if root.tag not in ("mujoco", "mujocoinclude"):
        raise MJCFError(f"included file {quote(name)}: root element is <{root.tag}>, "
                        "expected <mujoco> or <mujocoinclude>")
    return root, path


def _document(source, directory) -> tuple[ET.Element, str | None]:
    """The root ``<mujoco>`` element of ``source``, includes expanded, and its directory."""
    if _is_xml_text(source):
        text, main = (bytes(source) if not isinstance(source, str) else source), None
    elif isinstance(source, str | os.PathLike):
        text, main = _read_file(source), os.path.realpath(os.fspath(source))
        directory = directory if directory is not None else os.path.dirname(main)
    else:
        raise MJCFError("expected an MJCF file path or an XML string, got "
                        f"{type(source).__name__}")
    root = _parse_xml(text)
    if root.tag != "mujoco":
        raise MJCFError(f"the document's root element is <{root.tag}>, expected <mujoco>")
    if directory is not None:
        directory = os.path.realpath(os.fspath(directory))
    _expand_includes(root, directory, (main,) if main else (), [0])
    return root, directory


# --- attributes ------------------------------------------------------------------------------
def _numbers(value: str, where: str, attr: str, count: int | tuple[int, int]) -> np.ndarray:
    """Parse ``count`` finite numbers (an exact count, or a ``(min, max)`` range)."""
    try:
        values = np.array([float(x) for x in value.split()])
    except ValueError:
        raise MJCFError(f"{where}: {attr}={quote(value)} is not a list of numbers") from None
    low, high = count if isinstance(count, tuple) else (count, count)
    if not low <= values.size <= high:
        expected = f"{low}" if low == high else f"{low} to {high}"
        raise MJCFError(f"{where}: {attr}={quote(value)} must hold {expected} numbers, "
                        f"got {values.size}")
    if not np.all(np.isfinite(values)):
        raise MJCFError(f"{where}: {attr}={quote(value)} has a non-finite value")
    return values


def _vector(attrs: dict, key: str, count: int, where: str, default=None) -> np.ndarray:
    if key not in attrs:
        if default is None:
            raise MJCFError(f"{where}: missing attribute {key!r}")
        return np.array(default, dtype=float)
    return _numbers(attrs[key], where, key, count)


def _scalar(attrs: dict, key: str, where: str, default: float) -> float:
    return float(_vector(attrs, key, 1, where, [default])[0])


def _flag(attrs: dict, key: str, where: str, default: str, choices=("true", "false")) -> str:
    value = attrs.get(key, default).strip().lower()
    if value not in choices:
        raise MJCFError(f"{where}: {key}={quote(value)} must be one of {', '.join(choices)}")
    return value

