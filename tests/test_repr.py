"""repr/str of tensors must be byte-identical to PyTorch's."""
import numpy as np
import pytest

from oracle import torch
import ember

RNG = np.random.default_rng(0)


def _randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


CASES = {
    "f32_vector": np.array([1.5, 2.25, -3.125], np.float32),
    "f32_matrix": _randn(3, 4),
    "f32_3d": _randn(2, 3, 4),
    "int64": np.arange(12).reshape(3, 4),
    "int32": np.arange(100, dtype=np.int32),
    "uint8": np.arange(30, dtype=np.uint8),
    "int16_neg": np.array([-5, 1000], np.int16),
    "int8": np.array([-128, 0, 127], np.int8),
    "bool": np.array([True, False]),
    "bool_matrix": np.array([[True, False], [False, True]]),
    "f64": _randn(5, dtype=np.float64),
    "f64_int_valued": np.array([100., -2.]),
    "f16": _randn(5, dtype=np.float16),
    "c64": (_randn(4) + 1j * _randn(4)).astype(np.complex64),
    "c128": np.array([1 + 2j, -0.5 - 0.25j]),
    "c64_sci": np.array([1e5 + 1j, 2j], np.complex64),
    "zero_d_f32": np.array(3.5, np.float32),
    "zero_d_int": np.array(7),
    "zero_d_bool": np.array(True),
    "zero_d_neg_zero": np.array(-0.0, np.float32),
    "zero_d_complex": np.array(1 + 1j, np.complex64),
    "zero_d_nan": np.array(np.nan, np.float32),
    "empty_0x3": np.zeros((0, 3), np.float32),
    "empty_1d": np.zeros((0,), np.float32),
    "empty_int": np.zeros((0,), np.int64),
    "empty_f64_3d": np.zeros((2, 0, 3), np.float64),
    "large_1d": _randn(2000),
    "large_2d": _randn(40, 40),
    "large_int": np.arange(5000),
    "large_3d_f64": _randn(12, 11, 10, dtype=np.float64),
    "large_complex": (_randn(1200) + 1j * _randn(1200)).astype(np.complex64),
    "sci_wide_range": np.array([1e-5, 1.0, 3e9], np.float32),
    "sci_big": np.array([1e10, 2e10], np.float32),
    "sci_small": np.array([1e-8, 0.], np.float32),
    "not_sci_1e-4": np.array([0.0001, 1]),
    "neg_zero": np.array([-0.0, 0.0, 1.0], np.float32),
    "neg_zero_frac": np.array([-0.0, 0.5], np.float32),
    "nan_inf": np.array([np.nan, np.inf, -np.inf, 1.0], np.float32),
    "nan_frac": np.array([np.nan, 2.5], np.float32),
    "all_nan": np.array([np.nan]),
    "all_zero": np.zeros(4, np.float32),
    "int_valued_f32": np.array([1., 2., 3.], np.float32),
    "wrapped_rows": _randn(2, 50),
    "wide_ints": np.arange(0, 10**12, 10**10),
}


def _pair(arr, dtype=None):
    e, t = ember.tensor(arr), torch.tensor(arr)
    if dtype is not None:
        e, t = e.to(getattr(ember, dtype)), t.to(getattr(torch, dtype))
    return e, t


@pytest.mark.parametrize("name", list(CASES))
def test_repr_matches_torch(name):
    e, t = _pair(CASES[name])
    assert repr(e) == repr(t)
    assert str(e) == str(t)


@pytest.mark.parametrize("arr", [_randn(6), _randn(3, 3) * 1000, np.array([1e-6, 3.0], np.float32),
                                 np.array([[1.0, 2.0]], np.float32), _randn(1500)])
def test_bfloat16(arr):
    e, t = _pair(arr, "bfloat16")
    assert repr(e) == repr(t)


def test_requires_grad_and_grad_fn():
    a = _randn(2, 3)
    e = ember.tensor(a, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    assert repr(e) == repr(t)
    for f in (lambda x: x * 2, lambda x: x.exp(), lambda x: x.sum(), lambda x: x + 1,
              lambda x: x.to(torch.float64 if isinstance(x, torch.Tensor) else ember.float64)):
        assert repr(f(e)) == repr(f(t))


def test_grad_fn_suffix_wraps_like_torch():
    a = _randn(3, 7) * 1000
    e = ember.tensor(a, requires_grad=True).double() * 3
    t = torch.tensor(a, requires_grad=True).double() * 3
    assert repr(e) == repr(t)


@pytest.fixture
def printopts():
    yield
    ember.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")


@pytest.mark.parametrize("opts", [dict(precision=2), dict(precision=8), dict(threshold=5),
                                  dict(edgeitems=1, threshold=10), dict(linewidth=30),
                                  dict(sci_mode=True), dict(sci_mode=False),
                                  dict(profile="short"), dict(profile="full"),
                                  dict(edgeitems=0, threshold=5)])
def test_set_printoptions(printopts, opts):
    for arr in (_randn(20), _randn(4, 9) * 1e5, np.arange(40).reshape(5, 8),
                np.array([1e-6, 1.0], np.float32), _randn(1100)):
        ember.set_printoptions(**opts)
        torch.set_printoptions(**opts)
        e, t = _pair(arr)
        assert repr(e) == repr(t), opts
    assert ember.get_printoptions() == torch._tensor_str.get_printoptions()


def test_default_dtype_changes_suffix():
    prev = ember.get_default_dtype()
    try:
        ember.set_default_dtype(ember.float64)
        torch.set_default_dtype(torch.float64)
        for arr in (_randn(3), _randn(3, dtype=np.float64), np.zeros(0)):
            e, t = _pair(arr)
            assert repr(e) == repr(t)
    finally:
        ember.set_default_dtype(prev)
        torch.set_default_dtype(torch.float32)


def test_views_and_noncontiguous():
    a = _randn(4, 5)
    e, t = _pair(a)
    assert repr(e.t()) == repr(t.t())
    assert repr(e[1]) == repr(t[1])


def test_meta_repr():
    for shape, dt in (((2, 3), "float32"), ((4,), "int64"), ((), "float64")):
        e = ember.empty(shape, dtype=getattr(ember, dt), device="meta")
        t = torch.empty(shape, dtype=getattr(torch, dt), device="meta")
        assert repr(e) == repr(t)


def test_fake_repr():
    from torch._subclasses.fake_tensor import FakeTensorMode as TorchFake
    from ember._subclasses.fake_tensor import FakeTensorMode
    with TorchFake():
        t = torch.empty(2, 3, dtype=torch.float64)
        tr = repr(t)
    with FakeTensorMode():
        e = ember.empty(2, 3, dtype=ember.float64)
        er = repr(e)
    assert er == tr


def test_subclass_prefix():
    class MyT(torch.Tensor):
        pass

    class MyE(ember.Tensor):
        pass
    a = _randn(2, 2)
    assert repr(ember.tensor(a).as_subclass(MyE)).replace("MyE", "MyT") == \
        repr(torch.tensor(a).as_subclass(MyT))


def test_format_zero_d():
    assert f"{ember.tensor(2.5):.2f}" == f"{torch.tensor(2.5):.2f}"
