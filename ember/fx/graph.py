"""`ember.fx.Graph`: an ordered list of Nodes (torch.fx.Graph's API).

Note: nodes live in a doubly linked list closed by a root sentinel, so inserting or
erasing is O(1) and iteration order is program order. Names are unique per graph and
derived from the target as torch.fx does (`add`, `add_1`; `sum_1` because `sum` is a
builtin). Python source for the graph is produced by `_codegen.python_code`.
"""
import builtins
import inspect
import keyword
import re
from collections import defaultdict

from .node import Node, _format_arg, map_arg

__all__ = ["Graph", "PythonCode"]

_illegal_char_regex = re.compile("[^0-9a-zA-Z_]+")
_name_suffix_regex = re.compile(r"(.*)_(\d+)$")
_snake_case_sub = re.compile(r"(?<=[a-z])([A-Z])")


def _snake_case(s):
    return _snake_case_sub.sub(r"_\1", s).lower()


def _is_magic(x):
    return x.startswith("__") and x.endswith("__")


class _Namespace:
    """Hands out unique, legal Python identifiers (torch.fx's naming rules)."""

    def __init__(self):
        self._obj_to_name = {}
        self._unassociated_names = set()
        self._used_names = set()
        self._base_count = defaultdict(int)

    def create_name(self, candidate, obj):
        if obj is not None and obj in self._obj_to_name:
            return self._obj_to_name[obj]
        candidate = _illegal_char_regex.sub("_", candidate)
        if not candidate:
            candidate = "_unnamed"
        if candidate[0].isdigit():
            candidate = f"_{candidate}"
        match = _name_suffix_regex.match(candidate)
        if match is None:
            base, num = candidate, None
        else:
            base, num = match.group(1), int(match.group(2))
        candidate = base if num is None else f"{base}_{num}"
        if not num:
            num = self._base_count[base]
        while candidate in self._used_names or self._is_illegal_name(candidate, obj):
            num += 1
            candidate = f"{base}_{num}"
        self._used_names.add(candidate)
        self._base_count[base] = num
        if obj is None:
            self._unassociated_names.add(candidate)
        else:
            self._obj_to_name[obj] = candidate
        return candidate

    def associate_name_with_obj(self, name, obj):
        self._obj_to_name[obj] = name
        self._unassociated_names.discard(name)

    def _is_illegal_name(self, name, obj):
        if name in keyword.kwlist:
            return True
        if name in builtins.__dict__:
            return obj is not builtins.__dict__[name]
        return name in ("ember", "self", "inf", "nan", "NoneType", "device")


class _InsertPoint:
    def __init__(self, graph, new_insert):
        self.graph = graph
        self.orig_insert, graph._insert = graph._insert, new_insert

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        self.graph._insert = self.orig_insert


class _NodeList:
    """`graph.nodes`: a live, ordered view (len, iteration, reversed)."""

    def __init__(self, graph, direction="_next"):
        self.graph = graph
        self.direction = direction

    def __len__(self):
        return self.graph._len

    def __iter__(self):
        root = self.graph._root
        cur = getattr(root, self.direction)
        while cur is not root:
            nxt = getattr(cur, self.direction)
            if not cur._erased:
                yield cur
            cur = nxt

    def __reversed__(self):
        return _NodeList(self.graph, "_prev" if self.direction == "_next" else "_next")

    def __repr__(self):
        return repr(list(self))


class PythonCode:
    """Generated source of `forward` and the globals its names refer to."""

    def __init__(self, src, globals_, lineno_map=None):
        self.src = src
        self.globals = globals_
        self._lineno_map = lineno_map


