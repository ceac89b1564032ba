"""NumPy protocols: np.asarray(t), NumPy ufuncs and functions on ember Tensors."""
import numpy as np
import pytest

from oracle import torch, check, NC, randn
import ember


def _needs(name):
    return pytest.mark.skipif(not hasattr(ember, name), reason=f"ember.{name} not written yet")


# ------------------------------------------------------------------------ __array__

def test_asarray_shares_memory_and_dtype():
    t = ember.tensor([[1., 2.], [3., 4.]])
    a = np.asarray(t)
    assert a.dtype == np.float32 and a.shape == (2, 2)
    a[0, 0] = 9
    assert t[0, 0].item() == 9
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    c = np.array(t, copy=True)
    c[0, 0] = -1
    assert t[0, 0].item() == 9


@pytest.mark.parametrize("dt", ["int64", "int32", "bool", "float64", "float16", "complex64"])
def test_asarray_dtypes(dt):
    src = np.arange(6).reshape(2, 3).astype(getattr(np, dt) if dt != "bool" else np.bool_)
    np.testing.assert_array_equal(np.asarray(ember.from_numpy(src)), src)


def test_array_requires_grad_raises_like_torch():
    with pytest.raises(RuntimeError) as te:
        np.asarray(torch.ones(2, requires_grad=True))
    with pytest.raises(RuntimeError) as ee:
        np.asarray(ember.ones(2, requires_grad=True))
    assert str(ee.value) == str(te.value)


def test_array_copy_false_with_cast_raises():
    with pytest.raises(ValueError):
        ember.ones(2).__array__(np.float64, copy=False)


def test_array_of_meta_raises():
    with pytest.raises(TypeError):      # PyTorch's type: "can't convert meta device type tensor"
        np.asarray(ember.empty(2, device="meta"))


# ------------------------------------------------------------------- __array_ufunc__

UNARY = [("exp", "exp"), ("log", "log"), ("sqrt", "sqrt"), ("sin", "sin"), ("cos", "cos"),
         ("tanh", "tanh"), ("negative", "neg"), ("absolute", "abs"), ("abs", "abs"),
         ("square", "square"), ("reciprocal", "reciprocal"), ("floor", "floor"),
         ("sign", "sign"), ("isnan", "isnan"), ("conjugate", "conj"), ("logical_not",
                                                                        "logical_not")]


@pytest.mark.parametrize("npname,tname", UNARY)
@pytest.mark.parametrize("x", [np.abs(randn(3, 4)) + 0.5, NC(np.abs(randn(3, 4)) + 0.5),
                               np.array(2.0, np.float32), np.zeros((0, 2), np.float32)],
                         ids=["plain", "noncontig", "0d", "empty"])
def test_unary_ufuncs(npname, tname, x):
    check(lambda L, a: getattr(np, npname)(a) if L is ember else getattr(torch, tname)(a), x)


BINARY = [("add", "add"), ("subtract", "sub"), ("multiply", "mul"), ("true_divide", "div"),
          ("divide", "div"), ("power", "pow"), ("maximum", "maximum"), ("minimum", "minimum"),
          ("equal", "eq"), ("not_equal", "ne"), ("less", "lt"), ("less_equal", "le"),
          ("greater", "gt"), ("greater_equal", "ge"), ("logical_and", "logical_and"),
          ("floor_divide", "floor_divide"), ("remainder", "remainder")]


@pytest.mark.parametrize("npname,tname", BINARY)
def test_binary_ufuncs(npname, tname):
    a, b = np.abs(randn(3, 4)) + 0.5, np.abs(randn(4, seed=1)) + 0.5
    grad = npname != "floor_divide"     # ember's floor_divide has no derivative yet
    check(lambda L, x, y: getattr(np, npname)(x, y) if L is ember else getattr(torch, tname)(x, y),
          a, b, grad=grad)
    # NumPy accepts a scalar operand everywhere (torch wants a tensor for some ops)
    check(lambda L, x: getattr(np, npname)(x, 2) if L is ember else
          getattr(torch, tname)(x, torch.tensor(2)), a, grad=grad)


@pytest.mark.parametrize("dt", [np.int64, np.int32, np.float64, np.float16])
def test_binary_ufunc_dtypes(dt):
    a = (np.arange(6).reshape(2, 3) + 1).astype(dt)
    check(lambda L, x, y: np.add(x, y) if L is ember else torch.add(x, y), a, randn(3))
    check(lambda L, x: np.multiply(x, 3) if L is ember else torch.mul(x, 3), a)


