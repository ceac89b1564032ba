"""The int8 lowering pass (ember/_inductor/quant_lowering.py): PyTorch-2.1-shaped converted
graphs (dequantize -> conv/linear -> relu -> quantize, as convert_pt2e writes them), compiled
with ember.compile(backend="inductor"), run the fused onednn ops and match the reference
q/dq graph run eagerly within one quantization step."""
import operator

import numpy as np
import pytest

import ember
from ember._inductor import quant_lowering as QL
from ember.fx import Graph, GraphModule
from ember.ops._registry import REGISTRY

QD = ember.ops.quantized_decomposed
U8, S8 = ember.uint8, ember.int8
CONV, LINEAR, RELU, ADD = (REGISTRY[k] for k in ("convolution", "linear", "relu", "add"))
VIEW, HARDTANH = REGISTRY["view"], REGISTRY["hardtanh"]
QPT = QD.quantize_per_tensor.default


class _Builder:
    """A converted graph by hand: get_attr constants as convert_pt2e's _frozen_param /
    _scale_ / _zero_point_ attributes, activation qparams as literals."""

    def __init__(self, seed=0, act=U8):
        self.root, self.g = ember.nn.Module(), Graph()
        self.rng = np.random.default_rng(seed)
        self.act = act
        self.range = (0, 255) if act == U8 else (-128, 127)

    def attr(self, name, array):
        setattr(self.root, name, ember.from_numpy(array))
        return self.g.get_attr(name)

    def q(self, x, scale, zp):
        return self.g.call_function(QD.quantize_per_tensor.default,
                                    (x, scale, zp, *self.range, self.act))

    def dq(self, x, scale, zp):
        return self.g.call_function(QD.dequantize_per_tensor.default,
                                    (x, scale, zp, *self.range, self.act))

    def weight(self, name, shape, per_tensor=False):
        w = self.attr(f"_frozen_param_{name}",
                      self.rng.integers(-127, 128, shape).astype(np.int8))
        if per_tensor:
            return self.g.call_function(QD.dequantize_per_tensor.default,
                                        (w, 0.004, 0, -128, 127, S8))
        s = self.attr(f"_scale_{name}",
                      self.rng.uniform(0.002, 0.006, shape[0]).astype(np.float32))
        z = self.attr(f"_zero_point_{name}", np.zeros(shape[0], np.int64))
        return self.g.call_function(QD.dequantize_per_channel.default,
                                    (w, s, z, 0, -128, 127, S8))

    def conv(self, x, name, cin, cout, k, stride=1, padding=1, groups=1, per_tensor=False):
        w = self.weight(name, (cout, cin // groups, k, k), per_tensor)
        b = self.attr(f"_bias_{name}", self.rng.normal(0, 0.1, cout).astype(np.float32))
        return self.g.call_function(CONV, (x, w, b, [stride] * 2, [padding] * 2, [1, 1], False,
                                           [0, 0], groups))

    def module(self, out):
        self.g.output(out)
        return GraphModule(self.root, self.g)


def _basic_block():
    """resnet's BasicBlock after convert_pt2e (batch norms folded into the convs)."""
    b = _Builder()
    x = b.g.placeholder("x")
    xq = b.q(x, 0.03, 128)
    y = b.g.call_function(RELU, (b.conv(b.dq(xq, 0.03, 128), "c1", 16, 16, 3),))
    y = b.dq(b.q(y, 0.02, 0), 0.02, 0)
    y = b.dq(b.q(b.conv(y, "c2", 16, 16, 3), 0.04, 120), 0.04, 120)
    y = b.g.call_function(RELU, (b.g.call_function(ADD, (y, b.dq(xq, 0.03, 128))),))
    return b.module(b.dq(b.q(y, 0.03, 0), 0.03, 0))


def _run(gm, x):
    before = dict(QL.counters)
    with ember.no_grad():
        ref = gm(x)
        out = ember.compile(gm, backend="inductor", fullgraph=True)(x)
    fused = {k: v - before.get(k, 0) for k, v in QL.counters.items() if v != before.get(k, 0)}
    return ref.numpy(), out.numpy(), fused


def test_resnet_basic_block_runs_fused_int8_convs():
    x = ember.randn(2, 16, 8, 8)
    ref, out, fused = _run(_basic_block(), x)
    assert fused == {"qconv2d": 2}
    assert np.abs(out - ref).max() <= 0.03 + 1e-6         # within one output step
    assert (np.abs(out - ref) > 1e-6).mean() < 0.01


def test_linear_head_through_flatten_uses_the_float_output_variant():
    b = _Builder(1)
    x = b.g.placeholder("x")
    y = b.g.call_function(RELU, (b.conv(b.dq(b.q(x, 0.03, 128), 0.03, 128), "c", 4, 8, 3),))
    y = b.dq(b.q(y, 0.02, 0), 0.02, 0)
    flat = b.g.call_function(VIEW, (y, (2, 8 * 6 * 6)))
    out = b.g.call_function(LINEAR, (flat, b.weight("fc", (10, 8 * 6 * 6)),
                                     b.attr("fc_b", np.ones(10, np.float32))))
    ref, res, fused = _run(b.module(out), ember.randn(2, 4, 6, 6))
    assert fused == {"qconv2d": 1, "qlinear_fp32_out": 1}
    assert res.dtype == np.float32
    # the linear reads 288 activations, each at most one step (0.02) off
    np.testing.assert_allclose(res, ref, atol=1e-4)


def test_depthwise_relu6_int8_activations_and_per_tensor_weights():
    """mobilenet_v2's depthwise conv + ReLU6 (hardtanh) with XNNPACK-style symmetric int8
    activations and a per-tensor weight dequantize."""
    b = _Builder(2, act=S8)
    x = b.g.placeholder("x")
    y = b.conv(b.dq(b.q(x, 0.03, 0), 0.03, 0), "dw", 8, 8, 3, stride=2, groups=8)
    y = b.g.call_function(HARDTANH, (y, 0.0, 6.0))
    y = b.dq(b.q(y, 0.01, -128), 0.01, -128)
    y = b.conv(y, "pw", 8, 12, 1, padding=0, per_tensor=True)
    ref, out, fused = _run(b.module(b.dq(b.q(y, 0.02, 3), 0.02, 3)), ember.randn(2, 8, 9, 9))
    assert fused == {"qconv2d": 2}
    assert np.abs(out - ref).max() <= 0.02 + 1e-6


def test_unmatched_patterns_keep_their_quantize_ops():
    """A float weight (no dequantize), a transposed conv and a reduced-range quantize after
    the conv are not int8 patterns (the last one keeps the float-output variant)."""
    b = _Builder(3)
    x = b.g.placeholder("x")
    xd = b.dq(b.q(x, 0.03, 128), 0.03, 128)
    wf = b.attr("wf", np.random.default_rng(0).normal(0, 0.1, (4, 4, 3, 3)).astype(np.float32))
    y = b.g.call_function(CONV, (xd, wf, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1))
    y = b.dq(b.q(y, 0.02, 128), 0.02, 128)
    y = b.g.call_function(CONV, (y, b.weight("t", (4, 4, 3, 3)), None, [1, 1], [1, 1], [1, 1],
                                 True, [0, 0], 1))
    y = b.dq(b.q(y, 0.02, 128), 0.02, 128)
    y = b.conv(y, "r", 4, 4, 3)
    q = b.g.call_function(QD.quantize_per_tensor.default, (y, 0.05, 64, 0, 127, U8))
    out = b.g.call_function(QD.dequantize_per_tensor.default, (q, 0.05, 64, 0, 127, U8))
    ref, res, fused = _run(b.module(out), ember.randn(1, 4, 6, 6))
    assert fused == {"qconv2d_fp32_out": 1}
    assert np.abs(res - ref).max() <= 0.05 + 1e-6


@pytest.mark.parametrize("out_dtype", [None, ember.bfloat16])
def test_dequantize_out_dtype(out_dtype):
    """A dequantize to bfloat16 is not a float32 pattern; float32 (None) is."""
    b = _Builder(4)
    x = b.g.placeholder("x")
    xd = b.g.call_function(QD.dequantize_per_tensor.default,
                           (b.q(x, 0.03, 128), 0.03, 128, 0, 255, U8), {"out_dtype": out_dtype})
    w = b.weight("c", (4, 4, 1, 1))
    if out_dtype is not None:
        w = b.g.call_function(REGISTRY["_to_copy"], (w,), {"dtype": out_dtype})
    y = b.g.call_function(CONV, (xd, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1))
    ref, res, fused = _run(b.module(y), ember.randn(1, 4, 3, 3))
    assert fused == ({} if out_dtype is not None else {"qconv2d_fp32_out": 1})
    np.testing.assert_allclose(res.astype(np.float32), ref.astype(np.float32), rtol=1e-2,
                               atol=1e-2)


def test_unmatched_quantize_compiles_to_round_half_even():
    """A quantize left in the graph decomposes to x * (1/s) -> round -> + zp -> clamp; the
    inductor lowers round as C rint (half to even), equal to eager and to PyTorch's
    quantized_decomposed op, ties included (scale 0.5 makes x / s exact)."""
    pytest.importorskip("torch")
    import torch
    import torch.ao.quantization.fx._decomposed  # noqa: F401  (defines the namespace)
    vals = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 126.5, 127.5, -300.0, 1e9, 0.3],
                    np.float32) * 0.5
    x = ember.from_numpy(vals)

    def fn(t):
        return QPT(t, 0.5, 3, -128, 127, S8), t.round(decimals=1)
    with ember.no_grad():
        q, r = ember.compile(fn, backend="inductor", fullgraph=True)(x)
    ref = torch.ops.quantized_decomposed.quantize_per_tensor(torch.from_numpy(vals), 0.5, 3,
                                                             -128, 127, torch.int8)
    np.testing.assert_array_equal(q.numpy(), ref.numpy())
    np.testing.assert_array_equal(q.numpy(), QPT(x, 0.5, 3, -128, 127, S8).numpy())
    np.testing.assert_array_equal(r.numpy(), x.round(decimals=1).numpy())


