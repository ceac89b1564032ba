"""OutputGraph: the graph one capture records, its inputs, and the recording mode.

Note: user code runs on fake tensors; every registry op it reaches goes through the
`_Recorder` dispatch mode (before FakeTensorMode, DESIGN §6), which appends a
`call_function` node with the op as target. Real tensors the program reads (arguments,
parameters, buffers, globals) become placeholders named by their source, created the
first time they are used, so the graph's inputs are exactly what it reads."""
import copy
import operator

from .. import _random
from .._dispatch import STATE
from .._symbolic import SymInt
from .._tensor import Tensor, wrap_meta
from ..fx import Graph, has_side_effect
from .._subclasses.fake_tensor import FakeTensorMode
from .._modes import TorchDispatchMode
from .exc import Unsupported
from .guards import GuardSet
from .variables.tensor import TensorVariable

__all__ = ["OutputGraph", "sym_size", "sym_eval", "set_grad_enabled", "ctx_enter", "ctx_exit"]


def sym_size(t, dim):
    return t.shape[dim]


def sym_eval(fn, *sizes):
    return fn(*sizes)


def set_grad_enabled(mode):
    """Graph node for a grad-mode change inside the compiled region."""
    STATE.grad_enabled = mode


def ctx_enter(obj):
    """Graph node: a context manager's __enter__ (autocast, record_function)."""
    obj.__enter__()


def ctx_exit(obj):
    """Graph node: the matching __exit__."""
    obj.__exit__(None, None, None)


for _fn in (set_grad_enabled, ctx_enter, ctx_exit):
    has_side_effect(_fn)          # graph effects with no users: DCE must keep them


class _Recorder(TorchDispatchMode):
    def __init__(self, og):
        super().__init__()
        self.og = og

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        og = self.og
        args = tuple(og.fakeify(a, func) for a in args)
        kwargs = {k: og.fakeify(v, func) for k, v in (kwargs or {}).items()}
        nargs = tuple(og.node_arg(a, func) for a in args)
        nkw = {k: og.node_arg(v, func) for k, v in kwargs.items()}
        out = func(*args, **kwargs)
        node = og.graph.call_function(func, nargs, nkw)
        og.bind(node, out)
        og.op_count += 1
        return out


