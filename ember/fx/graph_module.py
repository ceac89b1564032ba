"""`ember.fx.GraphModule`: an nn.Module whose forward is generated from a Graph.

Note: `recompile()` turns the graph into Python source (`.code`) and execs it once, so a
call runs straight-line Python with no per-node interpretation. Each GraphModule gets its
own class (as torch.fx does) because `forward` is installed on the class. The source is
registered with linecache so tracebacks show the generated lines.
"""
import copy
import itertools
import linecache

from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from .._tensor import Tensor
from .graph import Graph

__all__ = ["GraphModule"]

_counter = itertools.count()


def _exec_forward(src, globals_):
    key = f"<eval_with_key>.{next(_counter)}"
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    ns = dict(globals_)
    exec(compile(src, key, "exec"), ns)
    return ns["forward"]


def _copy_attr(from_module, to_module, target):
    """Copy root's attribute at dotted `target` onto the GraphModule, creating empty
    Modules for the intermediate path (sharing objects, not cloning them)."""
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:
            return
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    orig = getattr(from_module, field)
    if isinstance(orig, Tensor) and not isinstance(orig, Parameter):
        to_module.register_buffer(field, orig)
    else:
        setattr(to_module, field, orig)


def _assign_attr(from_obj, to_module, target):
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        to_module = t
    if isinstance(from_obj, Tensor) and not isinstance(from_obj, Parameter):
        to_module.register_buffer(field, from_obj)
    else:
        setattr(to_module, field, from_obj)


class GraphModule(Module):
    """A Module built from `root` (a Module or a dict of attributes) and a Graph."""

    def __new__(cls, *args, **kwargs):
        # one class per instance: forward is installed on the class by recompile()
        for t in cls.__mro__:
            c = t.__qualname__.split(".")[-1]
            if c != "GraphModuleImpl":
                cls = t
                break

        class GraphModuleImpl(cls):
            pass
        return super().__new__(GraphModuleImpl)

    def __init__(self, root, graph, class_name="GraphModule"):
        super().__init__()
        self.__class__.__name__ = class_name
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node} referenced target {node.target} but "
                                           "that target was not provided in ``root``!")
                    _assign_attr(root[node.target], self, node.target)
        else:
            raise RuntimeError(f"Unsupported type {root} passed for root!")
        self.meta = {}
        self._tracer_cls = getattr(graph, "_tracer_cls", None)
        self.graph = graph

    @property
    def graph(self):
        return self._graph

    @graph.setter
    def graph(self, g):
        if not isinstance(g, Graph):
            raise TypeError(f"Expected a Graph instance, but got {type(g)}")
        self.__dict__["_graph"] = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self):
        """The Python source of forward, generated from the graph."""
        if not hasattr(self, "_code"):
            raise RuntimeError("Code has not been generated! Please report a bug to ember")
        return self._code

    def recompile(self):
        """Regenerate `code` and `forward` from `graph` (call after editing the graph)."""
        pc = self._graph.python_code(root_module="self")
        self.__dict__["_code"] = pc.src
        cls = type(self)
        cls.forward = _exec_forward(pc.src, pc.globals)
        return pc

    def print_readable(self, print_output=True, include_stride=False, include_device=False,
                       colored=False):
        """The module as Python source (with shapes/dtypes from node.meta['val'] where
        present), printed and returned."""
        return self._print_readable(print_output, include_stride, include_device)

    def _print_readable(self, print_output, include_stride=False, include_device=False):
        name = self.__class__.__name__
        src = self._graph.python_code(root_module="self", verbose=True,
                                      include_stride=include_stride,
                                      include_device=include_device).src.lstrip("\n")
        lines = [f"class {name}(ember.nn.Module):"]
        for _, sub in self.named_children():
            if isinstance(sub, GraphModule):
                lines += ["    " + ln for ln in sub._print_readable(
                    False, include_stride, include_device).splitlines()]
        lines += ["    " + ln if ln else ln for ln in src.rstrip("\n").splitlines()]
        out = "\n".join(lines) + "\n"
        if print_output:
            print(out)
        return out

    def add_submodule(self, target, m):
        """Install `m` at dotted `target`, creating empty parent Modules; False if a
        non-Module sits on the path."""
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            sub = getattr(mod, item, None)
            if sub is None:
                sub = Module()
                mod.add_module(item, sub)
            if not isinstance(sub, Module):
                return False
            mod = sub
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target):
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            if not hasattr(mod, item):
                return False
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                return False
        if not hasattr(mod, field):
            return False
        delattr(mod, field)
        return True

    def delete_all_unused_submodules(self):
        """Drop submodules that no call_module/get_attr node refers to."""
        used = set()
        for node in self._graph.nodes:
            if node.op in ("call_module", "get_attr"):
                parts = node.target.split(".")
                used.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
        for name, _ in list(self.named_modules()):
            if name and name not in used:
                self.delete_submodule(name)

    def __copy__(self):
        res = GraphModule(self, self._graph, self.__class__.__name__)
        res.meta = copy.copy(getattr(self, "meta", {}))
        return res

    def __deepcopy__(self, memo):
        # the copy is in memo before the attributes are copied, so an attribute that refers
        # back to this module (a wrapper holding it) gets the copy, not endless recursion
        out = GraphModule.__new__(GraphModule)
        memo[id(self)] = out
        fake = Module()
        fake.__dict__ = copy.deepcopy(
            {k: v for k, v in self.__dict__.items() if k not in ("_graph", "_code")}, memo)
        graph = copy.deepcopy(self._graph, memo)
        out.__init__(fake, graph, self.__class__.__name__)
        out.meta = copy.deepcopy(getattr(self, "meta", {}), memo)
        return out

    def __reduce__(self):
        """Pickle as (attributes, graph records): registry ops travel by name, other
        targets by pickle's own reference to them; node meta is not pickled (torch.fx
        also rebuilds the module from its code)."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("_graph", "_code")}
        return (_rebuild_graph_module, (state, _graph_records(self._graph),
                                        self.__class__.__name__))

    def __str__(self):
        orig = super().__str__()
        return "\n".join([orig, self._code, "# To see more debug info, please use "
                          "`graph_module.print_readable()`"])


class _NodeRef:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


class _OpRef:
    """A registry op in a pickle: its registry name."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


def _graph_records(graph):
    from ..ops._registry import OpDef
    from .node import Node, map_aggregate

    def enc(a):
        if isinstance(a, Node):
            return _NodeRef(a.name)
        if isinstance(a, OpDef):
            return _OpRef(str(a.name))
        return a
    return [(n.op, enc(n.target), map_aggregate(n.args, enc), map_aggregate(n.kwargs, enc),
             n.name, n.type) for n in graph.nodes]


def _rebuild_graph_module(state, records, class_name):
    from ..ops._registry import REGISTRY
    from .node import map_aggregate
    g = Graph()
    env = {}

    def dec(a):
        if isinstance(a, _NodeRef):
            return env[a.name]
        if isinstance(a, _OpRef):
            return REGISTRY[a.name]
        return a
    for op, target, args, kwargs, name, type_expr in records:
        env[name] = g.create_node(op, dec(target), map_aggregate(args, dec),
                                  map_aggregate(kwargs, dec), name, type_expr)
    root = Module()
    root.__dict__.update(state)
    gm = GraphModule(root, g, class_name)
    for k, v in state.items():
        if k not in gm.__dict__ or k in ("training", "meta"):
            gm.__dict__[k] = v
    return gm
