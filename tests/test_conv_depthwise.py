"""The depthwise (one input channel per group) kernels against PyTorch: channels-last
multiply-adds forward and transposed (narrow images channels last, wide ones first), and the per-position contraction that computes
their weight gradient — over 1/2/3-d, batches, channel multipliers, strides, dilations,
paddings, float32 and float64 (with gradcheck), and int64."""
import numpy as np
import pytest

from oracle import check, gradcheck, randn

torch = pytest.importorskip("torch")

# (x shape, weight shape, kwargs); weight (C * multiplier, 1, *k), groups = C
DEPTHWISE = [
    ((3, 4, 11), (4, 1, 5), dict(padding=2)),
    ((2, 3, 9), (6, 1, 3), dict(stride=2, dilation=2, padding=1)),
    ((4, 5, 9, 8), (5, 1, 3, 3), dict(padding=1)),
    ((3, 4, 10, 9), (12, 1, 5, 5), dict(stride=2, padding=2)),
    ((2, 6, 9, 9), (6, 1, 3, 2), dict(stride=(2, 1), dilation=(1, 2), padding=(1, 0))),
    ((2, 3, 5, 6, 5), (6, 1, 3, 3, 2), dict(padding=1, stride=(1, 2, 1))),
    ((2, 3, 23), (6, 1, 3), dict(stride=2, padding=1)),                 # wide: channels first
    ((2, 3, 4, 19), (3, 1, 3, 3), dict(padding=(0, 2), dilation=(1, 2))),
    ((1, 2, 3, 5, 18), (4, 1, 2, 3, 3), dict(stride=(1, 1, 2))),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("xs,ws,kw", DEPTHWISE, ids=[str(i) for i in range(len(DEPTHWISE))])
def test_depthwise_matches_torch(xs, ws, kw, dtype):
    n, groups = len(ws) - 2, xs[1]
    x, w = randn(*xs, dtype=dtype), randn(*ws, dtype=dtype, seed=1)
    b = randn(ws[0], dtype=dtype, seed=2)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    check(lambda L, x, w, b: getattr(L.nn.functional, f"conv{n}d")(x, w, b, groups=groups,
                                                                     **kw),
          x, w, b, atol=tol, rtol=tol)


@pytest.mark.parametrize("xs,ws,kw", DEPTHWISE, ids=[str(i) for i in range(len(DEPTHWISE))])
def test_depthwise_transposed_matches_torch(xs, ws, kw):
    n, groups = len(ws) - 2, xs[1]
    w = randn(xs[1], ws[0] // xs[1], *ws[2:], seed=1)        # (C, multiplier, *k)
    check(lambda L, x, w: getattr(L.nn.functional, f"conv_transpose{n}d")(
        x, w, groups=groups, **kw), randn(*xs), w)


def test_depthwise_gradcheck_and_integer():
    x, w = randn(2, 3, 6, 5), randn(6, 1, 3, 3, seed=1)
    gradcheck(lambda L, x, w: L.nn.functional.conv2d(x, w, stride=2, padding=1, groups=3),
              x, w)
    xi = np.arange(2 * 3 * 5 * 4).reshape(2, 3, 5, 4) % 7 - 3
    wi = np.arange(3 * 3 * 3).reshape(3, 1, 3, 3) % 5 - 2
    check(lambda L, x, w: L.nn.functional.conv2d(x, w, padding=1, groups=3), xi, wi,
          grad=False)
