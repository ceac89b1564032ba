"""The int8 linear/conv2d kernels and their registry ops (ember.ops.onednn) against PyTorch's
quantized ops (x86 engine: fbgemm/oneDNN): the same quantized integers, off by at most 1."""
import numpy as np
import pytest

import ember
from ember.ao.quantization import _kernels as K

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")
ON = ember.ops.onednn


@pytest.fixture(autouse=True)
def _x86_engine():
    old = torch.backends.quantized.engine
    torch.backends.quantized.engine = "x86"
    yield
    torch.backends.quantized.engine = old


def _e(t):
    return ember.from_numpy(np.ascontiguousarray(t.numpy()))


def _qparams(oc, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(oc, generator=g) * 0.01 + 0.002).float()


def _close(a, b):
    d = np.abs(np.asarray(a, np.int64) - np.asarray(b, np.int64))
    assert d.max(initial=0) <= 1, f"max diff {d.max()}"
    assert (d > 0).mean() < 0.01 if d.size else True


def _torch_qlinear(x, w, ws, b, sx, zx, so, zo, relu):
    xq = torch.quantize_per_tensor(x, sx, zx, torch.quint8)
    wq = torch.quantize_per_channel(w, ws.double(), torch.zeros(len(ws), dtype=torch.long), 0,
                                    torch.qint8)
    packed = torch.ops.quantized.linear_prepack(wq, b)
    op = torch.ops.quantized.linear_relu if relu else torch.ops.quantized.linear
    return xq.int_repr(), wq.int_repr(), op(xq, packed, so, zo).int_repr()


@pytest.mark.parametrize("m,k,n,relu,bias", [
    (8, 512, 1000, False, True),     # resnet18's fc, batch 8
    (7, 130, 33, True, True),        # k not a multiple of 4, row tails
    (100, 64, 17, False, False),     # several column panels
    (1, 3, 5, True, False),
    (12, 70, 30, False, True),       # at most 16 rows: the 24x16 tile
    (24, 40, 50, True, True),        # at most 32 rows: the 12x32 tile
])
def test_qlinear_matches_torch(m, k, n, relu, bias):
    g = torch.Generator().manual_seed(0)
    x, w = torch.randn(m, k, generator=g), torch.randn(n, k, generator=g) * 0.1
    ws, b = _qparams(n, 1), (torch.randn(n, generator=g) if bias else None)
    xq, wq, ref = _torch_qlinear(x, w, ws, b, 0.05, 120, 0.3, 60, relu)
    out = K.qlinear(xq.numpy(), 0.05, 120, wq.numpy(), ws.numpy(), None,
                    None if b is None else b.numpy(), 0.3, 60, np.uint8,
                    (0.0, np.inf) if relu else (-np.inf, np.inf))
    assert out.dtype == np.uint8 and out.shape == (m, n)
    _close(out, ref.numpy())


def test_qlinear_float_output_is_the_dequantized_linear():
    g = torch.Generator().manual_seed(2)
    x, w, b = torch.randn(6, 40, generator=g), torch.randn(9, 40, generator=g), torch.randn(9)
    ws = _qparams(9, 3)
    xq, wq, _ = _torch_qlinear(x, w, ws, b, 0.05, 120, 1.0, 0, False)
    ref = torch.nn.functional.linear((xq.float() - 120) * 0.05, wq.float() * ws[:, None], b)
    out = K.qlinear(xq.numpy(), 0.05, 120, wq.numpy(), ws.numpy(), None, b.numpy(), 1.0, 0,
                    np.float32, (0.0, np.inf))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, ref.relu().numpy(), rtol=1e-5, atol=1e-5)


def _torch_qconv(x, w, ws, b, stride, padding, dilation, groups, relu, so=0.3, zo=60):
    xq = torch.quantize_per_tensor(x, 0.05, 120, torch.quint8)
    wq = torch.quantize_per_channel(w, ws.double(), torch.zeros(len(ws), dtype=torch.long), 0,
                                    torch.qint8)
    packed = torch.ops.quantized.conv2d_prepack(wq, b, [stride] * 2, [padding] * 2,
                                                [dilation] * 2, groups)
    op = torch.ops.quantized.conv2d_relu if relu else torch.ops.quantized.conv2d
    return xq.int_repr(), wq.int_repr(), op(xq, packed, so, zo).int_repr()


