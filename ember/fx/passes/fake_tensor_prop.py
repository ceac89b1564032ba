"""`FakeTensorProp`: run a GraphModule on fake tensors and store each node's fake result
in `node.meta['val']` (torch.fx.passes.fake_tensor_prop).

Note: fake tensors carry shape, dtype, device, strides and requires_grad but no data
(ember's FakeTensorMode runs only the registry's meta functions), so this costs no real
compute; backends read `meta['val']` the same way on captured and traced graphs.
"""
from ..._subclasses.fake_tensor import FakeTensorMode
from ..._tensor import Tensor
from ..interpreter import Interpreter
from .shape_prop import fake_parameters

__all__ = ["FakeTensorProp"]


class FakeTensorProp(Interpreter):
    """`FakeTensorProp(gm, mode=None).propagate(*example_inputs)`."""

    def __init__(self, module, mode=None):
        super().__init__(module)
        self._mode = FakeTensorMode() if mode is None else mode

    def run_node(self, n):
        result = super().run_node(n)
        if n.op != "output":
            n.meta["val"] = result
        return result

    def get_attr(self, target, args, kwargs):
        value = super().get_attr(target, args, kwargs)
        return self._mode.from_tensor(value) if isinstance(value, Tensor) else value

    def propagate(self, *args):
        """Fake the (real) inputs with this mode, then run."""
        fake = [self._mode.from_tensor(a) if isinstance(a, Tensor) else a for a in args]
        return self.propagate_dont_convert_inputs(*fake)

    def propagate_dont_convert_inputs(self, *args):
        with self._mode, fake_parameters(self.module, self._mode):
            return super().run(*args)
