"""The backward engine: dependency counting, then one sweep in topological order.

Note: `run_backward` serves both `Tensor.backward` (accumulate into leaves, or only
into `inputs=`) and `autograd.grad` (capture the gradients of `inputs`, touch no
`.grad`). Only nodes on a path to a wanted edge run. Per node, as in PyTorch's
engine: tensor pre-hooks (retain_grad's last), capture, node pre-hooks, the
backward, post-hooks. Gradients a backward returns are summed back to the input's
shape and cast to its dtype here (PyTorch's validate_outputs), so op formulas may
ignore broadcasting and promotion.
Anomaly detection and the profiler's backward events are node wrappers
(`add_node_wrapper`), registered while they are on, ranked like the dispatch modes;
with none registered, a node's backward runs with no extra test.
"""
import heapq

import numpy as np

from .._dispatch import STATE, TF
from .._tensor import Tensor, wrap
from .graph import AccumulateGrad, gradient_edge

# Wrappers around each backward node's apply: [rank, wrapper(node, gin, call), count],
# sorted by rank (lowest outermost); `call(gin)` goes on to the next one, then to
# node.apply. _WRAPPED[0] is the composed callable, None when there is none.
_WRAPPERS = []
_WRAPPED = [None]


def add_node_wrapper(rank, wrapper):
    """Wrap every backward node's apply in `wrapper(node, gin, call)` until removed
    (adding one twice needs two removals)."""
    for w in _WRAPPERS:
        if w[1] is wrapper:
            w[2] += 1
            return
    _WRAPPERS.append([rank, wrapper, 1])
    _WRAPPERS.sort(key=lambda w: w[0])
    _compose()


def remove_node_wrapper(wrapper):
    for i, w in enumerate(_WRAPPERS):
        if w[1] is wrapper:
            w[2] -= 1
            if not w[2]:
                del _WRAPPERS[i]
                _compose()
            return


def _compose():
    fns = [w[1] for w in _WRAPPERS]

    def call_at(k):
        if k == len(fns):
            return lambda node, gin: node.apply(gin)
        fn, inner = fns[k], call_at(k + 1)
        return lambda node, gin: fn(node, gin, lambda g: inner(node, g))
    _WRAPPED[0] = call_at(0) if fns else None


def _check_root(t, i):
    if not isinstance(t, Tensor):
        raise TypeError(f"element {i} of tensors is {type(t).__name__}, not a Tensor")
    if not t._rg:
        raise RuntimeError(f"element {i} of tensors does not require grad and does not have a "
                           "grad_fn")


def _root_grad(t, g, i, create_graph):
    if g is None:
        a = t._data
        if a.size != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        dt = t._dtype
        if not dt.is_floating_point:
            raise RuntimeError(f"grad can be implicitly created only for real scalar outputs "
                               f"but got {dt}")
        if t._backend == "cpu" and not STATE.modes and not TF.active:   # ones_like, directly
            return wrap(np.array(1, dt.np).reshape(a.shape) if a.ndim else np.array(1, dt.np),
                        dt)
        from ..ops.creation import ones_like
        return ones_like(t)
    if not isinstance(g, Tensor):
        from ..ops.creation import tensor as _tensor
        g = _tensor(g, dtype=t._dtype)
    if tuple(g.shape) != tuple(t.shape):
        raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                           f"{g.shape} and output[{i}] has a shape of {t.shape}.")
    if t._dtype.is_complex != g._dtype.is_complex:
        raise RuntimeError(f"For complex Tensors, both grad_output and output are required to "
                           f"have the same dtype. Mismatch in dtype: grad_output[{i}] has a "
                           f"dtype of {g._dtype} and output[{i}] has a dtype of {t._dtype}.")
    return g if create_graph else g.detach()


def _targets(inputs, accumulate):
    """(node, output_nr) -> indices into inputs; non-leaf backward inputs retain grad."""
    targets = {}
    for k, x in enumerate(inputs):
        if not isinstance(x, Tensor):
            raise TypeError(f"inputs must be Tensors, but got {type(x).__name__}")
        if not x._rg:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        if accumulate and x._grad_fn is not None:
            x.retain_grad()
        targets.setdefault(gradient_edge(x), []).append(k)
    return targets


