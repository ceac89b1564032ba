"""Dim / dims and the dynamic_shapes= argument of ember.export.export (torch.export's names).

Why: export captures once and must say for which input sizes the graph is valid. A Dim
names a size that may vary (with a [min, max] range); every other size is fixed to the
example's. The capture itself (ember._dynamo.mark_dynamic) makes the marked dims symbols
and raises if the program specializes one of them.
"""
import inspect

from .._dynamo.exc import UserError

__all__ = ["Dim", "dims", "apply_dynamic_shapes", "INT_OO"]

INT_OO = float("inf")      # no upper bound (torch's int_oo)


class _DimHint:
    """Dim.AUTO / Dim.STATIC / Dim.DYNAMIC: a dim whose symbol export names itself."""

    def __init__(self, kind):
        self.kind = kind

    def __repr__(self):
        return f"Dim.{self.kind}"

    def __call__(self, min=None, max=None):
        d = _DimHint(self.kind)
        d.min, d.max = min, max
        return d


class Dim:
    """A named dynamic size: Dim("batch", min=2, max=64). Two inputs using the same Dim
    must agree in that size."""

    AUTO = _DimHint("AUTO")
    STATIC = _DimHint("STATIC")
    DYNAMIC = _DimHint("DYNAMIC")

    def __init__(self, name, *, min=None, max=None):
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"Dim name must be a valid identifier, got {name!r}")
        lo = 0 if min is None else int(min)
        hi = INT_OO if max is None else int(max)
        if lo < 0:
            raise UserError(f"Dim('{name}'): min must be >= 0, got {min}")
        if hi < lo:
            raise UserError(f"Dim('{name}'): min {lo} is greater than max {hi}")
        self.__name__ = name
        self.min, self.max = lo, hi

    def __repr__(self):
        parts = [repr(self.__name__)]
        if self.min != 0:
            parts.append(f"min={self.min}")
        if self.max != INT_OO:
            parts.append(f"max={self.max}")
        return f"Dim({', '.join(parts)})"


def dims(*names, min=None, max=None):
    """One Dim per name, all with the same range."""
    return tuple(Dim(n, min=min, max=max) for n in names)


def _spec_per_arg(fn, args, kwargs, dynamic_shapes):
    """dynamic_shapes matched to the example (args, kwargs): a list of (value, spec)."""
    if isinstance(dynamic_shapes, dict):
        try:
            bound = inspect.signature(fn).bind(*args, **kwargs)
        except (TypeError, ValueError) as e:
            raise UserError(f"export: cannot bind the example inputs to {fn!r}: {e}") from e
        params = bound.arguments
        unknown = [k for k in dynamic_shapes if k not in params]
        if unknown:
            raise UserError(
                f"dynamic_shapes names {unknown} which are not arguments of the forward "
                f"(arguments: {list(params)})")
        out = []
        for k, v in params.items():
            spec = dynamic_shapes.get(k)
            p = inspect.signature(fn).parameters[k]
            if p.kind is p.VAR_POSITIONAL and spec is not None:
                out.extend(zip(v, spec))
            elif p.kind is p.VAR_KEYWORD and spec is not None:
                out.extend((v[kk], spec[kk]) for kk in spec)
            else:
                out.append((v, spec))
        return out
    flat = list(args) + list(kwargs.values())
    specs = list(dynamic_shapes)
    if len(specs) != len(flat):
        raise UserError(f"dynamic_shapes has {len(specs)} entries but the forward got "
                        f"{len(flat)} inputs; give one per input (None for static)")
    return list(zip(flat, specs))


def _walk(value, spec, path, out):
    from .._tensor import Tensor
    if spec is None:
        return
    if isinstance(value, Tensor):
        if isinstance(spec, (list, tuple)):
            spec = {i: s for i, s in enumerate(spec) if s is not None}
        if not isinstance(spec, dict):
            raise UserError(f"dynamic_shapes{path}: expected a dict {{dim: Dim}} or a "
                            f"tuple of Dims for a tensor, got {type(spec).__name__}")
        for d, dim in spec.items():
            if dim is None:
                continue
            if not -value.dim() <= d < value.dim():
                raise UserError(f"dynamic_shapes{path}: dim {d} is out of range for an "
                                f"input of shape {tuple(value.shape)}")
            out.append((value, d % value.dim(), dim, f"{path}.shape[{d % value.dim()}]"))
        return
    if isinstance(value, (list, tuple)):
        for i, (v, s) in enumerate(zip(value, spec)):
            _walk(v, s, f"{path}[{i}]", out)
    elif isinstance(value, dict):
        for k, s in spec.items():
            _walk(value[k], s, f"{path}[{k!r}]", out)


def apply_dynamic_shapes(fn, args, kwargs, dynamic_shapes):
    """Marks the example tensors' dynamic dims for the capture; returns a list of
    (tensor, dim, Dim, "path") with every Dim a named one (hints get their own name)."""
    if dynamic_shapes is None:
        return []
    marks = []
    for i, (value, spec) in enumerate(_spec_per_arg(fn, args, kwargs, dynamic_shapes)):
        _walk(value, spec, f"[{i}]", marks)
    from .._dynamo import mark_dynamic
    named = []
    for n, (t, d, dim, path) in enumerate(marks):
        if isinstance(dim, _DimHint):
            if dim.kind == "STATIC":
                continue
            dim = Dim(f"dim{n}", min=getattr(dim, "min", None), max=getattr(dim, "max", None))
        elif not isinstance(dim, Dim):
            raise UserError(f"dynamic_shapes{path}: expected a Dim, got {dim!r}")
        size = t.shape[d]
        if size < 2:
            raise UserError(
                f"Constraints violated ({dim.__name__})! You marked {dim.__name__} "
                f"(inputs{path}) as dynamic but its example size is {size}, and ember's "
                f"capture specializes sizes 0 and 1 to constants; give an example of size "
                f">= 2 (the exported program then accepts sizes >= 2)")
        if not dim.min <= size <= dim.max:
            raise UserError(f"dynamic_shapes{path}: the example size {size} is outside "
                            f"{dim!r}'s range [{dim.min}, {dim.max}]")
        mx = None if dim.max == INT_OO else dim.max
        mark_dynamic(t, d, min=max(dim.min, 2), max=mx)
        named.append((t, d, dim, path))
    return named
