"""Numerical studies built on the derivations of :mod:`rbd.reference`.

A derivation follows one paper's equations; a study runs several of them on
chosen systems and measures something about them.

* :mod:`~rbd.studies.stiffness` — formulation stiffness (Pai, Ascher & Kry §7):
  the accuracy of each forward-dynamics method on chains whose neighbouring
  bodies have very different inertias, against a 50-digit solution.
"""
