"""PrivateUse1: out-of-tree device backends (torch.utils.rename_privateuse1_backend and
friends), registered through the op registry.

Note: a device tensor is an ordinary Tensor whose `_backend`/`_device` name the backend and
whose `_data` is a DeviceArray: an ndarray view of memory the backend's allocator hook gave
(register_allocator). Dispatch already sends an op whose first tensor is not on the cpu to
`op.kernels[backend]` (kernels receive and return Tensors), else to BACKENDS[backend]: the
fallback here, which checks that all tensors share one device, then runs a fallback the
backend registered, or the op's decomposition (composite ops need no kernel of their own),
or raises NotImplementedError naming the op. A DeviceArray refuses NumPy ufuncs with
PyTorch's mixed-device error, so a cpu kernel that meets a device tensor
(a cpu tensor first, a device tensor after) cannot silently compute on device memory;
kernels unwrap with `array(t)`. Moving between devices (Tensor.to, factories' device=) is a
differentiable copy.
"""
import numpy as np

from . import _device
from ._tensor import Tensor, wrap

__all__ = ["rename_privateuse1_backend", "_register_device_module",
           "generate_methods_for_privateuse1_backend", "register_allocator",
           "register_fallback", "impl", "backend_name", "is_custom", "array", "empty",
           "from_array", "transfer", "DeviceArray"]

_STATE = {"name": "privateuse1", "renamed": False, "alloc": None, "free": None,
          "fallback": None}


def backend_name():
    """The PrivateUse1 backend's current name ('privateuse1' until renamed)."""
    return _STATE["name"]


def is_custom(dev):
    return _device.as_device(dev).type in _device.CUSTOM


def _same_device_error(a, b):
    return RuntimeError("Expected all tensors to be on the same device, but found at least "
                        f"two devices, {a} and {b}!")


class DeviceArray(np.ndarray):
    """Device memory as an ndarray: metadata (shape, strides, dtype) and layout functions
    (np.reshape's view probe, ...) work as usual, but NumPy math (ufuncs, matmul included)
    is refused, as a cpu kernel must not compute on another device's memory."""

    def __array_finalize__(self, obj):
        self._ember_device = getattr(obj, "_ember_device", None)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise _same_device_error(self._ember_device, "cpu")


def array(t):
    """The plain ndarray over a device tensor's memory (what a kernel computes on)."""
    d = t._data
    return d.view(np.ndarray) if isinstance(d, DeviceArray) else d


# ---------------------------------------------------------------- registration
def rename_privateuse1_backend(backend_name):
    """Names the PrivateUse1 device type (torch.utils.rename_privateuse1_backend): afterwards
    ember.device(backend_name), tensors' .to(backend_name) and factories' device= work."""
    if not isinstance(backend_name, str) or not backend_name.isidentifier():
        raise RuntimeError(f"rename_privateuse1_backend: invalid backend name "
                           f"{backend_name!r}")
    if _STATE["renamed"]:
        if backend_name == _STATE["name"]:
            return
        raise RuntimeError(f"torch.register_privateuse1_backend() has already been set! "
                           f"Current backend: {_STATE['name']}")
    if backend_name in _device._KNOWN and backend_name != "privateuse1":
        raise RuntimeError(f"rename_privateuse1_backend: '{backend_name}' is already a "
                           "device type")
    _STATE["name"], _STATE["renamed"] = backend_name, True
    _device._KNOWN.add(backend_name)
    _device.CUSTOM.add(backend_name)
    from .ops._registry import BACKENDS
    BACKENDS[backend_name] = _fallback


def _register_device_module(device_type, module):
    """ember.<device_type> becomes `module` (torch._register_device_module)."""
    import ember
    name = _device.as_device(device_type).type
    if hasattr(ember, name) and getattr(ember, name) is not module:
        raise RuntimeError(f"The runtime module of '{name}' has already been registered with "
                           f"'{getattr(ember, name)}'")
    setattr(ember, name, module)
    import sys
    sys.modules[f"ember.{name}"] = module


