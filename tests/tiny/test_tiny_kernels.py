"""ember.tiny's int8 C99 kernels: the same integers as ember's int8 ops (conv, linear) and
PyTorch's quantized ops (avg_pool2d, relu6), built for the host and for a Cortex-M4 (run in
the emulator) with the same bytes out of both."""
import numpy as np
import pytest
import torch

from ember.ao.quantization._kernels import qconv2d, qlinear
from ember.tiny.kernels import requant_params, requant_params_int, requantize_int
from ember.tiny.mcu.cgen import c_array, c_float, c_requant
from tiny_support import need_toolchain, program, run_both

pytestmark = [pytest.mark.usefixtures("toolchain"),
              pytest.mark.filterwarnings("ignore:.*quantized tensor creation:UserWarning")]


@pytest.fixture(scope="module")
def toolchain():
    need_toolchain()


def _split(out, sizes):
    parts, i = [], 0
    for s in sizes:
        parts.append(out[i:i + s])
        i += s
    assert i == len(out)
    return parts


def _check(decls, body, expected, dtype=np.int8):
    """Run once, compare the emulator's bytes with the host's and with `expected` (the
    program writes each expected array in turn, as `dtype`)."""
    res, host = run_both(program(decls, body))
    assert res.output == host
    sizes = [want.size * np.dtype(dtype).itemsize for want in expected]
    for got, want in zip(_split(res.output, sizes), expected):
        np.testing.assert_array_equal(np.frombuffer(got, dtype).reshape(want.shape), want)
    return res


# (n, c, h, w, oc, k, stride, pad, dilation, groups, bias, clamp)
CONV_CASES = [
    (1, 8, 6, 6, 12, 1, 1, 0, 1, 1, True, None),             # pointwise 1x1
    (2, 3, 7, 5, 4, 3, 1, 1, 1, 1, True, (0.0, np.inf)),     # 3x3 padded, relu, batch 2
    (1, 4, 9, 9, 6, 3, 2, 1, 1, 1, False, (0.0, 6.0)),       # strided, relu6, no bias
    (1, 6, 8, 8, 6, 3, 1, 1, 1, 6, True, None),              # depthwise
    (1, 6, 9, 7, 6, 3, 2, 1, 1, 6, True, (0.0, 6.0)),        # strided depthwise, relu6
    (1, 4, 7, 7, 4, 3, 1, 2, 2, 2, True, None),              # dilated, grouped
    (1, 5, 4, 4, 3, 1, 2, 0, 1, 1, True, None),              # strided 1x1
]


