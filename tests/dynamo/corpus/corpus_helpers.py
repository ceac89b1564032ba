"""Comparison helpers of the compiled-vs-eager corpus.

`same` checks the whole guarantee a compiled call makes: equal values, dtypes, shapes and
requires_grad, through any nesting of lists, tuples, dicts, dataclasses and ndarrays.
`clone` copies inputs so the eager and the compiled call each mutate their own copy.
"""
import copy
import dataclasses
import os

import numpy as np
import pytest


def is_tensor(lib, x):
    return isinstance(x, lib.Tensor)


def clone(lib, obj):
    """A deep copy of a program's inputs; tensors keep requires_grad (as fresh leaves)."""
    if is_tensor(lib, obj):
        c = obj.detach().clone()
        return c.requires_grad_(obj.requires_grad) if obj.is_floating_point() else c
    if isinstance(obj, np.ndarray):
        return obj.copy()
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        return type(obj)(clone(lib, v) for v in obj)
    if hasattr(obj, "_fields"):                                  # namedtuple
        return type(obj)(*(clone(lib, v) for v in obj))
    if isinstance(obj, dict):
        return type(obj)((k, clone(lib, v)) for k, v in obj.items())
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.replace(
            obj, **{f.name: clone(lib, getattr(obj, f.name)) for f in dataclasses.fields(obj)})
    return copy.deepcopy(obj)


def same(lib, got, want, *, exact=False, path="result"):
    """Assert `got` (compiled) equals `want` (eager): structure, types, tensor values,
    dtypes, shapes and requires_grad. `exact` demands bit-equal tensors."""
    if is_tensor(lib, want):
        assert is_tensor(lib, got), f"{path}: {type(got).__name__} is not a tensor"
        assert got.shape == want.shape, f"{path}: shape {got.shape} != {want.shape}"
        assert got.dtype == want.dtype, f"{path}: dtype {got.dtype} != {want.dtype}"
        assert got.requires_grad == want.requires_grad, (
            f"{path}: requires_grad {got.requires_grad} != {want.requires_grad}")
        if exact:
            lib.testing.assert_close(got.detach(), want.detach(), rtol=0, atol=0,
                                     equal_nan=True, msg=f"{path}: values differ (exact)")
        else:
            lib.testing.assert_close(got.detach(), want.detach(), equal_nan=True,
                                     msg=f"{path}: values differ")
        return
    if isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray), f"{path}: {type(got).__name__} is not an ndarray"
        assert got.dtype == want.dtype, f"{path}: dtype {got.dtype} != {want.dtype}"
        if exact:
            np.testing.assert_array_equal(got, want, err_msg=path)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=path,
                                       equal_nan=True)
        return
    assert type(got) is type(want), f"{path}: type {type(got).__name__} != {type(want).__name__}"
    if isinstance(want, (list, tuple)):
        assert len(got) == len(want), f"{path}: length {len(got)} != {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            same(lib, g, w, exact=exact, path=f"{path}[{i}]")
    elif isinstance(want, dict):
        assert list(got) == list(want), f"{path}: keys {list(got)} != {list(want)}"
        for k in want:
            same(lib, got[k], want[k], exact=exact, path=f"{path}[{k!r}]")
    elif dataclasses.is_dataclass(want):
        for f in dataclasses.fields(want):
            same(lib, getattr(got, f.name), getattr(want, f.name), exact=exact,
                 path=f"{path}.{f.name}")
    elif isinstance(want, float) and want != want:
        assert got != got, f"{path}: {got} is not nan"
    else:
        assert got == want, f"{path}: {got!r} != {want!r}"


def check_calls(lib, fn, cfn, calls, *, exact=False):
    """Run eager `fn` and compiled `cfn` on fresh copies of each argument tuple in `calls`;
    assert equal results and equally mutated arguments. Returns the compiled results."""
    outs = []
    for args in calls:
        eager_args, comp_args = clone(lib, args), clone(lib, args)
        want = fn(*eager_args)
        got = cfn(*comp_args)
        same(lib, got, want, exact=exact)
        same(lib, comp_args, eager_args, exact=exact, path="mutated args")
        outs.append(got)
    return outs


def params_same(lib, got_module, want_module, *, exact=False):
    """Parameters, their grads and buffers of two copies of a module are equal."""
    got_p = dict(got_module.named_parameters())
    for name, p in want_module.named_parameters():
        same(lib, got_p[name], p, exact=exact, path=f"param {name}")
        if p.grad is None:
            assert got_p[name].grad is None, f"grad of {name}: eager has none"
        else:
            same(lib, got_p[name].grad, p.grad, exact=exact, path=f"grad {name}")
    got_b = dict(got_module.named_buffers())
    for name, b in want_module.named_buffers():
        same(lib, got_b[name], b, exact=exact, path=f"buffer {name}")


def ember_gap(reason):
    """Marks a program ember compiles correctly but not the way PyTorch 2.13 does (a count
    or a construct it graph-breaks on): strict, so closing the gap is noticed."""
    return pytest.mark.xfail(os.environ.get("CORPUS_LIB", "ember") == "ember",
                             reason=f"ember differs from PyTorch: {reason}", strict=True)


def torch_bug(reason):
    """Marks a program PyTorch 2.13 itself gets wrong (a stale result): under
    CORPUS_LIB=torch it must fail (strict), so a fixed PyTorch is noticed; ember must pass."""
    return pytest.mark.xfail(os.environ.get("CORPUS_LIB", "ember") == "torch",
                             reason=f"PyTorch 2.13 bug: {reason}", strict=True)
