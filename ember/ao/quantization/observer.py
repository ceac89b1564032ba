"""Observers: modules that watch tensors and compute quantization parameters.

Why: PyTorch's `torch.ao.quantization.observer` API, which eager-mode quantization,
quantize_dynamic and the pt2e flow all use to turn value ranges into (scale, zero_point).
Every statistic a forward records is a registry op on tensors (aminmax, min/max, where,
copy_/resize_ on the buffers) and forward never leaves for Python numbers, so a
recording mode (compile/export) sees the whole update. `calculate_qparams` follows
PyTorch's formulas bit for bit (float32 scale, int64 zero point, one-element tensors
for per-tensor schemes); HistogramObserver's L2 search runs in NumPy float32 on the
finished histogram, outside forward.
"""
import math
import warnings
from abc import ABC, abstractmethod
from functools import partial

import numpy as np

import ember
from ... import nn

__all__ = [
    "ObserverBase", "UniformQuantizationObserverBase", "MinMaxObserver",
    "MovingAverageMinMaxObserver", "PerChannelMinMaxObserver",
    "MovingAveragePerChannelMinMaxObserver", "HistogramObserver", "FixedQParamsObserver",
    "PlaceholderObserver", "RecordingObserver", "NoopObserver", "ReuseInputObserver",
    "get_observer_state_dict", "load_observer_state_dict",
    "default_observer", "default_placeholder_observer", "default_debug_observer",
    "default_weight_observer", "weight_observer_range_neg_127_to_127",
    "default_histogram_observer", "default_per_channel_weight_observer",
    "per_channel_weight_observer_range_neg_127_to_127", "default_dynamic_quant_observer",
    "default_float_qparams_observer", "default_float_qparams_observer_4bit",
    "default_reuse_input_observer", "default_fixed_qparams_range_neg1to1_observer",
    "default_fixed_qparams_range_0to1_observer", "default_symmetric_fixed_qparams_observer",
    "default_affine_fixed_qparams_observer",
]

_EPS = float(np.finfo(np.float32).eps)
# ember has no uint16 dtype yet; the uint16 branches stay for when it does.
_UINT16 = getattr(ember, "uint16", None)



def resize_to_saved(module, names, state_dict, prefix, strict, missing_keys):
    """Resize per-channel buffers to their saved length before loading: the channel count
    is known only from the saved state (missing keys are reported under strict)."""
    for name in names:
        key = prefix + name
        if key in state_dict:
            getattr(module, name).resize_(state_dict[key].shape)
        elif strict:
            missing_keys.append(key)

class _PartialWrapper:
    """A constructor with bound keyword arguments (`Observer.with_args(...)`)."""

    def __init__(self, p):
        self.p = p
        self.callable_args = {}

    def __call__(self, *args, **keywords):
        for name, fn in self.callable_args.items():
            if name not in keywords:
                keywords = {**keywords, name: fn()}
        return self.p(*args, **keywords)

    def __repr__(self):
        return self.p.__repr__() + self.callable_args.__repr__()

    def with_args(self, **kwargs):
        return _with_args(self, **kwargs)

    def with_callable_args(self, **kwargs):
        result = _PartialWrapper(p=self.p)
        result.callable_args = {**self.callable_args, **kwargs}
        return result


def _with_args(cls_or_self, **kwargs):
    return _PartialWrapper(partial(cls_or_self, **kwargs))


def _with_callable_args(cls_or_self, **kwargs):
    result = _PartialWrapper(partial(cls_or_self))
    return result.with_callable_args(**kwargs)


def _is_per_channel(qscheme):
    return qscheme in (ember.per_channel_affine, ember.per_channel_symmetric,
                       ember.per_channel_affine_float_qparams)


def _is_per_tensor(qscheme):
    return qscheme in (ember.per_tensor_affine, ember.per_tensor_symmetric)


def _is_symmetric(qscheme):
    return qscheme in (ember.per_tensor_symmetric, ember.per_channel_symmetric)


