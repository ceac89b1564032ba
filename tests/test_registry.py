"""The op registry's contract (DESIGN §4), checked for every registered op.

Every op has a cpu kernel, a meta, valid tags and a vjp (or is listed as not
differentiable). One sample per op (SAMPLES, through the public ember API) drives
the checks: the meta agrees with the kernel on every op a sample dispatches, fake
tensors get the real run's shapes and dtypes, composites match their decomposition,
and float64 gradcheck passes. Adding an op without a sample fails `test_every_op_has_a_sample`.
"""
import numpy as np
import pytest

import ember
from ember.ops import REGISTRY
from ember.ops._registry import TAGS, AMP_POLICIES, OpDef, _meta_outputs
from ember._subclasses.fake_tensor import FakeTensorMode
from ember.utils._python_dispatch import TorchDispatchMode

F64 = ember.float64

# ops whose outputs carry no gradient in PyTorch (comparisons, bitwise and logical ops,
# index-valued results, factories and the samplers with integer or index outputs)
NON_DIFFERENTIABLE = {
    "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
    "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "isnan",
    "argmax", "argmin", "all", "any", "nonzero", "nonzero_numpy",
    "full", "empty", "arange", "linspace", "logspace", "eye",
    "rand", "randn", "randint", "randperm", "multinomial", "normal_size",
}

# factories whose meta ember/ops/creation.py does not declare yet (strict: remove an
# entry as soon as its meta lands)
PENDING_META = set()

# differentiable ops that gradcheck cannot check, and why
NO_GRADCHECK = {
    "floor_divide": "PyTorch records the op but its derivative raises (not implemented)",
}


# ------------------------------------------------------------------------ inputs

def t(*shape, dtype=F64, kind="randn", seed=0):
    """A sample input: random normal, positive, small ints, or a bool mask."""
    rng = np.random.default_rng(seed + 7 * len(shape))
    if kind == "pos":
        a = rng.uniform(0.5, 2.0, shape)
    elif kind == "int":
        a = rng.integers(0, 5, shape)
    elif kind == "bool":
        a = rng.integers(0, 2, shape).astype(bool)
    else:
        a = rng.standard_normal(shape)
    if dtype.is_complex:
        a = a + 1j * rng.standard_normal(shape)
    return ember.from_numpy(np.asarray(a).astype(dtype.np))


def idx(*values):
    return ember.from_numpy(np.asarray(values, dtype=np.int64))


def mask():
    return ember.from_numpy(np.array([[True, False, True], [False, True, True]]))


X = lambda **k: t(2, 3, **k)            # noqa: E731
C128 = ember.complex128


def _unary(fn, kind="randn", dtype=F64):
    return lambda: (fn, [X(kind=kind, dtype=dtype)])


def _binary(fn, kind="randn", dtype=F64):
    return lambda: (fn, [X(kind=kind, dtype=dtype), t(3, kind=kind, dtype=dtype, seed=1)])


def _fill(method):
    """An in-place sampler on a fresh copy (a leaf that requires grad refuses in-place)."""
    return lambda: (lambda x: method(x.clone()), [X()])


