"""2:4 semi-structured sparsity (ember.sparse.to_sparse_semi_structured) vs PyTorch.

PyTorch runs these products only on CUDA, so the oracle is torch's dense CPU result on the
same masked weights; its CPU-runnable CUTLASS conversion checks values()/indices().
"""
import numpy as np
import pytest
import torch
from torch.sparse._semi_structured_conversions import sparse_semi_structured_from_dense_cutlass

import ember
from ember.sparse import (SparseSemiStructuredTensor, SparseSemiStructuredTensorCUSPARSELT,
                          SparseSemiStructuredTensorCUTLASS, to_sparse_semi_structured)
from ember.sparse import _semi_structured_kernels as kernels
from ember.sparse.semi_structured import prune_2_4, semi_structured_mask

pytestmark = pytest.mark.filterwarnings("ignore:The PyTorch API of SparseSemiStructuredTensor")

DTYPES = ["float32", "bfloat16", "float16", "int8"]
TOL = {"float32": 1e-5, "bfloat16": 2e-2, "float16": 2e-3, "int8": 0}
PATTERNS = np.array([[1, 1, 0, 0], [1, 0, 1, 0], [0, 1, 1, 0], [1, 0, 0, 1], [0, 1, 0, 1],
                     [0, 0, 1, 1], [0, 0, 0, 1], [0, 0, 0, 0], [0, 1, 0, 0]])


@pytest.fixture
def cutlass():
    """float32 exists only in the CUTLASS layout (as in PyTorch): force it for a test."""
    old = SparseSemiStructuredTensor._FORCE_CUTLASS
    SparseSemiStructuredTensor._FORCE_CUTLASS = True
    yield
    SparseSemiStructuredTensor._FORCE_CUTLASS = old


def _values(rng, shape, dtype):
    if dtype == "int8":
        return rng.integers(-128, 128, shape).astype(np.float64)
    return rng.standard_normal(shape)


