"""Split a joint forward+backward graph into a forward and a backward graph
(torch._functorch.partitioners).

Why: the joint graph computes outputs and gradients in one go; training needs the forward
now and the backward later, so some forward values must be saved in between. What to save
decides activation memory:
  - `default_partition` saves every forward value the backward reads (what eager
    autograd keeps);
  - `min_cut_rematerialization_partition` saves the smallest set (in bytes) that
    separates the inputs from the backward, recomputing cheap ops (pointwise, views) in
    the backward instead of saving their outputs. Random and expensive ops (matmul,
    conv, reductions) are never recomputed. The cut is a max-flow/min-cut on the
    node-split graph (each node is an in->out edge weighted by its output's size), solved
    here by Edmonds-Karp: graphs are a few thousand nodes, so a dependency is not worth it.

Joint graph contract (as PyTorch's): placeholders named `primals_*` then `tangents_*`;
one output tuple: the forward outputs (first `num_fwd_outputs`), then one gradient (or
None) per primal. The forward graph returns (*outputs, *saved); the backward graph takes
(*saved, *tangents) and returns the gradients.
"""
import math
import operator
from collections import deque

from .._tensor import Tensor
from ..fx import Graph, GraphModule
from ..fx.node import Node, map_arg
from ..ops._registry import OpDef

__all__ = ["default_partition", "min_cut_rematerialization_partition"]


class _Joint:
    """The facts both partitioners need about a joint graph."""

    def __init__(self, gm, num_fwd_outputs):
        self.gm = gm
        nodes = list(gm.graph.nodes)
        self.nodes = nodes
        self.order = {n: i for i, n in enumerate(nodes)}
        self.primals = [n for n in nodes if n.op == "placeholder" and n.name.startswith("primals")]
        self.tangents = [n for n in nodes if n.op == "placeholder"
                         and n.name.startswith("tangents")]
        out = next(n for n in nodes if n.op == "output")
        outs = list(out.args[0])
        self.fw_outputs = outs[:num_fwd_outputs]
        self.bw_outputs = outs[num_fwd_outputs:]
        self.tangent_dep = set(self.tangents)
        for n in nodes:
            if n.op == "call_function" and any(i in self.tangent_dep for i in n.all_input_nodes):
                self.tangent_dep.add(n)
        self.fw_required = _ancestors([o for o in self.fw_outputs if isinstance(o, Node)])
        self.bw_required = _ancestors([o for o in self.bw_outputs if isinstance(o, Node)])

    def tensor_node(self, n):
        return isinstance(n.meta.get("val"), Tensor)


def _ancestors(outs):
    seen, stack = set(), list(outs)
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        stack.extend(n.all_input_nodes)
    return seen


def _extract(joint, inputs, outputs, name):
    """A GraphModule computing `outputs` from `inputs` (nodes of the joint graph), with
    the joint's nodes between them copied in program order; get_attr constants are
    copied wherever used."""
    inputs = list(inputs)
    input_set = set(inputs)
    needed, stack = set(), [o for o in outputs if isinstance(o, Node)]
    while stack:
        n = stack.pop()
        if n in needed:
            continue
        needed.add(n)
        if n in input_set:
            continue
        if n.op == "placeholder":
            raise RuntimeError(f"partition: {name} graph needs {n.name}, which is neither "
                               "one of its inputs nor saved by the forward")
        stack.extend(n.all_input_nodes)
    g = Graph()
    env = {}
    for n in inputs:
        ph = g.placeholder(n.name)
        ph.meta.update(n.meta)
        env[n] = ph
    for n in joint.nodes:
        if n in needed and n not in input_set and n.op != "output":
            env[n] = g.node_copy(n, lambda x: env[x])
    g.output(tuple(map_arg(o, lambda x: env[x]) for o in outputs))
    return GraphModule(joint.gm, g, name)


def _with_items(joint, saved):
    """A multi-output node cannot be saved whole: save its getitem users instead."""
    out = []
    for n in saved:
        if isinstance(n.meta.get("val"), (tuple, list)):
            out.extend(u for u in n.users if u.target is operator.getitem)
        else:
            out.append(n)
    return sorted(set(out), key=joint.order.get)


def _split(joint, saved):
    saved = _with_items(joint, saved)
    fw = _extract(joint, joint.primals, joint.fw_outputs + saved, "ForwardGraph")
    bw = _extract(joint, saved + joint.tangents, joint.bw_outputs, "BackwardGraph")
    fw.meta_saved = [n.name for n in saved]
    bw.meta_saved = fw.meta_saved
    return fw, bw