SAMPLES = {
    # pointwise, unary
    "neg": _unary(lambda x: -x),
    "exp": _unary(ember.exp),
    "log": _unary(ember.log, "pos"),
    "sqrt": _unary(ember.sqrt, "pos"),
    "sin": _unary(ember.sin),
    "cos": _unary(ember.cos),
    "tanh": _unary(ember.tanh),
    "abs": _unary(ember.abs),
    "sigmoid": _unary(ember.sigmoid),
    "relu": _unary(ember.relu),
    "sign": _unary(ember.sign),
    "sgn": _unary(ember.sgn, dtype=C128),
    "floor": _unary(ember.floor),
    "reciprocal": _unary(ember.reciprocal, "pos"),
    "square": _unary(ember.square),
    "conj_physical": _unary(ember.conj_physical, dtype=C128),
    "logical_not": _unary(ember.logical_not),
    "isnan": _unary(ember.isnan),
    "bitwise_not": _unary(lambda x: ~x, "int", ember.int64),
    # pointwise, binary (y broadcasts against x)
    "add": _binary(lambda x, y: ember.add(x, y, alpha=2)),
    "sub": _binary(lambda x, y: x - y),
    "mul": _binary(lambda x, y: x * y),
    "div": _binary(lambda x, y: x / y, "pos"),
    "div_rounding": _binary(lambda x, y: ember.div(x, y, rounding_mode="floor"), "pos"),
    "floor_divide": _binary(lambda x, y: x // y, "pos"),
    "remainder": _binary(lambda x, y: x % y, "pos"),
    "pow": _binary(lambda x, y: x ** y, "pos"),
    "maximum": _binary(ember.maximum),
    "minimum": _binary(ember.minimum),
    "eq": _binary(lambda x, y: x == y, "int", ember.int64),
    "ne": _binary(lambda x, y: x != y),
    "lt": _binary(lambda x, y: x < y),
    "le": _binary(lambda x, y: x <= y),
    "gt": _binary(lambda x, y: x > y),
    "ge": _binary(lambda x, y: x >= y),
    "logical_and": _binary(ember.logical_and),
    "logical_or": _binary(ember.logical_or),
    "logical_xor": _binary(ember.logical_xor),
    "bitwise_and": _binary(lambda x, y: x & y, "int", ember.int64),
    "bitwise_or": _binary(lambda x, y: x | y, "int", ember.int64),
    "bitwise_xor": _binary(lambda x, y: x ^ y, "int", ember.int64),
    "where": lambda: (ember.where, [mask(), X(), t(3, seed=1)]),
    "clamp": _unary(lambda x: x.clamp(-0.5, 0.5)),
    # copies
    "clone": _unary(ember.clone),
    "_to_copy": _unary(lambda x: x.to(C128)),
    "contiguous": _unary(lambda x: x.t().contiguous()),
    "copy_": _binary(lambda x, y: x.clone().copy_(y)),
    # views and shape
    "view": _unary(lambda x: x.view(3, 2)),
    "_reshape_copy": _unary(lambda x: x.t().reshape(6)),
    "alias": _unary(lambda x: x.as_subclass(ember.Tensor)),
    "as_strided": _unary(lambda x: x.as_strided((2, 2), (1, 2), 1)),
    "as_strided_scatter": lambda: (
        lambda x, s: ember.as_strided_scatter(x, s, (2, 2), (1, 2), 1), [X(), t(2, 2)]),
    "expand": lambda: (lambda x: x.expand(2, 3, 4), [t(3, 1)]),
    "permute": _unary(lambda x: x.permute(1, 0)),
    "squeeze": lambda: (lambda x: x.squeeze(1), [t(2, 1, 3)]),
    "unsqueeze": _unary(lambda x: x.unsqueeze(-1)),
    "slice": _unary(lambda x: x[:, 1:3]),
    "slice_scatter": lambda: (
        lambda x, s: ember.slice_scatter(x, s, 1, 1, 3), [X(), t(2, 2)]),
    "select": _unary(lambda x: x.select(1, -1)),
    "select_scatter": lambda: (lambda x, s: ember.select_scatter(x, s, 0, 1), [X(), t(3)]),
    "split_with_sizes": _unary(lambda x: x.split([1, 2], 1)),
    "unbind": _unary(lambda x: x.unbind(1)),
    "diagonal": lambda: (lambda x: x.diagonal(1), [t(3, 4)]),
    "diagonal_scatter": lambda: (lambda x, s: ember.diagonal_scatter(x, s, -1),
                                 [t(3, 4), t(2)]),
    "unfold": lambda: (lambda x: x.unfold(1, 2, 2), [t(2, 5)]),
    "unfold_backward": lambda: (lambda g: ember.ops.get("unfold_backward")(g, (2, 5), 1, 2, 2),
                                [t(2, 2, 2)]),
    "view_as_real": _unary(ember.view_as_real, dtype=C128),
    "view_as_complex": lambda: (ember.view_as_complex, [t(3, 2)]),
    "cat": lambda: (lambda x, y: ember.cat([x, y], 1), [X(), t(2, 2)]),
    "stack": _unary(lambda x: ember.stack([x, x * 2], -1)),
    # indexing
    "index": lambda: (lambda x, i: x[:, i], [X(), idx(2, 0)]),
    "index_put": lambda: (lambda x, i, v: x.index_put((None, i), v, accumulate=True),
                          [X(), idx(2, 0, 2), t(3)]),
    "gather": lambda: (lambda x, i: x.gather(1, i), [X(), idx([0, 2], [1, 0])]),
    "scatter": lambda: (lambda x, i, s: x.scatter(1, i, s), [X(), idx([0, 2], [1, 0]), X()]),
    "scatter_add": lambda: (lambda x, i, s: x.scatter_add(1, i, s),
                            [X(), idx([0, 2], [1, 1]), X()]),
    "index_select": lambda: (lambda x, i: x.index_select(1, i), [X(), idx(2, 0, 2)]),
    "index_add": lambda: (lambda x, i, s: x.index_add(1, i, s, alpha=2),
                          [X(), idx(2, 0, 2), X()]),
    "index_fill": lambda: (lambda x, i: x.index_fill(1, i, 2.5), [X(), idx(2, 0)]),
    "masked_fill": lambda: (lambda x, m: x.masked_fill(m, 0.5), [X(), mask()]),
    "masked_select": lambda: (ember.masked_select, [X(), mask()]),
    "masked_scatter": lambda: (ember.masked_scatter, [X(), mask(), t(5)]),
    "nonzero": lambda: (ember.nonzero, [X(kind="int")]),
    "nonzero_numpy": lambda: (lambda x: ember.nonzero(x, as_tuple=True), [X(kind="int")]),
    # reductions
    "sum": _unary(lambda x: x.sum(1)),
    "sum_to_size": _unary(lambda x: x.sum_to_size(1, 3)),
    "mean": _unary(lambda x: x.mean(0, keepdim=True)),
    "prod": _unary(lambda x: x.prod(1)),
    "max": _unary(ember.max),
    "min": _unary(ember.min),
    "max_dim": _unary(lambda x: x.max(1)),
    "min_dim": _unary(lambda x: x.min(0, keepdim=True)),
    "amax": _unary(lambda x: x.amax(1)),
    "amin": _unary(lambda x: x.amin((0, 1))),
    "argmax": _unary(lambda x: x.argmax(1)),
    "argmin": _unary(ember.argmin),
    "all": _unary(lambda x: x.all(1)),
    "any": _unary(ember.any),
    "var": _unary(lambda x: x.var(1)),
    "std": _unary(lambda x: x.std(0, correction=0)),
    # matrix products
    "mm": lambda: (ember.mm, [X(), t(3, 4)]),
    "bmm": lambda: (ember.bmm, [t(2, 2, 3), t(2, 3, 4)]),
    "mv": lambda: (ember.mv, [X(), t(3)]),
    "dot": lambda: (ember.dot, [t(3), t(3, seed=1)]),
    "matmul": lambda: (ember.matmul, [t(2, 2, 3), t(3, 4)]),
    # softmax
    "softmax": _unary(lambda x: ember.softmax(x, 1)),
    "log_softmax": _unary(lambda x: ember.log_softmax(x, 0)),
    # factories
    "full": lambda: (lambda: ember.full((2, 3), 1.5), []),
    "empty": lambda: (lambda: ember.empty(2, 3, dtype=ember.int32), []),
    "arange": lambda: (lambda: ember.arange(1, 7, 2), []),
    "linspace": lambda: (lambda: ember.linspace(0, 1, 5), []),
    "logspace": lambda: (lambda: ember.logspace(0, 1, 4), []),
    "eye": lambda: (lambda: ember.eye(3, 2), []),
    # random
    "rand": lambda: (lambda: ember.rand(2, 3), []),
    "randn": lambda: (lambda: ember.randn(2, 3, dtype=F64), []),
    "randint": lambda: (lambda: ember.randint(0, 5, (2, 3)), []),
    "randperm": lambda: (lambda: ember.randperm(5), []),
    "multinomial": lambda: (lambda p: ember.multinomial(p, 2), [X(kind="pos")]),
    "normal": lambda: (ember.normal, [X(), X(kind="pos")]),
    "normal_size": lambda: (lambda: ember.normal(0.0, 1.0, size=(2, 3)), []),
    "bernoulli": lambda: (ember.bernoulli, [X(kind="pos") / 3]),
    "bernoulli_p": _unary(lambda x: ember.bernoulli(x, 0.5)),
    "bernoulli_tensor": lambda: (lambda x, p: x.clone().bernoulli_(p), [X(), t(3, kind="pos") / 3]),
    "uniform": _fill(lambda x: x.uniform_(-1, 1)),
    "normal_functional": _fill(lambda x: x.normal_()),
    "random": _fill(lambda x: x.random_(0, 5)),
    "exponential": _fill(lambda x: x.exponential_()),
    "geometric": _fill(lambda x: x.geometric_(0.5)),
    "log_normal": _fill(lambda x: x.log_normal_()),
    "cauchy": _fill(lambda x: x.cauchy_()),
}


def sample(name, requires_grad=True):
    """(fn, inputs) for the op; floating inputs require grad, so autograd runs too."""
    fn, inputs = SAMPLES[name]()
    for x in inputs:
        if requires_grad and (x.dtype.is_floating_point or x.dtype.is_complex):
            x.requires_grad_(True)
    return fn, inputs


def flat_tensors(out):
    if isinstance(out, ember.Tensor):
        return [out]
    return [x for o in out for x in flat_tensors(o)]


class Record(TorchDispatchMode):
    """Records the registry ops a program dispatches; optionally checks each op's meta
    against its kernel's outputs on the real arguments."""

    def __init__(self, check_meta=False):
        super().__init__()
        self.names, self.calls, self.check_meta = [], [], check_meta

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.append(func.name)
        self.calls.append((func, args))
        out = func(*args)
        if self.check_meta:
            want = [(tuple(o.shape), o.dtype) for o in flat_tensors(out)]
            got = _meta_outputs(func.meta(*args))
            assert got is not None, f"{func.name}: meta returned nothing usable"
            assert [(tuple(s), d) for s, d in got] == want, f"{func.name}: meta {got} != {want}"
        return out


# -------------------------------------------------------------- the declarations

def _pending(names):
    return [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason="no meta yet"))
            if n in PENDING_META else n for n in sorted(names)]


