"""The symbolic bytecode interpreter (PyTorch's Dynamo design, DESIGN §7.1).

Note: `InstructionTranslator` runs one segment of a user function's bytecode (CPython
3.11) over VariableTrackers: tensors are fake tensors whose ops are recorded into the
OutputGraph, Python values the program reads are guarded where it read them, user
functions and modules are inlined. A construct it cannot put in the graph raises
Unsupported; the top-level frame then restarts the segment and stops just before the
instruction that led there (a graph break): the graph so far is compiled, the runtime
executes that one instruction for real, and capture resumes after it.

This module holds the frames (the top frame, inlined frames), the step loop, the stack,
control flow and `with`; the opcode families live by concept beside it, each a mixin of
`InstructionTranslatorBase`: names and attributes (scope.py), calls (calls.py),
operators (operators.py), container building and unpacking (build.py), ndarray code
(numpy_interop.py)."""
import dis
import inspect
import types

from .._dispatch import STATE
from .._symbolic import SymInt
from .build import BuildMixin
from .calls import CallMixin, NULL
from .exc import Unsupported
from .numpy_interop import NumpyMixin
from .operators import OperatorMixin
from .output_graph import set_grad_enabled, ctx_enter, ctx_exit
from .scope import ScopeMixin, _Cell, _LazyCell, _closure_item
from .source import LocalSource, ClosureSource, StackSource, AttrSource
from .variables.base import VariableTracker, ConstantVariable, NotConstant, unsupported
from .variables.builder import VariableBuilder
from .variables.containers import (ListVariable, TupleVariable, DictVariable,
                                   IteratorVariable, SetVariable, BaseListVariable,
                                   RangeVariable)
from .variables.functions import BuiltinVariable
from .variables.objects import NNModuleVariable, GradModeVariable, ContextObjectVariable
from .variables.tensor import TensorVariable

__all__ = ["InstructionTranslator", "BreakAt", "ReturnAt"]

MAX_INLINE_DEPTH = 40


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


_CODE_CACHE = {}


def _instructions(code):
    hit = _CODE_CACHE.get(code)
    if hit is None:
        ins = list(dis.get_instructions(code))
        hit = (ins, {i.offset: k for k, i in enumerate(ins)})
        _CODE_CACHE[code] = hit
    return hit


class InstructionTranslatorBase(ScopeMixin, CallMixin, OperatorMixin, BuildMixin, NumpyMixin):
    """One frame's interpreter: `step` looks the instruction's handler up by opcode name on
    this class, whose opcode families come from the mixins named in the module's Note."""

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

    # ---------------------------------------------------------------- global state
    def ctx_effect(self, what, obj):
        """Enter/exit a global-state context now (the capture sees its effect) and as a
        graph node (the replay does)."""
        fn = ctx_enter if what == "enter" else ctx_exit
        fn(obj)
        self.og.add_effect(fn, obj)

    def set_grad_mode(self, mode):
        STATE.grad_enabled = bool(mode)
        self.og.add_effect(set_grad_enabled, bool(mode))

    # ---------------------------------------------------------------- inlining
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
                try:
                    val = c.cell_contents
                except ValueError:
                    tx.cells[name] = _Cell(None)
                    continue
                tx.cells[name] = _Cell(self.builder.wrap(val, _closure_item(fn_source, i)))
        if code.co_flags & inspect.CO_GENERATOR:
            return IteratorVariable(tx.run_generator())
        return tx.run_inline()

    # ---------------------------------------------------------------- stack opcodes
    def NOP(self, ins):
        pass

    RESUME = NOP
    PRECALL = NOP
    COPY_FREE_VARS = NOP
    EXTENDED_ARG = NOP

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

    # ---------------------------------------------------------------- control flow
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

    def RETURN_GENERATOR(self, ins):
        self.push(ConstantVariable(None))      # popped by the POP_TOP that follows

    # ---------------------------------------------------------------- with, raise, import, match
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

    def GET_LEN(self, ins):
        self.push(BuiltinVariable(len).call_function(self, [self.stack[-1]], {}))


def _const(v):
    if isinstance(v, tuple):
        return TupleVariable([_const(x) for x in v])
    return ConstantVariable(v)



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

