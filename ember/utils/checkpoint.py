"""Activation checkpointing (torch.utils.checkpoint): run a segment without keeping its
activations, then run it again inside backward to get them, with the same RNG state so
dropout draws the same mask.

Both variants recompute in a custom autograd Function's backward. use_reentrant=True
(PyTorch's reentrant variant) runs an inner backward() that accumulates into the .grad of
tensors the segment uses; like PyTorch's, it does not work with autograd.grad()/inputs=.
use_reentrant=False runs the first forward under a dispatch mode that notes every tensor
requiring grad the segment reads (parameters, captured activations), makes them inputs of
the checkpoint node, and in backward returns their gradients from autograd.grad, so
autograd.grad(), backward(inputs=) and keyword arguments work as in PyTorch.
"""
import contextlib
import enum
import warnings

import ember
from ember.autograd import Function
from ember.utils._python_dispatch import TorchDispatchMode

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
           "CheckpointPolicy", "DefaultDeviceType", "check_backward_validity",
           "create_selective_checkpoint_contexts", "detach_variable", "get_device_states",
           "noop_context_fn", "set_checkpoint_debug_enabled", "set_checkpoint_early_stop",
           "set_device_states"]


class CheckpointError(RuntimeError):
    """Raised when a recomputation does not match the original forward."""


class CheckpointPolicy(enum.Enum):
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


class DefaultDeviceType:
    """The device type whose RNG state checkpoint saves; ember has only the cpu's."""
    _default_device_type = None

    @staticmethod
    def set_device_type(device="cuda"):
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        if not DefaultDeviceType._default_device_type:
            DefaultDeviceType._default_device_type = "cpu"
        return DefaultDeviceType._default_device_type


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    raise NotImplementedError("ember.utils.checkpoint: selective activation checkpointing "
                              "(create_selective_checkpoint_contexts / context_fn) is not "
                              "implemented; every op in a segment is recomputed")


def detach_variable(inputs):
    if isinstance(inputs, tuple):
        return tuple(_detach_inputs(inputs))
    raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                       f"{type(inputs).__name__}")


def check_backward_validity(inputs):
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, ember.Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


def get_device_states(*args):
    """Non-cpu devices whose RNG state a checkpoint saves: none in ember."""
    return [], []


def set_device_states(devices, states, *, device_type=None):
    if devices:
        raise NotImplementedError("ember.utils.checkpoint.set_device_states: ember keeps RNG "
                                  "state for the cpu only")


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Accepted for parity: ember's recomputation always runs the whole segment."""
    yield

_DEBUG = [None]


def set_checkpoint_debug_enabled(enabled):
    """Context manager kept for API parity: ember's recomputation has no extra debug trace."""
    import contextlib

    @contextlib.contextmanager
    def _ctx():
        prev, _DEBUG[0] = _DEBUG[0], enabled
        try:
            yield
        finally:
            _DEBUG[0] = prev
    return _ctx()


def _detach_inputs(inputs):
    out = []
    for x in inputs:
        if isinstance(x, ember.Tensor):
            y = x.detach()
            y.requires_grad_(x.requires_grad)
            out.append(y)
        else:
            out.append(x)
    return out



def _outputs_with_grads(outputs, grad_outputs):
    """The recomputed outputs that take part in backward (a tensor requiring grad with a
    gradient) paired with their gradients; both checkpoint flavours backprop through these."""
    if isinstance(outputs, ember.Tensor):
        outputs = (outputs,)
    outs, grads = [], []
    for o, g in zip(outputs, grad_outputs):
        if isinstance(o, ember.Tensor) and o.requires_grad and g is not None:
            outs.append(o)
            grads.append(g)
    return outs, grads