@_needs("matmul")
def test_matmul_ufunc():
    check(lambda L, a, b: np.matmul(a, b) if L is ember else torch.matmul(a, b),
          randn(2, 3), randn(3, 4))


def test_ufunc_result_is_tensor_and_differentiable():
    t = ember.tensor([0.5, 1.0, 2.0], requires_grad=True)
    y = np.exp(t)
    assert type(y) is ember.Tensor and y.grad_fn is not None
    np.multiply(y, 2).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), 2 * np.exp([0.5, 1.0, 2.0]), rtol=1e-6)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_ndarray_operands_promote_like_tensors():
    t = ember.ones(3)
    for r, dt in [(np.ones(3) + t, ember.float64), (t + np.ones(3), ember.float64),
                  (np.ones(3, np.float32) * t, ember.float32), (t * np.arange(3), ember.float32),
                  (np.float64(2.0) * t, ember.float32), (t - np.float64(2.0), ember.float32),
                  (np.ones((2, 3)) - t, ember.float64), (np.arange(3) < t, ember.bool)]:
        assert type(r) is ember.Tensor and r.dtype is dt
    # torch agrees on tensor + ndarray
    assert str((torch.ones(3) + np.ones(3)).dtype) == str((ember.ones(3) + np.ones(3)).dtype)


def test_ndarray_operand_gradient():
    t = ember.tensor([1., 2.], requires_grad=True)
    (np.array([3., 4.]) * t).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), [3., 4.])
    assert t.grad.dtype is ember.float32


def test_ufunc_dtype_kwarg():
    r = np.add(ember.ones(2), 1, dtype=np.float64)
    assert r.dtype is ember.float64


@pytest.mark.parametrize("call", [lambda t: np.add(t, 1, out=np.empty(3, np.float32)),
                                  lambda t: np.add(t, 1, where=np.ones(3, bool)),
                                  lambda t: np.add.reduce(t),
                                  lambda t: np.add.accumulate(t),
                                  lambda t: np.multiply.outer(t, t),
                                  lambda t: np.modf(t),
                                  lambda t: np.frexp(t)],
                         ids=["out", "where", "reduce", "accumulate", "outer", "modf", "frexp"])
def test_unsupported_ufunc_calls_raise_type_error(call):
    with pytest.raises(TypeError):
        call(ember.ones(3))


def test_unsupported_error_names_function():
    with pytest.raises(TypeError, match="reduce"):
        np.add.reduce(ember.ones(3))
    with pytest.raises(TypeError, match="modf"):
        np.modf(ember.ones(3))


# ---------------------------------------------------------------- __array_function__

def _np_vs_torch(npfn, tfn, *inputs, grad=True):
    check(lambda L, *a: npfn(*a) if L is ember else tfn(*a), *inputs, grad=grad)


X = randn(3, 4)


