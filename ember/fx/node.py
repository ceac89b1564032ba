"""`ember.fx.Node`: one instruction of an fx Graph (torch.fx.Node's API).

Note: a node holds `op` (placeholder / get_attr / call_function / call_method /
call_module / output), `target`, `args`, `kwargs`, `meta` and `users`; use-def edges are
kept in both directions (`_input_nodes` and `users`) whenever `args`/`kwargs` are set, so
passes can rewrite graphs without rescanning them. Nodes form a doubly linked list
closed by the graph's root sentinel.
"""
import builtins
import operator
import re
import types

__all__ = ["Node", "map_arg", "map_aggregate", "has_side_effect"]

_OPCODES = ("placeholder", "call_method", "call_module", "call_function", "get_attr",
            "output", "root")

# Functions whose calls must stay even when their result is unused (DCE keeps them).
_side_effectful_functions = {operator.setitem, operator.delitem}
_NESTED = frozenset({tuple, list, dict, slice})
_RANDOM_NAME = re.compile(r"rand|normal|bernoulli|dropout|multinomial|uniform|exponential|"
                          r"cauchy|geometric|poisson")


def has_side_effect(fn):
    """Mark `fn` as side-effectful: eliminate_dead_code never removes its calls."""
    _side_effectful_functions.add(fn)
    return fn


def _registry_qualname(op):
    """'ember.ops.aten.add.Tensor' for a registry OpDef, None for anything else."""
    from ..ops._registry import OpDef
    if not isinstance(op, OpDef):
        return None
    if op._schema_text is None:
        return f"ember.ops.{op.namespace}.{op.name}.default"
    return f"ember.ops.{op.namespace}.{op._schema.name}.{op._overloadname}"


def _resolve(path):
    """getattr along a dotted path from its top-level module, importing a submodule only
    where an attribute is missing; None when it does not resolve."""
    import importlib
    parts = path.split(".")
    try:
        obj = importlib.import_module(parts[0])
    except Exception:
        return None
    for i in range(1, len(parts)):
        try:
            obj = getattr(obj, parts[i])
        except AttributeError:
            try:
                obj = importlib.import_module(".".join(parts[:i + 1]))
            except Exception:
                return None
    return obj


def _get_qualified_name(func):
    """A readable dotted name for a call target: 'operator.add', 'ember.relu',
    'ember.ops.aten.add.Tensor', or the function's own module path."""
    q = _registry_qualname(func)
    if q is not None:
        return q
    if getattr(builtins, getattr(func, "__name__", ""), None) is func:
        return func.__name__
    if isinstance(func, (types.MethodDescriptorType, types.WrapperDescriptorType)) \
            and func is getattr(getattr(func, "__objclass__", None), func.__name__, None):
        return f"{func.__objclass__.__module__}.{func.__objclass__.__qualname__}.{func.__name__}"
    short = getattr(func, "__name__", None)
    module = getattr(func, "__module__", None)
    if module == "_operator" or (short and getattr(operator, short, None) is func):
        return f"operator.{short}"
    if module and module.startswith("ember") and short:
        # the public path (ember.relu) rather than where it is defined
        for pub in _PUBLIC:
            if _resolve(f"{pub}.{short}") is func:
                return f"{pub}.{short}"
    qual = getattr(func, "__qualname__", None) or short or type(func).__name__
    return f"{module}.{qual}" if module else qual


_PUBLIC = ("ember", "ember.nn.functional", "ember.special", "ember.linalg", "ember.fft",
           "ember.Tensor")


