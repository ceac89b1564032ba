"""Lists, tuples, dicts, slices, ranges and iterators the capture tracks item by item."""
from .base import VariableTracker, ConstantVariable, NotConstant, unsupported

__all__ = ["ListVariable", "TupleVariable", "DictVariable", "SliceVariable", "RangeVariable",
           "IteratorVariable", "SetVariable"]


class BaseListVariable(VariableTracker):
    def __init__(self, items, source=None, mutable_local=False, py_type=None):
        self.items = list(items)
        self.source = source
        self.mutable_local = mutable_local
        self.py_type = py_type or self._default_type

    def python_type(self):
        return self.py_type

    def as_python_constant(self):
        return self.py_type([x.as_python_constant() for x in self.items]) \
            if self.py_type in (list, tuple) else \
            self.py_type(*[x.as_python_constant() for x in self.items]) \
            if hasattr(self.py_type, "_fields") else \
            self.py_type([x.as_python_constant() for x in self.items])

    def unpack(self, tx):
        return list(self.items)

    def truth(self, tx):
        return bool(self.items)

    def getitem(self, tx, key):
        k = key.as_python_constant()
        if isinstance(k, slice):
            return type(self)(self.items[k], mutable_local=True, py_type=self._slice_type())
        try:
            return self.items[int(k) if not isinstance(k, int) else k]
        except IndexError:
            unsupported(f"{self.py_type.__name__} index {k} out of range")

    def _slice_type(self):
        return self.py_type if self.py_type in (list, tuple) else tuple

    def call_method(self, tx, name, args, kwargs):
        if name == "__getitem__":
            return self.getitem(tx, args[0])
        if name == "__len__":
            return ConstantVariable(len(self.items))
        if name == "index":
            target = args[0]
            for i, x in enumerate(self.items):
                if tx.values_equal(x, target):
                    return ConstantVariable(i)
            unsupported("list.index of a missing value")
        if name == "count":
            return ConstantVariable(sum(1 for x in self.items if tx.values_equal(x, args[0])))
        if hasattr(self.py_type, "_fields") and name in self.py_type._fields:
            return self.items[self.py_type._fields.index(name)]
        unsupported(f"{self.py_type.__name__}.{name}")

    def var_getattr(self, tx, name):
        if hasattr(self.py_type, "_fields") and name in self.py_type._fields:
            return self.items[self.py_type._fields.index(name)]
        from .functions import BoundBuiltinMethod
        return BoundBuiltinMethod(self, name)

    def __repr__(self):
        return f"{type(self).__name__}({self.items!r})"


class TupleVariable(BaseListVariable):
    _default_type = tuple


class ListVariable(BaseListVariable):
    _default_type = list

    def call_method(self, tx, name, args, kwargs):
        if name in ("append", "extend", "insert", "pop", "remove", "clear", "reverse",
                    "__setitem__", "__delitem__", "sort"):
            tx.check_mutable(self, f"list.{name}")
            if name == "append":
                self.items.append(args[0])
            elif name == "extend":
                self.items.extend(tx.unpack_iterable(args[0]))
            elif name == "insert":
                self.items.insert(args[0].as_python_constant(), args[1])
            elif name == "pop":
                return self.items.pop(*(a.as_python_constant() for a in args))
            elif name == "clear":
                self.items.clear()
            elif name == "reverse":
                self.items.reverse()
            elif name == "remove":
                for i, x in enumerate(self.items):
                    if tx.values_equal(x, args[0]):
                        del self.items[i]
                        break
            elif name == "__setitem__":
                k = args[0].as_python_constant()
                if isinstance(k, slice):
                    self.items[k] = tx.unpack_iterable(args[1])
                else:
                    self.items[k] = args[1]
            elif name == "__delitem__":
                del self.items[args[0].as_python_constant()]
            elif name == "sort":
                try:
                    keyed = sorted(self.items, key=lambda v: v.as_python_constant(),
                                   reverse=bool(kwargs["reverse"].as_python_constant())
                                   if "reverse" in kwargs else False)
                except NotConstant:
                    unsupported("list.sort of traced values")
                if "key" in kwargs:
                    unsupported("list.sort(key=...)")
                self.items[:] = keyed
            return ConstantVariable(None)
        if name == "copy":
            return ListVariable(self.items, mutable_local=True)
        return super().call_method(tx, name, args, kwargs)


class SetVariable(BaseListVariable):
    _default_type = set

    def as_python_constant(self):
        return {x.as_python_constant() for x in self.items}

    def call_method(self, tx, name, args, kwargs):
        if name == "add":
            tx.check_mutable(self, "set.add")
            if not any(tx.values_equal(x, args[0]) for x in self.items):
                self.items.append(args[0])
            return ConstantVariable(None)
        return super().call_method(tx, name, args, kwargs)