class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, kwargs, *args):
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        ctx.kwargs = kwargs
        if preserve_rng_state:
            ctx.fwd_rng_state = ember.get_rng_state()
        ctx.had_autocast = ember.is_autocast_enabled("cpu")
        ctx.autocast_dtype = ember.get_autocast_dtype("cpu")
        tensor_idx, tensors, ctx.inputs = [], [], []
        for i, a in enumerate(args):
            if isinstance(a, ember.Tensor):
                tensor_idx.append(i)
                tensors.append(a)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(a)
        ctx.tensor_indices = tensor_idx
        ctx.save_for_backward(*tensors)
        with ember.no_grad():
            outputs = run_function(*args, **kwargs)
        return outputs

    @staticmethod
    def backward(ctx, *grad_outputs):
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        detached = _detach_inputs(inputs)
        with ember.random.fork_rng(enabled=ctx.preserve_rng_state):
            if ctx.preserve_rng_state:
                ember.set_rng_state(ctx.fwd_rng_state)
            with ember.enable_grad(), ember.autocast("cpu", dtype=ctx.autocast_dtype,
                                                     enabled=ctx.had_autocast):
                outputs = ctx.run_function(*detached, **ctx.kwargs)
        outs, grads = _outputs_with_grads(outputs, grad_outputs)
        if not outs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() "
                               "is not necessary")
        ember.autograd.backward(outs, grads)
        in_grads = tuple(x.grad if isinstance(x, ember.Tensor) else None for x in detached)
        return (None, None, None) + in_grads


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default",
               debug=False, preserve_rng_state=True, **kwargs):
    """Runs `function(*args, **kwargs)` without saving activations; recomputes in backward."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed "
                      "explicitly. Starting in PyTorch 2.9, calling checkpoint without "
                      "use_reentrant will raise an exception. use_reentrant=False is "
                      "recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True. Refer to docs for more details on the "
                      "differences between the two variants.", stacklevel=2)
        use_reentrant = True
    if context_fn is not None and context_fn is not noop_context_fn:
        raise NotImplementedError("ember.utils.checkpoint: context_fn (selective activation "
                                  "checkpointing) is not implemented")
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
        if ember.is_grad_enabled() and not any(isinstance(a, ember.Tensor) and a.requires_grad
                                               for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                          stacklevel=2)
        return CheckpointFunction.apply(function, preserve_rng_state, {}, *args)
    if not ember.is_grad_enabled():
        return function(*args, **kwargs)
    return _checkpoint_without_reentrant(function, preserve_rng_state, args, kwargs)


def _flat(items):
    for x in items:
        if isinstance(x, (list, tuple)):
            yield from _flat(x)
        elif isinstance(x, dict):
            yield from _flat(list(x.values()))
        else:
            yield x


class _GradInputRecorder(TorchDispatchMode):
    """Notes the tensors requiring grad that the ops of a no-grad forward read."""

    def __init__(self, skip_ids):
        super().__init__()
        self.found = {}
        self._skip = skip_ids

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        for a in _flat([args, kwargs]):
            if isinstance(a, ember.Tensor) and a.requires_grad and id(a) not in self._skip:
                self.found.setdefault(id(a), a)
        return func(*args, **kwargs)


class _NonReentrantCheckpoint(Function):
    @staticmethod
    def forward(ctx, run_function, rng_state, kwargs, outputs_box, n_args, *inputs):
        ctx.run_function, ctx.rng_state, ctx.kwargs = run_function, rng_state, kwargs
        ctx.args, ctx.captured = list(inputs[:n_args]), list(inputs[n_args:])
        return outputs_box[0]

    @staticmethod
    def backward(ctx, *grad_outputs):
        detached = _detach_inputs(ctx.args)
        with ember.random.fork_rng(enabled=ctx.rng_state is not None):
            if ctx.rng_state is not None:
                ember.set_rng_state(ctx.rng_state)
            with ember.enable_grad():
                outputs = ctx.run_function(*detached, **ctx.kwargs)
        outs, grads = _outputs_with_grads(outputs, grad_outputs)
        arg_targets = [i for i, x in enumerate(detached)
                       if isinstance(x, ember.Tensor) and x.requires_grad]
        targets = [detached[i] for i in arg_targets] + ctx.captured
        got = ember.autograd.grad(outs, targets, grads, allow_unused=True) if outs and targets \
            else [None] * len(targets)
        arg_grads = [None] * len(detached)
        for i, g in zip(arg_targets, got[:len(arg_targets)]):
            arg_grads[i] = g
        return (None,) * 5 + tuple(arg_grads) + tuple(got[len(arg_targets):])


def _checkpoint_without_reentrant(function, preserve_rng_state, args, kwargs):
    rng_state = ember.get_rng_state() if preserve_rng_state else None
    recorder = _GradInputRecorder({id(a) for a in args})
    with ember.no_grad(), recorder:
        outputs = function(*args, **kwargs)
    captured = list(recorder.found.values())
    if not captured and not any(isinstance(a, ember.Tensor) and a.requires_grad
                                for a in args):
        return outputs
    return _NonReentrantCheckpoint.apply(function, rng_state, kwargs, [outputs], len(args),
                                         *args, *captured)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Checkpoints a Sequential (or list of modules) in `segments` chunks; the last chunk
    runs normally."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant "
                      "parameter should be passed explicitly. In version 2.9 we will raise an "
                      "exception if use_reentrant is not passed. use_reentrant=False is "
                      "recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True. Refer to docs for more details on the "
                      "differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(input):
            for j in range(start, end + 1):
                input = functions[j](input)
            return input
        return forward

    if isinstance(functions, ember.nn.Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input,
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)
