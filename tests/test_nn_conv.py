"""Convolutions against PyTorch: F.conv1d/2d/3d, F.conv_transpose1d/2d/3d (outputs and
input/weight/bias grads over strides, paddings incl. 'same'/'valid', dilations, groups,
output_padding, unbatched, empty batch, non-contiguous, float16/bfloat16/int), float64
gradcheck and double backward, PyTorch's errors, F.unfold/F.fold, the shuffles, and the
modules (Conv*, ConvTranspose*, Fold/Unfold, PixelShuffle/Unshuffle, ChannelShuffle):
weights copied from torch, same outputs and grads, same repr, same constructor errors."""
import math
import warnings

import numpy as np
import pytest

import ember
from oracle import NC, check, check_error, gradcheck, randn

torch = pytest.importorskip("torch")

warnings.filterwarnings("ignore", message="Using padding='same'")


def r(*shape, seed=0, dtype=np.float64):
    return randn(*shape, dtype=dtype, seed=seed)


def F(L):
    return L.nn.functional


# (x shape, weight shape, has bias, kwargs) for F.conv{n}d
CONV = [
    ((2, 3, 9), (4, 3, 3), True, {}),
    ((2, 4, 10), (6, 2, 3), True, dict(stride=2, padding=1, dilation=2, groups=2)),
    ((3, 11), (2, 3, 4), False, dict(padding="same")),                       # unbatched
    ((1, 2, 8), (2, 1, 4), True, dict(padding="same", dilation=3, groups=2)),
    ((2, 3, 7), (4, 3, 5), True, dict(padding="valid", stride=(3,))),
    ((2, 3, 7, 6), (4, 3, 3, 3), True, {}),
    ((2, 3, 7, 6), (4, 3, 3, 2), True, dict(stride=(2, 1), padding=(1, 2))),
    ((1, 4, 8, 9), (8, 1, 3, 3), True, dict(padding=1, groups=4)),            # depthwise
    ((2, 6, 9, 8), (4, 3, 2, 3), False, dict(stride=2, dilation=(2, 1), groups=2)),
    ((2, 3, 6, 7), (5, 3, 2, 4), True, dict(padding="same")),                 # even kernel
    ((2, 3, 6, 7), (5, 3, 3, 3), True, dict(padding="same", dilation=2)),
    ((3, 5, 5), (2, 3, 3, 3), True, dict(padding=1)),                         # unbatched
    ((0, 3, 5, 5), (2, 3, 3, 3), True, {}),                                   # empty batch
    ((2, 3, 5, 5), (2, 3, 1, 1), True, {}),                                   # 1x1
    ((1, 2, 5, 4, 6), (3, 2, 2, 3, 2), True, dict(stride=(1, 2, 2), padding=1)),
    ((2, 4, 5, 5, 4), (4, 2, 3, 1, 2), True, dict(dilation=(1, 2, 2), groups=2)),
    ((2, 4, 4, 5), (4, 2, 2, 2), True, dict(padding="same", groups=2)),
    ((3, 5, 6), (4, 3, 3, 3), True, dict(padding=(0, 1))),                    # unbatched 2d
]


def _conv_fn(n):
    return {1: "conv1d", 2: "conv2d", 3: "conv3d"}[n]


@pytest.mark.parametrize("xs,ws,bias,kw", CONV, ids=[str(i) for i in range(len(CONV))])
def test_conv_matches_torch(xs, ws, bias, kw):
    name = _conv_fn(len(ws) - 2)
    ins = [r(*xs), r(*ws, seed=1)] + ([r(ws[0], seed=2)] if bias else [])
    check(lambda L, x, w, *b: getattr(F(L), name)(x, w, *b, **kw), *ins)


