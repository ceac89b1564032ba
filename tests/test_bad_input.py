"""Issue 17: PyTorch's error contract for tensors and ops.

The corpus (tests/bad_input_cases*.py) runs every bad input with `t = torch` and `t = ember`:
where PyTorch raises, ember raises the same type (or a subclass) with a message of its own
(never a raw NumPy one); where PyTorch succeeds, ember succeeds with the same shape and
dtype. Then the NaN / -0.0 oracle tests, out-of-memory and missing-device errors.
"""
import functools
import re
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

import bad_input_cases as B  # noqa: E402
import bad_input_cases_more  # noqa: E402,F401  (registers the rest of the corpus)

# NumPy's own wording: an ember error must never read like this
NUMPY_MESSAGE = re.compile(
    r"operands could not be broadcast|is out of bounds for axis|out of bounds for array|"
    r"setting an array element with a sequence|numpy boolean|ufunc|cannot reshape array|"
    r"object arrays|array_function|Unable to allocate|np\.(?!ndarray)", re.I)

BY_NAME = {c.name: c for c in B.CASES}


def _reset():
    for m in (torch, ember):
        if m.get_default_dtype() is not m.float32:
            m.set_default_dtype(m.float32)
        if not m.is_grad_enabled():
            m.set_grad_enabled(True)


def _run(fn, mod):
    mod.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", fn(mod)
        except Exception as e:      # the corpus is about which exception
            return "err", e
        finally:
            _reset()


def _same_type(te, ee):
    """ember's exception is torch's builtin type (or a subclass); torch's own classes
    (torch.OutOfMemoryError, ...) are compared by name along ember's MRO."""
    tt = type(te)
    if tt.__module__ == "builtins":
        return isinstance(ee, tt)
    return any(k.__name__ == tt.__name__ for k in type(ee).__mro__)


def _describe(r):
    """(shape, dtype name) of a result, or of the first tensor in a tuple/list."""
    if isinstance(r, (tuple, list)) and r and not isinstance(r, (torch.Size, ember.Size)):
        r = r[0]
    if isinstance(r, (torch.Tensor, ember.Tensor)):
        return tuple(r.shape), str(r.dtype).replace("torch.", "")
    return None


@functools.lru_cache(maxsize=None)
def outcome(name):
    """(verdict, detail) for one case: 'agree', 'type', 'silent', 'raises', 'numpy',
    'result'."""
    c = BY_NAME[name]
    tk, tr = _run(c.fn, torch)
    ek, er = _run(c.fn, ember)
    if tk == "err":
        if ek == "ok":
            return "silent", f"torch raised {type(tr).__name__}({tr}); ember accepted it"
        if not _same_type(tr, er):
            return "type", (f"torch raised {type(tr).__name__}({str(tr)[:200]}); ember raised "
                            f"{type(er).__name__}({str(er)[:200]})")
        msg = str(er)
        if NUMPY_MESSAGE.search(msg) or not msg.strip():
            return "numpy", f"ember's message reads like NumPy's or is empty: {msg[:300]!r}"
        return "agree", type(tr).__name__
    if ek == "err":
        return "raises", f"torch succeeded; ember raised {type(er).__name__}({er})"
    if _describe(tr) != _describe(er):
        return "result", f"torch gave {_describe(tr)}, ember {_describe(er)}"
    return "agree", "ok"


def test_corpus_is_big_and_names_are_unique():
    assert len(B.CASES) >= 400
    assert len(BY_NAME) == len(B.CASES)


@pytest.mark.parametrize("name", [c.name for c in B.CASES if c.differs is None])
def test_bad_input_matches_torch(name):
    verdict, detail = outcome(name)
    assert verdict == "agree", f"{name}: {detail}"


@pytest.mark.parametrize("name", [c.name for c in B.CASES if c.differs is not None])
def test_listed_differences_still_differ(name):
    """A deliberate difference that no longer differs must leave the list."""
    verdict, detail = outcome(name)
    assert verdict != "agree", f"{name} now agrees with PyTorch: drop its differs= reason"