def _masked(rng, m, k, dtype):
    """A random 2:4 matrix (some groups with fewer than two nonzeros) as float64."""
    mask = PATTERNS[rng.integers(0, len(PATTERNS), (m, k // 4))].reshape(m, k)
    return _values(rng, (m, k), dtype) * mask


def _pair(arr, dtype):
    """The same values as an ember and a torch tensor of `dtype`."""
    t = torch.tensor(arr).to(getattr(torch, dtype))
    e = ember.tensor(t.float().numpy() if dtype != "int8" else t.numpy()).to(getattr(ember,
                                                                                    dtype))
    return e, t


def _np(t):
    t = t.detach()
    if isinstance(t, torch.Tensor):
        return t.float().numpy() if t.dtype.is_floating_point else t.numpy()
    return t.float().numpy() if t.dtype.is_floating_point else t.numpy()


def _close(e, t, dtype):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype) == str(t.dtype)
    a, b = _np(e).astype(np.float64), _np(t).astype(np.float64)
    if TOL[dtype] == 0:
        np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(a, b, rtol=TOL[dtype], atol=TOL[dtype] * 10)


def _sparse(arr, dtype):
    cls = SparseSemiStructuredTensorCUTLASS if dtype == "float32" else \
        SparseSemiStructuredTensorCUSPARSELT
    e, t = _pair(arr, dtype)
    return cls.from_dense(e), t


# ------------------------------------------------------------------ the seed example
@pytest.mark.parametrize("dtype", DTYPES)
def test_seed_linear(dtype, cutlass):
    """The tutorial's 64x64 Linear with a tiled [0, 0, 1, 1] mask (int8: 64x128, CUTLASS's
    int8 minimum is 128 columns)."""
    k = 128 if dtype == "int8" else 64
    rng = np.random.default_rng(0)
    w = _values(rng, (64, k), dtype) * np.tile([0, 0, 1, 1], (64, k // 4))
    b, x = _values(rng, (64,), dtype), _values(rng, (128, k), dtype)
    (ew, tw), (eb, tb), (ex, tx) = _pair(w, dtype), _pair(b, dtype), _pair(x, dtype)
    lin = ember.nn.Linear(k, 64)
    lin.weight = ember.nn.Parameter(to_sparse_semi_structured(ew), requires_grad=False)
    lin.bias = ember.nn.Parameter(eb, requires_grad=False)
    assert isinstance(lin.weight, SparseSemiStructuredTensor)
    assert isinstance(lin.weight, ember.nn.Parameter)
    assert any(p is lin.weight for p in lin.parameters())
    with ember.no_grad():
        _close(lin(ex), torch.nn.functional.linear(tx, tw, tb), dtype)


def test_default_layout_is_cusparselt_and_rejects_float32():
    w = ember.tensor(np.tile([0., 0., 1., 1.], (64, 16)).astype(np.float32))
    with pytest.raises(RuntimeError, match="float32 is not a supported dtype for .*CUSPARSELT"):
        to_sparse_semi_structured(w)
    assert type(to_sparse_semi_structured(w.half())) is SparseSemiStructuredTensorCUSPARSELT


def test_force_cutlass(cutlass):
    w = ember.tensor(np.tile([0., 0., 1., 1.], (64, 16)).astype(np.float32))
    s = to_sparse_semi_structured(w)
    assert type(s) is SparseSemiStructuredTensorCUTLASS
    assert repr(s) == "SparseSemiStructuredTensorCUTLASS(shape=torch.Size([64, 64]))"
    assert s.shape == (64, 64) and s.dtype == ember.float32 and s.layout == "torch.strided"


# ------------------------------------------------------------------ storage
@pytest.mark.parametrize("dtype,m,k", [("float16", 64, 128), ("bfloat16", 32, 64),
                                       ("int8", 32, 128)])
def test_cutlass_values_indices_match_pytorch(dtype, m, k):
    arr = _masked(np.random.default_rng(1), m, k, dtype)
    e, t = _pair(arr, dtype)
    s = SparseSemiStructuredTensorCUTLASS.from_dense(e)
    packed, meta = sparse_semi_structured_from_dense_cutlass(t)
    _close(s.values(), packed, dtype if dtype != "bfloat16" else "int8")
    np.testing.assert_array_equal(s.indices().numpy(), meta.numpy())
    assert str(s.indices().dtype) == str(meta.dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_to_dense_and_t(dtype):
    arr = _masked(np.random.default_rng(2), 64, 128, dtype)
    s, t = _sparse(arr, dtype)
    _close(s.to_dense(), t, "int8")
    _close(s.t().to_dense(), t.t(), "int8")
    _close(s.t().t().to_dense(), t, "int8")
    assert s.t().shape == (128, 64)
    assert s.values().shape == (64, 64)


def test_cusparselt_packed_holds_values_then_metadata():
    arr = _masked(np.random.default_rng(3), 32, 64, "float16")
    s, _ = _sparse(arr, "float16")
    packed = s.packed
    assert packed.ndim == 1 and packed.dtype == ember.float16
    np.testing.assert_array_equal(packed[:32 * 32].numpy().reshape(32, 32), s.values().numpy())
    assert s.indices().dtype == ember.int16 and s.indices().shape == (32, 4)


# ------------------------------------------------------------------ products
def _operands(dtype, m=64, k=128, n=40, seed=4):
    rng = np.random.default_rng(seed)
    s, tw = _sparse(_masked(rng, m, k, dtype), dtype)
    return s, tw, rng


@pytest.mark.parametrize("dtype", DTYPES)
def test_mm_both_sides_and_addmm(dtype):
    s, tw, rng = _operands(dtype)
    eb, tb = _pair(_values(rng, (128, 40), dtype), dtype)            # W @ B
    _close(ember.mm(s, eb), torch.mm(tw, tb), dtype)
    _close(s @ eb, tw @ tb, dtype)
    ea, ta = _pair(_values(rng, (40, 128), dtype), dtype)            # A @ W^T
    _close(ember.mm(ea, s.t()), torch.mm(ta, tw.t()), dtype)
    _close(ember.matmul(ea, s.t()), torch.matmul(ta, tw.t()), dtype)
    _close(ea @ s.t(), ta @ tw.t(), dtype)
    ec, tc = _pair(_values(rng, (40, 64), dtype), dtype)             # C @ W, W^T @ D
    _close(ember.mm(ec, s), torch.mm(tc, tw), dtype)
    ed, td = _pair(_values(rng, (64, 40), dtype), dtype)
    _close(ember.mm(s.t(), ed), torch.mm(tw.t(), td), dtype)
    ebias, tbias = _pair(_values(rng, (64,), dtype), dtype)
    _close(ember.addmm(ebias, ea, s.t()), torch.addmm(tbias, ta, tw.t()), dtype)


@pytest.mark.parametrize("dtype,m,k", [("float16", 16, 48), ("bfloat16", 80, 80),
                                       ("int8", 96, 96), ("float32", 160, 160)])
def test_reduction_not_a_multiple_of_the_kernel_block(dtype, m, k):
    """The kernels block rows and the reduction by 64; last, partial blocks still count."""
    rng = np.random.default_rng(11)
    s, tw = _sparse(_masked(rng, m, k, dtype), dtype)
    ea, ta = _pair(_values(rng, (70, k), dtype), dtype)
    ec, tc = _pair(_values(rng, (70, m), dtype), dtype)
    _close(ember.nn.functional.linear(ea, s), torch.nn.functional.linear(ta, tw), dtype)
    _close(ember.mm(ec, s), torch.mm(tc, tw), dtype)


def test_int8_extremes_wrap_like_pytorch():
    """int8 sums far past int8 (and past float32's exact range over the whole reduction)
    wrap as torch's dense int8 linear does."""
    rng = np.random.default_rng(12)
    w = -rng.integers(127, 129, (32, 4096)) * np.tile([1, 0, 0, 1], (32, 1024)).astype(float)
    w[1, ::4] = 127
    x = -rng.integers(127, 129, (3, 4096)).astype(float)       # sums ~2^25, odd low bits
    x[1] = 127
    s, tw = _sparse(w, "int8")
    ex, tx = _pair(x, "int8")
    _close(ember.nn.functional.linear(ex, s), torch.nn.functional.linear(tx, tw), "int8")


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_linear_batched_noncontiguous_and_empty(dtype):
    s, tw, rng = _operands(dtype)
    ex, tx = _pair(_values(rng, (3, 128, 5), dtype), dtype)
    ex, tx = ex.transpose(1, 2), tx.transpose(1, 2)                     # (3, 5, 128), strided
    eb, tb = _pair(_values(rng, (64,), dtype), dtype)
    _close(ember.nn.functional.linear(ex, s, eb), torch.nn.functional.linear(tx, tw, tb), dtype)
    _close(ember.nn.functional.linear(ex[0, 0], s), torch.nn.functional.linear(tx[0, 0], tw),
           dtype)                                                       # 1-d input
    e0, t0 = _pair(np.zeros((0, 128)), dtype)
    _close(ember.nn.functional.linear(e0, s, eb), torch.nn.functional.linear(t0, tw, tb), dtype)


def test_numpy_fallback_matches_kernel(monkeypatch):
    for dtype in DTYPES:
        s, tw, rng = _operands(dtype, n=70)
        ea, ta = _pair(_values(rng, (70, 128), dtype), dtype)
        ec, tc = _pair(_values(rng, (70, 64), dtype), dtype)
        fast = ember.mm(ea, s.t()), ember.mm(ec, s)
        monkeypatch.setattr(kernels, "_lib", lambda: None)
        slow = ember.mm(ea, s.t()), ember.mm(ec, s)
        monkeypatch.undo()
        for f, w, ref in zip(fast, slow, (torch.mm(ta, tw.t()), torch.mm(tc, tw))):
            _close(w, ref, dtype)
            _close(f, ref, dtype)


# ------------------------------------------------------------------ autograd
def test_grad_to_dense_operand():
    s, tw, rng = _operands("float32")
    x = rng.standard_normal((2, 7, 128))
    ex, tx = ember.tensor(x, dtype=ember.float32, requires_grad=True), \
        torch.tensor(x, dtype=torch.float32, requires_grad=True)
    g = rng.standard_normal((2, 7, 64))
    ember.nn.functional.linear(ex, s).backward(ember.tensor(g, dtype=ember.float32))
    torch.nn.functional.linear(tx, tw).backward(torch.tensor(g, dtype=torch.float32))
    _close(ex.grad, tx.grad, "float32")
    b = rng.standard_normal((128, 9))
    eb, tb = ember.tensor(b, dtype=ember.float32, requires_grad=True), \
        torch.tensor(b, dtype=torch.float32, requires_grad=True)
    (ember.mm(s, eb) ** 2).sum().backward()
    (torch.mm(tw, tb) ** 2).sum().backward()
    _close(eb.grad, tb.grad, "float32")
    a = rng.standard_normal((9, 128))
    ea, ta = ember.tensor(a, dtype=ember.float32, requires_grad=True), \
        torch.tensor(a, dtype=torch.float32, requires_grad=True)
    bias = rng.standard_normal(64)
    ebias = ember.tensor(bias, dtype=ember.float32, requires_grad=True)
    tbias = torch.tensor(bias, dtype=torch.float32, requires_grad=True)
    (ember.addmm(ebias, ea, s.t()) ** 2).sum().backward()
    (torch.addmm(tbias, ta, tw.t()) ** 2).sum().backward()
    _close(ea.grad, ta.grad, "float32")
    _close(ebias.grad, tbias.grad, "float32")


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize("make,exc,text", [
    (lambda: ember.zeros(2, 32, 32).half(), RuntimeError, "dim = 3 is not supported"),
    (lambda: ember.zeros(64, 64, dtype=ember.float64), RuntimeError,
     "float64 is not a supported dtype"),
    (lambda: ember.zeros(16, 40).half(), RuntimeError,
     r"multiple of \(16, 16\)"),
    (lambda: ember.zeros(64, 32).half().t(), RuntimeError, "not contiguous"),
    (lambda: ember.ones(32, 32).half(), RuntimeError, "not 2:4 sparse: row 0, columns 0..3"),
])
def test_conversion_errors(make, exc, text):
    with pytest.raises(exc, match=text):
        to_sparse_semi_structured(make())


def test_pytorch_shape_rules_per_dtype(cutlass):
    with pytest.raises(RuntimeError, match=r"multiple of \(16, 128\)"):
        to_sparse_semi_structured(ember.zeros(16, 64, dtype=ember.int8))
    with pytest.raises(RuntimeError, match=r"multiple of \(32, 64\)"):
        to_sparse_semi_structured(ember.zeros(32, 32, dtype=ember.bfloat16))
    assert to_sparse_semi_structured(ember.zeros(32, 32)).shape == (32, 32)


def test_product_errors():
    s, tw, rng = _operands("float16")
    x16 = ember.zeros(4, 128).half()
    with pytest.raises(NotImplementedError, match="only supported when A and B have the same"):
        ember.mm(ember.zeros(4, 128), s.t())
    with pytest.raises(RuntimeError, match=r"shapes cannot be multiplied \(4x64 and 128x64\)"):
        ember.mm(ember.zeros(4, 64).half(), s.t())
    with pytest.raises(ValueError, match="is not supported by the hardware"):
        ember.mm(s, s.t())
    with pytest.raises(NotImplementedError, match="Broadcasting is not implemented"):
        ember.mm(s, ember.zeros(2, 128, 3).half())
    with pytest.raises(NotImplementedError, match="only operand B of `addmm` can be sparse"):
        ember.addmm(ember.zeros(128).half(), s, ember.zeros(128, 128).half())
    with pytest.raises(NotImplementedError, match="only bias dim=1 supported"):
        ember.addmm(ember.zeros(4, 64).half(), x16, s.t())
    with pytest.raises(NotImplementedError, match=r"only supports a specific set of operations, "
                                                  r"can't perform requested op \(add"):
        ember.add(s, 1)
    with pytest.raises(NotImplementedError, match="only supports a specific set"):
        ember.relu(s)
    with pytest.raises(NotImplementedError, match="`view` is not implemented"):
        s.view(128, 64)
    assert s.view(64, 128) is s
    with pytest.raises(NotImplementedError, match=r"Only `to\('cpu'\)` is supported"):
        s.to(ember.float32)
    _close(s.to("cpu"), tw, "int8")
    _close(s.to(device=ember.device("cpu")), tw, "int8")
    with pytest.raises(RuntimeError, match="at least 1D, but they are 0D"):
        ember.nn.functional.linear(ember.tensor(1.).half(), s)


# ------------------------------------------------------------------ pruning
def test_semi_structured_mask_keeps_two_largest():
    rng = np.random.default_rng(5)
    w = rng.standard_normal((32, 64)).astype(np.float32)
    mask = semi_structured_mask(ember.tensor(w)).numpy()
    top = torch.tensor(np.abs(w)).reshape(-1, 4).topk(2, dim=-1).indices
    ref = torch.zeros(w.size // 4, 4, dtype=torch.bool).scatter_(1, top, True).reshape(w.shape)
    np.testing.assert_array_equal(mask, ref.numpy())
    pruned = prune_2_4(ember.tensor(w))
    np.testing.assert_array_equal(pruned.numpy(), w * ref.numpy())
    _close(to_sparse_semi_structured(pruned.half()).to_dense(), torch.tensor(w * ref.numpy())
           .half(), "int8")


def test_prune_dense_static_sort_is_2_4_both_ways():
    w = ember.tensor(np.random.default_rng(6).standard_normal((32, 64)).astype(np.float16))
    s = SparseSemiStructuredTensorCUTLASS.prune_dense_static_sort(w)
    d = s.to_dense().numpy() != 0
    assert (d.reshape(32, 16, 4).sum(-1) <= 2).all()     # greedy: some groups keep one
    assert (d.T.reshape(64, 8, 4).sum(-1) <= 2).all()
    assert d.mean() > 0.4
    tile = semi_structured_mask(w, tile=True).numpy()
    np.testing.assert_array_equal(d, tile)
    with pytest.raises(RuntimeError, match="multiple of 4"):
        semi_structured_mask(ember.zeros(3, 6))


def test_sparse_weight_gradient_raises():
    """A Parameter requires grad (as PyTorch's): the forward runs, a gradient that would
    reach the sparse matrix raises instead of being dropped."""
    w = ember.tensor(np.tile([0., 0., 1., 1.], (64, 16)).astype(np.float16))
    lin = ember.nn.Linear(64, 64).half()
    lin.weight = ember.nn.Parameter(to_sparse_semi_structured(w))
    assert lin.weight.requires_grad
    x = ember.ones(5, 64, dtype=ember.float16, requires_grad=True)
    y = lin(x)
    with pytest.raises(NotImplementedError, match="gradient w.r.t. the 2:4 sparse matrix"):
        y.sum().backward()
    assert not lin.weight.detach().requires_grad


# ------------------------------------------------------------------ ao.pruning
def _two_models(seed=7):
    rng = np.random.default_rng(seed)
    e = ember.nn.Sequential(ember.nn.Linear(16, 32), ember.nn.ReLU(), ember.nn.Linear(32, 12))
    t = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 12))
    for (_, ep), (_, tp) in zip(e.named_parameters(), t.named_parameters()):
        v = rng.standard_normal(tuple(tp.shape)).astype(np.float32)
        ep.data = ember.tensor(v)
        tp.data = torch.tensor(v)
    return e, t


@pytest.mark.parametrize("kwargs", [
    dict(sparsity_level=1.0, sparse_block_shape=(1, 4), zeros_per_block=2),   # the 2:4 recipe
    dict(sparsity_level=0.5, sparse_block_shape=(1, 4), zeros_per_block=2),
    dict(sparsity_level=0.3, sparse_block_shape=(3, 5)),
    dict(sparsity_level=0.6, sparse_block_shape=(2, 4), zeros_per_block=3, norm=1),
])
def test_weight_norm_sparsifier_matches_pytorch(kwargs):
    from torch.ao.pruning import WeightNormSparsifier as TorchSparsifier
    from ember.ao.pruning import WeightNormSparsifier
    e, t = _two_models()
    config = [{"tensor_fqn": "0.weight"}, {"tensor_fqn": "2.weight"}]
    es, ts = WeightNormSparsifier(**kwargs), TorchSparsifier(**kwargs)
    es.prepare(e, config)
    ts.prepare(t, config)
    es.step()
    ts.step()
    for fqn in ("0.weight", "2.weight"):
        np.testing.assert_array_equal(es.state[fqn]["mask"].numpy(),
                                      ts.state[fqn]["mask"].numpy())
    x = np.random.default_rng(8).standard_normal((5, 16)).astype(np.float32)
    np.testing.assert_allclose(e(ember.tensor(x)).detach().numpy(),
                               t(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-5)
    es.squash_mask()
    ts.squash_mask()
    np.testing.assert_array_equal(e[0].weight.detach().numpy(), t[0].weight.detach().numpy())
    assert not hasattr(e[0], "parametrizations")


def test_pruned_model_runs_semi_structured():
    """Tutorial flow: 2:4-prune with the sparsifier, then swap in compressed weights."""
    from ember.ao.pruning import WeightNormSparsifier
    e, t = _two_models()
    e, t = e.half(), t.half()
    s = WeightNormSparsifier(sparsity_level=1.0, sparse_block_shape=(1, 4), zeros_per_block=2)
    s.prepare(e, [{"tensor_fqn": "0.weight"}])
    s.step()
    s.squash_mask()
    x = np.random.default_rng(9).standard_normal((4, 16))
    ex, tx = _pair(x, "float16")
    t[0].weight.data = torch.tensor(e[0].weight.detach().float().numpy()).half()
    ref = t(tx)
    e[0].weight = ember.nn.Parameter(
        to_sparse_semi_structured(e[0].weight.detach()), requires_grad=False)
    with ember.no_grad():
        _close(e(ex), ref, "float16")


def test_compile_eager_backend_runs_and_inductor_refuses_clearly():
    s, tw, rng = _operands("float16")
    lin = ember.nn.Linear(128, 64).half()
    lin.weight = ember.nn.Parameter(s, requires_grad=False)
    ex, tx = _pair(_values(rng, (8, 128), "float16"), "float16")
    ref = torch.nn.functional.linear(tx, tw, torch.tensor(_np(lin.bias)).half())
    _close(ember.compile(lin, backend="eager")(ex), ref, "float16")
    with pytest.raises(NotImplementedError, match="no 2:4 kernel"):
        ember.compile(lin)(ex)