def _allowed_dtypes():
    allowed = (ember.qint8, ember.quint8, ember.quint4x2, ember.qint32, ember.int8,
               ember.uint8, ember.int16, ember.int32)
    return allowed if _UINT16 is None else allowed + (_UINT16,)


def validate_qmin_qmax(quant_min, quant_max):
    """PyTorch's check of a user-given range: it must contain 0 and be ordered."""
    if not quant_min <= 0 <= quant_max:
        raise AssertionError("Used-specified quantization range must include 0.")
    if quant_min >= quant_max:
        raise AssertionError("qmin must be strictly less than qmax for user-specified "
                             "quantization range.")


def calculate_qmin_qmax(quant_min, quant_max, has_customized_qrange, dtype, reduce_range):
    """The integer range (quant_min, quant_max) for `dtype`, as PyTorch computes it."""
    if has_customized_qrange:
        lo, hi = quant_min, quant_max
        span = hi - lo + 1
        if dtype in (ember.qint8, ember.int8) and not 0 < span <= 256:
            raise AssertionError("quantization range should be positive and not exceed "
                                 "the maximum bit range (=256).")
        if dtype in (ember.qint32, ember.int32) and not 0 < span <= 2 ** 32:
            raise AssertionError("quantization range should be positive and not exceed "
                                 "the maximum bit range (=4294967296).")
        if reduce_range:
            quant_min, quant_max = quant_min // 2, quant_max // 2
        return quant_min, quant_max
    if dtype in (ember.qint8, ember.int8):
        return (-64, 63) if reduce_range else (-128, 127)
    if dtype in (ember.quint8, ember.uint8):
        return (0, 127) if reduce_range else (0, 255)
    if dtype in (ember.qint32, ember.int32):
        return -(2 ** 31), 2 ** 31 - 1
    if dtype == _UINT16:
        return 0, 2 ** 16 - 1
    if dtype == ember.int16:
        return -(2 ** 15), 2 ** 15 - 1
    return 0, 15


def _dtype_bits(dtype):
    if dtype == ember.quint4x2:
        return 4
    if dtype in (ember.qint8, ember.quint8):
        return 8
    if dtype == ember.qint32:
        return 32
    return ember.iinfo(dtype).bits


def _min_max_valid(min_val, max_val):
    """False (with PyTorch's warning) when nothing was observed yet."""
    if min_val.numel() == 0 or max_val.numel() == 0:
        warnings.warn("must run observer before calling calculate_qparams. "
                      "Returning default values.", stacklevel=3)
        return False
    if min_val.dim() == 0 or max_val.dim() == 0:
        lo, hi = float(min_val), float(max_val)
        if lo == math.inf and hi == -math.inf:
            warnings.warn("must run observer before calling calculate_qparams. "
                          "Returning default values.", stacklevel=3)
            return False
        if lo > hi:
            raise AssertionError(f"min {min_val} should be less than max {max_val}")
    elif bool(ember.any(min_val > max_val)):
        raise AssertionError(f"min {min_val} should be less than max {max_val}")
    return True


class ObserverBase(ABC, nn.Module):
    """Base class: `forward` records statistics, `calculate_qparams` turns them into
    quantization parameters."""

    def __init__(self, dtype, is_dynamic=False):
        super().__init__()
        self.dtype = dtype
        self.is_dynamic = is_dynamic

    @abstractmethod
    def forward(self, x):
        pass

    @abstractmethod
    def calculate_qparams(self, **kwargs):
        pass

    with_args = classmethod(_with_args)
    with_callable_args = classmethod(_with_callable_args)