def default_partition(joint_module, _joint_inputs=None, *, num_fwd_outputs):
    """Forward = what the forward outputs need; saved = every forward value the backward
    reads (PyTorch's default_partition)."""
    joint = _Joint(joint_module, num_fwd_outputs)
    fw_nodes = joint.fw_required | set(joint.primals)
    saved = []
    for n in joint.nodes:
        if n in fw_nodes and n.op != "get_attr" and any(
                u not in fw_nodes and u in joint.bw_required for u in n.users):
            saved.append(n)
    return _split(joint, saved)


# ---------------------------------------------------------------------------- min-cut

def _recomputable(n):
    """Cheap to compute again in the backward: pointwise and view ops (not random),
    items of multi-output nodes and factories."""
    t = n.target
    if t is operator.getitem:
        return True
    if isinstance(t, OpDef):
        if "random" in t.tags or "inplace" in t.tags:
            return False
        return bool(t.tags & {"pointwise", "view", "factory"})
    return False


def _size_of(n):
    v = n.meta.get("val")
    if isinstance(v, Tensor):
        numel = 1
        for s in v.shape:
            numel *= int(s)
        return numel * v.element_size()
    if isinstance(v, int):              # a size (SymInt): as cheap to save as anything
        return 1
    return math.inf


def min_cut_rematerialization_partition(joint_module, _joint_inputs=None, compiler="inductor",
                                        *, num_fwd_outputs, **_ignored):
    """Save the byte-smallest set of forward values that cuts the primals off from the
    backward; recompute the rest (PyTorch's min_cut_rematerialization_partition)."""
    joint = _Joint(joint_module, num_fwd_outputs)
    flow = _FlowGraph()
    relevant = joint.fw_required | joint.bw_required
    idx = joint.order                   # vertices are ints: 2i = node i in, 2i+1 = out
    source, sink = -1, -2
    for n in joint.nodes:
        if n not in relevant or n.op in ("output", "get_attr"):
            continue
        nin, nout = 2 * idx[n], 2 * idx[n] + 1
        if n in joint.tangent_dep:
            flow.add_edge(nin, sink, math.inf)
            continue
        if n.op == "placeholder":
            flow.add_edge(source, nin, math.inf)
        elif not _recomputable(n) and n in joint.fw_required:
            flow.add_edge(source, nin, math.inf)
        flow.add_edge(nin, nout, _size_of(n))
        for u in n.users:
            if u in relevant and u.op != "output":
                flow.add_edge(nout, 2 * idx[u], math.inf)
    reach = flow.min_cut_source_side(source, sink)
    saved = [n for n in joint.nodes
             if 2 * idx[n] in reach and 2 * idx[n] + 1 not in reach and n.op != "get_attr"]
    return _split(joint, saved)


class _FlowGraph:
    """Directed capacities and Edmonds-Karp max-flow (BFS shortest augmenting paths)."""

    def __init__(self):
        self.cap = {}         # u -> {v: residual capacity}

    def add_edge(self, u, v, c):
        self.cap.setdefault(u, {})
        self.cap.setdefault(v, {})
        self.cap[u][v] = self.cap[u].get(v, 0) + c
        self.cap[v].setdefault(u, 0)

    def _bfs(self, s, t):
        parent = {s: None}
        q = deque([s])
        while q:
            u = q.popleft()
            for v, c in self.cap[u].items():
                if c > 0 and v not in parent:
                    parent[v] = u
                    if v == t:
                        return parent
                    q.append(v)
        return parent

    def min_cut_source_side(self, s, t):
        """Runs max-flow, then returns the vertices reachable from s in the residual
        graph (the source side of a minimum cut)."""
        if s not in self.cap or t not in self.cap:
            return set(self.cap) if s in self.cap else set()
        while True:
            parent = self._bfs(s, t)
            if t not in parent:
                return set(parent)
            path, v = [], t
            while parent[v] is not None:
                path.append((parent[v], v))
                v = parent[v]
            push = min(self.cap[u][v] for u, v in path)
            if push == math.inf:
                raise RuntimeError("min-cut partition: an infinite-capacity path from the "
                                   "inputs to the backward (a value that can neither be "
                                   "saved nor recomputed)")
            for u, v in path:
                self.cap[u][v] -= push
                self.cap[v][u] += push
