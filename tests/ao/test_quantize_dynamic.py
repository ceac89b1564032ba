"""quantize_dynamic against PyTorch's from the same weights: the same int8 weights, outputs
within a float rounding of torch's (the same input quantization and int32 sums), print(model),
state_dict keys, loading torch's quantized checkpoint; QConfig helpers and errors."""
import io

import numpy as np
import pytest

import ember
from ember.ao import quantization as eq

torch = pytest.importorskip("torch")
tq = torch.ao.quantization
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning",
                                        "ignore:.*quantized tensor creation functions")


def _mlp():
    torch.manual_seed(0)
    t = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))
    e = ember.nn.Sequential(ember.nn.Linear(16, 32), ember.nn.ReLU(), ember.nn.Linear(32, 10))
    _copy(t, e)
    return t, e


def _copy(t, e):
    e.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy())
                       for k, v in t.state_dict().items()})


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * 2


def _close(a, b):
    """Equal up to float32 rounding of the final scale-and-bias step."""
    a = a.detach().numpy() if hasattr(a, "detach") else a
    b = b.detach().numpy()
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=0, atol=4 * np.finfo(np.float32).eps
                               * max(1.0, float(np.abs(b).max(initial=0))))


@pytest.mark.parametrize("config", [None, "per_channel_dynamic_qconfig",
                                    "float16_dynamic_qconfig"])
def test_mlp_matches_torch(config):
    t, e = _mlp()
    if config is None:
        qt = tq.quantize_dynamic(t, {torch.nn.Linear}, dtype=torch.qint8)
        qe = eq.quantize_dynamic(e, {ember.nn.Linear}, dtype=ember.qint8)
    else:
        qt = tq.quantize_dynamic(t, {torch.nn.Linear: getattr(tq, config)})
        qe = eq.quantize_dynamic(e, {ember.nn.Linear: getattr(eq, config)})
    assert str(qe) == str(qt)
    for i in (0, 2):
        wt, we = qt[i].weight(), qe[i].weight()
        if config != "float16_dynamic_qconfig":
            np.testing.assert_array_equal(we.int_repr().numpy(), wt.int_repr().numpy())
            assert repr(we.qscheme()) == repr(wt.qscheme())
    for x in (_x(64, 16), _x(3, 5, 16, seed=1), _x(1, 16) * 0, _x(0, 16)):
        _close(qe(ember.from_numpy(x)), qt(torch.from_numpy(x)))
    assert type(e[0]) is ember.nn.Linear         # inplace=False left the float model alone


def test_state_dict_keys_and_torch_checkpoint(tmp_path):
    t, e = _mlp()
    qt = tq.quantize_dynamic(t, {torch.nn.Linear}, dtype=torch.qint8)
    qe = eq.quantize_dynamic(ember.nn.Sequential(ember.nn.Linear(16, 32), ember.nn.ReLU(),
                                                 ember.nn.Linear(32, 10)),
                             {ember.nn.Linear}, dtype=ember.qint8)
    assert list(qe.state_dict()) == list(qt.state_dict())
    torch.save(qt.state_dict(), tmp_path / "q.pt")
    qe.load_state_dict(ember.load(tmp_path / "q.pt"))
    x = _x(8, 16)
    _close(qe(ember.from_numpy(x)), qt(torch.from_numpy(x)))
    ember.save(qe.state_dict(), tmp_path / "e.pt")
    qt2 = tq.quantize_dynamic(torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                                                  torch.nn.Linear(32, 10)), {torch.nn.Linear})
    qt2.load_state_dict(torch.load(tmp_path / "e.pt", weights_only=False))
    _close(qe(ember.from_numpy(x)), qt2(torch.from_numpy(x)))


@pytest.mark.parametrize("kw", [dict(num_layers=2), dict(batch_first=True, bidirectional=True)])
def test_lstm_matches_torch(kw):
    torch.manual_seed(1)
    t = torch.nn.LSTM(8, 12, **kw)
    e = ember.nn.LSTM(8, 12, **kw)
    _copy(t, e)
    qt = tq.quantize_dynamic(torch.nn.Sequential(t), {torch.nn.LSTM}, dtype=torch.qint8)[0]
    qe = eq.quantize_dynamic(ember.nn.Sequential(e), {ember.nn.LSTM}, dtype=ember.qint8)[0]
    assert str(qe) == str(qt)
    x = _x(5, 3, 8)
    batch = 5 if kw.get("batch_first") else 3
    h0 = (_x(len(qe._cells), batch, 12, seed=2) * 0.1,
          _x(len(qe._cells), batch, 12, seed=3) * 0.1)
    eo, (eh, ec) = qe(ember.from_numpy(x), tuple(ember.from_numpy(h) for h in h0))
    to, (th, tc) = qt(torch.from_numpy(x), tuple(torch.from_numpy(h) for h in h0))
    for a, b in ((eo, to), (eh, th), (ec, tc)):
        assert tuple(a.shape) == tuple(b.shape)
        _close(a, b)
    _close(qe(ember.from_numpy(x))[0], qt(torch.from_numpy(x))[0])      # hx=None: zeros
    with pytest.raises(RuntimeError, match="3 dimensions"):
        qt(torch.from_numpy(x[:, 0]))
    with pytest.raises(RuntimeError, match="3 dimensions"):
        qe(ember.from_numpy(x[:, 0]))


