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



from registry_samples import SAMPLES, NON_DIFFERENTIABLE, NO_GRADCHECK
from registry_samples._util import F64, t, idx, mask, X  # noqa: F401

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

@pytest.mark.parametrize("name", sorted(REGISTRY))
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


@pytest.mark.parametrize("name", sorted(SAMPLES))
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
    want, got = flat_tensors(op(*args)), flat_tensors(op.decomp(*args))   # multi-output too
    assert len(got) == len(want)
    for got, want in zip(got, want):
        assert got.dtype == want.dtype and tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------ autocast lists

AMP = {"mm": "lower_precision", "bmm": "lower_precision", "matmul": "lower_precision",
       "prod": "fp32", "view_as_complex": "fp32", "cat": "promote", "stack": "promote",
       "addmm": "lower_precision", "addbmm": "lower_precision", "baddbmm": "lower_precision",
       "polar": "fp32"}

AMP.update(fft_c2c="fp32", fft_r2c="fp32", fft_c2r="fp32")    # torch.fft (ember/fft/_ops.py)
AMP.update(cdist="fp32", trace="fp32", index_copy="promote")    # ember/ops/index_ops.py
AMP.update({n: "fp32" for n in ("linalg_inv_ex", "linalg_solve_ex", "linalg_cholesky_ex",
            "linalg_qr", "linalg_svd", "linalg_eigh", "linalg_eig", "linalg_lstsq")})  # linalg
AMP.update(convolution="lower_precision")    # ember/ops/conv.py (conv*d, conv_transpose*d)
AMP.update({n: "fp32" for n in ("max_pool3d", "avg_pool3d", "_adaptive_avg_pool3d",   # pool.py
            "adaptive_max_pool3d", "max_unpool2d", "max_unpool3d", "reflection_pad1d",
            "reflection_pad2d", "replication_pad1d", "replication_pad2d", "replication_pad3d",
            "grid_sampler")})
AMP.update(linear="lower_precision", prelu="lower_precision")    # ember/nn/functional (_linear, _activation)
AMP.update({n: "fp32" for n in (      # ember/ops/loss.py
    "l1_loss", "mse_loss", "huber_loss", "smooth_l1_loss", "soft_margin_loss", "kl_div",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "poisson_nll_loss",
    "margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss", "triplet_margin_loss",
    "multi_margin_loss", "multilabel_margin_loss", "nll_loss", "cross_entropy_loss", "_ctc_loss")})


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
    "addmm": lambda L, x: L.addmm(x, x, x), "addmv": lambda L, x: L.addmv(x[0], x, x[0]),
    "addbmm": lambda L, x: L.addbmm(x, x[None], x[None]), "addr": lambda L, x: L.addr(x, x[0], x[0]),
    "baddbmm": lambda L, x: L.baddbmm(x[None], x[None], x[None]),
    "polar": lambda L, x: L.polar(x, x), "angle": lambda L, x: L.angle(x),
}

TORCH_AMP.update({"fft_c2c": lambda L, x: L.fft.fftn(x),
                  "fft_r2c": lambda L, x: L.fft.rfft(x), "fft_c2r": lambda L, x: L.fft.irfft(x)})


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
