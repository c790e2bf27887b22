# cython: language_level=3
"""Batched RNEA and ABA over lanes of states (``soa.pxi``), compiled for the baseline instruction set of the platform (SSE2 on x86-64).

One of three builds of the same text (``setup.py``); ``_model.pyx`` imports the
one the CPU runs (docs/design.md, "Batches in lanes").
"""

include "soa.pxi"
