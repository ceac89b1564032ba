"""Decompose a captured graph into primitives (DESIGN §7.4 step 1).

Why a graph pass of its own: each composite node's `decomp` (ember ops) is run on the
node's fake values under a recording mode, so what it dispatches (recursively decomposed)
becomes new nodes with `meta["val"]`; primitives and non-registry calls are copied as they
are. Composites without a decomposition, or whose decomposition fails on fake inputs, stay
whole (an extern call to their eager kernel).
"""
from .._modes import TorchDispatchMode
from .._tensor import Tensor
from ..fx import Graph, GraphModule
from ..ops._registry import OpDef
from .ir import flat

__all__ = ["decompose_graph"]


class _Record(TorchDispatchMode):
    def __init__(self, graph, node_of):
        super().__init__()
        self.graph, self.node_of = graph, node_of

    def _arg(self, a):
        if isinstance(a, Tensor):
            n = self.node_of.get(id(a))
            if n is None:
                raise _Opaque("a tensor made outside the graph")
            return n
        if isinstance(a, (list, tuple)):
            return type(a)(self._arg(x) for x in a)
        return a

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if kwargs:
            args = func._bind(args, kwargs)
        if func.decomp is not None:
            with self:
                return func.decomp(*args)
        nargs = self._arg(args)
        out = func(*args)
        node = self.graph.call_function(func, nargs)
        node.meta["val"] = out
        _bind(self.node_of, out, node, self.graph)
        return out


class _Opaque(Exception):
    pass


def _bind(node_of, out, node, graph):
    import operator
    if isinstance(out, Tensor):
        node_of[id(out)] = node
    elif isinstance(out, (tuple, list)):
        for i, t in enumerate(out):
            if isinstance(t, Tensor):
                g = graph.call_function(operator.getitem, (node, i))
                g.meta["val"] = t
                node_of[id(t)] = g


def decompose_graph(gm):
    """A new GraphModule computing the same as `gm` with composites replaced by prims."""
    g = Graph()
    env, node_of, keep = {}, {}, []

    def m(a):
        if hasattr(a, "op"):
            return env[a]
        if isinstance(a, (list, tuple)):
            return type(a)(m(x) for x in a)
        if isinstance(a, dict):
            return {k: m(v) for k, v in a.items()}
        return a

    def fake_of(a):
        if hasattr(a, "op"):
            v = a.meta.get("val")
            if v is None and not isinstance(a.target, OpDef):
                raise _Opaque("no value")
            return v
        if isinstance(a, (list, tuple)):
            return type(a)(fake_of(x) for x in a)
        return a

    changed = False
    for n in gm.graph.nodes:
        if n.op == "call_function" and isinstance(n.target, OpDef) \
                and n.target.decomp is not None and not (n.target.tags & {"inplace"}):
            mark = list(g.nodes)[-1] if len(g.nodes) else None
            try:
                fargs = fake_of(n.args)
                fkw = {k: fake_of(v) for k, v in n.kwargs.items()}
                for a, fa in zip(flat(n.args), flat(fargs)):
                    if isinstance(fa, Tensor):
                        node_of[id(fa)] = env[a]
                        keep.append(fa)
                with _Record(g, node_of):
                    out = n.target(*fargs, **fkw)
                new = _result_node(out, node_of, g)
                if new is not None and not _same_meta(out, n.meta.get("val")):
                    new = None        # the decomposition disagrees with the op's meta
                if new is not None:
                    env[n] = new
                    changed = True
                    continue
            except Exception:       # noqa: BLE001  (keep the composite whole)
                pass
            _drop_after(g, mark)
        new = g.node_copy(n, m)
        env[n] = new
        if isinstance(n.meta.get("val"), Tensor):
            node_of[id(n.meta["val"])] = new
    if not changed:
        return gm
    g.eliminate_dead_code()
    return GraphModule(gm, g)


def _same_meta(out, val):
    """Whether a decomposition's result has the composite's dtype and shape (a
    decomposition that promotes differently from the eager kernel is not used)."""
    if not isinstance(val, Tensor):
        return True
    return out.dtype == val.dtype and [str(a) for a in out.shape] == [str(b) for b in val.shape]


def _result_node(out, node_of, g):
    if isinstance(out, Tensor):
        return node_of.get(id(out))
    return None


def _drop_after(g, mark):
    nodes = list(g.nodes)
    start = 0 if mark is None else nodes.index(mark) + 1
    for n in reversed(nodes[start:]):
        g.erase_node(n)