def test_summary_agreement(capsys):
    verdicts = {c.name: outcome(c.name)[0] for c in B.CASES}
    torch_raises = [n for n, v in verdicts.items() if v in ("agree", "type", "silent", "numpy")
                    and (v != "agree" or outcome(n)[1] != "ok")]
    agree = [n for n in torch_raises if verdicts[n] == "agree"]
    silent = [n for n in torch_raises if verdicts[n] == "silent"]
    rate = len(agree) / len(torch_raises)
    with capsys.disabled():
        print(f"\nbad-input corpus: {len(B.CASES)} cases, PyTorch raises in {len(torch_raises)}; "
              f"ember raises the same type in {len(agree)} ({100 * rate:.1f}%); silently "
              f"accepted: {len(silent)}; deliberate differences: "
              f"{sum(c.differs is not None for c in B.CASES)}")
    assert rate >= 0.98
    assert all(BY_NAME[n].differs for n in silent)


# ------------------------------------------------------------- out of memory, devices

def test_out_of_memory_is_a_runtime_error_naming_the_bytes():
    with pytest.raises(RuntimeError) as e:      # PyTorch's type; a MemoryError too
        ember.empty(2 ** 60, dtype=ember.uint8)
    assert isinstance(e.value, MemoryError) and isinstance(e.value, ember.OutOfMemoryError)
    msg = str(e.value)
    assert "can't allocate memory" in msg and str(2 ** 60) in msg and "empty" in msg
    with pytest.raises(RuntimeError):
        torch.empty(2 ** 60, dtype=torch.uint8)


def test_out_of_memory_inside_a_kernel():
    x = ember.ones(1, 1).expand(2 ** 22, 2 ** 22)      # a view of 64 TiB: no memory yet
    with pytest.raises(RuntimeError, match="can't allocate memory") as e:
        x.contiguous()
    assert isinstance(e.value, MemoryError)


def test_missing_cuda_is_runtime_and_assertion_error():
    for fn in (lambda: ember.ones(2, device="cuda"), lambda: ember.ones(2).cuda(),
               lambda: ember.ones(2).to("cuda:0")):
        with pytest.raises(AssertionError):
            fn()
        with pytest.raises(RuntimeError, match="not available"):
            fn()


# ----------------------------------------------------------- NaN and -0.0 semantics

VALS = [0.0, -0.0, 1.0, -1.0, float("inf"), float("-inf"), float("nan"), 3.0, 0.5, -0.5,
        2.0, -2.0, 6.0, 7.0, -0.0, 0.0]            # 16: PyTorch's whole-vector path


def _F(m):
    return m.nn.functional


ORACLE = {
    "sign": lambda m, x: m.sign(x),
    "sgn": lambda m, x: m.sgn(x),
    "gelu": lambda m, x: _F(m).gelu(x),
    "gelu tanh": lambda m, x: _F(m).gelu(x, approximate="tanh"),
    "relu": lambda m, x: m.relu(x),
    "relu -x": lambda m, x: m.relu(-x),
    "relu6": lambda m, x: _F(m).relu6(x),
    "hardtanh": lambda m, x: _F(m).hardtanh(x),
    "hardtanh 0..1": lambda m, x: _F(m).hardtanh(-x, 0.0, 1.0),
    "clamp": lambda m, x: m.clamp(x, 0.0, 2.0),
    "clamp -x": lambda m, x: m.clamp(-x, 0.0, 2.0),
    "clamp min=-0": lambda m, x: m.clamp(x, min=-0.0),
    "clamp max=0": lambda m, x: m.clamp(x, max=0.0),
    "clamp_min": lambda m, x: m.clamp_min(x, 0.0),
    "clamp_max": lambda m, x: m.clamp_max(x, -0.0),
    "fmax": lambda m, x: m.fmax(x, -m.zeros(16)),
    "fmin": lambda m, x: m.fmin(x, m.zeros(16)),
    "fmax rev": lambda m, x: m.fmax(m.zeros(16), x),
    "leaky_relu": lambda m, x: _F(m).leaky_relu(-x),
    "elu": lambda m, x: _F(m).elu(x),
    "celu": lambda m, x: _F(m).celu(x),
    "selu": lambda m, x: _F(m).selu(x),
    "threshold": lambda m, x: _F(m).threshold(x, 0.0, 5.0),
    "softshrink": lambda m, x: _F(m).softshrink(x),
    "hardshrink": lambda m, x: _F(m).hardshrink(x),
    "logsigmoid": lambda m, x: _F(m).logsigmoid(x),
    "abs": lambda m, x: m.abs(-x),
}
# PyTorch's maximum/minimum take the first operand on a tie in their scalar loop and the
# second in their vector loop; on a whole vector (16 float32) ember matches the vector loop.
for _name, _fn in {"maximum": lambda m, a, b: m.maximum(a, b),
                   "minimum": lambda m, a, b: m.minimum(a, b),
                   "max binary": lambda m, a, b: m.max(a, b),
                   "min binary": lambda m, a, b: m.min(a, b)}.items():
    ORACLE[_name + " 0"] = functools.partial(lambda f, m, x: f(m, x, m.zeros(16)), _fn)
    ORACLE[_name + " -0"] = functools.partial(lambda f, m, x: f(m, x, -m.zeros(16)), _fn)
    ORACLE[_name + " rev"] = functools.partial(lambda f, m, x: f(m, -m.zeros(16), x), _fn)


