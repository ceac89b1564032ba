"""ember.autograd: reverse-mode differentiation over the op registry's vjps."""
from .._tensor import Tensor
from .engine import run_backward
from .graph import Node, AccumulateGrad
from .grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode,
                        is_grad_enabled, is_inference_mode_enabled)
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .function import Function, FunctionCtx, once_differentiable, InplaceFunction


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulate d(tensors)/d(leaves) into the leaves' `.grad` (or only into `inputs`)."""
    tensors = _as_tuple(tensors)
    grads = _as_tuple(grad_tensors if grad_tensors is not None else grad_variables)
    if grads is None:
        grads = (None,) * len(tensors)
    if len(grads) != len(tensors):
        raise RuntimeError(f"got {len(tensors)} tensors and {len(grads)} gradients")
    inputs = _as_tuple(inputs)
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False,
         materialize_grads=False):
    """Return d(outputs)/d(inputs) without touching any `.grad`."""
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    grads = _as_tuple(grad_outputs) or (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"grad requires one grad_output per output: got {len(grads)} "
                           f"grad_outputs and {len(outputs)} outputs")
    if allow_unused is None:
        allow_unused = materialize_grads
    elif materialize_grads and not allow_unused:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    if is_grads_batched:
        return _grad_batched(outputs, inputs, grads, retain_graph, create_graph,
                             allow_unused, materialize_grads)
    res = run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs,
                       capture=True, allow_unused=allow_unused)
    if materialize_grads:
        from ..ops.creation import zeros_like
        res = tuple(zeros_like(x) if g is None else g for x, g in zip(inputs, res))
    return res


def _grad_batched(outputs, inputs, grads, retain_graph, create_graph, allow_unused,
                  materialize_grads):
    """is_grads_batched: the first dim of each grad_output is a batch; one backward each."""
    from .. import stack
    n = grads[0].shape[0]
    per = [grad(outputs, inputs, tuple(g[b] for g in grads),
                retain_graph=True if b < n - 1 else retain_graph, create_graph=create_graph,
                allow_unused=allow_unused, materialize_grads=materialize_grads)
           for b in range(n)]
    return tuple(None if per[0][k] is None else stack([p[k] for p in per])
                 for k in range(len(inputs)))


from . import graph, function, functional  # noqa: E402,F401
from .gradcheck import gradcheck, gradgradcheck  # noqa: E402
from . import forward_ad  # noqa: E402,F401  (torch.autograd.forward_ad)
from .variable import Variable  # noqa: E402,F401  (torch.autograd.Variable, pre-0.4 programs)
