"""`make_fx(f)(*args)`: trace `f` at the registry-op level into a GraphModule
(torch.fx.experimental.proxy_tensor.make_fx).

Note: unlike symbolic_trace, nothing is patched: `f` runs for real (tracing_mode="real")
or on fake tensors ("fake": shapes only) under a dispatch mode that records every
registry op reaching dispatch, with its OpDef as the node target. Because backward
formulas are ember ops, a `.backward()` or `autograd.grad` inside `f` is recorded too:
this is how a joint forward+backward graph is obtained. Tensors `f` reads that are not
inputs (parameters, globals) become `_param_constant<N>` / `_tensor_constant<N>`
attributes. Python control flow is specialised to the example inputs, as in PyTorch.
Differences from PyTorch: composite ops (linear, softmax, ...) are recorded as they are
unless `decomposition_table` maps them ({op: fn}); symbolic tracing mode is not
implemented.
"""
import inspect
import operator
from contextlib import nullcontext as _nullcontext

from ..._modes import TorchDispatchMode
from ..._tensor import Tensor
from ...nn.parameter import Parameter
from ..graph import Graph
from ..graph_module import GraphModule
from ..node import map_aggregate

__all__ = ["make_fx"]


class _Recorder(TorchDispatchMode):
    """Records each dispatched op as a call_function node on the graph."""

    def __init__(self, graph, decomposition_table, snapshot):
        super().__init__()
        self.graph = graph
        self.decomp = decomposition_table or {}
        self.snapshot = snapshot        # tensor -> its fake, for node.meta["val"]
        self.nodes = {}                 # id(tensor) -> (tensor, node): strong refs
        self.constants = {}             # attribute name -> tensor
        self.n_consts = [0, 0]

    def node_of(self, t):
        hit = self.nodes.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        is_param = isinstance(t, Parameter)
        kind = "_param_constant" if is_param else "_tensor_constant"
        i = self.n_consts[is_param]
        self.n_consts[is_param] += 1
        name = f"{kind}{i}"
        self.constants[name] = t
        first = self._first_non_placeholder()      # attributes go after the inputs
        with self.graph.inserting_before(first) if first is not None else _nullcontext():
            node = self.graph.get_attr(name)
        node.meta["val"] = self.snapshot(t)
        self.bind(t, node)
        return node

    def _first_non_placeholder(self):
        for n in self.graph.nodes:
            if n.op not in ("placeholder", "get_attr"):
                return n
        return None

    def bind(self, t, node):
        self.nodes[id(t)] = (t, node)

    def to_arg(self, a):
        return map_aggregate(a, lambda x: self.node_of(x) if isinstance(x, Tensor) else x)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        fn = self.decomp.get(func)
        if fn is not None:
            with self:                   # the decomposition's own ops are recorded
                return fn(*args, **kwargs)
        out = func(*args, **kwargs)
        node = self.graph.call_function(func, self.to_arg(tuple(args)), self.to_arg(kwargs))
        if isinstance(out, (tuple, list)):
            node.meta["val"] = type(out)(self.snapshot(o) if isinstance(o, Tensor) else o
                                         for o in out)
            for i, o in enumerate(out):
                if isinstance(o, Tensor):
                    gi = self.graph.call_function(operator.getitem, (node, i))
                    gi.meta["val"] = self.snapshot(o)
                    self.bind(o, gi)
        elif isinstance(out, Tensor):
            node.meta["val"] = self.snapshot(out)
            self.bind(out, node)
        return out


def _arg_names(f, n):
    try:
        params = [p for p in inspect.signature(f).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params[:n]]
    return names + [f"arg{i}" for i in range(len(names), n)]


def make_fx(f, decomposition_table=None, tracing_mode="real", _allow_non_fake_inputs=False,
            **_ignored):
    """Returns a function that, called with example inputs, traces `f` on them and
    returns the GraphModule of registry ops it ran."""
    if tracing_mode not in ("real", "fake", "symbolic"):
        raise AssertionError(f"Unexpected tracing type: {tracing_mode}")
    if tracing_mode == "symbolic":
        raise NotImplementedError("ember make_fx: tracing_mode='symbolic' (symbolic shapes) "
                                  "is not implemented; use 'real' or 'fake'")

    def wrapped(*args):
        from ..._subclasses.fake_tensor import FakeTensorMode
        graph = Graph()
        fake_mode = FakeTensorMode(allow_non_fake_inputs=True)
        snapshot = fake_mode.from_tensor if tracing_mode == "real" else (lambda t: t)
        rec = _Recorder(graph, decomposition_table, snapshot)
        flat = []
        map_aggregate(args, lambda x: flat.append(x) or x)
        names = _arg_names(f, len(args)) if len(flat) == len(args) else \
            [f"arg{i}" for i in range(len(flat))]
        if tracing_mode == "fake":
            args = map_aggregate(args, lambda x: fake_mode.from_tensor(x)
                                 if isinstance(x, Tensor) else x)
            flat = []
            map_aggregate(args, lambda x: flat.append(x) or x)
        for name, a in zip(names, flat):
            ph = graph.placeholder(f"{name}_1")
            if isinstance(a, Tensor):
                ph.meta["val"] = snapshot(a)
                rec.bind(a, ph)
        if tracing_mode == "fake":
            with fake_mode, rec:
                out = f(*args)
        else:
            with rec:
                out = f(*args)
        graph.output(rec.to_arg(out))
        root = dict(rec.constants)
        name = getattr(f, "__name__", type(f).__name__)
        return GraphModule(root, graph, name if name.isidentifier() else "GraphModule")
    return wrapped
