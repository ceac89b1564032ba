"""`ember.fx.Interpreter` and `Transformer`: run a GraphModule node by node, or rebuild
it node by node (torch.fx's API).

Note: the Interpreter is the slow, hookable path (one method per opcode, overridable);
GraphModule's generated forward is the fast one. Values are dropped from the
environment after their last use, so peak memory matches the generated code's.
Transformer re-traces each node through Proxies into a new graph, copying the old
node's provenance meta (stack trace, source, module stack) onto the new one.
"""
import inspect

from .graph import Graph
from .graph_module import GraphModule
from .node import map_aggregate, map_arg
from .proxy import Proxy
from ._symbolic_trace import Tracer, proxy_calls

__all__ = ["Interpreter", "Transformer"]

_COPY_META = ("stack_trace", "nn_module_stack", "source_fn_stack", "source", "from_node",
              "original_aten", "seq_nr", "custom")


class Interpreter:
    """Runs `module.graph` (or `graph`) one node at a time; subclass and override
    `call_function`, `call_module`, ... to change what each kind of node does."""

    def __init__(self, module, garbage_collect_values=True, graph=None):
        self.module = module
        self.submodules = dict(module.named_modules())
        self.graph = graph if graph is not None else module.graph
        self.env = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        self.user_to_last_uses = {}
        if garbage_collect_values:
            last = {}
            for node in self.graph.nodes:
                for inp in node._input_nodes:
                    last[inp] = node
            for v, user in last.items():
                self.user_to_last_uses.setdefault(user, []).append(v)

    def run(self, *args, initial_env=None, enable_io_processing=True):
        """Run the graph on `args`; returns what the output node returns."""
        self.env = initial_env if initial_env is not None else {}
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                if self.extra_traceback:
                    msg = f"While executing {node.format_node()}"
                    msg = f"{e.args[0]}\n\n{msg}" if e.args else msg
                    if node.stack_trace:
                        msg += f"\nOriginal traceback:\n{node.stack_trace}"
                    e.args = (msg,) + e.args[1:]
                raise
            if self.garbage_collect_values:
                for dead in self.user_to_last_uses.get(node, ()):
                    del self.env[dead]
            if node.op == "output":
                return self.env[node]
        return None

    def boxed_run(self, args_list):
        """run() that takes its inputs as a list and clears it (frees them early)."""
        args_iter = iter(args_list)
        env = {}
        for n in self.graph.nodes:
            if n.op == "placeholder":
                env[n] = next(args_iter)
        args_list.clear()
        return self.run(initial_env=env)

    def run_node(self, n):
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    # ------------------------------------------------------------ one per opcode
    def placeholder(self, target, args, kwargs):
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration as si:
            if len(args) > 0:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but "
                               "one was not passed in!") from si

    def get_attr(self, target, args, kwargs):
        return self.fetch_attr(target)

    def call_function(self, target, args, kwargs):
        return target(*args, **kwargs)

    def call_method(self, target, args, kwargs):
        self_obj, *args_tail = args
        return getattr(self_obj, target)(*args_tail, **kwargs)

    def call_module(self, target, args, kwargs):
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target, args, kwargs):
        return args[0]

    # ------------------------------------------------------------ helpers
    def fetch_attr(self, target):
        obj = self.module
        atoms = target.split(".")
        for i, atom in enumerate(atoms):
            if not hasattr(obj, atom):
                raise RuntimeError(f"Node referenced nonexistent target "
                                   f"{'.'.join(atoms[:i + 1])}")
            obj = getattr(obj, atom)
        return obj

    def fetch_args_kwargs_from_env(self, n):
        return self.map_nodes_to_values(n.args, n), self.map_nodes_to_values(n.kwargs, n)

    def map_nodes_to_values(self, args, n):
        env = self.env

        def load(a):
            if a not in env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {a}! Run "
                                   "Graph.lint() to diagnose such issues")
            return env[a]
        return map_arg(args, load)


class _TransformerTracer(Tracer):
    def __init__(self, graph):
        super().__init__()
        self.graph = graph
        self.tensor_attrs = {}

    def is_leaf_module(self, m, qualname):
        return True


class Transformer(Interpreter):
    """Interpreter that builds a new graph: each node's handler returns a Proxy; override
    handlers (e.g. `call_function`) to substitute operations. `transform()` returns the
    new GraphModule."""

    def __init__(self, module):
        super().__init__(module)
        self.new_graph = Graph()
        self.tracer = _TransformerTracer(self.new_graph)
        self.tracer.root = module

    def placeholder(self, target, args, kwargs):
        default = next(iter(args)) if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(target, default_value=default), self.tracer)

    def get_attr(self, target, args, kwargs):
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target, args, kwargs):
        submod = self.fetch_attr(target)
        return self.tracer.call_module(submod, submod.forward, args, kwargs)

    def call_function(self, target, args, kwargs):
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def run_node(self, n):
        before = self.new_graph._len
        result = super().run_node(n)
        if isinstance(result, Proxy) and self.new_graph._len > before \
                and result.node.graph is self.new_graph:
            for k in _COPY_META:
                if k in n.meta and k not in result.node.meta:
                    result.node.meta[k] = n.meta[k]
            if n.op == "placeholder":      # same input: its example value still holds
                for k, v in n.meta.items():
                    result.node.meta.setdefault(k, v)
        return result

    def transform(self):
        """Run the transformation; returns a GraphModule over the new graph."""
        with proxy_calls():      # handlers may call ember functions on Proxies
            result = super().run(enable_io_processing=False)
        if result is not None:
            out = self.new_graph.output(
                map_aggregate(result, lambda a: a.node if isinstance(a, Proxy) else a))
            old_out = [n for n in self.graph.nodes if n.op == "output"]
            if old_out:
                out.meta.update(old_out[-1].meta)
        return GraphModule(self.module, self.new_graph)
