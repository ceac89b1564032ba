"""Decompositions of composite ops into primitives, as torch._decomp has them.

Note: a decomposition is the `decomp=` of the op's registration (written in ember ops,
next to its kernel); `decomposition_table` reads them from the registry on each use, so it
is never out of date. `decompose(op, args)` runs an op with every composite it reaches,
however deep, replaced by its decomposition, so only primitives (tag `prim`) execute:
this is what a compiler or export sees.
"""
from collections.abc import Mapping

from ._modes import TorchDispatchMode
from .ops._registry import REGISTRY, OpDef, OpOverloadPacket

__all__ = ["decomposition_table", "get_decompositions", "decompose", "DecomposeMode"]


class _DecompositionTable(Mapping):
    """op -> decomposition function, for every registry op with a `decomp` (live view).
    Keys are the ops; an op's registry name is accepted for lookup too."""

    def _ops(self):
        return [op for op in REGISTRY.values() if op.decomp is not None]

    def __getitem__(self, op):
        o = REGISTRY.get(op) if isinstance(op, str) else op
        if o is None or getattr(o, "decomp", None) is None or REGISTRY.get(o.name) is not o:
            raise KeyError(op)
        return o.decomp

    def __iter__(self):
        return iter(self._ops())

    def __len__(self):
        return len(self._ops())

    def __contains__(self, op):
        try:
            self[op]
        except (KeyError, TypeError, AttributeError):
            return False
        return True

    def __repr__(self):
        return f"<decomposition_table: {len(self)} ops>"


decomposition_table = _DecompositionTable()


def get_decompositions(aten_ops):
    """{op: decomposition} for the given ops (ops, registry names, or packets such as
    `ember.ops.aten.max`, meaning all their overloads); ops without one are left out,
    as in torch._decomp.get_decompositions."""
    out = {}
    for a in aten_ops:
        if isinstance(a, OpOverloadPacket):
            ops = [a._overloads[k] for k in a.overloads()]
        elif isinstance(a, str):
            if a not in REGISTRY:
                raise NotImplementedError(f"get_decompositions: no op named '{a}' in the "
                                          "registry")
            ops = [REGISTRY[a]]
        elif isinstance(a, OpDef):
            ops = [a]
        else:
            raise TypeError(f"get_decompositions: expected ops, op names or packets, "
                            f"not {type(a).__name__}")
        for op in ops:
            if op.decomp is not None:
                out[op] = op.decomp
    return out


class DecomposeMode(TorchDispatchMode):
    """Runs every dispatched composite as its decomposition (recursively: the
    decomposition's own ops come back through this mode); primitives run as they are.
    `dispatched` lists the ops that actually ran, in order."""

    def __init__(self, decompositions=None):
        super().__init__()
        self.decompositions = decompositions
        self.dispatched = []

    def _decomp_for(self, func):
        if self.decompositions is None:
            return func.decomp
        return self.decompositions.get(func)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        d = self._decomp_for(func)
        if d is None:
            self.dispatched.append(func)
            return func(*args, **(kwargs or {}))
        if kwargs:
            args = func._bind(args, kwargs)
        with self:
            return d(*args)


def decompose(op, args, decompositions=None):
    """Run `op` on its positional tuple `args` through its decomposition down to primitives
    (or only through `decompositions`, a dict as get_decompositions gives)."""
    op = REGISTRY[op] if isinstance(op, str) else op
    with DecomposeMode(decompositions):
        return op(*args)
