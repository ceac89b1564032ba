"""The system C compiler: find it, pick flags, build a shared object (subprocess).

Why a subprocess and not a Python binding: gcc/clang are what every Linux machine has, and
their OpenMP and auto-vectorizer are what PyTorch's inductor relies on too. The vector math
comes from glibc's libmvec (sinf/expf/... SIMD variants), declared in the generated code's
prelude when the linker finds it.
"""
import functools
import os
import shutil
import subprocess

from . import config

__all__ = ["CompilerNotFound", "CompileError", "find_compiler", "compiler_version", "cflags",
           "build_shared", "has_libmvec"]


class CompilerNotFound(RuntimeError):
    """No C compiler on PATH (or config.cpp.cxx names a missing one)."""


class CompileError(RuntimeError):
    """The C compiler rejected generated code (a bug in ember's code generator)."""


def find_compiler():
    """The C compiler's path: config.cpp.cxx, else $CC, else cc/gcc/clang on PATH."""
    names = [config.cpp.cxx] if config.cpp.cxx else ["cc", "gcc", "clang"]
    for n in names:
        p = shutil.which(n) if n else None
        if p:
            return p
    raise CompilerNotFound(f"no C compiler found (looked for {', '.join(map(str, names))}; "
                           "set CC or ember._inductor.config.cpp.cxx)")


@functools.lru_cache(maxsize=None)
def _toolchain(cc):
    """{"version": first line of `cc --version`, "mvec": whether libmvec links}, kept on disk
    next to the cache (keyed by the compiler's path and mtime) so a new process does not
    pay a probe compile (~0.1 s) before loading cached kernels."""
    import json

    from . import codecache    # codecache imports this module
    st = os.stat(cc)
    key = f"{os.path.realpath(cc)}:{st.st_mtime_ns}:{st.st_size}"
    path = os.path.join(config.cache_dir(), "inductor", "toolchain.json")
    try:
        with open(path) as f:
            known = json.load(f)
    except (OSError, ValueError):
        known = {}
    if key in known:
        return known[key]
    out = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30)
    info = {"version": out.stdout.splitlines()[0] if out.stdout else cc,
            "mvec": _links_mvec(cc)}
    known[key] = info
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        codecache._write_atomic(path, json.dumps(known))
    except OSError:
        pass
    return info


def compiler_version():
    """First line of `cc --version`: part of the cache key (a new compiler rebuilds)."""
    return _toolchain(find_compiler())["version"]


def _arch_flags():
    cap = (config.cpp.cpu_capability or "native").lower()
    if cap == "avx512":
        return ["-mavx512f", "-mavx512dq", "-mavx512vl", "-mavx512bw", "-mfma",
                "-mprefer-vector-width=512"]
    if cap == "avx2":
        return ["-mavx2", "-mfma"]
    if cap == "default":
        return []
    return ["-march=native"]


def cflags():
    """Compile flags. No -ffast-math: NaN and inf keep IEEE meaning (relu(nan) is nan, as
    eager); -fno-math-errno lets math calls vectorize; -fwrapv gives integer overflow
    NumPy's wrap-around instead of undefined behaviour."""
    return ["-O3", "-fPIC", "-shared", "-fopenmp", "-fno-math-errno", "-fno-trapping-math",
            "-fwrapv",                  # signed integer overflow wraps, as NumPy's
            *_arch_flags(), *config.cpp.extra_flags]


def _links_mvec(cc):
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "t.c")
        with open(src, "w") as f:
            f.write("int f(void){return 0;}\n")
        r = subprocess.run([cc, "-shared", "-fPIC", src, "-o", os.path.join(d, "t.so"),
                            "-lmvec", "-lm"], capture_output=True, timeout=60)
        return r.returncode == 0


def has_libmvec():
    """Whether glibc's vector math library links (x86-64 glibc >= 2.22)."""
    return _toolchain(find_compiler())["mvec"]


def build_shared(src_path, out_path):
    """Compile C file `src_path` into shared object `out_path`; CompileError on failure."""
    cc = find_compiler()
    libs = (["-lmvec"] if has_libmvec() else []) + ["-lm"]
    cmd = [cc, *cflags(), src_path, "-o", out_path, *libs]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise CompileError(f"C compilation failed ({' '.join(cmd)}):\n{r.stderr[-4000:]}")
    return out_path