# (x shape, weight shape, has bias, kwargs) for F.conv_transpose{n}d
TRANSPOSED = [
    ((2, 3, 5), (3, 4, 3), True, {}),
    ((2, 4, 5), (4, 3, 3), True, dict(stride=2, padding=1, output_padding=1, groups=2)),
    ((4, 6), (4, 2, 2), False, dict(stride=3, dilation=2, output_padding=2)),  # unbatched
    ((2, 3, 4, 5), (3, 2, 3, 3), True, {}),
    ((2, 4, 4, 3), (4, 3, 3, 2), True, dict(stride=(2, 3), padding=(1, 0),
                                            output_padding=(1, 2), dilation=(1, 2),
                                            groups=2)),
    ((1, 4, 3, 3), (4, 1, 3, 3), True, dict(stride=2, padding=1, groups=4)),   # depthwise
    ((0, 3, 4, 4), (3, 2, 2, 2), True, dict(stride=2)),
    ((3, 4, 4), (3, 2, 3, 3), True, dict(padding=1)),                          # unbatched
    ((1, 2, 3, 2, 3), (2, 3, 2, 2, 3), True, dict(stride=(2, 1, 2), output_padding=(1, 0, 1))),
    ((2, 2, 2, 3, 2), (2, 2, 3, 2, 2), False, dict(padding=1, dilation=2)),
]


@pytest.mark.parametrize("xs,ws,bias,kw", TRANSPOSED,
                         ids=[str(i) for i in range(len(TRANSPOSED))])
def test_conv_transpose_matches_torch(xs, ws, bias, kw):
    n = len(ws) - 2
    ins = [r(*xs), r(*ws, seed=1)] + ([r(ws[1] * kw.get("groups", 1), seed=2)] if bias else [])
    check(lambda L, x, w, *b: getattr(F(L), f"conv_transpose{n}d")(x, w, *b, **kw), *ins)


def test_float32_non_contiguous_and_strided_views():
    x = r(2, 3, 8, 7, dtype=np.float32)
    w = r(4, 3, 3, 3, seed=1, dtype=np.float32)
    check(lambda L, x, w: F(L).conv2d(x, w, stride=2, padding=1), NC(x), NC(w))
    check(lambda L, x, w: F(L).conv2d(x[:, :, ::2, 1:], w), x, w)
    check(lambda L, x, w: F(L).conv_transpose2d(x, w.transpose(0, 1), stride=2), NC(x), w)


@pytest.mark.parametrize("dtype,tol", [(np.float16, 1e-2), ("bfloat16", 5e-2)])
def test_half_precision(dtype, tol):
    def run(L, x, w, b):
        dt = getattr(L, dtype if isinstance(dtype, str) else "float16")
        x, w, b = x.to(dt), w.to(dt), b.to(dt)
        return F(L).conv2d(x, w, b, padding=1), F(L).conv_transpose2d(x, w.transpose(0, 1), b,
                                                                        stride=2)
    check(run, r(1, 3, 5, 5, dtype=np.float32), r(3, 3, 3, 3, seed=1, dtype=np.float32),
          r(3, seed=2, dtype=np.float32), atol=tol, rtol=tol, grad=False)


def test_integer_and_complex():
    xi = np.arange(2 * 3 * 5 * 4).reshape(2, 3, 5, 4) % 7 - 3
    wi = np.arange(4 * 3 * 2 * 2).reshape(4, 3, 2, 2) % 5 - 2
    check(lambda L, x, w: F(L).conv2d(x, w, stride=(1, 2), padding=1), xi, wi)
    check(lambda L, x, w: F(L).conv2d(x, w, dilation=2), xi, wi)
    check(lambda L, x, w: F(L).conv_transpose2d(x, w.transpose(0, 1), stride=2), xi, wi)
    check(lambda L, x, w: F(L).conv1d(x, w), xi[:, :, :, 0].astype(np.int8),
          wi[:, :, :, 0].astype(np.int8))
    xc, wc = r(1, 2, 5, 4) + 1j * r(1, 2, 5, 4, seed=3), r(3, 2, 2, 2) + 1j * r(3, 2, 2, 2, seed=4)
    check(lambda L, x, w: F(L).conv2d(x, w, padding=1, stride=2), xc, wc)
    check(lambda L, x, w: F(L).conv_transpose2d(x, w.transpose(0, 1), stride=2), xc, wc)


