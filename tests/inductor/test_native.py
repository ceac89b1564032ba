"""ember._inductor.native: hand-written C kernels for eager ops, with a NumPy fallback."""
import ctypes

import numpy as np
import pytest

from ember._inductor import config, native

SRC = "void axpy(long n, float a, const float* x, float* y){for(long i=0;i<n;i++) y[i]+=a*x[i];}"


def test_builds_and_runs():
    if not native.available():
        pytest.skip("no C compiler")
    lib = native.load_native("axpy test", SRC)
    x, y = np.arange(5, dtype=np.float32), np.ones(5, np.float32)
    lib.axpy(ctypes.c_long(5), ctypes.c_float(2.0), x.ctypes.data_as(ctypes.c_void_p),
             y.ctypes.data_as(ctypes.c_void_p))
    np.testing.assert_array_equal(y, 1 + 2 * np.arange(5))


def test_no_compiler_gives_none_and_one_warning(monkeypatch, tmp_path):
    monkeypatch.setattr(config.cpp, "cxx", str(tmp_path / "no-such-cc"))
    src = SRC + "\n/* no compiler */"
    with pytest.warns(UserWarning, match="no C compiler"):
        assert native.load_native("nocc test", src) is None


def test_bad_code_gives_none_and_a_warning(tmp_path, monkeypatch):
    if not native.available():
        pytest.skip("no C compiler")
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    with pytest.warns(UserWarning, match="could not be built"):
        assert native.load_native("broken test", "this is not C;") is None


def _child_threads(q):
    q.put(native.threads())


def test_threads_follow_set_num_threads_and_are_one_in_a_forked_child():
    import multiprocessing as mp
    import ember
    old = ember.get_num_threads()
    try:
        ember.set_num_threads(2)
        assert native.threads() == 2
        ctx = mp.get_context("fork")
        q = ctx.Queue()
        p = ctx.Process(target=_child_threads, args=(q,))
        p.start()
        got = q.get(timeout=60)
        p.join(60)
        assert got == 1      # GNU OpenMP's pool does not survive fork()
    finally:
        ember.set_num_threads(old)
