"""Operators in the symbolic interpreter: binary, comparison, identity, membership,
unary and subscript opcodes.

On a tensor the operator is an ember call recorded into the graph; on an ndarray it is
traced through ember._numpy; on lists and tuples `+`/`*` build new containers; on
constants it is computed now."""
import dis
import operator

from .numpy_interop import _plain
from .variables.base import ConstantVariable, NotConstant, unsupported
from .variables.builder import wrap_constant_result
from .variables.containers import (ListVariable, TupleVariable, DictVariable,
                                   BaseListVariable, dict_key)
from .variables.tensor import TensorVariable

__all__ = ["OperatorMixin"]

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


class OperatorMixin:
    """InstructionTranslatorBase's operators (a mixin)."""

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
