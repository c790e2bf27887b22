"""Type stub for ``rbd._kernels.rnea``.

The module exports one C function, ``rnea`` (with NULL vectors it gives the
nonlinear effects and the generalized gravity), declared in ``rnea.pxd`` with the
shared inline outward step ``velocity_step``/``outward_step``, and cimported by
``_model.pyx`` (and the step by ``aba.pyx``, ``ploen.pyx``, ``kinematics.pyx``);
Python code calls it through :class:`rbd._kernels._model.CompiledModel` or the
public functions of :mod:`rbd`.
"""
