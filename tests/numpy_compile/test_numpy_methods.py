"""ember._numpy's ndarray methods, attributes, Python operators and dtype arguments against
NumPy itself (values, dtype, shape, exception type), on real and on fake tensors."""
import operator

import numpy as np
import pytest

import ember
import ember._numpy as enp
from test_numpy_impl import A, B, F32, F64, I64, S, _check, _exc_base, _fakeify, _to_ember
from ember._subclasses.fake_tensor import FakeTensorMode

M = A((3, 4), F64)
METHOD_SAMPLES = {
    "sum": [S(), S(axis=0), S(axis=1, keepdims=True), S(dtype=F32)],
    "prod": [S(), S(axis=0)], "mean": [S(), S(axis=1)], "std": [S(), S(ddof=1)],
    "var": [S(axis=0)], "max": [S(), S(axis=0)], "min": [S(axis=1, keepdims=True)],
    "argmax": [S(), S(axis=1)], "argmin": [S(axis=0)], "all": [S(), S(axis=0)],
    "any": [S(axis=1)], "cumsum": [S(), S(axis=1)], "cumprod": [S(axis=0)],
    "ravel": [S()], "repeat": [S(2), S(2, axis=0)], "diagonal": [S(), S(1)],
    "take": [S([0, 2]), S([1], axis=1)], "clip": [S(-1, 1), S(min=0)],
    "round": [S(), S(1)], "nonzero": [S()], "argsort": [S(kind="stable"), S(axis=0, kind="stable")],
    "searchsorted": [], "dot": [S(A((4, 2)))], "trace": [S()],
    "reshape": [S(4, 3), S((2, 6)), S(-1), S((-1, 2))], "transpose": [S(), S(1, 0),
                                                                      S((1, 0))],
    "astype": [S(F32), S("int64"), S(np.dtype("f2")), S(bool), S(F32, casting="same_kind"),
               S(I64, casting="safe")],
    "flatten": [S()], "copy": [S()], "squeeze": [S()], "swapaxes": [S(0, 1)],
    "view": [S()], "conj": [S()], "conjugate": [S()], "__copy__": [S()],
    "__deepcopy__": [S({})],
}
ARRAYS = [M, A((3, 4), I64), A((3, 4), B), A((3, 4), F32)]
DATA_DEPENDENT = {"nonzero"}


def _call_np(fn):
    with np.errstate(all="ignore"):
        try:
            return fn(), None
        except Exception as e:  # noqa: BLE001 - NumPy's exception is the expectation
            return None, e


def _compare(want, err, run, where, fake):
    try:
        got = run()
    except enp.Unsupported as e:
        raise AssertionError(f"{where}: Unsupported: {e}") from e
    except Exception as e:  # noqa: BLE001
        assert err is not None, f"{where}: ember raised {type(e).__name__}: {e}"
        assert isinstance(e, _exc_base(err)), f"{where}: {type(e).__name__} vs {err!r}"
        return
    assert err is None, f"{where}: NumPy raised {err!r}; ember returned"
    _check(got, want, where, fake=fake)


def test_every_method_has_samples():
    enp.lookup_method("sum")
    from ember._numpy import _ndarray
    # (__getitem__/__setitem__, sort and fill (in place) have their own tests below)
    assert set(_ndarray.METHODS) - {"__getitem__", "__setitem__", "sort", "fill"} <= set(
        METHOD_SAMPLES)
    for name in ("item", "tolist", "resize", "__bool__", "tofile"):
        assert enp.lookup_method(name) is None, name


@pytest.mark.parametrize("name", sorted(METHOD_SAMPLES))
@pytest.mark.parametrize("fake", [False, True])
def test_method_matches_numpy(name, fake):
    if fake and name in DATA_DEPENDENT:
        pytest.skip("data-dependent output shape")
    impl = enp.lookup_method(name)
    samples = METHOD_SAMPLES[name]
    if name == "searchsorted":
        arrays, samples = [np.sort(A((6,)))], [S(A((3,))), S(0.5, side="right")]
    else:
        arrays = ARRAYS
    for a in arrays:
        for args, kwargs in samples:
            want, err = _call_np(lambda: getattr(a.copy(), name)(*args, **kwargs))
            t = _to_ember(a)
            eargs = [_to_ember(x) for x in args]
            where = f"<{a.dtype}{list(a.shape)}>.{name}{args}{kwargs}"
            if fake:
                mode = FakeTensorMode(allow_non_fake_inputs=True)
                t, eargs = mode.from_tensor(t), [_fakeify(mode, x) for x in eargs]
                with mode:
                    _compare(want, err, lambda: impl(t, *eargs, **kwargs), where, fake)
            else:
                _compare(want, err, lambda: impl(t, *eargs, **kwargs), where, fake)


