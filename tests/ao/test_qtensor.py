"""Quantized tensors against PyTorch: the same integers and qparams, repr, shape ops that
keep the quantizer, PyTorch's errors for what QuantizedCPU does not run, save/load."""
import io

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:.*quantized tensor creation functions")

QTYPES = [(ember.qint8, torch.qint8), (ember.quint8, torch.quint8), (ember.qint32, torch.qint32)]


def _data(shape=(40, 6), seed=0):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(shape) * 3).astype(np.float32)
    a.reshape(-1)[:12] = (np.arange(12) - 6 + 0.5).astype(np.float32) * np.float32(0.1)
    return a


def _same_q(q, tq):
    assert q.dtype.name == str(tq.dtype).split(".")[1] and q.is_quantized
    assert tuple(q.shape) == tuple(tq.shape) and q.stride() == tq.stride()
    np.testing.assert_array_equal(q.int_repr().numpy(), tq.int_repr().numpy())
    np.testing.assert_array_equal(q.dequantize().numpy(), tq.dequantize().numpy())
    assert repr(q.qscheme()) == repr(tq.qscheme())


@pytest.mark.parametrize("ed,td", QTYPES)
@pytest.mark.parametrize("scale,zp", [(0.1, 3), (0.0371, 100), (1e-3, 0)])
def test_quantize_per_tensor(ed, td, scale, zp):
    a = _data()
    q = ember.quantize_per_tensor(ember.from_numpy(a), scale, zp, ed)
    tq = torch.quantize_per_tensor(torch.from_numpy(a), scale, zp, td)
    _same_q(q, tq)
    assert q.q_scale() == tq.q_scale() and q.q_zero_point() == tq.q_zero_point()
    assert repr(q) == repr(tq).replace("torch.", "torch.")
    q2 = ember.quantize_per_tensor(ember.from_numpy(a), ember.tensor(scale), ember.tensor(zp), ed)
    np.testing.assert_array_equal(q2.int_repr().numpy(), q.int_repr().numpy())


@pytest.mark.parametrize("ed,td", QTYPES[:2])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_quantize_per_channel(ed, td, axis):
    a = _data((8, 6, 5))
    n = a.shape[axis]
    rng = np.random.default_rng(3)
    sc = rng.uniform(0.01, 0.1, n)
    zp = rng.integers(0, 10, n) + (100 if ed is ember.quint8 else 0)
    q = ember.quantize_per_channel(ember.from_numpy(a), ember.from_numpy(sc),
                                   ember.from_numpy(zp), axis, ed)
    tq = torch.quantize_per_channel(torch.from_numpy(a), torch.from_numpy(sc),
                                    torch.from_numpy(zp), axis, td)
    _same_q(q, tq)
    np.testing.assert_array_equal(q.q_per_channel_scales().numpy(),
                                  tq.q_per_channel_scales().numpy())
    np.testing.assert_array_equal(q.q_per_channel_zero_points().numpy(),
                                  tq.q_per_channel_zero_points().numpy())
    assert q.q_per_channel_axis() == tq.q_per_channel_axis()
    assert repr(q) == repr(tq)


@pytest.mark.parametrize("ed,td", QTYPES[:2])
@pytest.mark.parametrize("reduce_range", [False, True])
def test_quantize_per_tensor_dynamic(ed, td, reduce_range):
    for a in (_data(), np.abs(_data()), np.zeros((3, 2), np.float32), _data() * 1e-6):
        q = ember.quantize_per_tensor_dynamic(ember.from_numpy(a), ed, reduce_range)
        tq = torch.quantize_per_tensor_dynamic(torch.from_numpy(a), td, reduce_range)
        _same_q(q, tq)
        assert q.q_scale() == tq.q_scale() and q.q_zero_point() == tq.q_zero_point()


def test_repr_of_empty_and_0d():
    for shape in ((0,), (), (2, 0)):
        a = np.full(shape, 1.5, np.float32)
        q = ember.quantize_per_tensor(ember.from_numpy(a), 0.1, 3, ember.qint32)
        tq = torch.quantize_per_tensor(torch.from_numpy(a), 0.1, 3, torch.qint32)
        assert repr(q) == repr(tq)


def test_shape_ops_keep_the_quantizer():
    a = _data((4, 6))
    q = ember.quantize_per_tensor(ember.from_numpy(a), 0.05, 7, ember.quint8)
    tq = torch.quantize_per_tensor(torch.from_numpy(a), 0.05, 7, torch.quint8)
    for f in (lambda t: t.view(6, 4), lambda t: t.t(), lambda t: t[1], lambda t: t[:, 2:5],
              lambda t: t.reshape(-1), lambda t: t.t().reshape(-1), lambda t: t.unsqueeze(0),
              lambda t: t.permute(1, 0).contiguous(), lambda t: t.clone(),
              lambda t: t.flatten(), lambda t: t.detach()):
        got, want = f(q), f(tq)
        _same_q(got, want)
        assert got.q_scale() == want.q_scale() and got.q_zero_point() == want.q_zero_point()
    assert q.t()._base is q          # a view shares the integers
    for got, want in zip(q.unbind(0), tq.unbind(0)):
        _same_q(got, want)


