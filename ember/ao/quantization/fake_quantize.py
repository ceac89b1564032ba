"""FakeQuantize modules: observe, then quantize-dequantize in float (QAT).

Why: quantization-aware training (eager QAT and pt2e's prepare_qat_pt2e) trains
through the rounding error int8 inference will see. The rounding itself is the
registry ops `fake_quantize_per_tensor_affine` / `fake_quantize_per_channel_affine`
(straight-through gradient inside [quant_min, quant_max]); these modules keep the
observer, the current scale/zero_point buffers and the two enable switches, as
torch.ao.quantization.fake_quantize does.
"""
import re
from abc import ABC, abstractmethod

import ember
from ... import nn
from ._qtensor import QRANGE
from .observer import (FixedQParamsObserver, HistogramObserver,
                       MovingAverageMinMaxObserver, MovingAveragePerChannelMinMaxObserver,
                       _is_per_channel, _is_per_tensor, _is_symmetric, _with_args,
                       _with_callable_args, default_fixed_qparams_range_0to1_observer,
                       default_fixed_qparams_range_neg1to1_observer, resize_to_saved)

__all__ = [
    "FakeQuantizeBase", "FakeQuantize", "FixedQParamsFakeQuantize",
    "FusedMovingAvgObsFakeQuantize", "disable_fake_quant", "disable_observer",
    "enable_fake_quant", "enable_observer",
    "default_fake_quant", "default_weight_fake_quant", "default_dynamic_fake_quant",
    "default_fixed_qparams_range_neg1to1_fake_quant",
    "default_fixed_qparams_range_0to1_fake_quant",
    "default_symmetric_fixed_qparams_fake_quant", "default_affine_fixed_qparams_fake_quant",
    "default_per_channel_weight_fake_quant", "default_embedding_fake_quant",
    "default_embedding_fake_quant_4bit", "default_histogram_fake_quant",
    "default_fused_act_fake_quant", "default_fused_wt_fake_quant",
    "default_fused_per_channel_wt_fake_quant", "fused_wt_fake_quant_range_neg_127_to_127",
    "fused_per_channel_wt_fake_quant_range_neg_127_to_127",
]


def _is_float_qparams(qscheme):
    return qscheme == ember.per_channel_affine_float_qparams


