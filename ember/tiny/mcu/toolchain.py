"""Build dependency-free C for a Cortex-M (an ELF for the emulator) and for the host (an
executable whose output must equal the microcontroller's, byte for byte).

Cross compiler, first found wins: `python -m ziglang cc -target thumb-freestanding-eabihf`
(the pip `ziglang` wheel: clang + lld + compiler-rt, nothing else to install), then Debian's
`arm-none-eabi-gcc`. Both link runtime/startup.c (vectors, reset, memcpy/memset, the MMIO
output channel) with runtime/link.ld (1 MB flash, exactly 256 KB SRAM).

Both builds use -ffp-contract=off: the compiler must not fuse a multiply and an add the
kernels write separately (that rounds once instead of twice and changes the integers);
where the kernels want a fused multiply-add they say so (fmaf), and -fno-math-errno lets
clang emit it as one VFMA.F32 instead of a call into a software fmaf.

Built files are cached under EMBER_CACHE_DIR/tiny keyed by the sources, flags and compiler
version (written to a temporary name and renamed into place, as the inductor's cache).
"""
import functools
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

__all__ = ["FLASH_BASE", "FLASH_SIZE", "SRAM_BASE", "SRAM_SIZE", "RUNTIME_DIR", "KERNELS_DIR",
           "find_cross_compiler", "build_elf", "build_host", "run_host", "CompilerNotFound"]

FLASH_BASE, FLASH_SIZE = 0x00000000, 1024 * 1024
SRAM_BASE, SRAM_SIZE = 0x20000000, 256 * 1024
RUNTIME_DIR = os.path.join(os.path.dirname(__file__), "runtime")
KERNELS_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "kernels")

_COMMON = ["-std=c99", "-Wall", "-Werror=implicit-function-declaration", "-ffp-contract=off",
           "-fno-strict-aliasing", "-fno-math-errno"]
_CPUS = {"cortex-m4": ("cortex_m4+vfp4d16sp", "cortex-m4", "fpv4-sp-d16"),
         "cortex-m7": ("cortex_m7+fp_armv8d16", "cortex-m7", "fpv5-d16")}


class CompilerNotFound(NotImplementedError):
    """No cross compiler for Cortex-M here."""


@functools.lru_cache(maxsize=None)
def find_cross_compiler():
    """('zig' | 'gcc', argv prefix) of the first Cortex-M C compiler found."""
    try:
        import ziglang  # noqa: F401
        return "zig", (sys.executable, "-m", "ziglang", "cc")
    except ImportError:
        pass
    gcc = shutil.which("arm-none-eabi-gcc")
    if gcc:
        return "gcc", (gcc,)
    raise CompilerNotFound(
        "ember.tiny: no Cortex-M C compiler: install the 'ziglang' package (pip install "
        "'ember[tiny]') or Debian's gcc-arm-none-eabi")


def _cross_flags(kind, cpu, opt):
    zig_cpu, gcc_cpu, fpu = _CPUS[cpu]
    if kind == "zig":
        arch = ["-target", "thumb-freestanding-eabihf", f"-mcpu={zig_cpu}", "-g0",
                "-Wl,--entry=tiny_reset"]
    else:
        arch = [f"-mcpu={gcc_cpu}", "-mthumb", "-mfloat-abi=hard", f"-mfpu={fpu}",
                "-nostartfiles", "--specs=nosys.specs", "-Wl,--entry=tiny_reset"]
    return arch + [opt, "-ffreestanding", "-fno-builtin", "-fno-unwind-tables",
                   "-fno-asynchronous-unwind-tables", "-ffunction-sections", "-fdata-sections",
                   "-Wl,--gc-sections", "-I", RUNTIME_DIR, "-I", KERNELS_DIR] + _COMMON


