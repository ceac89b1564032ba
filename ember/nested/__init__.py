"""ember.nested: torch.nested basics for the strided layout: a NestedTensor is a list of
tensors with the same number of dims (ragged sizes allowed), with unbind/iteration,
size/dim, padding to a dense tensor and elementwise arithmetic. Components are ember tensors,
so autograd flows through as_nested_tensor and to_padded_tensor. The jagged layout and
most other ops raise NotImplementedError naming what is missing."""
import ember
import ember.nn.functional as F

__all__ = ["NestedTensor", "as_nested_tensor", "masked_select", "narrow", "nested_tensor",
           "nested_tensor_from_jagged", "to_padded_tensor"]

# pointwise Tensor methods that apply component by component
_POINTWISE = {"abs", "neg", "exp", "log", "sin", "cos", "tanh", "sigmoid", "relu", "sqrt",
              "square", "sign", "floor", "ceil", "round", "reciprocal", "clamp", "pow",
              "to", "float", "double", "half", "long", "int", "bool", "detach", "clone",
              "contiguous", "cpu", "logical_not", "isnan", "isfinite", "masked_fill",
              "nan_to_num", "erf", "gelu", "silu"}


class NestedTensor:
    """A strided-layout nested tensor (torch.nested.nested_tensor's result)."""
    is_nested = True
    layout = ember.strided

    def __init__(self, tensors):
        self._tensors = list(tensors)

    # ---- structure
    @property
    def dtype(self):
        return self._tensors[0].dtype if self._tensors else ember.get_default_dtype()

    @property
    def device(self):
        return self._tensors[0].device if self._tensors else ember.device("cpu")

    @property
    def requires_grad(self):
        return any(t.requires_grad for t in self._tensors)

    @property
    def is_leaf(self):
        return all(t.is_leaf for t in self._tensors)

    def requires_grad_(self, requires_grad=True):
        for t in self._tensors:
            t.requires_grad_(requires_grad)
        return self

    def dim(self):
        return 1 + (self._tensors[0].dim() if self._tensors else 0)

    ndim = property(dim)

    def is_contiguous(self, memory_format=None):
        return True

    def size(self, dim=None):
        if dim is None:
            raise RuntimeError("Internal error: NestedTensorImpl doesn't support sizes. "
                               "Please file an issue.")
        d = dim % self.dim() if self.dim() else 0
        if d == 0:
            return len(self._tensors)
        sizes = {t.shape[d - 1] for t in self._tensors}
        if len(sizes) != 1:
            raise RuntimeError(f"Given dimension {dim} is irregular and does not have a size.")
        return sizes.pop()

    @property
    def shape(self):
        return self.size()

    def __len__(self):
        return self.size()

    def numel(self):
        return sum(t.numel() for t in self._tensors)

    def unbind(self, dim=0):
        if dim != 0:
            raise RuntimeError(f"unbind(): only supported for NestedTensor on dim=0, got "
                               f"dim={dim}")
        return tuple(self._tensors)

    def __iter__(self):
        return iter(self._tensors)

    def __getitem__(self, i):
        if isinstance(i, int):
            return self._tensors[i]
        raise NotImplementedError(f"ember.nested: indexing a NestedTensor with {type(i).__name__} "
                                  "is not implemented (integers select a component)")

    def nested_size(self):
        return [tuple(t.shape) for t in self._tensors]

    def to_padded_tensor(self, padding, output_size=None):
        return to_padded_tensor(self, padding, output_size)

    def __repr__(self):
        parts = ",\n".join("  " + repr(t).replace("\n", "\n  ") for t in self._tensors)
        return f"nested_tensor([\n{parts}\n])"

    # ---- elementwise arithmetic
    def _binary(self, other, op):
        if isinstance(other, NestedTensor):
            if len(other._tensors) != len(self._tensors):
                raise RuntimeError(f"{op.__name__}: expected nested tensors with the same "
                                   f"number of components, got {len(self._tensors)} and "
                                   f"{len(other._tensors)}")
            return NestedTensor(op(a, b) for a, b in zip(self._tensors, other._tensors))
        if isinstance(other, ember.Tensor) and other.dim() > 0:
            raise NotImplementedError("ember.nested: broadcasting a dense tensor against a "
                                      "NestedTensor is not implemented (use a scalar or a "
                                      "NestedTensor)")
        return NestedTensor(op(a, other) for a in self._tensors)

    def __add__(self, o):
        return self._binary(o, ember.add)

    def __radd__(self, o):
        return self._binary(o, lambda a, b: ember.add(b, a) if isinstance(b, ember.Tensor)
                            else a + b)

    def __sub__(self, o):
        return self._binary(o, ember.sub)

    def __rsub__(self, o):
        return self._binary(o, lambda a, b: b - a)

    def __mul__(self, o):
        return self._binary(o, ember.mul)

    __rmul__ = __mul__

    def __truediv__(self, o):
        return self._binary(o, ember.div)

    def __neg__(self):
        return NestedTensor(-t for t in self._tensors)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name in _POINTWISE:
            def method(*args, **kwargs):
                out = [getattr(t, name)(*args, **kwargs) for t in self._tensors]
                if name == "requires_grad_":
                    return self
                return NestedTensor(out)
            return method
        raise NotImplementedError(f"ember.nested: NestedTensor.{name} is not implemented for "
                                  "the strided layout (supported: unbind, iteration, size, "
                                  "dim, numel, to_padded_tensor, elementwise arithmetic and "
                                  "pointwise methods)")