@pytest.mark.parametrize("name", _pending(REGISTRY))
def test_op_is_fully_declared(name):
    op = REGISTRY[name]
    assert callable(op.kernels.get("cpu")), "no cpu kernel"
    assert callable(op.meta), "no meta"
    assert op.tags and op.tags <= TAGS.keys(), f"tags {sorted(op.tags)}"
    assert op.amp_policy in AMP_POLICIES
    assert ("composite" in op.tags) == (op.decomp is not None)
    assert ("view" in op.tags) == op.view
    if name in NON_DIFFERENTIABLE:
        assert op.vjp is None, "listed as not differentiable but has a vjp"
    else:
        assert op.vjp is not None, "no vjp and not on NON_DIFFERENTIABLE"


def test_unknown_tags_and_policies_are_refused():
    with pytest.raises(ValueError, match="unknown tags"):
        OpDef("t_bad_tag", abs, tags=("pointwse",))
    with pytest.raises(ValueError, match="needs a decomp"):
        OpDef("t_composite", abs, tags=("composite",))
    with pytest.raises(ValueError, match="amp_policy"):
        OpDef("t_amp", abs, tags=("pointwise",), amp_policy="fp16")
    assert OpDef("t_ok", abs, decomp=abs).tags == {"composite"}


def test_every_op_has_a_sample():
    assert sorted(set(REGISTRY) - set(SAMPLES)) == [], "ops without a sample in SAMPLES"
    assert sorted(set(SAMPLES) - set(REGISTRY)) == [], "samples of ops that do not exist"


