"""copy_, clone, casts and `Tensor.to`; copy_ is where in-place ops rewrite history.

Note: every in-place op commits through `copy_(self, result)`. Its autograd rule
follows PyTorch: writing into a plain tensor gives it the result's history; writing
into a view of a base that requires grad replaces the base's history with
CopySlices (the written region's gradient goes to the source, the rest to the old
base) and gives the view a fresh AsStrided history over the new base.
"""
import warnings

import numpy as np

from .. import _dtype as D
from .._device import CUSTOM, as_device, check_supported
from .._dispatch import STATE, dispatch
from .._tensor import Tensor
from . import _elementwise, _lowp
from ._registry import OpDef, register, REGISTRY

METHODS = {}    # Tensor methods made here; ember/_tensor_methods.py installs them


def _clone_kernel(a, memory_format=None):
    if memory_format is None:
        return np.array(a, copy=True, order="K")
    from .index_ops import clone_layout      # memory formats live with their ops
    return clone_layout(a, memory_format)


def _same_meta(a, *_):
    return tuple(a.shape), a.dtype


CLONE = register("clone", _clone_kernel, vjp=lambda ctx, g: (g, None), save=(),
                 meta=_same_meta, tags=("prim", "copy", "pointwise"),
                 schema="clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor")


def _cast_kernel(a, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if a.dtype.kind == "c" and dtype.np.kind != "c":
            a = a.real
        return _lowp.cast(a, dtype.np)


def _cast_meta(a, dtype):
    if not isinstance(dtype, D.dtype):
        raise TypeError(f"to() received an invalid combination of arguments - got dtype "
                        f"{dtype!r}")
    return tuple(a.shape), dtype


CAST = register("_to_copy", _cast_kernel, vjp=lambda ctx, g: (g, None), save=(),
                meta=_cast_meta, tags=("prim", "copy", "pointwise"),
                schema="_to_copy(Tensor self, *, ScalarType? dtype=None) -> Tensor")


def _check_memory_format(fmt, opname):
    if fmt is not None and type(fmt).__name__ != "memory_format":
        raise TypeError(f"{opname}(): argument 'memory_format' must be torch.memory_format, not "
                        f"{type(fmt).__name__}")


def clone(input, *, memory_format=None):
    _check_memory_format(memory_format, "clone")
    return dispatch(CLONE, (input, memory_format))


def contiguous(self, memory_format=None):
    _check_memory_format(memory_format, "contiguous")
    if memory_format is not None and memory_format.name != "contiguous_format":
        from .index_ops import contiguous_as
        return contiguous_as(self, memory_format)
    if self._data.flags.c_contiguous if self._backend != "meta" else self.is_contiguous():
        return self
    return dispatch(CLONE_CONTIG, (self,))


# only dispatched for non-contiguous inputs, so ascontiguousarray always copies
def _contiguous_decomp(a):
    """A C-order copy (reshape to its own shape, copying)."""
    from .. import _prims as P
    return P._reshape_copy(a, list(a.shape))


CLONE_CONTIG = register("contiguous", np.ascontiguousarray, meta=_same_meta, tags=("copy",),
                        vjp=lambda ctx, g: (g,), save=(), decomp=_contiguous_decomp,
                        schema="contiguous(Tensor self) -> Tensor")
CLONE_CONTIG.meta_layout = "contiguous"     # fake outputs: C order, not the input's


def cast(t, dtype):
    if t._dtype is dtype:
        return t
    return dispatch(CAST, (t, dtype))


# ---------------------------------------------------------------------------- copy_

class CopyOp(OpDef):
    """copy_(self, src[, non_blocking]): write src (broadcast, cast) into self and rebase
    autograd. Tensor.copy_ passes all three arguments; in-place ops commit their result
    with two, and then self takes the result's own history (e.g. MulBackward0)."""

    def _execute(self, args):
        self_, src = args[0], args[1]
        if not isinstance(src, Tensor):
            from .creation import tensor
            src = tensor(src, dtype=self_._dtype)
        if self_._inference and not STATE.inference:
            raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not "
                               "allowed.You can make a clone to get a normal tensor before doing "
                               "inplace update.See https://github.com/pytorch/rfcs/pull/17 for "
                               "more details.")
        grad_mode = STATE.grad_enabled
        if grad_mode:
            check_inplace_allowed(self_)
        if self_._backend == "cpu":
            try:
                self.kernels["cpu"](self_._data, src._data)
            except ValueError as e:
                _copy_meta(self_, src)
                raise RuntimeError(f"copy_: {e}") from e
        elif self_._device.type in CUSTOM:      # a PrivateUse1 device (ember/_privateuse1.py)
            from .._privateuse1 import copy_into
            copy_into(self, self_, src)
        else:
            _copy_meta(self_, src)
        self_._storage.version += 1
        if grad_mode and (src._rg or self_._rg):
            rebase_history(self_, src, explicit=len(args) > 2)
        return self_


