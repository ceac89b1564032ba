"""The symbolic bytecode interpreter (PyTorch's Dynamo design, DESIGN §7.1).

Note: `InstructionTranslator` runs one segment of a user function's bytecode (CPython
3.11) over VariableTrackers: tensors are fake tensors whose ops are recorded into the
OutputGraph, Python values the program reads are guarded where it read them, user
functions and modules are inlined. A construct it cannot put in the graph raises
Unsupported; the top-level frame then restarts the segment and stops just before the
instruction that led there (a graph break): the graph so far is compiled, the runtime
executes that one instruction for real, and capture resumes after it."""
import dis
import inspect
import operator
import sys
import types

from .._dispatch import STATE
from .._symbolic import SymInt
from .._tensor import Tensor
from .exc import Unsupported
from .output_graph import set_grad_enabled, ctx_enter, ctx_exit
from .source import LocalSource, GlobalSource, ClosureSource, StackSource, AttrSource
from .variables.base import VariableTracker, ConstantVariable, NotConstant, unsupported
from .variables.builder import VariableBuilder, wrap_constant_result
from .variables.containers import (ListVariable, TupleVariable, DictVariable, SliceVariable,
                                   IteratorVariable, SetVariable, BaseListVariable,
                                   RangeVariable, dict_key)
from .variables.functions import (NestedUserFunctionVariable, BuiltinVariable,
                                  EmberFunctionVariable)
from .variables.objects import (NNModuleVariable, SuperVariable, GradModeVariable,
                                UserDefinedObjectVariable, ContextObjectVariable)
from .variables.tensor import TensorVariable

__all__ = ["InstructionTranslator", "NULL", "BreakAt", "ReturnAt"]

_BINARY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
           "//": operator.floordiv, "%": operator.mod, "**": operator.pow,
           "@": operator.matmul, "&": operator.and_, "|": operator.or_, "^": operator.xor,
           "<<": operator.lshift, ">>": operator.rshift,
           "+=": operator.iadd, "-=": operator.isub, "*=": operator.imul,
           "/=": operator.itruediv, "//=": operator.ifloordiv, "%=": operator.imod,
           "**=": operator.ipow, "@=": operator.imatmul, "&=": operator.iand,
           "|=": operator.ior, "^=": operator.ixor, "<<=": operator.ilshift,
           ">>=": operator.irshift}
_COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
            "==": operator.eq, "!=": operator.ne}
_NB_OPS = [sym for _, sym in dis._nb_ops]
MAX_INLINE_DEPTH = 40


class _Null(VariableTracker):
    """The NULL CPython pushes before a callable (3.11's calling convention)."""

    def __repr__(self):
        return "NULL"


NULL = _Null()


class BreakAt:
    """The segment ends before the instruction at `offset` (a graph break there)."""

    def __init__(self, offset):
        self.offset = offset


class ReturnAt:
    """The segment ends with the function's return value."""

    def __init__(self, value):
        self.value = value


class _Return(Exception):
    def __init__(self, value):
        self.value = value


class _Cell:
    """A closure cell the capture tracks (made by MAKE_CELL or for a nested function)."""

    def __init__(self, value=None):
        self.value = value


_CODE_CACHE = {}


def _instructions(code):
    hit = _CODE_CACHE.get(code)
    if hit is None:
        ins = list(dis.get_instructions(code))
        hit = (ins, {i.offset: k for k, i in enumerate(ins)})
        _CODE_CACHE[code] = hit
    return hit


