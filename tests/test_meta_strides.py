"""Fake tensors report what the real run gives: shape, dtype, device, strides and
contiguity, for every registry sample; and metas compute symbolic output shapes."""
import pytest

import ember

from ember.ops import REGISTRY
from ember._subclasses.fake_tensor import FakeTensorMode

from registry_samples import SAMPLES
from test_registry import sample, flat_tensors


def _layout(t):
    """What a fake tensor must report. Strides are compared on the dims of size >1
    only, as PyTorch's own fake-tensor checks do (`check_significant_strides`): a
    size-1 dim's stride is arbitrary (NumPy and PyTorch pick different ones)."""
    st = tuple(s if n > 1 else None for n, s in zip(t.shape, t.stride()))
    return (tuple(t.shape), t.dtype, str(t.device), st, t.is_contiguous())


# the fake run's layout differs from the real one, with the reason
KNOWN = {
    "accumulate_grad_": "the engine lays a real .grad out like a non-contiguous leaf "
                        "(autograd/engine.py _copy_like); a fake .grad stays the fake "
                        "gradient's layout",
}


STATIC = sorted(n for n in SAMPLES if "dynamic_output_shape" not in REGISTRY[n].tags)


@pytest.mark.parametrize("name", STATIC)
def test_fake_layout_matches_real(name):
    fn, inputs = sample(name)
    real = flat_tensors(fn(*inputs))
    mode = FakeTensorMode()
    fakes = [mode.from_tensor(x) for x in inputs]
    with mode:
        fake = flat_tensors(fn(*fakes))
    assert [_layout(o) for o in fake] == [_layout(o) for o in real]


def _fortran(x):
    """x's values in the reversed memory order (a non-contiguous layout)."""
    if x.dim() < 2:
        return x
    rev = list(range(x.dim()))[::-1]
    y = x.detach().permute(rev).contiguous().permute(rev)
    return y.requires_grad_(x.requires_grad) if x.requires_grad else y


@pytest.mark.parametrize("name", STATIC)
def test_fake_layout_matches_real_on_transposed_inputs(name):
    """The same samples on column-major inputs: views, pointwise ops and copies
    follow the input's layout in the real run, and so must the fake run."""
    if name in KNOWN:
        pytest.skip(KNOWN[name])
    fn, inputs = sample(name)
    inputs = [_fortran(x) for x in inputs]
    try:
        real = flat_tensors(fn(*inputs))
    except Exception as e:      # e.g. view() of a non-viewable layout: fake raises alike
        mode = FakeTensorMode()
        fakes = [mode.from_tensor(x) for x in inputs]
        with mode, pytest.raises(type(e)):
            fn(*fakes)
        return
    mode = FakeTensorMode()
    fakes = [mode.from_tensor(x) for x in inputs]
    with mode:
        fake = flat_tensors(fn(*fakes))
    assert [_layout(o) for o in fake] == [_layout(o) for o in real]


# ------------------------------------------------------------ the examples

def test_fake_transpose_reports_the_real_strides():
    mode = FakeTensorMode()
    x = mode.from_tensor(ember.randn(3, 4))
    with mode:
        y = x.t()
        z = y * 2                      # pointwise: follows its input's layout
        c = y.contiguous()
        r = y.reshape(12)              # not viewable: a copy, contiguous
    assert (y.stride(), y.is_contiguous()) == ((1, 4), False)
    assert (z.stride(), z.is_contiguous()) == ((1, 4), False)
    assert (c.stride(), c.is_contiguous()) == ((3, 1), True)
    assert (r.stride(), r.is_contiguous()) == ((1,), True)
    assert x[:, 1:].storage_offset() == 1 and x[:, 1:].stride() == (4, 1)
    assert str(y.device) == "cpu" and y._fake


def test_missing_meta_is_a_loud_error():
    from ember.ops._registry import OpDef, run_meta
    op = OpDef("t_no_meta", lambda a: a + 1, tags=("pointwise",))
    x = FakeTensorMode().from_tensor(ember.ones(2))
    with pytest.raises(NotImplementedError, match="fake: no meta for op 't_no_meta'"):
        run_meta(op, (x,))