class FakeQuantizeBase(ABC, nn.Module):
    """The enable switches (uint8 buffers, saved in state_dict as PyTorch does)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("fake_quant_enabled", ember.tensor([1], dtype=ember.uint8))
        self.register_buffer("observer_enabled", ember.tensor([1], dtype=ember.uint8))

    @abstractmethod
    def forward(self, x):
        pass

    @abstractmethod
    def calculate_qparams(self, **kwargs):
        pass

    def enable_fake_quant(self, enabled=True):
        self.fake_quant_enabled[0] = 1 if enabled else 0

    def disable_fake_quant(self):
        self.enable_fake_quant(False)

    def enable_observer(self, enabled=True):
        self.observer_enabled[0] = 1 if enabled else 0

    def disable_observer(self):
        self.enable_observer(False)

    with_args = classmethod(_with_args)
    with_callable_args = classmethod(_with_callable_args)


class FakeQuantize(FakeQuantizeBase):
    """x_out = (clamp(round(x / scale) + zero_point, quant_min, quant_max) - zero_point)
    * scale, with (scale, zero_point) refreshed from the observer while it is enabled."""

    def __init__(self, observer=MovingAverageMinMaxObserver, quant_min=None, quant_max=None,
                 is_dynamic=False, **observer_kwargs):
        super().__init__()
        if quant_min is not None and quant_max is not None:
            if quant_min > quant_max:
                raise AssertionError("quant_min must be less than or equal to quant_max")
            dtype = observer_kwargs.get("dtype", ember.quint8)
            if hasattr(observer, "p"):
                dtype = getattr(observer.p, "keywords", {}).get("dtype", dtype)
            info = _int_range(dtype)
            if info[0] > quant_min:
                raise AssertionError("quant_min out of bound")
            if quant_max > info[1]:
                raise AssertionError("quant_max out of bound")
            observer_kwargs.update({"quant_min": quant_min, "quant_max": quant_max})
        observer_kwargs["is_dynamic"] = is_dynamic
        self.activation_post_process = observer(**observer_kwargs)
        obs = self.activation_post_process
        self.quant_min, self.quant_max = obs.quant_min, obs.quant_max
        self.is_dynamic = obs.is_dynamic
        zp_dtype = ember.float32 if _is_float_qparams(obs.qscheme) else ember.int32
        self.register_buffer("scale", ember.tensor([1.0], dtype=ember.float32))
        self.register_buffer("zero_point", ember.tensor([0], dtype=zp_dtype))
        self.dtype = obs.dtype
        self.qscheme = obs.qscheme
        self.ch_axis = getattr(obs, "ch_axis", -1)
        if not (_is_per_channel(self.qscheme) or _is_per_tensor(self.qscheme)):
            raise AssertionError("Only per channel and per tensor quantization are supported "
                                 f"in fake quantize got qscheme: {self.qscheme}")
        self.is_per_channel = _is_per_channel(self.qscheme)

    def calculate_qparams(self):
        return self.activation_post_process.calculate_qparams()

    def _refresh_qparams(self, X):
        self.activation_post_process(X.detach())
        scale, zero_point = self.calculate_qparams()
        if self.scale.shape != scale.shape:
            self.scale.resize_(scale.shape)
            self.zero_point.resize_(zero_point.shape)
        self.scale.copy_(scale)
        self.zero_point.copy_(zero_point)

    def _fake_quant(self, X):
        # Copies of the qparams: a module shared by several graph edges refreshes its
        # buffers in place while an earlier call's backward still needs its values.
        obs = self.activation_post_process
        scale, zero_point = self.scale.clone(), self.zero_point.clone()
        if self.is_per_channel:
            return ember.fake_quantize_per_channel_affine(
                X, scale, zero_point, self.ch_axis, obs.quant_min, obs.quant_max)
        return ember.fake_quantize_per_tensor_affine(
            X, scale, zero_point, obs.quant_min, obs.quant_max)

    def forward(self, X):
        if int(self.observer_enabled[0]) == 1:
            self._refresh_qparams(X)
        if int(self.fake_quant_enabled[0]) == 1:
            X = self._fake_quant(X)
        return X

    def extra_repr(self):
        obs = self.activation_post_process
        return (f"fake_quant_enabled={self.fake_quant_enabled}, "
                f"observer_enabled={self.observer_enabled}, quant_min={obs.quant_min}, "
                f"quant_max={obs.quant_max}, dtype={self.dtype}, qscheme={self.qscheme}, "
                f"ch_axis={self.ch_axis}, scale={self.scale}, zero_point={self.zero_point}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                              missing_keys, unexpected_keys, error_msgs):
        # scale/zero_point have one entry per channel: take the saved length.
        resize_to_saved(self, ("scale", "zero_point"), state_dict, prefix, strict, missing_keys)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)


def _int_range(dtype):
    if dtype in QRANGE:
        return QRANGE[dtype][1:]
    info = ember.iinfo(dtype)
    return info.min, info.max


class FixedQParamsFakeQuantize(FakeQuantize):
    """Fake quantization with constant qparams (from a FixedQParamsObserver)."""

    def __init__(self, observer):
        super().__init__(observer=observer)
        if type(self.activation_post_process) is not FixedQParamsObserver:
            raise AssertionError(f"{type(self).__name__}'s observer must be a "
                                 "FixedQParamsObserver")
        self._observer_ctr = observer
        self.scale = self.activation_post_process.scale
        self.zero_point = self.activation_post_process.zero_point
        if not _is_per_tensor(self.qscheme):
            raise AssertionError("Only per tensor quantization is supported "
                                 f"FixedQParamsFakeQuantize module, got qscheme:{self.qscheme}")

    def calculate_qparams(self):
        return self.scale, self.zero_point

    def extra_repr(self):
        obs = self.activation_post_process
        return (f"fake_quant_enabled={self.fake_quant_enabled}, "
                f"observer_enabled={self.observer_enabled}, scale={self.scale}, "
                f"zero_point={self.zero_point}, dtype={self.dtype}, "
                f"quant_min={obs.quant_min}, quant_max={obs.quant_max}, "
                f"qscheme={self.qscheme}")


class FusedMovingAvgObsFakeQuantize(FakeQuantize):
    """Moving-average observation and fake quantization in one module (PyTorch fuses
    them into one kernel; here they are ember ops in sequence). While training, the
    qparams follow the fused kernel's rule (_choose_qparams); calculate_qparams, which
    convert uses, is the observer's."""

    def __init__(self, observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                 **observer_kwargs):
        super().__init__(observer, quant_min, quant_max, **observer_kwargs)
        if not isinstance(self.activation_post_process,
                          (MovingAverageMinMaxObserver, MovingAveragePerChannelMinMaxObserver)):
            raise AssertionError("Fused observer+fake_quant module only works with "
                                 "MovingAverageMinMaxObserver")
        self.register_buffer("fake_quant_enabled", ember.tensor([1], dtype=ember.int64))
        self.register_buffer("observer_enabled", ember.tensor([1], dtype=ember.int64))
        self.is_symmetric_quant = _is_symmetric(self.activation_post_process.qscheme)

    def _choose_qparams(self, min_val, max_val):
        """PyTorch's ChooseQuantizationParams per element: [min, max] widened to hold 0
        (and made symmetric for symmetric schemes), scale = range / (qmax - qmin) with
        a floor of 6.1e-5, zero point nudged from the end with the smaller error."""
        qmin, qmax = self.quant_min, self.quant_max
        f32, f64 = ember.float32, ember.float64
        mn, mx = min_val.to(f32), max_val.to(f32)
        if self.is_symmetric_quant:
            sym_min, sym_max = -((qmax - qmin) // 2 + 1), (qmax - qmin) // 2
            both = (mn < 0) & (mx > 0)
            m = ember.maximum((mn / sym_min).abs(), (mx / sym_max).abs())
            mn = ember.where(both, m * sym_min, mn)
            mx = ember.where(both, m * sym_max, mx)
        mn = ember.minimum(mn, ember.zeros_like(mn))
        mx = ember.maximum(mx, ember.zeros_like(mx))
        scale = (mx.to(f64) - mn.to(f64)) / (qmax - qmin)
        s32 = scale.to(f32)
        bad = (s32 == 0) | ember.isinf(1.0 / s32)
        scale = ember.where(bad, ember.full_like(scale, 0.1), scale)
        small = scale < 6.1e-5
        amp = ember.full_like(scale, 6.1e-5).to(f32) / scale.to(f32)
        floor = float(ember.tensor(6.1e-5, dtype=f32))
        mn = ember.where(small & (mn != 0) & (mx != 0), mn * amp, mn)
        mx = ember.where(small & (mn != 0) & (mx != 0), mx * amp, mx)
        mx = ember.where(small & (mn == 0), ember.full_like(mx, floor * (qmax - qmin)), mx)
        mn = ember.where(small & (mx == 0), ember.full_like(mn, -floor * (qmax - qmin)), mn)
        scale = ember.where(small, ember.full_like(scale, floor), scale)
        zp_min = qmin - mn.to(f64) / scale
        zp_max = qmax - mx.to(f64) / scale
        err_min = abs(qmin) - (mn.to(f64) / scale).abs()
        err_max = abs(qmax) - (mx.to(f64) / scale).abs()
        zp = ember.where(err_min < err_max, zp_min, zp_max)
        if self.is_symmetric_quant:
            zp = ember.where((mn < 0) & (mx > 0), ember.full_like(zp, (qmin + qmax) / 2), zp)
        zp = ember.clamp(ember.round(zp), qmin, qmax)
        return scale.to(f32).reshape(-1), zp.to(self.zero_point.dtype).reshape(-1)

    def _refresh_qparams(self, X):
        obs = self.activation_post_process
        obs(X.detach())
        scale, zero_point = self._choose_qparams(obs.min_val, obs.max_val)
        if self.scale.shape != scale.shape:
            self.scale.resize_(scale.shape)
            self.zero_point.resize_(zero_point.shape)
        self.scale.copy_(scale)
        self.zero_point.copy_(zero_point)

    def extra_repr(self):
        return super().extra_repr() + (
            f", reduce_range={self.activation_post_process.reduce_range}")


def _is_fake_quant(mod):
    return isinstance(mod, FakeQuantizeBase) or bool(
        re.search(r"FakeQuantize", type(mod).__name__))


def disable_fake_quant(mod):
    """For `model.apply(...)`: switch fake quantization off."""
    if _is_fake_quant(mod):
        mod.disable_fake_quant()


def enable_fake_quant(mod):
    """For `model.apply(...)`: switch fake quantization on."""
    if _is_fake_quant(mod):
        mod.enable_fake_quant()


def disable_observer(mod):
    """For `model.apply(...)`: freeze the observers' statistics."""
    if _is_fake_quant(mod):
        mod.disable_observer()


def enable_observer(mod):
    """For `model.apply(...)`: let the observers update again."""
    if _is_fake_quant(mod):
        mod.enable_observer()


default_fake_quant = FakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, dtype=ember.quint8,
    qscheme=ember.per_tensor_affine, reduce_range=True)