def _copy_kernel(dst, src, non_blocking=False):
    """Write src (broadcast, cast; complex to real keeps the real part) into dst."""
    if src.dtype.kind == "c" and dst.dtype.kind != "c":
        src = src.real
    if src.shape != dst.shape:      # broadcast_to is stricter than copyto (no extra 1-dims)
        src = np.broadcast_to(src, dst.shape)
    np.copyto(dst, src, casting="unsafe")
    return dst


def _copy_meta(self_, src, non_blocking=False):
    try:
        # ember's broadcast (not NumPy's): symbolic sizes stay symbolic under capture
        ok = _elementwise.broadcast_shapes(tuple(src.shape), tuple(self_.shape)) == \
            tuple(self_.shape)
    except (ValueError, RuntimeError):
        ok = False
    if not ok:
        raise RuntimeError(f"copy_: the size of src {list(src.shape)} must be broadcastable "
                           f"to self {list(self_.shape)}")
    return tuple(self_.shape), self_.dtype


def _copy_vjp(ctx, g):
    """The formula of CopyBackwards (rebase_history records it): self's old value gets
    nothing, src gets the gradient (the engine sums it back to src's shape)."""
    from .creation import zeros_like
    return (zeros_like(g), g) + (None,) * (len(ctx.args) - 2)   # non_blocking, if passed




def check_inplace_allowed(t, dirty=False):
    """PyTorch's check_inplace: leaves, views of leaves, multi-output and custom-Function views."""
    if t._rg and t._grad_fn is None and t._base is None:
        raise RuntimeError("a leaf Variable that requires grad " +
                           ("has been used" if dirty else "is being used") +
                           " in an in-place operation.")
    if t._multi_view and t._rg:
        raise RuntimeError(
            f"Output {t._output_nr} of {_fn_name(t)} is a view and is being modified inplace. "
            "This view is the output of a function that returns multiple views. Such functions "
            "do not allow the output views to be modified inplace. You should replace the "
            "inplace operation by an out-of-place one.")
    if t._custom_fn_view and t._rg:
        raise RuntimeError(
            f"Output {t._output_nr} of {_fn_name(t)} is a view and is being modified inplace. "
            "This view was created inside a custom Function (or because an input was returned "
            "as-is) and the autograd logic to handle view+inplace would override the custom "
            "backward associated with the custom Function, leading to incorrect gradients. "
            "This behavior is forbidden. You can fix this by cloning the output of the custom "
            "Function.")
    base = t._base
    if base is not None and base._rg and base._grad_fn is None and t._rg:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")


def _fn_name(t):
    from ..autograd.graph import forward_name
    return forward_name(t._grad_fn) if t._grad_fn is not None else "a view function"


def rebase_history(self_, src, explicit=False):
    """self_ now holds src's values: give it src's history (CopySlices for views).

    An in-place op's result already depends on self's old value, so self simply takes
    the result's node; an explicit copy_ gets CopyBackwards (zero grad to the old self)."""
    from ..autograd.graph import gradient_edge
    base = self_._base
    if base is None:
        if (not explicit and src._grad_fn is not None and src._data.shape == self_._data.shape
                and src._dtype is self_._dtype):
            self_._grad_fn, self_._output_nr = src._grad_fn, src._output_nr
        else:
            node = _CopyBackwards(self_, src)
            node.next_functions = (gradient_edge(self_) if self_._rg else (None, 0),
                                   gradient_edge(src) if src._rg else (None, 0))
            self_._grad_fn, self_._output_nr = node, 0
        self_._rg = True
        return
    geom = _geometry(self_, base)
    node = CopySlices(geom)
    old = gradient_edge(base) if base._rg else (None, 0)
    node.next_functions = (old, gradient_edge(src) if src._rg else (None, 0))
    base._grad_fn, base._output_nr, base._rg = node, 0, True
    self_._view_version = self_._storage.version
    view = _ViewOfBase(base, geom)
    view.next_functions = ((node, 0),)
    self_._grad_fn, self_._output_nr, self_._rg = view, 0, True


