"""assert_close: PyTorch's tensor/scalar/collection comparison with its default tolerances
per dtype and its AssertionError messages ("Tensor-likes are not close!" + statistics)."""
import collections.abc
import numbers

import numpy as np

import ember

__all__ = ["assert_close", "assert_allclose"]

_DTYPE_PRECISIONS = {
    ember.float16: (1e-3, 1e-5),
    ember.bfloat16: (1.6e-2, 1e-5),
    ember.float32: (1.3e-6, 1e-5),
    ember.float64: (1e-7, 1e-7),
    ember.complex64: (1.3e-6, 1e-5),
    ember.complex128: (1e-7, 1e-7),
}


class _Fail(Exception):
    def __init__(self, exc_type, msg):
        super().__init__(msg)
        self.exc_type = exc_type
        self.msg = msg


def default_tolerances(*inputs):
    """(rtol, atol) for the given tensors/dtypes: the loosest of their dtypes' defaults."""
    dtypes = []
    for x in inputs:
        if isinstance(x, ember.Tensor):
            dtypes.append(x.dtype)
        elif isinstance(x, ember.dtype):
            dtypes.append(x)
        else:
            raise TypeError(f"Expected a torch.Tensor or a torch.dtype, but got {type(x)} "
                            "instead.")
    rtols, atols = zip(*[_DTYPE_PRECISIONS.get(d, (0.0, 0.0)) for d in dtypes])
    return max(rtols), max(atols)


