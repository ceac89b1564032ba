"""`ShapeProp`: run a GraphModule on example inputs and record each node's tensor
metadata in `node.meta['tensor_meta']` (torch.fx.passes.shape_prop).

Note: with a `fake_mode` the run computes shapes only (ember's FakeTensorMode runs the
registry's meta functions), so large models cost no real compute.
"""
import contextlib
from typing import Any, NamedTuple

from ..._tensor import Tensor
from ..interpreter import Interpreter
from ..node import map_aggregate

__all__ = ["TensorMetadata", "ShapeProp", "fake_parameters"]


class TensorMetadata(NamedTuple):
    shape: Any
    dtype: Any
    requires_grad: bool
    stride: tuple
    memory_format: Any
    is_quantized: bool
    qparams: dict


def _extract_tensor_metadata(result, include_contiguity=True):
    """TensorMetadata of one tensor: shape, dtype, requires_grad, stride and the first
    memory format it is contiguous in (contiguous, channels_last, channels_last_3d)."""
    import ember
    memory_format = None
    if include_contiguity:
        for fmt in (ember.contiguous_format, ember.channels_last, ember.channels_last_3d):
            try:
                ok = result.is_contiguous(memory_format=fmt)
            except (RuntimeError, ValueError):
                ok = False
            if ok:
                memory_format = fmt
                break
    return TensorMetadata(result.shape, result.dtype, result.requires_grad, result.stride(),
                          memory_format, bool(getattr(result, "is_quantized", False)), {})


class ShapeProp(Interpreter):
    """`ShapeProp(gm).propagate(*example_inputs)` fills node.meta['tensor_meta'] (and
    node.meta['type']) for every node."""

    def __init__(self, gm, fake_mode=None):
        super().__init__(gm)
        self.fake_mode = fake_mode

    def run_node(self, n):
        try:
            if self.fake_mode is not None:
                with self.fake_mode:
                    result = super().run_node(n)
            else:
                result = super().run_node(n)
        except Exception as e:
            raise RuntimeError(f"ShapeProp error for: node={n.format_node()} with "
                               f"meta={n.meta}") from e
        found = []

        def extract(obj):
            if isinstance(obj, Tensor):
                found.append(True)
                return _extract_tensor_metadata(obj)
            return obj
        meta = map_aggregate(result, extract)
        if found:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def get_attr(self, target, args, kwargs):
        value = super().get_attr(target, args, kwargs)
        if self.fake_mode is not None and isinstance(value, Tensor):
            value = self.fake_mode.from_tensor(value)
        return value

    def propagate(self, *args):
        """Run the module on `args` (made fake first under fake_mode) and record
        metadata; returns the module's result."""
        if self.fake_mode is None:
            return super().run(*args)
        args = [self.fake_mode.from_tensor(t) if isinstance(t, Tensor) else t for t in args]
        with fake_parameters(self.module, self.fake_mode):
            return super().run(*args)


@contextlib.contextmanager
def fake_parameters(module, mode):
    """Inside: every parameter and buffer of `module` is replaced by its fake (from
    `mode`); the real ones are put back on exit, also on error."""
    swapped = []
    try:
        for mod in module.modules():
            for reg in (mod._parameters, mod._buffers):
                for k, v in reg.items():
                    if isinstance(v, Tensor) and not v._fake:
                        swapped.append((reg, k, v))
                        reg[k] = mode.from_tensor(v)
        yield
    finally:
        for reg, k, v in swapped:
            reg[k] = v
