"""End to end: a small int8 CNN (ember.nn, quantized per channel, int8 activations) runs as
a C program in the emulator's 256 KB of SRAM with the same logits as the host build and as
ember's int8 ops; the same program with an arena larger than the SRAM does not run."""
import numpy as np
import pytest

import ember
from ember.tiny.kernels import requant_params
from ember.tiny.mcu import SRAMOverflowError
from ember.tiny.mcu.cgen import c_array, c_requant
from ember.tiny.mcu.toolchain import SRAM_SIZE
from tiny_support import need_toolchain, program, run_both


@pytest.fixture(scope="module", autouse=True)
def toolchain_here():
    need_toolchain()


def _float_model():
    ember.manual_seed(0)
    nn = ember.nn
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8), nn.ReLU6(),
        nn.Conv2d(8, 16, 1), nn.ReLU(),
        nn.Flatten(), nn.Linear(16 * 4 * 4, 10))


def _act_qparams(lo, hi):
    """int8 asymmetric (scale, zero point) covering [min(lo, 0), max(hi, 0)]."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    scale = (hi - lo) / 255 or 1.0
    return scale, int(np.clip(-128 - round(lo / scale), -128, 127))


def _quantize(model, calib):
    """Layers as dicts: int8 per-channel weights, float32 bias, and the int8 activation
    qparams seen on `calib` (post-training calibration by min/max)."""
    mods = list(model)
    acts, h = [], calib
    with ember.no_grad():
        for m in mods:
            h = m(h)
            acts.append(h.numpy())
    x_q = _act_qparams(calib.numpy().min(), calib.numpy().max())
    layers, i = [], 0
    while i < len(mods):
        m = mods[i]
        if isinstance(m, ember.nn.Flatten):
            i += 1
            continue
        post, clamp = "none", (-np.inf, np.inf)
        j = i
        if i + 1 < len(mods) and isinstance(mods[i + 1], (ember.nn.ReLU, ember.nn.ReLU6)):
            j = i + 1
            relu6 = isinstance(mods[j], ember.nn.ReLU6)
            post, clamp = ("hardtanh", (0.0, 6.0)) if relu6 else ("relu", (0.0, np.inf))
        w = m.weight.detach().numpy()
        w_scale = (np.abs(w).reshape(w.shape[0], -1).max(1) / 127).astype(np.float32)
        wq = np.clip(np.rint(w / w_scale.reshape((-1,) + (1,) * (w.ndim - 1))), -127, 127)
        out_q = _act_qparams(acts[j].min(), acts[j].max())
        layers.append({"mod": m, "w": wq.astype(np.int8), "w_scale": w_scale,
                       "bias": m.bias.detach().numpy().astype(np.float32), "post": post,
                       "clamp": clamp, "x_q": x_q, "out_q": out_q})
        x_q = out_q
        i = j + 1
    return layers


def _ember_int8(layers, x):
    """The int8 network with ember's int8 ops (onednn.qconv2d/qlinear_pointwise)."""
    ops = ember.ops.onednn
    h = ember.tensor(x)
    for L in layers:
        m, (xs, xz), (os_, oz) = L["mod"], L["x_q"], L["out_q"]
        args = (ember.tensor(L["w"]), ember.tensor(L["w_scale"]),
                ember.zeros(len(L["w_scale"]), dtype=ember.int64), ember.tensor(L["bias"]))
        post_args = list(L["clamp"]) if L["post"] == "hardtanh" else []
        if isinstance(m, ember.nn.Conv2d):
            h = ops.qconv2d_pointwise(h, xs, xz, *args, list(m.stride), list(m.padding),
                                      list(m.dilation), m.groups, os_, oz, ember.int8,
                                      L["post"], post_args, None)
        else:
            h = ops.qlinear_pointwise(h.reshape(h.shape[0], -1), xs, xz, *args, os_, oz,
                                      ember.int8, L["post"], post_args, "")
    return h.numpy()