class Graph:
    """The IR of ember.fx: nodes in program order, built with placeholder /
    call_function / call_method / call_module / get_attr / output."""

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self._root = Node(self, "", "root", "", (), {})
        self._insert = self._root.prepend
        self._len = 0
        self._graph_namespace = _Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras

    @property
    def owning_module(self):
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod):
        self._owning_module = mod

    @property
    def nodes(self):
        return _NodeList(self)

    def find_nodes(self, *, op, target=None, sort=True):
        """Nodes with opcode `op` (and `target`, if given), in graph order."""
        return [n for n in self.nodes
                if n.op == op and (target is None or n.target == target)]

    # ------------------------------------------------------------ building
    def create_node(self, op, target, args=None, kwargs=None, name=None, type_expr=None):
        """Insert a new node at the current insert point (the end by default)."""
        args = () if args is None else args
        kwargs = {} if kwargs is None else kwargs
        if not isinstance(args, tuple):
            raise TypeError(f"create_node: args must be a tuple, got {type(args).__name__}")
        if not isinstance(kwargs, dict):
            raise TypeError(f"create_node: kwargs must be a dict, got "
                            f"{type(kwargs).__name__}")
        candidate = name if name is not None else self._target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        n = Node(self, name, op, target, args, kwargs, type_expr)
        self._graph_namespace.associate_name_with_obj(name, n)
        self._insert(n)
        self._len += 1
        return n

    def placeholder(self, name, type_expr=None, default_value=inspect.Signature.empty):
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name, type_expr=None):
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None, name=None):
        return self.create_node("call_function", the_function, args, kwargs, name=name,
                                type_expr=type_expr)

    def output(self, result, type_expr=None):
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def node_copy(self, node, arg_transform=lambda x: x):
        """Copy `node` (from any graph) into this one; `arg_transform` maps its input
        nodes to nodes of this graph. Meta is copied (shallow)."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        name = node.name if node.op != "output" else None
        result = self.create_node(node.op, node.target, args, kwargs, name, node.type)
        result.meta = dict(node.meta)
        return result

    def graph_copy(self, g, val_map, return_output_node=False):
        """Copy every node of `g` into this graph; `val_map` maps g's nodes to ours and is
        filled as we go. Returns the (mapped) output value, not an output node."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return (rv, node) if return_output_node else rv
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo=None):
        g = Graph(tracer_cls=self._tracer_cls)
        memo = {} if memo is None else memo
        out = g.graph_copy(self, val_map=memo, return_output_node=True)
        if out is not None:
            rv, old_out = out
            new_out = g.output(rv, type_expr=old_out.type)
            new_out.meta = dict(old_out.meta)
        return g

    def erase_node(self, to_erase):
        """Remove a node that nothing uses any more."""
        if len(to_erase.users) > 0:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had "
                               f"{len(to_erase.users)} users in the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            import warnings
            warnings.warn(f"erase_node({to_erase}) on an already erased node")
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs((), {})

    def inserting_before(self, n=None):
        """Context manager: new nodes go right before `n` (default: the start)."""
        if n is None:
            return self.inserting_after(self._root)
        if n.graph is not self:
            raise ValueError("Node to insert before is not in graph.")
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n=None):
        """Context manager: each new node goes right after `n` (default: the end), so
        several nodes created inside come out in reverse order, exactly as torch.fx."""
        if n is None:
            return self.inserting_before(self._root)
        if n.graph is not self:
            raise ValueError("Node to insert after is not in graph.")
        return _InsertPoint(self, n.append)

    # ------------------------------------------------------------ passes
    def eliminate_dead_code(self, is_impure_node=None):
        """Remove nodes whose results nothing reads (impure ones stay); True if changed."""
        self.lint()
        impure = is_impure_node or (lambda n: n.is_impure())
        changed = False
        for node in reversed(self.nodes):
            if not impure(node) and len(node.users) == 0:
                self.erase_node(node)
                changed = True
        return changed

    def lint(self):
        """Check the graph's invariants: unique names, every input defined before its
        use and in this graph, use lists consistent, targets resolvable."""
        seen_names = set()
        seen_values = set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            if node.name in seen_names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen_names.add(node.name)
            for arg in node._input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' does not belong "
                                       "to this Graph, but was used as an argument! If you "
                                       "are copying nodes from another graph, make sure to "
                                       "use ``arg_transform`` on node_copy() to remap values")
                if arg not in seen_values:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before "
                                       "it has been defined! Please check that Nodes in the "
                                       "graph are topologically ordered")
                if node not in arg.users:
                    raise RuntimeError(f"Node '{node}' reads '{arg}' but is not in its users")
            seen_values.add(node)
        mod = self.owning_module
        if mod is not None:
            for node in self.nodes:
                if node.op in ("get_attr", "call_module"):
                    obj = mod
                    for i, atom in enumerate(node.target.split(".")):
                        if not hasattr(obj, atom):
                            seen = ".".join(node.target.split(".")[:i])
                            raise RuntimeError(f"Node {node} target {node.target} references "
                                               f"nonexistent attribute {atom} of {seen}")
                        obj = getattr(obj, atom)
        return True

    # ------------------------------------------------------------ printing
    def _target_to_str(self, target):
        if callable(target):
            op = getattr(target, "__name__", None) or type(target).__name__
        else:
            op = str(target)
            if _is_magic(op):
                op = op[2:-2]
        return _snake_case(op)

    def python_code(self, root_module="self", *, verbose=False, include_stride=False,
                    include_device=False, colored=False):
        """PythonCode for `def forward(...)` of this graph."""
        from ._codegen import python_code
        return python_code(self, root_module, verbose=verbose, include_stride=include_stride,
                           include_device=include_device)

    def process_inputs(self, *args):
        """Identity: ember graphs take flat inputs (no pytree codegen)."""
        return args

    def process_outputs(self, out):
        return out

    def __str__(self):
        maybe_return_typename = [""]
        lines = [n.format_node(None, maybe_return_typename) for n in self.nodes]
        return f"graph(){maybe_return_typename[0]}:" + "".join(
            "\n    " + ln for ln in lines if ln)

    def print_tabular(self):
        """Print one row per node: opcode, name, target, args, kwargs (the columns
        torch.fx prints with `tabulate`, formatted here without that dependency)."""
        print(self._tabular())

    def _tabular(self):
        rows = [[n.op, n.name, n._pretty_print_target(n.target), _format_arg(n.args),
                 _format_arg(n.kwargs)] for n in self.nodes]
        headers = ["opcode", "name", "target", "args", "kwargs"]
        widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]

        def line(cells):
            return "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()
        out = [line(headers), "  ".join("-" * w for w in widths)]
        out += [line(r) for r in rows]
        return "\n".join(out)

    def __repr__(self):
        return f"<ember.fx.Graph with {self._len} nodes>"