class UniformQuantizationObserverBase(ObserverBase):
    """Shared range logic and the min/max → (scale, zero_point) formulas."""

    _version = 3

    def __init__(self, dtype=ember.quint8, qscheme=ember.per_tensor_affine,
                 reduce_range=False, quant_min=None, quant_max=None, factory_kwargs=None,
                 eps=_EPS, is_dynamic=False, **kwargs):
        super().__init__(dtype=dtype, is_dynamic=is_dynamic, **kwargs)
        self.qscheme = qscheme
        if reduce_range:
            warnings.warn("Please use quant_min and quant_max to specify the range for "
                          "observers. reduce_range will be deprecated in a future release "
                          "of PyTorch.", stacklevel=2)
        self.reduce_range = reduce_range
        self.register_buffer("eps", ember.tensor([eps], **(factory_kwargs or {})))
        if not (_is_per_tensor(qscheme) or _is_per_channel(qscheme)):
            raise AssertionError(
                "Default Observer only works for per_tensor_affine, per_tensor_symmetric, "
                "per_channel_affine, per_channel_symmetric and per_channel_float_qparams "
                "quantization scheme")
        if dtype not in _allowed_dtypes():
            raise AssertionError(f"Default Observer only works for {_allowed_dtypes()} "
                                 "data type")
        self.has_customized_qrange = quant_min is not None and quant_max is not None
        if self.has_customized_qrange:
            validate_qmin_qmax(quant_min, quant_max)
        self.quant_min, self.quant_max = calculate_qmin_qmax(
            quant_min, quant_max, self.has_customized_qrange, dtype, reduce_range)

    def _calculate_qparams(self, min_val, max_val):
        """scale = range / (quant_max - quant_min) (symmetric: max|x| / half range),
        zero_point = quant_min - round(min / scale), clamped; float32 / int64."""
        if not _min_max_valid(min_val, max_val):
            return ember.tensor([1.0]), ember.tensor([0])
        qmin, qmax = self.quant_min, self.quant_max
        min_neg = ember.minimum(min_val, ember.zeros_like(min_val))
        max_pos = ember.maximum(max_val, ember.zeros_like(max_val))
        zero_point = ember.zeros(min_neg.shape, dtype=ember.int64)
        if _is_symmetric(self.qscheme):
            max_pos = ember.maximum(-min_neg, max_pos)
            scale = ember.maximum(max_pos / (float(qmax - qmin) / 2), self.eps)
            if self.dtype in (ember.quint8, ember.uint8):
                mid = (qmin + qmax) // 2 if self.has_customized_qrange else 128
                zero_point = ember.full(zero_point.shape, mid, dtype=ember.int64)
            elif self.dtype == _UINT16:
                zero_point = ember.full(zero_point.shape, 2 ** 15, dtype=ember.int64)
        elif self.qscheme == ember.per_channel_affine_float_qparams:
            scale = (max_val - min_val) / float(qmax - qmin)
            scale = ember.where(scale > self.eps, scale, ember.ones_like(scale))
            zero_point = -1 * min_val / scale
        else:
            scale = ember.maximum((max_pos - min_neg) / float(qmax - qmin), self.eps)
            zero_point = qmin - ember.round(min_neg / scale).to(ember.int32)
            zero_point = ember.clamp(zero_point, qmin, qmax)
        if scale.dim() == 0:
            scale = scale.reshape(1)
        if zero_point.dim() == 0:
            zero_point = zero_point.reshape(1)
        return scale, zero_point

    def reset_min_max_vals(self):
        raise NotImplementedError("Cannot reset min/max values in the given observer.")


class _RunningMinMax:
    """What MinMaxObserver and PerChannelMinMaxObserver share: qparams from the running
    min_val / max_val buffers, widened by each batch (moving averages override _update)."""

    def _update(self, cur_min, cur_max):
        return ember.minimum(cur_min, self.min_val), ember.maximum(cur_max, self.max_val)

    def calculate_qparams(self):
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"


