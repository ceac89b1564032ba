"""Names and attributes in the symbolic interpreter: where a value is read from and
where a write goes.

Locals, globals (of the compiled function's module or of an inlined function's), closure
cells and attributes. A read from the real frame is wrapped with its Source, so the
guards can re-check it; a write that outlives the compiled region (an attribute of a
module or object, `p.grad`) is recorded as a side effect and replayed on the real object
after the graph runs."""
import sys

from .calls import NULL
from .source import GlobalSource, AttrSource, ConstSource
from .variables.base import VariableTracker, unsupported
from .variables.objects import NNModuleVariable, SuperVariable, UserDefinedObjectVariable
from .variables.tensor import TensorVariable

__all__ = ["ScopeMixin"]


class _Cell:
    """A closure cell the capture tracks (made by MAKE_CELL or for a nested function)."""

    def __init__(self, value=None):
        self.value = value


class _LazyCell:
    def __init__(self, source):
        self.source = source


class _CellVariable(VariableTracker):
    def __init__(self, cell):
        self.cell = cell


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


def _module_setattr():
    from ..nn.modules.module import Module
    return Module.__setattr__


class ScopeMixin:
    """InstructionTranslatorBase's name and attribute handling (a mixin)."""

    def MAKE_CELL(self, ins):
        name = ins.argval
        if name not in self.cells:
            init = self.locals.pop(name, None)
            self.cells[name] = _Cell(init)

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