@pytest.mark.parametrize("name", _pending(SAMPLES))
def test_sample_dispatches_its_op_and_metas_match_kernels(name):
    fn, inputs = sample(name)
    with Record(check_meta=True) as rec:
        fn(*inputs)
    assert name in rec.names, f"the sample dispatched {rec.names}"


# ------------------------------------------------------------------ fake tensors

@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_fake_tensor_parity(name):
    fn, inputs = sample(name)
    mode = FakeTensorMode()
    fakes = [mode.from_tensor(x) for x in inputs]
    if "dynamic_output_shape" in REGISTRY[name].tags:
        with mode, pytest.raises(RuntimeError, match="depends on the data"):
            fn(*fakes)
        return
    real = flat_tensors(fn(*inputs))
    with mode:
        fake = flat_tensors(fn(*fakes))
    assert [(tuple(o.shape), o.dtype) for o in fake] == \
        [(tuple(o.shape), o.dtype) for o in real]
    assert all(o._fake and o._backend == "meta" for o in fake)


@pytest.mark.parametrize("name", ["nonzero", "nonzero_numpy", "masked_select"])
def test_dynamic_shape_metas_refuse_meta_inputs(name):
    fn, inputs = sample(name, requires_grad=False)
    with Record() as rec:
        fn(*inputs)
    op, args = next((f, a) for f, a in rec.calls if f.name == name)
    meta_args = [ember.empty(x.shape, dtype=x.dtype, device="meta")
                 if isinstance(x, ember.Tensor) else x for x in args]
    with pytest.raises(RuntimeError, match="depends on the data"):
        op.meta(*meta_args)