class OutputGraph:
    def __init__(self, dynamic_dims, hint_shift=0):
        self.hint_shift = hint_shift
        self.graph = Graph()
        self.guards = GuardSet()
        self.fake_mode = FakeTensorMode(allow_non_fake_inputs=False)
        self.guards.shape_env = self.fake_mode.shape_env
        self.recorder = _Recorder(self)
        self.node_of = {}        # id(fake tensor) -> node giving its current value
        self.keep = []           # fakes and reals kept alive so ids stay unique
        self.inputs = []         # (source, real tensor, is_numpy) per placeholder
        self.input_vars = {}     # id(real tensor) -> TensorVariable
        self.known = {}          # id(param/buffer of a module seen) -> (tensor, source)
        self.sym_nodes = {}      # expression text -> node
        self.sym_source = {}     # symbol -> (placeholder node, dim)
        self.dynamic_dims = dynamic_dims   # source expr -> dims to make symbolic
        self.op_count = 0
        self.scalars = []        # (source expr, value) of Python numbers read from sources
        self.scalar_values = {}
        self.sym_floats = {}
        self.scalar_reads = {}
        self.marked = {}         # symbol of a mark_dynamic'd dim -> (source, dim)
        self.side_effects = {}   # mutations of real Python objects, applied after the graph
        self.obj_vars = {}       # id(real object) -> its one VariableTracker (aliasing)
        self._last_placeholder = None

    # ------------------------------------------------------------------ inputs
    def tensor_input(self, t, source, is_numpy=False):
        tv = self.input_vars.get(id(t))
        if tv is not None:
            if source is not None and tv.source is not None and source != tv.source:
                self.guards.alias(source, tv.source)
            return tv
        dims = self.dynamic_dims(source, t) if source is not None else ()
        _check_constraints(t, source)
        fake = self._fake(t, dims)
        if source is not None:
            dyn = [d for d in dims if t.shape[d] > 1]
            if is_numpy is not False:
                self.guards.ndarray(source, is_numpy, dyn)
            else:
                self.guards.tensor(source, t, dyn)
        name = _placeholder_name(source)
        node = self._placeholder(name)
        node.meta["val"] = fake
        node.meta["source"] = source.expr() if source is not None else None
        tv = TensorVariable(fake, source, real=t, is_numpy=is_numpy)
        self.node_of[id(fake)] = node
        self.keep += [fake, t]
        self.inputs.append((source, t, is_numpy is not False))
        self.input_vars[id(t)] = tv
        marked = getattr(t, "_dynamo_marked", ())
        for d, n in enumerate(fake.shape):
            if isinstance(n, SymInt) and d in marked:
                self.marked[str(n)] = (source.expr(), d)
            if isinstance(n, SymInt) and str(n) not in self.sym_source:
                self.sym_source[str(n)] = (node, d)
                self.guards.symbols[str(n)] = (source.expr(), d,
                                               "" if is_numpy is not False else "._data")
        return tv

    def _fake(self, t, dims):
        if not self.hint_shift or not dims:
            return self.fake_mode.from_tensor(t, dynamic_dims=dims)
        # the same tensor with its symbolic sizes' example values moved (the size check)
        env = self.fake_mode.shape_env
        shape = tuple(env.create_symbol(n + self.hint_shift) if i in dims and n > 1 else n
                      for i, n in enumerate(t.shape))
        fake = wrap_meta(shape, t._dtype, device=t.device, fake=True)
        fake._rg = t._rg
        return fake

    def scalar(self, value, source, dynamic):
        """A Python int/float read from `source`: guarded by value, or (dynamic) a graph
        input: an int as a SymInt (symbolic arithmetic), a float as itself."""
        key = source.expr()
        if key in self.scalar_reads:
            return self.scalar_reads[key]
        self.scalars.append((key, value))
        out = self._scalar(value, source, dynamic)
        self.scalar_reads[key] = out
        return out

    def _scalar(self, value, source, dynamic):
        if not dynamic:
            self.guards.constant(source, value)
            return value
        node = self._placeholder(_placeholder_name(source))
        self.inputs.append((source, None, False))
        self.scalar_values[source.expr()] = value
        self.guards.type(source, value)
        if type(value) is int:
            sym = self.fake_mode.shape_env.create_int_symbol(value + self.hint_shift)
            node.meta["val"] = sym
            name = str(sym)
            self.sym_source[name] = (node, None)
            self.guards.symbols[name] = (source.expr(), None, "")
            return sym
        val = _SymFloat(value + 0.5 * self.hint_shift)
        node.meta["val"] = val
        self.sym_floats[id(val)] = (val, node)
        return val

    def numpy_input(self, arr, source):
        from .. import from_numpy
        t = from_numpy(arr)
        return self.tensor_input(t, source, is_numpy=arr)

    def _placeholder(self, name):
        g = self.graph
        if self._last_placeholder is None:
            first = next(iter(g.nodes), None)
            ctx = g.inserting_before(first) if first is not None else None
        else:
            ctx = g.inserting_after(self._last_placeholder)
        if ctx is None:
            node = g.placeholder(name)
        else:
            with ctx:
                node = g.placeholder(name)
        self._last_placeholder = node
        return node

    def register_module(self, m, source):
        if source is None:
            return
        from .source import DictAttrSource
        for qual, t in list(m.named_parameters(remove_duplicate=False)) + \
                list(m.named_buffers(remove_duplicate=False)):
            if id(t) in self.known or t is None:
                continue
            *path, leaf = qual.split(".")
            src = source
            for p in path:
                src = DictAttrSource(src, "_modules", p)
            owner = m.get_submodule(".".join(path)) if path else m
            kind = "_parameters" if leaf in owner._parameters else "_buffers"
            self.known[id(t)] = (t, DictAttrSource(src, kind, leaf))

    # ------------------------------------------------------------------ recording
    def fakeify(self, a, func):
        if isinstance(a, Tensor):
            if a._fake:
                return a
            tv = self.input_vars.get(id(a))
            if tv is None:
                hit = self.known.get(id(a))
                if hit is None:
                    raise Unsupported(
                        f"{getattr(func, 'name', func)}: a tensor of shape {list(a.shape)} "
                        "from outside the compiled region's inputs (held by an object the "
                        "capture did not read)")
                tv = self.tensor_input(hit[0], hit[1])
            return tv.fake
        if isinstance(a, (list, tuple)) and any(isinstance(x, Tensor) for x in a):
            return type(a)(self.fakeify(x, func) for x in a)
        return a

    def node_arg(self, a, func=None):
        if isinstance(a, Tensor):
            n = self.node_of.get(id(a))
            if n is None:
                raise Unsupported(f"{getattr(func, 'name', func)}: a fake tensor the "
                                  "capture did not record")
            return n
        if isinstance(a, SymInt):
            return self.sym_node(a)
        if type(a) is _SymFloat and id(a) in self.sym_floats:
            return self.sym_floats[id(a)][1]
        if isinstance(a, (list, tuple)):
            return type(a)(self.node_arg(x, func) for x in a) if type(a) in (list, tuple) \
                else tuple(self.node_arg(x, func) for x in a)
        return a

    def sym_node(self, s):
        key = str(s)
        n = self.sym_nodes.get(key)
        if n is not None:
            return n
        if key in self.sym_source:
            ph, d = self.sym_source[key]
            if d is None:
                return ph                       # a dynamic int input is its own node
            with self.graph.inserting_after(self._last_placeholder):
                n = self.graph.call_function(sym_size, (ph, d))
        else:
            names = sorted(k for k in self.sym_source if k in key)
            fn = eval(f"lambda {', '.join(names)}: {key}")
            n = self.graph.call_function(sym_eval, (fn, *[self.sym_node_by_name(k)
                                                          for k in names]))
        self.sym_nodes[key] = n
        return n

    def sym_node_by_name(self, name):
        ph, d = self.sym_source[name]
        if d is None:
            return ph
        n = self.sym_nodes.get(name)
        if n is None:
            n = self.graph.call_function(sym_size, (ph, d))
            self.sym_nodes[name] = n
        return n

    def bind(self, node, out):
        node.meta["val"] = out
        if isinstance(out, Tensor):
            self.node_of[id(out)] = node
            self.keep.append(out)
        elif isinstance(out, (tuple, list)):
            for i, o in enumerate(out):
                if isinstance(o, Tensor):
                    gi = self.graph.call_function(operator.getitem, (node, i))
                    gi.meta["val"] = o
                    self.node_of[id(o)] = gi
                    self.keep.append(o)

    def recording(self):
        return _Recording(self)

    def check_marked(self):
        """mark_dynamic'd dims the program specialized (a guard `s0 == 5`) are an error,
        as in PyTorch."""
        for a, op, b, out in self.fake_mode.shape_env.guards:
            if a in self.marked and op == "==" and out and b.lstrip("-").isdigit():
                src, d = self.marked[a]
                raise ConstraintViolationError(
                    f"Constraints violated ({src}.size()[{d}])! Not all values of "
                    f"{src}.size()[{d}] are valid because {src}.size()[{d}] was inferred "
                    f"to be a constant ({b}): the program specialized a dim marked dynamic.")

    def fake_only(self):
        return _Recording(self, record=False)

    def add_effect(self, fn, *args):
        self.graph.call_function(fn, args)


