"""Full backward hooks: identity autograd Functions around a module's inputs and outputs."""
from ..._tensor import Tensor
from ...autograd.function import Function


class BackwardHook:
    def __init__(self, module):
        self.module = module
        self.n_inputs = 0
        self.input_positions = []
        self.grad_outputs = None
        self.fired = False

    def setup_input_hook(self, args):
        self.n_inputs = len(args)
        self.input_positions = [i for i, a in enumerate(args)
                                if isinstance(a, Tensor) and a.requires_grad]
        if not self.input_positions:
            return args
        hook = self
        outs = _Identity.apply(lambda grads: hook._input_grads(grads),
                               *[args[i] for i in self.input_positions])
        outs = outs if isinstance(outs, tuple) else (outs,)
        args = list(args)
        for i, o in zip(self.input_positions, outs):
            args[i] = o
        return tuple(args)

    def setup_output_hook(self, result):
        single = isinstance(result, Tensor)
        items = [result] if single else list(result) if isinstance(result, (tuple, list)) \
            else None
        if items is None:
            return result
        pos = [i for i, r in enumerate(items) if isinstance(r, Tensor) and r.requires_grad]
        if not pos:
            return result
        hook = self
        outs = _Identity.apply(lambda grads: hook._output_grads(grads),
                               *[items[i] for i in pos])
        outs = outs if isinstance(outs, tuple) else (outs,)
        for i, o in zip(pos, outs):
            items[i] = o
        return items[0] if single else type(result)(items)

    def _output_grads(self, grads):
        grads = tuple(grads)
        for hook in list(self.module._backward_pre_hooks.values()):
            r = hook(self.module, grads)
            if r is not None:
                grads = tuple(r) if isinstance(r, (tuple, list)) else (r,)
        self.grad_outputs = grads
        if not self.input_positions and not self.fired:
            self._fire((None,) * self.n_inputs)
        return grads

    def _input_grads(self, grads):
        full = [None] * self.n_inputs
        for i, g in zip(self.input_positions, grads):
            full[i] = g
        full = self._fire(tuple(full))
        return tuple(full[i] for i in self.input_positions)

    def _fire(self, grad_input):
        self.fired = True
        for hook in list(self.module._backward_hooks.values()):
            r = hook(self.module, grad_input, self.grad_outputs)
            if r is not None:
                r = tuple(r) if isinstance(r, (tuple, list)) else (r,)
                if len(r) != len(grad_input):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input, "
                                       f"got {len(r)}, but expected {len(grad_input)}")
                grad_input = r
        return grad_input


class _Identity(Function):
    """Passes tensors through; its backward hands the incoming grads to a callback."""

    @staticmethod
    def forward(ctx, callback, *tensors):
        ctx.callback = callback
        return tuple(t.view_as(t) for t in tensors) if len(tensors) > 1 else \
            tensors[0].view_as(tensors[0])

    @staticmethod
    def backward(ctx, *grads):
        out = ctx.callback(grads)
        return (None,) + tuple(out)
