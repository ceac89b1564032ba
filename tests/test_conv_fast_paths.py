"""The chunked im2col forward and the stride-1 shifted-row transposed kernel against
PyTorch: odd sizes, dilation, output_padding, groups, 1-d/3-d, and empty batches, so the
zero margins that absorb the wrap-around and the chunk boundaries are exercised."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

CASES = [  # (dims, N, C, O, size, kernel, padding, dilation, output_padding, groups)
    (2, 3, 4, 6, (7, 5), (3, 3), (1, 1), (1, 1), (0, 0), 1),
    (2, 2, 4, 6, (6, 9), (3, 2), (0, 1), (2, 1), (1, 0), 2),
    (2, 40, 3, 5, (8, 8), (3, 3), (2, 2), (1, 1), (0, 0), 1),   # several chunks
    (1, 2, 3, 4, (11,), (5,), (2,), (2,), (1,), 1),
    (3, 2, 2, 4, (4, 5, 3), (2, 3, 2), (1, 0, 1), (1, 1, 2), (0, 0, 1), 2),
    (2, 0, 4, 6, (5, 5), (3, 3), (1, 1), (1, 1), (0, 0), 1),
    (2, 2, 4, 4, (5, 5), (3, 3), (1, 1), (1, 1), (0, 0), 4),   # depthwise
    (2, 2, 3, 3, (7, 6), (3, 2), (0, 2), (2, 1), (0, 0), 3),   # depthwise, dilated
    (1, 2, 3, 3, (9,), (3,), (4,), (1,), (0,), 3),             # depthwise, padding > k - 1
    (3, 1, 2, 2, (4, 3, 5), (2, 2, 3), (1, 0, 1), (1, 1, 1), (0, 0, 0), 2),
]


def _pair(case, transposed):
    dims, N, C, O, size, k, p, d, op, g = case
    rng = np.random.default_rng(0)
    xa = rng.standard_normal((N, C) + size).astype(np.float32)
    wshape = (C, O // g) + k if transposed else (O, C // g) + k
    wa = rng.standard_normal(wshape).astype(np.float32)
    ba = rng.standard_normal(O).astype(np.float32)
    out = []
    for L in (ember, torch):
        x, w, b = (L.from_numpy(a).requires_grad_() for a in (xa, wa, ba))
        F = L.nn.functional
        if transposed:
            fn = getattr(F, f"conv_transpose{dims}d")
            y = fn(x, w, b, stride=1, padding=p, output_padding=op, groups=g, dilation=d)
        else:
            y = getattr(F, f"conv{dims}d")(x, w, b, padding=p, dilation=d, groups=g)
        gy = L.from_numpy(np.random.default_rng(1).standard_normal(tuple(y.shape))
                          .astype(np.float32))
        y.backward(gy)
        out.append([t.detach().numpy() for t in (y, x.grad, w.grad, b.grad)])
    return out


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
def test_conv_values_and_grads_match_torch(case, transposed):
    if not transposed and case[8] != (0,) * case[0]:
        pytest.skip("output_padding is for the transposed convolution")
    mine, ref = _pair(case, transposed)
    for a, r, what in zip(mine, ref, ("out", "grad_input", "grad_weight", "grad_bias")):
        assert a.shape == r.shape, what
        np.testing.assert_allclose(a, r, rtol=1e-4, atol=1e-4, err_msg=what)
