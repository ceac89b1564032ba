"""TensorVariable: a tensor of the user's program, as a fake tensor with a graph node."""
from ... import _tensor
from .base import VariableTracker, unsupported

__all__ = ["TensorVariable"]

# reading these leaves the graph (a value goes to Python): a graph break, as in PyTorch
_HOST_READS = {"item", "tolist", "__bool__", "__int__", "__float__", "__index__", "data_ptr",
               "__array__", "__len__", "untyped_storage", "storage"}
_SIDE_EFFECTS = {"backward", "register_hook", "register_post_accumulate_grad_hook",
                 "retain_grad", "requires_grad_", "share_memory_", "pin_memory", "__setitem__",
                 "set_", "resize_", "record_stream"}
_META_ATTRS = {"shape", "dtype", "device", "ndim", "requires_grad", "is_leaf", "layout",
               "is_cuda", "is_sparse", "is_quantized", "is_meta", "is_nested", "itemsize",
               "names", "is_mkldnn", "is_complex_attr"}


class TensorVariable(VariableTracker):
    def __init__(self, fake, source=None, real=None, is_numpy=False):
        self.fake, self.source, self.real = fake, source, real
        self.is_numpy = is_numpy is not False
        self.pending = {}

    def python_type(self):
        return type(self.real) if self.real is not None else type(self.fake)

    def __repr__(self):
        return f"TensorVariable({list(self.fake.shape)}, {self.fake.dtype})"

    def truth(self, tx):
        unsupported("data-dependent control flow: bool() of a tensor "
                    "(Python branches on a tensor's value)")

    def var_getattr(self, tx, name):
        from .functions import TensorMethod
        if self.is_numpy:
            return tx.numpy_attr(self, name)
        if name in _META_ATTRS:
            return tx.wrap_result(getattr(self.fake, name))
        if name in self.pending:
            return self.pending[name]
        if name == "grad":
            if self.real is None:
                unsupported("reading .grad of a tensor made inside the compiled region")
            from ..source import AttrSource
            return tx.builder.wrap(self.real.grad, AttrSource(self.source, "grad"))
        if name in ("data", "grad_fn", "_base", "_version"):
            unsupported(f"Tensor.{name} inside the compiled region")
        attr = getattr(type(self.fake), name, None)
        if attr is None:
            unsupported(f"Tensor attribute '{name}'")
        if isinstance(attr, property):
            return tx.call_ember(lambda t, n=name: getattr(t, n), [self], {},
                                 name=f"Tensor.{name}")
        if not callable(attr):          # a plain flag (`_fake`: capture runs on fakes)
            return tx.wrap_result(getattr(self.fake, name))
        return TensorMethod(self, name)

    def call_method(self, tx, name, args, kwargs):
        if self.is_numpy:
            return tx.numpy_method(self, name, args, kwargs)
        if name in _HOST_READS:
            if name == "item" and tx.config.capture_scalar_outputs:
                pass
            unsupported(f"Tensor.{name}() reads a value to Python (data-dependent)")
        if name in _SIDE_EFFECTS:
            unsupported(f"Tensor.{name}() has effects outside the graph")
        if name == "numpy":
            return tx.to_numpy(self)
        if name in ("size", "dim", "stride", "numel", "nelement", "ndimension",
                    "is_contiguous", "element_size", "get_device", "is_floating_point",
                    "is_complex", "storage_offset", "type") and not (name == "type" and args):
            a = [x.as_python_constant() for x in args]
            k = {n: x.as_python_constant() for n, x in kwargs.items()}
            return tx.wrap_result(getattr(self.fake, name)(*a, **k))
        fn = getattr(_tensor.Tensor, name, None)
        if fn is None:
            unsupported(f"Tensor.{name}")
        return tx.call_ember(fn, [self, *args], kwargs, name=f"Tensor.{name}")

    def unpack(self, tx):
        n = self.fake.shape[0] if self.fake.dim() else unsupported("iterating a 0-d tensor")
        if not isinstance(n, int) or type(n) is not int:
            n = tx.specialize(n)
        return [tx.call_ember(lambda t, i=i: t[i], [self], {}, name="Tensor.__getitem__")
                for i in range(n)]

