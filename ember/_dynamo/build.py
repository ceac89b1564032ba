"""Containers in the symbolic interpreter: the opcodes that build them (literals,
comprehension appends, `*`/`**` merges, f-strings) and take them apart (unpacking).

A container built in the region is a mutable VariableTracker; one that came back from a
graph break is a real object on the stack, and its growth is replayed onto it."""
from .variables.base import ConstantVariable, unsupported
from .variables.containers import (ListVariable, TupleVariable, DictVariable, SliceVariable,
                                   SetVariable, dict_key)
from .variables.tensor import TensorVariable

__all__ = ["BuildMixin"]


class BuildMixin:
    """InstructionTranslatorBase's container building and unpacking (a mixin)."""

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