class InstructionTranslatorBase:
    def __init__(self, code, f_globals, og, root=None, parent=None):
        self.code = code
        self.f_globals = f_globals
        self.f_builtins = f_globals.get("__builtins__", __builtins__)
        if isinstance(self.f_builtins, types.ModuleType):
            self.f_builtins = self.f_builtins.__dict__
        self.og = og
        self.root = root or self
        self.parent = parent
        self.depth = 0 if parent is None else parent.depth + 1
        self.instructions, self.index_of = _instructions(code)
        self.stack = []
        self.locals = {}
        self.cells = {}             # cellvar/freevar name -> _Cell or a source-read marker
        self.kw_names = None
        self.ip = 0
        self.current = None
        self.deleted = set()

    # ---------------------------------------------------------------- plumbing
    @property
    def builder(self):
        return self.root._builder

    @property
    def config(self):
        from . import config
        return config

    def push(self, v):
        self.stack.append(v)

    def pop(self):
        return self.stack.pop()

    def popn(self, n):
        if n == 0:
            return []
        out = self.stack[-n:]
        del self.stack[-n:]
        return out

    def jump(self, offset):
        self.ip = self.index_of[offset]

    def user_stack(self):
        frames = []
        tx = self
        while tx is not None:
            ins = tx.current
            line = None
            if ins is not None and ins.positions is not None:
                line = ins.positions.lineno
            import traceback
            frames.append(traceback.FrameSummary(tx.code.co_filename, line or
                                                 tx.code.co_firstlineno, tx.code.co_name,
                                                 lookup_line=False))
            tx = tx.parent
        return list(reversed(frames))

    def step(self):
        ins = self.instructions[self.ip]
        self.current = ins
        self.ip += 1
        handler = getattr(self, ins.opname, None)
        try:
            if handler is None:
                unsupported(f"bytecode {ins.opname}")
            handler(ins)
        except Unsupported as e:
            if not e.user_stack:             # the innermost frame: the user's full stack
                e.user_stack = self.user_stack()
            raise

    def run_inline(self):
        try:
            while True:
                self.step()
        except _Return as r:
            return r.value

    # ---------------------------------------------------------------- value helpers
    def specialize(self, v):
        """A Python int/float the program needs concretely (range bound, index): a SymInt
        becomes its hint, guarded to stay equal."""
        if isinstance(v, VariableTracker):
            try:
                v = v.as_python_constant()
            except NotConstant:
                unsupported(f"a traced value used as a Python number: {v}")
        if isinstance(v, SymInt):
            _ = v == int(v)          # records the guard in the ShapeEnv
            return int(v)
        return v

    def values_equal(self, a, b):
        if a is b:
            return True
        try:
            return a.as_python_constant() == b.as_python_constant()
        except NotConstant:
            return False

    def check_mutable(self, v, what):
        """Allows mutating a container built in the region, or a list/dict the program
        passed in or reads from an object (replayed on the real object after the graph,
        as PyTorch's side-effect tracking); anything else is a graph break."""
        if v.mutable_local:
            return
        if v.source is not None and isinstance(v, (ListVariable, DictVariable, SetVariable)):
            self.og.side_effects[id(v)] = ("container", v)
            return
        if not v.mutable_local:
            unsupported(f"{what} on a {v.python_type().__name__} that lives outside the "
                        "compiled region (a Python side effect)")

    def unpack_iterable(self, v):
        if isinstance(v, (BaseListVariable, RangeVariable)):
            return v.unpack(self)
        if isinstance(v, IteratorVariable):
            return v.unpack(self)
        if isinstance(v, DictVariable):
            return v.unpack(self)
        if isinstance(v, (TensorVariable, NNModuleVariable, ConstantVariable)):
            return v.unpack(self)
        unsupported(f"iterating over {v}")

    def wrap_result(self, out):
        """Wraps what an ember function returned on fake tensors."""
        if isinstance(out, Tensor):
            if id(out) in self.og.node_of:
                return TensorVariable(out)
            for tv in self.og.input_vars.values():
                if tv.fake is out:
                    return tv
            unsupported("an ember function returned a tensor the capture did not record")
        if isinstance(out, (tuple, list)) and not isinstance(out, str):
            items = [self.wrap_result(o) for o in out]
            if isinstance(out, list):
                return ListVariable(items, mutable_local=True)
            return TupleVariable(items, py_type=type(out) if type(out) is not tuple
                                 else tuple)
        return wrap_constant_result(out)

    def call_ember(self, fn, args, kwargs, name=None):
        a = [self.to_value(x) for x in args]
        k = {n: self.to_value(v) for n, v in kwargs.items()}
        og = self.og
        try:
            with og.recording():
                out = fn(*a, **k)
        except Unsupported:
            raise
        except NotImplementedError as e:
            unsupported(f"{name or fn}: {e}")
        except Exception as e:            # noqa: BLE001 - eager will raise it for real
            unsupported(f"{name or getattr(fn, '__name__', fn)} raised {type(e).__name__} "
                        f"on fake tensors: {e}")
        return self.wrap_result(out)

    def call_opaque(self, fn, args, kwargs, name):
        """`fn` as one graph node (its inside is not recorded): autograd.Function.apply,
        allow_in_graph functions."""
        a = [self.to_value(x) for x in args]
        k = {n: self.to_value(v) for n, v in kwargs.items()}
        og = self.og
        nargs = tuple(og.node_arg(x, name) for x in a)
        nkw = {n: og.node_arg(v, name) for n, v in k.items()}
        try:
            with og.fake_only():
                out = fn(*a, **k)
        except Unsupported:
            raise
        except Exception as e:            # noqa: BLE001 - eager will raise it for real
            unsupported(f"{name} raised {type(e).__name__} on fake tensors: {e}")
        node = og.graph.call_function(fn, nargs, nkw)
        og.bind(node, out)
        og.op_count += 1
        return self.wrap_result(out)

    def to_value(self, v):
        """A VariableTracker as the argument an ember function receives."""
        if isinstance(v, TensorVariable):
            return v.fake
        if isinstance(v, ConstantVariable):
            return v.value
        if isinstance(v, (TupleVariable, ListVariable)):
            vals = [self.to_value(x) for x in v.items]
            if v.py_type is list:
                return vals
            if hasattr(v.py_type, "_fields"):
                return v.py_type(*vals)
            return v.py_type(vals) if v.py_type is not tuple else tuple(vals)
        if isinstance(v, DictVariable):
            return {k: self.to_value(x) for k, x in v.items.items()}
        if isinstance(v, SliceVariable):
            return slice(*[self.to_value(p) for p in v.parts])
        if isinstance(v, (EmberFunctionVariable, BuiltinVariable)):
            return v.fn
        if isinstance(v, RangeVariable):
            return v.r
        if isinstance(v, NNModuleVariable):
            return v.value
        if hasattr(v, "value") and not isinstance(v, (UserDefinedObjectVariable,)):
            return v.value                 # classes (np.float32, dtypes), modules
        if isinstance(v, UserDefinedObjectVariable) and type(v.value).__module__ in (
                "numpy", "numpy.dtypes"):
            return v.value                 # np.dtype objects
        unsupported(f"passing {v} to an ember function")

    def binary_op(self, fn, a, b):
        if isinstance(a, TensorVariable) or isinstance(b, TensorVariable):
            if a.__class__ is TensorVariable and a.is_numpy or \
                    b.__class__ is TensorVariable and b.is_numpy:
                return self.numpy_binary(fn, a, b)
            return self.call_ember(fn, [a, b], {}, name=fn.__name__)
        if fn in (operator.add, operator.iadd, operator.mul, operator.imul) and (
                isinstance(a, BaseListVariable) or isinstance(b, BaseListVariable)):
            return self._seq_binary(fn, a, b)
        try:
            x, y = a.as_python_constant(), b.as_python_constant()
        except NotConstant:
            if fn in (operator.eq, operator.ne):
                same = a is b or (getattr(a, "value", None) is not None
                                  and getattr(a, "value", 0) is getattr(b, "value", 1))
                return ConstantVariable(same if fn is operator.eq else not same)
            unsupported(f"operator {fn.__name__} on {a} and {b}")
        return wrap_constant_result(fn(x, y))

    def _seq_binary(self, fn, a, b):
        if fn in (operator.add, operator.iadd):
            if fn is operator.iadd and isinstance(a, ListVariable):
                self.check_mutable(a, "list +=")
                a.items.extend(self.unpack_iterable(b))
                return a
            if not (isinstance(a, BaseListVariable) and isinstance(b, BaseListVariable)):
                unsupported("+ of a sequence and a non-sequence")
            cls = ListVariable if isinstance(a, ListVariable) else TupleVariable
            return cls(a.items + b.items, mutable_local=True)
        seq, n = (a, b) if isinstance(a, BaseListVariable) else (b, a)
        k = self.specialize(n)
        cls = ListVariable if isinstance(seq, ListVariable) else TupleVariable
        return cls(seq.items * k, mutable_local=True)

    def getattr(self, obj, name):
        return obj.var_getattr(self, name)

    def store_attr(self, obj, name, value):
        if isinstance(obj, TensorVariable) and obj.source is not None and name == "grad" \
                and obj.real is not None:
            obj.pending[name] = value              # p.grad = None / a new tensor
            self.og.side_effects[(id(obj), name)] = ("attr", obj, name, value)
            return
        if isinstance(obj, (UserDefinedObjectVariable, NNModuleVariable)) and \
                obj.source is not None and not isinstance(obj.value, type) and \
                type(obj.value).__setattr__ in (object.__setattr__, _module_setattr()):
            obj.pending[name] = value
            self.og.side_effects[(id(obj), name)] = ("attr", obj, name, value)
            return
        unsupported(f"setting attribute '{name}' of a {obj.python_type().__name__} "
                    "(a Python side effect)")

    def ctx_effect(self, what, obj):
        """Enter/exit a global-state context now (the capture sees its effect) and as a
        graph node (the replay does)."""
        fn = ctx_enter if what == "enter" else ctx_exit
        fn(obj)
        self.og.add_effect(fn, obj)

    def set_grad_mode(self, mode):
        STATE.grad_enabled = bool(mode)
        self.og.add_effect(set_grad_enabled, bool(mode))

    def make_super(self, args):
        if args:
            cls, obj = args[0].as_python_constant(), args[1]
        else:
            cls = self.cell_value("__class__").as_python_constant()
            obj = self.locals[self.code.co_varnames[0]]
        return SuperVariable(cls, obj)

    def cell_value(self, name):
        c = self.cells.get(name)
        if c is None:
            return self.load_free(name)
        return c.value

    def construct_user_object(self, cls_var, args, kwargs):
        unsupported(f"creating a {cls_var.value.__name__} object inside the compiled region")

    def inline_user_function(self, fn, args, kwargs, fn_source=None):
        if getattr(fn, "_ember_disable", False):
            unsupported(f"call to {fn.__qualname__}, marked ember.compiler.disable")
        code = fn.__code__
        if code.co_flags & (inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
            unsupported(f"async function {fn.__qualname__}")
        return self._inline(code, fn.__globals__, fn, args, kwargs, fn_source,
                            closure=fn.__closure__, defaults=fn.__defaults__,
                            kwdefaults=fn.__kwdefaults__)

    def inline_nested_function(self, nf, args, kwargs):
        return self._inline(nf.code, nf.fglobals, None, args, kwargs, None, closure=nf.cells,
                            defaults=nf.defaults, kwdefaults=nf.kwdefaults)

    def _inline(self, code, fglobals, fn, args, kwargs, fn_source, closure, defaults,
                kwdefaults):
        if self.depth >= MAX_INLINE_DEPTH:
            unsupported("recursion deeper than the capture inlines")
        tx = InliningTranslator(code, fglobals, self.og, root=self.root, parent=self)
        tx.bind_args(args, kwargs, defaults, kwdefaults)
        for i, name in enumerate(code.co_freevars):
            c = closure[i]
            if isinstance(c, _Cell):
                tx.cells[name] = c
            else:
                src = None
                if fn_source is not None:
                    src = AttrSource(AttrSource(fn_source, "__closure__"), f"{i}")
                try:
                    val = c.cell_contents
                except ValueError:
                    tx.cells[name] = _Cell(None)
                    continue
                tx.cells[name] = _Cell(self.builder.wrap(val, _closure_item(fn_source, i)))
                del src
        if code.co_flags & inspect.CO_GENERATOR:
            return IteratorVariable(tx.run_generator())
        return tx.run_inline()

    # ---------------------------------------------------------------- numpy
    def to_numpy(self, tv):
        return TensorVariable(tv.fake, is_numpy=True)

    def numpy_attr(self, tv, name):
        from .. import _numpy
        impl = _numpy.lookup_attribute(name)
        if impl is None:
            impl_m = _numpy.lookup_method(name)
            if impl_m is None:
                unsupported(f"ndarray attribute '{name}'")
            return _NumpyMethod(tv, name)
        return self._numpy_wrap(self.call_ember(impl, [_plain(tv)], {}, name=f"ndarray.{name}"))

    def numpy_method(self, tv, name, args, kwargs):
        from .. import _numpy
        impl = _numpy.lookup_method(name)
        if impl is None:
            unsupported(f"ndarray.{name}")
        return self._numpy_wrap(self.call_ember(impl, [_plain(tv), *args], kwargs,
                                                name=f"ndarray.{name}"))

    def numpy_call(self, fn, args, kwargs):
        from .. import _numpy
        impl = _numpy.lookup(fn)
        if impl is None:
            unsupported(f"numpy function {getattr(fn, '__name__', fn)}")
        args = [_plain(a) for a in args]
        kwargs = {k: _plain(v) for k, v in kwargs.items()}
        return self._numpy_wrap(self.call_ember(impl, args, kwargs,
                                                name=f"numpy.{fn.__name__}"))

    def numpy_binary(self, fn, a, b):
        from .. import _numpy
        name = fn.__name__
        if name.startswith("i") and name not in ("is_", "is_not") and isinstance(
                a, TensorVariable) and a.is_numpy:
            op = _numpy.inplace_op
        else:
            op = _numpy.binary_op
        out = self.call_ember(lambda x, y: op(name, x, y), [_plain(a), _plain(b)], {},
                              name=name)
        if op is _numpy.inplace_op and isinstance(out, TensorVariable):
            return a if out.fake is a.fake else self._numpy_wrap(out)
        return self._numpy_wrap(out)

    def _numpy_wrap(self, v):
        if isinstance(v, TensorVariable):
            return TensorVariable(v.fake, is_numpy=True)
        if isinstance(v, BaseListVariable):
            v.items = [self._numpy_wrap(x) for x in v.items]
        return v

    # ---------------------------------------------------------------- opcodes
    def NOP(self, ins):
        pass

    RESUME = NOP
    PRECALL = NOP
    COPY_FREE_VARS = NOP
    EXTENDED_ARG = NOP

    def MAKE_CELL(self, ins):
        name = ins.argval
        if name not in self.cells:
            init = self.locals.pop(name, None)
            self.cells[name] = _Cell(init)

    def POP_TOP(self, ins):
        self.pop()

    def PUSH_NULL(self, ins):
        self.push(NULL)

    def COPY(self, ins):
        self.push(self.stack[-ins.arg])

    def SWAP(self, ins):
        s = self.stack
        s[-1], s[-ins.arg] = s[-ins.arg], s[-1]

    def LOAD_CONST(self, ins):
        self.push(_const(ins.argval))

    def LOAD_FAST(self, ins):
        name = ins.argval
        v = self.locals.get(name)
        if v is None:
            v = self.load_initial_local(name)
        self.push(v)

    def load_initial_local(self, name):
        unsupported(f"local variable '{name}' referenced before assignment")

    def STORE_FAST(self, ins):
        self.locals[ins.argval] = self.pop()
        self.deleted.discard(ins.argval)

    def DELETE_FAST(self, ins):
        self.locals.pop(ins.argval, None)
        self.deleted.add(ins.argval)

    def LOAD_GLOBAL(self, ins):
        if ins.arg & 1:
            self.push(NULL)
        self.push(self.load_global(ins.argval))

    def load_global(self, name):
        if name in self.f_globals:
            return self.builder.wrap(self.f_globals[name], self.global_source(name))
        if name in self.f_builtins:
            return self.builder.wrap(self.f_builtins[name], None)
        unsupported(f"name '{name}' is not defined")

    def global_source(self, name):
        if self.f_globals is self.root.f_globals:
            return GlobalSource(name)
        mod = self.f_globals.get("__name__")
        from .source import ConstSource
        self.root.extra_consts[("mod", mod)] = sys.modules.get(mod) or _GlobalsHolder(
            self.f_globals)
        return _GlobalsOf(ConstSource(("mod", mod)), name)

    def STORE_GLOBAL(self, ins):
        unsupported(f"assigning global '{ins.argval}' (a Python side effect)")

    def LOAD_DEREF(self, ins):
        self.push(self.cell_value(ins.argval))

    LOAD_CLASSDEREF = LOAD_DEREF

    def load_free(self, name):
        unsupported(f"closure variable '{name}'")

    def STORE_DEREF(self, ins):
        c = self.cells.get(ins.argval)
        if c is None or not isinstance(c, _Cell):
            unsupported(f"assigning closure variable '{ins.argval}' of an outer function")
        c.value = self.pop()

    def LOAD_CLOSURE(self, ins):
        name = ins.argval
        c = self.cells.get(name)
        if c is None:
            self.load_free(name)
            c = self.cells[name]
        elif isinstance(c.value, _LazyCell):
            self.cell_value(name)            # read the frame's cell before sharing it
        self.push(_CellVariable(c))

    def LOAD_ATTR(self, ins):
        obj = self.pop()
        self.push(self.load_attr(obj, ins.argval))

    def load_attr(self, obj, name):
        try:
            return obj.var_getattr(self, name)
        except AttributeError as e:
            unsupported(f"AttributeError: {e}")

    def LOAD_METHOD(self, ins):
        obj = self.pop()
        self.push(NULL)
        self.push(self.load_attr(obj, ins.argval))

    def STORE_ATTR(self, ins):
        obj = self.pop()
        val = self.pop()
        self.store_attr(obj, ins.argval, val)

    def DELETE_ATTR(self, ins):
        unsupported("del of an attribute (a Python side effect)")

    def KW_NAMES(self, ins):
        self.kw_names = self.code.co_consts[ins.arg]

    def CALL(self, ins):
        argc = ins.arg
        args = self.popn(argc)
        a, b = self.pop(), self.pop()
        if b is NULL:
            fn = a
        else:
            fn, args = b, [a, *args]
        kw = {}
        if self.kw_names:
            names = self.kw_names
            self.kw_names = None
            vals = args[len(args) - len(names):]
            args = args[:len(args) - len(names)]
            kw = dict(zip(names, vals))
        self.push(self.call(fn, args, kw))

    def CALL_FUNCTION_EX(self, ins):
        kw = self.pop() if ins.arg & 1 else None
        args = self.pop()
        fn = self.pop()
        if self.stack and self.stack[-1] is NULL:
            self.pop()
        a = self.unpack_iterable(args)
        k = {}
        if kw is not None:
            if not isinstance(kw, DictVariable):
                unsupported("**kwargs from a non-dict")
            k = dict(kw.items)
        self.push(self.call(fn, a, k))

    def call(self, fn, args, kwargs):
        if isinstance(fn, BuiltinVariable) or isinstance(fn, EmberFunctionVariable):
            target = fn.fn
            if getattr(target, "__name__", "") in ("from_numpy", "as_tensor", "asarray") and \
                    args and isinstance(args[0], TensorVariable) and args[0].is_numpy and \
                    len(args) == 1 and not kwargs:
                return _plain(args[0])        # the same memory, seen as a tensor again
            if _is_numpy_callable(target):
                return self.numpy_call(target, args, kwargs)
        return fn.call_function(self, args, kwargs)

    def BINARY_OP(self, ins):
        b, a = self.pop(), self.pop()
        sym = _NB_OPS[ins.arg]
        fn = _BINARY[sym]
        if isinstance(a, ListVariable) and sym == "+=":
            self.push(self._seq_binary(fn, a, b))
            return
        self.push(self.binary_op(fn, a, b))

    def COMPARE_OP(self, ins):
        b, a = self.pop(), self.pop()
        self.push(self.binary_op(_COMPARE[ins.argval], a, b))

    def IS_OP(self, ins):
        b, a = self.pop(), self.pop()
        if isinstance(a, TensorVariable) or isinstance(b, TensorVariable):
            same = isinstance(a, TensorVariable) and isinstance(b, TensorVariable) and \
                a.fake is b.fake
        elif hasattr(a, "value") and hasattr(b, "value"):
            same = a.value is b.value
        else:
            same = a is b
        self.push(ConstantVariable(same != bool(ins.arg)))

    def CONTAINS_OP(self, ins):
        container, item = self.pop(), self.pop()
        if isinstance(container, DictVariable):
            found = dict_key(item) in container.items
        elif isinstance(container, TensorVariable):
            unsupported("`in` on a tensor (data-dependent)")
        else:
            found = any(self.values_equal(item, x) for x in self.unpack_iterable(container))
        self.push(ConstantVariable(found != bool(ins.arg)))

    def UNARY_NEGATIVE(self, ins):
        self.push(self._unary(operator.neg))

    def UNARY_POSITIVE(self, ins):
        self.push(self._unary(operator.pos))

    def UNARY_INVERT(self, ins):
        self.push(self._unary(operator.invert))

    def UNARY_NOT(self, ins):
        v = self.pop()
        self.push(ConstantVariable(not v.truth(self)))

    def _unary(self, fn):
        v = self.pop()
        if isinstance(v, TensorVariable) and v.is_numpy:
            from .. import _numpy
            return self._numpy_wrap(self.call_ember(
                lambda x: _numpy.unary_op(fn.__name__, x), [_plain(v)], {}, name=fn.__name__))
        if isinstance(v, TensorVariable):
            return self.call_ember(fn, [v], {}, name=fn.__name__)
        return wrap_constant_result(fn(v.as_python_constant()))

    def BINARY_SUBSCR(self, ins):
        key, obj = self.pop(), self.pop()
        self.push(self.subscr(obj, key))

    def subscr(self, obj, key):
        if isinstance(obj, TensorVariable):
            if obj.is_numpy:
                return self.numpy_method(obj, "__getitem__", [key], {})
            return self.call_ember(operator.getitem, [obj, key], {}, name="__getitem__")
        if isinstance(key, TensorVariable) and not isinstance(obj, DictVariable):
            unsupported("indexing a Python container with a tensor")
        if isinstance(obj, ConstantVariable):
            return wrap_constant_result(obj.value[self.to_value(key)])
        return obj.call_method(self, "__getitem__", [key], {})

    def STORE_SUBSCR(self, ins):
        key, obj, val = self.pop(), self.pop(), self.pop()
        if isinstance(obj, TensorVariable):
            if obj.is_numpy:
                self.numpy_method(obj, "__setitem__", [key, val], {})
                return
            self.call_ember(operator.setitem, [obj, key, val], {}, name="__setitem__")
            return
        obj.call_method(self, "__setitem__", [key, val], {})

    def DELETE_SUBSCR(self, ins):
        key, obj = self.pop(), self.pop()
        obj.call_method(self, "__delitem__", [key], {})

    def BUILD_TUPLE(self, ins):
        self.push(TupleVariable(self.popn(ins.arg)))

    def BUILD_LIST(self, ins):
        self.push(ListVariable(self.popn(ins.arg), mutable_local=True))

    def BUILD_SET(self, ins):
        s = SetVariable([], mutable_local=True)
        for v in self.popn(ins.arg):
            s.call_method(self, "add", [v], {})
        self.push(s)

    def BUILD_MAP(self, ins):
        kv = self.popn(2 * ins.arg)
        self.push(DictVariable({dict_key(kv[i]): kv[i + 1]
                                for i in range(0, len(kv), 2)}, mutable_local=True))

    def BUILD_CONST_KEY_MAP(self, ins):
        keys = self.pop().as_python_constant()
        vals = self.popn(ins.arg)
        self.push(DictVariable(dict(zip(keys, vals)), mutable_local=True))

    def BUILD_SLICE(self, ins):
        self.push(SliceVariable(self.popn(ins.arg)))

    def BUILD_STRING(self, ins):
        parts = self.popn(ins.arg)
        self.push(ConstantVariable("".join(p.as_python_constant() for p in parts)))

    def FORMAT_VALUE(self, ins):
        spec = self.pop().as_python_constant() if ins.arg & 0x04 else ""
        v = self.pop()
        if isinstance(v, TensorVariable):
            unsupported("formatting a tensor as a string (reads its values)")
        val = v.as_python_constant()
        conv = ins.arg & 0x03
        val = {0: val, 1: str(val), 2: repr(val), 3: ascii(val)}[conv]
        self.push(ConstantVariable(format(val, spec)))

    def _building(self, depth, what):
        """The container a comprehension or literal is building; one that came back from a
        graph break is a real list on the stack: its growth is replayed onto it."""
        c = self.stack[-depth]
        self.check_mutable(c, what)
        return c

    def LIST_APPEND(self, ins):
        v = self.pop()
        self._building(ins.arg, "list append").items.append(v)

    def SET_ADD(self, ins):
        v = self.pop()
        self._building(ins.arg, "set add").call_method(self, "add", [v], {})

    def MAP_ADD(self, ins):
        v, k = self.pop(), self.pop()
        self._building(ins.arg, "dict insert").items[dict_key(k)] = v

    def LIST_EXTEND(self, ins):
        v = self.pop()
        self._building(ins.arg, "list extend").items.extend(self.unpack_iterable(v))

    SET_UPDATE = LIST_EXTEND

    def LIST_TO_TUPLE(self, ins):
        self.push(TupleVariable(self.pop().items))

    def DICT_UPDATE(self, ins):
        v = self.pop()
        if not isinstance(v, DictVariable):
            unsupported("** of a non-dict")
        self._building(ins.arg, "dict update").items.update(v.items)

    DICT_MERGE = DICT_UPDATE

    def UNPACK_SEQUENCE(self, ins):
        items = self.unpack_iterable(self.pop())
        if len(items) != ins.arg:
            unsupported(f"unpacking {len(items)} values into {ins.arg}")
        for v in reversed(items):
            self.push(v)

    def UNPACK_EX(self, ins):
        items = self.unpack_iterable(self.pop())
        before, after = ins.arg & 0xFF, ins.arg >> 8
        if len(items) < before + after:
            unsupported("not enough values to unpack")
        mid = items[before:len(items) - after]
        for v in reversed(items[len(items) - after:]):
            self.push(v)
        self.push(ListVariable(mid, mutable_local=True))
        for v in reversed(items[:before]):
            self.push(v)

    def GET_ITER(self, ins):
        v = self.pop()
        if isinstance(v, IteratorVariable):
            self.push(v)
        else:
            self.push(IteratorVariable(self.unpack_iterable(v)))

    def FOR_ITER(self, ins):
        it = self.stack[-1]
        if not isinstance(it, IteratorVariable):
            unsupported("for loop over an untracked iterator")
        v = it.next()
        if v is None:
            self.pop()
            self.jump(ins.argval)
        else:
            self.push(v)

    def _jump_if(self, ins, when, pop=True):
        v = self.stack[-1]
        truth = v.truth(self)
        if pop:
            self.pop()
        if truth == when:
            self.jump(ins.argval)
        elif not pop:
            self.pop()

    def POP_JUMP_FORWARD_IF_FALSE(self, ins):
        self._jump_if(ins, False)

    def POP_JUMP_FORWARD_IF_TRUE(self, ins):
        self._jump_if(ins, True)

    POP_JUMP_BACKWARD_IF_FALSE = POP_JUMP_FORWARD_IF_FALSE
    POP_JUMP_BACKWARD_IF_TRUE = POP_JUMP_FORWARD_IF_TRUE

    def _jump_if_none(self, ins, when):
        v = self.pop()
        is_none = isinstance(v, ConstantVariable) and v.value is None
        if is_none == when:
            self.jump(ins.argval)

    def POP_JUMP_FORWARD_IF_NONE(self, ins):
        self._jump_if_none(ins, True)

    def POP_JUMP_FORWARD_IF_NOT_NONE(self, ins):
        self._jump_if_none(ins, False)

    POP_JUMP_BACKWARD_IF_NONE = POP_JUMP_FORWARD_IF_NONE
    POP_JUMP_BACKWARD_IF_NOT_NONE = POP_JUMP_FORWARD_IF_NOT_NONE

    def JUMP_IF_FALSE_OR_POP(self, ins):
        self._jump_if(ins, False, pop=False)

    def JUMP_IF_TRUE_OR_POP(self, ins):
        self._jump_if(ins, True, pop=False)

    def JUMP_FORWARD(self, ins):
        self.jump(ins.argval)

    JUMP_BACKWARD = JUMP_FORWARD
    JUMP_BACKWARD_NO_INTERRUPT = JUMP_FORWARD

    def RETURN_VALUE(self, ins):
        raise _Return(self.pop())

    def MAKE_FUNCTION(self, ins):
        code = self.pop().as_python_constant()
        flags = ins.arg
        cells = self.pop().items if flags & 0x08 else ()
        if flags & 0x04:
            self.pop()
        kwdefaults = self.to_value(self.pop()) if flags & 0x02 else None
        defaults = tuple(self.to_value(x) for x in self.pop().items) if flags & 0x01 else None
        self.push(NestedUserFunctionVariable(code, self.f_globals, code.co_name, defaults,
                                             kwdefaults, tuple(c.cell for c in cells)))

    def BEFORE_WITH(self, ins):
        ctx = self.pop()
        if not isinstance(ctx, (GradModeVariable, ContextObjectVariable)):
            unsupported(f"`with` on {ctx} (only grad-mode context managers are captured)")
        self.push(ctx.var_getattr(self, "__exit__"))
        self.push(ctx.enter(self))

    def LOAD_ASSERTION_ERROR(self, ins):
        self.push(BuiltinVariable(AssertionError))

    def RAISE_VARARGS(self, ins):
        unsupported("raise")

    def IMPORT_NAME(self, ins):
        fromlist, level = self.pop().as_python_constant(), self.pop().as_python_constant()
        mod = __import__(ins.argval, self.f_globals, None, fromlist, level)
        self.push(self.builder.wrap(mod, None))

    def IMPORT_FROM(self, ins):
        self.push(self.load_attr(self.stack[-1], ins.argval))

    def RETURN_GENERATOR(self, ins):
        self.push(ConstantVariable(None))      # popped by the POP_TOP that follows

    def GET_LEN(self, ins):
        self.push(BuiltinVariable(len).call_function(self, [self.stack[-1]], {}))


class _CellVariable(VariableTracker):
    def __init__(self, cell):
        self.cell = cell


class _NumpyMethod(VariableTracker):  # noqa: D101
    def __init__(self, tv, name):
        self.tv, self.name = tv, name
        self.obj = tv

    def call_function(self, tx, args, kwargs):
        return tx.numpy_method(self.tv, self.name, args, kwargs)


class _GlobalsHolder:
    def __init__(self, d):
        self.__dict__.update(d)


class _GlobalsOf(AttrSource):
    """A global of another module (an inlined function's), read as `module.name`."""


def _closure_item(fn_source, i):
    if fn_source is None:
        return None
    return AttrSource(_ClosureIndex(fn_source, i), "cell_contents")


class _ClosureIndex(AttrSource):
    def __init__(self, base, i):
        super().__init__(base, "__closure__")
        self.i = i

    def expr(self):
        return f"{self.base.expr()}.__closure__[{self.i}]"


def _plain(v):
    if isinstance(v, TensorVariable) and v.is_numpy:
        return TensorVariable(v.fake, v.source, v.real)
    return v


def _is_numpy_callable(fn):
    mod = getattr(fn, "__module__", None) or ""
    return (mod == "numpy" or mod.startswith("numpy.")) and callable(fn) \
        or type(fn).__name__ == "ufunc"


def _const(v):
    if isinstance(v, tuple):
        return TupleVariable([_const(x) for x in v])
    if isinstance(v, frozenset):
        return ConstantVariable(v)
    return ConstantVariable(v)


def _module_setattr():
    from ..nn.modules.module import Module
    return Module.__setattr__


def real_param_name(name, code):
    """inspect renames comprehension arguments (`.0` -> `implicit0`)."""
    if name.startswith("implicit") and "." + name[8:] in code.co_varnames:
        return "." + name[8:]
    return name


def _code_signature(code, defaults, kwdefaults):
    cells = tuple(types.CellType() for _ in code.co_freevars) or None
    fn = types.FunctionType(code, {}, code.co_name, defaults, cells)
    fn.__kwdefaults__ = kwdefaults
    return inspect.signature(fn, follow_wrapped=False)


class InliningTranslator(InstructionTranslatorBase):
    def bind_args(self, args, kwargs, defaults, kwdefaults):
        code = self.code
        sig = _code_signature(code, defaults, kwdefaults)
        try:
            ba = sig.bind(*args, **kwargs)
        except TypeError as e:
            unsupported(f"calling {code.co_name}: {e}")
        for name, param in sig.parameters.items():
            if name in ba.arguments:
                v = ba.arguments[name]
                if param.kind is param.VAR_POSITIONAL:
                    v = TupleVariable(list(v))
                elif param.kind is param.VAR_KEYWORD:
                    v = DictVariable(dict(v), mutable_local=True)
            elif param.default is not param.empty:
                v = self.builder.wrap(param.default, None) if not isinstance(
                    param.default, VariableTracker) else param.default
            elif param.kind is param.VAR_POSITIONAL:
                v = TupleVariable([])
            elif param.kind is param.VAR_KEYWORD:
                v = DictVariable({}, mutable_local=True)
            else:
                unsupported(f"{code.co_name}: missing argument {name}")
            name = real_param_name(name, code)
            if name in code.co_cellvars:
                self.cells[name] = _Cell(v)
            else:
                self.locals[name] = v

    def run_generator(self):
        out = []
        while True:
            ins = self.instructions[self.ip]
            if ins.opname == "YIELD_VALUE":
                self.current = ins
                self.ip += 1
                out.append(self.pop())
                self.push(ConstantVariable(None))
                continue
            if ins.opname == "RETURN_VALUE":
                return out
            self.step()

    def RESUME(self, ins):
        pass


class InstructionTranslator(InstructionTranslatorBase):
    """The top frame of a segment: starts from the real frame state at `offset`."""

    def __init__(self, code, f_globals, og, frame, offset, break_at, ctx):
        super().__init__(code, f_globals, og)
        self.ctx = ctx
        self.frame = frame                  # (L, S, C): real locals, stack, closure cells
        self._builder = VariableBuilder(self)
        self.break_at = break_at
        self.extra_consts = {}
        self.jump(offset)
        L, S, C = frame
        self.stack = [self._wrap_stack(v, i) for i, v in enumerate(S)]
        for name in code.co_cellvars:
            if name in L:
                self.cells[name] = _Cell(_LazyCell(LocalSource(name)))
        self.start_offset = offset

    def _wrap_stack(self, v, i):
        from .runtime import NULL_OBJ
        if v is NULL_OBJ:
            return NULL
        return self.builder.wrap(v, StackSource(i))

    def load_initial_local(self, name):
        L = self.frame[0]
        if name not in L:
            unsupported(f"local variable '{name}' referenced before assignment")
        v = self.builder.wrap(L[name], LocalSource(name))
        self.locals[name] = v
        return v

    def cell_value(self, name):
        c = self.cells.get(name)
        if c is None:
            return self.load_free(name)
        if isinstance(c.value, _LazyCell):
            cell = self.frame[0][name]
            try:
                val = cell.cell_contents
            except ValueError:
                unsupported(f"free variable '{name}' referenced before assignment")
            c.value = self.builder.wrap(val, AttrSource(LocalSource(name), "cell_contents"))
        return c.value

    def load_free(self, name):
        C = self.frame[2]
        if name not in C:
            unsupported(f"closure variable '{name}' not found")
        try:
            val = C[name].cell_contents
        except ValueError:
            unsupported(f"free variable '{name}' referenced before assignment")
        v = self.builder.wrap(val, ClosureSource(name))
        self.cells[name] = _Cell(v)
        self.cells[name].outer = True
        return v

    def STORE_DEREF(self, ins):
        c = self.cells.get(ins.argval)
        if c is None or getattr(c, "outer", False):
            unsupported(f"assigning closure variable '{ins.argval}' of an outer function")
        c.value = self.pop()
        c.dirty = True

    def run(self):
        """Interprets until the function returns (ReturnAt) or `break_at` (BreakAt)."""
        while True:
            ins = self.instructions[self.ip]
            if ins.offset == self.break_at:
                self.current = ins
                return BreakAt(ins.offset)
            try:
                self.step()
            except _Return as r:
                return ReturnAt(r.value)
            except Unsupported as e:
                e.user_stack = e.user_stack or self.user_stack()
                e._ember_ins = self.current
                raise


class _LazyCell:
    def __init__(self, source):
        self.source = source


