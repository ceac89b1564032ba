"""Quantized Linear modules: the packed (weight, bias) holder and the static
QuantizedLinear (quantized in, quantized out), with PyTorch's state_dict layout."""
import numpy as np

import ember
from .... import nn
from ...quantization._kernels import qlinear
from ...quantization._qtensor import _make, quantize_per_tensor
from ._functional import weight_qparams

__all__ = ["LinearPackedParams", "Linear"]


class LinearPackedParams(nn.Module):
    """(weight, bias) as one state_dict entry `_packed_params` plus its `dtype`: a qint8
    quantized weight, or a float weight for float16 dynamic quantization."""

    _version = 3

    def __init__(self, dtype=ember.qint8):
        super().__init__()
        self.dtype = dtype
        if dtype == ember.qint8:
            wq = quantize_per_tensor(ember.zeros(1, 1), 1.0, 0, ember.qint8)
        elif dtype == ember.float16:
            wq = ember.zeros(1, 1)
        else:
            raise RuntimeError(f"Unsupported dtype on dynamic quantized linear: {dtype}")
        self.set_weight_bias(wq, None)

    def set_weight_bias(self, weight, bias):
        self._packed = (weight, bias)       # a tuple: the bias is not a registered parameter

    def _weight_bias(self):
        return self._packed

    def forward(self, x):
        return x

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "dtype"] = self.dtype
        destination[prefix + "_packed_params"] = self._weight_bias()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        self.dtype = state_dict.pop(prefix + "dtype", self.dtype)
        packed = state_dict.pop(prefix + "_packed_params", None)
        if packed is None:
            missing_keys.append(prefix + "_packed_params")
        else:
            self.set_weight_bias(*packed)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def __repr__(self):
        return repr(self._weight_bias())


class Linear(nn.Module):
    """QuantizedLinear: a quantized (quint8) input times a qint8 weight, requantized to
    the output's scale and zero point (PyTorch's quantized::linear, x86 numerics)."""

    _version = 3
    _FLOAT_MODULE = (nn.Linear,)
    _RELU = False           # the fused LinearReLU clamps at the output's zero point

    def __init__(self, in_features, out_features, bias_=True, dtype=ember.qint8):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bias = ember.zeros(out_features) if bias_ else None
        wq = quantize_per_tensor(ember.zeros(out_features, in_features), 1.0, 0, ember.qint8)
        self._packed_params = LinearPackedParams(dtype)
        self._packed_params.set_weight_bias(wq, bias)
        self.scale, self.zero_point = 1.0, 0

    def _get_name(self):
        return "QuantizedLinear"

    def __repr__(self):
        return f"{self._get_name()}({self.extra_repr()})"      # _packed_params hidden

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"scale={self.scale}, zero_point={self.zero_point}, "
                f"qscheme={self.weight().qscheme()}")

    def weight(self):
        return self._packed_params._weight_bias()[0]

    def bias(self):
        return self._packed_params._weight_bias()[1]

    def set_weight_bias(self, w, b):
        self._packed_params.set_weight_bias(w, b)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "scale"] = ember.tensor(self.scale)
        destination[prefix + "zero_point"] = ember.tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        for name, cast in (("scale", float), ("zero_point", int)):
            v = state_dict.pop(prefix + name, None)
            if v is not None:
                setattr(self, name, cast(v.item() if isinstance(v, ember.Tensor) else v))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def forward(self, x):
        if not getattr(x, "is_quantized", False):
            raise NotImplementedError(
                "Could not run 'quantized::linear' with arguments from the 'CPU' backend: "
                "QuantizedLinear takes a quantized input (put a QuantStub before it)")
        w, w_scale, w_zp = weight_qparams(self.weight())
        b = self.bias()
        out = qlinear(x._data, x.q_scale(), x.q_zero_point(), w, w_scale, w_zp,
                      None if b is None else b.detach().numpy(), self.scale, self.zero_point,
                      np.uint8, (0.0, np.inf) if self._RELU else (-np.inf, np.inf))
        return _make(out, ember.quint8, (ember.per_tensor_affine, self.scale, self.zero_point))

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """From a float Linear that carries an `activation_post_process` observer (prepare
        put it there) and a qconfig: the observed output qparams and a quantized weight."""
        from ...quantization.quantize import _quantize_weight
        mod, act, wobs, (scale, zp) = _observed(cls, mod)
        q = cls(mod.in_features, mod.out_features, dtype=wobs.dtype)
        q.set_weight_bias(_quantize_weight(mod.weight.detach().float(), wobs),
                          None if mod.bias is None else mod.bias.detach())
        q.scale, q.zero_point = float(scale.reshape(-1)[0]), int(zp.reshape(-1)[0])
        return q


def _observed(cls, mod):
    """(float module, its output observer, its weight observer after seeing the weight,
    the output qparams) of a prepared float module or fused module (its first child)."""
    if type(mod) not in cls._FLOAT_MODULE:
        raise AssertionError(f"nnq.{cls.__name__}.from_float only works for "
                             f"{cls._FLOAT_MODULE[0].__name__}")
    if not hasattr(mod, "qconfig"):
        raise AssertionError("Input float module must have qconfig defined")
    act, qconfig = mod.activation_post_process, mod.qconfig
    if isinstance(mod, nn.Sequential):          # a fused module: the Linear/Conv inside
        mod = mod[0]
    wobs = qconfig.weight()
    wobs(mod.weight)
    return mod, act, wobs, act.calculate_qparams()
