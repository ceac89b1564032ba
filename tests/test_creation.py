"""Creation functions against PyTorch: dtype inference, sizes, ranges, memory sharing."""
import math

import numpy as np
import pytest

from oracle import check, check_error, torch
import ember


def same(e, t):
    """ember tensor e equals torch tensor t in dtype, shape and values."""
    assert str(e.dtype) == str(t.dtype), (e.dtype, t.dtype)
    assert tuple(e.shape) == tuple(t.shape), (tuple(e.shape), tuple(t.shape))
    a = e.float().numpy() if e.dtype is ember.bfloat16 else e.numpy()
    b = t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy()
    np.testing.assert_array_equal(a, b)


def both(fn):
    """fn(L) for L = ember and torch, compared exactly."""
    e, t = fn(ember), fn(torch)
    same(e, t)
    return e


# ------------------------------------------------------------ tensor(): inference

DATA = [
    True, [True, False], 3, [1, 2, 3], 2.5, [1, 2.5], [True, 2], [True, 2.0],
    [[1, 2], [3, 4]], [[1.5], [2.0]], 1 + 2j, [1, 2j], [True, 1j], [1.0, 2j],
    [], [[]], [[], []], (1, 2), [(1, 2), (3, 4)], [np.int32(3), 4], np.float64(2.5),
    np.int16(7), np.bool_(True), [np.float32(1.5)], [2 ** 40, 1],
]


@pytest.mark.parametrize("data", DATA, ids=[repr(d) for d in DATA])
def test_tensor_infers_dtype(data):
    both(lambda L: L.tensor(data))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64", "int32", "uint8", "bool",
                                   "complex64", "int8"])
def test_tensor_explicit_dtype(dtype):
    both(lambda L: L.tensor([[0, 1.0], [2.0, 3]], dtype=getattr(L, dtype)))


@pytest.mark.parametrize("default", ["float64", "float16"])
def test_tensor_follows_default_dtype(default):
    for L in (ember, torch):
        L.set_default_dtype(getattr(L, default))
    try:
        both(lambda L: L.tensor([1.0, 2]))
        if default == "float64":       # float16's complex32 is not an ember dtype
            both(lambda L: L.tensor([1j, 2]))
        both(lambda L: L.tensor(3.5))
        both(lambda L: L.zeros(2))
        both(lambda L: L.arange(0, 1, 0.25))
        both(lambda L: L.full((2,), 1.5))
    finally:
        for L in (ember, torch):
            L.set_default_dtype(L.float32)


@pytest.mark.parametrize("arr", [np.arange(6, dtype=np.int32).reshape(2, 3),
                                 np.array([1.5, 2.5], np.float16), np.array(3.0),
                                 np.zeros((0, 2), np.uint8), np.array([True, False])])
def test_tensor_of_ndarray_copies(arr):
    e = both(lambda L: L.tensor(arr))
    arr_copy = arr.copy()
    e.copy_(ember.ones_like(e))
    np.testing.assert_array_equal(arr, arr_copy)


def test_tensor_of_noncontiguous_ndarray():
    arr = np.arange(12.0).reshape(3, 4).T
    e = both(lambda L: L.tensor(arr))
    assert e.is_contiguous()


def test_tensor_of_tensor_copies_and_keeps_dtype():
    src = ember.arange(4.0)
    t = ember.tensor(src)
    t.add_(1)
    assert src.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert t.dtype is ember.float32 and t.device == src.device
    assert not t.requires_grad and t.grad_fn is None


def test_tensor_of_list_of_tensors():
    both(lambda L: L.tensor([L.tensor(1.5), L.tensor(2.5)]))
    both(lambda L: L.tensor([L.tensor(1), L.tensor(2)]))


def test_tensor_requires_grad():
    t = ember.tensor([1.0, 2.0], requires_grad=True)
    assert t.requires_grad and t.is_leaf
    (t * t).sum().backward()
    assert t.grad.tolist() == [2.0, 4.0]


