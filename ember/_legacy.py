"""PyTorch's legacy constructors and type objects: `torch.Tensor(data)`,
`torch.Tensor(*sizes)`, `torch.FloatTensor`, `x.new(...)`, `x.type(torch.LongTensor)`.

Why: 1.x-era programs (and many still written today) build tensors this way; `ember run`
must accept them unchanged. The type objects are not Tensor subclasses (as in PyTorch,
`issubclass(torch.FloatTensor, torch.Tensor)` is False); `isinstance(x, FloatTensor)`
checks the dtype and device, which is what such code means by it.
"""
from . import _dtype as D
from ._tensor import Tensor, Size

METHODS = {}    # Tensor methods made here; ember/_tensor_methods.py installs them

__all__ = ["legacy_new", "TENSOR_TYPES", "tensortype"]


def _is_sizes(args):
    if len(args) == 1 and isinstance(args[0], Size):
        return True
    return bool(args) and all(isinstance(a, int) and not isinstance(a, bool) for a in args)


def legacy_new(dtype, args, kwargs, type_name="torch.Tensor"):
    """What `torch.<Type>Tensor(*args)` does: sizes -> uninitialized, a sequence -> its
    data in `dtype`, a tensor -> that tensor (dtype must match), nothing -> empty."""
    from .ops import creation as ops
    device = kwargs.pop("device", None)
    size = kwargs.pop("size", None)
    if kwargs:
        bad = ", ".join(f"{k}={type(v).__name__}" for k, v in kwargs.items())
        raise TypeError(f"new() received an invalid combination of arguments - got ({bad}), "
                        "but expected one of: (*, torch.device device = None), "
                        "(tuple of ints size, *, torch.device device = None), "
                        "(object data, *, torch.device device = None)")
    if size is not None:
        if args:
            raise TypeError("new() received an invalid combination of arguments: size= "
                            "together with positional arguments")
        args = (tuple(size),)
        if not _is_sizes(args[0]):
            raise TypeError(f"new(): argument 'size' must be tuple of ints, not "
                            f"{type(size).__name__}")
        args = tuple(args[0])
    if not args:
        return ops.empty(0, dtype=dtype, device=device)
    if _is_sizes(args):
        return ops.empty(*(args[0] if isinstance(args[0], Size) else args), dtype=dtype,
                         device=device)
    if len(args) > 1:
        got = ", ".join(type(a).__name__ for a in args)
        raise TypeError(f"new() received an invalid combination of arguments - got ({got}), "
                        "but expected one of: (*, torch.device device = None), "
                        "(tuple of ints size, *, torch.device device = None), "
                        "(object data, *, torch.device device = None)")
    data = args[0]
    if isinstance(data, Tensor):
        if type_name != "torch.Tensor" and data.dtype is not dtype:
            raise TypeError(f"expected {type_name} (got {_name_of(data.dtype)})")
        return data.detach() if type_name == "torch.Tensor" else data
    if isinstance(data, (int, float, complex, bool)):
        raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
    return ops.tensor(data, dtype=dtype, device=device)


class tensortype(type):
    """The metaclass of the legacy type objects (PyTorch's `torch.tensortype`)."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and not obj.is_cuda

    def __call__(cls, *args, **kwargs):
        if cls.is_cuda:
            raise TypeError(f"type torch.cuda.{cls.__name__} not available. Torch not compiled "
                            "with CUDA enabled.")
        return legacy_new(cls.dtype, args, dict(kwargs), _name_of(cls.dtype))

    def __repr__(cls):
        return f"<class '{_name_of(cls.dtype, cls.is_cuda)}'>"


_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
          "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor",
          "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor",
          "bool": "BoolTensor", "complex64": "ComplexFloatTensor",
          "complex128": "ComplexDoubleTensor"}


def _name_of(dtype, cuda=False):
    return ("torch.cuda." if cuda else "torch.") + _NAMES[dtype.name]


def _make_types(cuda):
    return {name: tensortype(name, (), {"dtype": getattr(D, dt), "is_cuda": cuda,
                                        "is_sparse": False, "__module__": "torch.cuda"
                                        if cuda else "torch"})
            for dt, name in _NAMES.items()}


TENSOR_TYPES = _make_types(False)      # ember.FloatTensor, ...
CUDA_TENSOR_TYPES = _make_types(True)  # ember.cuda.FloatTensor, ... (no CUDA: constructing raises)


def dtype_of_type(t):
    """The dtype a `type()`/`new` argument names: a legacy type object or its name."""
    if isinstance(t, tensortype):
        if t.is_cuda:
            raise RuntimeError(f"type(): cannot convert to {_name_of(t.dtype, True)}: Torch not "
                               "compiled with CUDA enabled")
        return t.dtype
    return None


def _new(self, *args, **kwargs):
    """`Tensor.new(...)`: a legacy constructor with this tensor's dtype and device."""
    kwargs.setdefault("device", self.device)
    return legacy_new(self.dtype, args, kwargs, _name_of(self.dtype))


METHODS["new"] = _new


# Device and layout predicates a CPU build answers with False; programs branch on them.
for _name in ("is_xpu", "is_mps", "is_xla", "is_ipu", "is_hpu", "is_mtia", "is_maia",
              "is_vulkan", "is_mkldnn", "is_quantized", "is_nested"):
    if not hasattr(Tensor, _name):
        METHODS[_name] = property(lambda self: False)
METHODS["is_pinned"] = lambda self, device=None: False
METHODS["is_shared"] = lambda self: False
METHODS["is_distributed"] = lambda self: False
METHODS["is_same_size"] = lambda self, other: self.shape == other.shape


def _is_nonzero(self):
    """`Tensor.is_nonzero()`: bool of a one-element tensor (PyTorch's errors otherwise)."""
    n = self.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(self.item())


METHODS["is_nonzero"] = _is_nonzero