CONV_CASES = [  # (n, c, h, oc, k, stride, padding, dilation, groups, relu)
    (2, 3, 16, 8, 7, 2, 3, 1, 1, False),       # resnet stem
    (8, 64, 16, 64, 3, 1, 1, 1, 1, True),      # resnet layer1 3x3
    (8, 64, 16, 128, 1, 2, 0, 1, 1, False),    # downsample 1x1 stride 2
    (8, 512, 2, 512, 3, 1, 1, 1, 1, True),     # layer4 at 64x64 input: 32 columns
    (2, 32, 9, 32, 3, 2, 1, 1, 32, False),     # mobilenet depthwise, stride 2
    (8, 96, 8, 96, 3, 1, 1, 1, 96, True),      # depthwise stride 1
    (2, 16, 8, 32, 3, 1, 1, 1, 16, True),      # depthwise, channel multiplier 2
    (2, 24, 7, 24, 3, 1, 1, 1, 24, True),      # depthwise, a partial 16-channel block
    (1, 20, 10, 20, 5, 2, 2, 2, 20, False),    # depthwise 5x5, stride 2, dilation 2
    (8, 40, 4, 40, 3, 1, 1, 1, 40, True),      # depthwise on 4x4 planes (channels in lanes)
    (2, 16, 2, 16, 3, 2, 1, 1, 16, False),     # depthwise 2x2 planes, stride 2
    (2, 8, 8, 12, 3, 1, 2, 2, 2, False),       # grouped, dilated
    (1, 24, 7, 40, 1, 1, 0, 1, 1, False),      # pointwise 1x1
]


