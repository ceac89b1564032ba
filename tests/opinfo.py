"""An OpInfo-like table format: one row per op drives forward, backward, gradcheck and
error tests against PyTorch (see tests/oracle.py for the comparisons).

A test module declares rows and asks for the tests:

    OPS = [
        OpInfo("cumsum", [S(randn(3, 4), 1), S(randn(0, 2), 0), S(NC(randn(3, 5)), -1)],
               dtypes=(F32, F64, I64), errors=[E(randn(3), 5)]),
        OpInfo("linalg.det", [S(randn(3, 3))], gradcheck_dtypes=(F64, C128)),
        OpInfo("Tensor.roll", [S(randn(3, 4), 1, 0)]),        # a method: args[0] is self
    ]
    test_forward, test_gradcheck, test_errors = make_tests(OPS)

`name` is looked up on both libraries (`ember.linalg.det` / `torch.linalg.det`);
`Tensor.x` calls the method on the first argument. `fn=` overrides the lookup with
`fn(L, *args, **kwargs)`. Inputs are NumPy arrays (cast to each dtype in `dtypes`
when floating), `NC(array)` for non-contiguous views, or plain Python values.
`skips={"what": "PyTorch behaviour that is missing"}` documents a known gap; a
dtype listed in `skips` by name (e.g. "float16") is skipped with that reason.
"""
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pytest

from oracle import NC, check, check_error, gradcheck

F16, F32, F64 = np.float16, np.float32, np.float64
I32, I64, U8, B = np.int32, np.int64, np.uint8, np.bool_
C64, C128 = np.complex64, np.complex128


class S:
    """One sample: positional and keyword arguments (arrays are cast per dtype)."""

    def __init__(self, *args, grad=True, **kwargs):
        self.args, self.kwargs, self.grad = args, kwargs, grad

    def __repr__(self):
        return "S(" + ", ".join(_short(a) for a in self.args) + \
            "".join(f", {k}={_short(v)}" for k, v in self.kwargs.items()) + ")"


class E(S):
    """An input that must raise the same exception type as PyTorch."""


def _short(a):
    if isinstance(a, NC):
        return f"NC{a.arr.shape}"
    if isinstance(a, np.ndarray):
        return f"{a.dtype}{a.shape}"
    return repr(a)


@dataclass
class OpInfo:
    name: str
    samples: list
    dtypes: tuple = (F32, F64)
    grad: bool = True                      # compare gradients with PyTorch
    gradcheck_dtypes: tuple = (F64,)       # float64 (and complex128) gradcheck
    errors: list = field(default_factory=list)
    fn: Callable = None                    # fn(L, *args, **kwargs) overrides the lookup
    atol: float = 1e-5
    rtol: float = 1e-4
    skips: dict = field(default_factory=dict)

    def call(self, L, *args, **kwargs):
        if self.fn is not None:
            return self.fn(L, *args, **kwargs)
        if self.name.startswith("Tensor."):
            return getattr(args[0], self.name[7:])(*args[1:], **kwargs)
        obj = L
        for part in self.name.split("."):
            obj = getattr(obj, part)
        return obj(*args, **kwargs)


def _cast(a, dtype):
    if isinstance(a, NC):
        return NC(_cast(a.arr, dtype))
    if isinstance(a, np.ndarray) and a.dtype.kind in "fc" and dtype is not None:
        if np.dtype(dtype).kind in "fc" or a.dtype.kind == np.dtype(dtype).kind:
            return a.astype(dtype)
        return np.round(a * 3).astype(dtype)
    return a


def _skip_dtype(info, dtype):
    reason = info.skips.get(np.dtype(dtype).name)
    if reason:
        pytest.skip(f"{info.name} {np.dtype(dtype).name}: {reason}")


def make_tests(ops):
    """The three parametrized tests over a table of OpInfo rows."""
    fwd = [pytest.param(info, s, d, id=f"{info.name}-{np.dtype(d).name}-{i}")
           for info in ops for i, s in enumerate(info.samples) for d in info.dtypes]
    gc = [pytest.param(info, s, d, id=f"{info.name}-{np.dtype(d).name}-{i}")
          for info in ops if info.grad for i, s in enumerate(info.samples) if s.grad
          for d in info.gradcheck_dtypes]
    err = [pytest.param(info, e, id=f"{info.name}-{i}")
           for info in ops for i, e in enumerate(info.errors)]

    @pytest.mark.parametrize("info,sample,dtype", fwd)
    def test_forward(info, sample, dtype):
        _skip_dtype(info, dtype)
        args = [_cast(a, dtype) for a in sample.args]
        kw = sample.kwargs
        floating = np.dtype(dtype).kind in "fc"
        check(lambda L, *a: info.call(L, *a, **kw), *args,
              grad=info.grad and sample.grad and floating and np.dtype(dtype) != F16,
              atol=info.atol if np.dtype(dtype) not in (F16,) else 1e-2,
              rtol=info.rtol if np.dtype(dtype) not in (F16,) else 1e-2)

    @pytest.mark.parametrize("info,sample,dtype", gc)
    def test_gradcheck(info, sample, dtype):
        _skip_dtype(info, dtype)
        args = [_cast(a.arr if isinstance(a, NC) else a, dtype) for a in sample.args]
        kw = sample.kwargs
        if not any(isinstance(a, np.ndarray) and a.dtype.kind in "fc" for a in args):
            pytest.skip("no floating input")
        gradcheck(lambda L, *a: info.call(L, *a, **kw), *args)

    @pytest.mark.parametrize("info,sample", err)
    def test_errors(info, sample):
        check_error(lambda L, *a: info.call(L, *a, **sample.kwargs), *sample.args)

    return test_forward, test_gradcheck, test_errors