class MinMaxObserver(_RunningMinMax, UniformQuantizationObserverBase):
    """Running minimum and maximum of everything seen (per tensor)."""

    def __init__(self, dtype=ember.quint8, qscheme=ember.per_tensor_affine,
                 reduce_range=False, quant_min=None, quant_max=None, factory_kwargs=None,
                 eps=_EPS, is_dynamic=False, **kwargs):
        if not _is_per_tensor(qscheme):
            raise NotImplementedError(
                f"{type(self).__name__}'s qscheme only support torch.per_tensor_symmetric "
                f"and torch.per_tensor_affine, but got: {qscheme}")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max,
                         factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic,
                         **kwargs)
        fk = factory_kwargs or {}
        self.register_buffer("min_val", ember.tensor(float("inf"), **fk))
        self.register_buffer("max_val", ember.tensor(float("-inf"), **fk))
        if (self.qscheme == ember.per_tensor_symmetric and self.reduce_range
                and self.dtype == ember.quint8):
            raise NotImplementedError("Cannot reduce range for symmetric quantization "
                                      "for quint8")

    def forward(self, x_orig):
        """Record the running min and max of `x_orig`; return it unchanged."""
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        cur_min, cur_max = ember.aminmax(x)
        min_val, max_val = self._update(cur_min, cur_max)
        self.min_val.copy_(min_val)
        self.max_val.copy_(max_val)
        return x_orig

    def reset_min_max_vals(self):
        self.min_val.copy_(ember.tensor(float("inf")))
        self.max_val.copy_(ember.tensor(float("-inf")))


class MovingAverageMinMaxObserver(MinMaxObserver):
    """Exponential moving average of the per-batch min and max
    (min <- min + c * (batch_min - min)); the first batch sets them."""

    def __init__(self, averaging_constant=0.01, dtype=ember.quint8,
                 qscheme=ember.per_tensor_affine, reduce_range=False, quant_min=None,
                 quant_max=None, eps=_EPS, is_dynamic=False, **kwargs):
        self.averaging_constant = averaging_constant
        if is_dynamic and averaging_constant != 1:
            raise NotImplementedError(
                "MovingAverageMinMaxObserver doesn't support dynamic quantization for "
                f"averaging constant of {averaging_constant}")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max, eps=eps,
                         is_dynamic=is_dynamic, **kwargs)

    def _update(self, cur_min, cur_max):
        # `where` instead of a Python branch: the first-batch test stays in the graph.
        fresh = (self.min_val == float("inf")) & (self.max_val == float("-inf"))
        c = self.averaging_constant
        min_val = ember.where(fresh, cur_min, self.min_val + c * (cur_min - self.min_val))
        max_val = ember.where(fresh, cur_max, self.max_val + c * (cur_max - self.max_val))
        return min_val, max_val


class PerChannelMinMaxObserver(_RunningMinMax, UniformQuantizationObserverBase):
    """Running min and max per slice along `ch_axis` (per-channel weights)."""

    def __init__(self, ch_axis=0, dtype=ember.quint8, qscheme=ember.per_channel_affine,
                 reduce_range=False, quant_min=None, quant_max=None, factory_kwargs=None,
                 eps=_EPS, is_dynamic=False, **kwargs):
        if not _is_per_channel(qscheme):
            raise NotImplementedError(
                f"{type(self).__name__}'s qscheme only support torch.per_channel_symmetric, "
                "torch.per_channel_affine and torch.per_channel_affine_float_qparams.")
        if is_dynamic:
            raise NotImplementedError(
                f"{type(self).__name__} doesn't support dynamic quantization")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max,
                         factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic,
                         **kwargs)
        self.ch_axis = ch_axis
        fk = factory_kwargs or {}
        self.register_buffer("min_val", ember.tensor([], **fk))
        self.register_buffer("max_val", ember.tensor([], **fk))
        if (self.qscheme == ember.per_channel_symmetric and self.reduce_range
                and self.dtype == ember.quint8):
            raise NotImplementedError("Cannot reduce range for symmetric quantization "
                                      "for quint8")

    def _channel_rows(self, x):
        axes = list(range(x.dim()))
        axes[self.ch_axis], axes[0] = 0, self.ch_axis
        return ember.flatten(x.permute(axes).to(self.min_val.dtype), start_dim=1)

    def forward(self, x_orig):
        """Record per-channel running min and max; return the input unchanged."""
        if x_orig.numel() == 0:
            return x_orig
        cur_min, cur_max = ember.aminmax(self._channel_rows(x_orig.detach()), dim=1)
        if self.min_val.numel() == 0 or self.max_val.numel() == 0:
            min_val, max_val = cur_min, cur_max
        else:
            min_val, max_val = self._update(cur_min, cur_max)
        self.min_val.resize_(min_val.shape)
        self.max_val.resize_(max_val.shape)
        self.min_val.copy_(min_val)
        self.max_val.copy_(max_val)
        return x_orig

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                              missing_keys, unexpected_keys, error_msgs):
        # The buffers' length is the channel count, known only from the saved state.
        resize_to_saved(self, ("min_val", "max_val"), state_dict, prefix, strict, missing_keys)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False,
                                      missing_keys, unexpected_keys, error_msgs)

    def reset_min_max_vals(self):
        self.min_val = ember.tensor([])
        self.max_val = ember.tensor([])


