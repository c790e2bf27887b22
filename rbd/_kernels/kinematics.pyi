"""Type stub for ``rbd._kernels.kinematics``.

The module exports C functions only (``world_poses``, ``forward_kinematics``,
``body_velocities``, ``jacobian``, ``kinetic_energy``, ``body_centers_of_mass``,
``center_of_mass``, ``potential_energy``, ``integrate``), declared in
``kinematics.pxd`` and cimported by ``_model.pyx``; Python code calls them through
:class:`rbd._kernels._model.CompiledModel` or the public functions of :mod:`rbd`.
"""
