"""ember.func (torch.func): composable function transforms — vmap, grad, grad_and_value,
vjp, jvp, linearize, jacrev, jacfwd, hessian, functional_call, stack_module_state."""
from .._functorch.eager_transforms import (grad, grad_and_value, hessian, jacfwd,  # noqa: F401
                                           jacrev, jvp, linearize, vjp)
from .._functorch.module_state import stack_module_state  # noqa: F401
from .._functorch.vmap import vmap  # noqa: F401
from ..nn.utils.stateless import functional_call  # noqa: F401

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd",
           "hessian", "functional_call", "stack_module_state"]