class MovingAveragePerChannelMinMaxObserver(PerChannelMinMaxObserver):
    """Per-channel exponential moving average of the batch min and max."""

    def __init__(self, averaging_constant=0.01, ch_axis=0, dtype=ember.quint8,
                 qscheme=ember.per_channel_affine, reduce_range=False, quant_min=None,
                 quant_max=None, eps=_EPS, is_dynamic=False, **kwargs):
        super().__init__(ch_axis=ch_axis, dtype=dtype, qscheme=qscheme,
                         reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, eps=eps, is_dynamic=is_dynamic, **kwargs)
        self.averaging_constant = averaging_constant

    def _update(self, cur_min, cur_max):
        c = self.averaging_constant
        return (self.min_val + c * (cur_min - self.min_val),
                self.max_val + c * (cur_max - self.max_val))


class HistogramObserver(UniformQuantizationObserverBase):
    """A running histogram of the values; qparams from the [min, max] sub-range that
    minimises the L2 quantization error (PyTorch's / caffe2's norm-minimization search)."""

    def __init__(self, bins=2048, dtype=ember.quint8, qscheme=ember.per_tensor_affine,
                 reduce_range=False, quant_min=None, quant_max=None, factory_kwargs=None,
                 eps=_EPS, is_dynamic=False, **kwargs):
        if not _is_per_tensor(qscheme):
            raise NotImplementedError(
                "HistogramObserver's qscheme only support torch.per_tensor_symmetric "
                "and torch.per_tensor_affine.")
        if is_dynamic:
            raise NotImplementedError("HistogramObserver doesn't support dynamic "
                                      "quantization")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max,
                         factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic,
                         **kwargs)
        fk = factory_kwargs or {}
        self.bins = bins
        self.register_buffer("histogram", ember.zeros(bins, **fk))
        self.register_buffer("min_val", ember.tensor(float("inf"), **fk))
        self.register_buffer("max_val", ember.tensor(float("-inf"), **fk))
        self.dst_nbins = 2 ** _dtype_bits(self.dtype)
        self.upsample_rate = 16

    def _upscale_histogram(self, hist, orig_min, orig_max, new_min, new_max):
        """Spread `hist` (over [orig_min, orig_max]) onto `bins` bins over the wider
        [new_min, new_max]: each bin split into upsample_rate pieces placed by midpoint."""
        rate = self.upsample_rate
        hist = hist.repeat_interleave(rate) / rate
        bin_size = (orig_max - orig_min) / (self.bins * rate)
        mids = ember.linspace(orig_min, orig_max, self.bins * rate + 1)[:-1] + 0.5 * bin_size
        edges = ember.linspace(new_min, new_max, self.bins + 1)
        where = ember.bucketize(mids, edges, right=True) - 1
        where = ember.clamp(where, 0, self.bins - 1)
        return ember.bincount(where, weights=hist, minlength=self.bins)

    def _combine_histograms(self, orig_hist, orig_min, orig_max, upd_hist, upd_min, upd_max):
        if bool(upd_min == orig_min) and bool(upd_max == orig_max):
            return orig_hist + upd_hist
        if bool(orig_min == orig_max):
            moved = ember.histc(orig_min, bins=self.bins, min=upd_min, max=upd_max)
            return moved * ember.sum(orig_hist) + upd_hist
        return upd_hist + self._upscale_histogram(orig_hist, orig_min, orig_max,
                                                  upd_min, upd_max)

    def _set(self, name, value):
        buf = getattr(self, name)
        buf.detach_().resize_(value.shape)
        buf.copy_(value)

    def forward(self, x_orig):
        """Add `x_orig`'s values to the histogram, widening its range when needed."""
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach()
        x_min, x_max = ember.aminmax(x)
        if bool(x_min == -math.inf) or bool(x_max == math.inf):
            warnings.warn("torch.inf detected in input tensor, ignoring input",
                          stacklevel=2)
            x = x[x.abs() != math.inf]
            if x.numel() == 0:
                return x_orig
            x_min, x_max = ember.aminmax(x)
        cur_min, cur_max = self.min_val, self.max_val
        if bool(cur_min == math.inf) or bool(cur_max == -math.inf):
            self._set("min_val", x_min)
            self._set("max_val", x_max)
            self._set("histogram", ember.histc(x, self.bins, min=x_min, max=x_max))
            return x_orig
        new_min = ember.minimum(cur_min, x_min).detach()
        new_max = ember.maximum(cur_max, x_max).detach()
        upd = ember.histc(x, self.bins, min=new_min, max=new_max)
        if bool(new_min == cur_min) and bool(new_max == cur_max):
            self._set("histogram", self.histogram + upd)
            return x_orig
        combined = self._combine_histograms(self.histogram, cur_min, cur_max, upd,
                                            new_min, new_max)
        self._set("histogram", combined)
        self._set("min_val", new_min)
        self._set("max_val", new_max)
        return x_orig

    def _quantization_error(self, hist, lo, hi, start, end):
        """L2 error of quantizing bins [start, end] into dst_nbins levels, assuming
        values uniform within a source bin: sum of density * (d_end^3 - d_begin^3) / 3."""
        f32 = np.float32
        bin_width = (float(hi) - float(lo)) / self.bins
        dst_width = bin_width * (end - start + 1) / self.dst_nbins
        if dst_width == 0.0:
            return 0.0
        src = np.arange(self.bins, dtype=np.int64)
        begin = ((src - start) * bin_width).astype(f32)
        end_ = begin + f32(bin_width)
        dst_begin = np.clip(np.floor(begin / f32(dst_width)), 0, self.dst_nbins - 1)
        dst_begin_center = (dst_begin + f32(0.5)) * f32(dst_width)
        dst_end = np.clip(np.floor(end_ / f32(dst_width)), 0, self.dst_nbins - 1)
        density = hist / f32(bin_width)

        def norm(d0, d1):
            return density * ((d1 * d1 * d1 - d0 * d0 * d0) / f32(3))

        half = f32(dst_width / 2)
        total = norm(begin - dst_begin_center, np.full(self.bins, half, f32))
        total = total + (dst_end - dst_begin - 1) * norm(-half, half)
        dst_end_center = dst_end * f32(dst_width) + half
        total = total + norm(-half, end_ - dst_end_center)
        return float(total.astype(f32).sum(dtype=f32))

    def _non_linear_param_search(self):
        """Shrink [min, max] from the side holding less mass, in steps of 1e-5 of the
        total count, while the L2 quantization error keeps falling."""
        if self.histogram.shape[0] != self.bins:
            raise AssertionError("bins mismatch")
        hist = self.histogram.detach().numpy().astype(np.float32)
        lo, hi = self.min_val, self.max_val
        total = float(hist.sum(dtype=np.float32))
        csum = np.cumsum(hist, dtype=np.float32)
        step, alpha, beta = 1e-5, 0.0, 1.0
        start, end = 0, self.bins - 1
        norm_min = math.inf
        while alpha < beta:
            next_alpha, next_beta = alpha + step, beta - step
            left, right = start, end
            while left < end and csum[left] < next_alpha * total:
                left += 1
            while right > start and csum[right] > next_beta * total:
                right -= 1
            next_start, next_end = start, end
            if left - start > end - right:
                next_start, alpha = left, next_alpha
            else:
                next_end, beta = right, next_beta
            if next_start == start and next_end == end:
                continue
            err = self._quantization_error(hist, lo, hi, next_start, next_end)
            if err > norm_min:
                break
            norm_min, start, end = err, next_start, next_end
        bin_width = (hi - lo) / self.bins
        return lo + bin_width * start, lo + bin_width * (end + 1)

    def calculate_qparams(self):
        if float(self.min_val) == math.inf and float(self.max_val) == -math.inf:
            warnings.warn("must run observer before calling calculate_qparams. "
                          "Returning default scale and zero point ", stacklevel=2)
            return ember.tensor([1.0]), ember.tensor([0])
        if self.bins != len(self.histogram):
            raise AssertionError("The number of bins in histogram should be equal to the "
                                 "number of bins supplied while making this observer")
        new_min, new_max = self._non_linear_param_search()
        return self._calculate_qparams(new_min, new_max)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                              missing_keys, unexpected_keys, error_msgs):
        for name in ("min_val", "max_val"):
            key = prefix + name
            if key in state_dict:
                getattr(self, name).resize_(state_dict[key].shape)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"


