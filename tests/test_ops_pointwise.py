"""Pointwise ops against PyTorch: one table drives values, dtypes, grads and errors."""
import numpy as np
import pytest

from oracle import check, check_error, gradcheck, randn, NC, torch

F32, F64, F16, I32, I64, U8, B = (np.float32, np.float64, np.float16, np.int32, np.int64,
                                  np.uint8, np.bool_)


def pos(*shape, dtype=F32):
    return (np.abs(randn(*shape, dtype=np.float64)) + 0.5).astype(dtype)


def ints(*shape, dtype=I64, lo=-5, hi=6, seed=0):
    return np.random.default_rng(seed).integers(lo, hi, shape).astype(dtype)


UNARY = [
    ("neg", randn), ("exp", randn), ("log", pos), ("sqrt", pos), ("sin", randn),
    ("cos", randn), ("tanh", randn), ("sigmoid", randn), ("abs", randn), ("relu", randn),
    ("sign", randn), ("reciprocal", pos), ("square", randn), ("floor", randn),
]


@pytest.mark.parametrize("name,gen", UNARY)
@pytest.mark.parametrize("shape", [(3, 4), (), (0, 3), (2, 3, 4)])
def test_unary_values_and_grads(name, gen, shape):
    check(lambda L, a: getattr(L, name)(a), gen(*shape))
    check(lambda L, a: getattr(a, name)(), gen(*shape))


@pytest.mark.parametrize("name,gen", UNARY)
def test_unary_noncontiguous(name, gen):
    check(lambda L, a: getattr(L, name)(a), NC(gen(3, 5)))


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sin", "tanh", "sigmoid", "abs",
                                  "neg", "relu"])
@pytest.mark.parametrize("dtype", [I32, I64, U8, B, F16, F64])
def test_unary_dtypes(name, dtype):
    if dtype is U8 and name == "neg":
        pytest.skip("torch: neg on uint8 wraps; same in ember (tested with ints below)")
    a = ints(3, 4, lo=1, hi=5).astype(dtype) if dtype not in (F16, F64) else pos(3, 4, dtype=dtype)
    try:
        torch_ok = True
        getattr(torch, name)(torch.from_numpy(a))
    except Exception:
        torch_ok = False
    if torch_ok:
        check(lambda L, x: getattr(L, name)(x), a, grad=False, atol=1e-3, rtol=1e-3)
    else:
        check_error(lambda L, x: getattr(L, name)(x), a)


@pytest.mark.parametrize("name", ["exp", "sigmoid", "tanh", "sqrt", "log", "sin", "abs",
                                  "reciprocal", "square", "neg"])
def test_unary_inplace(name):
    def f(L, a):
        b = a * 1
        getattr(b, name + "_")()
        return b
    check(f, pos(3, 4))


@pytest.mark.parametrize("name", ["exp", "log", "sin", "cos", "tanh", "sigmoid", "sqrt",
                                  "reciprocal", "square"])
def test_unary_gradcheck(name):
    gradcheck(lambda L, a: getattr(L, name)(a), pos(2, 3, dtype=F64))


BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "pow"]


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("sa,sb", [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)),
                                   ((), (3,)), ((0, 4), (4,)), ((), ())])
def test_binary_broadcast(name, sa, sb):
    check(lambda L, a, b: getattr(L, name)(a, b), pos(*sa), pos(*sb, dtype=F32) + 0.1)


@pytest.mark.parametrize("name", BINARY)
def test_binary_noncontiguous(name):
    check(lambda L, a, b: getattr(L, name)(a, b), NC(pos(3, 4)), NC(pos(3, 4)))


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "pow"])
@pytest.mark.parametrize("scalar", [2, 2.5, True])
def test_binary_scalar(name, scalar):
    if name == "sub" and scalar is True:
        scalar = 3
    check(lambda L, a: getattr(L, name)(a, scalar), pos(3, 4))
    check(lambda L, a: getattr(L, name)(a, scalar), ints(3, 4, lo=1, hi=4, dtype=I32),
          grad=False)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum", "eq", "lt"])
@pytest.mark.parametrize("da,db", [(I32, F32), (F16, F64), (I64, F16), (U8, np.int8),
                                   (B, I32), (F32, F64)])
def test_binary_mixed_dtypes(name, da, db):
    a = ints(3, 4, lo=1, hi=4).astype(da)
    b = ints(4, lo=1, hi=4, seed=1).astype(db)
    if name == "sub" and B in (da, db):
        check_error(lambda L, x, y: getattr(L, name)(x, y), a, b)
        return
    check(lambda L, x, y: getattr(L, name)(x, y), a, b, grad=False, atol=1e-3)


def test_zero_dim_tensor_does_not_promote_same_kind():
    # float16 tensor + float64 0-d tensor -> float16 (PyTorch's result_type)
    check(lambda L, a, b: a + b, pos(3, dtype=F16), np.array(2.0), grad=False, atol=1e-3)
    check(lambda L, a, b: a * b, ints(3, dtype=I32), np.array(2, dtype=I64), grad=False)
    check(lambda L, a, b: a * b, ints(3, dtype=I32), np.array(2.5), grad=False)


@pytest.mark.parametrize("name", BINARY[:-1])
def test_binary_gradcheck(name):
    gradcheck(lambda L, a, b: getattr(L, name)(a, b), pos(2, 3, dtype=F64),
              pos(3, dtype=F64) + 0.3)


