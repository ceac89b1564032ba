"""The one oracle helper: run the same expression in ember and in PyTorch, compare.

`check(fn, *inputs)` builds each input in both frameworks from the same NumPy data,
runs `fn(lib, *tensors)` with lib = ember or torch, and compares values, dtype and
shape of every output, then (if any input is floating and `grad=True`) the
gradients of sum(outputs * random weights) with respect to each float input.
Inputs are numpy arrays, Python scalars, or `NC(array)` for a non-contiguous view.
"""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import ember  # noqa: E402


class NC:
    """Marks an input to be passed as a non-contiguous (transposed) view."""

    def __init__(self, arr):
        self.arr = np.asarray(arr)


def _make(lib, x, requires_grad):
    if isinstance(x, NC):
        a = np.ascontiguousarray(np.swapaxes(x.arr, 0, -1))
        t = _make(lib, a, False)
        t = t.transpose(0, -1)
        if requires_grad:
            t = t.detach().requires_grad_(True) if lib is ember else t.detach().requires_grad_(True)
            # keep non-contiguity: detach keeps strides in both frameworks
        return t
    if isinstance(x, np.generic):
        x = np.asarray(x)
    if isinstance(x, np.ndarray):
        if lib is torch:
            t = torch.from_numpy(x.copy())
        else:
            t = ember.from_numpy(x.copy())
        if requires_grad and x.dtype.kind in "fc":
            t.requires_grad_(True)
        return t
    return x


def to_numpy(t):
    if isinstance(t, torch.Tensor):
        t = t.detach().resolve_conj().resolve_neg()   # torch: lazy conj/neg bits
        if t.dtype == torch.bfloat16:
            t = t.float()
        return t.numpy()
    if t.dtype is ember.bfloat16:
        t = t.float()
    return t.detach().numpy()


def same_dtype(e, t):
    return str(e.dtype) == str(t.dtype)


def assert_close(e, t, atol=1e-5, rtol=1e-4, what="output"):
    assert isinstance(e, ember.Tensor), f"{what}: ember returned {type(e).__name__}"
    assert tuple(e.shape) == tuple(t.shape), f"{what}: shape {tuple(e.shape)} != torch {tuple(t.shape)}"
    assert same_dtype(e, t), f"{what}: dtype {e.dtype} != torch {t.dtype}"
    a, b = to_numpy(e), to_numpy(t)
    if a.dtype.kind in "biu":
        np.testing.assert_array_equal(a, b, err_msg=what)
    else:
        np.testing.assert_allclose(a, b, atol=atol, rtol=rtol, equal_nan=True, err_msg=what)


def _outputs(r):
    if isinstance(r, (tuple, list)):
        return list(r)
    return [r]


def check(fn, *inputs, grad=True, atol=1e-5, rtol=1e-4, grad_atol=None):
    """Compare fn(ember, *inputs) with fn(torch, *inputs): values, dtypes, shapes, grads."""
    ins_e = [_make(ember, x, grad) for x in inputs]
    ins_t = [_make(torch, x, grad) for x in inputs]
    out_e = _outputs(fn(ember, *ins_e))
    out_t = _outputs(fn(torch, *ins_t))
    assert len(out_e) == len(out_t)
    for i, (e, t) in enumerate(zip(out_e, out_t)):
        assert_close(e, t, atol, rtol, what=f"output {i}")
    if not grad:
        return out_e
    leaves_e = [x for x in ins_e if isinstance(x, ember.Tensor) and x.requires_grad]
    leaves_t = [x for x in ins_t if isinstance(x, torch.Tensor) and x.requires_grad]
    diff = [(e, t) for e, t in zip(out_e, out_t)
            if isinstance(t, torch.Tensor) and t.requires_grad]
    if not leaves_t or not diff:
        return out_e
    rng = np.random.default_rng(0)
    loss_e = loss_t = 0
    for e, t in diff:
        w = rng.standard_normal(tuple(t.shape)).astype(to_numpy(t).dtype if t.dtype != torch.bfloat16 else np.float32)
        if t.is_complex():
            w = w + 1j * rng.standard_normal(tuple(t.shape))
            w = np.asarray(w.astype(to_numpy(t).dtype))
            loss_e = loss_e + (e * ember.from_numpy(w).to(e.dtype)).real.sum()
            loss_t = loss_t + (t * torch.from_numpy(w).to(t.dtype)).real.sum()
        else:
            loss_e = loss_e + (e * ember.from_numpy(w).to(e.dtype)).sum()
            loss_t = loss_t + (t * torch.from_numpy(w).to(t.dtype)).sum()
    ge = ember.autograd.grad(loss_e, leaves_e, allow_unused=True)
    gt = torch.autograd.grad(loss_t, leaves_t, allow_unused=True)
    ga = grad_atol if grad_atol is not None else atol * 10
    for i, (a, b) in enumerate(zip(ge, gt)):
        if b is None:
            assert a is None or not to_numpy(a).any(), f"grad {i}: torch has none"
            continue
        assert a is not None, f"grad {i}: ember returned None, torch did not"
        assert_close(a, b, ga, rtol * 10, what=f"grad {i}")
    return out_e


def check_error(fn, *inputs):
    """ember raises the same exception type as PyTorch; returns ember's message."""
    ins_e = [_make(ember, x, False) for x in inputs]
    ins_t = [_make(torch, x, False) for x in inputs]
    with pytest.raises(Exception) as te:
        fn(torch, *ins_t)
    with pytest.raises(Exception) as ee:
        fn(ember, *ins_e)
    assert isinstance(ee.value, type(te.value)) or type(ee.value).__name__ == type(te.value).__name__, \
        f"ember raised {type(ee.value).__name__}({ee.value}), torch raised " \
        f"{type(te.value).__name__}({te.value})"
    return str(ee.value)


def gradcheck(fn, *arrays, **kw):
    """float64 (or complex128) gradcheck of fn(ember, *tensors) with ember's gradcheck.

    Floating arrays become float64 leaves that require grad, complex ones complex128;
    integer and bool arrays (indices, masks) stay as they are, without grad.
    """
    def leaf(a):
        a = np.asarray(a)
        if a.dtype.kind in "iub":
            return ember.from_numpy(a.copy())
        dt = np.complex128 if a.dtype.kind == "c" else np.float64
        return ember.from_numpy(a.astype(dt)).requires_grad_(True)
    ts = [leaf(a) if isinstance(a, (np.ndarray, np.generic)) else a for a in arrays]
    assert ember.autograd.gradcheck(lambda *x: fn(ember, *x), ts, **kw)


def randn(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed + len(shape)).standard_normal(shape).astype(dtype)