class FixedQParamsObserver(ObserverBase):
    """Fixed scale and zero point (ops with a known output range: sigmoid, tanh)."""

    def __init__(self, scale, zero_point, dtype=ember.quint8,
                 qscheme=ember.per_tensor_affine, quant_min=0, quant_max=255,
                 is_dynamic=False, **kwargs):
        if is_dynamic:
            raise NotImplementedError("FixedQParamsObserver doesn't support dynamic "
                                      "quantization")
        super().__init__(dtype=dtype, is_dynamic=is_dynamic, **kwargs)
        self.quant_min, self.quant_max = quant_min, quant_max
        self.register_buffer("scale", ember.tensor([scale], dtype=ember.float32))
        self.register_buffer("zero_point", ember.tensor([zero_point], dtype=ember.int32))
        self.qscheme = qscheme

    def forward(self, X):
        return X

    def calculate_qparams(self):
        return self.scale, self.zero_point


class PlaceholderObserver(ObserverBase):
    """Records nothing; carries dtype/qscheme/range for ops converted without
    statistics (dynamic quantization, float16)."""

    def __init__(self, dtype=ember.float32, custom_op_name="", compute_dtype=None,
                 quant_min=None, quant_max=None, qscheme=None, eps=None, is_dynamic=False):
        super().__init__(dtype=dtype, is_dynamic=is_dynamic)
        if qscheme is None:
            qscheme = ember.per_tensor_affine
        if eps is None:
            eps = _EPS
        self.quant_min, self.quant_max = quant_min, quant_max
        self.qscheme, self.eps = qscheme, eps
        self.custom_op = custom_op_name
        if compute_dtype:
            self.is_dynamic = True
            warnings.warn("Please use `is_dynamic` instead of `compute_dtype`. "
                          "`compute_dtype` will be deprecated in a future release of "
                          "PyTorch.", stacklevel=2)

    def forward(self, x):
        return x

    def extra_repr(self):
        return f"dtype={self.dtype}, is_dynamic={self.is_dynamic}"

    def calculate_qparams(self):
        raise Exception("calculate_qparams should not be called for PlaceholderObserver")