def test_pow_gradcheck_both():
    gradcheck(lambda L, a, b: a ** b, pos(2, 3, dtype=F64), pos(2, 3, dtype=F64))
    gradcheck(lambda L, a: 2.0 ** a, pos(4, dtype=F64))


OPERATORS = [
    ("+", lambda a, b: a + b), ("-", lambda a, b: a - b), ("*", lambda a, b: a * b),
    ("/", lambda a, b: a / b), ("//", lambda a, b: a // b), ("%", lambda a, b: a % b),
    ("**", lambda a, b: a ** b), ("==", lambda a, b: a == b), ("!=", lambda a, b: a != b),
    ("<", lambda a, b: a < b), ("<=", lambda a, b: a <= b), (">", lambda a, b: a > b),
    (">=", lambda a, b: a >= b),
]


@pytest.mark.parametrize("sym,f", OPERATORS)
def test_python_operators(sym, f):
    check(lambda L, a, b: f(a, b), pos(3, 4), pos(4) + 0.2, grad=sym not in ("//",))
    check(lambda L, a: f(a, 2), pos(3, 4), grad=sym not in ("//",))
    check(lambda L, a: f(3, a), pos(3, 4), grad=sym not in ("//", "%"))
    check(lambda L, a, b: f(a, b), ints(3, 4, lo=1, hi=9), ints(4, lo=1, hi=5, seed=3),
          grad=False)


@pytest.mark.parametrize("sym,f", [("&", lambda a, b: a & b), ("|", lambda a, b: a | b),
                                   ("^", lambda a, b: a ^ b)])
def test_bitwise_operators(sym, f):
    check(lambda L, a, b: f(a, b), ints(3, 4), ints(4, seed=2), grad=False)
    check(lambda L, a, b: f(a, b), ints(3, 4) > 0, ints(3, 4, seed=2) > 0, grad=False)
    check_error(lambda L, a, b: f(a, b), pos(3), pos(3))


def test_unary_operators():
    check(lambda L, a: -a, randn(3, 4))
    check(lambda L, a: abs(a), randn(3, 4))
    check(lambda L, a: ~a, ints(3, 4), grad=False)
    check(lambda L, a: ~a, ints(3, 4) > 0, grad=False)
    check_error(lambda L, a: ~a, randn(3))


@pytest.mark.parametrize("sym", ["+=", "-=", "*=", "/="])
def test_inplace_operators(sym):
    def f(L, a, b):
        c = a * 1
        if sym == "+=":
            c += b
        elif sym == "-=":
            c -= b
        elif sym == "*=":
            c *= b
        else:
            c /= b
        return c
    check(f, pos(3, 4), pos(4))


def test_inplace_cast_error():
    def f(L, a):
        a.add_(1.5)
    check_error(f, ints(3))


def test_inplace_broadcast_error():
    def f(L, a, b):
        a.add_(b)
    check_error(f, randn(3), randn(2, 3))


def test_broadcast_error_message():
    msg = check_error(lambda L, a, b: a + b, randn(2, 3), randn(4))
    assert "add" in msg and "[2, 3]" in msg and "[4]" in msg


def test_integer_division_semantics():
    a = np.array([-7, -3, 3, 7], dtype=I64)
    b = np.array([2, -2, 2, -3], dtype=I64)
    check(lambda L, x, y: x / y, a, b, grad=False)
    check(lambda L, x, y: x // y, a, b, grad=False)
    check(lambda L, x, y: x % y, a, b, grad=False)
    for mode in ("trunc", "floor"):
        check(lambda L, x, y: L.div(x, y, rounding_mode=mode), a, b, grad=False)
        check(lambda L, x, y: L.div(x, y, rounding_mode=mode), a.astype(F32), b.astype(F32))


def test_bool_subtraction_error():
    check_error(lambda L, a, b: a - b, ints(3) > 0, ints(3) > 1)


def test_out_argument():
    def f(L, a, b):
        out = L.empty(0)
        r = L.add(a, b, out=out)
        assert r is out
        return out
    check(f, randn(3, 4), randn(4), grad=False)
    check_error(lambda L, a: L.add(a, 1.5, out=L.empty(3, dtype=L.int64)), ints(3))


def test_comparison_of_complex_error():
    a = (randn(3) + 1j * randn(3)).astype(np.complex64)
    check_error(lambda L, x: x < x, a)
    check(lambda L, x: x == x, a, grad=False)


def test_complex_mul_grad():
    a = (randn(3) + 1j * randn(3, seed=4)).astype(np.complex128)
    b = (randn(3, seed=1) + 1j * randn(3, seed=2)).astype(np.complex128)
    check(lambda L, x, y: x * y, a, b)
    check(lambda L, x: x.exp(), a)


def test_nan_inf_propagate():
    a = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], dtype=F32)
    for name in ("exp", "sigmoid", "tanh", "abs", "relu", "neg"):
        check(lambda L, x: getattr(L, name)(x), a, grad=False)
    check(lambda L, x: x / 0.0, a, grad=False)


def test_pow_int_negative_error():
    check_error(lambda L, a: a ** -1, ints(3, lo=1, hi=3))
    # a tensor exponent is computed: 1 ** -1 == 1, 2 ** -1 == 0
    check(lambda L, a, b: a ** b, np.array([1, 2, -1, 2]), np.array([-1, -1, -3, 2]), grad=False)