def test_gradcheck_float64():
    gradcheck(lambda L, x, w, b: F(L).conv1d(x, w, b, stride=2, padding=1, dilation=2,
                                             groups=2), r(1, 4, 7), r(4, 2, 2), r(4))
    gradcheck(lambda L, x, w, b: F(L).conv_transpose1d(x, w, b, stride=2, padding=1,
                                                       output_padding=1, groups=2, dilation=2),
              r(1, 4, 3), r(4, 1, 3), r(2))
    gradcheck(lambda L, x, w: F(L).conv3d(x, w, stride=(1, 2, 1), padding=(0, 1, 1)),
              r(1, 2, 3, 4, 3), r(2, 2, 2, 2, 2))
    gradcheck(lambda L, x, w: F(L).conv2d(x, w, padding="same"), r(1, 2, 4, 3), r(2, 2, 2, 3))


def test_double_backward_matches_torch():
    def dd(L, x, w, b, transposed):
        fn = F(L).conv_transpose2d if transposed else F(L).conv2d
        y = fn(x, w, b, stride=2, padding=1, groups=2)
        gx, gw, gb = L.autograd.grad((y * y).sum(), [x, w, b], create_graph=True)
        return (gx * gx).sum() + (gw ** 3).sum() + (gb * y.sum()).sum()
    check(lambda L, x, w, b: dd(L, x, w, b, False), r(2, 4, 6, 5), r(6, 2, 3, 3), r(6))
    check(lambda L, x, w, b: dd(L, x, w, b, True), r(2, 4, 3, 4), r(4, 3, 3, 3), r(6))
    assert ember.autograd.gradgradcheck(
        lambda x, w: F(ember).conv2d(x, w, stride=2, groups=2),
        [ember.tensor(r(1, 2, 4, 4), requires_grad=True),
         ember.tensor(r(2, 1, 2, 2), requires_grad=True)])


def test_autocast_lower_precision_like_torch():
    x, w = r(1, 3, 5, 5, dtype=np.float32), r(2, 3, 3, 3, dtype=np.float32)
    with ember.autocast("cpu", dtype=ember.bfloat16):
        e = F(ember).conv2d(ember.tensor(x), ember.tensor(w))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        t = F(torch).conv2d(torch.tensor(x), torch.tensor(w))
    assert str(e.dtype) == str(t.dtype) == "torch.bfloat16"


def _t(*s):
    return r(*s, dtype=np.float32)


