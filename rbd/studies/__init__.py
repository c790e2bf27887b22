"""Numerical studies built on the derivations of :mod:`rbd.reference`.

A derivation follows one paper's equations; a study runs several of them on
chosen systems and measures something about them.

* :mod:`~rbd.studies.stiffness` — formulation stiffness (Pai, Ascher & Kry §7):
  the accuracy of each forward-dynamics method on chains whose neighbouring
  bodies have very different inertias, against a 50-digit solution.
* :mod:`~rbd.studies.contact_solvers` — one contact step posed three ways: Stewart &
  Trinkle's LCP, Anitescu's convex relaxation and MuJoCo's soft convex problem, on a box
  on an incline, a dropped ball and a stack of two boxes (tutorial 42).
"""
