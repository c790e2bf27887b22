"""Derived forms of a model: the flat arrays the kernels compile from, the text of its tree."""

from __future__ import annotations

import numpy as np

from ..joints import NPARAMS
from ..spatial import plux_parts

#: Deepest indentation of :meth:`Model.describe`'s tree.
MAX_INDENT = 32


def _tree_lines(bodies: list, children, mimic: dict, frames: dict) -> list[str]:
    """:meth:`Model.describe`'s lines: one per body, depth-first, indented by depth; frames."""
    lines = []
    # depth first, iteratively (a long chain would exhaust Python's recursion limit)
    stack = [(i, 0) for i in reversed(range(len(bodies))) if bodies[i].parent == -1]
    while stack:
        i, depth = stack.pop()
        b = bodies[i]
        # indentation shows the depth up to MAX_INDENT levels, a number beyond (the
        # text of a long chain would otherwise grow as its length squared)
        indent = "  " * min(depth, MAX_INDENT) + (f"[depth {depth}] " if depth > MAX_INDENT
                                                   else "")
        mimics = ""
        if i in mimic:
            k, m, o = mimic[i]
            mimics = f", mimics {bodies[k].joint_name} ({m:g} q + {o:g})"
        lines.append(f"{indent}- {b.name} [{b.joint.kind} {b.joint_name}, "
                     f"nq={b.joint.nq}, nv={b.joint.nv}{mimics}] mass {b.mass:.6g}")
        stack.extend((k, depth + 1) for k in reversed(children[i]))
    if frames:
        lines.append("frames: " + ", ".join(
            f"{f.name} (on {bodies[f.body].name})" for f in frames.values()))
    return lines


def dof_parents(parent, v_start, nv_j) -> np.ndarray:
    """λ of the degrees of freedom: the previous one of the same joint, else the last one of
    the nearest ancestor joint that has any, ``-1`` at the root (the tree of ``M``'s sparsity)."""
    last = np.full(len(parent), -1, dtype=np.int64)   # last degree of freedom at or above i
    lam = np.full(int(sum(nv_j)), -1, dtype=np.int64)
    for i, p in enumerate(parent):
        above = last[p] if p >= 0 else -1
        for k in range(nv_j[i]):
            lam[v_start[i] + k] = above if k == 0 else v_start[i] + k - 1
        last[i] = v_start[i] + nv_j[i] - 1 if nv_j[i] else above
    return lam


def _flat_arrays(bodies: list, q_start: list[int], v_start: list[int], gravity: np.ndarray,
                 armature: np.ndarray) -> dict[str, np.ndarray]:
    """:meth:`Model.flat_arrays` of a tree without mimic joints (read-only arrays)."""
    nb = len(bodies)
    E_tree = np.zeros((nb, 3, 3))
    r_tree = np.zeros((nb, 3))
    for i, b in enumerate(bodies):
        E_tree[i], r_tree[i] = plux_parts(b.X_tree)
    flat = {
        "parent": np.array([b.parent for b in bodies], dtype=np.int64),
        "jtype": np.array([b.joint.code for b in bodies], dtype=np.int64),
        "jparams": np.array([b.joint.kernel_params() for b in bodies]).reshape(nb, NPARAMS),
        "q_start": np.array(q_start, dtype=np.int64),
        "v_start": np.array(v_start, dtype=np.int64),
        "nq_j": np.array([b.joint.nq for b in bodies], dtype=np.int64),
        "nv_j": np.array([b.joint.nv for b in bodies], dtype=np.int64),
        "dof_parent": dof_parents([b.parent for b in bodies], v_start,
                                  [b.joint.nv for b in bodies]),
        "E_tree": E_tree,
        "r_tree": r_tree,
        "mass": np.array([b.mass for b in bodies], dtype=float),
        "com": np.array([b.com for b in bodies], dtype=float).reshape(nb, 3),
        "I_com": np.array([b.I_com for b in bodies], dtype=float).reshape(nb, 3, 3),
        "inertia": np.array([b.inertia for b in bodies]).reshape(nb, 6, 6),
        "gravity": np.array(gravity, dtype=float),
        "armature": np.array(armature, dtype=float),
    }
    for array in flat.values():
        array.setflags(write=False)
    return flat
