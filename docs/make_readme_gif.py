"""Regenerate ``docs/images/pendulum3.gif``, the animation shown at the top of the README.

The three-link spherical pendulum of ``rbd simulate`` (every joint tilted by
0.8 rad, released at rest) for 4 s (in real time: 48 frames at 12 per second), drawn by :func:`rbd.animate`: links,
inertia-equivalent boxes, the centre of mass and the path of the last link.

Usage: ``python docs/make_readme_gif.py`` (needs the ``animate`` extra).
"""

from pathlib import Path

import rbd
from rbd.cli import displaced_state

OUT = Path(__file__).resolve().parent / "images" / "pendulum3.gif"


def main() -> None:
    model = rbd.models.get("pendulum3")
    q0, v0 = displaced_state(model, 0.8)
    traj = rbd.simulate(model, q0, v0, 4.0, 2e-3)
    rbd.animate(model, traj, OUT, frames=48, fps=12, trail="link3", size=3.6, dpi=80,
                title="three-link spherical pendulum")
    print(f"wrote {OUT} ({OUT.stat().st_size / 1000:.0f} kB)")


if __name__ == "__main__":
    main()