default_weight_fake_quant = FakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=-128, quant_max=127, dtype=ember.qint8,
    qscheme=ember.per_tensor_symmetric, reduce_range=False)
default_dynamic_fake_quant = FakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, is_dynamic=True,
    dtype=ember.quint8, averaging_constant=1)
default_fixed_qparams_range_neg1to1_fake_quant = FixedQParamsFakeQuantize.with_args(
    observer=default_fixed_qparams_range_neg1to1_observer)
default_fixed_qparams_range_0to1_fake_quant = FixedQParamsFakeQuantize.with_args(
    observer=default_fixed_qparams_range_0to1_observer)
default_symmetric_fixed_qparams_fake_quant = default_fixed_qparams_range_neg1to1_fake_quant
default_affine_fixed_qparams_fake_quant = default_fixed_qparams_range_0to1_fake_quant
default_per_channel_weight_fake_quant = FakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127,
    dtype=ember.qint8, qscheme=ember.per_channel_symmetric, reduce_range=False, ch_axis=0)
default_embedding_fake_quant = FakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver,
    qscheme=ember.per_channel_affine_float_qparams, dtype=ember.quint8, quant_min=0,
    quant_max=255, ch_axis=0, averaging_constant=1)
default_embedding_fake_quant_4bit = FakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver,
    qscheme=ember.per_channel_affine_float_qparams, ch_axis=0, dtype=ember.quint4x2,
    averaging_constant=1)
default_histogram_fake_quant = FakeQuantize.with_args(
    observer=HistogramObserver, quant_min=0, quant_max=255, dtype=ember.quint8,
    qscheme=ember.per_tensor_affine, reduce_range=True)
default_fused_act_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, dtype=ember.quint8)
default_fused_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=-128, quant_max=127, dtype=ember.qint8,
    qscheme=ember.per_tensor_symmetric)
default_fused_per_channel_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127,
    dtype=ember.qint8, qscheme=ember.per_channel_symmetric)
fused_wt_fake_quant_range_neg_127_to_127 = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=-127, quant_max=127, dtype=ember.qint8,
    qscheme=ember.per_tensor_symmetric, eps=2 ** -12)
fused_per_channel_wt_fake_quant_range_neg_127_to_127 = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-127, quant_max=127,
    dtype=ember.qint8, qscheme=ember.per_channel_symmetric, eps=2 ** -12)