BAD_CALLS = {
    "mm_shapes": (lambda a, b: a.mm(b), [t(2, 3), t(2, 3)]),
    "matmul_dtypes": (lambda a, b: a @ b, [t(2, 3), t(3, 2, dtype=ember.float32)]),
    "cat_sizes": (lambda a, b: ember.cat([a, b]), [t(2, 3), t(2, 4)]),
    "gather_rank": (lambda a, i: a.gather(1, i), [t(2, 3), idx(0, 1)]),
    "sum_to_size": (lambda a: a.sum_to_size(1, 1, 3), [t(2, 3)]),
    "as_strided_bounds": (lambda a: a.as_strided((3, 3), (3, 1)), [t(2, 3)]),
    "as_strided_scatter_src": (lambda a, s: ember.as_strided_scatter(a, s, (2, 2), (1, 1)),
                               [t(2, 3), t(2)]),
    "index_put_values": (lambda a, i, v: a.index_put((i,), v), [t(2, 3), idx(0, 1), t(4)]),
    "index_fill_value": (lambda a, i, v: a.index_fill(0, i, v), [t(2, 3), idx(1), t(3)]),
    "expand": (lambda a: a.expand(4, 4), [t(2, 3)]),
    "masked_fill_mask": (lambda a, m: a.masked_fill(m, 1.0), [t(2, 3), t(2, 3)]),
    "softmax_int": (lambda a: ember.softmax(a, 0), [t(3, dtype=ember.int64, kind="int")]),
    "mean_int": (lambda a: a.mean(), [t(3, dtype=ember.int64, kind="int")]),
    "copy_shape": (lambda a, b: a.copy_(b), [t(2, 3), t(4)]),
    "view_as_real": (ember.view_as_real, [t(3)]),
    "select_scatter_src": (lambda a, s: ember.select_scatter(a, s, 0, 0), [t(2, 3), t(2)]),
    "split_sizes": (lambda a: a.split([1, 1], 1), [t(2, 3)]),
}


@pytest.mark.parametrize("name", sorted(BAD_CALLS))
def test_fake_mode_raises_the_eager_error(name):
    fn, inputs = BAD_CALLS[name]
    with pytest.raises(Exception) as eager:
        fn(*inputs)
    mode = FakeTensorMode()
    fakes = [mode.from_tensor(x) for x in inputs]
    with mode, pytest.raises(type(eager.value)):
        fn(*fakes)


# ------------------------------------------------------------- autograd, decomps

DIFFERENTIABLE = sorted(n for n, op in REGISTRY.items()
                        if op.vjp is not None and "random" not in op.tags and n in SAMPLES)


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_gradcheck(name):
    if name in NO_GRADCHECK:
        pytest.skip(NO_GRADCHECK[name])
    fn, inputs = sample(name)
    assert any(x.requires_grad for x in inputs), "the sample has no float64 input"
    assert ember.autograd.gradcheck(fn, inputs)


@pytest.mark.parametrize("name", sorted(n for n, op in REGISTRY.items() if op.decomp))
def test_decomposition_matches_the_kernel(name):
    fn, inputs = sample(name, requires_grad=False)
    with Record() as rec:
        fn(*inputs)
    op, args = next((f, a) for f, a in rec.calls if f.name == name)
    want, got = op(*args), op.decomp(*args)
    assert got.dtype == want.dtype and tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------ autocast lists

