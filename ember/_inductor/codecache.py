"""Disk cache of generated C and its shared objects (EMBER_CACHE_DIR, default ~/.cache/ember).

Why: compiling C costs ~0.1-1 s per graph; a second process compiling the same model must
load the .so instead. The key hashes the generated code, the compiler flags and the
compiler's version, so a change to any of them builds anew. Writes go to a temporary file
in the same directory and are renamed into place (atomic on POSIX), so concurrent
processes never load a half-written object. Clear with
`python -m ember._inductor.codecache --clear`.
"""
import ctypes
import hashlib
import os
import shutil
import sys
import tempfile

from . import config, cpp_builder

__all__ = ["code_hash", "load", "clear", "stats"]

_LOADED = {}                   # key -> ctypes.CDLL (this process)
stats = {"compiles": 0, "disk_hits": 0, "memory_hits": 0}


def code_hash(code):
    """The cache key of `code` under the current flags and compiler."""
    h = hashlib.sha256()
    for part in (code, " ".join(cpp_builder.cflags()), cpp_builder.compiler_version(),
                 str(cpp_builder.has_libmvec())):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:40]


def _dir():
    return os.path.join(config.cache_dir(), "inductor")


def load(code):
    """The loaded shared object of C source `code`: from memory, from disk, or compiled now."""
    key = code_hash(code)
    lib = _LOADED.get(key)
    if lib is not None:
        stats["memory_hits"] += 1
        return lib, key
    d = os.path.join(_dir(), key[:2])
    so = os.path.join(d, key + ".so")
    if os.path.exists(so):
        stats["disk_hits"] += 1
    else:
        os.makedirs(d, exist_ok=True)
        src = os.path.join(d, key + ".c")
        _write_atomic(src, code)
        fd, tmp = tempfile.mkstemp(suffix=".so", dir=d)
        os.close(fd)
        try:
            cpp_builder.build_shared(src, tmp)
            os.replace(tmp, so)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        stats["compiles"] += 1
    lib = _LOADED[key] = ctypes.CDLL(so)
    return lib, key


def _write_atomic(path, text):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def clear():
    """Delete the on-disk inductor cache (the loaded objects stay usable)."""
    shutil.rmtree(_dir(), ignore_errors=True)


if __name__ == "__main__":
    if "--clear" in sys.argv[1:]:
        clear()
        print(f"cleared {_dir()}")
    else:
        print(_dir())
