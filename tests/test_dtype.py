"""dtypes and promotion against PyTorch, exhaustively over the dtype table."""
import itertools

import numpy as np
import pytest

from oracle import torch
import ember

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
         "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("a,b", list(itertools.product(NAMES, NAMES)))
def test_promote_types_and_can_cast(a, b):
    ea, eb = getattr(ember, a), getattr(ember, b)
    ta, tb = getattr(torch, a), getattr(torch, b)
    assert str(ember.promote_types(ea, eb)) == str(torch.promote_types(ta, tb))
    assert ember.can_cast(ea, eb) == torch.can_cast(ta, tb)


SCALARS = [True, 2, 2.5, 1 + 2j]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("s", SCALARS)
def test_result_type_with_scalars(name, s):
    if name == "float16" and isinstance(s, complex):
        pytest.skip("torch gives complex32 (ComplexHalf), which ember does not have")
    e = ember.ones(2, dtype=getattr(ember, name))
    t = torch.ones(2, dtype=getattr(torch, name))
    assert str(ember.result_type(e, s)) == str(torch.result_type(t, s))


@pytest.mark.parametrize("a,b", list(itertools.product(NAMES, NAMES)))
def test_result_type_zero_dim_vs_dim(a, b):
    if a == "float16" and b.startswith("complex"):
        pytest.skip("torch gives complex32 (ComplexHalf), which ember does not have")
    e = ember.ones(2, dtype=getattr(ember, a))
    z = ember.ones((), dtype=getattr(ember, b))
    t = torch.ones(2, dtype=getattr(torch, a))
    tz = torch.ones((), dtype=getattr(torch, b))
    assert str(ember.result_type(e, z)) == str(torch.result_type(t, tz))


def test_dtype_repr_and_aliases():
    assert repr(ember.float32) == "torch.float32"
    assert ember.float is ember.float32 and ember.long is ember.int64
    assert ember.double is ember.float64 and ember.half is ember.float16
    assert ember.float32.is_floating_point and not ember.int32.is_floating_point
    assert ember.complex64.is_complex and ember.int8.is_signed and not ember.uint8.is_signed


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64"])
def test_finfo(name):
    e, t = ember.finfo(getattr(ember, name)), torch.finfo(getattr(torch, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "resolution"):
        assert getattr(e, attr) == pytest.approx(getattr(t, attr)), attr


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo(name):
    e, t = ember.iinfo(getattr(ember, name)), torch.iinfo(getattr(torch, name))
    assert (e.bits, e.min, e.max) == (t.bits, t.min, t.max)


def test_finfo_iinfo_errors():
    with pytest.raises(TypeError):
        ember.finfo(ember.int32)
    with pytest.raises(TypeError):
        ember.iinfo(ember.float32)


def test_default_dtype():
    assert ember.get_default_dtype() is ember.float32
    try:
        ember.set_default_dtype(ember.float64)
        assert ember.tensor([1.5]).dtype is ember.float64
        assert ember.ones(2).dtype is ember.float64
        assert (ember.ones(2, dtype=ember.int32) * 2.5).dtype is ember.float64
        assert ember.tensor([1j]).dtype is ember.complex128
    finally:
        ember.set_default_dtype(ember.float32)
    with pytest.raises(TypeError):
        ember.set_default_dtype(ember.int64)


def test_bfloat16_storage_and_math():
    a = ember.tensor([1.0, 2.5, 3.0], dtype=ember.bfloat16)
    assert a.element_size() == 2 and a.dtype is ember.bfloat16
    b = (a * a).float()
    t = torch.tensor([1.0, 2.5, 3.0], dtype=torch.bfloat16)
    np.testing.assert_array_equal(b.numpy(), (t * t).float().numpy())
