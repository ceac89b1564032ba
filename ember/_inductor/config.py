"""Knobs of the code-generating backend (torch._inductor.config's names where they exist).

Why a module of plain attributes: tests and users flip them (`config.cpp.threads = 1`) and
the compiler reads them at compile time; every knob that changes the generated code or the
compiler flags is part of the disk-cache key.
"""
import os

# fall back to the eager kernels (one warning) instead of raising when C compilation fails
fallback_on_error = True
# a pointwise value read by several consumers is recomputed in each (no memory traffic)
# unless its chain of ops costs more than this (ops since the last buffer) ...
realize_cost_threshold = 6
# ... or it has more than this many readers
realize_reads_threshold = 3
# elements below which a loop nest runs on one thread (OpenMP start-up costs ~1-5 us)
parallel_threshold = 32768
# the whole graph as one generated C function (cpp_wrapper.py) instead of a Python wrapper
cpp_wrapper = False
# with cpp_wrapper: intermediates in an arena allocated once per input-size tuple and
# reused by every call (mode="reduce-overhead": the CPU analogue of triton.cudagraphs)
cpu_graphs = False
# time kernel variants when compiling and keep the fastest (autotune.py; mode="max-autotune"
# sets it); the two below turn on one half each, as in torch._inductor.config
max_autotune = False
# ... the generated groups' variants (threads, vector width)
max_autotune_pointwise = False
# ... CBLAS against generated loops for small matmuls (cpp_wrapper graphs)
max_autotune_gemm = False
# max-autotune times generated loops against CBLAS for matmuls up to this many m*n*k
max_autotune_loops_matmul_flops = 1 << 18


class cpp:
    """C code generation and the system compiler."""
    # C compiler executable; None = $CC, else the first of cc/gcc/clang on PATH
    cxx = os.environ.get("CC") or None
    # OpenMP threads per kernel; 0 = OpenMP's default (all cores)
    threads = int(os.environ.get("EMBER_NUM_THREADS", "0") or 0)
    # -march=native, or EMBER_CPU_CAPABILITY=avx2|avx512|default
    cpu_capability = os.environ.get("EMBER_CPU_CAPABILITY", "native")
    # extra compiler flags
    extra_flags = ()
    # sum of float32/16 accumulates in double: one rounding at the end, as NumPy's pairwise sum
    # is accurate; costs nothing measurable when the body is transcendental math
    fp32_sum_in_double = True


def cache_dir():
    """EMBER_CACHE_DIR, else ~/.cache/ember (XDG_CACHE_HOME honoured): where generated C and
    shared objects live. Clear it with `python -m ember._inductor.codecache --clear`."""
    d = os.environ.get("EMBER_CACHE_DIR")
    if d:
        return d
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ember")
