"""Build gpureduce: a CUDAExtension when torch has CUDA and nvcc is found,
otherwise a CppExtension without the .cu files (the CPU torch wheel sets
CUDA_HOME to None).

Install with `pip install --no-build-isolation -e .` so that the extension is
built against the torch that will load it.
"""
import glob
import importlib.metadata
import platform
import re
import sys
import sysconfig
import os
import threading

from setuptools import setup

# pip asks for the package's metadata in a run of its own (`setup.py
# dist_info`) before the one that builds; that run needs neither torch nor the
# extensions, and importing torch took 3.4-4.6 s of it on the GPU machine
# (session 54).
METADATA_ONLY = len(sys.argv) > 1 and sys.argv[1] in ("dist_info", "egg_info")
ROOT = os.path.dirname(os.path.abspath(__file__))


def installed_torch_version() -> str:
    """The torch this build compiles against, read from its metadata (no
    import). Its absence is what an isolated build (plain `pip install .`,
    `pip wheel .`, `python -m build`) meets: pip's fresh environment has no
    torch, and one that it downloaded would not be the torch that imports
    the wheel."""
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        raise SystemExit(
            "gpureduce compiles against the torch that will import it, and none is installed in this "
            "build's Python. Install torch first, then build without isolation: "
            "`pip install --no-build-isolation -e .`, `pip wheel --no-build-isolation .` or "
            "`python -m build --no-isolation` (README.md, 'Installing')."
        ) from None


TORCH_VERSION = installed_torch_version()
if not METADATA_ONLY:
    import torch
    from torch.utils import cpp_extension


def package_version() -> str:
    with open(os.path.join(ROOT, "reduce_op", "_version.py")) as f:
        return re.search(r'^__version__ = "([^"]+)"', f.read(), re.M).group(1)


def want_cuda() -> bool:
    if os.environ.get("GPUREDUCE_FORCE_CPU", "0") == "1":
        return False
    return torch.version.cuda is not None and cpp_extension.CUDA_HOME is not None


def write_build_info(with_cuda: bool) -> None:
    # reduce_op checks at import that it runs under the torch it was built for.
    with open(os.path.join(ROOT, "reduce_op", "_build_info.py"), "w") as f:
        f.write("# Written by setup.py; do not edit.\n")
        f.write(f"TORCH_VERSION = {torch.__version__!r}\n")
        f.write(f"CUDA_VERSION = {torch.version.cuda if with_cuda else None!r}\n")
        f.write(f"WITH_CUDA = {with_cuda!r}\n")


# Python's own build flags add -g. Debug information for the engine's many
# template instances made the objects ten times larger and every compile 40%
# slower (a changed kernel file is then a 13 s recompile, not 20 s); a
# debugging session can drop this.
NO_DEBUG_INFO = ["-g0"]


def extension():
    with_cuda = want_cuda()
    write_build_info(with_cuda)
    # Every source under csrc/, so that a new folder cannot be left out; those
    # under csrc/cuda/ only in a CUDA build.
    cpp_sources = sorted(p for p in glob.glob(os.path.join("csrc", "**", "*.cpp"), recursive=True)
                         if not p.startswith(FAST_CALLS_DIR) and not skipped_cpu_instance(p))
    sources = [p for p in cpp_sources if not p.startswith(CUDA_DIR)]
    # Headers too, so that changing one rebuilds (setuptools otherwise
    # compares the sources' times only; ninja then picks what to recompile).
    depends = sorted(glob.glob(os.path.join("csrc", "**", "*.h"), recursive=True)
                     + glob.glob(os.path.join("csrc", "**", "*.cuh"), recursive=True))
    cxx_flags = ["-O3", "-std=c++20", *NO_DEBUG_INFO]
    link_flags = []
    if sys.platform.startswith("linux"):
        # at::parallel_for is inline OpenMP code in torch's Linux builds: without
        # -fopenmp it compiles to a serial loop, and the CPU kernels ran on one
        # thread whatever torch.get_num_threads() said. Linking it names
        # libgomp.so.1, the runtime torch has already loaded.
        cxx_flags.append("-fopenmp")
        link_flags.append("-fopenmp")
    if platform.machine() in ("x86_64", "AMD64"):
        # gcc notes, once per AVX2 file, that 32-byte vectors passed by value
        # changed ABI in gcc 4.6: true, and moot for the engine's internal
        # functions, which never cross a library boundary.
        cxx_flags.append("-Wno-psabi")
    if not with_cuda:
        return cpp_extension.CppExtension(
            "reduce_op._C", sources, depends=depends, extra_compile_args={"cxx": cxx_flags},
            extra_link_args=link_flags,
        )
    if not os.environ.get("TORCH_CUDA_ARCH_LIST"):
        # No GPU visible at build time: build for the H200 (sm_90).
        if not torch.cuda.is_available():
            os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0"
    # (setuptools sorts the sources by path, whatever this order;
    # CudaFirstBuild below hands ninja the .cu files first.)
    cuda_sources = sorted(glob.glob(os.path.join("csrc", "**", "*.cu"), recursive=True))
    # nvcc's -O sets the host compiler's level only (cicc and ptxas optimise
    # the device code fully either way: the same PTX and SASS). The host side
    # of a kernel file is its launch code and nvcc's stubs, and -O3 took 8 of
    # sum_float.cu's 32 s on the 2-core machine; -O1, with small functions
    # still inlined, 5.5 (NOTES.md, session 54). The objects are linked after
    # the C++ ones (CudaFirstBuild), so that an inline function both define
    # keeps its -O3 copy.
    # The kernels' code is stored compressed, as torch's own is (-compress-all:
    # the library 263 -> 44 MB), and without line tables, which doubled each
    # object and cost 2-4% of its compile (a same-machine A/B, session 54). To
    # see source lines in Nsight Compute, build with NVCC_APPEND_FLAGS=-lineinfo.
    nvcc_flags = ["-O1", "-Xcompiler", "-finline-small-functions", "-std=c++20", "--expt-relaxed-constexpr",
                  "-Xfatbin", "-compress-all"]
    return cpp_extension.CUDAExtension(
        "reduce_op._C",
        cuda_sources + [p for p in cpp_sources if p.startswith(CUDA_DIR)] + sources,
        depends=depends,
        extra_compile_args={"cxx": cxx_flags + ["-DGPUREDUCE_WITH_CUDA"], "nvcc": nvcc_flags},
        extra_link_args=link_flags,
    )