AMP = {"mm": "lower_precision", "bmm": "lower_precision", "matmul": "lower_precision",
       "prod": "fp32", "view_as_complex": "fp32", "cat": "promote", "stack": "promote"}


def test_amp_policies():
    """Exactly PyTorch's AutocastCPU lists (aten/src/ATen/autocast_mode.cpp), for the
    ops ember has; CUDA's fp32 list (softmax, sum, ...) does not apply on cpu."""
    assert {n: op.amp_policy for n, op in REGISTRY.items() if op.amp_policy != "none"} == AMP


TORCH_AMP = {
    "mm": lambda L, x: L.mm(x, x), "bmm": lambda L, x: L.bmm(x[None], x[None]),
    "matmul": lambda L, x: x @ x, "mv": lambda L, x: L.mv(x, x[0]),
    "dot": lambda L, x: L.dot(x[0], x[0]), "prod": lambda L, x: x.prod(),
    "sum": lambda L, x: x.sum(), "mean": lambda L, x: x.mean(), "var": lambda L, x: x.var(),
    "softmax": lambda L, x: L.softmax(x, 0), "log_softmax": lambda L, x: L.log_softmax(x, 0),
    "exp": lambda L, x: x.exp(), "view_as_complex": lambda L, x: L.view_as_complex(x[:, :2]),
}


@pytest.mark.parametrize("name", sorted(TORCH_AMP))
def test_amp_policy_matches_torch_autocast_cpu(name):
    """Under torch's cpu autocast (bfloat16): lower_precision turns float32 into
    bfloat16, fp32 turns bfloat16 into float32, other ops keep their input dtype."""
    torch = pytest.importorskip("torch")
    fn = TORCH_AMP[name]
    x = torch.randn(3, 2 if name == "view_as_complex" else 3)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        from_f32 = fn(torch, x).dtype
        from_bf16 = fn(torch, x.bfloat16()).dtype
    policy = ("lower_precision" if from_f32 == torch.bfloat16 else
              "fp32" if from_bf16 in (torch.float32, torch.complex64) else "none")
    assert REGISTRY[name].amp_policy == policy


# ------------------------------------------- bugs found while declaring the metas

ERRORS_LIKE_TORCH = {   # each was silently accepted (or the wrong exception) before
    "as_strided_scatter_src": (lambda L, a, s: L.as_strided_scatter(a, s, (2, 2), (1, 1)),
                               np.zeros((2, 3)), np.ones(2)),
    "as_strided_negative_stride": (lambda L, a: a.as_strided((2, 2), (1, -1)), np.zeros(6)),
    "as_strided_past_storage": (lambda L, a: a.as_strided((2, 2), (1, 1), 10), np.zeros(6)),
    "index_fill_1d_value": (lambda L, a, v: a.index_fill(0, L.tensor([1]), v),
                            np.zeros((4, 3)), np.ones(3)),
    "masked_scatter__dtype": (lambda L, a, s: a.masked_scatter_(a > 0, s),
                              np.ones(3, np.float32), np.ones(3)),
    "stack_non_tensor": (lambda L, a: L.stack([1, a]), np.ones(2)),
    "sum_to_size_rank": (lambda L, a: a.sum_to_size(1, 1, 3), np.ones((2, 3))),
}


@pytest.mark.parametrize("name", sorted(ERRORS_LIKE_TORCH))
def test_bad_input_raises_like_torch(name):
    from oracle import check_error
    fn, *inputs = ERRORS_LIKE_TORCH[name]
    check_error(fn, *inputs)


def test_bug_fixes_match_torch():
    from oracle import check, gradcheck
    z = np.array([1 + 2j, -0.5 + 0.1j, 3 - 1j])
    check(lambda L, a: L.sgn(a), z)                     # complex sgn's backward crashed
    check(lambda L, a: a.unfold(0, 0, 1), np.array(5.0))   # 0-d, size 0: shape (0,)
    gradcheck(lambda L, a: L.view_as_complex(a), np.ones((3, 2)))   # view of another itemsize