class RecordingObserver(ObserverBase):
    """Keeps every tensor it sees (debugging)."""

    __annotations__ = {"tensor_val": list}

    def __init__(self, dtype=ember.quint8):
        super().__init__(dtype=dtype, is_dynamic=False)
        self.tensor_val = []

    def forward(self, x):
        self.tensor_val.append(x.clone())
        return x

    def calculate_qparams(self):
        raise Exception("calculate_qparams should not be called for RecordingObserver")

    def get_tensor_value(self):
        return self.tensor_val


class NoopObserver(ObserverBase):
    """Passes through; marks a dtype (float16) that needs no statistics."""

    def __init__(self, dtype=ember.float16, custom_op_name=""):
        super().__init__(dtype=dtype, is_dynamic=False)
        self.custom_op = custom_op_name

    def forward(self, x):
        return x

    def calculate_qparams(self):
        raise Exception("calculate_qparams should not be called for NoopObserver")


class ReuseInputObserver(ObserverBase):
    """Marks an output that reuses its input's observer."""

    def __init__(self):
        super().__init__(ember.quint8, is_dynamic=False)

    def forward(self, x):
        return x

    def calculate_qparams(self):
        raise Exception("calculate_qparams should not be called for ReuseInputObserver")


def get_observer_state_dict(mod):
    """The state_dict entries of every observer / fake-quant submodule of `mod`."""
    from collections import OrderedDict
    return OrderedDict((k, v) for k, v in mod.state_dict().items()
                       if "activation_post_process" in k)


