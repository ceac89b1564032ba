"""DynamicQuantizedLinear: int8 weights, the input quantized on the fly per call, float
in and float out (torch.ao.nn.quantized.dynamic.Linear)."""
import numpy as np

import ember
from ..linear import Linear as _QuantizedLinear
from .._functional import linear_dynamic, weight_qparams
from ..... import nn

__all__ = ["Linear"]


class Linear(_QuantizedLinear):
    """y = dequant(quant(x) @ W_int8^T) + b with qparams of x chosen per call (qint8
    weights), or x @ float16(W)^T + b (float16 weights)."""

    _version = 4
    _FLOAT_MODULE = (nn.Linear, nn.modules.linear.NonDynamicallyQuantizableLinear)

    def __init__(self, in_features, out_features, bias_=True, dtype=ember.qint8):
        super().__init__(in_features, out_features, bias_, dtype=dtype)
        if dtype == ember.float16:
            self.set_weight_bias(ember.zeros(out_features, in_features),
                                 self.bias())

    def _get_name(self):
        return "DynamicQuantizedLinear"

    def extra_repr(self):
        s = (f"in_features={self.in_features}, out_features={self.out_features}, "
             f"dtype={self._packed_params.dtype}")
        if self._packed_params.dtype == ember.qint8:
            s += f", qscheme={self.weight().qscheme()}"
        return s

    def forward(self, x):
        w = self.weight()
        b = self.bias()
        if self._packed_params.dtype == ember.float16:
            return nn.functional.linear(x.detach(), w.detach().half().float(),
                                        None if b is None else b.detach())
        if x.dtype not in (ember.float32,):
            raise RuntimeError(f"DynamicQuantizedLinear: expected a float32 input, got "
                               f"{x.dtype}")
        wi, w_scale, w_zp = weight_qparams(w)
        bias = None if b is None else b.detach().numpy().astype(np.float32)
        out = linear_dynamic(x.detach().numpy(), wi, w_scale, w_zp, bias, reduce_range=True)
        return ember.from_numpy(out)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """From a float Linear: the weight observed by its qconfig's weight observer (or
        default_dynamic_qconfig's) and quantized; float16 keeps the float weight."""
        from ....quantization.qconfig import default_dynamic_qconfig
        from ....quantization.quantize import _quantize_weight
        if type(mod) not in cls._FLOAT_MODULE:
            raise AssertionError("nn.quantized.dynamic.Linear.from_float only works for "
                                 f"{[m.__name__ for m in cls._FLOAT_MODULE]}")
        if not hasattr(mod, "qconfig"):
            raise AssertionError("Input float module must have qconfig defined")
        qconfig = mod.qconfig if mod.qconfig is not None else default_dynamic_qconfig
        wobs = qconfig.weight()
        dtype = wobs.dtype
        if dtype not in (ember.qint8, ember.float16):
            raise AssertionError(f"The only supported dtypes for dynamic quantized linear "
                                 f"are qint8 and float16 got: {dtype}")
        wobs(mod.weight)
        if dtype == ember.qint8:
            qweight = _quantize_weight(mod.weight.detach().float(), wobs)
        else:
            qweight = mod.weight.detach().float()
        q = cls(mod.in_features, mod.out_features, dtype=dtype)
        q.set_weight_bias(qweight, mod.bias)
        return q