@pytest.mark.parametrize("x", [X, NC(X)], ids=["plain", "noncontig"])
@pytest.mark.parametrize("case", [
    ("sum", lambda a: np.sum(a), lambda a: torch.sum(a)),
    ("sum", lambda a: np.sum(a, axis=0), lambda a: torch.sum(a, dim=0)),
    ("sum", lambda a: np.sum(a, axis=-1, keepdims=True), lambda a: torch.sum(a, -1, keepdim=True)),
    ("sum", lambda a: np.sum(a, axis=(0, 1)), lambda a: torch.sum(a, (0, 1))),
    ("sum", lambda a: np.sum(a, keepdims=True), lambda a: torch.sum(a).reshape(1, 1)),
    ("sum", lambda a: np.sum(a, dtype=np.float64), lambda a: torch.sum(a, dtype=torch.float64)),
    ("mean", lambda a: np.mean(a), lambda a: torch.mean(a)),
    ("mean", lambda a: np.mean(a, axis=1, keepdims=True), lambda a: torch.mean(a, 1, True)),
    ("amax", lambda a: np.max(a, axis=0), lambda a: torch.amax(a, 0)),
    ("amax", lambda a: np.amax(a), lambda a: torch.amax(a)),
    ("amin", lambda a: np.min(a, axis=1, keepdims=True), lambda a: torch.amin(a, 1, True)),
    ("argmax", lambda a: np.argmax(a, axis=1), lambda a: torch.argmax(a, 1)),
    ("argmin", lambda a: np.argmin(a), lambda a: torch.argmin(a)),
    ("std", lambda a: np.std(a, axis=0, ddof=1), lambda a: torch.std(a, 0, correction=1)),
    ("var", lambda a: np.var(a), lambda a: torch.var(a, correction=0)),
    ("prod", lambda a: np.prod(a, axis=1), lambda a: torch.prod(a, 1)),
    ("cumsum", lambda a: np.cumsum(a, axis=1), lambda a: torch.cumsum(a, 1)),
    ("cumsum", lambda a: np.cumsum(a), lambda a: torch.cumsum(a.reshape(-1), 0)),
    ("reshape", lambda a: np.reshape(a, (2, 6)), lambda a: torch.reshape(a, (2, 6))),
    ("reshape", lambda a: np.reshape(a, -1), lambda a: torch.reshape(a, (-1,))),
    ("reshape", lambda a: np.ravel(a), lambda a: torch.reshape(a, (-1,))),
    ("permute", lambda a: np.transpose(a), lambda a: a.t()),
    ("permute", lambda a: np.transpose(a, (1, 0)), lambda a: a.permute(1, 0)),
    ("transpose", lambda a: np.swapaxes(a, 0, 1), lambda a: a.transpose(0, 1)),
    ("unsqueeze", lambda a: np.expand_dims(a, 1), lambda a: a.unsqueeze(1)),
    ("squeeze", lambda a: np.squeeze(np.expand_dims(a, 0)), lambda a: a),
    ("cat", lambda a: np.concatenate([a, a], axis=1), lambda a: torch.cat([a, a], 1)),
    ("cat", lambda a: np.concatenate((a, a)), lambda a: torch.cat([a, a])),
    ("stack", lambda a: np.stack([a, a], axis=-1), lambda a: torch.stack([a, a], -1)),
    ("where", lambda a: np.where(a > 0, a, 0.5 * a), lambda a: torch.where(a > 0, a, 0.5 * a)),
    ("clamp", lambda a: np.clip(a, -0.5, 0.5), lambda a: torch.clamp(a, -0.5, 0.5)),
    ("matmul", lambda a: np.dot(a, a.T), lambda a: a @ a.T),
    ("zeros_like", lambda a: np.zeros_like(a), lambda a: torch.zeros_like(a)),
    ("flip", lambda a: np.flip(a, 0), lambda a: torch.flip(a, (0,))),
    ("clone", lambda a: np.copy(a), lambda a: a.clone()),
], ids=lambda c: c[0] if isinstance(c, tuple) else None)
def test_array_functions(case, x):
    name, npfn, tfn = case
    if not hasattr(ember, name):
        pytest.skip(f"ember.{name} not written yet")
    _np_vs_torch(npfn, tfn, x)


def test_array_function_metadata():
    t = ember.ones(2, 3)
    assert np.shape(t) == (2, 3) and np.ndim(t) == 2 and np.size(t) == 6 and np.size(t, 1) == 3


@_needs("dot")
def test_dot_vectors():
    _np_vs_torch(lambda a, b: np.dot(a, b), torch.dot, randn(5), randn(5, seed=3))


def test_mixed_ndarray_in_array_function():
    t = ember.ones(2, 2)
    if not hasattr(ember, "cat"):
        pytest.skip("ember.cat not written yet")
    r = np.concatenate([t, np.zeros((1, 2), np.float32)])
    assert type(r) is ember.Tensor and tuple(r.shape) == (3, 2)


def test_array_function_gradient():
    t = ember.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    np.sum(np.reshape(t, (4,)) * 2).backward()
    np.testing.assert_allclose(t.grad.numpy(), np.full((2, 2), 2.0))


@pytest.mark.parametrize("call", [lambda t: np.sum(t, out=np.empty(())),
                                  lambda t: np.sum(t, where=np.ones(3, bool)),
                                  lambda t: np.sum(t, initial=1.0),
                                  lambda t: np.reshape(t, (3,), order="F")],
                         ids=["out", "where", "initial", "order"])
def test_unsupported_function_arguments(call):
    with pytest.raises(TypeError):
        call(ember.ones(3))


def test_unknown_function_names_itself():
    with pytest.raises(TypeError, match="histogram"):
        np.histogram(ember.ones(3))
    with pytest.raises(TypeError, match="fft.fft"):
        np.fft.fft(ember.ones(4))


def test_other_array_likes_defer():
    class Other:
        def __array_function__(self, func, types, args, kwargs):
            return "other"
    assert np.concatenate([ember.ones(1), Other()]) == "other"