def load_observer_state_dict(mod, obs_dict):
    """Load what get_observer_state_dict saved into `mod`'s observers and fake quantizers;
    an observer key missing from (or unexpected in) `obs_dict` raises."""
    from .fake_quantize import FakeQuantizeBase
    missing, unexpected = [], []
    for name, module in mod.named_modules():
        if isinstance(module, (ObserverBase, FakeQuantizeBase)):
            module._load_from_state_dict(obs_dict, name + ".", {}, False, missing,
                                         unexpected, [])
    for k in missing:
        if "observer" in k or "activation_post_process" in k:
            raise Exception(f"Missing keys for observer {k} in state_dict")
    for k in unexpected:
        if "observer" in k or "activation_post_process" in k:
            raise Exception(f"Unexpected keys for observer {k} in state_dict")


default_observer = MinMaxObserver.with_args(quant_min=0, quant_max=127)
default_placeholder_observer = PlaceholderObserver
default_debug_observer = RecordingObserver
default_weight_observer = MinMaxObserver.with_args(dtype=ember.qint8,
                                                   qscheme=ember.per_tensor_symmetric)
weight_observer_range_neg_127_to_127 = MinMaxObserver.with_args(
    dtype=ember.qint8, qscheme=ember.per_tensor_symmetric, quant_min=-127, quant_max=127,
    eps=2 ** -12)
default_histogram_observer = HistogramObserver.with_args(quant_min=0, quant_max=127)
default_per_channel_weight_observer = PerChannelMinMaxObserver.with_args(
    dtype=ember.qint8, qscheme=ember.per_channel_symmetric)
per_channel_weight_observer_range_neg_127_to_127 = PerChannelMinMaxObserver.with_args(
    dtype=ember.qint8, qscheme=ember.per_channel_symmetric, quant_min=-127, quant_max=127,
    eps=2 ** -12)
default_dynamic_quant_observer = PlaceholderObserver.with_args(
    dtype=ember.quint8, quant_min=0, quant_max=255, is_dynamic=True)
default_float_qparams_observer = PerChannelMinMaxObserver.with_args(
    dtype=ember.quint8, qscheme=ember.per_channel_affine_float_qparams, ch_axis=0)
default_float_qparams_observer_4bit = PerChannelMinMaxObserver.with_args(
    dtype=ember.quint4x2, qscheme=ember.per_channel_affine_float_qparams, ch_axis=0)
default_reuse_input_observer = ReuseInputObserver
default_fixed_qparams_range_neg1to1_observer = FixedQParamsObserver.with_args(
    scale=2.0 / 256.0, zero_point=128, dtype=ember.quint8, quant_min=0, quant_max=255)
default_fixed_qparams_range_0to1_observer = FixedQParamsObserver.with_args(
    scale=1.0 / 256.0, zero_point=0, dtype=ember.quint8, quant_min=0, quant_max=255)
default_symmetric_fixed_qparams_observer = default_fixed_qparams_range_neg1to1_observer
default_affine_fixed_qparams_observer = default_fixed_qparams_range_0to1_observer