def _assert_same_values(a, b, what):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert np.array_equal(np.isnan(a), np.isnan(b)), f"{what}: NaNs differ: {a} vs {b}"
    ok = ~np.isnan(a)
    np.testing.assert_allclose(b[ok], a[ok], rtol=1e-5, atol=1e-6, err_msg=what)
    assert np.array_equal(np.signbit(a[ok]), np.signbit(b[ok])), \
        f"{what}: signs of zero differ: torch {a} vs ember {b}"


@pytest.mark.parametrize("name", sorted(ORACLE))
def test_nan_and_signed_zero_match_torch(name):
    fn = ORACLE[name]
    want = fn(torch, torch.tensor(VALS)).numpy()
    got = fn(ember, ember.tensor(VALS)).numpy()
    _assert_same_values(want, got, name)


GRAD_ORACLE = {
    "atan2 at (0, 0)": (lambda m, a, b: m.atan2(a, b), [0.0, -0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 2.0]),
    "relu": (lambda m, a: m.relu(a), VALS),
    "abs": (lambda m, a: m.abs(a), VALS),
    "sign": (lambda m, a: m.sign(a), VALS),
    "clamp": (lambda m, a: m.clamp(a, 0.0, 1.0), VALS),
    "gelu": (lambda m, a: _F(m).gelu(a), VALS),
    "maximum with nan": (lambda m, a, b: m.maximum(a, b), [0.0, 1.0, float("nan"), 2.0],
                         [0.0, 0.0, 0.0, float("nan")]),
    "minimum with nan": (lambda m, a, b: m.minimum(a, b), [0.0, 1.0, float("nan"), 2.0],
                         [0.0, 0.0, 0.0, float("nan")]),
}


@pytest.mark.parametrize("name", sorted(GRAD_ORACLE))
def test_nan_and_zero_gradients_match_torch(name):
    fn, *inputs = GRAD_ORACLE[name]

    def grads(m):
        ts = [m.tensor(v, requires_grad=True) for v in inputs]
        fn(m, *ts).sum().backward()
        return [t.grad.numpy() for t in ts]

    for want, got in zip(grads(torch), grads(ember)):
        _assert_same_values(want, got, name)


# what an error message must carry when it is not PyTorch's own text: a value, size, dtype,
# type, device, quoted name or the op's name — something that says what was wrong
_CONCRETE = re.compile(r"\d|float|int|bool|long|double|half|complex|byte|char|short|dtype|"
                       r"shape|size|dim|index|device|cpu|cuda|meta|str\b|list\b|tuple\b|"
                       r"Tensor|None|[A-Za-z_]+\(\)|'|`|\"", re.I)


def _norm(msg):
    return " ".join(msg.replace("torch.", "").replace("ember.", "").split())


def test_messages_say_what_is_wrong():
    """Issue point 'every error names the op and the offending shapes/dtypes/values': for
    every corpus case where both raise, ember's message is PyTorch's own text or names
    something concrete; and never reads like NumPy's (outcome() checks that)."""
    vague = []
    for name, c in BY_NAME.items():
        tk, tr = _run(c.fn, torch)
        ek, er = _run(c.fn, ember)
        if tk != "err" or ek != "err":
            continue
        msg = str(er)
        if _norm(msg) == _norm(str(tr)) or _CONCRETE.search(msg):
            continue
        vague.append(f"{name}: ember {msg[:100]!r}; torch {str(tr)[:100]!r}")
    assert vague == [], "\n".join(vague)