@pytest.mark.parametrize("name", ["T", "mT", "shape", "ndim", "size", "dtype", "itemsize",
                                  "nbytes", "real", "imag"])
def test_attribute_matches_numpy(name):
    for a in ARRAYS + [A((), F32), A((0, 2), I64), A((2, 3, 4), F32), A((3,), np.complex64)]:
        want, err = _call_np(lambda: getattr(a, name))
        got_fn = enp.lookup_attribute(name)
        where = f"<{a.dtype}{list(a.shape)}>.{name}"
        if isinstance(want, np.dtype):
            assert got_fn(_to_ember(a)) == want, where
            continue
        _compare(want, err, lambda: got_fn(_to_ember(a)), where, False)
    assert enp.lookup_attribute("flat") is None
    assert enp.lookup_attribute("ctypes") is None


BINOPS = [("add", operator.add), ("sub", operator.sub), ("mul", operator.mul),
          ("truediv", operator.truediv), ("floordiv", operator.floordiv),
          ("mod", operator.mod), ("pow", operator.pow), ("and_", operator.and_),
          ("or_", operator.or_), ("xor", operator.xor), ("lshift", operator.lshift),
          ("rshift", operator.rshift), ("eq", operator.eq), ("ne", operator.ne),
          ("lt", operator.lt), ("le", operator.le), ("gt", operator.gt), ("ge", operator.ge),
          ("matmul", operator.matmul), ("/", operator.truediv), ("@", operator.matmul),
          ("__floordiv__", operator.floordiv)]


def _operands():
    out = []
    for dt in (F32, F64, I64, B):
        lo = 0 if dt == I64 else -3
        out += [(A((3, 3), dt, lo), A((3, 3), dt, lo)), (A((3, 3), dt, lo), 2),
                (A((3, 3), dt, lo), 1.5), (3, A((3, 3), dt, lo))]
    out += [(A((3, 3), I64, 0), A((3, 3), F32)), (A((3, 3), np.int8, 0), 1000),
            (A((3, 3), I64, 0), A((3,), I64, 0)), (A((3, 3), I64, -3), 0)]
    return out


@pytest.mark.parametrize("opname,op", BINOPS, ids=[n for n, _ in BINOPS])
@pytest.mark.parametrize("fake", [False, True])
def test_binary_op_matches_numpy(opname, op, fake):
    for a, b in _operands():
        want, err = _call_np(lambda: op(a, b))
        ta, tb = _to_ember(a), _to_ember(b)
        if fake:
            mode = FakeTensorMode(allow_non_fake_inputs=True)
            ta, tb = _fakeify(mode, ta), _fakeify(mode, tb)
            with mode:
                _compare(want, err, lambda: enp.binary_op(opname, ta, tb), opname, fake)
        else:
            _compare(want, err, lambda: enp.binary_op(opname, ta, tb),
                     f"{a!r} {opname} {b!r}", fake)


@pytest.mark.parametrize("opname,op", [("neg", operator.neg), ("pos", operator.pos),
                                       ("invert", operator.invert), ("abs", operator.abs),
                                       ("-", operator.neg), ("~", operator.invert)])
def test_unary_op_matches_numpy(opname, op):
    for a in ARRAYS + [A((), F32), A((3,), np.int8)]:
        want, err = _call_np(lambda: op(a))
        _compare(want, err, lambda: enp.unary_op(opname, _to_ember(a)),
                 f"{opname} {a.dtype}", False)


@pytest.mark.parametrize("opname,op", [("iadd", operator.iadd), ("isub", operator.isub),
                                       ("imul", operator.imul),
                                       ("itruediv", operator.itruediv),
                                       ("ifloordiv", operator.ifloordiv),
                                       ("__iadd__", operator.iadd), ("+=", operator.iadd)])
def test_inplace_op_matches_numpy(opname, op):
    cases = [(A((3, 3), F32), A((3, 3), F64)), (A((3, 3), F64), 2),
             (A((3, 3), I64, 1), A((3, 3), I64, 1)), (A((3, 3), I64, 1), 1.5),
             (A((3, 3), np.int8, 1), 1000), (A((3,), F64), A((3, 3), F64)),
             (A((3, 3), F64), A((3,), I64, 1))]
    for a, b in cases:
        arr = a.copy()
        want, err = _call_np(lambda: op(arr, b))
        t = _to_ember(a)
        try:
            got = enp.inplace_op(opname, t, _to_ember(b))
        except Exception as e:  # noqa: BLE001
            assert err is not None, f"{opname} {a.dtype} {b!r}: ember raised {e!r}"
            assert isinstance(e, _exc_base(err)), f"{type(e)} vs {err!r}"
            continue
        assert err is None, f"{opname}: NumPy raised {err!r}"
        assert got is t
        _check(t, arr, f"{opname} {a.dtype} {b!r}")


