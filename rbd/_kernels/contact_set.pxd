# cython: language_level=3
"""The contact set as flat C arrays: the compiled form of ``rbd.constraints.collision.Contacts``.

The caller owns the arrays (``capacity`` contacts each); ``collision.pyx`` writes them and
``forward.pyx`` reads them.  Field meanings, units and order are those of ``Contacts``:
contact ``k``'s point is ``pos[3k:3k+3]``, its frame rows (normal from geom 1 to geom 2,
tangent 1, tangent 2) are ``frame[9k:9k+9]`` row-major, and so on.
"""

cdef struct ContactSetC:
    Py_ssize_t n                # contacts written
    Py_ssize_t capacity         # contacts the arrays hold
    double* pos                 # capacity × 3
    double* frame               # capacity × 9
    double* dist                # capacity
    Py_ssize_t* geom            # capacity × 2: geom indices into model.geoms
    Py_ssize_t* condim          # capacity
    double* friction            # capacity × 5 (already raised to MIN_FRICTION)
    double* solref              # capacity × 2
    double* solreffriction      # capacity × 2
    double* solimp              # capacity × 5
    double* includemargin       # capacity
    unsigned char* exclude      # capacity: 1 for a contact in the gap (detected, not active)
