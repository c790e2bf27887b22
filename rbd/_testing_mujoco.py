"""The MuJoCo side of rbd's comparisons (:mod:`rbd.testing` re-exports it): MuJoCo's
models of an MJCF file and of a URDF, with the solver settings both sides share.
MuJoCo is imported only when a function is called."""

from __future__ import annotations

#: MuJoCo's solver tightened as :func:`rbd.forward` solves (``opt.tolerance``,
#: ``opt.iterations``, ``opt.ls_tolerance``).
MUJOCO_TIGHT = {"tolerance": 1e-15, "iterations": 1000, "ls_tolerance": 1e-12}


def mujoco_urdf_spec(path, package_root, *, balance_inertia: bool = False):
    """MuJoCo's own reading of a URDF file as an ``MjSpec``, for comparing with
    :func:`rbd.load_urdf`: ``package://`` paths written out under ``package_root`` (the
    directory holding the packages), and a ``<mujoco><compiler>`` that keeps the paths as
    written and drops the ``<visual>`` shapes (``balanceinertia`` as ``balance_inertia``).
    Add a free joint (``spec.bodies[1].add_freejoint()``), a floor or options, then
    ``spec.compile()``."""
    import os
    import re

    import mujoco

    with open(os.fspath(path), encoding="utf-8") as fh:
        text = fh.read().replace("package://", f"{os.fspath(package_root)}/")
    compiler = (f'<mujoco><compiler strippath="false" discardvisual="true" '
                f'balanceinertia="{str(balance_inertia).lower()}"/></mujoco>')
    return mujoco.MjSpec.from_string(re.sub(r"(<robot[^>]*>)", lambda m: m.group(1) + compiler,
                                            text, count=1))


def mujoco_pair(source, *, cone: str | None = None, solver: str = "newton",
                integrator: str | None = None, tight: bool = True, quiet: bool = True):
    """rbd's model and MuJoCo's of one MJCF file, and a fresh ``MjData``.

    ``cone``, ``solver`` ("newton", "pgs", "cg") and ``integrator`` ("euler", "rk4",
    "implicit", ...) set MuJoCo's options (None: the file's); ``tight`` sets
    :data:`MUJOCO_TIGHT` (its tolerance and iterations on rbd's model too); ``quiet``
    silences the loader's ``RuntimeWarning`` about what
    rbd leaves out.  Returns ``(model, mjmodel, mjdata)``.
    """
    import os
    import warnings

    import mujoco

    from .mjcf import load_mjcf

    with warnings.catch_warnings():
        if quiet:
            warnings.simplefilter("ignore", RuntimeWarning)
        model = load_mjcf(os.fspath(source))
    mm = mujoco.MjModel.from_xml_path(os.fspath(source))
    mm.opt.solver = getattr(mujoco.mjtSolver, f"mjSOL_{solver.upper()}")
    if cone is not None:
        mm.opt.cone = getattr(mujoco.mjtCone, f"mjCONE_{cone.upper()}")
    if integrator is not None:
        mm.opt.integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{integrator.upper()}")
    for key, value in (MUJOCO_TIGHT.items() if tight else ()):
        setattr(mm.opt, key, value)
    if tight:                   # the same solver settings on rbd's side (rbd.forward, simulate)
        model.mujoco_options = dict(model.mujoco_options or {},
                                    tolerance=MUJOCO_TIGHT["tolerance"],
                                    iterations=MUJOCO_TIGHT["iterations"])
    return model, mm, mujoco.MjData(mm)