def run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs=None,
                 capture=False, allow_unused=False):
    for i, t in enumerate(tensors):
        _check_root(t, i)
    grads = [_root_grad(t, g, i, create_graph)
             for i, (t, g) in enumerate(zip(tensors, grad_tensors))]
    roots = [gradient_edge(t) for t in tensors]
    if retain_graph is None:
        retain_graph = create_graph
    targets = None if inputs is None else _targets(inputs, not capture)
    deps, needed = _dependencies([n for n, _ in roots], targets, not capture)
    visit = None if targets is None else needed | {n for n, _ in targets}

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
    prev_modes = STATE.modes
    if prev_modes:      # autocast does not apply to backward ops (PyTorch's rule)
        STATE.modes = [m for m in prev_modes if not getattr(m, "_off_in_backward", False)]
    prev_tf, STATE.tf_disabled = STATE.tf_disabled, True  # vjps see no __torch_function__
    try:
        while ready:
            node = heapq.heappop(ready)[2]
            if visit is not None and node not in visit:
                continue
            gin = buffers.pop(node, None) or [None] * node.num_outputs
            hooked = node._any_hooks         # one flag read instead of four per node
            if node.__class__ is AccumulateGrad:
                var = node.variable
                if not hooked and targets is None and var is not None and not var._hooks:
                    _accumulate(var, gin[0], create_graph, handed)    # the common case
                    continue
                gin = _tensor_pre_hooks(node, gin)
                if targets is not None:
                    for k in targets.get((node, 0), ()):
                        captured[k] = gin[0]
                if not capture:
                    gin = _node_pre_hooks(node, gin)
                    _accumulate(node.variable, gin[0], create_graph, handed)
                    _post_hooks(node, [], gin)
                continue
            if hooked and (node._pre_hooks or node._retain_hooks):
                gin = _tensor_pre_hooks(node, gin)
            if targets is not None:
                for nr, g in enumerate(gin):
                    for k in targets.get((node, nr), ()):
                        captured[k] = g
            if needed is not None and node not in needed:
                continue
            if hooked and node._node_prehooks:
                gin = _node_pre_hooks(node, gin)
            if (gin[0] is None if len(gin) == 1 else all(g is None for g in gin)) \
                    and node._skip_undefined:
                outs = [None] * len(node.next_functions)
            else:
                outs = _apply(node, gin, handed)
                if not retain_graph:
                    node.release()
            if hooked and node._hooks:
                outs = _post_hooks(node, outs, gin)
            for (nxt, nr), g in zip(node.next_functions, outs):
                if nxt is None:
                    continue
                if g is not None:               # _add_to_buffer, inlined: this is hot
                    buf = buffers.get(nxt)
                    if buf is None:
                        buf = buffers[nxt] = [None] * nxt.num_outputs
                        buf[nr] = g
                    else:
                        old = buf[nr]
                        buf[nr] = g if old is None else old + g
                d = deps[nxt] - 1
                deps[nxt] = d
                if d == 0:
                    heapq.heappush(ready, (-nxt._sequence_nr, id(nxt), nxt))
    finally:
        STATE.grad_enabled = prev
        STATE.modes = prev_modes
        STATE.tf_disabled = prev_tf

    if capture:
        for k, g in enumerate(captured):
            if g is None and not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {k} appears to not have "
                                   "been used in the graph. Set allow_unused=True if this is "
                                   "the desired behavior.")
        return tuple(captured)
    return None


def _dependencies(roots, targets, run_targets):
    """Count the edges that feed each node; with targets, find the nodes that must run.

    A node runs if it leads to a target; a target itself runs only when backward
    accumulates into it (autograd.grad just captures the gradient flowing into it).
    """
    deps = {}
    stack = list(dict.fromkeys(roots))    # a root given twice (grad([y, y])) is one node
    root_set = set(stack)
    while stack:
        n = stack.pop()
        for nxt, _ in n.next_functions:
            if nxt is not None:
                c = deps.get(nxt)
                if c is None:                # first edge into nxt: walk it once
                    deps[nxt] = 1
                    if nxt not in root_set:
                        stack.append(nxt)
                else:
                    deps[nxt] = c + 1
    if targets is None:
        return deps, None
    tnodes = {n for n, _ in targets}
    needed = set(tnodes) if run_targets else set()
    # iterative post-order DFS: a node is needed if a successor is needed or a target
    done = set()
    for r in roots:
        stack = [(r, iter(r.next_functions))]
        while stack:
            n, it = stack[-1]
            advanced = False
            for nxt, _ in it:
                if nxt is not None and nxt not in done:
                    stack.append((nxt, iter(nxt.next_functions)))
                    advanced = True
                    break
            if advanced:
                continue
            stack.pop()
            done.add(n)
            if n not in needed and any(nx in needed or nx in tnodes
                                       for nx, _ in n.next_functions):
                needed.add(n)
    return deps, needed


def _add_to_buffer(buffers, node, nr, g):
    buf = buffers.get(node)
    if buf is None:
        buf = [None] * node.num_outputs
        buffers[node] = buf
    buf[nr] = g if buf[nr] is None else buf[nr] + g


