"""ember.cpu's caching allocator: buffers are reused, counters stay exact, user views
of a buffer keep it out of the cache, and results equal the uncached ones."""
import gc

import numpy as np
import pytest

import ember


def run_steps(a, b, n=4):
    out = None
    for _ in range(n):
        out = ((a * b).exp() + a) * 0.5
    return out


def test_reuses_buffers_and_matches_uncached():
    a, b = ember.randn(64, 64), ember.randn(64, 64)
    expect = run_steps(a, b).numpy().copy()
    with ember.cpu.caching_allocator() as alloc:
        got = run_steps(a, b)
        np.testing.assert_array_equal(got.numpy(), expect)
        assert alloc.hits > alloc.misses
        assert ember.memory_reserved() >= ember.memory_allocated()


def test_memory_counters_are_exact_with_the_cache():
    gc.collect()
    a, b = ember.randn(32, 32), ember.randn(32, 32)
    base = ember.memory_allocated()
    with ember.cpu.caching_allocator() as alloc:
        c = a * b
        assert ember.memory_allocated() == base + c.nbytes
        del c
        assert ember.memory_allocated() == base
        assert alloc.cached_bytes > 0
        alloc.empty_cache()
        assert alloc.cached_bytes == 0 and ember.memory_reserved() == base


def test_a_buffer_seen_by_numpy_is_not_recycled():
    a, b = ember.randn(16, 16), ember.randn(16, 16)
    with ember.cpu.caching_allocator():
        c = a * b
        kept = c.numpy()
        snapshot = kept.copy()
        del c
        for _ in range(3):
            d = a + b
            assert not np.shares_memory(kept, d.numpy())
        np.testing.assert_array_equal(kept, snapshot)


def test_autograd_under_the_cache_matches_plain():
    def grad(cache):
        x = ember.tensor([0.5, 1.0, 2.0], requires_grad=True)
        ctx = ember.cpu.caching_allocator() if cache else _null()
        with ctx:
            ((x * x).exp() * x).sum().backward()
        return x.grad.numpy()
    np.testing.assert_allclose(grad(True), grad(False))


class _null:
    def __enter__(self):
        return None

    def __exit__(self, *e):
        return False


def test_guard_with_an_allocator_object_and_nesting():
    outer, inner = ember.cpu.CachingAllocator(), ember.cpu.CachingAllocator()
    with ember.cpu.WithCPUCachingAllocatorGuard(outer):
        assert ember.cpu.current_allocator() is outer
        with ember.cpu.WithCPUCachingAllocatorGuard(inner):
            assert ember.cpu.current_allocator() is inner
        assert ember.cpu.current_allocator() is outer
    assert ember.cpu.current_allocator() is None
    with pytest.raises(TypeError):
        ember.cpu.WithCPUCachingAllocatorGuard(object())


def test_buffers_outlive_the_guard_safely():
    a = ember.randn(8)
    with ember.cpu.caching_allocator():
        c = a * 2
    assert c.tolist() == (a * 2).tolist()
    del c


def test_matmul_outputs_come_from_the_cache():
    a, b = ember.randn(32, 16), ember.randn(16, 8)
    expect = (a @ b).numpy().copy()
    with ember.cpu.caching_allocator() as alloc:
        for _ in range(3):
            c = a @ b
            np.testing.assert_allclose(c.numpy(), expect, rtol=1e-6)
            del c
        assert alloc.hits >= 2
    gc.collect()