def dict_key(v):
    """The Python key a tracked value stands for: a constant, or a real object by identity
    (a parameter keying an optimizer's state, a module)."""
    from .tensor import TensorVariable
    if isinstance(v, TensorVariable):
        if v.real is None:
            unsupported("a tensor made in the region used as a dict key")
        return v.real
    if hasattr(v, "value") and not isinstance(v, ConstantVariable):
        return v.value
    return v.as_python_constant()


class DictVariable(VariableTracker):
    """A dict (or OrderedDict / defaultdict) keyed by constants or by real objects."""

    def __init__(self, items, source=None, mutable_local=False, py_type=dict):
        self.items = dict(items)        # python key -> VariableTracker
        self.source, self.mutable_local, self.py_type = source, mutable_local, py_type

    def python_type(self):
        return self.py_type

    def as_python_constant(self):
        return {k: v.as_python_constant() for k, v in self.items.items()}

    def truth(self, tx):
        return bool(self.items)

    def key_var(self, tx, k):
        v = self.key_vars.get(id(k)) if hasattr(self, "key_vars") else None
        return v if v is not None else ConstantVariable(k)

    def unpack(self, tx):
        return [self.key_var(tx, k) for k in self.items]

    def var_getattr(self, tx, name):
        from .functions import BoundBuiltinMethod
        return BoundBuiltinMethod(self, name)

    def call_method(self, tx, name, args, kwargs):
        c = [dict_key(a) if i == 0 and name != "update" else None
             for i, a in enumerate(args)]
        if name == "__getitem__":
            if c[0] not in self.items:
                factory = getattr(self, "default_factory", None)
                if factory is None:
                    unsupported(f"dict key {c[0]!r} missing (KeyError)")
                tx.check_mutable(self, "defaultdict insert")
                self.items[c[0]] = factory.call_function(tx, [], {})
            return self.items[c[0]]
        if name == "get":
            return self.items.get(c[0], args[1] if len(args) > 1 else ConstantVariable(None))
        if name == "__contains__":
            return ConstantVariable(c[0] in self.items)
        if name == "__len__":
            return ConstantVariable(len(self.items))
        if name == "keys":
            return TupleVariable([self.key_var(tx, k) for k in self.items])
        if name == "values":
            return TupleVariable(list(self.items.values()))
        if name == "items":
            return TupleVariable([TupleVariable([self.key_var(tx, k), v])
                                  for k, v in self.items.items()])
        if name == "copy":
            return DictVariable(self.items, mutable_local=True)
        if name in ("__setitem__", "update", "pop", "setdefault", "__delitem__", "clear"):
            tx.check_mutable(self, f"dict.{name}")
            if name == "__setitem__":
                self.items[c[0]] = args[1]
            elif name == "update":
                src = args[0] if args else None
                if src is not None:
                    if not isinstance(src, DictVariable):
                        unsupported("dict.update from a non-dict")
                    self.items.update(src.items)
                for k, v in kwargs.items():
                    self.items[k] = v
            elif name == "pop":
                if c[0] in self.items:
                    return self.items.pop(c[0])
                if len(args) > 1:
                    return args[1]
                unsupported("dict.pop of a missing key")
            elif name == "setdefault":
                return self.items.setdefault(c[0], args[1] if len(args) > 1
                                             else ConstantVariable(None))
            elif name == "__delitem__":
                del self.items[c[0]]
            else:
                self.items.clear()
            return ConstantVariable(None)
        unsupported(f"dict.{name}")


class SliceVariable(VariableTracker):
    def __init__(self, parts):
        self.parts = parts

    def python_type(self):
        return slice

    def as_python_constant(self):
        return slice(*[p.as_python_constant() for p in self.parts])


class RangeVariable(VariableTracker):
    def __init__(self, r):
        self.r = r

    def python_type(self):
        return range

    def as_python_constant(self):
        return self.r

    def unpack(self, tx):
        return [ConstantVariable(i) for i in self.r]


class IteratorVariable(VariableTracker):
    """An iterator over items the capture knows (lists, ranges, zip, enumerate, dicts)."""
    mutable_local = True

    def __init__(self, items):
        self.items = list(items)
        self.index = 0

    def next(self):
        if self.index >= len(self.items):
            return None
        v = self.items[self.index]
        self.index += 1
        return v

    def unpack(self, tx):
        rest = self.items[self.index:]
        self.index = len(self.items)
        return rest