def _tensor_pre_hooks(node, gin):
    """Hooks registered on tensors (Tensor.register_hook / retain_grad), per output."""
    if isinstance(node, AccumulateGrad):
        var = node.variable
        hooks = var._hooks if var is not None else None
        if hooks and gin[0] is not None:
            g = gin[0]
            for h in list(hooks):
                r = h(g)
                if r is not None:
                    g = r
            gin = [g]
        return gin
    if node._pre_hooks:
        gin = list(gin)
        for nr, hooks in node._pre_hooks.items():
            for h in list(hooks):
                if gin[nr] is None:
                    continue
                r = h(gin[nr])
                if r is not None:
                    gin[nr] = r
    if node._retain_hooks:
        for nr, h in list(node._retain_hooks.items()):
            if gin[nr] is not None:
                h(gin[nr])
    return gin


def _node_pre_hooks(node, gin):
    if node._node_prehooks:
        for h in list(node._node_prehooks):
            r = h(tuple(gin))
            if r is not None:
                gin = _hook_result(h, r, len(gin))
    return gin


def _post_hooks(node, outs, gin):
    if node._hooks:
        for h in list(node._hooks):
            r = h(tuple(outs), tuple(gin))
            if r is not None:
                outs = _hook_result(h, r, len(outs))
    return outs


def _hook_result(hook, r, n):
    r = list(r) if isinstance(r, (tuple, list)) else [r]
    if len(r) != n:
        name = getattr(hook, "__name__", type(hook).__name__)
        raise RuntimeError(f"hook '{name}' has returned an incorrect number of values (got "
                           f"{len(r)}, but expected {n})")
    return r


def _apply(node, gin, handed):
    wrapped = _WRAPPED[0]
    outs = node.apply(gin) if wrapped is None else wrapped(node, gin)
    if outs.__class__ is not list:      # OpNode.apply returns a fresh list
        outs = list(outs)
    if len(outs) != len(node.next_functions):
        raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                           f"(expected {len(node.next_functions)}, got {len(outs)})")
    meta = node._input_meta
    if meta is not None:
        shapes, dtypes = meta
        for i, g in enumerate(outs):
            if g is not None and (g.__class__ is not Tensor or g._data.shape != shapes[i]
                                  or g._dtype is not dtypes[i]):
                outs[i] = _validate(node, i, g, shapes[i], dtypes[i])
    if node._user_grads:
        handed.update(id(g._storage) for g in outs if g is not None)
    return outs


def _validate(node, i, g, shape, dtype):
    if not isinstance(g, Tensor):
        raise TypeError(f"{node.name()}: gradient {i} is {type(g).__name__}, not a Tensor")
    if g._data.shape != shape:
        if not _expandable(shape, g._data.shape):
            _shape_error(node, i, g, shape)
        g = g.sum_to_size(shape)
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


_GRAD = Tensor.grad


def _accumulate(var, g, create_graph, handed):
    """AccumulateGrad: steal, copy (obeying the leaf's layout) or add into `.grad`."""
    if g is None or var is None:
        return
    if g._data.shape != var._data.shape:
        g = g.sum_to_size(var.shape)
    if g._dtype is not var._dtype:
        g = g.to(var._dtype)
    plain = type(var).grad is _GRAD     # not a subclass with its own .grad (sparse)
    old = var._grad if plain else var.grad
    if old is None:
        if create_graph:
            how = "clone"
        elif id(g._storage) in handed or not _obeys_layout(g, var):
            how = "copy"
        else:
            how = "steal"
            handed.add(id(g._storage))
    else:
        how = "add" if STATE.grad_enabled else "add_"
    if STATE.modes:                 # a mode sees the write as the accumulate_grad_ op
        from ..ops.effects import ACCUMULATE_GRAD_
        ACCUMULATE_GRAD_(var, g, how)
    elif how == "steal":
        if plain and g._device is var._device:  # shape, dtype match: the setter's checks
            var._grad = g._detach()
        else:
            var.grad = g.detach()
    elif how == "copy":
        var.grad = _copy_like(g, var)
    elif how == "clone":
        var.grad = g.clone()
    elif how == "add":
        var.grad = old + g
    else:
        old.add_(g)
    if var._post_acc_hooks:
        for h in list(var._post_acc_hooks):
            h(var)


def _dense(a):
    """Non-overlapping and dense: some permutation of the axes is C-contiguous."""
    order = sorted(range(a.ndim), key=lambda d: -abs(a.strides[d]))
    return np.transpose(a, order).flags.c_contiguous


def _obeys_layout(g, var):
    a, b = g._data, var._data
    if b.flags.c_contiguous or not _dense(b):
        return a.flags.c_contiguous
    return a.strides == b.strides


def _copy_like(g, var):
    """A fresh gradient laid out like `var` if it is dense, else contiguous."""
    if g._backend == "meta":       # meta/fake gradients have no data to copy
        return g.detach()
    b = var._data
    keep_layout = not b.flags.c_contiguous and _dense(b)
    out = np.empty_like(b) if keep_layout else np.empty(b.shape, b.dtype)
    np.copyto(out, g._data)
    return wrap(out, var._dtype)
