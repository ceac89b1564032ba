"""FakeTensorMode: run programs on shapes and dtypes only (torch._subclasses.fake_tensor).

Note: a fake tensor is an ordinary ember Tensor on the 'meta' backend with
`_fake=True` and its real device ('cpu'); its `_data` is a zero-strided view of one
zero, so it holds no memory. Ops whose inputs are fake run the 'meta' backend
fallback (ember/ops/_registry.py `run_meta`: the op's meta function; an op without
one raises), so they work outside the mode too. Inside the mode,
factories (ops with no tensor input) also make fake tensors, and real tensor
inputs are refused unless `allow_non_fake_inputs=True` (then they are converted).
Autograd records as usual, so backward yields fake gradients of the right shapes.
Fake tensors carry the real strides (views and layouts computed as the real run
would, `ember/ops/_meta_layout.py`) and may have symbolic sizes
(`from_tensor(x, dynamic_dims=[0])`: shape (s0, 3); ember/_symbolic.py).
"""
import weakref

from ..ops._registry import run_meta, tensor_args
from .._symbolic import ShapeEnv
from .._tensor import Tensor, wrap_meta
from ..utils._python_dispatch import TorchDispatchMode


class _FakeTensorMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj._fake


class FakeTensor(metaclass=_FakeTensorMeta):
    """For `isinstance(t, FakeTensor)`: fake tensors are Tensors with `_fake=True`."""


class FakeTensorMode(TorchDispatchMode):
    def __init__(self, *, allow_non_fake_inputs=False, static_shapes=True, shape_env=None):
        super().__init__()
        self.allow_non_fake_inputs = allow_non_fake_inputs
        self.static_shapes = static_shapes
        self.shape_env = ShapeEnv() if shape_env is None else shape_env
        self._memo = {}         # (id(real tensor), dynamic dims) -> (weakref to it, its fake)

    def from_tensor(self, t, static_shapes=None, *, dynamic_dims=()):
        """A fake tensor with t's shape, strides, dtype, device and requires_grad
        (memoized). The sizes of `dynamic_dims` become symbols (s0, s1, ... in this
        mode's ShapeEnv), with t's sizes as hints; sizes 0 and 1 stay static, as in
        PyTorch (0/1 specialization)."""
        if t._fake:
            return t
        dims = tuple(sorted({d % max(t.dim(), 1) for d in dynamic_dims}))
        key = (id(t), dims)
        hit = self._memo.get(key)
        if hit is not None and hit[0]() is t:
            return hit[1]
        shape = tuple(t._data.shape)
        if dims:
            env = self.shape_env
            shape = tuple(env.create_symbol(n) if i in dims and n > 1 else n
                          for i, n in enumerate(shape))
        fake = wrap_meta(shape, t._dtype, device=t.device, fake=True)
        if t._data.size and not t.is_contiguous():
            fake._mstrides = tuple(t.stride())
        fake._moffset = t.storage_offset()
        fake._rg = t._rg
        self._memo[key] = (weakref.ref(t, lambda _, k=key: self._memo.pop(k, None)), fake)
        return fake

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        tensors = tensor_args(args)
        if not tensors:
            return _mark_fake(run_meta(func, args))
        if not all(t._fake for t in tensors):
            args = self._fakeify(func, args)
        return func(*args, **(kwargs or {}))

    def _fakeify(self, func, args):
        if not self.allow_non_fake_inputs:
            real = [t for t in tensor_args(args) if not t._fake]
            raise AssertionError(
                f"Please convert all Tensors to FakeTensors first or instantiate "
                f"FakeTensorMode with 'allow_non_fake_inputs'. Found in {func.name}: real "
                f"tensor of shape {list(real[0].shape)}")
        conv = self._conv
        return tuple([conv(x) for x in a] if isinstance(a, (list, tuple)) else conv(a)
                     for a in args)

    def _conv(self, a):
        return self.from_tensor(a) if isinstance(a, Tensor) else a


def _mark_fake(out):
    for t in out if isinstance(out, tuple) else (out,):
        if isinstance(t, Tensor):
            t._fake = True
            if t._device.type == "meta":
                from .._device import CPU
                t._device = CPU
    return out
