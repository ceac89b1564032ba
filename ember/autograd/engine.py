"""The backward engine: dependency counting, then one sweep in topological order.

Note: `run_backward` serves both `Tensor.backward` (accumulate into leaves, or only
into `inputs=`) and `autograd.grad` (capture the gradients of `inputs`, touch no
`.grad`). Only nodes on a path to a wanted edge run. Gradients a vjp returns are
summed back to the input's shape and cast to its dtype here, as PyTorch's
validate_outputs does, so op formulas may ignore broadcasting and promotion.
"""
import heapq

from .._dispatch import STATE
from .._tensor import Tensor
from .graph import AccumulateGrad, gradient_edge, _ANOMALY


def _check_root(t, i):
    if not t._rg:
        raise RuntimeError(f"element {i} of tensors does not require grad and does not have a "
                           "grad_fn")


def _root_grad(t, g, i, create_graph):
    from ..ops.creation import ones_like
    if g is None:
        if t._data.size != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        if not (t._dtype.is_floating_point):
            raise RuntimeError(f"grad can be implicitly created only for real scalar outputs "
                               f"but got {t._dtype}")
        return ones_like(t)
    if not isinstance(g, Tensor):
        from ..ops.creation import tensor as _tensor
        g = _tensor(g, dtype=t._dtype)
    if tuple(g.shape) != tuple(t.shape):
        raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                           f"{g.shape} and output[{i}] has a shape of {t.shape}.")
    return g if create_graph else g.detach()


def run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs=None,
                 capture=False, allow_unused=False):
    for i, t in enumerate(tensors):
        _check_root(t, i)
    grads = [_root_grad(t, g, i, create_graph) for i, (t, g) in enumerate(zip(tensors, grad_tensors))]
    roots = [gradient_edge(t) for t in tensors]
    if retain_graph is None:
        retain_graph = create_graph

    targets = None
    if inputs is not None:
        targets = {}
        for k, x in enumerate(inputs):
            if not isinstance(x, Tensor):
                raise TypeError("inputs must be Tensors")
            if not x._rg:
                raise RuntimeError(f"One of the differentiated Tensors does not require grad")
            node, nr = gradient_edge(x)
            targets.setdefault((node, nr), []).append(k)

    deps, needed = _dependencies([n for n, _ in roots], targets)

    buffers = {}
    for (node, nr), g in zip(roots, grads):
        _add_to_buffer(buffers, node, nr, g)

    captured = [None] * (len(inputs) if inputs is not None else 0)
    handed = set(id(g._storage) for g in grads)
    ready = [(-n._sequence_nr, id(n), n) for n in dict.fromkeys(n for n, _ in roots)
             if deps.get(n, 0) == 0]
    heapq.heapify(ready)
    prev = STATE.grad_enabled
    STATE.grad_enabled = create_graph
    try:
        while ready:
            node = heapq.heappop(ready)[2]
            gin = buffers.pop(node, None) or [None] * node.num_outputs
            gin = _run_pre_hooks(node, gin)
            if targets is not None:
                for nr, g in enumerate(gin):
                    ks = targets.get((node, nr))
                    if ks is not None:
                        for k in ks:
                            captured[k] = g
            if isinstance(node, AccumulateGrad):
                if not capture and (targets is None or (node, 0) in targets):
                    _accumulate(node.variable, gin[0], create_graph, handed)
                continue
            if needed is not None and node not in needed:
                continue
            if all(g is None for g in gin):
                outs = [None] * len(node.next_functions)
            else:
                outs = _apply(node, gin)
                if not retain_graph:
                    node.release()
            if node._hooks:
                for h in node._hooks:
                    r = h(tuple(outs), tuple(gin))
                    if r is not None:
                        outs = list(r)
            for (nxt, nr), g in zip(node.next_functions, outs):
                if nxt is None:
                    continue
                if g is not None:
                    _add_to_buffer(buffers, nxt, nr, g)
                d = deps[nxt] - 1
                deps[nxt] = d
                if d == 0:
                    heapq.heappush(ready, (-nxt._sequence_nr, id(nxt), nxt))
    finally:
        STATE.grad_enabled = prev

    if capture:
        for k, (x, g) in enumerate(zip(inputs, captured)):
            if g is None and not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have "
                                   "been used in the graph. Set allow_unused=True if this is "
                                   "the desired behavior.")
        return tuple(captured)
    return None


