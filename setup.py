"""Build the Cython kernels; all metadata lives in pyproject.toml."""

import os
import sys
from glob import glob

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

openmp = [] if sys.platform == "darwin" else ["-fopenmp"]
extensions = [
    Extension(
        "rbd._kernels." + os.path.splitext(os.path.basename(path))[0],
        [path],
        include_dirs=[np.get_include()],
        extra_compile_args=["-O3", *openmp],
        extra_link_args=openmp,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )
    for path in sorted(glob("rbd/_kernels/*.pyx"))
]

setup(
    ext_modules=cythonize(
        extensions,
        language_level=3,
        compiler_directives={"boundscheck": False, "wraparound": False, "cdivision": True},
    )
)
