"""Custom autograd Functions: user-written forward and backward.

Note: as in PyTorch, `ctx` *is* the backward node: each Function subclass gets a
`<Name>Backward` node class (made by the metaclass), `apply` runs `forward` under
no_grad, then wires the outputs to a fresh node. Outputs that are inputs returned
as-is become aliases; inputs marked dirty get this node as their history (through
copy_'s rebasing, so a dirty view rewrites its base with CopySlices). The node's
backward runs the user's `backward` (in grad mode only under create_graph), checks
how many gradients came back, and drops the ones for non-tensor arguments.
"""
import functools
import inspect
import warnings

from .._dispatch import STATE
from .._tensor import Tensor, _alias
from .graph import Node, SavedTensor, gradient_edge, _NO_EDGE, _alias_op, _wref

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable",
           "InplaceFunction", "NestedIOFunction"]


class FunctionCtx:
    """What forward/setup_context sees: save tensors, mark outputs, set flags."""

    def save_for_backward(self, *tensors):
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} "
                                f"is of type {type(t).__name__}")
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        self.dirty_tensors = args

    def mark_shared_storage(self, *pairs):
        raise RuntimeError("mark_shared_storage is deprecated. Tensors with shared storages "
                           "are automatically tracked. Note that calls to `set_()` are not "
                           "tracked")

    def mark_non_differentiable(self, *args):
        self.non_differentiable = args

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)


class BackwardCFunction(Node, FunctionCtx):
    """The node of one Function call; also the `ctx` its forward and backward see."""
    _forward_cls = None
    _skip_undefined = False
    _user_grads = True
    materialize_grads = True
    to_save = None
    dirty_tensors = None
    non_differentiable = None

    def name(self):
        return type(self).__name__

    @property
    def saved_tensors(self):
        saved = self._saved
        if saved is None:
            return ()
        return tuple(None if s is None else s.unpack(self, self._saved_nr[i])
                     for i, s in enumerate(saved))

    saved_variables = saved_tensors
    _saved = None
    _saved_nr = ()

    def apply(self, grads):
        """Engine entry: run the user's backward with the incoming grads."""
        if self.materialize_grads:
            grads = [g if g is not None or meta is None else _zeros(meta)
                     for g, meta in zip(grads, self._out_meta)]
        res = _user_backward(self._forward_cls)(self, *grads)
        if not isinstance(res, tuple):
            res = (res,)
        return self._to_next(res)

    def _to_next(self, res):
        is_tensor = self._is_tensor_input
        n = len(is_tensor)
        if len(res) > n and all(r is None for r in res[n:]):
            res = res[:n]
        if len(res) != n:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of "
                               f"gradients (expected {n}, got {len(res)})")
        out = []
        for i, (r, t) in enumerate(zip(res, is_tensor)):
            if t:
                out.append(r)
            elif r is not None:
                raise RuntimeError(f"function {self.name()} returned a gradient different than "
                                   f"None at position {i + 1}, but the corresponding forward "
                                   "input was not a Variable")
        return out

    def release(self):
        if self._saved is not None:
            from .graph import FREED
            self._saved = tuple(None if s is None else FREED for s in self._saved)

    def __call__(self, *grads):
        return tuple(self.apply(list(grads)))


def _user_backward(cls):
    """The user's `backward`, or `vjp` (its alias); defining both is an error, as in torch."""
    bwd, vjp = cls.backward, cls.vjp
    if bwd is not Function.backward and vjp is not Function.vjp:
        raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not "
                           "allowed. You should only implement one of them.")
    return vjp if vjp is not Function.vjp else bwd


def _zeros(meta):
    from ..ops.creation import zeros
    shape, dtype = meta
    return zeros(shape, dtype=dtype)