@pytest.mark.parametrize("fn", [
    lambda L: L.tensor([[1, 2], [3]]),
    lambda L: L.tensor([1, "a"]),
    lambda L: L.tensor("abc"),
    lambda L: L.tensor([1, 2], requires_grad=True),
    lambda L: L.tensor(object()),
    lambda L: L.tensor([1, None]),
])
def test_tensor_errors(fn):
    check_error(fn)


def test_tensor_bad_device():
    with pytest.raises(RuntimeError):
        ember.tensor([1.0], device="cuda")


# ------------------------------------------------------- as_tensor / from_numpy

def test_as_tensor_shares_ndarray_and_tensor():
    arr = np.arange(3.0)
    t = ember.as_tensor(arr)
    arr[0] = 7
    assert t[0].item() == 7
    src = ember.arange(3.0)
    assert ember.as_tensor(src) is src
    same(ember.as_tensor(src, dtype=ember.float64), torch.as_tensor(torch.arange(3.0), dtype=torch.float64))
    both(lambda L: L.as_tensor([1, 2], dtype=L.float16))
    both(lambda L: L.as_tensor(np.arange(3, dtype=np.int16), dtype=L.int64))
    both(lambda L: L.asarray([[1.5, 2]]))


def test_from_numpy_shares_memory_both_ways():
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = ember.from_numpy(arr)
    arr[0, 0] = 10
    assert t[0, 0].item() == 10
    t[1, 2] = -1
    assert arr[1, 2] == -1
    t.add_(1)
    assert arr[0, 0] == 11
    assert t.numpy() is arr or np.shares_memory(t.numpy(), arr)
    assert type(t) is ember.Tensor and t.dtype is ember.float32


@pytest.mark.parametrize("npdtype", [np.float64, np.float32, np.float16, np.complex64,
                                     np.complex128, np.int64, np.int32, np.int16, np.int8,
                                     np.uint8, np.bool_])
def test_from_numpy_dtypes(npdtype):
    arr = np.arange(4).astype(npdtype)
    both(lambda L: L.from_numpy(arr.copy()))


def test_from_numpy_strides_kept():
    arr = np.arange(12.0).reshape(3, 4)[:, ::2]
    e, t = ember.from_numpy(arr), torch.from_numpy(arr)
    assert e.stride() == t.stride() and np.shares_memory(e.numpy(), arr)


@pytest.mark.parametrize("bad", [[1, 2], np.array(["a"]), np.array([1], dtype=object), np.arange(3)[::-1], 3])
def test_from_numpy_errors(bad):
    check_error(lambda L: L.from_numpy(bad))


def test_from_numpy_is_not_counted():
    before = ember.memory_allocated()
    t = ember.from_numpy(np.zeros(1000))
    assert ember.memory_allocated() == before
    del t


# -------------------------------------------------- zeros / ones / empty / full

SIZE_FORMS = [(2, 3), ((2, 3),), ([2, 3],), ((),), ([],), (0,), (4,), ((0, 5),), (np.int64(3),)]


@pytest.mark.parametrize("name", ["zeros", "ones"])
@pytest.mark.parametrize("size", SIZE_FORMS, ids=str)
def test_zeros_ones_size_forms(name, size):
    both(lambda L: getattr(L, name)(*size))


@pytest.mark.parametrize("size", SIZE_FORMS, ids=str)
def test_empty_size_forms(size):
    e, t = ember.empty(*size), torch.empty(*size)
    assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype)


def test_size_from_torch_size_and_tensor_dims():
    both(lambda L: L.zeros(L.Size([2, 1])))
    both(lambda L: L.ones(L.tensor(2), 3))


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64", "float16", "bfloat16",
                                   "float64", "complex64"])
