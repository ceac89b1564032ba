"""`ember.ops.aten`: PyTorch's `torch.ops.aten` over the registry, so dispatch modes
written for PyTorch can compare `func` with `torch.ops.aten.mm.default` or
`torch.ops.aten.add.Tensor` after `import ember as torch`.

Note: packets group registry ops by their schema's base name (`aten.max.default`,
`aten.max.dim`); an aten op ember does not have raises AttributeError, as PyTorch does
for an unknown name.
"""
from ._registry import _packet

__all__ = ["aten"]


class _OpNamespace:
    """The `aten` namespace: attribute access yields an op's overload packet."""

    name = "aten"
    _capture_static_attrs = True    # a name always gives the same packet: capture resolves it

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return _packet(name)
        except KeyError:
            raise AttributeError(f"'_OpNamespace' 'aten' object has no attribute "
                                 f"'{name}'") from None

    def __repr__(self):
        return "<ember.ops.aten>"


aten = _OpNamespace()