def regenerate_view(t):
    """t's base got new history since t's grad_fn was made: view the base's new history."""
    from ..autograd.graph import gradient_edge
    base = t._base
    node = _ViewOfBase(base, _geometry(t, base))
    node.next_functions = (gradient_edge(base),)
    t._grad_fn, t._output_nr = node, 0
    t._view_version = t._storage.version
    return node


def _geometry(view, base):
    """(size, stride, offset) of `view` in the memory order of its dense base, the axis
    permutation that puts the base in that order, and whether the view is a real view
    (real/imag/view_as_real) of a complex base, which is then seen as view_as_real."""
    b = base._data
    as_real = b.dtype.kind == "c" and view._data.dtype.kind != "c"
    if as_real:
        b = np.lib.stride_tricks.as_strided(b.real, b.shape + (2,), b.strides + (b.itemsize // 2,))
    if view._data.itemsize != b.itemsize:
        raise NotImplementedError("in-place on a view with another element size than its base "
                                  "is not supported under autograd")
    isz = b.itemsize
    perm = tuple(sorted(range(b.ndim), key=lambda d: -b.strides[d]))
    if not (b.flags.c_contiguous or b.size <= 1 or
            np.transpose(b, perm).flags.c_contiguous):
        raise NotImplementedError(
            "in-place on a view of a base that is not dense (has gaps or overlaps) is not "
            f"supported under autograd (base shape {list(base.shape)}, strides {base.stride()})")
    if b.flags.c_contiguous or b.size <= 1 or perm == tuple(range(b.ndim)):
        perm = None
    off = (view.data_ptr() - base.data_ptr()) // isz
    return (tuple(view._data.shape), tuple(s // isz for s in view._data.strides), off, perm,
            as_real)


def _in_memory_order(g, perm, as_real):
    if as_real:
        from .complex import view_as_real
        g = view_as_real(g.contiguous())
    return (g if perm is None else g.permute(perm)).contiguous()


def _from_memory_order(g, perm, as_real):
    if perm is not None:
        inv = [0] * len(perm)
        for i, p in enumerate(perm):
            inv[p] = i
        g = g.permute(inv)
    if as_real:
        from .complex import view_as_complex
        g = view_as_complex(g.contiguous())
    return g


def _region(gc, size, stride, off):
    from .as_strided import as_strided
    return as_strided(gc, size, stride, off + gc.storage_offset())


def _zeros(shape, dtype):
    from .creation import zeros
    return zeros(shape, dtype=dtype)


from ..autograd.graph import Node  # noqa: E402  (graph imports Tensor only)


class _CopyBackwards(Node):
    """self was overwritten by src: the old self gets zeros, src gets the gradient."""

    def __init__(self, self_, src):
        super().__init__()
        self._input_meta = ([self_._data.shape, src._data.shape], [self_._dtype, src._dtype])

    def name(self):
        return "torch::autograd::CopyBackwards"

    def apply(self, grads):
        from .creation import zeros_like
        g = grads[0]
        return [zeros_like(g), g]


class CopySlices(Node):
    """Base history after writing src into a view of it: the view's region of the grad
    goes to src, the rest to the base's old history."""

    def __init__(self, geom):
        super().__init__()
        self.geom = geom

    def name(self):
        return "torch::autograd::CopySlices"

    def apply(self, grads):
        from .as_strided import as_strided_scatter
        size, stride, off, perm, as_real = self.geom
        gc = _in_memory_order(grads[0], perm, as_real)
        g_src = _region(gc, size, stride, off)
        g_old = as_strided_scatter(gc, _zeros(size, gc.dtype), size, stride, off)
        return [_from_memory_order(g_old, perm, as_real), g_src]


class _ViewOfBase(Node):
    """The regenerated history of a view: the view's region of its base."""

    def __init__(self, base, geom):
        super().__init__()
        self.base_meta = (base._data.shape, base._dtype)
        self.geom = geom

    def name(self):
        return "AsStridedBackward0"

    def apply(self, grads):
        from .as_strided import as_strided_scatter
        shape, _ = self.base_meta
        size, stride, off, perm, as_real = self.geom
        if as_real:
            shape = tuple(shape) + (2,)
        mem_shape = shape if perm is None else tuple(shape[p] for p in perm)
        g = grads[0]
        full = as_strided_scatter(_zeros(mem_shape, g.dtype), g, size, stride, off)
        return [_from_memory_order(full, perm, as_real)]


COPY_ = CopyOp("copy_", _copy_kernel, meta=_copy_meta, vjp=_copy_vjp, save=(),
               tags=("prim", "inplace", "copy"),
               schema="copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)")
REGISTRY["copy_"] = COPY_
_elementwise.COPY_ = COPY_


def copy_(self, src, non_blocking=False):
    return dispatch(COPY_, (self, src, non_blocking))


# ------------------------------------------------------------------------ Tensor.to

def _parse_to(args, kwargs):
    """PyTorch's three signatures: to(device, dtype), to(dtype), to(tensor)."""
    bad = set(kwargs) - {"dtype", "device"}
    if bad or len(args) > 2 or sum(isinstance(a, (D.dtype, Tensor)) for a in args) > 1:
        got = ", ".join([type(a).__name__ for a in args] + [f"{k}=" for k in kwargs])
        raise TypeError(f"to() received an invalid combination of arguments - got ({got}), but "
                        "expected one of: (device, dtype), (dtype), (Tensor other)")
    dev = dtype = None
    for a in args:
        if isinstance(a, D.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dev, dtype = a.device, a.dtype
        elif isinstance(a, (str, int)) or a.__class__.__name__ == "device":
            dev = as_device(a)
        elif a is None:
            continue
        else:
            raise TypeError(f"to() received an invalid combination of arguments: {a!r}")
    if "dtype" in kwargs and kwargs["dtype"] is not None:
        dtype = kwargs["dtype"]
    if "device" in kwargs and kwargs["device"] is not None:
        dev = as_device(kwargs["device"])
    return dev, dtype


def to(self, *args, non_blocking=False, copy=False, memory_format=None, **kwargs):
    # trailing positional bools are non_blocking, copy: to(device, dtype, False, True)
    # (non_blocking has no effect on the CPU)
    flags = []
    while args and isinstance(args[-1], bool) and len(flags) < 2:
        flags.insert(0, args[-1])
        args = args[:-1]
    if len(flags) == 2:
        copy = flags[1]
    dev, dtype = _parse_to(args, kwargs)
    out = self
    if dev is not None:
        if check_supported(dev).type == "cpu" and self._backend == "meta" and not self._fake:
            raise NotImplementedError(f"to(): Cannot copy out of meta tensor; no data! (meta "
                                      f"tensor of shape {list(self._data.shape)} to {dev})")
        if dev.type in CUSTOM or self._device.type in CUSTOM:     # a PrivateUse1 device
            from .._privateuse1 import transfer
            out = transfer(self, dev)
    if dtype is not None and dtype is not self._dtype:
        out = dispatch(CAST, (out, dtype))
    elif copy and out is self:
        out = dispatch(CLONE, (self, None))
    return out


def type_(self, dtype=None, non_blocking=False, **kwargs):
    if dtype is None:
        return _legacy_type_name(self._dtype)
    if isinstance(dtype, str):
        if dtype.startswith("torch.cuda."):
            raise RuntimeError(f"type(): cannot convert to {dtype}: Torch not compiled with "
                               "CUDA enabled")
        if dtype not in _LEGACY_BY_NAME:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = _LEGACY_BY_NAME[dtype]
    elif not isinstance(dtype, D.dtype):
        from .._legacy import dtype_of_type
        got = dtype_of_type(dtype)
        if got is None:
            if isinstance(dtype, type):
                raise ValueError(f"invalid type: '{dtype.__name__}'")
            raise TypeError("type(): dtype must be a type, str, or dtype object, not "
                            f"{type(dtype).__name__}")
        dtype = got
    return to(self, dtype)


_LEGACY = {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor",
           "float16": "torch.HalfTensor", "bfloat16": "torch.BFloat16Tensor",
           "int64": "torch.LongTensor", "int32": "torch.IntTensor", "int16": "torch.ShortTensor",
           "int8": "torch.CharTensor", "uint8": "torch.ByteTensor", "bool": "torch.BoolTensor",
           "complex64": "torch.ComplexFloatTensor", "complex128": "torch.ComplexDoubleTensor"}
_LEGACY_BY_NAME = {v: getattr(D, k) for k, v in _LEGACY.items()}


def _legacy_type_name(d):
    return _LEGACY[d.name]


def _resize_(self, *sizes, memory_format=None):
    """Tensor.resize_: the first numel elements of the data in memory order, reshaped; new
    elements are uninitialized. The tensor gets its own array (views of it no longer
    alias it, unlike PyTorch's shared storage)."""
    if self._rg:
        raise RuntimeError("cannot resize variables that require grad")
    from .creation import _size
    shape = _size(sizes, "resize_")
    n = int(np.prod(shape, dtype=np.int64))
    flat = np.ravel(self._data, order="K")
    if n == flat.size and self._data.flags.c_contiguous:
        self._data = self._data.reshape(shape)
        return self
    new = np.empty(n, dtype=self._data.dtype)
    k = min(n, flat.size)
    new[:k] = flat[:k]
    from .._memory import new_storage
    self._data = new.reshape(shape)
    self._storage = new_storage(new.nbytes)     # its own memory now, no longer a view
    self._base = self._view_of = None
    return self


def _resize_as_(self, other, memory_format=None):
    return _resize_(self, tuple(other.shape))


def _apply_(self, fn):
    """Tensor.apply_: a Python function on every element, in place (slow, as in PyTorch)."""
    from .creation import tensor
    if self._rg:
        raise RuntimeError("Can't call apply_() on Variable that requires grad. Use "
                           "var.detach().apply_() instead.")
    vals = np.vectorize(fn, otypes=[self._data.dtype])(self._data) if self._data.size else \
        self._data.copy()
    return self.copy_(tensor(vals, dtype=self._dtype))


def _map_(self, other, fn):
    """Tensor.map_: fn(self_elem, other_elem) in place, other broadcast to self's shape."""
    from .creation import tensor
    o = other.expand_as(self)
    vals = np.vectorize(fn, otypes=[self._data.dtype])(self._data, o._data) \
        if self._data.size else self._data.copy()
    return self.copy_(tensor(vals, dtype=self._dtype))


def _pin_memory(self, device=None):
    """PyTorch's CPU builds raise this too: pinned memory needs an accelerator."""
    raise RuntimeError("pin_memory(): Cannot access accelerator device when none is available "
                       "(ember has no accelerator backend to pin host memory for)")


def _type_as(self, other):
    if not isinstance(other, Tensor):
        raise TypeError("type_as(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(other).__name__}")
    return cast(self, other.dtype)


def _make_methods():
    METHODS["clone"] = clone
    METHODS["contiguous"] = contiguous
    METHODS["copy_"] = copy_
    METHODS["to"] = to
    METHODS["type"] = type_
    for name, d in [("float", D.float32), ("double", D.float64), ("half", D.float16),
                    ("bfloat16", D.bfloat16), ("long", D.int64), ("int", D.int32),
                    ("short", D.int16), ("char", D.int8), ("byte", D.uint8),
                    ("bool", D.bool), ("cfloat", D.complex64), ("cdouble", D.complex128)]:
        METHODS[name] = (lambda d: lambda self, memory_format=None: cast(self, d))(d)
    METHODS["cpu"] = lambda self, memory_format=None: (self if self._device.type not in CUSTOM
                                              else to(self, "cpu"))
    METHODS["cuda"] = lambda self, *a, **k: to(self, "cuda")
    METHODS["type_as"] = _type_as
    METHODS["pin_memory"] = _pin_memory
    METHODS["resize_"] = _resize_
    METHODS["resize_as_"] = _resize_as_
    METHODS["apply_"] = _apply_
    METHODS["map_"] = _map_


_make_methods()