def test_factories_dtype(dtype):
    both(lambda L: L.zeros(2, dtype=getattr(L, dtype)))
    both(lambda L: L.ones(2, 2, dtype=getattr(L, dtype)))
    both(lambda L: L.full((2,), 1, dtype=getattr(L, dtype)))
    e, t = ember.empty(3, dtype=getattr(ember, dtype)), torch.empty(3, dtype=getattr(torch, dtype))
    assert str(e.dtype) == str(t.dtype)


FILLS = [True, 3, -2, 2.5, float("inf"), 1 + 1j, np.float32(1.5), np.int8(3)]


@pytest.mark.parametrize("fill", FILLS, ids=repr)
def test_full_infers_dtype(fill):
    both(lambda L: L.full((2, 2), fill))


def test_full_tensor_fill_and_size_forms():
    both(lambda L: L.full([3], L.tensor(2.0)))
    both(lambda L: L.full((), 7))
    both(lambda L: L.full((2, 0), 1.0))


@pytest.mark.parametrize("name", ["zeros", "ones", "empty"])
def test_requires_grad(name):
    for L in (ember, torch):
        t = getattr(L, name)(2, 3, requires_grad=True)
        assert t.requires_grad and t.is_leaf
    full = ember.full((2,), 1.5, requires_grad=True)
    assert full.requires_grad
    (full * 2).sum().backward()
    assert full.grad.tolist() == [2.0, 2.0]


@pytest.mark.parametrize("fn", [
    lambda L: L.zeros(-1),
    lambda L: L.ones(2, -3),
    lambda L: L.empty(-2),
    lambda L: L.full((-1,), 2.0),
    lambda L: L.zeros(2.5),
    lambda L: L.zeros((2, 1.5)),
    lambda L: L.zeros("a"),
    lambda L: L.ones(2, dtype=L.int64, requires_grad=True),
    lambda L: L.full((2,), "a"),
    lambda L: L.zeros(2, dtype="float32"),
])
def test_factory_errors(fn):
    check_error(fn)


# ------------------------------------------------------------------ *_like

@pytest.mark.parametrize("name", ["zeros_like", "ones_like"])
@pytest.mark.parametrize("arr", [np.zeros((2, 3), np.float64), np.zeros((0, 2), np.int32),
                                 np.array(1.5, np.float32), np.zeros(3, np.bool_)], ids=str)
def test_like(name, arr):
    check(lambda L, a: getattr(L, name)(a), arr, grad=False)
    check(lambda L, a: getattr(L, name)(a, dtype=L.float16), arr, grad=False)


def test_full_like_and_empty_like():
    check(lambda L, a: L.full_like(a, 7), np.zeros((2, 2), np.float32), grad=False)
    check(lambda L, a: L.full_like(a, 2.7), np.zeros(3, np.int64), grad=False)
    check(lambda L, a: L.full_like(a, True, dtype=L.bool), np.zeros(3), grad=False)
    e = ember.empty_like(ember.zeros(2, 3, dtype=ember.int16))
    assert e.shape == (2, 3) and e.dtype is ember.int16


def test_like_does_not_inherit_requires_grad():
    for L in (ember, torch):
        x = L.zeros(3, requires_grad=True)
        assert not L.zeros_like(x).requires_grad
        assert L.ones_like(x, requires_grad=True).requires_grad


# --------------------------------------------------------------------- arange

ARANGES = [(5,), (0, 5), (1, 10, 3), (10, 0, -2), (0.0, 1.0, 0.1), (0, 1, 0.3), (1, 2.5),
           (-1.5, 1.5, 0.5), (0, 0), (3, 3, 1), (2.5,), (0, 1, 1 / 3), (1e6, 1e6 + 5),
           (0, 10, 2.5), (0.1, 0.7, 0.2), (-5, -1), (np.int32(2), 7)]


@pytest.mark.parametrize("args", ARANGES, ids=str)
def test_arange(args):
    e, t = ember.arange(*args), torch.arange(*args)
    assert str(e.dtype) == str(t.dtype) and tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float64", "int32", "float16", "bfloat16", "uint8", "int8"])