ERRORS = {
    "rank": (lambda L, x, w: F(L).conv2d(x, w), _t(3, 5), _t(4, 3, 3, 3)),
    "rank5": (lambda L, x, w: F(L).conv2d(x, w), _t(1, 1, 3, 5, 5), _t(4, 3, 3, 3)),
    "channels": (lambda L, x, w: F(L).conv2d(x, w), _t(1, 5, 8, 8), _t(4, 3, 3, 3)),
    "channels_unbatched": (lambda L, x, w: F(L).conv2d(x, w), _t(5, 8, 8), _t(4, 3, 3, 3)),
    "group_channels": (lambda L, x, w: F(L).conv2d(x, w, groups=2), _t(1, 6, 8, 8),
                       _t(4, 2, 3, 3)),
    "groups_divide": (lambda L, x, w: F(L).conv2d(x, w, groups=3), _t(1, 6, 8, 8),
                      _t(5, 2, 3, 3)),
    "groups_zero": (lambda L, x, w: F(L).conv2d(x, w, groups=0), _t(1, 6, 8, 8),
                    _t(6, 2, 3, 3)),
    "kernel_too_big": (lambda L, x, w: F(L).conv2d(x, w, padding=1), _t(1, 3, 2, 2),
                       _t(4, 3, 5, 5)),
    "bias_size": (lambda L, x, w, b: F(L).conv2d(x, w, b), _t(1, 3, 8, 8), _t(4, 3, 3, 3),
                  _t(5)),
    "bias_rank": (lambda L, x, w, b: F(L).conv1d(x, w, b), _t(1, 3, 8), _t(4, 3, 3), _t(4, 1)),
    "stride_zero": (lambda L, x, w: F(L).conv2d(x, w, stride=0), _t(1, 3, 8, 8),
                    _t(4, 3, 3, 3)),
    "padding_negative": (lambda L, x, w: F(L).conv1d(x, w, padding=-1), _t(1, 3, 8),
                         _t(4, 3, 3)),
    "dilation_zero": (lambda L, x, w: F(L).conv2d(x, w, dilation=0), _t(1, 3, 8, 8),
                      _t(4, 3, 3, 3)),
    "stride_length": (lambda L, x, w: F(L).conv2d(x, w, stride=(1, 1, 1)), _t(1, 3, 8, 8),
                      _t(4, 3, 3, 3)),
    "stride_float": (lambda L, x, w: F(L).conv2d(x, w, stride=1.5), _t(1, 3, 8, 8),
                     _t(4, 3, 3, 3)),
    "dtype_weight": (lambda L, x, w: F(L).conv2d(x, w), _t(1, 3, 8, 8),
                     r(4, 3, 3, 3)),
    "dtype_bias": (lambda L, x, w, b: F(L).conv2d(x, w, b), _t(1, 3, 8, 8), _t(4, 3, 3, 3),
                   r(4)),
    "bool": (lambda L, x, w: F(L).conv2d(x, w), np.ones((1, 3, 4, 4), bool),
             np.ones((2, 3, 3, 3), bool)),
    "int32_dilated": (lambda L, x, w: F(L).conv2d(x, w, dilation=2),
                      np.ones((1, 3, 6, 6), np.int32), np.ones((2, 3, 2, 2), np.int32)),
    "int8_transposed": (lambda L, x, w: F(L).conv_transpose1d(x, w),
                        np.ones((1, 3, 6), np.int8), np.ones((3, 2, 2), np.int8)),
    "same_strided": (lambda L, x, w: F(L).conv2d(x, w, stride=2, padding="same"),
                     _t(1, 3, 8, 8), _t(4, 3, 3, 3)),
    "bad_padding_string": (lambda L, x, w: F(L).conv2d(x, w, padding="full"), _t(1, 3, 8, 8),
                           _t(4, 3, 3, 3)),
    "weight_rank": (lambda L, x, w: F(L).conv1d(x, w), _t(1, 3, 8), _t(4, 3, 3, 3)),
    "zero_out_channels": (lambda L, x, w: F(L).conv2d(x, w), _t(1, 3, 8, 8), _t(0, 3, 3, 3)),
    "tr_channels": (lambda L, x, w: F(L).conv_transpose2d(x, w), _t(1, 5, 8, 8),
                    _t(3, 4, 3, 3)),
    "tr_output_padding": (lambda L, x, w: F(L).conv_transpose2d(x, w, stride=2,
                                                                output_padding=2),
                          _t(1, 3, 4, 4), _t(3, 4, 3, 3)),
    "tr_groups": (lambda L, x, w: F(L).conv_transpose2d(x, w, groups=2), _t(1, 3, 8, 8),
                  _t(3, 4, 3, 3)),
    "tr_rank": (lambda L, x, w: F(L).conv_transpose3d(x, w), _t(3, 8), _t(3, 4, 3, 3, 3)),
    "tr_bias": (lambda L, x, w, b: F(L).conv_transpose2d(x, w, b), _t(1, 3, 8, 8),
                _t(3, 4, 3, 3), _t(3)),
    "tr_too_small": (lambda L, x, w: F(L).conv_transpose1d(x, w, padding=3), _t(1, 3, 1),
                     _t(3, 4, 3)),
    "tr_padding_string": (lambda L, x, w: F(L).conv_transpose2d(x, w, padding="same"),
                          _t(1, 3, 8, 8), _t(3, 4, 3, 3)),
    "tr_negative_output_padding": (lambda L, x, w: F(L).conv_transpose2d(x, w,
                                                                         output_padding=-1),
                                   _t(1, 3, 8, 8), _t(3, 4, 3, 3)),
    "raw_convolution_rank": (lambda L, x, w: L.convolution(x, w, None, [1, 1], [0, 0], [1, 1],
                                                           False, [0, 0], 1)
                             if L is torch else
                             ember.ops.conv.convolution(x, w, None, [1, 1], [0, 0], [1, 1],
                                                        False, [0, 0], 1),
                             _t(3, 8, 8), _t(4, 3, 3, 3)),
    "raw_convolution_weight": (lambda L, x, w: L.convolution(x, w, None, [1], [0], [1], False,
                                                             [0], 1)
                               if L is torch else
                               ember.ops.conv.convolution(x, w, None, [1], [0], [1], False,
                                                          [0], 1),
                               _t(3, 8), _t(4)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_like_torch(name):
    fn, *inputs = ERRORS[name]
    check_error(fn, *inputs)


def test_error_messages():
    msg = check_error(lambda L, x, w: F(L).conv2d(x, w), _t(3, 5), _t(4, 3, 3, 3))
    assert msg == ("Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input "
                   "of size: [3, 5]")
    msg = check_error(lambda L, x, w: F(L).conv2d(x, w), _t(1, 5, 8, 8), _t(4, 3, 3, 3))
    assert msg == ("Given groups=1, weight of size [4, 3, 3, 3], expected input[1, 5, 8, 8] "
                   "to have 3 channels, but got 5 channels instead")
    msg = check_error(lambda L, x, w: F(L).conv2d(x, w), _t(1, 3, 2, 2), _t(4, 3, 3, 3))
    assert msg == ("Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). "
                   "Kernel size can't be greater than actual input size")


# ----------------------------------------------------------------- unfold / fold

UNFOLD = [((2, 3, 5, 6), dict(kernel_size=(2, 3), dilation=(1, 2), padding=1, stride=(2, 1))),
          ((3, 4, 4), dict(kernel_size=2)),
          ((0, 2, 4, 4), dict(kernel_size=3, padding=1)),
          ((1, 2, 5, 5), dict(kernel_size=1, stride=2))]


@pytest.mark.parametrize("xs,kw", UNFOLD)
def test_unfold_fold_match_torch(xs, kw):
    check(lambda L, x: F(L).unfold(x, **kw), r(*xs))
    cols = F(torch).unfold(torch.zeros(xs), **kw)
    check(lambda L, c: F(L).fold(c, xs[-2:], **kw), r(*cols.shape, seed=1))


def test_unfold_fold_gradcheck_and_dtypes():
    gradcheck(lambda L, x: F(L).unfold(x, 2, padding=1, stride=2, dilation=2), r(1, 2, 4, 5))
    gradcheck(lambda L, c: F(L).fold(c, (4, 5), 2, padding=1, stride=2), r(1, 8, 9))
    check(lambda L, x: F(L).unfold(x, 2), NC(r(2, 3, 4, 4, dtype=np.float32)))
    check(lambda L, x: F(L).unfold(x, 2), np.ones((1, 2, 3, 3), bool))
    check(lambda L, x: F(L).fold(x, (3, 3), 2), r(1, 8, 4, dtype=np.float32).astype(np.float16),
          grad=False, atol=1e-3)
    m = ember.nn.Unfold(2, padding=1)
    assert repr(m) == repr(torch.nn.Unfold(2, padding=1))
    m = ember.nn.Fold((4, 5), (2, 3), stride=(1, 2))
    assert repr(m) == repr(torch.nn.Fold((4, 5), (2, 3), stride=(1, 2)))
    check(lambda L, c: L.nn.Fold((4, 5), 2)(c), r(2, 8, 12))
    check(lambda L, x: L.nn.Unfold((2, 1), dilation=2)(x), r(2, 2, 4, 3))


FOLD_ERRORS = {
    "unfold_rank": (lambda L, x: F(L).unfold(x, 2), _t(2, 3, 5, 6, 7)),
    "unfold_rank2": (lambda L, x: F(L).unfold(x, 2), _t(5, 6)),
    "unfold_too_big": (lambda L, x: F(L).unfold(x, 3), _t(2, 3, 2, 2)),
    "unfold_kernel0": (lambda L, x: F(L).unfold(x, 0), _t(2, 3, 5, 5)),
    "unfold_stride0": (lambda L, x: F(L).unfold(x, 2, stride=0), _t(2, 3, 5, 5)),
    "unfold_padding": (lambda L, x: F(L).unfold(x, 2, padding=-1), _t(2, 3, 5, 5)),
    "unfold_kernel3": (lambda L, x: F(L).unfold(x, (2, 2, 2)), _t(2, 3, 5, 5)),
    "unfold_int": (lambda L, x: F(L).unfold(x, 2), np.ones((2, 3, 5, 5), int)),
    "unfold_zero_channels": (lambda L, x: F(L).unfold(x, 2), _t(2, 0, 5, 5)),
    "fold_rank": (lambda L, x: F(L).fold(x, (5, 6), 2), _t(2, 12, 20, 1)),
    "fold_divisible": (lambda L, x: F(L).fold(x, (5, 6), 2), _t(2, 13, 20)),
    "fold_blocks": (lambda L, x: F(L).fold(x, (5, 6), 2), _t(2, 12, 21)),
    "fold_output3": (lambda L, x: F(L).fold(x, (5, 6, 7), 2), _t(2, 12, 20)),
    "fold_int": (lambda L, x: F(L).fold(x, (5, 6), 2), np.ones((2, 12, 20), int)),
    "pixel_shuffle_channels": (lambda L, x: F(L).pixel_shuffle(x, 2), _t(2, 7, 3, 4)),
    "pixel_shuffle_rank": (lambda L, x: F(L).pixel_shuffle(x, 2), _t(8, 3)),
    "pixel_shuffle_factor": (lambda L, x: F(L).pixel_shuffle(x, 0), _t(2, 8, 3, 4)),
    "pixel_unshuffle_height": (lambda L, x: F(L).pixel_unshuffle(x, 2), _t(2, 2, 5, 6)),
    "pixel_unshuffle_width": (lambda L, x: F(L).pixel_unshuffle(x, 2), _t(2, 2, 4, 5)),
    "pixel_unshuffle_rank": (lambda L, x: F(L).pixel_unshuffle(x, 2), _t(4, 6)),
    "channel_shuffle_divisible": (lambda L, x: F(L).channel_shuffle(x, 3), _t(2, 7, 3)),
    "channel_shuffle_rank": (lambda L, x: F(L).channel_shuffle(x, 3), _t(2, 6)),
    "channel_shuffle_groups": (lambda L, x: F(L).channel_shuffle(x, 0), _t(2, 6, 3)),
}


@pytest.mark.parametrize("name", sorted(FOLD_ERRORS))
def test_fold_and_shuffle_errors_like_torch(name):
    fn, *inputs = FOLD_ERRORS[name]
    msg = check_error(fn, *inputs)
    with pytest.raises(Exception) as te:
        fn(torch, *[torch.from_numpy(np.asarray(i)) for i in inputs])
    assert msg == str(te.value).split("\n")[0] or "Dimension out of range" in msg


# -------------------------------------------------------------------- shuffles

@pytest.mark.parametrize("xs,r_", [((2, 8, 3, 4), 2), ((9, 2, 3), 3), ((2, 1, 4, 3, 2), 1)])
def test_pixel_shuffle_matches_torch(xs, r_):
    check(lambda L, x: F(L).pixel_shuffle(x, r_), r(*xs))
    ys = xs[:-3] + (xs[-3] // (r_ * r_), xs[-2] * r_, xs[-1] * r_)
    check(lambda L, x: F(L).pixel_unshuffle(x, r_), NC(r(*ys)))
    check(lambda L, x: L.nn.PixelShuffle(r_)(x), np.arange(np.prod(xs)).reshape(xs))
    assert repr(ember.nn.PixelShuffle(r_)) == repr(torch.nn.PixelShuffle(r_))
    assert repr(ember.nn.PixelUnshuffle(r_)) == repr(torch.nn.PixelUnshuffle(r_))


def test_shuffles_of_empty_batches():
    """Forward only: torch's PixelShuffleBackward0 rejects an empty batch. (torch's
    pixel_unshuffle returns an empty input's shape unchanged; ember gives the documented
    (*, C*r*r, H/r, W/r).)"""
    check(lambda L, x: F(L).pixel_shuffle(x, 2), r(0, 4, 2, 2), grad=False)
    assert tuple(F(ember).pixel_unshuffle(ember.zeros(0, 1, 2, 4), 2).shape) == (0, 4, 1, 2)


@pytest.mark.parametrize("xs,g", [((2, 6, 3), 3), ((1, 4, 2, 2), 2), ((0, 6, 2), 2),
                                  ((2, 5, 1, 2, 2), 5)])
def test_channel_shuffle_matches_torch(xs, g):
    check(lambda L, x: F(L).channel_shuffle(x, g), r(*xs))
    check(lambda L, x: L.nn.ChannelShuffle(g)(x), np.arange(np.prod(xs)).reshape(xs))
    assert repr(ember.nn.ChannelShuffle(g)) == repr(torch.nn.ChannelShuffle(g))


# --------------------------------------------------------------------- modules

def _copy(tm, em):
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})


def _compare_module(name, args, kw, xs, call_kw=None, dtype=torch.float64):
    tm = getattr(torch.nn, name)(*args, **kw).to(dtype)
    em = getattr(ember.nn, name)(*args, **kw).to(getattr(ember, str(dtype)[6:]))
    assert repr(em) == repr(tm)
    assert [(k, tuple(p.shape)) for k, p in em.named_parameters()] == \
        [(k, tuple(p.shape)) for k, p in tm.named_parameters()]
    _copy(tm, em)
    x = r(*xs, dtype=np.float64 if dtype == torch.float64 else np.float32)
    call_kw = call_kw or {}
    te = torch.tensor(x, requires_grad=True)
    ee = ember.tensor(x, requires_grad=True)
    yt, ye = tm(te, **call_kw), em(ee, **call_kw)
    assert tuple(ye.shape) == tuple(yt.shape)
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-5)
    w = np.random.default_rng(0).standard_normal(tuple(yt.shape))
    (yt * torch.tensor(w, dtype=yt.dtype)).sum().backward()
    (ye * ember.tensor(w, dtype=ye.dtype)).sum().backward()
    np.testing.assert_allclose(ee.grad.numpy(), te.grad.numpy(), rtol=1e-4, atol=1e-5)
    for (k, pe), (_, pt) in zip(em.named_parameters(), tm.named_parameters()):
        np.testing.assert_allclose(pe.grad.numpy(), pt.grad.numpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=k)


