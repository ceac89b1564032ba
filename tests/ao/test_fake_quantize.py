"""FakeQuantize modules vs torch.ao.quantization.fake_quantize: forward, grads, qparams."""
import numpy as np
import pytest
import torch
import torch.ao.quantization.fake_quantize as TF

import ember
import ember.ao.quantization.fake_quantize as EF

DEFAULTS = ["default_fake_quant", "default_weight_fake_quant",
            "default_per_channel_weight_fake_quant", "default_fused_act_fake_quant",
            "default_fused_wt_fake_quant", "default_fused_per_channel_wt_fake_quant",
            "default_histogram_fake_quant", "fused_wt_fake_quant_range_neg_127_to_127"]


def _batches(shape=(6, 4, 3), n=3):
    rng = np.random.default_rng(11)
    return [(rng.standard_normal(shape) * (1 + i) + 0.3 * i).astype(np.float32)
            for i in range(n)]


def _step(t_fq, e_fq, a):
    xt = torch.from_numpy(a.copy()).requires_grad_()
    xe = ember.from_numpy(a.copy()).requires_grad_()
    yt, ye = t_fq(xt), e_fq(xe)
    g = np.linspace(-1, 1, a.size, dtype=np.float32).reshape(a.shape)
    yt.backward(torch.from_numpy(g))
    ye.backward(ember.from_numpy(g.copy()))
    np.testing.assert_array_equal(ye.detach().numpy(), yt.detach().numpy())
    np.testing.assert_array_equal(xe.grad.numpy(), xt.grad.numpy())


@pytest.mark.parametrize("name", DEFAULTS)
def test_default_fake_quants_match_torch(name):
    t_fq, e_fq = getattr(TF, name)(), getattr(EF, name)()
    assert type(e_fq).__name__ == type(t_fq).__name__
    for a in _batches():
        _step(t_fq, e_fq, a)
    np.testing.assert_array_equal(e_fq.scale.numpy(), t_fq.scale.numpy())
    np.testing.assert_array_equal(e_fq.zero_point.numpy(), t_fq.zero_point.numpy())
    assert list(e_fq.state_dict()) == list(t_fq.state_dict())


def test_enable_disable_switches():
    t_fq, e_fq = TF.default_fake_quant(), EF.default_fake_quant()
    a, b, c = _batches()
    _step(t_fq, e_fq, a)
    for f in ("disable_observer", "disable_fake_quant"):
        t_fq.apply(getattr(TF, f))
        e_fq.apply(getattr(EF, f))
    _step(t_fq, e_fq, b)   # identity, qparams frozen
    assert e_fq.fake_quant_enabled.tolist() == [0]
    e_fq.apply(EF.enable_fake_quant)
    t_fq.apply(TF.enable_fake_quant)
    _step(t_fq, e_fq, c * 3)   # frozen qparams clip the wider batch
    np.testing.assert_array_equal(e_fq.scale.numpy(), t_fq.scale.numpy())
    e_fq.apply(EF.enable_observer)
    t_fq.apply(TF.enable_observer)
    _step(t_fq, e_fq, c * 3)
    np.testing.assert_array_equal(e_fq.scale.numpy(), t_fq.scale.numpy())


def test_per_channel_state_dict_loads_into_fresh_module():
    e_fq = EF.default_per_channel_weight_fake_quant()
    e_fq(ember.randn(5, 3))
    fresh = EF.default_per_channel_weight_fake_quant()
    fresh.load_state_dict(e_fq.state_dict())
    assert fresh.scale.shape == (5,)
    np.testing.assert_array_equal(fresh.scale.numpy(), e_fq.scale.numpy())


def test_fixed_qparams_fake_quant():
    t_fq = TF.default_fixed_qparams_range_0to1_fake_quant()
    e_fq = EF.default_fixed_qparams_range_0to1_fake_quant()
    a = np.random.default_rng(0).uniform(-0.5, 1.5, (4, 7)).astype(np.float32)
    _step(t_fq, e_fq, a)


def test_bad_ranges_raise():
    with pytest.raises(AssertionError, match="quant_min must be less"):
        EF.FakeQuantize(quant_min=5, quant_max=1)
    with pytest.raises(AssertionError, match="out of bound"):
        EF.FakeQuantize(quant_min=-1, quant_max=255, dtype=ember.quint8)
