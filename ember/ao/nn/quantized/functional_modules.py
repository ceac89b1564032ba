"""FloatFunctional / QFunctional: tensor arithmetic (add, mul, cat, add_relu) as modules, so
eager quantization can observe its output (FloatFunctional) and run it on quantized
tensors with the observed qparams (QFunctional)."""
import numpy as np

import ember
from .... import nn
from ...quantization._qtensor import _make, quantize_array

__all__ = ["FloatFunctional", "QFunctional"]


class FloatFunctional(nn.Module):
    """Float ops whose outputs pass through `activation_post_process` (an observer after
    prepare); call its methods, not forward."""

    def __init__(self):
        super().__init__()
        self.activation_post_process = nn.Identity()

    def forward(self, x):
        raise RuntimeError("FloatFunctional is not intended to use the 'forward'. Please use "
                           "the underlying operation")

    def add(self, x, y):
        return self.activation_post_process(ember.add(x, y))

    def add_scalar(self, x, y):
        return ember.add(x, y)

    def mul(self, x, y):
        return self.activation_post_process(ember.mul(x, y))

    def mul_scalar(self, x, y):
        return ember.mul(x, y)

    def cat(self, x, dim=0):
        return self.activation_post_process(ember.cat(x, dim=dim))

    def add_relu(self, x, y):
        return self.activation_post_process(ember.relu(ember.add(x, y)))

    def matmul(self, x, y):
        return self.activation_post_process(ember.matmul(x, y))


def _dequantized(q):
    """(q - zero_point) * scale in float32, per tensor."""
    if q.qscheme() not in (ember.per_tensor_affine, ember.per_tensor_symmetric):
        raise NotImplementedError("QFunctional: per-channel quantized inputs are not supported")
    return (q._data.astype(np.float32) - np.float32(q.q_zero_point())) * \
        np.float32(q.q_scale())


class QFunctional(nn.Module):
    """The quantized ops: inputs dequantized, combined in float, requantized to the
    observed (scale, zero_point), as quantized::add / mul / cat / add_relu."""

    def __init__(self):
        super().__init__()
        self.scale, self.zero_point = 1.0, 0
        self.activation_post_process = nn.Identity()

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "scale"] = ember.tensor(self.scale)
        destination[prefix + "zero_point"] = ember.tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        self.scale = float(state_dict.pop(prefix + "scale"))
        self.zero_point = int(state_dict.pop(prefix + "zero_point"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys,
                                      unexpected_keys, error_msgs)

    def _get_name(self):
        return "QFunctional"

    def extra_repr(self):
        return f"scale={self.scale}, zero_point={self.zero_point}"

    def forward(self, x):
        raise RuntimeError("Functional is not intended to use the 'forward'. Please use the "
                           "underlying operation")

    def _requantize(self, real, like):
        q = np.clip(np.rint(real * (np.float32(1) / np.float32(self.scale))) + self.zero_point,
                    *_RANGE[like.dtype]).astype(like._data.dtype)
        return _make(q, like.dtype, (ember.per_tensor_affine, self.scale, self.zero_point))

    def add(self, x, y):
        return self._requantize(_dequantized(x) + _dequantized(y), x)

    def add_relu(self, x, y):
        return self._requantize(np.maximum(_dequantized(x) + _dequantized(y), 0), x)

    def mul(self, x, y):
        return self._requantize(_dequantized(x) * _dequantized(y), x)

    def cat(self, x, dim=0):
        real = np.concatenate([_dequantized(t) for t in x], axis=dim)
        return _make(quantize_array(real, self.scale, self.zero_point, *_RANGE[x[0].dtype],
                                    x[0]._data.dtype),
                     x[0].dtype, (ember.per_tensor_affine, self.scale, self.zero_point))

    def add_scalar(self, x, y):
        raise NotImplementedError("QFunctional.add_scalar (quantized::add_scalar) is not in "
                                  "ember")

    def mul_scalar(self, x, y):
        raise NotImplementedError("QFunctional.mul_scalar (quantized::mul_scalar) is not in "
                                  "ember")

    def matmul(self, x, y):
        raise NotImplementedError("QFunctional.matmul (quantized::matmul) is not in ember")

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        if type(mod) is not FloatFunctional:
            raise AssertionError("QFunctional.from_float expects an instance of "
                                 f"FloatFunctional, got {type(mod).__name__}")
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        q = cls()
        q.scale, q.zero_point = float(scale.reshape(-1)[0]), int(zero_point.reshape(-1)[0])
        return q


_RANGE = {ember.quint8: (0, 255), ember.qint8: (-128, 127), ember.qint32: (-2**31, 2**31 - 1)}