MODULES = [
    ("Conv1d", (3, 4, 3), {}, (2, 3, 9)),
    ("Conv1d", (4, 6, 2), dict(stride=2, padding=1, dilation=2, groups=2, bias=False), (4, 9)),
    ("Conv1d", (2, 2, 3), dict(padding=2, padding_mode="reflect"), (1, 2, 6)),
    ("Conv1d", (2, 2, 4), dict(padding="same", padding_mode="circular"), (1, 2, 6)),
    ("Conv2d", (3, 16, 3), {}, (2, 3, 8, 8)),
    ("Conv2d", (4, 4, (3, 2)), dict(stride=(2, 1), padding=(1, 0), groups=4), (2, 4, 7, 6)),
    ("Conv2d", (2, 3, 3), dict(padding=1, padding_mode="replicate"), (1, 2, 5, 4)),
    ("Conv2d", (2, 3, 3), dict(padding=(1, 2), padding_mode="reflect"), (2, 5, 4)),
    ("Conv2d", (2, 3, 3), dict(padding=(2, 1), padding_mode="circular"), (1, 2, 5, 4)),
    ("Conv2d", (2, 3, (2, 3)), dict(padding="same", dilation=(1, 2)), (1, 2, 5, 6)),
    ("Conv2d", (2, 3, 3), dict(padding="valid"), (1, 2, 5, 6)),
    ("Conv3d", (2, 3, 2), dict(stride=(1, 2, 1), padding=1), (1, 2, 4, 5, 3)),
    ("Conv3d", (2, 2, 3), dict(padding=1, padding_mode="replicate"), (2, 3, 3, 4)),
    ("ConvTranspose1d", (3, 4, 3), dict(stride=2, output_padding=1), (2, 3, 5)),
    ("ConvTranspose2d", (4, 6, (3, 2)), dict(stride=2, padding=1, output_padding=(1, 0),
                                              groups=2, dilation=(1, 2)), (2, 4, 4, 3)),
    ("ConvTranspose2d", (2, 3, 3), dict(bias=False), (2, 3, 3)),
    ("ConvTranspose3d", (2, 3, 2), dict(stride=(2, 1, 1)), (1, 2, 3, 2, 3)),
]


