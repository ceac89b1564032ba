"""The Tensor: a NumPy array plus dtype, storage, and autograd metadata.

Note: attributes that most tensors never set (grad, grad_fn, _base, hooks) are
class-level defaults, so wrapping a kernel's output sets only three attributes.
Methods that run ops are made by the op modules in `ember/ops/` and installed from
the declared table in `ember/_tensor_methods.py`; this class body holds the rest.
"""

import numpy as np

from . import _dtype as D
from ._device import CPU, as_device
from ._dispatch import STATE, TF, DisableTorchFunctionSubclass, convert, overrides_tf
from ._memory import _Storage, new_storage, alias_storage, PENDING as _PENDING


class Tensor:
    # class-level defaults (see module note)
    _grad = None
    _grad_fn = None
    _output_nr = 0
    _base = None
    _rg = False                 # requires_grad
    _hooks = None               # tensor hooks: list of callables
    _post_acc_hooks = None
    _retains_grad = False
    _accum = None               # the leaf's AccumulateGrad node
    _view_of = None             # (base, geometry) for autograd of in-place on views
    _multi_view = False         # output of split/chunk/unbind
    _backend = "cpu"
    _device = CPU
    _fake = False
    _is_param = False
    _mstrides = None            # meta tensors: element strides (None: contiguous)
    _moffset = 0                # meta tensors: storage offset in elements
    _sym_shape = None           # meta tensors with symbolic sizes: a tuple of SymInt/int
    _inference = False          # made under inference_mode
    _view_version = None        # storage version when a view's grad_fn was made
    _custom_fn_view = False     # output of a custom Function that aliases an input

    __array_priority__ = 1000

    def __new__(cls, *args, **kwargs):
        if args and isinstance(args[0], Tensor) and cls is not Tensor and len(args) == 1:
            return args[0].as_subclass(cls)
        if cls is Tensor and (args or kwargs):     # torch.Tensor(data) / torch.Tensor(*sizes)
            from ._legacy import legacy_new
            return legacy_new(D.get_default_dtype(), args, dict(kwargs))
        t = object.__new__(cls)
        if not args:
            arr = np.empty((0,), np.float32)
            t._data, t._dtype, t._storage = arr, D.float32, _Storage(0)
        return t

    def __init__(self, *args, **kwargs):
        pass

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if overrides_tf(cls):          # dispatch starts checking argument types
            TF.subclasses = TF.active = True

    # ----------------------------------------------------------------- metadata
    @property
    def grad_fn(self):
        return self._grad_fn

    @grad_fn.setter
    def grad_fn(self, value):
        raise AttributeError("attribute 'grad_fn' of 'torch._C.TensorBase' objects is not "
                             "writable")

    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self):
        return self._device

    @property
    def is_cuda(self):
        return self._device.type == "cuda"

    @property
    def is_cpu(self):
        return self._device.type == "cpu"

    @property
    def is_meta(self):
        return self._backend == "meta" and not self._fake

    @property
    def shape(self):
        if self._sym_shape is not None:       # a fake tensor with symbolic sizes
            return Size(self._sym_shape)
        return Size(self._data.shape)

    def size(self, dim=None):
        shape = self._data.shape if self._sym_shape is None else self._sym_shape
        if dim is None:
            return Size(shape)
        if self._data.ndim == 0:
            raise IndexError(f"size(): Dimension specified as {dim} but tensor has no dimensions")
        return shape[_wrap_dim(dim, self._data.ndim, "size")]

    def dim(self):
        return self._data.ndim

    ndimension = dim

    @property
    def ndim(self):
        return self._data.ndim

    def numel(self):
        if self._sym_shape is not None:
            n = 1
            for s in self._sym_shape:
                n = n * s
            return n
        return self._data.size

    nelement = numel

    def element_size(self):
        return self._dtype.itemsize

    @property
    def itemsize(self):
        return self._dtype.itemsize

    @property
    def nbytes(self):
        return self._data.size * self._dtype.itemsize

    def stride(self, dim=None):
        a = self._data
        if self._backend == "meta" and self._mstrides is not None and a.size:
            st = self._mstrides                   # meta: the strides its op computed
        elif a.size == 0 or self._backend == "meta":
            st = _contiguous_strides(a.shape)     # NumPy's strides of empty arrays vary
        else:
            isz = a.itemsize
            st = tuple(s // isz for s in a.strides)
        if self._sym_shape is not None and a.size:    # fake with symbolic sizes
            from ._symbolic import sym_strides
            st = sym_strides(self._sym_shape, st)
        if dim is None:
            return st
        return st[_wrap_dim(dim, a.ndim, "stride")]

    def storage_offset(self):
        if self._backend == "meta":
            return self._moffset
        root = self._storage_root_array()
        if root is None:
            return 0
        return (self.data_ptr() - root.__array_interface__["data"][0]) // self._data.itemsize

    def _storage_root_array(self):
        base = self._base
        return None if base is None else base._data

    def data_ptr(self):
        return self._data.__array_interface__["data"][0]

    def is_contiguous(self, memory_format=None):
        if memory_format is not None and getattr(memory_format, "name", "") == "channels_last":
            return _is_channels_last(self._data)
        if self._backend == "meta":
            return self._mstrides is None or _strides_contiguous(self._data.shape, self._mstrides)
        return self._data.flags.c_contiguous or self._data.size <= 1

    def is_floating_point(self):
        return self._dtype.is_floating_point

    def is_complex(self):
        return self._dtype.is_complex

    def is_signed(self):
        return self._dtype.is_signed

    @property
    def is_leaf(self):
        return self._grad_fn is None

    @property
    def grad(self):
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            _check_grad(self, value)
        self._grad = value

    @property
    def requires_grad(self):
        return self._rg

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        if not isinstance(requires_grad, (bool, np.bool_)):
            raise TypeError("requires_grad_(): argument 'requires_grad' (position 1) must be "
                            f"bool, not {type(requires_grad).__name__}")
        if self._grad_fn is not None:
            if requires_grad:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to "
                "use a computed variable in a subgraph that doesn't require differentiation "
                "use var_no_grad = var.detach().")
        if requires_grad and self.is_inference() and not STATE.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        if requires_grad and not (self._dtype.is_floating_point or self._dtype.is_complex):
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               f"gradients (got {self._dtype})")
        self._rg = bool(requires_grad)
        self._grad_fn = None        # a leaf: record reads it per op (an instance read is faster)
        return self

    @property
    def _version(self):
        return self._storage.version

    def _bump(self):
        self._storage.version += 1

    def is_inference(self):
        return self._inference

    def _is_view(self):
        return self._base is not None

    is_sparse = False           # ember.sparse's COO subclass says True
    is_sparse_csr = False       # and its CSR subclass

    @property
    def layout(self):
        from . import strided
        return strided

    @property
    def names(self):
        return (None,) * self._data.ndim

    def get_device(self):
        return -1 if self._device.type == "cpu" else (self._device.index or 0)

    # -------------------------------------------------------------- data access
    @property
    def data(self):
        t = _alias(self, self._data)
        t._storage = alias_storage(self._storage)
        if self.__class__ is not Tensor and _keeps_subclass(self.__class__):
            t.__class__ = self.__class__
        return t

    @data.setter
    def data(self, other):
        if not isinstance(other, Tensor):
            raise TypeError("Tensor.data must be set to a Tensor")
        if self._rg and not (other._dtype.is_floating_point or other._dtype.is_complex):
            raise RuntimeError("data set to a tensor that requires gradients must be floating "
                               f"point or complex dtype (got {other._dtype})")
        self._data, self._dtype = other._data, other._dtype
        self._storage = other._storage

    def detach(self):
        if STATE.modes:             # a mode sees detach as a registry op (ops/effects.py)
            from .ops.effects import DETACH
            return DETACH(self)
        return self._detach()

    def _detach(self):
        t = _alias(self, self._data)
        if self._base is not None:
            t._base = self._base
        if self.__class__ is not Tensor and _keeps_subclass(self.__class__):
            t.__class__ = self.__class__
        return t

    def detach_(self):
        if self._base is not None and self._base._rg:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn = None
        self._rg = False
        return self

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted "
                               "to Scalar")
        self._check_materialized("item")
        v = self._data.reshape(()).item()
        if self._dtype is D.bfloat16:
            v = float(v)
        return v

    def tolist(self):
        self._check_materialized("tolist")
        if self._dtype is D.bfloat16:
            return self._data.astype(np.float32).tolist()
        return self._data.tolist()

    def numpy(self, *, force=False):
        self._check_materialized("numpy")
        if self._rg and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        return self._data

    def _check_materialized(self, what):
        if self._backend == "meta":
            # PyTorch's types: numpy() a TypeError, copying data out a NotImplementedError
            cls = {"numpy": TypeError, "tolist": NotImplementedError}.get(what, RuntimeError)
            raise cls(f"Cannot call {what}() on a tensor without data "
                      f"({'fake' if self._fake else 'meta'} tensor of shape "
                      f"{list(self._data.shape)}): can't convert a meta tensor to host data; "
                      "Cannot copy out of meta tensor; no data!")

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is "
                               "ambiguous" if self._data.size else
                               "Boolean value of Tensor with no values is ambiguous")
        return bool(self.item())

    def __float__(self):
        self._check_one("float")
        return float(self.item().real if self._dtype.is_complex else self.item())

    def __int__(self):
        self._check_one("int")
        return int(self.item())

    def __complex__(self):
        self._check_one("complex")
        return complex(self.item())

    def _check_one(self, what):
        if self._data.size != 1:        # PyTorch: ValueError here, RuntimeError from .item()
            raise ValueError(f"only one element tensors can be converted to Python scalars "
                             f"({what}() of a tensor of shape {list(self._data.shape)})")

    def __index__(self):
        if self._dtype.is_floating_point or self._dtype.is_complex or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __hash__(self):
        return id(self)

    def __reduce_ex__(self, proto):
        return (_rebuild, (np.array(self._data), self._dtype.name, self._rg))

    def __deepcopy__(self, memo):
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.")
        t = type(self).__new__(type(self)) if type(self) is not Tensor else _new(Tensor)
        t.__dict__.update({k: v for k, v in self.__dict__.items()
                           if k not in ("_data", "_storage", "_grad", "_accum")})
        t._data = self._data.copy()
        t._dtype = self._dtype
        t._storage = _Storage(t._data.nbytes)
        t._base = None
        if self.grad is not None:
            t.grad = self.grad.__deepcopy__(memo)
        memo[id(self)] = t
        return t

    # --------------------------------------------------------------- autograd
    def retain_grad(self):
        from .autograd.graph import retain_grad
        retain_grad(self)

    @property
    def retains_grad(self):
        return self._retains_grad

    def register_hook(self, hook):
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            return self._grad_fn._add_tensor_prehook(self._output_nr, hook)
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(hook)
        return _RemovableHandle(self._hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        if self._grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        if self._post_acc_hooks is None:
            self._post_acc_hooks = []
        self._post_acc_hooks.append(hook)
        return _RemovableHandle(self._post_acc_hooks, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        from .autograd import backward
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    # --------------------------------------------------------------- subclasses
    def as_subclass(self, cls):
        """A `cls` alias of self: same storage; stays on self's autograd graph."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError("Creating a Tensor subclass from a class that does not inherit "
                            "from Tensor is not possible. Make sure your class inherits from "
                            "Tensor.")
        if self._rg and STATE.grad_enabled:
            from .overrides import alias
            with DisableTorchFunctionSubclass():
                t = alias(self)
        else:
            t = _alias(self, self._data)
            t._base = self if self._base is None else self._base
        t.__class__ = cls
        return t

    @staticmethod
    def _make_subclass(cls, data, require_grad=False):
        """A detached `cls` alias of data (how nn.Parameter is made)."""
        t = _alias(data, data._data)
        t.__class__ = cls
        t._rg = bool(require_grad)
        return t

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """PyTorch's default: run func as on plain Tensors, return results as `cls`."""
        if not all(issubclass(cls, t) for t in types):
            return NotImplemented
        with DisableTorchFunctionSubclass():
            return convert(func(*args, **(kwargs or {})), cls)

    def __repr__(self, *, tensor_contents=None):
        from ._tensor_str import tensor_repr
        return tensor_repr(self, tensor_contents)

    def __format__(self, spec):
        if self._data.ndim == 0 and self._backend != "meta":
            return format(self.item(), spec)
        return object.__format__(self, spec)


class Size(tuple):
    """torch.Size: a tuple of ints that prints as torch.Size([...])."""

    def __repr__(self):
        return f"torch.Size({list(self)})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))


class _RemovableHandle:
    _next_id = 0

    def __init__(self, container, item):
        self._container, self._item = container, item
        _RemovableHandle._next_id += 1
        self.id = _RemovableHandle._next_id

    def remove(self):
        try:
            if isinstance(self._container, dict):
                self._container.pop(self._item, None)
            else:
                self._container.remove(self._item)
        except ValueError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


_new = object.__new__


def wrap(arr, dt=None):
    """A new Tensor that owns `arr` (a kernel's fresh output)."""
    t = _new(Tensor)
    t._data = arr
    t._dtype = D._FROM_NP[arr.dtype] if dt is None else dt
    # read by every op the tensor goes into: as instance attributes these reads are
    # specialized (CPython 3.11 reads a class-level default ~35 ns slower)
    t._backend = "cpu"
    t._rg = False
    if _PENDING:                       # the kernel wrote into a caching-allocator buffer
        s = _PENDING.pop(id(arr), None)
        if s is not None:
            t._storage = s
            return t
    t._storage = new_storage(arr.nbytes)
    return t


def wrap_view(arr, src):
    """A new Tensor that aliases `src`'s storage (a view op's output)."""
    t = _new(Tensor)
    t._data = arr
    t._dtype = src._dtype if arr.dtype == src._data.dtype else D._FROM_NP[arr.dtype]
    t._storage = src._storage
    t._base = src if src._base is None else src._base
    if src._backend != "cpu":
        t._backend, t._device, t._fake = src._backend, src._device, src._fake
    return t


def wrap_meta(shape, dt, like=None, device=None, fake=None):
    """A tensor with no data: `_data` is a zero-strided view of one zero (no memory).

    `like` (a meta tensor) gives the device and fake flag; a meta device tensor
    unless told otherwise."""
    t = _new(Tensor)
    shape = tuple(shape)
    t._data = np.broadcast_to(np.zeros((), dt.np), tuple(int(s) for s in shape))
    t._dtype = dt
    t._storage = _Storage(0)
    t._backend = "meta"
    if any(type(s) is not int for s in shape):
        from ._symbolic import SymInt
        if any(isinstance(s, SymInt) for s in shape):
            t._sym_shape = shape
    if like is not None:
        t._device, t._fake = like._device, like._fake
    else:
        t._device = as_device("meta") if device is None else as_device(device)
        t._fake = bool(fake)
    return t


def _alias(src, arr):
    """A detached tensor over the same storage; shares the version counter."""
    t = _new(Tensor)
    t._data = arr
    t._dtype = src._dtype
    t._storage = src._storage
    if src._backend != "cpu":
        t._backend, t._device, t._fake = src._backend, src._device, src._fake
        if arr is src._data:
            t._mstrides, t._moffset = src._mstrides, src._moffset
            t._sym_shape = src._sym_shape
    return t


def _keeps_subclass(cls):
    """PyTorch keeps a subclass through detach/.data unless it disabled __torch_function__
    (as nn.Parameter does: its detach() is a plain Tensor)."""
    from ._dispatch import _disabled_torch_function_impl
    return getattr(cls, "__torch_function__", None) is not _disabled_torch_function_impl


def _rebuild(arr, dtype_name, requires_grad):
    t = wrap(arr, getattr(D, dtype_name))
    t._rg = requires_grad
    return t


def _strides_contiguous(shape, strides):
    """PyTorch's is_contiguous: size-1 dims may have any stride; empty tensors are."""
    acc = 1
    for n, st in zip(reversed(shape), reversed(strides)):
        if n == 0:
            return True
        if n != 1:
            if st != acc:
                return False
            acc *= n
    return True


def _contiguous_strides(shape):
    st, acc = [], 1
    for s in reversed(shape):
        st.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(st))


def _is_channels_last(a):
    if a.ndim != 4:
        return False
    n, c, h, w = a.shape
    isz = a.itemsize
    s = a.strides
    return s[1] == isz and s[3] == c * isz and s[2] == w * c * isz


def _wrap_dim(dim, ndim, opname="op"):
    n = max(ndim, 1)
    if not isinstance(dim, int) or isinstance(dim, bool):
        if hasattr(dim, "__index__"):
            dim = dim.__index__()
        else:
            raise TypeError(f"{opname}(): argument 'dim' must be int, not {type(dim).__name__}")
    if dim < -n or dim >= n:
        raise IndexError(f"{opname}(): Dimension out of range (expected to be in range of "
                         f"[{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def is_tensor(obj):
    return isinstance(obj, Tensor)


def grad_enabled():
    return STATE.grad_enabled


def _check_grad(t, g):
    """PyTorch's checks on assigning `.grad`: a tensor of the same size, dtype and device."""
    if not isinstance(g, Tensor):
        raise TypeError("assigned grad expected to be a Tensor or None but got grad of type "
                        f"{type(g).__name__}")
    if g._dtype is not t._dtype:
        raise RuntimeError(f"attempting to assign a gradient with dtype '{g._dtype}' to a tensor "
                           f"with dtype '{t._dtype}'. Please ensure that the gradient and the "
                           "tensor have the same dtype (assigned grad has data of a different "
                           "type)")
    if g._data.shape != t._data.shape:
        raise RuntimeError(f"attempting to assign a gradient of size '{list(g._data.shape)}' to "
                           f"a tensor of size '{list(t._data.shape)}'. Please ensure that the "
                           "gradient and the tensor are the same size (assigned grad has data "
                           "of a different size)")
    if g._device.type != t._device.type:
        raise RuntimeError(f"attempting to assign a gradient with device type '{g._device.type}' "
                           f"to a tensor with device type '{t._device.type}'. Please ensure "
                           "that the gradient and the tensor are on the same device")
