"""max-autotune: time variants of each generated group, keep the fastest (config.max_autotune).

Why these variants: what decides a small loop nest's speed on a CPU is whether OpenMP's
fork/join pays off (a group on all threads or on one: the static `parallel_threshold` is a
guess) and which vector width the core runs best (AVX-512 can lower the clock on some
CPUs; 256-bit is the alternative). For matmul in a cpp_wrapper graph the choice is
CBLAS or generated loops, which win for tiny shapes where BLAS's dispatch dominates.

How: every variant of every group goes into one tuning library (built through the disk
cache), each is run on random inputs of the group's (static) shapes, and the fastest is
kept. The choices are stored on disk under the tuning code's hash, so another process
compiling the same graph reads them instead of timing again. Graphs with symbolic sizes
keep the default variant (their sizes are not known when compiling).
"""
import ctypes
import json
import os
import platform
import re
import time

import numpy as np

from .._symbolic import SymInt
from . import codecache, config

__all__ = ["tune_groups", "apply", "tune_matmul", "VARIANTS", "stats"]

stats = {"timed": 0, "from_disk": 0}
_X86 = platform.machine().lower() in ("x86_64", "amd64", "i686", "x86")
# (threads, vector width): "auto" = parallel above config.parallel_threshold, "1" = serial;
# "native" = the compiler's choice for -march, "256" = prefer 256-bit vectors (x86 only)
VARIANTS = [("auto", "native"), ("1", "native")] + (
    [("auto", "256"), ("1", "256")] if _X86 else [])
_PAR = re.compile(r"^(\s*)#pragma omp parallel for(.*)$", re.M)
_RED = re.compile(r"reduction\([^)]*\)")


def _serial(src):
    """The group with its OpenMP parallel loops run on the calling thread (simd kept)."""
    def sub(m):
        if " simd" not in m.group(2):
            return ""
        return f"{m.group(1)}#pragma omp simd {' '.join(_RED.findall(m.group(2)))}".rstrip()
    return _PAR.sub(sub, src)


def apply(src, name, variant, new_name=None):
    """C source of group `name` (text `src`) in `variant`, renamed to new_name."""
    threads, width = variant
    if threads == "1":
        src = _serial(src)
    head = f"void {new_name or name}("
    src = src.replace(f"void {name}(", head, 1)
    if width != "native":
        src = src.replace(head, f'__attribute__((target("prefer-vector-width={width}"))) '
                                f"{head}", 1)
    return src


def _static(g):
    return all(not isinstance(n, SymInt) for b in g.bufs for n in b.shape)


def _array(b, rng):
    shape = tuple(int(n) for n in b.shape)
    dt = b.dtype.np
    if b.dtype.is_floating_point:
        return rng.uniform(0.5, 1.5, shape).astype(dt)
    return np.zeros(shape, dt)