# ------------------------------------------------------------ symbolic sizes

F = ember.nn.functional


def _r(*shape, kind="float"):
    g = ember.Generator().manual_seed(0)
    if kind == "index":
        return ember.randint(0, 4, shape, generator=g)
    return ember.randn(*shape, generator=g, dtype=ember.float64)


# name -> (fn, inputs of dynamic size n, dynamic dims per input, expected output shape)
SYMBOLIC = {
    "add_broadcast": (lambda x, b: x + b, lambda n: [_r(n, 3), _r(3)], [[0], []], "s0, 3"),
    "mul_column": (lambda x, c: x * c, lambda n: [_r(n, 3), _r(n, 1)], [[0], [0]], "s0, 3"),
    "outer_broadcast": (lambda x, y: x[:, None] - y, lambda n: [_r(n), _r(n + 1)], [[0], [0]],
                        "s0, s1"),
    "sum_dim": (lambda x: x.sum(1), lambda n: [_r(n, 3)], [[0]], "s0"),
    "sum_dynamic_dim": (lambda x: x.sum(0), lambda n: [_r(n, 3)], [[0]], "3"),
    "mean_keepdim": (lambda x: x.mean(-1, keepdim=True), lambda n: [_r(n, 3)], [[0]], "s0, 1"),
    "amax": (lambda x: x.amax(0), lambda n: [_r(4, n)], [[1]], "s0"),
    "matmul": (lambda x, w: x @ w, lambda n: [_r(n, 3), _r(3, n + 2)], [[0], [1]], "s0, s1"),
    "bmm": (ember.bmm, lambda n: [_r(2, n, 3), _r(2, 3, 4)], [[1], []], "2, s0, 4"),
    "linear": (F.linear, lambda n: [_r(n, 3), _r(4, 3), _r(4)], [[0], [], []], "s0, 4"),
    "conv2d": (lambda x, w: F.conv2d(x, w, padding=1), lambda n: [_r(2, 3, n, n), _r(5, 3, 3, 3)],
               [[2, 3], []], "2, 5, s0, s0"),
    "conv2d_stride": (lambda x, w: F.conv2d(x, w, stride=2),
                      lambda n: [_r(n, 3, n + 2, 7), _r(5, 3, 3, 3)], [[0, 2], []],
                      "s0, 5, ((s1 - 3)//2) + 1, 3"),
    "max_pool2d": (lambda x: F.max_pool2d(x, 2), lambda n: [_r(1, 2, n, n)], [[2, 3]],
                   "1, 2, ((s0 - 2)//2) + 1, ((s0 - 2)//2) + 1"),
    "reshape_infer": (lambda x: x.reshape(-1), lambda n: [_r(n, 3)], [[0]], "3*s0"),
    "view_split": (lambda x: x.view(x.shape[0], 3, 2), lambda n: [_r(n, 6)], [[0]], "s0, 3, 2"),
    "flatten": (lambda x: x.flatten(1), lambda n: [_r(n, 2, n)], [[0, 2]], "s0, 2*s0"),
    "transpose": (lambda x: x.transpose(0, 1), lambda n: [_r(n, 3)], [[0]], "3, s0"),
    "slice": (lambda x: x[1:, 1:], lambda n: [_r(n, 3)], [[0]], "s0 - 1, 2"),
    "slice_step": (lambda x: x[::2], lambda n: [_r(n, 3)], [[0]], "((s0 + 1)//2), 3"),
    "narrow_to_end": (lambda x: x[:, 2:], lambda n: [_r(3, n)], [[1]], "3, s0 - 2"),
    "unsqueeze": (lambda x: x.unsqueeze(1), lambda n: [_r(n, 3)], [[0]], "s0, 1, 3"),
    "cat": (lambda x, y: ember.cat([x, y, x]), lambda n: [_r(n, 3), _r(n + 1, 3)], [[0], [0]],
            "2*s0 + s1, 3"),
    "stack": (lambda x: ember.stack([x, x], 1), lambda n: [_r(n, 3)], [[0]], "s0, 2, 3"),
    "softmax": (lambda x: ember.softmax(x, -1), lambda n: [_r(3, n)], [[1]], "3, s0"),
    "log_softmax": (lambda x: F.log_softmax(x, 0), lambda n: [_r(n, 3)], [[0]], "s0, 3"),
    "layer_norm": (lambda x, w: F.layer_norm(x, (4,), w), lambda n: [_r(n, 4), _r(4)],
                   [[0], []], "s0, 4"),
    "batch_norm": (lambda x: F.batch_norm(x, None, None, training=True),
                   lambda n: [_r(n, 3, n)], [[0, 2]], "s0, 3, s0"),
    "embedding": (lambda i, w: F.embedding(i, w), lambda n: [_r(n, 2, kind="index"), _r(5, 7)],
                  [[0], []], "s0, 2, 7"),
    "cross_entropy_none": (lambda x, t: F.cross_entropy(x, t, reduction="none"),
                           lambda n: [_r(n, 4), _r(n, kind="index")], [[0], [0]], "s0"),
    "cross_entropy_mean": (F.cross_entropy, lambda n: [_r(n, 4), _r(n, kind="index")],
                           [[0], [0]], ""),
}


