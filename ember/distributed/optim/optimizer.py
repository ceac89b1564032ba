"""DistributedOptimizer: one local optimizer per parameter owner, stepped together.

Note: `step(context_id)` runs every owner's optimizer concurrently (one rpc_async
each) on the gradients stored in that distributed autograd context. Optimizers with a
functional form (SGD, Adam, AdamW) run without a global lock, so several trainers step
one parameter server at once; any other optimizer class runs as PyTorch's
_LocalOptimizer does: `.grad` filled from the context under one process-wide lock.
"""
import threading
from collections import defaultdict

from .. import autograd as dist_autograd
from .. import rpc
from ...futures import wait_all
from .functional import FUNCTIONAL

__all__ = ["DistributedOptimizer"]


class _LocalOptimizer:
    global_lock = threading.Lock()

    def __init__(self, optim_cls, local_params_rref, *args, **kwargs):
        self._params = [r.local_value() for r in local_params_rref]
        fn = FUNCTIONAL().get(optim_cls)
        self.functional = fn is not None
        self.optim = (fn or optim_cls)(self._params, *args, **kwargs)

    def step(self, autograd_ctx_id):
        ctx = dist_autograd.lookup(autograd_ctx_id)
        with ctx.lock:
            grads = [ctx.grads.get(id(p), (None, None))[1] for p in self._params]
        if self.functional:
            from ... import no_grad
            with no_grad():
                self.optim.step(grads)
            return
        with _LocalOptimizer.global_lock:
            for p, g in zip(self._params, grads):
                p.grad = g
            self.optim.step()


def _new_local_optimizer(optim_cls, local_params_rref, args, kwargs):
    return rpc.RRef(_LocalOptimizer(optim_cls, local_params_rref, *args, **kwargs))


def _local_optimizer_step(local_optim_rref, autograd_ctx_id):
    local_optim_rref.local_value().step(autograd_ctx_id)


class DistributedOptimizer:
    def __init__(self, optimizer_class, params_rref, *args, **kwargs):
        per_worker = defaultdict(list)
        for r in params_rref:
            per_worker[r.owner()].append(r)
        futs = [rpc.rpc_async(w, _new_local_optimizer,
                              args=(optimizer_class, rrefs, args, kwargs))
                for w, rrefs in per_worker.items()]
        self.remote_optimizers = wait_all(futs)

    def step(self, context_id):
        dist_autograd.lookup(context_id)         # a clear error for an unknown context
        futs = [rpc.rpc_async(o.owner(), _local_optimizer_step, args=(o, context_id))
                for o in self.remote_optimizers]
        wait_all(futs)
