"""ember.distributed.autograd: backward across RPC boundaries (torch.distributed.autograd).

Note: gradients computed in a context are kept in that context (get_gradients), not in
`.grad`, so several trainers can run backward on shared parameters at once.
"""
from ._context import DistAutogradContext, current, local_pass, lookup, new_context, release

__all__ = ["context", "backward", "get_gradients", "is_available", "DistAutogradContext"]


def is_available():
    return True


class context:
    """with dist_autograd.context() as context_id: ... (one per thread at a time)."""

    def __enter__(self):
        from . import _context
        if current() is not None:
            raise RuntimeError("Already have an autograd context id for this thread.")
        self._ctx = new_context()
        _context.set_current(self._ctx)
        return self._ctx.context_id

    def __exit__(self, *exc):
        from . import _context
        _context.set_current(None)
        release(self._ctx.context_id)
        return False


def backward(context_id, roots, retain_graph=False):
    """Run backward from scalar `roots` through every worker the graph spans."""
    ctx = lookup(context_id)
    roots = list(roots)
    for i, r in enumerate(roots):
        if r.numel() != 1:
            raise RuntimeError(f"Tensors passed to distributed autograd backward must be "
                               f"scalars; root {i} has shape {tuple(r.shape)}")
        if not r.requires_grad:
            raise RuntimeError(f"element {i} of roots does not require grad and does not have "
                               "a grad_fn")
    local_pass(ctx, roots, [None] * len(roots), retain_graph).wait()


def get_gradients(context_id):
    """{tensor: accumulated gradient} for the leaves on this worker, in this context."""
    ctx = lookup(context_id)
    with ctx.lock:
        return {t: g for t, g in ctx.grads.values()}
