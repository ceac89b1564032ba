"""Observers vs torch.ao.quantization.observer: the same qparams, bit for bit."""
import warnings

import numpy as np
import pytest
import torch
import torch.ao.quantization.observer as TO

import ember
import ember.ao.quantization.observer as EO

# (name, dtype, qscheme) spelled once for both libraries
SCHEMES = [("quint8", "per_tensor_affine"), ("qint8", "per_tensor_symmetric"),
           ("qint8", "per_tensor_affine"), ("quint8", "per_tensor_symmetric"),
           ("int8", "per_tensor_affine"), ("uint8", "per_tensor_symmetric")]
CH_SCHEMES = [("qint8", "per_channel_symmetric"), ("quint8", "per_channel_affine"),
              ("quint8", "per_channel_affine_float_qparams")]


def _data(kind, shape=(4, 5, 6)):
    rng = np.random.default_rng(3)
    if kind == "normal":
        return rng.standard_normal(shape).astype(np.float32) * 3
    if kind == "constant":
        return np.full(shape, 1.5, np.float32)
    if kind == "negative":
        return -np.abs(rng.standard_normal(shape)).astype(np.float32) - 0.5
    if kind == "zero_d":
        return np.array(2.25, np.float32)
    if kind == "empty":
        return np.zeros((0, 3), np.float32)
    if kind == "noncontig":
        return rng.standard_normal((6, 8)).astype(np.float32)[:, ::2]
    raise ValueError(kind)


def _pair(cls_name, dtype, qscheme, **kw):
    t = getattr(TO, cls_name)(dtype=getattr(torch, dtype), qscheme=getattr(torch, qscheme),
                              **kw)
    e = getattr(EO, cls_name)(dtype=getattr(ember, dtype), qscheme=getattr(ember, qscheme),
                              **kw)
    return t, e


