"""torch.nn.modules.utils: argument normalisers layers share (`_pair(3)` -> (3, 3))."""
import collections.abc
from itertools import repeat

__all__ = []


def _ntuple(n, name="parse"):
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))
    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """(a, b) with n=2 -> (b, b, a, a): the order F.pad wants padding in."""
    return tuple(x for x in reversed(t) for _ in range(n))