def test_convert_pt2e_resnet_block_compiles_to_int8_convs():
    """The real flow: capture -> prepare_pt2e(X86InductorQuantizer) -> calibrate ->
    convert_pt2e -> ember.compile: resnet's BasicBlock runs its convs as int8 ops."""
    from ember._export import capture_pre_autograd_graph
    from ember.ao.quantization.quantize_pt2e import convert_pt2e, prepare_pt2e
    from ember.ao.quantization.quantizer.x86_inductor_quantizer import (
        X86InductorQuantizer, get_default_x86_inductor_quantization_config)
    from ember.vision.models.resnet import BasicBlock
    ember.manual_seed(0)
    block = BasicBlock(16, 16).eval()
    data = [ember.randn(2, 16, 8, 8) for _ in range(3)]
    quantizer = X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config())
    with ember.no_grad():
        prepared = prepare_pt2e(capture_pre_autograd_graph(block, (data[0],)), quantizer)
        for x in data:
            prepared(x)
        converted = convert_pt2e(prepared)
    step = max(n.args[1] for n in converted.graph.nodes
               if n.target is QPT and isinstance(n.args[1], float))
    ref, out, fused = _run(converted, data[1])
    # conv1 (+ relu) ends in a quantize; conv2 feeds the residual add: float output
    assert fused == {"qconv2d": 1, "qconv2d_fp32_out": 1}
    assert np.abs(out - ref).max() <= step + 1e-6


def test_max_pool_between_shared_qparams_runs_on_the_integers():
    """resnet's stem: conv -> relu -> q -> dq -> max_pool2d -> q (same qparams) -> dq -> conv;
    the pool runs on uint8 (exactly: dequantize is increasing, q(dq(v)) = v)."""
    b = _Builder(5)
    x = b.g.placeholder("x")
    y = b.g.call_function(RELU, (b.conv(b.dq(b.q(x, 0.03, 128), 0.03, 128), "c", 3, 8, 3),))
    yq = b.q(y, 0.02, 0)
    pool = b.g.call_function(REGISTRY["max_pool2d_with_indices"],
                             (b.dq(yq, 0.02, 0), [3, 3], [2, 2], [1, 1], [1, 1], False))
    p = b.g.call_function(operator.getitem, (pool, 0))
    y = b.conv(b.dq(b.q(p, 0.02, 0), 0.02, 0), "c2", 8, 4, 1, padding=0)
    ref, out, fused = _run(b.module(b.dq(b.q(y, 0.05, 100), 0.05, 100)),
                           ember.randn(2, 3, 9, 9))
    assert fused == {"qconv2d": 2, "max_pool2d_int8": 1}
    assert np.abs(out - ref).max() <= 0.05 + 1e-6
