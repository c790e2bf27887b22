# cython: language_level=3
"""Batched RNEA and ABA over lanes of states (``soa.pxi``), compiled for AVX-512F and FMA (8 doubles an instruction).

One of three builds of the same text (``setup.py``); ``_model.pyx`` imports the
one the CPU runs (docs/design.md, "Batches in lanes").
"""

include "soa.pxi"