def test_unsupported_ops_raise_like_torch():
    a = _data((4, 6))
    q = ember.quantize_per_tensor(ember.from_numpy(a), 0.05, 7, ember.quint8)
    tq = torch.quantize_per_tensor(torch.from_numpy(a), 0.05, 7, torch.quint8)
    x, tx = ember.from_numpy(a), torch.from_numpy(a)
    for f in (lambda t, m: t + t, lambda t, m: t.sum(), lambda t, m: t.exp()):
        with pytest.raises(NotImplementedError) as te:
            f(tq, torch)
        with pytest.raises(NotImplementedError) as ee:
            f(q, ember)
        assert "QuantizedCPU" in str(te.value) and "QuantizedCPU" in str(ee.value)
    with pytest.raises(NotImplementedError, match="QuantizedCPU"):
        x + q
    for f, err in ((lambda t, m: t.numpy(), TypeError),
                   (lambda t, m: t.requires_grad_(), RuntimeError),
                   (lambda t, m: t.float(), RuntimeError),
                   (lambda t, m: t.q_per_channel_scales(), RuntimeError),
                   (lambda t, m: m.quantize_per_tensor(t.dequantize().double(), 0.1, 0,
                                                       m.qint8), RuntimeError),
                   (lambda t, m: m.quantize_per_tensor(t.dequantize(), 0.1, 0, m.int8),
                    RuntimeError)):
        with pytest.raises(err):
            f(tq, torch)
        with pytest.raises(err):
            f(q, ember)
    with pytest.raises(RuntimeError, match="Double"):
        ember.quantize_per_tensor(x.double(), 0.1, 0, ember.qint8)
    with pytest.raises(RuntimeError, match="Char"):
        ember.quantize_per_tensor(x, 0.1, 0, ember.int8)
    s, z = ember.tensor([0.1] * 6), ember.tensor([0] * 6)
    with pytest.raises(RuntimeError, match="axis out of range") as te:
        torch.quantize_per_channel(tx, torch.tensor([0.1] * 6), torch.tensor([0] * 6), -1,
                                   torch.qint8)
    with pytest.raises(RuntimeError) as ee:
        ember.quantize_per_channel(x, s, z, -1, ember.qint8)
    assert str(ee.value) == str(te.value)


def test_dequantize_functions_and_lists():
    a = _data((3, 4))
    qs = ember.quantize_per_tensor([ember.from_numpy(a), ember.from_numpy(-a)],
                                   ember.tensor([0.1, 0.2]), ember.tensor([1, 2]), ember.qint8)
    tqs = torch.quantize_per_tensor([torch.from_numpy(a), torch.from_numpy(-a)],
                                    torch.tensor([0.1, 0.2]), torch.tensor([1, 2]), torch.qint8)
    for q, tq in zip(ember.dequantize(qs), torch.dequantize(tqs)):
        np.testing.assert_array_equal(q.numpy(), tq.numpy())
    assert ember.dequantize(qs[0]).dtype == ember.float32


def test_save_load_round_trip():
    a = _data((3, 4))
    q = ember.quantize_per_tensor(ember.from_numpy(a), 0.05, 7, ember.quint8)
    qc = ember.quantize_per_channel(ember.from_numpy(a), ember.tensor([0.1, 0.2, 0.3]),
                                    ember.tensor([0, 1, 2]), 0, ember.qint8)
    buf = io.BytesIO()
    ember.save({"q": q, "qc": qc}, buf)
    buf.seek(0)
    back = ember.load(buf)
    for k, v in (("q", q), ("qc", qc)):
        got = back[k]
        assert got.is_quantized and got.dtype == v.dtype and got.qscheme() == v.qscheme()
        np.testing.assert_array_equal(got.int_repr().numpy(), v.int_repr().numpy())
        np.testing.assert_array_equal(got.dequantize().numpy(), v.dequantize().numpy())


def test_checkpoints_interoperate_with_torch(tmp_path):
    a = _data((3, 4))
    q = ember.quantize_per_channel(ember.from_numpy(a), ember.tensor([0.1, 0.2, 0.3]),
                                   ember.tensor([0, 1, 2]), 0, ember.qint8)
    ember.save(q, tmp_path / "e.pt")
    tq = torch.load(tmp_path / "e.pt")
    _same_q(q, tq)
    tq2 = torch.quantize_per_tensor(torch.from_numpy(a), 0.1, 3, torch.qint32)
    torch.save(tq2, tmp_path / "t.pt")
    _same_q(ember.load(tmp_path / "t.pt"), tq2)


def test_dense_tensors_answer_as_torch():
    x, tx = ember.from_numpy(_data((4, 6))), torch.from_numpy(_data((4, 6)))
    assert x.dequantize() is x and tx.dequantize() is tx
    assert not x.is_quantized
    for name in ("int_repr", "q_scale", "q_zero_point", "q_per_channel_scales",
                 "q_per_channel_zero_points", "q_per_channel_axis", "qscheme"):
        with pytest.raises(NotImplementedError, match=f"aten::{name}' with arguments from the "
                                                      "'CPU' backend"):
            getattr(tx, name)()
        with pytest.raises(NotImplementedError, match=f"aten::{name}' with arguments from the "
                                                      "'CPU' backend"):
            getattr(x, name)()


@pytest.mark.parametrize("shape,out", [((2, 3, 7, 9), (3, 4)), ((1, 2, 8, 8), (1, 1)),
                                       ((1, 2, 5, 5), (2, 3))])
def test_pooling_and_relu_in_the_integers(shape, out):
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32) * 2
    q = ember.quantize_per_tensor(ember.from_numpy(a), 0.05, 100, ember.quint8)
    tq = torch.quantize_per_tensor(torch.from_numpy(a), 0.05, 100, torch.quint8)
    F, TF = ember.nn.functional, torch.nn.functional
    _same_q(F.adaptive_avg_pool2d(q, out), TF.adaptive_avg_pool2d(tq, out))
    _same_q(ember.nn.MaxPool2d(2)(q), torch.nn.MaxPool2d(2)(tq))
    _same_q(ember.nn.ReLU()(q), torch.nn.ReLU()(tq))
    got = F.adaptive_avg_pool2d(q, out)
    assert got.q_scale() == q.q_scale() and got.q_zero_point() == q.q_zero_point()
