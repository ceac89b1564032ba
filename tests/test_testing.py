"""ember.testing.assert_close/make_tensor against torch.testing: same pass/fail, same
exception types and messages."""
import numpy as np
import pytest

import ember
import ember.testing as ET

torch = pytest.importorskip("torch")


def _pair(make):
    return make(ember), make(torch)


CASES = [
    lambda m: (m.tensor([1.0, 2.0, 3.0]), m.tensor([1.0, 2.5, 3.1]), {}),
    lambda m: (m.tensor([1.0, 2.0, 3.0]), m.tensor([1.0, 2.0, 3.0 + 1e-6]), {}),
    lambda m: (m.tensor([1.0, 2.0]), m.tensor([1, 2]), {}),
    lambda m: (m.tensor([1.0, 2.0]), m.tensor([1, 2]), {"check_dtype": False}),
    lambda m: (m.tensor([1.0, 2.0, 3.0]), m.tensor([1.0, 2.0]), {}),
    lambda m: (m.tensor([[1, 2], [3, 4]]), m.tensor([[1, 2], [3, 5]]), {}),
    lambda m: (m.tensor([1.0, float("nan")]), m.tensor([1.0, float("nan")]), {}),
    lambda m: (m.tensor([1.0, float("nan")]), m.tensor([1.0, float("nan")]),
               {"equal_nan": True}),
    lambda m: (m.tensor([1.0, 2.0], dtype=m.float64), m.tensor([1.0, 2.0 + 1e-6],
                                                                  dtype=m.float64), {}),
    lambda m: (m.tensor([1.0, 2.0], dtype=m.float16), m.tensor([1.0, 2.001],
                                                                  dtype=m.float16), {}),
    lambda m: (m.tensor([1.0, 2.0]), m.tensor([1.0, 2.1]), {"rtol": 0.1, "atol": 0.0}),
    lambda m: (m.tensor([1.0, 2.0]), m.tensor([1.0, 2.1]), {"msg": "custom"}),
    lambda m: (m.tensor(1.5), m.tensor(1.6), {}),
    lambda m: (m.tensor([True, False]), m.tensor([True, True]), {}),
    lambda m: (1.0, 1.1, {}),
    lambda m: (3, 3, {}),
    lambda m: ([1.0, 2.0], [1.0, 2.1], {}),
    lambda m: ({"a": m.tensor([1.0, 2.0])}, {"a": m.tensor([1.0, 2.2])}, {}),
    lambda m: ({"a": m.tensor([1.0])}, {"b": m.tensor([1.0])}, {}),
    lambda m: ([m.tensor([1.0]), (m.tensor([2.0]), m.tensor([3.0]))],
               [m.tensor([1.0]), (m.tensor([2.0]), m.tensor([3.5]))], {}),
    lambda m: (m.tensor([1.0]), m.tensor([1.0]), {"rtol": 0.1}),
    lambda m: (np.array([1.0, 2.0]), np.array([1.0, 2.0])),
]


def _outcome(lib, make):
    out = make(lib)
    actual, expected = out[0], out[1]
    kw = out[2] if len(out) > 2 else {}
    try:
        lib.testing.assert_close(actual, expected, **kw)
    except Exception as e:  # noqa: BLE001 - the type is what we compare
        return type(e), str(e)
    return None, None


@pytest.mark.parametrize("i", range(len(CASES)))
def test_assert_close_matches_torch(i):
    te, me = _outcome(ember, CASES[i])
    tt, mt = _outcome(torch, CASES[i])
    assert te is tt
    assert me == mt


def test_type_mismatch_and_callable_msg():
    with pytest.raises(TypeError, match="No comparison pair was able to handle"):
        ET.assert_close(ember.tensor([1.0]), [1.0])
    with pytest.raises(AssertionError, match="^wrapped: Tensor-likes are not close!"):
        ET.assert_close(ember.tensor([1.0]), ember.tensor([2.0]),
                        msg=lambda m: "wrapped: " + m)
    with pytest.warns(FutureWarning):
        ET.assert_allclose([1.0, 2.0], ember.tensor([1.0, 2.0]))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "bool",
                                   "complex64", "int8"])
def test_make_tensor(dtype):
    d = getattr(ember, dtype)
    x = ET.make_tensor(3, 4, dtype=d, device="cpu")
    y = torch.testing.make_tensor(3, 4, dtype=getattr(torch, dtype), device="cpu")
    assert tuple(x.shape) == tuple(y.shape) and str(x.dtype) == str(y.dtype)
    if dtype not in ("bool", "complex64"):
        big = ET.make_tensor(2000, dtype=d, device="cpu").numpy()
        lo, hi = (0, 9) if dtype == "uint8" else (-9, 9)
        assert big.min() >= lo and big.max() <= hi + 0.999
        assert big.max() - big.min() > 0.8 * (hi - lo)
    z = ET.make_tensor((50,), dtype=d, device="cpu", exclude_zero=True)
    assert bool((z != 0).all())
    n = ET.make_tensor(4, 6, dtype=d, device="cpu", noncontiguous=True)
    assert not n.is_contiguous() and tuple(n.shape) == (4, 6)
    r = ET.make_tensor(5, dtype=ember.float32, device="cpu", low=2, high=3,
                       requires_grad=True)
    assert r.requires_grad and bool(((r >= 2) & (r <= 3)).all())
    with pytest.raises(ValueError):
        ET.make_tensor(2, dtype=ember.float32, device="cpu", low=3, high=2)
