"""Builds lazytensor._C: the extension (python/src) and the whole C core
(src/, the same sources CMake builds) compiled into one module.

Needs a C compiler, zlib, oneDNN and the pthreads build of OpenBLAS (Debian:
gcc zlib1g-dev libdnnl-dev libopenblas-pthread-dev), like the C library itself.
`pip install ./python` builds from this checkout (pip builds in place, so
the core's sources one folder up are reachable).
"""
import glob
import os
import subprocess
import sysconfig

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if not os.path.exists(os.path.join(ROOT, "include", "lazytensor.h")):
    raise SystemExit("lazytensor: build from a checkout of the project (include/lazytensor.h not found "
                     f"next to {HERE})")


def openblas_flags():
    """Compile and link flags of the pthreads OpenBLAS, as CMakeLists.txt finds it."""
    arch = sysconfig.get_config_var("MULTIARCH") or "x86_64-linux-gnu"
    pc_dir = f"/usr/lib/{arch}/openblas-pthread/pkgconfig"
    env = dict(os.environ, PKG_CONFIG_PATH=pc_dir + ":" + os.environ.get("PKG_CONFIG_PATH", ""))
    try:
        cflags = subprocess.run(["pkg-config", "--cflags", "openblas"], env=env, check=True,
                                capture_output=True, text=True).stdout.split()
        libs = subprocess.run(["pkg-config", "--libs", "openblas"], env=env, check=True,
                              capture_output=True, text=True).stdout.split()
    except (OSError, subprocess.CalledProcessError) as e:
        raise SystemExit("lazytensor: the pthreads build of OpenBLAS is needed "
                         "(apt-get install libopenblas-pthread-dev pkg-config)") from e
    lib_dirs = [f[2:] for f in libs if f.startswith("-L")]
    return ([f[2:] for f in cflags if f.startswith("-I")], lib_dirs,
            [f[2:] for f in libs if f.startswith("-l")])


def mpi_includes():
    """Open MPI's header folders (src/backend/dist_mpi.c loads the library itself, with dlopen)."""
    try:
        cflags = subprocess.run(["pkg-config", "--cflags", "ompi-c"], check=True, capture_output=True,
                                text=True).stdout.split()
    except (OSError, subprocess.CalledProcessError) as e:
        raise SystemExit("lazytensor: Open MPI's header is needed (apt-get install libopenmpi-dev)") from e
    return [f[2:] for f in cflags if f.startswith("-I")]


blas_includes, blas_dirs, blas_libs = openblas_flags()
# setuptools takes sources relative to this folder (pip runs setup.py here)
core = sorted(os.path.relpath(p, HERE) for p in glob.glob(os.path.join(ROOT, "src", "*", "*.c")))
front = sorted(os.path.relpath(p, HERE) for p in glob.glob(os.path.join(HERE, "src", "*.c")))

extension = Extension(
    "lazytensor._C",
    sources=front + core,
    include_dirs=[os.path.join(ROOT, "include"), os.path.join(ROOT, "src")] + blas_includes + mpi_includes(),
    define_macros=[("_GNU_SOURCE", None)],
    extra_compile_args=["-std=c11", "-O3", "-fopenmp-simd", "-Wno-unknown-pragmas"],
    library_dirs=blas_dirs,
    runtime_library_dirs=blas_dirs,
    libraries=blas_libs + ["dnnl", "z", "m", "pthread", "dl"],
)

setup(ext_modules=[extension])
