"""VariableTracker: what the capture knows about one Python value of the user's program.

Note: a tracker either stands for a real object the capture may touch only through its
source (modules, user objects, functions: `value` is that object, guarded where read) or
for a value the capture built itself (tensors as fake tensors with graph nodes, constants,
new lists/dicts/tuples). `realize` is how the frame state is rebuilt from a tracker after
the graph ran (graph outputs, sources, constants)."""
from ..exc import Unsupported

__all__ = ["VariableTracker", "ConstantVariable", "unsupported", "NotConstant"]


class NotConstant(Exception):
    pass


def unsupported(msg):
    raise Unsupported(msg)


class VariableTracker:
    source = None
    mutable_local = False      # built during the capture (a new list, dict, object)

    def python_type(self):
        unsupported(f"type() of {self}")

    def as_python_constant(self):
        raise NotConstant(self)

    def is_python_constant(self):
        try:
            self.as_python_constant()
            return True
        except NotConstant:
            return False

    def var_getattr(self, tx, name):
        unsupported(f"attribute '{name}' of {self}")

    def call_function(self, tx, args, kwargs):
        unsupported(f"call of {self}")

    def call_method(self, tx, name, args, kwargs):
        attr = self.var_getattr(tx, name)
        return attr.call_function(tx, args, kwargs)

    def truth(self, tx):
        try:
            return bool(self.as_python_constant())
        except NotConstant:
            unsupported(f"bool() of {self}")

    def unpack(self, tx):
        unsupported(f"unpacking {self}")

    def __repr__(self):
        return f"{type(self).__name__}()"


class ConstantVariable(VariableTracker):
    """A Python value the capture may compute with: numbers, strings, None, dtypes,
    devices, sizes (SymInts stay symbolic through arithmetic)."""

    def __init__(self, value, source=None):
        self.value, self.source = value, source

    def python_type(self):
        return type(self.value)

    def as_python_constant(self):
        return self.value

    def truth(self, tx):
        return bool(self.value)

    def var_getattr(self, tx, name):
        from .builder import wrap_constant_result
        return wrap_constant_result(getattr(self.value, name))

    def call_method(self, tx, name, args, kwargs):
        from .builder import wrap_constant_result
        try:
            a = [x.as_python_constant() for x in args]
            k = {n: x.as_python_constant() for n, x in kwargs.items()}
        except NotConstant:
            unsupported(f"{type(self.value).__name__}.{name} with traced arguments")
        return wrap_constant_result(getattr(self.value, name)(*a, **k))

    def unpack(self, tx):
        try:
            return [ConstantVariable(v) for v in self.value]
        except TypeError:
            unsupported(f"unpacking {type(self.value).__name__}")

    def __repr__(self):
        return f"ConstantVariable({self.value!r})"