@functools.lru_cache(maxsize=None)
def _version(argv):
    try:
        out = subprocess.run(list(argv) + ["--version"], capture_output=True, text=True,
                             timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise CompilerNotFound(f"ember.tiny: the compiler {argv[-1]} does not run: {e}")
    return out.stdout.strip()


def _cache_dir():
    from ..._inductor import config
    return os.path.join(config.cache_dir(), "tiny")


def _sources(sources):
    """[(name, text)] from paths or (name, text) pairs."""
    out = []
    for s in sources:
        if isinstance(s, tuple):
            out.append(s)
        else:
            with open(s) as f:
                out.append((os.path.basename(s), f.read()))
    return out


def _headers():
    parts = []
    for d in (RUNTIME_DIR, KERNELS_DIR):
        for name in sorted(os.listdir(d)):
            if name.endswith((".h", ".c")):
                with open(os.path.join(d, name)) as f:
                    parts.append((name, f.read()))
    return parts


def _linker_script(stack_bytes, sram_bytes):
    """runtime/link.ld with this build's stack size (and SRAM size: a bigger one builds a
    program for a bigger board, which the emulator's 256 KB then rejects)."""
    if stack_bytes <= 0 or stack_bytes % 8:
        raise ValueError(f"build_elf: stack_bytes must be a positive multiple of 8, got "
                         f"{stack_bytes}")
    with open(os.path.join(RUNTIME_DIR, "link.ld")) as f:
        text = f.read()
    return (text.replace("__stack_size = 8192;", f"__stack_size = {int(stack_bytes)};")
            .replace("LENGTH = 256K", f"LENGTH = {int(sram_bytes)}"))


def _build(tag, sources, argv, flags, suffix, script=None):
    """Compile `sources` with argv + flags (+ linker script text) into a cached file."""
    srcs = _sources(sources)
    h = hashlib.sha256()
    for part in [tag, _version(tuple(argv)), " ".join(flags), script or ""] + \
            [x for pair in srcs + _headers() for x in pair]:
        h.update(part.encode())
        h.update(b"\0")
    key = h.hexdigest()[:40]
    d = os.path.join(_cache_dir(), key[:2])
    out = os.path.join(d, key + suffix)
    if os.path.exists(out):
        return out
    os.makedirs(d, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=d) as tmp:
        paths = []
        for name, text in srcs:
            p = os.path.join(tmp, name)
            with open(p, "w") as f:
                f.write(text)
            paths.append(p)
        if script is not None:
            with open(os.path.join(tmp, "link.ld"), "w") as f:
                f.write(script)
            flags = flags + ["-T", os.path.join(tmp, "link.ld")]
        target = os.path.join(tmp, "out" + suffix)
        res = subprocess.run(list(argv) + paths + flags + ["-o", target], capture_output=True,
                             text=True, timeout=600)
        if res.returncode != 0:
            why = ""
            if "SRAM" in res.stderr and ("will not fit" in res.stderr
                                         or "overflowed" in res.stderr):
                why = (f" — the program's stack + .data + .bss do not fit in the board's "
                       f"{SRAM_SIZE // 1024} KB of SRAM")
            raise RuntimeError(f"ember.tiny: {tag} build failed ({' '.join(argv[-2:])}){why}:"
                               f"\n{res.stderr[-4000:]}")
        os.replace(target, out)
    return out


def build_elf(sources, cpu="cortex-m4", opt="-O2", stack_bytes=8192, sram_bytes=SRAM_SIZE):
    """A Cortex-M ELF of C `sources` (paths or (filename, text) pairs) linked with the
    startup code; its cached path. `opt`: -O2 or -Os. The linker rejects a program whose
    stack + .data + .bss exceed `sram_bytes` (RuntimeError quoting it)."""
    if cpu not in _CPUS:
        raise ValueError(f"build_elf: cpu must be one of {sorted(_CPUS)}, got {cpu!r}")
    kind, argv = find_cross_compiler()
    rt = [os.path.join(RUNTIME_DIR, n) for n in ("startup.c", "tiny_io_common.c")]
    return _build(f"elf-{cpu}", rt + list(sources), argv, _cross_flags(kind, cpu, opt), ".elf",
                  _linker_script(stack_bytes, sram_bytes))


def build_host(sources, opt="-O2"):
    """A host executable of the same `sources` with the system C compiler; its cached path."""
    from ..._inductor import cpp_builder
    cc = cpp_builder.find_compiler()
    rt = [os.path.join(RUNTIME_DIR, n) for n in ("tiny_io_host.c", "tiny_io_common.c")]
    flags = [opt, "-I", RUNTIME_DIR, "-I", KERNELS_DIR] + _COMMON + ["-lm"]
    return _build("host", rt + list(sources), (cc,), flags, ".exe")


def run_host(exe, timeout=120):
    """(stdout bytes, exit status) of a host build."""
    res = subprocess.run([exe], capture_output=True, timeout=timeout)
    return res.stdout, res.returncode
