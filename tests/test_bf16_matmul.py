"""bfloat16 products on the bf16 dot-product kernel (ops/_bf16_gemm.py): float32
accumulation rounded once, as PyTorch's CPU bf16 matmul; same values with and without it."""
import numpy as np
import pytest

import ember
from ember.ops import _bf16_gemm

torch = pytest.importorskip("torch")


def _pair(*shape, seed):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return ember.tensor(x).bfloat16(), torch.tensor(x).bfloat16()


def _close(e, t):
    assert e.dtype == ember.bfloat16 and tuple(e.shape) == tuple(t.shape)
    torch.testing.assert_close(torch.tensor(e.detach().float().numpy()), t.detach().float(), rtol=1.6e-2,
                               atol=1e-2)


@pytest.mark.parametrize("m,k,n", [(96, 160, 80), (131, 257, 67), (64, 1, 4096)])
def test_mm_and_transposed(m, k, n):
    a, ta = _pair(m, k, seed=0)
    b, tb = _pair(k, n, seed=1)
    _close(a @ b, ta @ tb)
    bt, tbt = _pair(n, k, seed=2)
    _close(a @ bt.t(), ta @ tbt.t())                    # Linear's x @ W^T
    _close(a.t().t() @ b, ta @ tb)
    _close(ember.mm(a.t().contiguous().t(), b), torch.mm(ta.t().contiguous().t(), tb))


def test_linear_3d_bias_and_grads():
    x, tx = _pair(4, 50, 96, seed=3)
    w, tw = _pair(120, 96, seed=4)
    b, tb = _pair(120, seed=5)
    for t in (x, w, b, tx, tw, tb):
        t.requires_grad_()
    y, ty = ember.nn.functional.linear(x, w, b), torch.nn.functional.linear(tx, tw, tb)
    _close(y, ty)
    g, tg = _pair(4, 50, 120, seed=6)
    y.backward(g)
    ty.backward(tg)
    for e, t in ((x, tx), (w, tw), (b, tb)):
        _close(e.grad, t.grad)


def test_addmm_and_autocast():
    i, ti = _pair(80, 90, seed=7)
    a, ta = _pair(80, 200, seed=8)
    b, tb = _pair(200, 90, seed=9)
    _close(ember.addmm(i, a, b, beta=0.5, alpha=2.0), torch.addmm(ti, ta, tb, beta=0.5, alpha=2.0))
    lin = ember.nn.Linear(200, 90)
    tlin = torch.nn.Linear(200, 90)
    tlin.load_state_dict({k: torch.tensor(v.numpy()) for k, v in lin.state_dict().items()})
    with ember.autocast("cpu", dtype=ember.bfloat16), torch.autocast("cpu", dtype=torch.bfloat16):
        _close(lin(a.float()), tlin(ta.float()))


def test_kernel_equals_cast_and_sgemm(monkeypatch):
    """The kernel rounds once from a float32 sum, as the cast + sgemm path does: their
    results differ only by summation order (at most one bf16 step)."""
    a, _ = _pair(70, 300, seed=10)
    b, _ = _pair(300, 90, seed=11)
    fast = (a @ b).float().numpy()
    monkeypatch.setattr(_bf16_gemm, "_LIB", [None])
    slow = (a @ b).float().numpy()
    step = np.abs(slow) * 2.0 ** -7 + 1e-30
    assert (np.abs(fast - slow) <= step).all()
    assert (fast == slow).mean() > 0.95


def test_small_and_empty_keep_the_general_path():
    a, ta = _pair(3, 4, seed=12)
    b, tb = _pair(4, 5, seed=13)
    _close(a @ b, ta @ tb)
    e, te = _pair(0, 300, seed=14)
    w, tw = _pair(300, 1000, seed=15)
    _close(e @ w, te @ tw)


def test_sum_to_size_accumulates_in_float32():
    """Found with the bias gradient above: bf16 sum_to_size summed in bf16 (12 steps off)."""
    x, tx = _pair(4, 50, 120, seed=16)
    _close(x.sum_to_size(120), tx.sum_to_size(120))
    _close(x.half().sum_to_size(1, 50, 1).bfloat16(), tx.half().sum_to_size(1, 50, 1).bfloat16())