def test_conv2d_matches_ember_int8_conv():
    rng = np.random.default_rng(0)
    decls, body, expected = [], [], []
    for i, (n, c, h, w, oc, k, s, p, d, g, has_bias, clamp) in enumerate(CONV_CASES):
        x = rng.integers(-128, 128, (n, c, h, w), dtype=np.int8)
        wt = rng.integers(-127, 128, (oc, c // g, k, k), dtype=np.int8)
        x_scale, x_zp = 0.05, int(rng.integers(-20, 20))
        w_scale = rng.uniform(0.002, 0.02, oc).astype(np.float32)
        bias = rng.normal(0, 1, oc).astype(np.float32) if has_bias else None
        out_scale, out_zp = 0.08 * np.sqrt(c // g * k * k), int(rng.integers(-10, 10))
        clamp = clamp or (-np.inf, np.inf)
        want = qconv2d(x, x_scale, x_zp, wt, w_scale, None, bias, (s, s), (p, p), (d, d), g,
                       out_scale, out_zp, np.int8, clamp=clamp)
        assert len(np.unique(want)) > min(10, want.size // 2)    # not all saturated
        rq = requant_params(x_scale, w_scale, bias, out_scale, out_zp, oc, clamp)
        decls += [c_array(f"x{i}", x), c_array(f"w{i}", wt), c_requant(f"q{i}", rq),
                  c_array(f"o{i}", np.zeros(want.shape, np.int8), const=False)]
        body += [f"    tiny_conv2d_s8(x{i}, {n}, {c}, {h}, {w}, {x_zp}, w{i}, {oc}, {k}, {k}, "
                 f"{s}, {s}, {p}, {p}, {d}, {d}, {g}, &q{i}, o{i});",
                 f"    tiny_write(o{i}, {want.size});"]
        expected.append(want)
    _check(decls, body, expected)


def test_integer_requantization_matches_its_reference_and_the_float_form():
    """qmult/qshift/int32-bias requantization: the exact integers of its NumPy reference on
    both builds, and within one step of ember's float requantization."""
    rng = np.random.default_rng(4)
    decls, body, expected = [], [], []
    for i, (n, c, h, w, oc, k, s, p, g, clamp) in enumerate([
            (1, 8, 6, 6, 12, 1, 1, 0, 1, (-np.inf, np.inf)),
            (1, 6, 9, 7, 6, 3, 2, 1, 6, (0.0, 6.0)),
            (2, 3, 7, 5, 4, 3, 1, 1, 1, (0.0, np.inf))]):
        x = rng.integers(-128, 128, (n, c, h, w), dtype=np.int8)
        wt = rng.integers(-127, 128, (oc, c // g, k, k), dtype=np.int8)
        x_zp = int(rng.integers(-20, 20))
        w_scale = rng.uniform(0.002, 0.02, oc).astype(np.float32)
        bias = rng.normal(0, 1, oc).astype(np.float32)
        out_scale, out_zp = 0.08 * np.sqrt(c // g * k * k), int(rng.integers(-10, 10))
        geometry = ((s, s), (p, p), (1, 1), g)
        acc = qconv2d(x, 1.0, x_zp, wt, np.ones(oc, np.float32), None, None, *geometry,
                      1.0, 0, np.float32)                  # float32 output: acc itself
        rq = requant_params_int(0.05, w_scale, bias, out_scale, out_zp, oc, clamp)
        want = requantize_int(acc.astype(np.int64), rq, axis=1)
        ref = qconv2d(x, 0.05, x_zp, wt, w_scale, None, bias, *geometry, out_scale, out_zp,
                      np.int8, clamp=clamp)
        assert np.abs(want.astype(int) - ref).max() <= 1
        decls += [c_array(f"x{i}", x), c_array(f"w{i}", wt), c_requant(f"q{i}", rq),
                  c_array(f"o{i}", np.zeros(want.shape, np.int8), const=False)]
        body += [f"    tiny_conv2d_s8(x{i}, {n}, {c}, {h}, {w}, {x_zp}, w{i}, {oc}, {k}, {k}, "
                 f"{s}, {s}, {p}, {p}, 1, 1, {g}, &q{i}, o{i});",
                 f"    tiny_write(o{i}, {want.size});"]
        expected.append(want)
    _check(decls, body, expected)


def test_linear_matches_ember_int8_linear():
    rng = np.random.default_rng(1)
    decls, body, expected = [], [], []
    for i, (m, k, n, has_bias, clamp) in enumerate(
            [(4, 32, 10, True, None), (1, 64, 16, False, (0.0, np.inf)),
             (3, 17, 5, True, (0.0, 6.0))]):
        x = rng.integers(-128, 128, (m, k), dtype=np.int8)
        wt = rng.integers(-127, 128, (n, k), dtype=np.int8)
        x_zp = int(rng.integers(-30, 30))
        w_scale = rng.uniform(0.002, 0.02, n).astype(np.float32)
        bias = rng.normal(0, 1, n).astype(np.float32) if has_bias else None
        out_scale, out_zp = 0.06 * np.sqrt(k), int(rng.integers(-10, 10))
        clamp = clamp or (-np.inf, np.inf)
        want = qlinear(x, 0.04, x_zp, wt, w_scale, None, bias, out_scale, out_zp, np.int8,
                       clamp=clamp)
        rq = requant_params(0.04, w_scale, bias, out_scale, out_zp, n, clamp)
        decls += [c_array(f"x{i}", x), c_array(f"w{i}", wt), c_requant(f"q{i}", rq),
                  c_array(f"o{i}", np.zeros(want.shape, np.int8), const=False)]
        body += [f"    tiny_linear_s8(x{i}, {m}, {k}, {x_zp}, w{i}, {n}, &q{i}, o{i});",
                 f"    tiny_write(o{i}, {want.size});"]
        expected.append(want)
    _check(decls, body, expected)


def test_avgpool_relu6_and_add_match_pytorch_quantized_ops():
    rng = np.random.default_rng(2)
    decls, body, expected = [], [], []
    # avg_pool2d: global (7x7) and 2x2 stride 2; PyTorch keeps the input's qparams
    for i, (shape, k, s) in enumerate([((1, 5, 7, 7), 7, 7), ((2, 3, 8, 6), 2, 2),
                                       ((1, 2, 7, 7), 3, 2)]):
        scale, zp = 0.07, int(rng.integers(-15, 15))
        xf = torch.tensor(rng.normal(0, 3, shape), dtype=torch.float32)
        qx = torch.quantize_per_tensor(xf, scale, zp, torch.qint8)
        want = torch.nn.functional.avg_pool2d(qx, k, s).int_repr().numpy()
        mult = np.float32(scale / scale / (k * k))
        decls += [c_array(f"ax{i}", qx.int_repr().numpy()),
                  c_array(f"ao{i}", np.zeros(want.shape, np.int8), const=False)]
        body += [f"    tiny_avgpool2d_s8(ax{i}, {shape[0]}, {shape[1]}, {shape[2]}, "
                 f"{shape[3]}, {zp}, {k}, {k}, {s}, {s}, {c_float(mult)}, {zp}, ao{i});",
                 f"    tiny_write(ao{i}, {want.size});"]
        expected.append(want)
    # relu and relu6 as clamps in the quantized domain
    scale, zp = 0.05, -7
    qx = torch.quantize_per_tensor(torch.tensor(rng.normal(0, 4, 300), dtype=torch.float32),
                                   scale, zp, torch.qint8)
    x = qx.int_repr().numpy()
    six = int(np.clip(np.rint(np.float32(6.0) * (np.float32(1) / np.float32(scale))) + zp,
                      -128, 127))
    for name, want in [("relu", torch.relu(qx).int_repr().numpy()),
                       ("relu6", torch.nn.functional.hardtanh(qx, 0.0, 6.0).int_repr().numpy())]:
        hi = 127 if name == "relu" else six
        decls += [c_array(f"{name}_o", np.zeros(300, np.int8), const=False)]
        body += [f"    tiny_clamp_s8(rx, 300, {zp}, {hi}, {name}_o);",
                 f"    tiny_write({name}_o, 300);"]
        expected.append(want)
    decls.append(c_array("rx", x))
    # add: ember's quantized add (dequantize in float32, add, requantize); PyTorch's
    # quantized.add agrees to within one step (its x86 kernel fuses the dequantization)
    a = rng.integers(-128, 128, 257, dtype=np.int8)
    b = rng.integers(-128, 128, 257, dtype=np.int8)
    (sa, za), (sb, zb), (so, zo) = (0.03, 5), (0.05, -9), (0.06, 3)
    real = ((a.astype(np.float32) - za) * np.float32(sa)
            + (b.astype(np.float32) - zb) * np.float32(sb))
    want = np.clip(np.rint(real * (np.float32(1) / np.float32(so))) + zo, -128, 127)
    qa = torch._make_per_tensor_quantized_tensor(torch.tensor(a), sa, za)
    qb = torch._make_per_tensor_quantized_tensor(torch.tensor(b), sb, zb)
    ref = torch.ops.quantized.add(qa, qb, so, zo).int_repr().numpy()
    assert np.abs(ref.astype(int) - want).max() <= 1
    decls += [c_array("sa", a), c_array("sb", b), c_array("so", np.zeros(257, np.int8), False)]
    body += [f"    tiny_add_s8(sa, {za}, {c_float(sa)}, sb, {zb}, {c_float(sb)}, 257, "
             f"{c_float(np.float32(1) / np.float32(so))}, {zo}, -128, 127, so);",
             "    tiny_write(so, 257);"]
    expected.append(want.astype(np.int8))
    _check(decls, body, expected)


def test_gradient_gemms_match_integer_reference():
    rng = np.random.default_rng(3)
    decls, body, expected = [], [], []
    # (b, n, k, p): a linear layer's batch (p = 1) and a 1x1 conv's images x pixels
    for i, (b, n, k, p) in enumerate([(6, 10, 24, 1), (2, 8, 5, 9)]):
        dy = rng.integers(-128, 128, (b, n, p), dtype=np.int8)
        x = rng.integers(-128, 128, (b, k, p), dtype=np.int8)
        wt = rng.integers(-127, 128, (n, k), dtype=np.int8)
        x_zp = int(rng.integers(-20, 20))
        dy64, x64 = dy.astype(np.int64), x.astype(np.int64) - x_zp
        want = [np.einsum("bnp,bkp->nk", dy64, x64), dy64.sum(axis=(0, 2)),
                np.einsum("bnp,nk->bkp", dy64, wt.astype(np.int64))]
        decls += [c_array(f"dy{i}", dy), c_array(f"x{i}", x), c_array(f"w{i}", wt),
                  c_array(f"dw{i}", np.zeros(n * k, np.int32), False),
                  c_array(f"db{i}", np.zeros(n, np.int32), False),
                  c_array(f"dx{i}", np.zeros(b * k * p, np.int32), False)]
        body += [f"    tiny_grad_weight_s8(dy{i}, x{i}, {x_zp}, {b}, {n}, {k}, {p}, dw{i});",
                 f"    tiny_grad_bias_s8(dy{i}, {b}, {n}, {p}, db{i});",
                 f"    tiny_grad_input_s8(dy{i}, w{i}, {b}, {n}, {k}, {p}, dx{i});",
                 f"    tiny_write(dw{i}, sizeof dw{i});", f"    tiny_write(db{i}, sizeof db{i});",
                 f"    tiny_write(dx{i}, sizeof dx{i});"]
        expected += [a.astype(np.int32) for a in want]
    _check(decls, body, expected, np.int32)


def test_round_half_even_on_both_builds():
    vals = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999998, -3.5000002, 0.0, 1e9, -1e9,
                     8388609.0, 12.5, -12.5, 127.49999], np.float32)
    decls = [c_array("v", vals), c_array("r", np.zeros(vals.size, np.int32), False)]
    body = [f"    for (int i = 0; i < {vals.size}; i++) r[i] = tiny_round_half_even(v[i]);",
            "    tiny_write(r, sizeof r);"]
    _check(decls, body, [np.rint(vals).astype(np.int32)], np.int32)