FAST_CALLS_DIR = os.path.join("csrc", "python")
CPU_INSTANCES_DIR = os.path.join("csrc", "cpu", "instances", "")


def skipped_cpu_instance(path: str) -> bool:
    """Whether `path` is a CPU engine instance file of the build this
    machine does not have (csrc/cpu/isa.h): on x86-64 (GCC or Clang) the
    engine is built for AVX2 only (*_avx2.cpp), elsewhere in its baseline
    build (the others). Either file compiles to nothing where its build is
    not the one, but still parses ATen's headers."""
    if not path.startswith(CPU_INSTANCES_DIR):
        return False
    avx2_only = platform.machine() in ("x86_64", "AMD64") and not sys.platform.startswith("win")
    return path.endswith("_avx2.cpp") != avx2_only


CUDA_DIR = os.path.join("csrc", "cuda")


def fast_calls_extension():
    # reduce_op._fast: the operator's overloads called from Python through
    # typed handles (the per-call fast path of reduce_op.sum and the drop-in).
    # Kept out of _C, which LibTorch programs load without Python.
    return cpp_extension.CppExtension(
        "reduce_op._fast", sorted(glob.glob(os.path.join(FAST_CALLS_DIR, "*.cpp"))),
        extra_compile_args={"cxx": ["-O2", "-std=c++20", *NO_DEBUG_INFO]},
    )


# The CPU engine's instance files of its longest compiles, which start first
# among them: norm, extremum and the integers-to-float pairs took 42-57 s each
# on the GPU machine, the others 10-33 s (session 54, call 4). In path order
# the integers-to-float file started 153 s in and ended ninja 9 s after every
# other compile; a simulation of that build's 16 jobs with these first ended
# it at 196-197 s against 204-205 (measured durations, and 300 draws of them
# each +-15%).
LONGEST_CPU_INSTANCES = ("int_to_float", "norm_", "amax_", "amin_")
# Likewise the longest of the other C++ files (13-24 s on the GPU machine
# against 3-13 s for the rest; session 57, call 2), which in path order left
# reduce_meta.cpp to start last, 116 s in, and end ninja 8 s after every
# compile but one. With these before the rest, the same simulation of that
# build ended at 123-125 s against 129-130. fsum.cpp, conv1d.cpp and
# ops_cpu.cpp have since grown to 11-19 s: in path order fsum.cpp started
# last, 109 s in, and ended ninja 3 s after every other compile (H200
# machine, session 107). With them here, the build's own .ninja_log
# replayed on 16 jobs ends at 117.1 s against 120.3 (a longest-first order
# of every file: 117.2).
LONGEST_HOST_SOURCES = ("sum_autograd.cpp", "indexed_cpu.cpp", "reduce_meta.cpp", "fsum.cpp", "conv1d.cpp",
                        "ops_cpu.cpp")


def compile_rank(source: str) -> int:
    """Where a source goes in the compile order: longest compiles first."""
    if source.endswith(".cu"):
        return 0
    if CPU_INSTANCES_DIR in source:
        return 1 if any(s in os.path.basename(source) for s in LONGEST_CPU_INSTANCES) else 2
    return 3 if os.path.basename(source) in LONGEST_HOST_SOURCES else 4