def _same_qparams(t_obs, e_obs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ts, tz = t_obs.calculate_qparams()
        es, ez = e_obs.calculate_qparams()
    assert str(ez.dtype).split(".")[-1] == str(tz.dtype).split(".")[-1]
    assert str(es.dtype).split(".")[-1] == str(ts.dtype).split(".")[-1]
    np.testing.assert_array_equal(es.numpy(), ts.numpy())
    np.testing.assert_array_equal(ez.numpy(), tz.numpy())


def _feed(t_obs, e_obs, arrays):
    for a in arrays:
        a = np.asarray(a, np.float32)
        out_t = t_obs(torch.from_numpy(np.array(a)))
        xe = ember.tensor(a) if a.ndim == 0 else ember.from_numpy(a)
        out_e = e_obs(xe)
        assert out_e is xe
        assert out_t.shape == tuple(out_e.shape)


@pytest.mark.parametrize("dtype,qscheme", SCHEMES)
@pytest.mark.parametrize("kind", ["normal", "constant", "negative", "zero_d", "empty",
                                  "noncontig"])
@pytest.mark.parametrize("cls", ["MinMaxObserver", "MovingAverageMinMaxObserver"])
def test_per_tensor_observers_match_torch(cls, kind, dtype, qscheme):
    t, e = _pair(cls, dtype, qscheme)
    _feed(t, e, [_data(kind), _data(kind) * 0.5 + 0.25])
    np.testing.assert_array_equal(e.min_val.numpy(), t.min_val.numpy())
    np.testing.assert_array_equal(e.max_val.numpy(), t.max_val.numpy())
    _same_qparams(t, e)


@pytest.mark.parametrize("kw", [dict(reduce_range=True), dict(quant_min=0, quant_max=127),
                                dict(quant_min=-127, quant_max=127, eps=2 ** -12)])
def test_ranges_and_eps_match_torch(kw):
    dtype = "quint8" if kw.get("quant_min", -1) == 0 or "reduce_range" in kw else "qint8"
    qscheme = "per_tensor_affine" if dtype == "quint8" else "per_tensor_symmetric"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t, e = _pair("MinMaxObserver", dtype, qscheme, **kw)
    assert (e.quant_min, e.quant_max) == (t.quant_min, t.quant_max)
    _feed(t, e, [_data("normal") * 1e-4])
    _same_qparams(t, e)


@pytest.mark.parametrize("dtype,qscheme", CH_SCHEMES)
@pytest.mark.parametrize("ch_axis", [0, 1, -1])
@pytest.mark.parametrize("cls", ["PerChannelMinMaxObserver",
                                 "MovingAveragePerChannelMinMaxObserver"])
def test_per_channel_observers_match_torch(cls, ch_axis, dtype, qscheme):
    t, e = _pair(cls, dtype, qscheme, ch_axis=ch_axis)
    _feed(t, e, [_data("normal"), _data("negative"), _data("constant")])
    np.testing.assert_array_equal(e.min_val.numpy(), t.min_val.numpy())
    _same_qparams(t, e)


def test_unobserved_returns_defaults_with_warning():
    for cls in ["MinMaxObserver", "PerChannelMinMaxObserver", "HistogramObserver"]:
        qs = "per_channel_affine" if "Channel" in cls else "per_tensor_affine"
        t, e = _pair(cls, "quint8", qs)
        with pytest.warns(UserWarning, match="must run observer"):
            es, ez = e.calculate_qparams()
        ts, tz = t.calculate_qparams()
        assert es.tolist() == ts.tolist() and ez.tolist() == tz.tolist()


@pytest.mark.parametrize("dist", ["normal", "outliers", "uniform", "relu"])
@pytest.mark.parametrize("dtype,qscheme", [("quint8", "per_tensor_affine"),
                                           ("qint8", "per_tensor_symmetric")])
def test_histogram_observer_matches_torch(dist, dtype, qscheme):
    rng = np.random.default_rng(7)
    batches = []
    for i in range(3):
        if dist == "normal":
            a = rng.standard_normal(2000) * (1 + i)
        elif dist == "outliers":
            a = np.concatenate([rng.standard_normal(2000), [40.0 * (i + 1), -25.0]])
        elif dist == "uniform":
            a = rng.uniform(-1 - i, 2 + i, 1500)
        else:
            a = np.maximum(rng.standard_normal(1800) + i * 0.3, 0)
        batches.append(a.astype(np.float32))
    t, e = _pair("HistogramObserver", dtype, qscheme, bins=256)
    _feed(t, e, batches)
    np.testing.assert_allclose(e.histogram.numpy(), t.histogram.numpy(), rtol=1e-5,
                               atol=1e-3)
    np.testing.assert_array_equal(e.min_val.numpy(), t.min_val.numpy())
    np.testing.assert_array_equal(e.max_val.numpy(), t.max_val.numpy())
    _same_qparams(t, e)


def test_state_dict_round_trip_and_torch_keys():
    t, e = _pair("PerChannelMinMaxObserver", "qint8", "per_channel_symmetric")
    _feed(t, e, [_data("normal")])
    assert list(e.state_dict()) == list(t.state_dict())
    fresh = EO.PerChannelMinMaxObserver(dtype=ember.qint8,
                                        qscheme=ember.per_channel_symmetric)
    fresh.load_state_dict(e.state_dict())
    np.testing.assert_array_equal(fresh.min_val.numpy(), e.min_val.numpy())
    _same_qparams(t, fresh)


def test_with_args_and_defaults():
    ctor = EO.MinMaxObserver.with_args(dtype=ember.qint8).with_args(quant_min=-5,
                                                                      quant_max=5)
    obs = ctor()
    assert (obs.quant_min, obs.quant_max, obs.dtype) == (-5, 5, ember.qint8)
    for name in ["default_observer", "default_weight_observer",
                 "default_per_channel_weight_observer", "default_histogram_observer",
                 "weight_observer_range_neg_127_to_127"]:
        ours, theirs = getattr(EO, name)(), getattr(TO, name)()
        assert type(ours).__name__ == type(theirs).__name__
        assert (ours.quant_min, ours.quant_max) == (theirs.quant_min, theirs.quant_max)
        assert str(ours.qscheme) == str(theirs.qscheme)


def test_bad_arguments_raise_like_torch():
    with pytest.raises(NotImplementedError, match="per_tensor"):
        EO.MinMaxObserver(qscheme=ember.per_channel_affine)
    with pytest.raises(NotImplementedError, match="per_channel"):
        EO.PerChannelMinMaxObserver(qscheme=ember.per_tensor_affine)
    with pytest.raises(AssertionError, match="include 0"):
        EO.MinMaxObserver(quant_min=1, quant_max=10)
    with pytest.raises(AssertionError):
        EO.MinMaxObserver(dtype=ember.float32)


def test_minmax_forward_captures_without_graph_break():
    obs = EO.MovingAverageMinMaxObserver()
    compiled = ember.compile(obs, fullgraph=True)
    x = ember.randn(8, 3)
    compiled(x)
    compiled(x * 2)
    ref = EO.MovingAverageMinMaxObserver()
    ref(x)
    ref(x * 2)
    assert float(obs.min_val) == float(ref.min_val)
    assert float(obs.max_val) == float(ref.max_val)


def test_placeholder_noop_recording():
    p = EO.PlaceholderObserver(dtype=ember.float16)
    x = ember.randn(3)
    assert p(x) is x
    with pytest.raises(Exception, match="should not be called"):
        p.calculate_qparams()
    r = EO.RecordingObserver()
    r(x)
    assert len(r.get_tensor_value()) == 1
    assert EO.NoopObserver()(x) is x


def test_observer_state_dict_save_and_load_on_a_prepared_model():
    from ember._export import capture_pre_autograd_graph
    from ember.ao.quantization import prepare_pt2e
    from ember.ao.quantization.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer, get_symmetric_quantization_config)
    model = ember.nn.Sequential(ember.nn.Linear(4, 3), ember.nn.ReLU()).eval()
    x = ember.randn(5, 4)

    def prepared():
        q = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(
            is_per_channel=True))
        return prepare_pt2e(capture_pre_autograd_graph(model, (x,)), q)

    a, b = prepared(), prepared()
    a(x)
    saved = EO.get_observer_state_dict(a)
    assert saved and all("activation_post_process" in k for k in saved)
    EO.load_observer_state_dict(b, saved)
    loaded = EO.get_observer_state_dict(b)
    assert list(loaded) == list(saved)
    for k in saved:
        np.testing.assert_array_equal(loaded[k].numpy(), saved[k].numpy())


@pytest.mark.parametrize("cls", ["MinMaxObserver", "MovingAverageMinMaxObserver",
                                 "PerChannelMinMaxObserver",
                                 "MovingAveragePerChannelMinMaxObserver", "HistogramObserver",
                                 "FixedQParamsObserver", "PlaceholderObserver", "NoopObserver",
                                 "RecordingObserver"])
def test_constructor_signature_matches_torch(cls):
    import inspect
    ours = inspect.signature(getattr(EO, cls)).parameters
    theirs = inspect.signature(getattr(TO, cls)).parameters
    assert list(ours) == list(theirs)
    assert [str(p.default) for p in ours.values()] == [str(p.default) for p in theirs.values()]
