"""Autocast and GradScaler against PyTorch's CPU behaviour."""
import threading

import numpy as np
import pytest

from oracle import torch
import ember
from ember.ops import REGISTRY
from ember.utils._python_dispatch import TorchDispatchMode

R = np.random.default_rng(0)
A = R.standard_normal((3, 4)).astype(np.float32)
B = R.standard_normal((4, 2)).astype(np.float32)
SQ = (np.eye(3) * 2 + 0.1).astype(np.float32)


def T(L, x, dtype=None):
    t = L.from_numpy(np.array(x))
    return t.to(getattr(L, dtype)) if dtype else t


# name -> fn(L) run under autocast('cpu'); output dtypes must equal PyTorch's
CASES = {
    "mm": lambda L: L.mm(T(L, A), T(L, B)),
    "matmul": lambda L: T(L, A) @ T(L, B),
    "bmm": lambda L: L.bmm(T(L, A)[None], T(L, B)[None]),
    "mv": lambda L: L.mv(T(L, A), T(L, B)[:, 0]),
    "dot": lambda L: L.dot(T(L, A)[0], T(L, A)[1]),
    "matmul_float64": lambda L: T(L, A).double() @ T(L, B).double(),
    "matmul_bf16_f32": lambda L: T(L, A, "bfloat16") @ T(L, B),
    "cat": lambda L: L.cat([T(L, A, "bfloat16"), T(L, A)]),
    "stack": lambda L: L.stack([T(L, A, "bfloat16"), T(L, A)]),
    "cat_same": lambda L: L.cat([T(L, A), T(L, A)]),
    "prod": lambda L: T(L, A, "bfloat16").prod(),
    "softmax": lambda L: T(L, A, "bfloat16").softmax(0),
    "log_softmax": lambda L: T(L, A).log_softmax(1),
    "sum": lambda L: T(L, A, "bfloat16").sum(),
    "mean": lambda L: T(L, A).mean(),
    "exp": lambda L: T(L, A, "bfloat16").exp(),
    "add_mixed": lambda L: T(L, A, "bfloat16") + T(L, A),
    "relu": lambda L: T(L, A).relu(),
    "view_as_complex": lambda L: L.view_as_complex(T(L, A, "bfloat16").reshape(6, 2)
                                                   .float()),
    "where": lambda L: L.where(T(L, A) > 0, T(L, A, "bfloat16"), T(L, A)),
    "index_select": lambda L: T(L, A).index_select(0, L.tensor([0, 2])),
    "clamp": lambda L: T(L, A, "bfloat16").clamp(-0.5, 0.5),
}
OPTIONAL = {   # ops from other families; run when ember has them
    "addmm": lambda L: L.addmm(L.zeros(3, 2), T(L, A), T(L, B)),
    "baddbmm": lambda L: L.baddbmm(L.zeros(1, 3, 2), T(L, A)[None], T(L, B)[None]),
    "addbmm": lambda L: L.addbmm(L.zeros(3, 2), T(L, A)[None], T(L, B)[None]),
    "einsum": lambda L: L.einsum("ij,jk->ik", T(L, A), T(L, B)),
    "cumsum": lambda L: T(L, A, "bfloat16").cumsum(0),
    "cdist": lambda L: L.cdist(T(L, A, "bfloat16"), T(L, A, "bfloat16")),
    "trace": lambda L: L.trace(T(L, A, "bfloat16")[:, :3]),
    "index_copy": lambda L: T(L, A).index_copy(0, L.tensor([1]), T(L, A, "bfloat16")[:1]),
    "linalg_inv": lambda L: L.linalg.inv(T(L, SQ, "bfloat16")),
    "fft_rfft": lambda L: L.fft.rfft(T(L, A)),
    "norm": lambda L: T(L, A, "bfloat16").norm(),
    "quantile": lambda L: L.quantile(T(L, A).flatten(), 0.5),
    "polar": lambda L: L.polar(T(L, A, "bfloat16").abs(), T(L, A, "bfloat16")),
    "convolution": lambda L: L.nn.functional.conv2d(L.randn(1, 2, 5, 5), L.randn(3, 2, 3, 3)),
    "conv_transpose": lambda L: L.nn.functional.conv_transpose2d(L.randn(1, 2, 4, 4),
                                                                 L.randn(2, 3, 3, 3)),
    "linear": lambda L: L.nn.functional.linear(T(L, A), T(L, B).t()),
    "prelu": lambda L: L.nn.functional.prelu(T(L, A), L.tensor([0.25])),
    "max_pool3d": lambda L: L.nn.functional.max_pool3d(L.randn(1, 1, 4, 4, 4, dtype=L.bfloat16),
                                                        2),
    "avg_pool3d": lambda L: L.nn.functional.avg_pool3d(L.randn(1, 1, 4, 4, 4, dtype=L.bfloat16),
                                                        2),
    "_adaptive_avg_pool3d": lambda L: L.nn.functional.adaptive_avg_pool3d(
        L.randn(1, 1, 4, 4, 4, dtype=L.bfloat16), 2),
    "adaptive_max_pool3d": lambda L: L.nn.functional.adaptive_max_pool3d(
        L.randn(1, 1, 4, 4, 4, dtype=L.bfloat16), 2),
    "max_unpool2d": lambda L: L.nn.functional.max_unpool2d(
        *L.nn.functional.max_pool2d(L.randn(1, 1, 4, 4, dtype=L.bfloat16), 2,
                                    return_indices=True), 2),
    "max_unpool3d": lambda L: L.nn.functional.max_unpool3d(
        *L.nn.functional.max_pool3d(L.randn(1, 1, 4, 4, 4, dtype=L.bfloat16), 2,
                                    return_indices=True), 2),
    "reflection_pad1d": lambda L: L.nn.functional.pad(L.randn(1, 2, 5, dtype=L.bfloat16),
                                                      (1, 1), mode="reflect"),
    "reflection_pad2d": lambda L: L.nn.functional.pad(L.randn(1, 2, 5, 5, dtype=L.bfloat16),
                                                      (1, 1, 1, 1), mode="reflect"),
    "grid_sampler": lambda L: L.nn.functional.grid_sample(
        L.randn(1, 1, 4, 4, dtype=L.bfloat16), L.zeros(1, 2, 2, 2, dtype=L.bfloat16),
        align_corners=False),
    "l1_loss": lambda L: L.nn.functional.l1_loss(T(L, A, "bfloat16"), T(L, A)),
    "mse_loss": lambda L: L.nn.functional.mse_loss(T(L, A, "bfloat16"), T(L, A, "bfloat16")),
    "huber_loss": lambda L: L.nn.functional.huber_loss(T(L, A, "bfloat16"), T(L, A)),
    "smooth_l1_loss": lambda L: L.nn.functional.smooth_l1_loss(T(L, A, "bfloat16"), T(L, A)),
    "soft_margin_loss": lambda L: L.nn.functional.soft_margin_loss(T(L, A, "bfloat16"), T(L, A)),
    "kl_div": lambda L: L.nn.functional.kl_div(T(L, A, "bfloat16"), T(L, A), reduction="sum"),
    "binary_cross_entropy": lambda L: L.nn.functional.binary_cross_entropy(T(L, A, "bfloat16").sigmoid(), T(L, A).sigmoid()),  # noqa: E501
    "binary_cross_entropy_with_logits": lambda L: L.nn.functional.binary_cross_entropy_with_logits(T(L, A, "bfloat16"), T(L, A).sigmoid()),  # noqa: E501
    "poisson_nll_loss": lambda L: L.nn.functional.poisson_nll_loss(T(L, A, "bfloat16"), T(L, A).abs()),  # noqa: E501
    "margin_ranking_loss": lambda L: L.nn.functional.margin_ranking_loss(T(L, A, "bfloat16"), T(L, A), T(L, A).sign()),  # noqa: E501
    "hinge_embedding_loss": lambda L: L.nn.functional.hinge_embedding_loss(T(L, A, "bfloat16"), T(L, A).sign()),  # noqa: E501
    "cosine_embedding_loss": lambda L: L.nn.functional.cosine_embedding_loss(T(L, A, "bfloat16"), T(L, A), L.ones(3)),  # noqa: E501
    "triplet_margin_loss": lambda L: L.nn.functional.triplet_margin_loss(T(L, A, "bfloat16"), T(L, A), T(L, A) + 1),  # noqa: E501
    "multi_margin_loss": lambda L: L.nn.functional.multi_margin_loss(T(L, A, "bfloat16"), L.tensor([0, 3, 1])),  # noqa: E501
    "multilabel_margin_loss": lambda L: L.nn.functional.multilabel_margin_loss(T(L, A, "bfloat16"), L.tensor([[0, -1, 0, 0]] * 3)),  # noqa: E501
    "nll_loss": lambda L: L.nn.functional.nll_loss(T(L, A, "bfloat16"), L.tensor([0, 3, 1])),
    "cross_entropy_loss": lambda L: L.nn.functional.cross_entropy(T(L, A, "bfloat16"), L.tensor([0, 3, 1])),  # noqa: E501
    "_ctc_loss": lambda L: L.nn.functional.ctc_loss(T(L, A).log_softmax(1)[:, None], L.tensor([[1, 2]]), [3], [2]),  # noqa: E501
}