def test_dtype_arguments():
    for d, want in ((np.float32, ember.float32), ("float32", ember.float32),
                    (np.dtype("f4"), ember.float32), (float, ember.float64),
                    (int, ember.int64), (bool, ember.bool), ("i1", ember.int8),
                    (np.complex128, ember.complex128), (ember.int16, ember.int16),
                    (None, None)):
        assert enp.to_ember_dtype(d) is want, d
    with pytest.raises(enp.Unsupported):
        enp.to_ember_dtype(np.uint16)
    with pytest.raises(TypeError):
        enp.to_ember_dtype("no-such-dtype")
    assert enp.to_numpy_dtype(ember.float16) == np.float16


def test_unsupported_arguments_raise_unsupported():
    t = ember.ones(3, dtype=ember.float64)
    with pytest.raises(enp.Unsupported):
        enp.lookup(np.sin)(t, out=t)
    with pytest.raises(enp.Unsupported):
        enp.lookup(np.add)(t, t, where=t > 0)
    with pytest.raises(enp.Unsupported):
        enp.lookup(np.sum)(t, out=t)
    with pytest.raises(enp.Unsupported):
        enp.lookup(np.sum)(ember.ones(3, dtype=ember.uint8))       # uint64 result
    with pytest.raises(enp.Unsupported):
        enp.lookup(np.pad)(t, 1, mode="median")
    assert "allclose" in enp.GRAPH_BREAK


def test_ufunc_dtype_argument():
    a = A((3,), I64)
    got = enp.lookup(np.add)(_to_ember(a), _to_ember(a), dtype=np.float32)
    _check(got, np.add(a, a, dtype=np.float32), "add(dtype=float32)")
    got = enp.lookup(np.true_divide)(_to_ember(a), 2, dtype="float32")
    _check(got, np.true_divide(a, 2, dtype="float32"), "true_divide(dtype=float32)")


def test_default_dtype_does_not_leak():
    """NumPy's float64 defaults hold whatever ember's default dtype is."""
    ember.set_default_dtype(ember.float32)
    assert enp.lookup(np.ones)((2,)).dtype is ember.float64
    assert enp.lookup(np.linspace)(0, 1, 3).dtype is ember.float64
    assert enp.lookup(np.true_divide)(ember.tensor([1, 2]), 2).dtype is ember.float64
    assert enp.lookup(np.mean)(ember.tensor([1, 2])).dtype is ember.float64
    assert enp.lookup(np.sum)(ember.tensor([True, True])).dtype is ember.int64




X = A((4, 5), F64)
GET_INDICES = [0, -1, (1, 2), slice(None, None, -1), (slice(None), slice(None, None, -2)),
               (slice(3, 0, -1), slice(1, None)), (Ellipsis, 1), (None, 0),
               ([0, 2],), (np.array([1, 3]), slice(None, None, -1)),
               (slice(None), [4, 0, 0]), (np.array([0, 1]), np.array([2, 3])),
               (slice(10, None, -3),), (slice(-1, -10, -1), Ellipsis, None),
               (slice(0, 0, -1),), np.int64(2), (1, slice(None, None, -1)),
               (Ellipsis, None, slice(None, None, -1)), (0, 0, 0), 1.5]


@pytest.mark.parametrize("index", GET_INDICES, ids=[repr(i)[:30] for i in GET_INDICES])
@pytest.mark.parametrize("fake", [False, True])
def test_getitem_matches_numpy(index, fake):
    impl = enp.lookup_method("__getitem__")
    for a in (X, A((4, 5), I64)):
        want, err = _call_np(lambda: a[index])
        t = _to_ember(a)
        idx = tuple(_to_ember(i) for i in index) if isinstance(index, tuple) else \
            _to_ember(index)
        if fake:
            mode = FakeTensorMode(allow_non_fake_inputs=True)
            t = mode.from_tensor(t)
            with mode:
                _compare(want, err, lambda: impl(t, idx), f"a[{index!r}]", True)
        else:
            _compare(want, err, lambda: impl(t, idx), f"a[{index!r}]", False)


def test_getitem_boolean_mask():
    a = A((4, 5))
    got = enp.lookup_method("__getitem__")(_to_ember(a), _to_ember(a > 0))
    _check(got, a[a > 0], "a[a > 0]")