@pytest.mark.parametrize("name,args,kw,xs", MODULES, ids=[m[0] + str(i)
                                                         for i, m in enumerate(MODULES)])
def test_modules_match_torch(name, args, kw, xs):
    _compare_module(name, args, kw, xs)


def test_conv_transpose_output_size():
    _compare_module("ConvTranspose2d", (3, 2, 3), dict(stride=2, padding=1), (1, 3, 4, 4),
                    dict(output_size=[8, 8]))
    _compare_module("ConvTranspose1d", (3, 2, 3), dict(stride=3), (3, 4),
                    dict(output_size=(2, 13)))
    em, tm = ember.nn.ConvTranspose2d(3, 2, 3, stride=2), torch.nn.ConvTranspose2d(3, 2, 3,
                                                                                  stride=2)
    for bad in ([20, 20], [1, 2, 9, 9, 9]):
        with pytest.raises(ValueError):
            tm(torch.zeros(1, 3, 4, 4), output_size=bad)
        with pytest.raises(ValueError):
            em(ember.zeros(1, 3, 4, 4), output_size=bad)


def test_float32_module_and_default_init():
    _compare_module("Conv2d", (3, 8, 3), dict(padding=1), (2, 3, 6, 6), dtype=torch.float32)
    m = ember.nn.Conv2d(4, 64, (3, 5), groups=2)
    bound = 1 / math.sqrt(2 * 15)
    for p in (m.weight, m.bias):
        a = p.detach().numpy()
        assert a.dtype == np.float32 and np.abs(a).max() <= bound and np.abs(a).max() > 0.8 * bound
    t = ember.nn.ConvTranspose1d(4, 6, 3, groups=2, dtype=ember.float64)
    assert tuple(t.weight.shape) == (4, 3, 3) and t.weight.dtype == ember.float64
    assert np.abs(t.bias.detach().numpy()).max() <= 1 / math.sqrt(9)
    assert ember.nn.Conv1d(2, 2, 1, bias=False).bias is None