@pytest.mark.parametrize("n,c,h,oc,k,stride,padding,dilation,groups,relu", CONV_CASES)
def test_qconv2d_matches_torch(n, c, h, oc, k, stride, padding, dilation, groups, relu):
    g = torch.Generator().manual_seed(4)
    x, w = torch.randn(n, c, h, h, generator=g), torch.randn(oc, c // groups, k, k, generator=g)
    ws, b = _qparams(oc, 5), torch.randn(oc, generator=g)
    xq, wq, ref = _torch_qconv(x, w, ws, b, stride, padding, dilation, groups, relu)
    out = K.qconv2d(xq.numpy(), 0.05, 120, wq.numpy(), ws.numpy(), None, b.numpy(),
                    (stride,) * 2, (padding,) * 2, (dilation,) * 2, groups, 0.3, 60, np.uint8,
                    (0.0, np.inf) if relu else (-np.inf, np.inf))
    assert out.shape == tuple(ref.shape) and out.dtype == np.uint8
    _close(out, ref.numpy())


def test_numpy_fallback_gives_the_same_integers(monkeypatch):
    g = torch.Generator().manual_seed(6)
    cases = [(2, 8, 8, 12, 3, 1, 1, 1, 1), (2, 16, 8, 16, 3, 2, 1, 1, 16)]
    for n, c, h, oc, k, s, p, d, groups in cases:
        x, w = torch.randn(n, c, h, h, generator=g), torch.randn(oc, c // groups, k, k, generator=g)
        ws, b = _qparams(oc, 7), torch.randn(oc, generator=g)
        xq, wq, ref = _torch_qconv(x, w, ws, b, s, p, d, groups, True)
        args = (xq.numpy(), 0.05, 120, wq.numpy(), ws.numpy(), None, b.numpy(), (s, s), (p, p),
                (d, d), groups, 0.3, 60, np.uint8, (0.0, np.inf))
        native = K.qconv2d(*args)
        monkeypatch.setattr(K, "native_lib", lambda: None)
        fallback = K.qconv2d(*args)
        monkeypatch.undo()
        _close(fallback, ref.numpy())
        _close(fallback, native)
    x, w = torch.randn(5, 20, generator=g), torch.randn(6, 20, generator=g)
    xq, wq, ref = _torch_qlinear(x, w, _qparams(6, 8), None, 0.05, 120, 0.3, 60, False)
    monkeypatch.setattr(K, "native_lib", lambda: None)
    _close(K.qlinear(xq.numpy(), 0.05, 120, wq.numpy(), _qparams(6, 8).numpy(), None, None,
                     0.3, 60, np.uint8), ref.numpy())


def _reference(xq, sx, zx, wq, ws, wz, b, so, zo, qdt, lo=-np.inf, hi=np.inf, conv=None):
    """The q/dq reference computation in float64: dequantize, float op, clamp, quantize."""
    xf = (xq.double() - zx) * sx
    wf = (wq.double() - wz.double().reshape(-1, *[1] * (wq.dim() - 1))) * \
        ws.double().reshape(-1, *[1] * (wq.dim() - 1))
    bb = None if b is None else b.double()
    y = torch.nn.functional.linear(xf, wf, bb) if conv is None else \
        torch.nn.functional.conv2d(xf, wf, bb, *conv)
    y = y.clamp(lo, hi)
    info = torch.iinfo(qdt)
    return torch.clamp(torch.round(y / so) + zo, info.min, info.max).to(qdt)


def test_int8_activations_int8_output_and_hardtanh():
    """XNNPACK-style symmetric int8 activations (+128 offset inside), int8 output, a fused
    hardtanh (ReLU6)."""
    g = torch.Generator().manual_seed(9)
    xq = torch.randint(-128, 128, (4, 6, 7, 7), dtype=torch.int8, generator=g)
    wq = torch.randint(-127, 128, (10, 6, 3, 3), dtype=torch.int8, generator=g)
    ws, b = _qparams(10, 10), torch.randn(10, generator=g)
    out = ON.qconv2d_pointwise.default(_e(xq), 0.04, -3, _e(wq), _e(ws),
                                       ember.zeros(10, dtype=ember.int64), _e(b), [1, 1],
                                       [1, 1], [1, 1], 1, 0.05, 2, ember.int8, "hardtanh",
                                       [0.0, 6.0], None)
    ref = _reference(xq, 0.04, -3, wq, ws, torch.zeros(10), b, 0.05, 2, torch.int8, 0.0, 6.0,
                     conv=((1, 1), (1, 1), (1, 1), 1))
    assert out.dtype == ember.int8
    _close(out.numpy(), ref.numpy())
    xl = torch.randint(-128, 128, (5, 30), dtype=torch.int8, generator=g)
    wl = torch.randint(-127, 128, (7, 30), dtype=torch.int8, generator=g)
    out = ON.qlinear_pointwise.default(_e(xl), 0.04, 5, _e(wl), _e(ws[:7]),
                                       ember.zeros(7, dtype=ember.int64), None, 0.2, -10,
                                       ember.int8, "none", [], "")
    _close(out.numpy(), _reference(xl, 0.04, 5, wl, ws[:7], torch.zeros(7), None, 0.2, -10,
                                   torch.int8).numpy())


def test_asymmetric_weights_take_the_exact_path():
    g = torch.Generator().manual_seed(11)
    xq = torch.randint(0, 256, (3, 16), dtype=torch.uint8, generator=g)
    wq = torch.randint(-128, 128, (4, 16), dtype=torch.int8, generator=g)
    ws, wz = _qparams(4, 12), torch.tensor([0, 3, -2, 7])
    out = ON.qlinear_pointwise.default(_e(xq), 0.05, 100, _e(wq), _e(ws), _e(wz), None, 0.4,
                                       128, None, "relu", [], "")
    ref = _reference(xq, 0.05, 100, wq, ws, wz, None, 0.4, 128, torch.uint8, 0.0)
    _close(out.numpy(), ref.numpy())


@pytest.mark.parametrize("post,args,odt", [("none", [], None), ("relu", [], None),
                                           ("relu", [], "float32"),
                                           ("hardtanh", [-1.0, 2.0], "int8")])
def test_ops_match_torch_onednn(post, args, odt):
    g = torch.Generator().manual_seed(13)
    x = torch.randint(0, 256, (2, 3, 9), dtype=torch.uint8, generator=g)[..., ::2, :]  # strided
    w = torch.randint(-127, 128, (8, 9), dtype=torch.int8, generator=g)
    ws, wz, b = _qparams(8, 14), torch.zeros(8, dtype=torch.long), torch.randn(8, generator=g)
    so, zo = (1.0, 0) if odt == "float32" else (0.3, 60 if odt is None else -4)
    tdt = None if odt is None else getattr(torch, odt)
    ref = torch.ops.onednn.qlinear_pointwise(x.contiguous(), 0.05, 120,
                                             torch.ops.onednn.qlinear_prepack(w, None), ws, wz,
                                             b, so, zo, tdt, post, args, "")
    xe = ember.from_numpy(x.numpy())      # a non-contiguous view
    out = ON.qlinear_pointwise.default(xe, 0.05, 120, _e(w), _e(ws), _e(wz), _e(b), so, zo,
                                       None if odt is None else getattr(ember, odt), post,
                                       args, "")
    assert str(out.dtype) == str(ref.dtype) and tuple(out.shape) == tuple(ref.shape)
    if odt == "float32":
        np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-4, atol=1e-4)
    else:
        _close(out.numpy(), ref.numpy())
    xc = torch.randint(0, 256, (2, 4, 6, 6), dtype=torch.uint8, generator=g)
    wc = torch.randint(-127, 128, (8, 4, 3, 3), dtype=torch.int8, generator=g)
    packed = torch.ops.onednn.qconv_prepack(wc, ws, 0.05, 120, [2, 2], [1, 1], [1, 1], 1,
                                            xc.shape)
    ref = torch.ops.onednn.qconv2d_pointwise(xc, 0.05, 120, packed, ws, wz, b, [2, 2], [1, 1],
                                             [1, 1], 1, so, zo, tdt, post, args, "")
    out = ON.qconv2d_pointwise.default(_e(xc), 0.05, 120, _e(wc), _e(ws), _e(wz), _e(b),
                                       [2, 2], [1, 1], [1, 1], 1, so, zo,
                                       None if odt is None else getattr(ember, odt), post,
                                       args, None)
    assert str(out.dtype) == str(ref.dtype) and tuple(out.shape) == tuple(ref.shape)
    if odt == "float32":
        np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-4, atol=1e-4)
    else:
        _close(out.numpy(), ref.numpy())