class CudaFirstBuild(object if METADATA_ONLY else cpp_extension.BuildExtension):
    """torch's BuildExtension, with each extension's .cu files compiled first,
    the two extensions built side by side, into the checkout's own build
    folder.

    setuptools sorts an extension's sources by path before compiling them,
    so on a clean build the 70 CPU files took the first 100 s of the GPU
    machine's 16 jobs and the 40 .cu files, several times longer each,
    ran after them, their last few alone on the machine (ninja 217 s,
    NOTES.md session 46). Ninja starts the compiles in the order given.
    After the .cu files, the CPU engine's instance files, its longest CPU
    compiles (20-105 s each on the GPU machine), then the rest: in path
    order, logsumexp_integer_to_float_avx2.cpp (104 s; since removed)
    started 47 files into the CPU files and ended ninja 17 s after every
    other compile (NOTES.md, session 51). The objects are linked C++ first:
    the linker keeps the first copy of an inline function that several
    objects define, and the kernel files' host code is compiled at -O1.

    reduce_op._fast, one file of 11 s, was built after _C had linked, 11 s
    added to every clean build (session 53); the two now build in threads
    of their own (setuptools' parallel build_ext), each extension's ninja
    file in a folder of its own.

    `pip install -e .` compiled into a fresh temporary folder each time, so
    every run rebuilt everything (250 s on the GPU machine for one changed
    header); the objects now stay in build/, where ninja finds them, as
    `setup.py build_ext --inplace` keeps them."""

    def finalize_options(self):
        super().finalize_options()
        self.build_temp = os.path.join(ROOT, "build", f"temp.{sysconfig.get_platform()}-{sys.implementation.cache_tag}")
        self.parallel = max(int(self.parallel or 0), len(self.extensions))
        self._building = threading.local()
        self._wrap_lock = threading.Lock()

    def build_extension(self, ext):
        # torch's build_extensions has replaced compiler.compile with its ninja
        # driver by now; it is wrapped once, for every thread.
        with self._wrap_lock:
            if not getattr(self.compiler.compile, "gpureduce_order", False):
                self.compiler.compile = self._ordered(self.compiler.compile)
            if not getattr(self.compiler.link_shared_object, "gpureduce_skip", False):
                self.compiler.link_shared_object = self._linked_when_stale(self.compiler.link_shared_object)
        self._building.ext = ext
        super().build_extension(ext)

    def _linked_when_stale(self, link):
        """torch's BuildExtension forces every extension to build (ninja then
        picks the stale objects), and so the two libraries were linked again
        on every run, 1.5-2 s of each test command with nothing changed
        (2-core machine, 2026-12-02). A library is left as it is when it is
        newer than its objects and this file and was linked from the same
        objects and arguments (a stamp beside it: a CPU-only rebuild of a
        CUDA build links fewer objects, none of them newer)."""
        def link_if_stale(objects, output_filename, *args, **kwargs):
            # The stamp lives with the objects, not beside the library, which
            # a wheel would then carry.
            stamp = os.path.join(build_temp, os.path.basename(output_filename) + ".link")
            inputs = repr((sorted(objects), args, sorted(kwargs.items())))
            if os.path.exists(output_filename) and os.path.exists(stamp):
                built = os.path.getmtime(output_filename)
                with open(stamp) as f:
                    same = f.read() == inputs
                if same and all(os.path.getmtime(p) < built for p in list(objects) + [os.path.abspath(__file__)]):
                    return None
            result = link(objects, output_filename, *args, **kwargs)
            with open(stamp, "w") as f:
                f.write(inputs)
            return result

        build_temp = self.build_temp
        link_if_stale.gpureduce_skip = True
        return link_if_stale

    def _ordered(self, compile_objects):
        def compile_in_order(sources, output_dir=None, *args, **kwargs):
            ext = self._building.ext
            if ext.name != "reduce_op._C" and output_dir is not None:
                output_dir = os.path.join(output_dir, ext.name)
            ordered = sorted(sources, key=compile_rank)
            objects = compile_objects(ordered, output_dir, *args, **kwargs)
            # The C++ objects first, then the .cu ones (sorted is stable).
            built = sorted(zip(ordered, objects), key=lambda pair: pair[0].endswith(".cu"))
            return [obj for _, obj in built]

        compile_in_order.gpureduce_order = True
        return compile_in_order


setup(
    name="gpureduce",
    version=package_version(),
    description="A fast, deterministic drop-in replacement for torch.sum, with the classic "
    "parallel-reduction kernels",
    long_description=open(os.path.join(ROOT, "README.md"), encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    license="BSD-3-Clause",
    license_files=["LICENSE"],
    packages=["reduce_op"],
    # The compiled library loads only under the torch it was built against
    # (C++ ABI): the wheel's metadata pins that torch, at the version pip records for it.
    install_requires=[f"torch=={TORCH_VERSION}"],
    ext_modules=[] if METADATA_ONLY else [extension(), fast_calls_extension()],
    cmdclass={} if METADATA_ONLY else {"build_ext": CudaFirstBuild.with_options(use_ninja=True)},
    python_requires=">=3.9",
)