CTOR_ERRORS = [
    ("Conv2d", (4, 4, 3), dict(groups=0)),
    ("Conv2d", (3, 4, 3), dict(groups=2)),
    ("Conv2d", (4, 3, 3), dict(groups=2)),
    ("Conv2d", (4, 4, 3), dict(padding="full")),
    ("Conv2d", (4, 4, 3), dict(padding="same", stride=2)),
    ("Conv1d", (4, 4, 3), dict(padding_mode="mirror")),
    ("ConvTranspose2d", (4, 4, 3), dict(padding_mode="reflect")),
]


@pytest.mark.parametrize("name,args,kw", CTOR_ERRORS)
def test_constructor_errors_like_torch(name, args, kw):
    with pytest.raises(ValueError) as te:
        getattr(torch.nn, name)(*args, **kw)
    with pytest.raises(ValueError) as ee:
        getattr(ember.nn, name)(*args, **kw)
    assert _unordered_sets(str(ee.value)) == _unordered_sets(str(te.value))


def _unordered_sets(msg):
    """A printed Python set's order depends on hashing: compare its items sorted."""
    import re
    return re.sub(r"\{([^}]*)\}", lambda m: "{" + ", ".join(sorted(m.group(1).split(", ")))
                  + "}", msg)


@pytest.mark.parametrize("name,args,kw", [
    ("Conv2d", (3, 16, 3), dict(padding="same", bias=False, padding_mode="reflect")),
    ("Conv1d", (4, 8, 5), dict(stride=2, padding=2, dilation=3, groups=4)),
    ("Conv3d", (2, 2, (1, 2, 3)), dict(padding="valid")),
    ("ConvTranspose3d", (2, 4, 3), dict(stride=2, output_padding=1, groups=2, dilation=2)),
    ("ConvTranspose1d", (2, 4, 3), dict(padding=(1,))),
])
def test_repr_like_torch(name, args, kw):
    assert repr(getattr(ember.nn, name)(*args, **kw)) == repr(getattr(torch.nn, name)(*args, **kw))