SET_CASES = [(0, 7.5), ((slice(None), 1), A((4,), I64)), (slice(None, None, -1), A((5,))),
             ((1, slice(None, None, -2)), 3), (([0, 2],), -1.25), ((Ellipsis, 0), True),
             ((slice(3, 0, -1), 0), np.array([1.0, 2.0, 3.0]))]


@pytest.mark.parametrize("index,value", SET_CASES, ids=[repr(c[0])[:30] for c in SET_CASES])
def test_setitem_matches_numpy(index, value):
    for a in (A((4, 5)), A((4, 5), I64)):
        arr = a.copy()
        with np.errstate(all="ignore"):
            arr[index] = value
        t = _to_ember(a)
        idx = tuple(_to_ember(i) for i in index) if isinstance(index, tuple) else index
        got = enp.lookup_method("__setitem__")(t, idx, _to_ember(value))
        assert got is t
        _check(t, arr, f"a[{index!r}] = {value!r}")


@pytest.fixture
def float32_defaults():
    from ember._dynamo import config
    saved = (config.numpy_default_float, config.numpy_default_complex, config.numpy_default_int)
    config.numpy_default_float, config.numpy_default_complex, config.numpy_default_int = (
        "float32", "complex64", "int32")
    yield
    config.numpy_default_float, config.numpy_default_complex, config.numpy_default_int = saved


def test_configured_numpy_defaults(float32_defaults):
    """ember._dynamo.config.numpy_default_float/_complex/_int (PyTorch's knobs) replace the
    dtypes NumPy picks by default - never a dtype an input already has."""
    L = enp.lookup
    i, b = ember.tensor([1, 2, 3]), ember.tensor([True, False])
    f64 = ember.tensor([1.0, 2.0], dtype=ember.float64)
    by_default = {
        "ones": L(np.ones)((2,)), "zeros(dtype=float)": L(np.zeros)(2, dtype=float),
        "linspace": L(np.linspace)(0, 1, 3), "eye": L(np.eye)(2),
        "arange(0.5)": L(np.arange)(0.5, 2), "array([1.0])": L(np.array)([1.0]),
        "int / int": enp.binary_op("truediv", i, i), "sin(int)": L(np.sin)(i),
        "int + 1.5": L(np.add)(i, 1.5), "mean(int)": L(np.mean)(i),
        "norm(int)": L(np.linalg.norm)(i), "cov(int)": L(np.cov)(i)}
    for what, t in by_default.items():
        assert t.dtype is ember.float32, what
    assert L(np.multiply)(i, 1j).dtype is ember.complex64
    for what, t in {"sum(bool)": L(np.sum)(b), "cumsum(bool)": L(np.cumsum)(b),
                    "arange(3)": L(np.arange)(3), "full(2, 7)": L(np.full)(2, 7)}.items():
        assert t.dtype is ember.int32, what
    kept = {"f64 + 1.5": (L(np.add)(f64, 1.5), ember.float64),
            "f64 * 1j": (L(np.multiply)(f64, 1j), ember.complex128),
            "sum(int64)": (L(np.sum)(i), ember.int64),
            "mean(f64)": (L(np.mean)(f64), ember.float64),
            "float64 arg": (L(np.ones)(2, dtype=np.float64), ember.float64)}
    for what, (t, want) in kept.items():
        assert t.dtype is want, what


@pytest.mark.parametrize("shape,val", [((3, 3), 5.0), ((4, 3), -1), ((3, 5), 2.5),
                                       ((3, 3, 3), 7), ((3, 3), [1.0, 2.0]),
                                       ((4, 4), np.array([1.0, 2.0, 3.0, 4.0]))])
def test_fill_diagonal_writes_in_place(shape, val):
    for dt in (F64, I64):
        arr = A(shape, dt)
        t = _to_ember(arr)
        np.fill_diagonal(arr, val)
        assert enp.lookup(np.fill_diagonal)(t, _to_ember(val)) is None
        _check(t, arr, f"fill_diagonal{shape} {val!r}")


@pytest.mark.parametrize("name,args", [("sort", ()), ("sort", (0,)), ("fill", (2.7,)),
                                       ("fill", (True,)), ("fill", (np.float32(-1.5),))])
def test_inplace_methods_write_into_the_array(name, args):
    for a in ARRAYS:
        arr = a.copy()
        want, err = _call_np(lambda: getattr(arr, name)(*args))
        t = _to_ember(a)
        try:
            got = enp.lookup_method(name)(t, *[_to_ember(x) for x in args])
        except Exception as e:  # noqa: BLE001
            assert err is not None and isinstance(e, _exc_base(err)), (name, a.dtype, e)
            continue
        assert err is None and got is None and want is None
        _check(t, arr, f"<{a.dtype}>.{name}{args}")