def _args(g, rng):
    arrays = [_array(b, rng) for b in g.bufs]
    ints = []
    for key in g.ints:
        if key[0] == "stride":
            a = arrays[next(k for k, b in enumerate(g.bufs) if b is key[1])]
            ints.append(a.strides[key[2]] // a.itemsize if a.ndim else 0)
        else:
            ints.append(1)
    ptrs = (ctypes.c_void_p * max(len(arrays), 1))(*[a.ctypes.data for a in arrays])
    iv = (ctypes.c_int64 * max(len(ints), 1))(*ints)
    fv = (ctypes.c_double * max(len(g.floats), 1))(*[1.0] * len(g.floats))
    return arrays, (ptrs, iv, fv)


def _time(fn, args, budget=0.02):
    """Best time of one call over a few rounds (each round ~budget/3 seconds)."""
    fn(*args)
    t = time.perf_counter()
    fn(*args)
    once = max(time.perf_counter() - t, 1e-7)
    reps = max(1, min(1000, int(budget / 3 / once)))
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(reps):
            fn(*args)
        best = min(best, (time.perf_counter() - t) / reps)
    return best


def _choices_path(key):
    return os.path.join(config.cache_dir(), "inductor", "autotune", key + ".json")


def _load_choices(key):
    try:
        with open(_choices_path(key)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _store_choices(key, choices):
    path = _choices_path(key)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        codecache._write_atomic(path, json.dumps(choices))
    except OSError:
        pass


def tune_groups(prelude_code, groups):
    """{group name: fastest variant} for the groups with static shapes (others: the
    default)."""
    tunable = [g for g in groups if _static(g)]
    if not tunable:
        return {}
    srcs = {g.name: g.source() for g in tunable}
    code = prelude_code + "\n" + "\n".join(
        apply(srcs[g.name], g.name, v, f"{g.name}__v{k}")
        for g in tunable for k, v in enumerate(VARIANTS))
    key = codecache.code_hash(code)
    known = _load_choices(key)
    if known is not None:
        stats["from_disk"] += 1
        return {n: tuple(v) for n, v in known.items()}
    lib, _ = codecache.load(code)
    rng = np.random.default_rng(0)
    choices = {}
    for g in tunable:
        _keep, args = _args(g, rng)
        times = []
        for k in range(len(VARIANTS)):
            fn = getattr(lib, f"{g.name}__v{k}")
            fn.argtypes = [ctypes.c_void_p] * 3
            fn.restype = None
            times.append(_time(fn, args))
        choices[g.name] = VARIANTS[int(np.argmin(times))]
    stats["timed"] += 1
    _store_choices(key, choices)
    return choices


# ------------------------------------------------------------------ matmul: CBLAS or loops

def tune_matmul(support_code, tname, m, n, k, sa, sb):
    """"blas" or "loops" for a static-shape matmul site: C[m,n] = A[m,k] @ B[k,n] with
    element strides sa, sb; timed once, remembered on disk."""
    from . import blas
    code = support_code + _TUNE_MM.replace("@T@", tname)
    key = codecache.code_hash(code + f"/{m},{n},{k},{sa},{sb}")
    known = _load_choices(key)
    if known is not None:
        stats["from_disk"] += 1
        return known["choice"]
    lib, _ = codecache.load(code)
    addr = blas.gemm_addresses()
    lib.em_set_blas(ctypes.c_void_p(addr[0]), ctypes.c_void_p(addr[1]))
    dt = np.float32 if tname == "float" else np.float64
    rng = np.random.default_rng(0)

    def strided(rows, cols, st):
        span = (rows - 1) * st[0] + (cols - 1) * st[1] + 1
        return rng.standard_normal(max(span, 1)).astype(dt)
    a, b = strided(m, k, sa), strided(k, n, sb)
    c = np.empty((m, n), dt)
    ll = ctypes.c_int64
    args = (ll(m), ll(n), ll(k), a.ctypes.data, ll(sa[0]), ll(sa[1]), b.ctypes.data,
            ll(sb[0]), ll(sb[1]), c.ctypes.data)
    times = {}
    for choice in ("blas", "loops"):
        fn = getattr(lib, f"tune_{choice}_{tname}")
        fn.argtypes = [ctypes.c_int64] * 3 + [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                                              ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                                              ctypes.c_void_p]
        fn.restype = None
        times[choice] = _time(fn, args, budget=0.01)
    stats["timed"] += 1
    choice = min(times, key=times.get)
    _store_choices(key, {"choice": choice, "timings": times})
    return choice


# exported entry points of both matmul kernels, for timing only
_TUNE_MM = r"""
void tune_blas_@T@(int64_t M, int64_t N, int64_t K, const @T@ *A, int64_t sa0, int64_t sa1,
                   const @T@ *B, int64_t sb0, int64_t sb1, @T@ *C) {
  em_mm_@T@(M, N, K, A, sa0, sa1, B, sb0, sb1, C); }
void tune_loops_@T@(int64_t M, int64_t N, int64_t K, const @T@ *A, int64_t sa0, int64_t sa1,
                    const @T@ *B, int64_t sb0, int64_t sb1, @T@ *C) {
  em_mm_loops_@T@(M, N, K, A, sa0, sa1, B, sb0, sb1, C); }
"""
