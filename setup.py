"""Build the Cython kernels; all metadata lives in pyproject.toml."""

import os
import platform
import sys
from glob import glob

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class ParallelBuildExt(build_ext):
    """Compile the kernels' C files on every core (``pip install`` builds them one by one)."""

    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None:
            self.parallel = os.cpu_count() or 1


openmp = [] if sys.platform == "darwin" else ["-fopenmp"]
# The batched lane kernels (rbd/_kernels/soa*.pxi) are built once per instruction set;
# rbd._kernels._model picks the one the CPU runs at import (docs/design.md, "Batches in
# lanes").  Off x86-64 only the portable build exists.
X86 = platform.machine().lower() in ("x86_64", "amd64")
# -fno-math-errno lets sqrt vectorize (errno is never read by the kernels).
SIMD_FLAGS = {"_soa_avx2": ["-mavx2", "-mfma"], "_soa_avx512": ["-mavx512f", "-mavx2", "-mfma"]}
LANE_FLAGS = ["-fno-math-errno"]


def _module(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


extensions = [
    Extension(
        "rbd._kernels." + _module(path),
        [path],
        include_dirs=[np.get_include()],
        extra_compile_args=["-O3", *openmp, *SIMD_FLAGS.get(_module(path), []),
                            *(LANE_FLAGS if _module(path).startswith("_soa_") else [])],
        extra_link_args=openmp,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )
    for path in sorted(glob("rbd/_kernels/*.pyx"))
    if X86 or _module(path) not in SIMD_FLAGS
]

# Every file a kernel's C translation depends on in this tree: a change to any of them
# translates every module again (conservative, and the translation takes seconds).
KERNEL_SOURCES = [path for ext in ("pyx", "pxd", "pxi") for path in glob(f"rbd/_kernels/*.{ext}")]


def _translated(ext: Extension) -> bool:
    """Whether the extension's C file is newer than every kernel source of this tree.

    Cython's own check would translate every module again on a second ``pip install .``
    of an unchanged tree: each isolated build environment installs NumPy anew, and its
    ``.pxd`` files, which the kernels cimport, are newer than the C files.  The C files
    left by the first build are then compiled against the same NumPy version, and
    setuptools skips the modules whose built library is newer still.
    """
    c_file = os.path.splitext(ext.sources[0])[0] + ".c"
    if not os.path.exists(c_file):
        return False
    newest = max(os.path.getmtime(path) for path in KERNEL_SOURCES)
    return os.path.getmtime(c_file) > newest


def _on_c_file(ext: Extension) -> Extension:
    ext.sources = [os.path.splitext(ext.sources[0])[0] + ".c"]
    return ext


fresh, stale = [], []
for ext in extensions:
    (fresh if _translated(ext) else stale).append(ext)
setup(
    cmdclass={"build_ext": ParallelBuildExt},
    ext_modules=[_on_c_file(ext) for ext in fresh] + (cythonize(
        stale,
        nthreads=os.cpu_count() or 1,
        language_level=3,
        compiler_directives={"boundscheck": False, "wraparound": False, "cdivision": True},
    ) if stale else []),
)