def test_arange_dtype(dtype):
    e = both(lambda L: L.arange(0, 10, 2, dtype=getattr(L, dtype)))
    assert e.dtype is getattr(ember, dtype)
    e, t = ember.arange(0, 1, 0.25, dtype=ember.float64), torch.arange(0, 1, 0.25, dtype=torch.float64)
    same(e, t)


def test_arange_float_step_length_rule():
    # torch: length = ceil((end - start) / step) in double precision
    for start, end, step in [(0, 1, 0.1), (1, 1.3, 0.1), (0, 0.3, 0.1), (-1, 1, 0.2)]:
        n = math.ceil((end - start) / step)
        assert ember.arange(start, end, step).numel() == n == torch.arange(start, end, step).numel()


def test_arange_tensor_bounds_and_keywords():
    both(lambda L: L.arange(L.tensor(4)))
    both(lambda L: L.arange(start=1, end=4))
    both(lambda L: L.arange(end=3))
    both(lambda L: L.arange(0, L.tensor(2.0)))
    both(lambda L: L.arange(L.tensor(3), L.tensor(5.5)))
    both(lambda L: L.arange(True))


def test_arange_requires_grad():
    a = ember.arange(3.0, requires_grad=True)
    assert a.requires_grad and a.is_leaf


@pytest.mark.parametrize("fn", [
    lambda L: L.arange(0, 1, 0),
    lambda L: L.arange(0, 5, -1),
    lambda L: L.arange(5, 0),
    lambda L: L.arange(0, float("inf")),
    lambda L: L.arange(0, float("nan")),
    lambda L: L.arange(0, 10, dtype=L.bool),
    lambda L: L.arange(3, dtype=L.int64, requires_grad=True),
    lambda L: L.arange("a"),
])
def test_arange_errors(fn):
    check_error(fn)


# ------------------------------------------------------------ linspace / logspace

LINSPACES = [(0, 1, 5), (0, 10, 1), (0, 10, 0), (-2.5, 2.5, 11), (1, 1, 3), (10, 0, 4),
             (0, 1, 2), (3, 7, 5)]


@pytest.mark.parametrize("args", LINSPACES, ids=str)
def test_linspace(args):
    e, t = ember.linspace(*args), torch.linspace(*args)
    assert str(e.dtype) == str(t.dtype) and tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float64", "float16", "bfloat16", "int64", "int32", "uint8",
                                   "complex64"])
def test_linspace_dtype(dtype):
    e = ember.linspace(0, 10, 7, dtype=getattr(ember, dtype))
    t = torch.linspace(0, 10, 7, dtype=getattr(torch, dtype))
    assert str(e.dtype) == str(t.dtype)
    np.testing.assert_allclose(e.to(ember.complex128).numpy(), t.to(torch.complex128).numpy(),
                               rtol=1e-2 if "16" in dtype else 1e-6)


def test_linspace_complex_and_tensor_bounds():
    e, t = ember.linspace(0, 1 + 1j, 3), torch.linspace(0, 1 + 1j, 3)
    assert str(e.dtype) == str(t.dtype)
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6)
    e, t = ember.linspace(ember.tensor(0.0), ember.tensor(1.0), 3), torch.linspace(torch.tensor(0.0), torch.tensor(1.0), 3)
    same(e, t)


@pytest.mark.parametrize("args,kw", [((0, 2, 3), {}), ((0, 3, 4), {"base": 2}),
                                     ((-1, 1, 5), {}), ((0, 1, 0), {}), ((1, 2, 3), {"base": 2.5}),
                                     ((0, 2, 3), {"dtype": "float64"}), ((0, 3, 4), {"dtype": "int64"}),
                                     ((0, 2, 3), {"dtype": "float16"}), ((0, 2, 3), {"dtype": "int32", "base": 2})],
                         ids=str)