def _check_layout(layout, fn):
    if layout is not None and layout != ember.strided:
        raise NotImplementedError(f"ember.nested.{fn}: layout={layout} is not implemented; only "
                                  "the strided layout (torch.strided) is supported")


def _check_components(tensors, fn):
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{fn}(): Expected a list of tensors, but got {type(tensors).__name__}")
    dims = [t.dim() for t in tensors]
    for i, d in enumerate(dims):
        if d != dims[0]:
            raise RuntimeError("All Tensors given to nested_tensor must have the same "
                               f"dimension. Found dimension {d} for Tensor at index {i} and "
                               f"dimension {dims[0]} for Tensor at index 0.")


def nested_tensor(tensor_list, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """A NestedTensor holding copies of the given tensors (or nested lists of numbers)."""
    _check_layout(layout, "nested_tensor")
    ts = [t if isinstance(t, ember.Tensor) else ember.tensor(t, dtype=dtype, device=device)
          for t in tensor_list]
    _check_components(ts, "nested_tensor")
    if dtype is None and ts:
        dtype = ts[0].dtype
    out = []
    for t in ts:
        c = t.detach().to(dtype=dtype, device=device).clone()
        c.requires_grad_(requires_grad)
        out.append(c)
    return NestedTensor(out)


def as_nested_tensor(ts, dtype=None, device=None, layout=None):
    """A NestedTensor over the given tensors that keeps their autograd history."""
    _check_layout(layout, "as_nested_tensor")
    if isinstance(ts, NestedTensor):
        ts = list(ts.unbind())
    elif isinstance(ts, ember.Tensor):
        ts = list(ts.unbind(0))
    _check_components(ts, "as_nested_tensor")
    return NestedTensor(t.to(dtype=dtype or t.dtype, device=device or t.device) for t in ts)


def to_padded_tensor(input, padding, output_size=None):
    """A dense tensor: the components stacked and padded with `padding` to the largest size
    per dim (or `output_size`)."""
    if not isinstance(input, NestedTensor):
        raise RuntimeError("to_padded_tensor: expected a NestedTensor")
    ts = input._tensors
    if not ts:
        return ember.empty((0,), dtype=input.dtype)
    nd = ts[0].dim()
    sizes = [max(t.shape[d] for t in ts) for d in range(nd)]
    if output_size is not None:
        output_size = tuple(output_size)
        if len(output_size) != nd + 1:
            raise RuntimeError(f"Length of output_size does not match NestedTensor dims. "
                               f"Broadcasting is not supported. output_size has {len(output_size)} "
                               f"dims, NestedTensor has {nd + 1}")
        if output_size[0] < len(ts) or any(o < s for o, s in zip(output_size[1:], sizes)):
            raise RuntimeError("Value in output_size is less than NestedTensor padded size. "
                               "Truncation is not supported.")
        sizes = list(output_size[1:])
    padded = []
    for t in ts:
        pad = []
        for d in reversed(range(nd)):
            pad += [0, sizes[d] - t.shape[d]]
        padded.append(F.pad(t, pad, value=padding) if any(pad) else t)
    out = ember.stack(padded, 0)
    if output_size is not None and output_size[0] > len(ts):
        extra = ember.full((output_size[0] - len(ts),) + tuple(sizes), padding,
                           dtype=out.dtype, device=out.device)
        out = ember.cat([out, extra], 0)
    return out


def nested_tensor_from_jagged(values, offsets=None, lengths=None, jagged_dim=None,
                              min_seqlen=None, max_seqlen=None):
    raise NotImplementedError("ember.nested.nested_tensor_from_jagged: the jagged layout "
                              "(torch.jagged) is not implemented; use nested_tensor / "
                              "as_nested_tensor (strided layout)")


def narrow(tensor, dim, start, length, layout=None):
    raise NotImplementedError("ember.nested.narrow: produces a jagged-layout nested tensor, "
                              "which ember does not implement")


def masked_select(tensor, mask):
    raise NotImplementedError("ember.nested.masked_select: produces a jagged-layout nested "
                              "tensor, which ember does not implement")