class _Recording:
    """Runs ember code on fake tensors with the recorder and fake modes on, restoring the
    random generator (capture must not consume random numbers the graph will draw)."""

    def __init__(self, og, record=True):
        self.og, self.record = og, record

    def __enter__(self):
        gen = _random.default_generator
        self.rng = copy.deepcopy(gen.__dict__)
        self.og.fake_mode.__enter__()
        if self.record:
            self.og.recorder.__enter__()

    def __exit__(self, *exc):
        if self.record:
            self.og.recorder.__exit__(*exc)
        self.og.fake_mode.__exit__(*exc)
        _random.default_generator.__dict__.update(self.rng)
        return False


class _SymFloat(float):
    """A float input that varies between calls: its uses in ops become the graph input."""


class ConstraintViolationError(RuntimeError):
    """A mark_dynamic'd size out of its min/max, or specialized by the program
    (torch.fx.experimental.symbolic_shapes.ConstraintViolationError)."""


def _check_constraints(t, source):
    for d, (lo, hi) in getattr(t, "_dynamo_constraints", {}).items():
        n = t.shape[d]
        if (lo is not None and n < lo) or (hi is not None and n > hi):
            raise ConstraintViolationError(
                f"Constraints violated ({source.expr()}.size()[{d}])! {source.expr()}.size()"
                f"[{d}] = {n} not in range [{lo}, {hi}] (set by mark_dynamic).")


def _placeholder_name(source):
    if source is None:
        return "const"
    s = source.expr()
    for ch in "[]'\".() ,":
        s = s.replace(ch, "_")
    return "_".join(p for p in s.split("_") if p) or "arg"
