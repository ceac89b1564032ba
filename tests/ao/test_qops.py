"""quantized_decomposed graph ops and aten's fake-quant ops against PyTorch: the same
integers bit for bit, dtypes, errors, gradients; and that export/compile see them as
ordinary registry ops."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytest.importorskip("torch.ao.quantization.fx._decomposed")    # torch.ops.quantized_decomposed

QD, TQD = ember.ops.quantized_decomposed, torch.ops.quantized_decomposed
RANGES = [(ember.int8, torch.int8, -128, 127), (ember.uint8, torch.uint8, 0, 255),
          (ember.int32, torch.int32, -2**31, 2**31 - 1)]
TDTYPE = {ember.float32: torch.float32, ember.float64: torch.float64,
          ember.float16: torch.float16, ember.bfloat16: torch.bfloat16}


def _data(shape=(33, 7), seed=0):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(shape) * 3).astype(np.float32)
    a.reshape(-1)[:9] = (np.arange(9) - 4 + 0.5) * 0.05       # exact ties of x / 0.05
    return a


def _pair(a, dtype=ember.float32):
    return ember.from_numpy(a.copy()).to(dtype), torch.from_numpy(a.copy()).to(TDTYPE[dtype])


def _same(e, t):
    assert e.dtype.name == str(t.dtype).split(".")[1] and tuple(e.shape) == tuple(t.shape)
    np.testing.assert_array_equal(e.float().numpy() if e.dtype.itemsize == 2 else e.numpy(),
                                  t.float().numpy() if t.dtype.itemsize == 2 else t.numpy())


@pytest.mark.parametrize("ed,td,lo,hi", RANGES)
@pytest.mark.parametrize("xd", [ember.float32, ember.float16, ember.bfloat16])
def test_quantize_dequantize_per_tensor(ed, td, lo, hi, xd):
    x, tx = _pair(_data(), xd)
    q, tq = QD.quantize_per_tensor.default(x, 0.05, 3, lo, hi, ed), \
        TQD.quantize_per_tensor.default(tx, 0.05, 3, lo, hi, td)
    _same(q, tq)
    _same(QD.dequantize_per_tensor.default(q, 0.05, 3, lo, hi, ed),
          TQD.dequantize_per_tensor.default(tq, 0.05, 3, lo, hi, td))
    s, z = ember.tensor(0.031), ember.tensor([1])
    ts, tz = torch.tensor(0.031), torch.tensor([1])
    q, tq = QD.quantize_per_tensor.tensor(x, s, z, lo, hi, ed), \
        TQD.quantize_per_tensor.tensor(tx, ts, tz, lo, hi, td)
    _same(q, tq)
    for out in (None, ember.float64, ember.bfloat16):
        tout = None if out is None else TDTYPE[out]
        _same(QD.dequantize_per_tensor.tensor(q, s, z, lo, hi, ed, out_dtype=out),
              TQD.dequantize_per_tensor.tensor(tq, ts, tz, lo, hi, td, out_dtype=tout))


@pytest.mark.parametrize("ed,td,lo,hi", RANGES[:2])
@pytest.mark.parametrize("sdtype", [np.float32, np.float64])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_quantize_dequantize_per_channel(ed, td, lo, hi, sdtype, axis):
    a = _data((6, 7, 5))
    n = a.shape[axis]
    rng = np.random.default_rng(1)
    sc = rng.uniform(0.01, 0.1, n).astype(sdtype)
    zp = rng.integers(lo, lo + 10, n) + (5 if lo else 0)
    x, tx = _pair(a)
    args = (ember.from_numpy(sc), ember.from_numpy(zp), axis, lo, hi, ed)
    targs = (torch.from_numpy(sc), torch.from_numpy(zp), axis, lo, hi, td)
    q, tq = QD.quantize_per_channel.default(x, *args), TQD.quantize_per_channel.default(tx, *targs)
    _same(q, tq)
    _same(QD.dequantize_per_channel.default(q, *args),
          TQD.dequantize_per_channel.default(tq, *targs))
    _same(QD.dequantize_per_channel.default(q, args[0], None, *args[2:]),
          TQD.dequantize_per_channel.default(tq, targs[0], None, *targs[2:]))


@pytest.mark.parametrize("ed,td,lo,hi", RANGES)
@pytest.mark.parametrize("name", ["choose_qparams", "choose_qparams_symmetric"])
def test_choose_qparams(ed, td, lo, hi, name):
    for a in (_data(), np.abs(_data()) + 1, np.zeros((3,), np.float32)):
        x, tx = _pair(a)
        got = getattr(QD, name).tensor(x, lo, hi, 1e-5, ed)
        want = getattr(TQD, name).tensor(tx, lo, hi, 1e-5, td)
        for g, w in zip(got, want):
            _same(g, w)


def test_names_packets_and_schemas():
    op = QD.quantize_per_tensor.tensor
    assert op.name() == "quantized_decomposed::quantize_per_tensor.tensor"
    assert QD.quantize_per_tensor.default.name() == "quantized_decomposed::quantize_per_tensor"
    assert op.namespace == "quantized_decomposed" and op.overloadpacket is QD.quantize_per_tensor
    assert sorted(QD.quantize_per_tensor.overloads()) == ["default", "tensor"]
    assert str(QD.dequantize_per_channel.default._schema) == \
        str(TQD.dequantize_per_channel.default._schema).split("::", 1)[1]
    assert "quantize_per_tensor" not in QD.dequantize_per_tensor.overloads()
    with pytest.raises(AttributeError):
        QD.no_such_op
    # keyword binding through the schema, as torch.ops
    x = ember.randn(3)
    q = QD.quantize_per_tensor(x, scale=0.1, zero_point=0, quant_min=-128, quant_max=127,
                               dtype=ember.int8)
    assert q.dtype == ember.int8


def _raises_like(efn, tfn):
    with pytest.raises(Exception) as te:
        tfn()
    with pytest.raises(te.type) as ee:
        efn()
    return str(ee.value), str(te.value)


@pytest.mark.parametrize("case", ["int_input", "dtype_mismatch", "axis", "bounds", "one_element"])
def test_errors_match_torch(case):
    x, tx = _pair(_data())
    qi = ember.zeros(3, 7, dtype=ember.int8)
    tqi = torch.zeros(3, 7, dtype=torch.int8)
    s, ts = ember.ones(7) * 0.1, torch.ones(7) * 0.1
    z, tz = ember.zeros(7, dtype=ember.int64), torch.zeros(7, dtype=torch.int64)
    if case == "int_input":
        got, want = _raises_like(
            lambda: QD.quantize_per_tensor.default(qi, 0.1, 0, -128, 127, ember.int8),
            lambda: TQD.quantize_per_tensor.default(tqi, 0.1, 0, -128, 127, torch.int8))
        assert "torch.int8" in got and "Expecting input to have dtype torch.float32" in got
    elif case == "dtype_mismatch":
        got, _ = _raises_like(
            lambda: QD.dequantize_per_tensor.default(qi, 0.1, 0, 0, 255, ember.uint8),
            lambda: TQD.dequantize_per_tensor.default(tqi, 0.1, 0, 0, 255, torch.uint8))
        assert "torch.uint8" in got and "torch.int8" in got
    elif case == "axis":
        got, _ = _raises_like(
            lambda: QD.quantize_per_channel.default(x, s, z, 2, -128, 127, ember.int8),
            lambda: TQD.quantize_per_channel.default(tx, ts, tz, 2, -128, 127, torch.int8))
        assert "axis to be < 2" in got
    elif case == "bounds":
        got, _ = _raises_like(
            lambda: QD.quantize_per_tensor.default(x, 0.1, 0, -129, 127, ember.int8),
            lambda: TQD.quantize_per_tensor.default(tx, 0.1, 0, -129, 127, torch.int8))
        assert "quant_min out of bounds" in got
    else:
        got, _ = _raises_like(
            lambda: QD.quantize_per_tensor.tensor(x, s, z, -128, 127, ember.int8),
            lambda: TQD.quantize_per_tensor.tensor(tx, ts, tz, -128, 127, torch.int8))
        assert "one element" in got
    assert "quantized_decomposed" in got


# -------------------------------------------------------------- export / compile

_Q, _DQ = QD.quantize_per_tensor.default, QD.dequantize_per_tensor.default
_QC, _DQC = QD.quantize_per_channel.default, QD.dequantize_per_channel.default


class _QDQ(ember.nn.Module):
    def forward(self, x, s, z):
        y = _DQ(_Q(x, 0.05, 3, -128, 127, ember.int8), 0.05, 3, -128, 127, ember.int8) * 2
        return _DQC(_QC(y, s, z, 1, -128, 127, ember.int8), s, z, 1, -128, 127, ember.int8)


def _qdq_inputs():
    return ember.from_numpy(_data((4, 5))), ember.rand(5) * 0.1 + 0.01, ember.arange(5) - 2


def test_export_keeps_the_ops_in_the_graph():
    args = _qdq_inputs()
    ep = ember.export.export(_QDQ(), args)
    targets = [n.target for n in ep.graph.nodes if n.op == "call_function"]
    assert _Q in targets and _DQC in targets
    assert "ember.ops.quantized_decomposed.quantize_per_channel.default" in ep.graph_module.code
    np.testing.assert_array_equal(ep.module()(*args).numpy(), _QDQ()(*args).numpy())


def test_inductor_compiles_the_decomposition():
    args = _qdq_inputs()
    f = ember.compile(_QDQ(), backend="inductor")
    np.testing.assert_array_equal(f(*args).numpy(), _QDQ()(*args).numpy())


# ------------------------------------------------------------------- fake quant

@pytest.mark.parametrize("xd", [ember.float32, ember.float64, ember.float16, ember.bfloat16])
@pytest.mark.parametrize("form", ["scalar", "tensor", "channel_int", "channel_float"])
def test_fake_quantize_values_and_straight_through_grads(xd, form):
    a = _data((16, 5))
    x, tx = _pair(a, xd)
    x.requires_grad_(True)
    tx.requires_grad_(True)
    rng = np.random.default_rng(2)
    if form == "scalar":
        y = ember.fake_quantize_per_tensor_affine(x, 0.1, 3, -20, 20)
        ty = torch.fake_quantize_per_tensor_affine(tx, 0.1, 3, -20, 20)
    elif form == "tensor":
        y = ember.fake_quantize_per_tensor_affine(x, ember.tensor([0.07]), ember.tensor([2]),
                                                  0, 40)
        ty = torch.fake_quantize_per_tensor_affine(tx, torch.tensor([0.07]), torch.tensor([2]),
                                                   0, 40)
    else:
        sc = rng.uniform(0.05, 0.2, 5).astype(np.float32)
        zp = rng.integers(-3, 3, 5).astype(np.int32) if form == "channel_int" else \
            rng.uniform(-3, 3, 5).astype(np.float32)
        y = ember.fake_quantize_per_channel_affine(x, ember.from_numpy(sc), ember.from_numpy(zp),
                                                   1, -16, 15)
        ty = torch.fake_quantize_per_channel_affine(tx, torch.from_numpy(sc),
                                                    torch.from_numpy(zp), 1, -16, 15)
    _same(y.detach(), ty.detach())
    g = rng.standard_normal(a.shape).astype(np.float32)
    y.backward(ember.from_numpy(g).to(xd))
    ty.backward(torch.from_numpy(g).to(TDTYPE[xd]))
    _same(x.grad, tx.grad)
    assert 0 < (x.grad.float() == 0).float().mean().item() < 1     # some clamped, some not


def test_fake_quantize_errors_match_torch():
    x, tx = _pair(_data((4, 3)))
    cases = [
        (lambda m, t: m.fake_quantize_per_tensor_affine(t, 0.1, 300, 0, 255), "zero_point"),
        (lambda m, t: m.fake_quantize_per_tensor_affine(t, 0.1, 0, 255, 0), "quant_min"),
        (lambda m, t: m.fake_quantize_per_channel_affine(
            t, m.tensor([0.1] * 3), m.tensor([0] * 3, dtype=m.int64), 1, 0, 255), "Int32"),
        (lambda m, t: m.fake_quantize_per_channel_affine(
            t, m.tensor([0.1] * 3), m.tensor([0] * 3, dtype=m.int32), 2, 0, 255), "range"),
        (lambda m, t: m.fake_quantize_per_channel_affine(
            t, m.tensor([0.1] * 3), m.tensor([0] * 3, dtype=m.int32), 0, 0, 255), "consistent"),
    ]
    for fn, gist in cases:
        got, want = _raises_like(lambda: fn(ember, x), lambda: fn(torch, tx))
        assert gist in got and gist in want
    with pytest.raises(NotImplementedError):
        ember.fake_quantize_per_tensor_affine(x.int(), 0.1, 0, 0, 255)


def test_capture_reads_the_namespace_attribute_chain():
    """`ember.ops.quantized_decomposed.<op>.<overload>(...)` written inside the captured
    function (as PyTorch code writes torch.ops...) records the op itself."""
    class M(ember.nn.Module):
        def forward(self, x):
            q = ember.ops.quantized_decomposed.quantize_per_tensor.default(
                x, 0.05, 3, -128, 127, ember.int8)
            return ember.ops.quantized_decomposed.dequantize_per_tensor.default(
                q, 0.05, 3, -128, 127, ember.int8)
    x = ember.from_numpy(_data((4, 5)))
    ep = ember.export.export(M(), (x,))
    assert _Q in [n.target for n in ep.graph.nodes]
    np.testing.assert_array_equal(ep.module()(x).numpy(), M()(x).numpy())