class FunctionMeta(type):
    """Gives every Function subclass its own `<Name>Backward` node class."""

    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Subclass with staticmethods forward(ctx, *args) [or forward(*args) plus
    setup_context(ctx, inputs, output)] and backward(ctx, *grad_outputs)."""

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{self.__class__} should not be instantiated. Methods on autograd "
                      "functions are all static, so you should invoke them on the class itself. "
                      "Instantiating an autograd function will raise an error in a future "
                      "version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    @staticmethod
    def vjp(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        new_style = cls.setup_context is not Function.setup_context
        if new_style and kwargs:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, {}
        ctx = cls._backward_cls()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._rg for a in args)
        prev = STATE.grad_enabled
        STATE.grad_enabled = False
        try:
            if new_style:
                out = cls.forward(*args)
            else:
                out = cls.forward(ctx, *args, **kwargs)
        finally:
            STATE.grad_enabled = prev
        if new_style:
            cls.setup_context(ctx, args, out)
        executable = prev and any(ctx.needs_input_grad)
        return _wrap_outputs(ctx, args, out, executable)


def _wrap_outputs(ctx, args, out, executable):
    """Give the outputs this node as grad_fn; handle dirty, non-differentiable, aliases."""
    is_tuple = isinstance(out, tuple)
    outs = list(out) if is_tuple else [out]
    inputs = {id(a): a for a in args if isinstance(a, Tensor)}
    dirty = {id(t) for t in (ctx.dirty_tensors or ())}
    nondiff = {id(t) for t in (ctx.non_differentiable or ())}
    for t in ctx.dirty_tensors or ():
        t._storage.version += 1
        if not any(t is o for o in outs):
            raise RuntimeError("Some elements marked as dirty during the forward method were not "
                               "returned as output. The inputs that are modified inplace must "
                               "all be outputs of the Function.")
    if executable:
        ctx._is_tensor_input = tuple(isinstance(a, Tensor) for a in args)
        ctx.next_functions = tuple((gradient_edge(a) if a._rg else _NO_EDGE)
                                   for a in args if isinstance(a, Tensor))
        ctx._input_meta = ([a._data.shape for a in args if isinstance(a, Tensor)],
                           [a._dtype for a in args if isinstance(a, Tensor)])
    ctx.num_outputs = len(outs)
    meta = []
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            meta.append(None)
            continue
        meta.append((o._data.shape, o._dtype))
        is_input = id(o) in inputs
        skip = id(o) in nondiff or o._dtype._kind < 2
        if id(o) in dirty:
            if executable:
                _rebase_dirty(ctx, o, i)
            continue
        if is_input:
            o = outs[i] = _input_alias(o)
        if not executable:
            continue
        if skip:
            continue
        o._grad_fn, o._output_nr, o._rg = ctx, i, True
        if o._base is not None:
            o._custom_fn_view = True
            o._view_version = o._storage.version
    ctx._out_meta = meta
    if executable:
        _save(ctx, args, outs)
    elif ctx.to_save is not None:
        ctx._saved = tuple(None if t is None else SavedTensor(t) for t in ctx.to_save)
        ctx._saved_nr = (0,) * len(ctx._saved)
    return tuple(outs) if is_tuple else outs[0]


def _input_alias(t):
    """An input returned as-is comes back as a new tensor viewing it (torch: view_as);
    under a mode it is made by the alias op, so a recording sees where it comes from."""
    o = _alias(t, t._data) if not STATE.modes else _alias_op(t)
    o._base = t if t._base is None else t._base
    return o


def _rebase_dirty(ctx, t, i):
    """An input modified in place: its history becomes this node (CopySlices for views)."""
    from ..ops.copy import check_inplace_allowed, rebase_history
    check_inplace_allowed(t, dirty=True)
    src = _alias(t, t._data)
    src._grad_fn, src._output_nr, src._rg = ctx, i, True
    rebase_history(t, src)


def _save(ctx, args, outs):
    """Saved outputs are kept as detached aliases (no node<->tensor cycle)."""
    if ctx.to_save is None:
        return
    out_ids = {id(o): i for i, o in enumerate(outs) if isinstance(o, Tensor)}
    saved, nrs = [], []
    for t in ctx.to_save:
        if t is None:
            saved.append(None)
            nrs.append(0)
        elif id(t) in out_ids and t._grad_fn is ctx:
            saved.append(SavedTensor(_alias(t, t._data), True, _wref(t)))
            nrs.append(out_ids[id(t)])
        else:
            saved.append(SavedTensor(t))
            nrs.append(0)
    ctx._saved, ctx._saved_nr = tuple(saved), tuple(nrs)
    ctx.to_save = None


def once_differentiable(fn):
    """Run backward without recording; differentiating its result again raises."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        prev = STATE.grad_enabled
        STATE.grad_enabled = False
        try:
            outputs = fn(ctx, *args)
        finally:
            STATE.grad_enabled = prev
        if not prev:
            return outputs
        tup = outputs if isinstance(outputs, tuple) else (outputs,)
        if not any(isinstance(a, Tensor) and a._rg for a in args):
            return outputs
        node = _DelayedError("trying to differentiate twice a function that was marked with "
                             "@once_differentiable", len(tup))
        node.next_functions = tuple(_NO_EDGE for _ in tup)
        res = []
        for i, o in enumerate(tup):
            if isinstance(o, Tensor) and o._dtype._kind >= 2:
                o = _alias(o, o._data) if not STATE.modes else _alias_op(o)
                o._grad_fn, o._output_nr, o._rg = node, i, True
            res.append(o)
        return tuple(res) if isinstance(outputs, tuple) else res[0]
    return wrapper


class _DelayedError(Node):
    """A node that raises when backward reaches it (torch's DelayedError)."""

    def __init__(self, msg, num_outputs):
        super().__init__()
        self.msg = msg
        self.num_outputs = num_outputs

    def name(self):
        return "torch::autograd::DelayedError"

    def apply(self, grads):
        raise RuntimeError(self.msg)


class InplaceFunction(Function):
    """A Function with an `inplace` flag (torch.autograd.function.InplaceFunction)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("NestedIOFunction (legacy nested-input Functions) is not "
                                  "supported by ember")