def test_default_spec_names_and_qconfigs():
    t, e = _mlp()
    qe = eq.quantize_dynamic(e)                  # default: Linear and LSTM
    assert qe[0]._get_name() == "DynamicQuantizedLinear"
    qe = eq.quantize_dynamic(e, {"2": eq.default_dynamic_qconfig})   # by qualified name
    assert type(qe[0]) is ember.nn.Linear and qe[2]._get_name() == "DynamicQuantizedLinear"
    for backend in ("x86", "fbgemm", "qnnpack", "onednn"):
        got, want = eq.get_default_qconfig(backend), tq.get_default_qconfig(backend)
        assert got.activation().reduce_range == want.activation().reduce_range
        assert repr(got.weight().qscheme) == repr(want.weight().qscheme)
    with pytest.raises(AssertionError, match="not supported"):
        eq.get_default_qconfig("tpu")
    with pytest.raises(ValueError, match="observer instance"):
        eq.QConfig(activation=eq.MinMaxObserver(), weight=eq.default_weight_observer)
    with pytest.raises(ValueError, match="default settings"):
        eq.quantize_dynamic(e, dtype=ember.int8)
    with pytest.raises(RuntimeError, match="Unknown dtype"):
        eq.quantize_dynamic(e, {ember.nn.Linear}, dtype=ember.int8)


def test_legacy_import_paths():
    import ember.quantization
    import ember.nn.quantized
    import ember.nn.quantized.dynamic
    import ember.ao.nn.quantized.dynamic as nnqd
    assert ember.quantization.quantize_dynamic is eq.quantize_dynamic
    assert ember.nn.quantized.dynamic.Linear is nnqd.Linear
    assert ember.nn.quantized.Quantize is ember.ao.nn.quantized.Quantize


def _static_quantize(tm, em, backend, cal):
    """Eager post-training quantization of the torch / ember twins: the backend's default
    qconfig, prepare, one calibration batch `cal`, convert."""
    tm.qconfig, em.qconfig = tq.get_default_qconfig(backend), eq.get_default_qconfig(backend)
    tp, ep = tq.prepare(tm), eq.prepare(em)
    tp(torch.from_numpy(cal))
    ep(ember.from_numpy(cal))
    return tq.convert(tp), eq.convert(ep)