def test_empty_batch():
    w, ws, wz = ember.ones(5, 4, dtype=ember.int8), ember.ones(5), ember.zeros(5)
    out = ON.qlinear_pointwise.default(ember.zeros(0, 4, dtype=ember.uint8), 0.1, 0, w, ws, wz,
                                       None, 0.1, 0, None, "none", [], "")
    assert tuple(out.shape) == (0, 5) and out.dtype == ember.uint8
    out = ON.qconv2d_pointwise.default(ember.zeros(0, 4, 3, 3, dtype=ember.uint8), 0.1, 0,
                                       ember.ones(5, 4, 1, 1, dtype=ember.int8), ws, wz, None,
                                       [1, 1], [0, 0], [1, 1], 1, 0.1, 0, None, "none", [], None)
    assert tuple(out.shape) == (0, 5, 3, 3)


def test_bad_inputs_raise():
    w, ws, wz = ember.ones(5, 4, dtype=ember.int8), ember.ones(5), ember.zeros(5)
    x = ember.zeros(2, 4, dtype=ember.uint8)
    call = ON.qlinear_pointwise.default
    with pytest.raises(RuntimeError, match="qlinear_pointwise.*uint8 or int8"):
        call(ember.zeros(2, 4), 0.1, 0, w, ws, wz, None, 0.1, 0, None, "none", [], "")
    with pytest.raises(RuntimeError, match=r"\[2, 3\].*\[5, 4\]"):
        call(ember.zeros(2, 3, dtype=ember.uint8), 0.1, 0, w, ws, wz, None, 0.1, 0, None,
             "none", [], "")
    with pytest.raises(RuntimeError, match="int8 weight"):
        call(x, 0.1, 0, w.float(), ws, wz, None, 0.1, 0, None, "none", [], "")
    with pytest.raises(RuntimeError, match="output_scale 1.0"):
        call(x, 0.1, 0, w, ws, wz, None, 0.5, 0, ember.float32, "none", [], "")
    with pytest.raises(NotImplementedError, match="post op 'gelu'"):
        call(x, 0.1, 0, w, ws, wz, None, 0.1, 0, None, "gelu", [], "none")
    conv = ON.qconv2d_pointwise.default
    with pytest.raises(RuntimeError, match="groups=2"):
        conv(ember.zeros(1, 3, 4, 4, dtype=ember.uint8), 0.1, 0,
             ember.ones(4, 3, 1, 1, dtype=ember.int8), ember.ones(4), ember.zeros(4), None,
             [1, 1], [0, 0], [1, 1], 2, 0.1, 0, None, "none", [], None)
    with pytest.raises(RuntimeError, match="smaller than the kernel"):
        conv(ember.zeros(1, 3, 2, 2, dtype=ember.uint8), 0.1, 0,
             ember.ones(4, 3, 3, 3, dtype=ember.int8), ember.ones(4), ember.zeros(4), None,
             [1, 1], [0, 0], [1, 1], 1, 0.1, 0, None, "none", [], None)


@pytest.mark.parametrize("capability", ["default", "avx2", "avx512"])
def test_portable_c_paths(monkeypatch, capability):
    """Built for baseline x86-64 (plain C tile), AVX2 (the vpmaddwd tile, plane-wise integer
    depthwise) or AVX-512 without VNNI/VBMI, the kernels give the same integers as torch."""
    from ember._inductor import config, native
    monkeypatch.setattr(config.cpp, "cpu_capability", capability)
    K._library.cache_clear()
    native.load_native.cache_clear()
    try:
        for case in (CONV_CASES[0], CONV_CASES[1], CONV_CASES[5], CONV_CASES[6]):
            test_qconv2d_matches_torch(*case)
        test_qlinear_matches_torch(7, 130, 33, True, True)
    finally:
        monkeypatch.undo()
        K._library.cache_clear()
        native.load_native.cache_clear()


def test_long_sums_take_the_exact_path():
    """K beyond what int32 sums hold (255 * 128 * K) goes to the float64 NumPy path."""
    g = np.random.default_rng(15)
    k = 70_000
    x = g.integers(200, 256, (2, k)).astype(np.uint8)
    w = np.full((3, k), 127, np.int8)
    out = K.qlinear(x, 1.0, 0, w, np.ones(3, np.float32), None, None, 1.0, 0, np.float32)
    ref = x.astype(np.float64) @ w.astype(np.float64).T
    np.testing.assert_allclose(out, ref, rtol=1e-6)
