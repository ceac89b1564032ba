"""ember.overrides: the __torch_function__ protocol (torch.overrides).

Note: `__torch_function__` runs for every registry op (ember/_dispatch.py), with
`func` the op's registry entry; `handle_torch_function` lets a public function
that is not a single op opt in as a whole. Tensor subclasses keep their type
through ops by PyTorch's default rule (results are `as_subclass`-ed to the
subclass); `_disabled_torch_function_impl` opts a subclass out.
"""
from . import _dispatch
from ._dispatch import (DisableTorchFunctionSubclass, _disabled_torch_function_impl,  # noqa: F401
                        overloaded_args)
from ._tensor import Tensor
from .ops._registry import register
from .utils._python_dispatch import TorchDispatchMode  # noqa: F401

__all__ = ["TorchFunctionMode", "TorchDispatchMode", "has_torch_function",
           "handle_torch_function", "is_tensor_like", "DisableTorchFunctionSubclass"]


class TorchFunctionMode:
    """Base class: override `__torch_function__(func, types, args, kwargs)`; it sees
    every registry op called while the mode is entered."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError(f"{type(self).__name__} must override __torch_function__")

    def __enter__(self):
        _dispatch.push_tf_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        _dispatch.pop_tf_mode(self)

    @classmethod
    def push(cls, *args, **kwargs):
        return cls(*args, **kwargs)


def has_torch_function(relevant_args):
    """Would a call with these arguments go to a __torch_function__?"""
    st = _dispatch.STATE
    if st.tf_modes:
        return True
    return not st.tf_disabled and bool(overloaded_args(relevant_args))


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Route a public function's call through modes and subclasses' __torch_function__."""
    st = _dispatch.STATE
    if st.tf_modes:
        return _dispatch._tf_mode_dispatch(public_api, args, kwargs)
    return _dispatch.handle_torch_function(public_api, overloaded_args(relevant_args), args,
                                           kwargs)


def is_tensor_like(inp):
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


# `Tensor.as_subclass` of a tensor that requires grad is this op: the alias keeps
# self's autograd history (grad_fn AliasBackward0, as in PyTorch).
ALIAS = register("alias", lambda a: a.view(), view=True, save=(), vjp=lambda ctx, g: (g,),
                 meta=lambda a: (tuple(a.shape), a.dtype),
                 schema="alias(Tensor(a) self) -> Tensor(a)", tags=("prim",))


def alias(input):
    return _dispatch.dispatch(ALIAS, (input,))