def _run_symbolic(name, n):
    fn, make, dyn, _ = SYMBOLIC[name]
    inputs = make(n)
    mode = FakeTensorMode()
    fakes = [mode.from_tensor(x, dynamic_dims=d) for x, d in zip(inputs, dyn)]
    with mode:
        out = fn(*fakes)
    return out, fakes, mode


@pytest.mark.parametrize("name", sorted(SYMBOLIC))
def test_symbolic_output_shape(name):
    """The fake output's sizes are the expected expressions in the input symbols, and
    evaluated at other sizes they give the real run's shape there."""
    from ember._symbolic import sym_expr
    fn, make, dyn, want = SYMBOLIC[name]
    out, fakes, mode = _run_symbolic(name, 5)
    assert ", ".join(sym_expr(s) for s in out.shape) == want
    for m in (6, 9):
        real_inputs = make(m)
        env = {}
        for f, r in zip(fakes, real_inputs):
            for s, k in zip(f.shape, r.shape):
                if not isinstance(s, int) or type(s) is not int:
                    env[sym_expr(s)] = k
        real = fn(*real_inputs)
        got = tuple(eval(sym_expr(s), {}, dict(env)) for s in out.shape)  # noqa: S307
        assert got == tuple(real.shape), (m, env)
    assert out.dtype == fn(*make(5)).dtype


def test_symbolic_sizes_keep_their_hints_and_record_guards():
    out, fakes, mode = _run_symbolic("mul_column", 5)
    assert out._data.shape == (5, 3)           # NumPy sees the hints
    assert repr(out.shape) == "torch.Size([s0, 3])"
    assert out.numel() * 2 == 6 * out.shape[0]    # symbolic, decided without a guard
    assert mode.shape_env.guards == []    # broadcasting's s0 == 1: no, as every symbol >= 2
    x = fakes[0]
    with mode:
        y = x.reshape(5, 3)               # fixes the size: a guard that s0 is 5
    assert y.shape == (5, 3) and type(y.shape[0]) is int
    assert ("3*s0", "!=", "15", False) in mode.shape_env.guards


def test_sizes_0_and_1_stay_static_and_equal_sizes_share_a_symbol():
    mode = FakeTensorMode()
    a = mode.from_tensor(ember.zeros(1, 4), dynamic_dims=[0, 1])
    b = mode.from_tensor(ember.zeros(4, 0), dynamic_dims=[0, 1])
    assert type(a.shape[0]) is int and str(a.shape[1]) == "s0"
    assert str(b.shape[0]) == "s0" and b.shape[1] == 0


