"""Distributed autograd contexts: the send/recv records of RPCs and the gradients.

Note: an RPC made inside a context that carries tensors requiring grad records, on the
sender, the sent tensors under a send id; the receiver gives the received tensors a
RecvRpcBackward node. Backward runs the local graph with the ordinary engine in
capture mode (gradients go to the context, never to `.grad`); when it reaches a
RecvRpcBackward it ships the gradients to the sender, which runs its own local pass from
the recorded tensors, and so on. The engine only runs nodes on a path to a wanted input,
so each RecvRpcBackward points at a private dummy leaf that is always wanted.
"""
import itertools
import threading

from ...autograd.engine import run_backward
from ...autograd.graph import AccumulateGrad, Node, gradient_edge
from ...futures import Future, collect_all

__all__ = ["DistAutogradContext", "current", "lookup", "new_context", "release"]

_contexts = {}
_lock = threading.Lock()
_tls = threading.local()
_ids = itertools.count(1)


class DistAutogradContext:
    def __init__(self, context_id):
        self.context_id = context_id
        self.sends = {}              # send id -> tensors sent (roots of a remote backward)
        self.grads = {}              # id(leaf) -> (leaf, grad)
        self.peers = set()           # workers that know this context
        self.lock = threading.Lock()
        self._send_ids = itertools.count(1)

    def new_send(self, tensors):
        sid = next(self._send_ids)
        with self.lock:
            self.sends[sid] = tensors
        return sid

    def _accumulate(self, leaf, g):
        with self.lock:
            old = self.grads.get(id(leaf))
            self.grads[id(leaf)] = (leaf, g if old is None else old[1] + g)


def _agent():
    from ..rpc import api
    return api._require_agent()


def current():
    return getattr(_tls, "ctx", None)


def set_current(ctx):
    prev = getattr(_tls, "ctx", None)
    _tls.ctx = ctx
    return prev


def new_context():
    rank = _agent().rank
    cid = (rank << 48) | next(_ids)
    ctx = DistAutogradContext(cid)
    with _lock:
        _contexts[cid] = ctx
    return ctx


def lookup(context_id, create=False, peer=None):
    with _lock:
        ctx = _contexts.get(context_id)
        if ctx is None:
            if not create:
                raise RuntimeError(f"Could not find autograd context with id: {context_id}")
            ctx = _contexts[context_id] = DistAutogradContext(context_id)
        if peer is not None:
            ctx.peers.add(peer)
        return ctx


def release(context_id, notify=True):
    from ..rpc import api
    with _lock:
        ctx = _contexts.pop(context_id, None)
    agent = api._agent
    if ctx is not None and notify and agent is not None:
        for p in ctx.peers:
            if p != agent.rank:
                agent.send(p, api.CTX_DEL, 0, context_id)


def clear_all():
    with _lock:
        _contexts.clear()


class RecvRpcBackward(Node):
    """Gradients of tensors received by RPC go back to the worker that sent them."""

    def __init__(self, ctx, src, send_id):
        super().__init__()
        import ember
        self.ctx, self.src, self.send_id = ctx, src, send_id
        self._dummy = ember.zeros((), requires_grad=True)
        self._dummy._dist_dummy = True
        self.next_functions = (gradient_edge(self._dummy),)
        self.num_outputs = 0
        self.metas = []

    def name(self):
        return "torch::distributed::autograd::RecvRpcBackward"

    def apply(self, grads):
        import ember
        from ..rpc import _wire, api
        grads = [ember.zeros(s, dtype=d) if g is None else g
                 for g, (s, d) in zip(grads, self.metas)]
        agent = _agent()
        frames = _wire.dumps(grads, self.src, api._Hooks(agent))
        fut = agent.request(self.src, api.BWD, (self.ctx.context_id, self.send_id,
                                                getattr(_tls, "retain", False)), frames,
                            timeout=0)
        _tls.pending.append(fut)
        return [None]


def attach_recv(hooks, t, info, src):
    ctx_id, send_id, k = info
    ctx = hooks.dctx if hooks.dctx is not None else lookup(ctx_id, create=True, peer=src)
    ctx.peers.add(src)
    node = hooks.recv.get(send_id)
    if node is None:
        node = hooks.recv[send_id] = RecvRpcBackward(ctx, src, send_id)
    while len(node.metas) <= k:
        node.metas.append(None)
    node.metas[k] = (tuple(t.shape), t.dtype)
    node.num_outputs = len(node.metas)
    t._grad_fn = node
    t._output_nr = k
    t._rg = True


def _leaves(roots):
    seen, out, stack = set(), [], []
    for r in roots:
        if r._grad_fn is None:
            out.append(r)
        else:
            stack.append(r._grad_fn)
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        if isinstance(n, AccumulateGrad):
            v = n.variable
            if v is not None:
                out.append(v)
            continue
        stack.extend(nx for nx, _ in n.next_functions)
    return out


def local_pass(ctx, roots, grads, retain_graph):
    """Run this worker's part of backward; returns a Future done when all downstream
    workers have finished theirs."""
    leaves = _leaves(roots)
    prev = (getattr(_tls, "pending", None), getattr(_tls, "retain", False))
    _tls.pending, _tls.retain = [], retain_graph
    try:
        res = run_backward(roots, grads, retain_graph, False, inputs=leaves, capture=True,
                           allow_unused=True) if leaves else ()
        pending = _tls.pending
    finally:
        _tls.pending, _tls.retain = prev
    pairs = [(leaf, g.detach()) for leaf, g in zip(leaves, res)
             if g is not None and not getattr(leaf, "_dist_dummy", False)]
    pairs = _post_accumulate_hooks(pairs)
    for leaf, g in pairs:
        ctx._accumulate(leaf, g)
    out = Future()

    def check(f):
        for p in f.value():
            if p._exc is not None:
                out.set_exception(p._exc)
                return
        out.set_result(None)
    collect_all(pending).add_done_callback(check)
    return out


def _post_accumulate_hooks(pairs):
    """Leaves with post-accumulate-grad hooks (DDP's reducer) see their gradient in `.grad`
    for the hooks' duration, as the engine would show it; what the hooks leave there (the
    all-reduced average, for DDP) is what the context keeps. `.grad` is restored after."""
    hooked = [(leaf, g) for leaf, g in pairs if leaf._post_acc_hooks]
    if not hooked:
        return pairs
    saved = {id(leaf): leaf.grad for leaf, _ in hooked}
    try:
        for leaf, g in hooked:
            leaf.grad = g.clone()
            for h in list(leaf._post_acc_hooks):
                h(leaf)
        out = {id(leaf): leaf.grad.detach() for leaf, _ in hooked}
    finally:
        for leaf, _ in hooked:
            leaf.grad = saved[id(leaf)]
    return [(leaf, out.get(id(leaf), g)) for leaf, g in pairs]


def backward_from_send(context_id, send_id, grads, retain_graph):
    ctx = lookup(context_id)
    with ctx.lock:
        roots = ctx.sends.get(send_id)
    if roots is None:
        raise RuntimeError(f"distributed autograd context {context_id} has no send {send_id}")
    return local_pass(ctx, list(roots), list(grads), retain_graph)