def _format_arg(arg, max_list_len=float("inf")):
    if hasattr(arg, "_custom_fx_repr_fn"):
        return arg._custom_fx_repr_fn()
    if isinstance(arg, list):
        items = ", ".join(_format_arg(a) for i, a in enumerate(arg) if i < max_list_len)
        maybe_len = "" if len(arg) < max_list_len + 1 else f", ...[total_len={len(arg)}]"
        return f"[{items}{maybe_len}]"
    if isinstance(arg, tuple):
        items = ", ".join(_format_arg(a) for i, a in enumerate(arg) if i < max_list_len)
        maybe_len = "" if len(arg) < max_list_len + 1 else f", ...[total_len={len(arg)}]"
        maybe_comma = "," if len(arg) == 1 else ""
        return f"({items}{maybe_comma}{maybe_len})"
    if isinstance(arg, dict):
        items = ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items())
        return f"{{{items}}}"
    if isinstance(arg, Node):
        return "%" + str(arg)
    return str(arg)


class Node:
    """One operation in a Graph: `op`, `target`, `args`, `kwargs`, `meta`, `users`."""

    def __init__(self, graph, name, op, target, args, kwargs, return_type=None):
        if op not in _OPCODES:
            raise ValueError(f"Node: unknown opcode {op!r}; expected one of {_OPCODES[:-1]}")
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has "
                             f"type {type(target)} but a Callable is expected")
        if op in ("placeholder", "call_method", "call_module", "get_attr", "output") \
                and not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has "
                             f"type {type(target)} but a str is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes = {}
        self.users = {}
        self.type = return_type
        self._prev = self
        self._next = self
        self._erased = False
        self._repr_fn = None
        self.meta = {}
        self._args = ()
        self._kwargs = {}
        self._update_args_kwargs(args, kwargs)

    # ------------------------------------------------------------ linked list
    @property
    def next(self):
        return self._next

    @property
    def prev(self):
        return self._prev

    def prepend(self, x):
        """Insert `x` (moved if already in the graph) right before this node."""
        if x is self:
            return
        if x.graph is not self.graph:
            raise RuntimeError("Attempting to move a Node into a different Graph")
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x):
        """Insert `x` right after this node."""
        self._next.prepend(x)

    def _remove_from_list(self):
        p, n = self._prev, self._next
        p._next, n._prev = n, p
        self._prev = self._next = self

    # ------------------------------------------------------------ args / uses
    @property
    def args(self):
        return self._args

    @args.setter
    def args(self, a):
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self):
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k):
        self._update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self):
        """The distinct nodes this one reads, in first-use order."""
        return list(self._input_nodes)

    def update_arg(self, idx, arg):
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def insert_arg(self, idx, arg):
        args = list(self.args)
        args.insert(idx, arg)
        self.args = tuple(args)

    def update_kwarg(self, key, arg):
        self.kwargs = {**self.kwargs, key: arg}

    def _update_args_kwargs(self, new_args, new_kwargs):
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._input_nodes = {}
        self._args = self._track_all(tuple(new_args) if new_args is not None else ())
        self._kwargs = self._track_all(dict(new_kwargs) if new_kwargs is not None else {})

    def _track_all(self, a):
        """Record every Node inside `a` as an input (fast path: a flat tuple/dict)."""
        vals = a.values() if type(a) is dict else a
        for v in vals:
            if type(v) in _NESTED or isinstance(v, (tuple, list, dict, slice)):
                return map_aggregate(a, self._track)
        for v in vals:
            if isinstance(v, Node):
                self._input_nodes.setdefault(v)
                v.users.setdefault(self)
        return a

    def _track(self, a):
        if isinstance(a, Node):
            self._input_nodes.setdefault(a)
            a.users.setdefault(self)
        return a

    @property
    def stack_trace(self):
        return self.meta.get("stack_trace")

    @stack_trace.setter
    def stack_trace(self, trace):
        self.meta["stack_trace"] = trace

    def replace_all_uses_with(self, replace_with, delete_user_cb=lambda user: True, *,
                              propagate_meta=False):
        """Make every user of this node read `replace_with` instead; returns the users
        that were changed."""
        if propagate_meta:
            if replace_with.meta:
                raise AssertionError("Called node.replace_all_uses_with(replace_with, "
                                     "propagate_meta=True), but replace_with already has "
                                     ".meta keys")
            replace_with.meta.update(self.meta)
        to_process = [u for u in self.users if delete_user_cb(u)]
        for use in to_process:
            use.replace_input_with(self, replace_with)
        return to_process

    def replace_input_with(self, old_input, new_input):
        """Replace every occurrence of `old_input` in this node's args/kwargs."""
        def sub(n):
            return new_input if n is old_input else n
        self._update_args_kwargs(map_arg(self._args, sub), map_arg(self._kwargs, sub))

    def is_impure(self, impure_random=True):
        """Would removing this node change the program? Placeholders, outputs,
        side-effectful functions, registry ops that mutate an argument (or draw random
        numbers, with impure_random), and in-place methods (`x.add_(1)`; torch.fx
        counts no call_method as impure, ember keeps them so DCE cannot drop a
        mutation)."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_method":
            t = self.target
            return t.endswith("_") and not t.endswith("__")
        if self.op == "call_function":
            try:
                if self.target in _side_effectful_functions:
                    return True
            except TypeError:          # unhashable target
                pass
            tags = getattr(self.target, "tags", None)
            if isinstance(tags, (set, frozenset, tuple, list)) and (
                    "inplace" in tags or (impure_random and "random" in tags)):
                return True
            schema = getattr(self.target, "_schema_text", None)
            if isinstance(schema, str):
                return "!" in schema.split("->")[0]
            # ember's public functions (symbolic_trace targets): in-place by name, random
            # by the registry's random ops they are named after
            name = getattr(self.target, "__name__", "")
            if str(getattr(self.target, "__module__", "")).startswith("ember") and name:
                return (name.endswith("_") and not name.endswith("__")) or \
                    bool(impure_random and _RANDOM_NAME.search(name))
            return False
        if self.op == "call_module":
            mod = self.graph.owning_module
            if mod is not None:
                try:
                    sub = mod.get_submodule(self.target)
                except AttributeError:
                    return False
                return bool(getattr(sub, "_is_impure", False))
        return False

    # ------------------------------------------------------------ printing
    def __repr__(self):
        if self._repr_fn is not None:
            return self._repr_fn(self)
        return self.name

    def _pretty_print_target(self, target):
        if isinstance(target, str):
            return target
        mod, name = getattr(target, "__module__", None), getattr(target, "__name__", None)
        if mod == "builtins" and name is not None:
            return f"builtins.{name}"
        return _get_qualified_name(target)

    def format_node(self, placeholder_names=None, maybe_return_typename=None):
        """One line in the graph's `str()`: `%add : [num_users=1] = call_function[...]`."""
        if self.op == "placeholder":
            arg_str = self.target
            arg_str += f": {self.type}" if self.type else ""
            if placeholder_names is not None:
                placeholder_names.append(arg_str)
                return None
            maybe_default = f"(default={self.args[0]})" if self.args else ""
            return f"%{self.name} : [num_users={len(self.users)}] = " \
                   f"{self.op}[target={self.target}]{maybe_default}"
        if self.op == "get_attr":
            return f"%{self.name} : [num_users={len(self.users)}] = " \
                   f"{self.op}[target={self._pretty_print_target(self.target)}]"
        if self.op == "output":
            if self.type and maybe_return_typename is not None:
                maybe_return_typename[0] = f" -> {self.type}"
            return f"return {self.args[0]}"
        return (f"%{self.name} : [num_users={len(self.users)}] = "
                f"{self.op}[target={self._pretty_print_target(self.target)}]("
                f"args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})")


def map_aggregate(a, fn):
    """Apply `fn` to every leaf of nested tuples/lists/dicts/slices, keeping their shape."""
    t = type(a)
    if t is tuple or (isinstance(a, tuple) and not hasattr(a, "_fields")):
        return tuple(map_aggregate(e, fn) for e in a)
    if isinstance(a, tuple):       # namedtuple: rebuild the same type
        return t(*(map_aggregate(e, fn) for e in a))
    if isinstance(a, list):
        return [map_aggregate(e, fn) for e in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn),
                     map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a, fn):
    """Apply `fn` to every Node inside `a` (other leaves are kept)."""
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)
