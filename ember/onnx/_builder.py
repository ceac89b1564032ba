"""GraphBuilder: collects ONNX nodes, constants and initializers with unique value names, so
the op translations (_symbolics.py) only say which ONNX operators an ember op becomes."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

from .._symbolic import SymInt

__all__ = ["GraphBuilder", "onnx_dtype", "is_static"]


def is_static(n):
    """A plain int size (a SymInt is an int subclass standing for a symbolic size)."""
    return isinstance(n, int) and not isinstance(n, SymInt)

_NP_TO_ONNX = {
    np.dtype("float32"): TensorProto.FLOAT, np.dtype("float64"): TensorProto.DOUBLE,
    np.dtype("float16"): TensorProto.FLOAT16, np.dtype("int64"): TensorProto.INT64,
    np.dtype("int32"): TensorProto.INT32, np.dtype("int16"): TensorProto.INT16,
    np.dtype("int8"): TensorProto.INT8, np.dtype("uint8"): TensorProto.UINT8,
    np.dtype("bool"): TensorProto.BOOL, np.dtype("complex64"): TensorProto.COMPLEX64,
    np.dtype("complex128"): TensorProto.COMPLEX128,
}


def onnx_dtype(dtype):
    """TensorProto element type of an ember dtype (or NumPy dtype)."""
    npd = np.dtype(getattr(dtype, "np", dtype))
    if npd.name == "bfloat16":
        return TensorProto.BFLOAT16
    try:
        return _NP_TO_ONNX[npd]
    except KeyError:
        raise TypeError(f"ember.onnx: dtype {dtype} has no ONNX element type") from None


class GraphBuilder:
    """Accumulates an ONNX graph: `op()` appends a node and returns its output names."""

    def __init__(self, opset):
        self.opset = opset
        self.nodes = []
        self.initializers = []
        self.names = set()
        self._consts = {}

    def fresh(self, hint):
        base = "".join(c if c.isalnum() or c in "._" else "_" for c in str(hint)) or "v"
        name, i = base, 0
        while name in self.names:
            i += 1
            name = f"{base}_{i}"
        self.names.add(name)
        return name

    def op(self, op_type, inputs, n_out=1, name_hint=None, outputs=None, **attrs):
        """Appends `op_type(inputs)`; returns the output name (a list when n_out > 1)."""
        outs = outputs or [self.fresh(name_hint or op_type) for _ in range(n_out)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(helper.make_node(
            op_type, ["" if i is None else i for i in inputs], outs,
            name=self.fresh(f"/{op_type}"), **attrs))
        return outs[0] if n_out == 1 and outputs is None else outs

    def initializer(self, array, name_hint):
        name = self.fresh(name_hint)
        self.initializers.append(numpy_helper.from_array(np.array(array, order="C"), name))
        return name

    def const(self, value, dtype=None):
        """A constant value (deduplicated by value and dtype), as an initializer."""
        arr = np.asarray(value, dtype=dtype)
        key = (arr.dtype.str, arr.shape, arr.tobytes())
        hit = self._consts.get(key)
        if hit is None:
            hit = self._consts[key] = self.initializer(arr, "onnx::Constant")
        return hit

    def ints(self, values):
        return self.const(np.asarray(list(values), dtype=np.int64).reshape(-1))