def _dtypes(out):
    if isinstance(out, (tuple, list)):
        return [str(o.dtype) for o in out]
    return str(out.dtype)


def _run(L, fn):
    with L.autocast("cpu"):
        return _dtypes(fn(L))


@pytest.mark.parametrize("name", sorted(CASES))
def test_output_dtype_matches_torch(name):
    assert _run(ember, CASES[name]) == _run(torch, CASES[name])


@pytest.mark.parametrize("name", sorted(OPTIONAL))
def test_output_dtype_matches_torch_other_families(name):
    try:
        ours = _run(ember, OPTIONAL[name])
    except (AttributeError, NotImplementedError) as e:
        pytest.skip(f"ember lacks this op yet: {e}")
    assert ours == _run(torch, OPTIONAL[name])


def test_every_casting_op_is_in_the_table():
    """Each op whose amp_policy casts appears in a CASES/OPTIONAL row (by registry name)."""
    covered = {n.split("_")[0] if n not in REGISTRY else n for n in {**CASES, **OPTIONAL}}
    casting = {n for n, op in REGISTRY.items() if op.amp_policy != "none"}
    aliases = {"linalg_inv": "inv", "fft_rfft": "fft"}
    names = set(CASES) | set(OPTIONAL) | set(aliases.values())
    missing = sorted(n for n in casting if not any(n == c or n.startswith(c) or c in n
                                                   for c in names | covered))
    assert missing == [], f"casting ops without an autocast dtype test: {missing}"


