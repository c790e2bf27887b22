"""Regenerate ``docs/images/ur5.gif``, the animation shown at the top of the README.

example-robot-data's UR5 (its URDF and Collada meshes, read with the ``mesh``
extra: trimesh and pycollada), released at rest with its arm stretched out
and swinging under gravity for 3 s (in real time: 36 frames at 12 per second),
drawn by :func:`rbd.animate` with its visual meshes, the centre of mass and
the path of the tool flange.

Usage: ``python docs/make_readme_gif.py`` (needs the ``animate`` and ``mesh``
extras and example-robot-data).
"""

import importlib.metadata
from pathlib import Path

import numpy as np

import rbd

OUT = Path(__file__).resolve().parent / "images" / "ur5.gif"


def main() -> None:
    robots = importlib.metadata.distribution("example-robot-data").locate_file(
        "cmeel.prefix/share/example-robot-data/robots")
    model = rbd.load_urdf(str(robots / "ur_description/urdf/ur5_robot.urdf"),
                          package_dirs=[str(robots.parent.parent)])
    q0 = np.array([0.3, -0.4, 0.6, -0.8, 1.2, 0.0])
    traj = rbd.simulate(model, q0, np.zeros(model.nv), 3.0, 2e-3)
    rbd.animate(model, traj, OUT, frames=36, fps=12, trail="wrist_3_link", size=4.0, dpi=100,
                title="UR5 swinging under gravity")
    print(f"wrote {OUT} ({OUT.stat().st_size / 1000:.0f} kB)")


if __name__ == "__main__":
    main()