def test_logspace(args, kw):
    def fn(L):
        k = dict(kw)
        if "dtype" in k:
            k["dtype"] = getattr(L, k["dtype"])
        return L.logspace(*args, **k)
    e, t = fn(ember), fn(torch)
    assert str(e.dtype) == str(t.dtype) and tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(e.to(ember.float64).numpy(), t.double().numpy(), rtol=2e-3)


@pytest.mark.parametrize("fn", [
    lambda L: L.linspace(0, 1, -1),
    lambda L: L.logspace(0, 1, -2),
    lambda L: L.linspace(0, 1, 2.5),
    lambda L: L.linspace(0, 1),
])
def test_linspace_errors(fn):
    check_error(fn)


def test_linspace_requires_grad():
    for L in (ember, torch):
        t = L.linspace(0, 1, 3, requires_grad=True)
        assert t.requires_grad and t.is_leaf


# ------------------------------------------------------------------------ eye

@pytest.mark.parametrize("args", [(3,), (2, 4), (4, 2), (0,), (0, 3), (1, 1)], ids=str)
@pytest.mark.parametrize("dtype", [None, "int64", "bool", "float64", "bfloat16"])
def test_eye(args, dtype):
    both(lambda L: L.eye(*args, dtype=None if dtype is None else getattr(L, dtype)))


def test_eye_keywords_and_grad():
    both(lambda L: L.eye(n=2, m=3))
    e = ember.eye(2, requires_grad=True)
    assert e.requires_grad and e.is_leaf


@pytest.mark.parametrize("fn", [lambda L: L.eye(-1), lambda L: L.eye(2, -1),
                                lambda L: L.eye(2.5)])
def test_eye_errors(fn):
    check_error(fn)


# ------------------------------------------------------------------ scalar_tensor

def test_scalar_tensor():
    both(lambda L: L.scalar_tensor(3))
    both(lambda L: L.scalar_tensor(2.5, dtype=L.float64))
    both(lambda L: L.scalar_tensor(True))


# ------------------------------------------------------------ Tensor.new_*

@pytest.mark.parametrize("src_dtype", ["float64", "int32", "float16"])
def test_new_methods(src_dtype):
    def fn(L, name, *a, **k):
        src = L.zeros(2, dtype=getattr(L, src_dtype))
        return getattr(src, name)(*a, **k)
    for name, a in [("new_zeros", (2, 3)), ("new_ones", ((3,),)), ("new_full", ((2,), 4)),
                    ("new_tensor", ([1, 2],)), ("new_zeros", ([],))]:
        same(fn(ember, name, *a), fn(torch, name, *a))
    same(fn(ember, "new_ones", 2, dtype=ember.bool), fn(torch, "new_ones", 2, dtype=torch.bool))
    e, t = fn(ember, "new_empty", 4), fn(torch, "new_empty", 4)
    assert str(e.dtype) == str(t.dtype) and e.shape == t.shape


def test_new_tensor_of_tensor_and_requires_grad():
    src = ember.zeros(2)
    t = src.new_tensor(ember.tensor([1, 2]))
    assert t.dtype is ember.float32 and t.tolist() == [1.0, 2.0]
    r = src.new_zeros(3, requires_grad=True)
    assert r.requires_grad
    with pytest.raises(RuntimeError):
        src.new_zeros(-1)


def test_factories_allocate_exact_bytes():
    before = ember.memory_allocated()
    ts = [ember.zeros(10, 10), ember.ones(3, dtype=ember.int16), ember.full((4,), 1.5, dtype=ember.float64),
          ember.arange(5), ember.linspace(0, 1, 8), ember.eye(3), ember.tensor([1, 2, 3]),
          ember.empty(7, dtype=ember.uint8), ember.logspace(0, 1, 4)]
    expect = 400 + 6 + 32 + 40 + 32 + 36 + 24 + 7 + 16
    assert ember.memory_allocated() - before == expect
    del ts
    assert ember.memory_allocated() == before