def _dependencies(roots, targets):
    """Count, for each node, the edges that feed it; find the nodes that lead to targets."""
    deps = {}
    seen = set()
    order = []
    stack = list(roots)
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        order.append(n)
        for nxt, _ in n.next_functions:
            if nxt is not None:
                deps[nxt] = deps.get(nxt, 0) + 1
                if nxt not in seen:
                    stack.append(nxt)
    if targets is None:
        return deps, None
    target_nodes = {n for n, _ in targets}
    needed = set()
    # a node is needed if it is a target or feeds a needed node (iterate to a fixed point
    # over the reverse topological order given by sequence numbers)
    for n in sorted(order, key=lambda n: n._sequence_nr):
        if n in target_nodes or any(nx in needed for nx, _ in n.next_functions if nx is not None):
            needed.add(n)
    return deps, needed


def _add_to_buffer(buffers, node, nr, g):
    buf = buffers.get(node)
    if buf is None:
        buf = [None] * node.num_outputs
        buffers[node] = buf
    buf[nr] = g if buf[nr] is None else buf[nr] + g


def _run_pre_hooks(node, gin):
    if node._pre_hooks:
        gin = list(gin)
        for nr, hooks in node._pre_hooks.items():
            for h in list(hooks):
                if gin[nr] is None:
                    continue
                r = h(gin[nr])
                if r is not None:
                    gin[nr] = r
    if node._node_prehooks:
        for h in node._node_prehooks:
            r = h(tuple(gin))
            if r is not None:
                gin = list(r)
    return gin


def _apply(node, gin):
    if _ANOMALY.enabled:
        try:
            outs = node.apply(gin)
        except Exception as e:
            if node._anomaly_trace:
                import warnings
                warnings.warn(f"Error detected in {node.name()}. Traceback of forward call "
                              f"that caused the error:\n{node._anomaly_trace}", stacklevel=2)
                e.add_note(f"Traceback of forward call that caused the error:\n"
                           f"{node._anomaly_trace}")
            raise
        if _ANOMALY.check_nan:
            for i, g in enumerate(outs):
                if g is not None and (g.isnan().any().item()):
                    raise RuntimeError(f"Function '{node.name()}' returned nan values in its "
                                       f"{i}th output.")
    else:
        outs = node.apply(gin)
    outs = list(outs)
    if len(outs) != len(node.next_functions):
        raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                           f"(expected {len(node.next_functions)}, got {len(outs)})")
    meta = getattr(node, "ctx", None)
    shapes = getattr(meta, "shapes", None)
    if shapes is not None:
        for i, g in enumerate(outs):
            if g is not None:
                outs[i] = _validate(node, i, g, shapes[i], meta.dtypes[i])
    return outs


def _validate(node, i, g, shape, dtype):
    if not isinstance(g, Tensor):
        raise TypeError(f"{node.name()}: gradient {i} is {type(g).__name__}, not a Tensor")
    if g._data.shape != shape:
        g = g.sum_to_size(shape) if _expandable(shape, g._data.shape) else _shape_error(node, i, g, shape)
    if g._dtype is not dtype:
        if g._dtype.is_complex and not dtype.is_complex:
            g = g.real
        g = g.to(dtype)
    return g


def _expandable(shape, target):
    if len(shape) > len(target):
        return False
    for s, t in zip(reversed(shape), reversed(target)):
        if s != t and s != 1:
            return False
    return True


def _shape_error(node, i, g, shape):
    raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index {i} - "
                       f"got {list(g.shape)} but expected shape compatible with {list(shape)}")


def _accumulate(var, g, create_graph, handed):
    if g is None:
        return
    if var._hooks:
        for h in var._hooks:
            r = h(g)
            if r is not None:
                g = r
    if g._data.shape != var._data.shape:
        g = g.sum_to_size(var.shape)
    if g._dtype is not var._dtype:
        g = g.to(var._dtype)
    old = var.grad
    if old is None:
        if not create_graph:
            sid = id(g._storage)
            g = g.detach() if sid not in handed else g.detach().clone()
            handed.add(id(g._storage))
        var.grad = g
    elif create_graph or STATE.grad_enabled:
        var.grad = old + g
    else:
        old.add_(g)
    if var._post_acc_hooks:
        for h in var._post_acc_hooks:
            h(var)