def _c_program(layers, in_shape, inputs=None):
    """A C driver: weights const in flash, activations ping-pong in one static arena (an
    offset per layer output), logits of each input written to the output channel."""
    decls, body = [], []
    c, h, w = in_shape
    in_bytes = c * h * w
    sizes, shape = [], (c, h, w)
    for L in layers:
        m = L["mod"]
        if isinstance(m, ember.nn.Conv2d):
            oh = (shape[1] + 2 * m.padding[0] - m.kernel_size[0]) // m.stride[0] + 1
            ow = (shape[2] + 2 * m.padding[1] - m.kernel_size[1]) // m.stride[1] + 1
            shape = (m.out_channels, oh, ow)
        else:
            shape = (m.out_features,)
        sizes.append(int(np.prod(shape)))
    half = max([in_bytes] + sizes)
    decls.append(f"static int8_t arena[{2 * half}];")
    if inputs is not None:
        decls.append(c_array("inputs", inputs))
    shape = in_shape
    for k, L in enumerate(layers):
        oc = len(L["w_scale"])
        rq = requant_params(L["x_q"][0], L["w_scale"], L["bias"], *L["out_q"], oc, L["clamp"])
        decls += [c_array(f"w{k}", L["w"]), c_requant(f"q{k}", rq)]
    body.append(f"    for (int s = 0; s < {0 if inputs is None else len(inputs)} || s == 0; "
                "s++) {")
    if inputs is not None:
        body.append(f"        memcpy(arena, inputs + s * {in_bytes}, {in_bytes});")
    src = 0
    for k, L in enumerate(layers):
        m, xz, dst = L["mod"], L["x_q"][1], 1 - src
        a, b = f"arena + {src * half}", f"arena + {dst * half}"
        if isinstance(m, ember.nn.Conv2d):
            kh, kw = m.kernel_size
            body.append(f"        tiny_conv2d_s8({a}, 1, {shape[0]}, {shape[1]}, {shape[2]}, "
                        f"{xz}, w{k}, {m.out_channels}, {kh}, {kw}, {m.stride[0]}, "
                        f"{m.stride[1]}, {m.padding[0]}, {m.padding[1]}, 1, 1, {m.groups}, "
                        f"&q{k}, {b});")
            oh = (shape[1] + 2 * m.padding[0] - kh) // m.stride[0] + 1
            ow = (shape[2] + 2 * m.padding[1] - kw) // m.stride[1] + 1
            shape = (m.out_channels, oh, ow)
        else:
            body.append(f"        tiny_linear_s8({a}, 1, {m.in_features}, {xz}, w{k}, "
                        f"{m.out_features}, &q{k}, {b});")
            shape = (m.out_features,)
        src = dst
    body += [f"        tiny_write(arena + {src * half}, {sizes[-1]});", "    }"]
    return program(decls, body), 2 * half


def test_int8_cnn_runs_in_256kb_with_ember_int8_logits():
    model = _float_model()
    calib = ember.randn(16, 3, 16, 16)
    layers = _quantize(model, calib)
    rng = np.random.default_rng(0)
    xs, xz = layers[0]["x_q"]
    inputs = np.clip(np.rint(rng.normal(0, 1, (4, 3, 16, 16)) / xs) + xz, -128, 127)
    inputs = inputs.astype(np.int8)
    want = np.concatenate([_ember_int8(layers, inputs[i:i + 1]) for i in range(4)])
    assert len(np.unique(want)) > 10
    src, arena = _c_program(layers, (3, 16, 16), inputs)
    res, host = run_both(src)
    assert res.output == host
    np.testing.assert_array_equal(np.frombuffer(res.output, np.int8).reshape(4, 10), want)
    assert res.bss_bytes >= arena and res.sram_high_water <= SRAM_SIZE
    assert res.instructions > 0 and res.flash_bytes > sum(L["w"].size for L in layers)


def test_arena_larger_than_sram_fails_clearly():
    ember.manual_seed(0)
    big = ember.nn.Conv2d(3, 16, 3, stride=2, padding=1)
    L = {"mod": big, "w": np.ones((16, 3, 3, 3), np.int8), "w_scale": np.full(16, 0.01),
         "bias": np.zeros(16, np.float32), "clamp": (0.0, np.inf), "x_q": (0.05, 0),
         "out_q": (0.1, -128)}
    src, arena = _c_program([L], (3, 224, 224))
    assert arena > SRAM_SIZE
    with pytest.raises(RuntimeError, match="SRAM"):             # the linker knows the board
        run_both(src)
    with pytest.raises(SRAMOverflowError, match="end of SRAM"):  # built for a bigger board
        run_both(src, sram_bytes=1024 * 1024)