def _static_model(m, ao):
    class M(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.quant, self.dequant = ao.quantization.QuantStub(), ao.quantization.DeQuantStub()
            self.fc1, self.relu, self.fc2 = m.nn.Linear(16, 32), m.nn.ReLU(), m.nn.Linear(32, 8)

        def forward(self, x):
            return self.dequant(self.fc2(self.relu(self.fc1(self.quant(x)))))
    return M()


@pytest.mark.parametrize("backend", ["x86", "qnnpack"])
def test_static_prepare_convert_matches_torch(backend):
    """QuantStub -> Linear -> ReLU -> Linear -> DeQuantStub: the same observed qparams,
    the same quantized integers, print(model) as torch's."""
    torch.manual_seed(0)
    tm, em = _static_model(torch, torch.ao), _static_model(ember, ember.ao)
    _copy(tm, em)
    tc, ec = _static_quantize(tm, em, backend, _x(256, 16))
    assert str(ec) == str(tc)
    assert not hasattr(ec.fc1, "qconfig") and type(em.fc1) is ember.nn.Linear
    x = _x(64, 16, seed=1)
    got, want = ec(ember.from_numpy(x)), tc(torch.from_numpy(x))
    step = tc.fc2.scale
    assert np.abs(got.numpy() - want.numpy()).max() <= step * 1.0001     # at most 1 step
    q = ec.fc1(ec.quant(ember.from_numpy(x)))
    assert q.is_quantized and q.q_scale() == tc.fc1.scale
    with pytest.raises(NotImplementedError, match="quantized input"):
        ec.fc1(ember.from_numpy(x))


def test_qconfig_mapping():
    def build(ao):
        Q = ao.quantization
        return (Q.QConfigMapping().set_global(None).set_object_type("reshape", None)
                .set_module_name_regex("fc.*", None).set_module_name("fc1", None)
                .set_module_name_object_type_order("", "add", 0, None))
    got, want = build(ember.ao), build(torch.ao)
    assert repr(got) == repr(want) and got.to_dict() == want.to_dict()
    back = eq.QConfigMapping.from_dict(got.to_dict())
    assert back.to_dict() == got.to_dict()
    m = eq.get_default_qconfig_mapping("qnnpack")
    assert m.global_qconfig.weight().qscheme == ember.per_tensor_symmetric


def _cnn(m, ao):
    class M(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.quant, self.dequant = ao.quantization.QuantStub(), ao.quantization.DeQuantStub()
            self.conv, self.bn, self.relu = m.nn.Conv2d(3, 8, 3, padding=1), \
                m.nn.BatchNorm2d(8), m.nn.ReLU()
            self.conv2, self.r2 = m.nn.Conv2d(8, 4, 3, stride=2), m.nn.ReLU()
            self.fc, self.r3, self.fc2 = m.nn.Linear(36, 10), m.nn.ReLU(), m.nn.Linear(10, 5)

        def forward(self, x):
            x = self.r2(self.conv2(self.relu(self.bn(self.conv(self.quant(x))))))
            return self.dequant(self.fc2(self.r3(self.fc(x.flatten(1)))))
    return M()


def _without_scales(text):
    import re
    return re.sub(r"scale=[0-9.e-]+", "scale=?", text)


def test_fuse_modules_and_static_cnn_match_torch():
    """fuse_modules (Conv+BN+ReLU folded, Conv+ReLU, Linear+ReLU), then prepare/calibrate/
    convert with the x86 qconfig: QuantizedConvReLU2d/LinearReLU, outputs as torch's."""
    torch.manual_seed(0)
    tm, em = _cnn(torch, torch.ao), _cnn(ember, ember.ao)
    with torch.no_grad():
        tm.bn.running_mean.uniform_(-0.5, 0.5)
        tm.bn.running_var.uniform_(0.5, 2)
    _copy(tm, em)
    tm.eval()
    em.eval()
    groups = [["conv", "bn", "relu"], ["conv2", "r2"], ["fc", "r3"]]
    tf, ef = tq.fuse_modules(tm, groups), eq.fuse_modules(em, groups)
    assert str(ef) == str(tf)
    x = _x(4, 3, 8, 8)
    _close(ef(ember.from_numpy(x)), tf(torch.from_numpy(x)))
    tc, ec = _static_quantize(tf, ef, "x86", _x(32, 3, 8, 8, seed=1))
    # the histogram observers see float convs that differ in the last bit: scales may too
    assert _without_scales(str(ec)) == _without_scales(str(tc))
    assert abs(ec.conv.scale / tc.conv.scale - 1) < 1e-6
    got, want = ec(ember.from_numpy(x)).numpy(), tc(torch.from_numpy(x)).numpy()
    assert np.abs(got - want).max() <= tc.fc2.scale * 1.0001
    # torch's quantized checkpoint loads into ember's converted model: torch's exact outputs
    assert list(ec.state_dict()) == list(tc.state_dict())
    buf = io.BytesIO()
    torch.save(tc.state_dict(), buf)
    buf.seek(0)
    ec.load_state_dict(ember.load(buf))
    np.testing.assert_array_equal(ec(ember.from_numpy(x)).numpy(), want)
    with pytest.raises(NotImplementedError, match="eval"):
        eq.fuse_modules(_cnn(ember, ember.ao).train(), [["conv", "bn"]])


def _functional_model(m, ao):
    class M(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.quant, self.dequant = ao.quantization.QuantStub(), ao.quantization.DeQuantStub()
            self.fc1, self.fc2 = m.nn.Linear(16, 16), m.nn.Linear(16, 16)
            FF = ao.nn.quantized.FloatFunctional
            self.ff, self.ff2, self.ff3 = FF(), FF(), FF()

        def forward(self, x):
            x = self.quant(x)
            y = self.ff.add_relu(self.fc1(x), x)
            z = self.ff2.mul(self.fc2(y), y)
            return self.dequant(self.ff3.cat([z, y], 1))
    return M()


def test_float_functional_converts_to_qfunctional_as_torch():
    torch.manual_seed(0)
    tm, em = _functional_model(torch, torch.ao), _functional_model(ember, ember.ao)
    _copy(tm, em)
    tc, ec = _static_quantize(tm, em, "qnnpack", _x(64, 16, seed=1))
    assert str(ec) == str(tc)
    x = _x(8, 16)
    got, want = ec(ember.from_numpy(x)).numpy(), tc(torch.from_numpy(x)).numpy()
    assert np.abs(got - want).max() <= tc.ff3.scale * 1.0001
    with pytest.raises(RuntimeError, match="not intended"):
        ec.ff(ember.from_numpy(x))


def _residual_block(m, ao):
    class Block(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.quant, self.dequant = ao.quantization.QuantStub(), ao.quantization.DeQuantStub()
            self.stem, self.bn0, self.r0 = m.nn.Conv2d(3, 8, 3, padding=1), \
                m.nn.BatchNorm2d(8), m.nn.ReLU()
            self.pool = m.nn.MaxPool2d(2)
            self.c1, self.bn1, self.r1 = m.nn.Conv2d(8, 8, 3, padding=1), \
                m.nn.BatchNorm2d(8), m.nn.ReLU()
            self.c2, self.bn2 = m.nn.Conv2d(8, 8, 3, padding=1), m.nn.BatchNorm2d(8)
            self.skip = ao.nn.quantized.FloatFunctional()
            self.avg, self.fc = m.nn.AdaptiveAvgPool2d((1, 1)), m.nn.Linear(8, 4)

        def forward(self, x):
            x = self.pool(self.r0(self.bn0(self.stem(self.quant(x)))))
            y = self.bn2(self.c2(self.r1(self.bn1(self.c1(x)))))
            x = self.skip.add_relu(y, x)
            return self.dequant(self.fc(self.avg(x).flatten(1)))
    return Block()


def test_residual_block_eager_static_matches_torch():
    """A ResNet-style block (fused conv-bn-relu, max pool, residual add_relu, adaptive
    average pool, linear) through fuse/prepare/calibrate/convert: torch's outputs."""
    torch.manual_seed(0)
    tm, em = _residual_block(torch, torch.ao), _residual_block(ember, ember.ao)
    with torch.no_grad():
        for bn in (tm.bn0, tm.bn1, tm.bn2):
            bn.running_mean.uniform_(-0.3, 0.3)
            bn.running_var.uniform_(0.5, 2.0)
    _copy(tm, em)
    tm.eval()
    em.eval()
    groups = [["stem", "bn0", "r0"], ["c1", "bn1", "r1"], ["c2", "bn2"]]
    tf, ef = tq.fuse_modules(tm, groups), eq.fuse_modules(em, groups)
    tc, ec = _static_quantize(tf, ef, "x86", _x(16, 3, 16, 16, seed=1))
    assert _without_scales(str(ec)) == _without_scales(str(tc))
    x = _x(4, 3, 16, 16, seed=2)
    got, want = ec(ember.from_numpy(x)).numpy(), tc(torch.from_numpy(x)).numpy()
    assert np.abs(got - want).max() <= tc.fc.scale * 1.0001


def test_legacy_submodule_paths():
    from ember.quantization.qconfig import get_default_qconfig
    from ember.quantization.quantize import quantize_dynamic
    from ember.quantization.stubs import QuantStub
    from ember.quantization.fuse_modules import fuse_modules
    import ember.nn.intrinsic.quantized as nniq
    assert get_default_qconfig is eq.get_default_qconfig and QuantStub is eq.QuantStub
    assert quantize_dynamic is eq.quantize_dynamic and fuse_modules is eq.fuse_modules
    assert nniq.ConvReLU2d is ember.ao.nn.intrinsic.quantized.ConvReLU2d


@pytest.mark.parametrize("kw", [dict(num_layers=2), dict(batch_first=True, bidirectional=True)])
def test_gru_matches_torch(kw):
    torch.manual_seed(2)
    t, e = torch.nn.GRU(8, 12, **kw), ember.nn.GRU(8, 12, **kw)
    _copy(t, e)
    qt = tq.quantize_dynamic(torch.nn.Sequential(t), {torch.nn.GRU}, dtype=torch.qint8)[0]
    qe = eq.quantize_dynamic(ember.nn.Sequential(e), {ember.nn.GRU}, dtype=ember.qint8)[0]
    assert str(qe) == str(qt)
    x = _x(5, 3, 8)
    batch = 5 if kw.get("batch_first") else 3
    h0 = _x(len(qe._cells), batch, 12, seed=2) * 0.1
    eo, eh = qe(ember.from_numpy(x), ember.from_numpy(h0))
    to, th = qt(torch.from_numpy(x), torch.from_numpy(h0))
    _close(eo, to)
    _close(eh, th)
    _close(qe(ember.from_numpy(x))[0], qt(torch.from_numpy(x))[0])