def register_allocator(alloc, free=None):
    """The device-side allocator hook: alloc(nbytes, device) returns a writable buffer
    (anything np.frombuffer takes) of at least nbytes; free(buffer, device) is called when
    the last tensor using it is gone."""
    _STATE["alloc"], _STATE["free"] = alloc, free


def register_fallback(fn):
    """fn(op, args) runs ops that have no kernel for the backend (e.g. via the cpu)."""
    _STATE["fallback"] = fn


def impl(op_name, fn=None):
    """Registers fn(*args) -> Tensor(s) as op_name's kernel for the PrivateUse1 backend
    (usable as a decorator). Tensors of other devices are refused before fn runs."""
    from .ops._registry import REGISTRY

    def deco(f):
        op = REGISTRY.get(str(op_name))
        if op is None:
            raise RuntimeError(f"impl: no registry op named '{op_name}'")

        def kernel(*args):
            _check_devices(op, args)
            return f(*args)
        kernel.__wrapped__ = f
        op.kernels[backend_name()] = kernel
        return f
    return deco if fn is None else deco(fn)


def _tensors(args):
    for a in args:
        if isinstance(a, Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            for x in a:
                if isinstance(x, Tensor):
                    yield x


def _check_devices(op, args):
    dev = None
    for t in _tensors(args):
        if t._device.type == "cpu" and t._data.ndim == 0:
            continue                        # a cpu scalar tensor mixes, as in PyTorch
        if dev is None:
            dev = t._device
        elif t._device != dev:
            raise _same_device_error(dev, t._device)


def _fallback(op, args):
    """BACKENDS[name]: an op with no kernel for the device."""
    _check_devices(op, args)
    fb = _STATE["fallback"]
    if fb is not None:
        return fb(op, args)
    if op.decomp is not None:
        from .autograd.grad_mode import no_grad
        with no_grad():                     # the outer op records autograd
            return op.decomp(*args)
    raise NotImplementedError(
        f"Could not run '{op.name()}' with arguments from the '{backend_name()}' backend: "
        f"no kernel is registered for op '{op.name}' on '{backend_name()}' "
        "(ember._privateuse1.impl registers one; register_fallback sets a fallback)")


# ---------------------------------------------------------------- memory
def _allocate(nbytes, dev):
    alloc = _STATE["alloc"]
    if alloc is None:
        return np.empty(max(nbytes, 1), np.uint8)
    raw = alloc(max(nbytes, 1), dev)
    buf = np.frombuffer(raw, np.uint8)
    free = _STATE["free"]
    if free is not None:        # every view of the memory keeps `buf` alive
        import weakref
        weakref.finalize(buf, free, raw, dev)
    return buf


def _device_tensor(arr, dev, dt=None):
    t = wrap(arr, dt)
    t._backend, t._device = dev.type, dev
    return t


def _norm(device):
    dev = _device.as_device(device)
    if dev.type in _device.CUSTOM and dev.index is None:
        dev = _device.device(dev.type, 0)
    return dev


def empty(shape, dtype, device):
    """An uninitialized tensor on `device`, its memory from the allocator hook."""
    dev = _norm(device)
    shape = tuple(int(s) for s in shape)
    n = int(np.prod(shape, dtype=np.int64))
    buf = _allocate(n * dtype.itemsize, dev)
    arr = buf[:n * dtype.itemsize].view(dtype.np).reshape(shape).view(DeviceArray)
    arr._ember_device = dev
    return _device_tensor(arr, dev, dtype)


def from_array(arr, device, dtype=None):
    """A new device tensor holding a copy of host array `arr` (a kernel's result)."""
    from . import _dtype as D
    arr = np.asarray(arr)
    dt = dtype or D._FROM_NP[arr.dtype]
    out = empty(arr.shape, dt, device)
    array(out)[...] = arr
    return out


def copy_into(op, dst, src):
    """copy_ into a device tensor: the backend's copy_ kernel when it registered one, else
    a host copy (src may be on the cpu or the device)."""
    _check_devices(op, (dst, src) if src._device.type != "cpu" else (dst,))
    k = op.kernels.get(dst._backend)
    if k is not None:
        k(dst, src)
        return
    from .ops.copy import _copy_kernel
    _copy_kernel(array(dst), array(src))


def _copy_to(t, dev):
    if dev.type == "cpu":
        src = np.array(array(t), copy=True)
        return wrap(src, t._dtype)
    host = array(t) if t._device.type != "cpu" else t._data
    return from_array(host, dev, t._dtype)


class _ToDevice:
    """Differentiable copy between devices (the gradient goes back to the source)."""
    fn = None

    @classmethod
    def get(cls):
        if cls.fn is None:
            from .autograd import Function

            class ToDevice(Function):
                @staticmethod
                def forward(ctx, x, dev):
                    ctx.src = x._device
                    return _copy_to(x, dev)

                @staticmethod
                def backward(ctx, g):
                    return _copy_to(g, ctx.src), None
            cls.fn = ToDevice
        return cls.fn


def transfer(t, device):
    """`t` copied to `device` (a custom device or the cpu), keeping autograd history."""
    dev = _norm(device)
    if t._device == dev:
        return t
    if t._device.type not in ("cpu",) and t._device.type not in _device.CUSTOM:
        raise RuntimeError(f"to(): cannot copy a {t._device.type} tensor to {dev}")
    from .autograd.grad_mode import is_grad_enabled
    if t._rg and is_grad_enabled():
        return _ToDevice.get().apply(t, dev)
    return _copy_to(t, dev)


# ---------------------------------------------------------------- generated methods
def generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True,
                                             for_packed_sequence=True, for_storage=False,
                                             unsupported_dtype=None):
    """Adds Tensor.<name>(), Tensor.is_<name> and Module.<name>() for the renamed backend
    (torch.utils.generate_methods_for_privateuse1_backend)."""
    name = backend_name()
    if name == "privateuse1":
        raise RuntimeError("generate_methods_for_privateuse1_backend: rename the backend "
                           "first (rename_privateuse1_backend)")
    bad = set(unsupported_dtype or ())

    def _index(device):
        if device is None:
            return _device.device(name, 0)
        if isinstance(device, int):
            return _device.device(name, device)
        d = _device.as_device(device)
        if d.type != name:
            raise RuntimeError(f"Invalid device, must be {name} device")
        return d

    def _check_dtype(t):
        if t.dtype in bad:
            raise RuntimeError(f"Can not support {t.dtype} on {name} device")

    if for_tensor:
        def to_backend(self, device=None, non_blocking=False, **kwargs):
            _check_dtype(self)
            return self.to(_index(device))
        to_backend.__name__ = name
        from ._tensor_methods import add_methods
        add_methods({name: to_backend,
                     f"is_{name}": property(lambda self: self._device.type == name)})
    if for_module:
        from .nn import Module

        def module_to_backend(self, device=None):
            return self._apply(lambda t: (_check_dtype(t), t.to(_index(device)))[1])
        module_to_backend.__name__ = name
        setattr(Module, name, module_to_backend)
    if for_packed_sequence:
        from .nn.utils.rnn import PackedSequence

        def packed_to_backend(self, *args, **kwargs):
            return self.to(_index(args[0] if args else kwargs.get("device")))
        setattr(PackedSequence, name, packed_to_backend)
        setattr(PackedSequence, f"is_{name}",
                property(lambda self: self.data._device.type == name))
    if for_storage:
        raise NotImplementedError("generate_methods_for_privateuse1_backend: for_storage=True "
                                  "(typed storages on custom devices) is not implemented")