def test_symint_arithmetic():
    from ember._symbolic import ShapeEnv, SymInt
    env = ShapeEnv()
    a, b = env.create_symbol(5), env.create_symbol(7)
    assert isinstance(a, SymInt) and a == 5 and str(a + 0) == "s0"
    assert str(3 * a + b - a) == "2*s0 + s1" and (3 * a + b - a) == 17
    assert str((a * b) // a) == "s1" and str((2 * a + 4) // 2) == "s0 + 2"
    assert (a - a) == 0 and type(a - a) is int
    assert str(a // 2) == "((s0)//2)" and a // 2 == 2 and a % 2 == 1
    assert env.guards[-1] == ("((s0)%2)", "==", "1", True)
    n = len(env.guards)
    assert a > 1 and a != 0 and a * b + 1 > 4 and not (a - 2 < 0)    # decided by ranges
    assert len(env.guards) == n
    assert a < 6 and len(env.guards) == n + 1                          # decided by the hint


@pytest.mark.parametrize("fn", [lambda x: x.nonzero(), lambda x: x[x > 0]])
def test_data_dependent_shapes_raise_clearly(fn):
    mode = FakeTensorMode()
    x = mode.from_tensor(ember.randn(5, 3), dynamic_dims=[0])
    with mode, pytest.raises(RuntimeError, match="depends on the data"):
        fn(x)


def test_symbolic_strides_of_dense_layouts():
    """Dense layouts (C order and its permutations) get strides in the symbols, as
    PyTorch's: (3, s0) is (s0, 1), its transpose (1, s0)."""
    from ember._symbolic import sym_expr
    mode = FakeTensorMode()
    x = mode.from_tensor(ember.randn(3, 5), dynamic_dims=[1])
    with mode:
        outs = {"x": x, "t": x.t(), "t_plus": x.t() + 1, "unsqueeze": x.unsqueeze(1),
                "t_contiguous": x.t().contiguous(), "flat": x.reshape(-1)}
    got = {k: tuple(sym_expr(s) for s in v.stride()) for k, v in outs.items()}
    assert got == {"x": ("s0", "1"), "t": ("1", "s0"), "t_plus": ("1", "s0"),
                   "unsqueeze": ("s0", "s0", "1"), "t_contiguous": ("3", "1"), "flat": ("1",)}
    assert not outs["t"].is_contiguous() and outs["t_contiguous"].is_contiguous()


# samples whose output sizes are all explicit constants in the program (view(3, 2),
# expand(2, 3, 4), fftn(s=(3, 2)), histc's bins, ...): a concrete output is right for them
CONCRETE_OUT = {"_reshape_copy", "accumulate_grad_", "as_strided", "expand", "fft_c2c", "histc",
                "histogram", "lift_fresh_copy", "resize_", "sum_to_size", "unfold_backward",
                "view", "quantized_decomposed_choose_qparams_tensor",
                "quantized_decomposed_choose_qparams_symmetric_tensor"}


@pytest.mark.parametrize("name", STATIC)
def test_every_sample_runs_on_symbolic_sizes(name):
    """Every input dim symbolic: the metas accept SymInts, the sizes' hints are the
    real run's shape, and symbols reach the output unless the program fixes its sizes."""
    fn, inputs = sample(name)
    real = flat_tensors(fn(*inputs))
    mode = FakeTensorMode()
    fakes = [mode.from_tensor(x, dynamic_dims=range(x.dim())) for x in inputs]
    with mode:
        fake = flat_tensors(fn(*fakes))
    assert [o._data.shape for o in fake] == [tuple(o.shape) for o in real]
    assert [tuple(int(s) for s in o.shape) for o in fake] == [tuple(o.shape) for o in real]
    if any(f._sym_shape is not None for f in fakes) and any(o.dim() for o in real):
        symbolic = any(o._sym_shape is not None for o in fake)
        assert symbolic == (name not in CONCRETE_OUT)