def _tolerances(*inputs, rtol, atol):
    if (rtol is None) ^ (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {'rtol' if rtol is None else 'atol'}.")
    if rtol is not None and atol is not None:
        return rtol, atol
    return default_tolerances(*inputs)


def _make_mismatch_msg(*, default_identifier, identifier=None, extra=None, abs_diff,
                       abs_diff_idx=None, atol, rel_diff, rel_diff_idx=None, rtol):
    equality = rtol == 0 and atol == 0

    def diff_msg(kind, diff, idx, tol):
        msg = (f"{kind.title()} difference: {diff}" if idx is None
               else f"Greatest {kind} difference: {diff} at index {idx}")
        if not equality:
            msg += f" (up to {tol} allowed)"
        return msg + "\n"

    if identifier is None:
        identifier = default_identifier
    elif callable(identifier):
        identifier = identifier(default_identifier)
    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += diff_msg("absolute", abs_diff, abs_diff_idx, atol)
    msg += diff_msg("relative", rel_diff, rel_diff_idx, rtol)
    return msg.strip()


def _scalar_mismatch_msg(actual, expected, *, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _make_mismatch_msg(default_identifier="Scalars",
                              extra=f"Expected {expected} but got {actual}.",
                              abs_diff=abs_diff, atol=atol, rel_diff=rel_diff, rtol=rtol)


def _unravel(flat_index, shape):
    out = []
    for size in tuple(shape)[::-1]:
        flat_index, mod = divmod(flat_index, size)
        out.append(mod)
    return tuple(out[::-1])


def _tensor_mismatch_msg(actual, expected, matches, *, rtol, atol):
    n = matches.numel()
    mismatches = n - int(matches.sum())
    extra = f"Mismatched elements: {mismatches} / {n} ({mismatches / n:.1%})"
    a, e, m = actual.flatten(), expected.flatten(), matches.flatten()
    if not a.dtype.is_floating_point and not a.dtype.is_complex:
        a, e = a.to(ember.int64), e.to(ember.int64)
    abs_diff = ember.abs(a - e)
    abs_diff = ember.where(m, ember.zeros_like(abs_diff), abs_diff)
    max_abs, abs_idx = ember.max(abs_diff, 0)
    rel_diff = abs_diff / ember.abs(e)
    rel_diff = ember.where(m, ember.zeros_like(rel_diff), rel_diff)
    max_rel, rel_idx = ember.max(rel_diff, 0)
    return _make_mismatch_msg(default_identifier="Tensor-likes", extra=extra,
                              abs_diff=max_abs.item(),
                              abs_diff_idx=_unravel(int(abs_idx), matches.shape),
                              atol=atol, rel_diff=max_rel.item(),
                              rel_diff_idx=_unravel(int(rel_idx), matches.shape), rtol=rtol)


def _is_tensor_like(x):
    return isinstance(x, (ember.Tensor, np.ndarray))


def _compare_tensors(actual, expected, *, rtol, atol, equal_nan, check_device, check_dtype,
                     check_layout, check_stride, allow_subclasses):
    if isinstance(actual, np.ndarray):
        actual = ember.as_tensor(actual)
    if isinstance(expected, np.ndarray):
        expected = ember.as_tensor(expected)
    if not allow_subclasses and type(actual) is not type(expected):
        raise _Fail(TypeError, f"Expected both inputs to be of the same type, but got "
                               f"{type(actual)} and {type(expected)}")
    rtol, atol = _tolerances(actual, expected, rtol=rtol, atol=atol)
    checks = [("shape", actual.shape, expected.shape, True),
              ("device", actual.device, expected.device, check_device),
              ("dtype", actual.dtype, expected.dtype, check_dtype)]
    for name, a, e, on in checks:
        if on and a != e:
            raise _Fail(AssertionError,
                        f"The values for attribute '{name}' do not match: {a} != {e}.")
    if check_stride and actual.stride() != expected.stride():
        raise _Fail(AssertionError, f"The values for attribute 'stride()' do not match: "
                                    f"{actual.stride()} != {expected.stride()}.")
    actual, expected = actual.detach(), expected.detach()
    if actual.device != expected.device:
        actual, expected = actual.cpu(), expected.cpu()
    if actual.dtype != expected.dtype:
        dtype = ember.promote_types(actual.dtype, expected.dtype)
        actual, expected = actual.to(dtype), expected.to(dtype)
    if actual.dtype == ember.bool:
        matches = actual == expected
        rtol = atol = 0.0
    else:
        matches = ember.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if bool(matches.all()):
        return
    if actual.dim() == 0:
        msg = _scalar_mismatch_msg(actual.item(), expected.item(), rtol=rtol, atol=atol)
    else:
        msg = _tensor_mismatch_msg(actual, expected, matches, rtol=rtol, atol=atol)
    raise _Fail(AssertionError, msg)


def _compare_scalars(actual, expected, *, rtol, atol, equal_nan, check_dtype):
    if check_dtype and type(actual) is not type(expected) and not (
            isinstance(actual, bool) is isinstance(expected, bool)
            and isinstance(actual, numbers.Integral) == isinstance(expected, numbers.Integral)
            and isinstance(actual, numbers.Complex) == isinstance(expected, numbers.Complex)):
        raise _Fail(AssertionError, f"The values for attribute 'dtype' do not match: "
                                    f"{type(actual)} != {type(expected)}.")

    def dtype_of(x):
        if isinstance(x, bool):
            return ember.bool
        if isinstance(x, numbers.Integral):
            return ember.int64
        if isinstance(x, numbers.Real):
            return ember.float64
        return ember.complex128
    rtol, atol = _tolerances(dtype_of(actual), dtype_of(expected), rtol=rtol, atol=atol)
    if actual == expected:
        return
    if equal_nan and actual != actual and expected != expected:
        return
    if abs(actual - expected) <= atol + rtol * abs(expected):
        return
    raise _Fail(AssertionError, _scalar_mismatch_msg(actual, expected, rtol=rtol, atol=atol))


def _compare(actual, expected, path, opts):
    """Walks sequences and mappings in parallel; returns (exception type, message, path)."""
    if _is_tensor_like(actual) and _is_tensor_like(expected):
        _compare_tensors(actual, expected, **opts)
        return
    if isinstance(actual, numbers.Number) and isinstance(expected, numbers.Number) \
            and not _is_tensor_like(actual) and not _is_tensor_like(expected):
        _compare_scalars(actual, expected, rtol=opts["rtol"], atol=opts["atol"],
                         equal_nan=opts["equal_nan"], check_dtype=opts["check_dtype"])
        return
    if actual is None and expected is None:
        return
    seq = (collections.abc.Sequence,)
    if isinstance(actual, seq) and isinstance(expected, seq) \
            and not isinstance(actual, str) and not isinstance(expected, str):
        if len(actual) != len(expected):
            raise _Fail(AssertionError, f"The length of the sequences mismatch: "
                                        f"{len(actual)} != {len(expected)}", path)
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare_at(a, e, path + [i], opts)
        return
    if isinstance(actual, collections.abc.Mapping) and \
            isinstance(expected, collections.abc.Mapping):
        ak, ek = set(actual.keys()), set(expected.keys())
        if ak != ek:
            missing, extra = ek - ak, ak - ek
            raise _Fail(AssertionError,
                        f"The keys of the mappings do not match:\n"
                        f"Missing keys in the actual mapping: {sorted(missing, key=repr)}\n"
                        f"Additional keys in the actual mapping: {sorted(extra, key=repr)}")
        for k in actual.keys():
            _compare_at(actual[k], expected[k], path + [k], opts)
        return
    raise _Fail(TypeError, f"No comparison pair was able to handle inputs of type "
                           f"{type(actual)} and {type(expected)}.")


def _compare_at(a, e, path, opts):
    try:
        _compare(a, e, path, opts)
    except _Fail as f:
        if not getattr(f, "path", None):
            f.path = path
        raise


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Asserts `actual` and `expected` are close: |a - e| <= atol + rtol * |e| elementwise."""
    __tracebackhide__ = True
    opts = dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device,
                check_dtype=check_dtype, check_layout=check_layout,
                check_stride=check_stride, allow_subclasses=allow_subclasses)
    try:
        _compare_at(actual, expected, [], opts)
    except _Fail as f:
        text = f.msg
        path = getattr(f, "path", [])
        if path and f.exc_type is AssertionError:
            text += "\n\nThe failure occurred for item " + "".join(f"[{p!r}]" for p in path)
        if callable(msg):
            text = msg(text)
        elif msg is not None:
            text = msg
        raise f.exc_type(text) from None


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated PyTorch spelling: tensors from anything, dtype not checked."""
    import warnings
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be "
                  "removed in a future release. Please use `torch.testing.assert_close()` "
                  "instead.", FutureWarning, stacklevel=2)
    if not isinstance(actual, ember.Tensor):
        actual = ember.tensor(actual)
    if not isinstance(expected, ember.Tensor):
        expected = ember.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = default_tolerances(actual, expected)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=True, check_dtype=False, check_stride=False, msg=msg or None)
