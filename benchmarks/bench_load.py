"""Loading MJCF files with meshes: ``rbd.load_mjcf`` against MuJoCo's compiler.

A mesh geom costs the loader its convex hull (:mod:`rbd.model.mesh_hull`: qhull, the
neighbours of each vertex, the hull's polygons and their normals) and its inertia.
The table gives, for the bundled files with the most mesh geoms, the wall time of
``rbd.load_mjcf`` and of ``mujoco.MjModel.from_xml_path`` (best of ``--repeat``
loads, in one process) and their ratio.

Usage::

    python benchmarks/bench_load.py
    python benchmarks/bench_load.py --repeat 5
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import time
import warnings
from pathlib import Path

import rbd

#: Bundled files with many mesh geoms: dm-control's fruit fly (85 meshes) and dog.
FILES = (("dm_control", "locomotion/walkers/assets/build_fruitfly/assets/drosophila_fused.xml"),
         ("dm_control", "suite/dog.xml"))


def _path(package: str, relative: str) -> Path | None:
    try:
        module = __import__(package)
    except ImportError:
        return None
    path = Path(module.__file__).parent / relative
    return path if path.is_file() else None


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    try:
        import mujoco
    except ImportError:
        mujoco = None
    print(f"# bench_load ({datetime.date.today()}, {platform.machine()}, load average "
          f"{os.getloadavg()[0]:.1f}; best of {args.repeat})\n")
    print("| file | mesh geoms | rbd.load_mjcf (s) | MuJoCo (s) | ratio |")
    print("|---|---:|---:|---:|---:|")
    for package, relative in FILES:
        path = _path(package, relative)
        if path is None:
            print(f"| {relative} | – | not installed | | |")
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = rbd.load_mjcf(path)
            ours = best(lambda path=path: rbd.load_mjcf(path), args.repeat)
        meshes = sum(g.kind == "mesh" for g in model.geoms)
        theirs = (best(lambda path=path: mujoco.MjModel.from_xml_path(str(path)), args.repeat)
                  if mujoco is not None else float("nan"))
        print(f"| {path.name} | {meshes} | {ours:.3f} | {theirs:.3f} | {ours / theirs:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
