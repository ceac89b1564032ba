"""batch_norm of bfloat16/float16 inputs in C (ops/_norm_half.py): PyTorch's values,
gradients and running statistics, and the same as the NumPy path it replaces."""
import numpy as np
import pytest

import ember
from ember.ops import _norm_half

torch = pytest.importorskip("torch")


def _run(lib, tdt, training, wdt):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 16, 12, 12)).astype(np.float32) * 3 + 1
    g = rng.standard_normal(x.shape).astype(np.float32)
    w, b = rng.standard_normal(16).astype(np.float32), rng.standard_normal(16).astype(np.float32)
    rm, rv = rng.standard_normal(16).astype(np.float32), rng.random(16).astype(np.float32) + .5
    out = {}
    for L, name in ((torch, "torch"), (ember, "ember")):
        def t(a, dt):
            return L.tensor(a).to(getattr(L, dt))
        tx = t(x, tdt).requires_grad_()
        tw, tb = (t(w, wdt).requires_grad_(), t(b, wdt).requires_grad_()) if wdt else (None, None)
        trm, trv = t(rm, wdt or "float32"), t(rv, wdt or "float32")
        y = L.nn.functional.batch_norm(tx, trm, trv, tw, tb, training=training)
        y.backward(t(g, tdt))
        out[name] = [a.detach().float().numpy() for a in
                     (y, tx.grad, trm, trv) + ((tw.grad, tb.grad) if wdt else ())]
        out[name + "_dtype"] = (y.dtype, tx.grad.dtype)
    return out


@pytest.mark.parametrize("tdt", ["bfloat16", "float16"])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("wdt", ["float32", None])
def test_matches_torch_and_the_numpy_path(monkeypatch, tdt, training, wdt):
    fast = _run(_norm_half, tdt, training, wdt)
    assert str(fast["ember_dtype"][0]) == str(fast["torch_dtype"][0])
    tol = {"bfloat16": 2 ** -7, "float16": 2 ** -10}[tdt]
    for e, t in zip(fast["ember"], fast["torch"]):
        np.testing.assert_allclose(e, t, rtol=2 * tol, atol=2 * tol * max(1, np.abs(t).max()))
    monkeypatch.setattr(_norm_half, "_LIB", [None])
    slow = _run(_norm_half, tdt, training, wdt)
    for a, b in zip(fast["ember"], slow["ember"]):      # one rounding: at most one step apart
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1, np.abs(b).max()))


def test_small_and_strided_inputs_keep_the_numpy_path():
    x = ember.randn(2, 3, 4, 5).bfloat16()
    assert _norm_half.forward(x._data, None, None, None, None, True, 1e-5) is None
    big = ember.randn(8, 16, 12, 12).bfloat16().transpose(2, 3)
    assert _norm_half.forward(big._data, None, None, None, None, True, 1e-5) is None