def test_float16_allowed_and_bad_dtype_disables():
    with ember.autocast("cpu", dtype=ember.float16):
        assert (ember.ones(2, 2) @ ember.ones(2, 2)).dtype is ember.float16
    with pytest.warns(UserWarning):
        with ember.autocast("cpu", dtype=ember.float64):
            assert (ember.ones(2, 2) @ ember.ones(2, 2)).dtype is ember.float32


def test_nesting_decorator_and_thread_locality():
    @ember.autocast("cpu")
    def f():
        inner = []
        t = threading.Thread(target=lambda: inner.append(ember.is_autocast_enabled("cpu")))
        t.start()
        t.join()
        with ember.autocast("cpu", enabled=False):
            off = (ember.ones(2, 2) @ ember.ones(2, 2)).dtype
        return (ember.ones(2, 2) @ ember.ones(2, 2)).dtype, off, inner[0]
    on, off, other_thread = f()
    assert on is ember.bfloat16 and off is ember.float32 and other_thread is False
    assert not ember.is_autocast_enabled("cpu")
    assert ember.get_autocast_dtype("cpu") is ember.bfloat16


class _Count(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.casts = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.name == "_to_copy":
            self.casts += 1
        return func(*args, **(kwargs or {}))


def test_weight_casts_are_cached_within_a_region():
    from ember.amp.autocast_mode import _ST
    w = ember.randn(4, 4, requires_grad=True)
    x = ember.randn(2, 4)
    with _Count() as c:
        with ember.autocast("cpu"):
            y = (x @ w) @ w
            assert len(_ST.cache) == 1
        assert _ST.cache == {}
    assert c.casts == 2            # x once, w once (cached); (x @ w) is already bf16
    y.float().sum().backward()
    assert w.grad.dtype is ember.float32 and w.grad.shape == w.shape


def test_backward_ops_are_not_autocast():
    w = ember.randn(4, 4, requires_grad=True)
    with ember.autocast("cpu"):
        loss = (ember.randn(3, 4) @ w).float().sum()
        loss.backward()
    assert w.grad.dtype is ember.float32


def test_custom_fwd_bwd_match_torch():
    def run(L):
        seen = {}

        class F(L.autograd.Function):
            @staticmethod
            @L.amp.custom_fwd(device_type="cpu", cast_inputs=L.float32)
            def forward(ctx, a):
                seen["fwd_dtype"] = str(a.dtype)
                seen["fwd_autocast"] = L.is_autocast_enabled("cpu")
                return a * 2

            @staticmethod
            @L.amp.custom_bwd(device_type="cpu")
            def backward(ctx, g):
                seen["bwd_autocast"] = L.is_autocast_enabled("cpu")
                return g * 2
        x = L.ones(3, dtype=L.bfloat16, requires_grad=True)
        with L.autocast("cpu"):
            y = F.apply(x)
        y.sum().backward()
        seen["out"] = str(y.dtype)
        return seen
    assert run(ember) == run(torch)


class SGD:
    """A minimal optimizer, duck-typed as GradScaler needs (param_groups, step)."""

    def __init__(self, params, lr):
        self.param_groups = [{"params": list(params), "lr": lr}]

    def step(self):
        for p in self.param_groups[0]["params"]:
            p.data = p.data - self.param_groups[0]["lr"] * p.grad


def scaler_run(L, steps=12, inf_at=(2, 3, 7)):
    w = L.tensor([0.5, -1.0, 2.0], requires_grad=True)
    opt = L.optim.SGD([w], lr=0.1) if L is torch else SGD([w], lr=0.1)
    scaler = L.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=3)
    scales, skipped = [], []
    for i in range(steps):
        w.grad = None
        loss = (w * w).sum() * (float("inf") if i in inf_at else 1.0)
        scaler.scale(loss).backward()
        before = w.detach().clone()
        scaler.step(opt)
        skipped.append(bool((w.detach() == before).all()))
        scaler.update()
        scales.append(scaler.get_scale())
    return scales, skipped, w.detach().numpy().tolist(), scaler.state_dict()


def test_grad_scaler_matches_torch_with_injected_infs():
    assert scaler_run(ember) == scaler_run(torch)


def test_grad_scaler_errors_and_state_dict():
    for L in (ember, torch):
        w = L.ones(2, requires_grad=True)
        opt = L.optim.SGD([w], lr=0.1) if L is torch else SGD([w], lr=0.1)
        s = L.amp.GradScaler("cpu")
        s.scale(w.sum()).backward()
        s.unscale_(opt)
        with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
            s.unscale_(opt)
        s.step(opt)
        with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
            s.step(opt)
        s.update()
    e = ember.amp.GradScaler("cpu", init_scale=8.0)
    t = torch.amp.GradScaler("cpu", init_scale=8.0)
    assert e.state_dict() == t.state_dict()
    e2 = ember.amp.GradScaler("cpu")
    e2.load_state_dict(e.state_dict())
    assert e2.get_scale() == 8.0
    with pytest.raises(RuntimeError):
        ember.amp.GradScaler("cpu").load_state_dict({})
    assert ember.amp.GradScaler("cpu", enabled=False).get_scale() == 1.0
