"""Machinery shared by pointwise ops: type promotion, broadcasting, in-place and out=.

Note: PyTorch's TensorIterator decides a pointwise op's dtype from all operands
(`result_type`), computes half precision in float32 and rounds once, and checks
that an in-place result can be cast back to `self`. `PointwiseOp.run_kernel` does
the same before calling the NumPy kernel, so kernels are one-line ufunc calls on
arrays that already have the compute dtype.
"""
import builtins

import numpy as np

from .. import _dtype as D
from .._dispatch import STATE, TF, dispatch
from .._memory import resize_storage, cached_empty, CACHE
from .._tensor import Tensor, wrap
from ._lowp import cast
from ._registry import OpDef, REGISTRY

DEFAULT, INT_TO_FLOAT, ALWAYS_BOOL, COMPLEX_TO_FLOAT, NO_OPMATH = range(5)
_ndarray = np.ndarray

_KIND_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
               "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
               "uint8": "Byte", "bool": "Bool", "complex64": "ComplexFloat",
               "complex128": "ComplexDouble"}


def type_name(d):
    return _KIND_NAMES[d.name]


def _check_same_device(name, t, operands):
    """A meta tensor with a cpu tensor of dim > 0 is PyTorch's device error (cpu scalars,
    0-d, may mix; fake tensors mix with real constants by design)."""
    if t._fake:
        return
    for o in operands:
        if isinstance(o, Tensor) and o._backend == "cpu" and o._data.ndim:
            raise RuntimeError(f"{name}: Tensor on device cpu is not on the expected device "
                               f"{t._backend}! (shapes {list(o._data.shape)} on cpu and "
                               f"{list(t._data.shape)} on {t._backend})")


def result_and_compute(operands, promotion):
    """(result dtype, compute dtype) for a pointwise op over tensors and scalars."""
    common = D.result_dtype(operands)
    if promotion == INT_TO_FLOAT and common._kind < 2:
        common = D.get_default_dtype()
    compute = D.compute_dtype(common)
    if promotion == ALWAYS_BOOL:
        return D.bool, compute
    if promotion == COMPLEX_TO_FLOAT:
        return common.to_real(), compute
    return common, compute


def broadcast_shapes(*shapes):
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s, ndim - len(s)):
            if n == out[i] or n == 1:
                continue
            if out[i] == 1:
                out[i] = n
            else:
                raise RuntimeError(
                    f"The size of tensor a ({out[i]}) must match the size of tensor b ({n}) at "
                    f"non-singleton dimension {i - ndim + len(s) + (ndim - len(s))}")
    return tuple(out)


class PointwiseOp(OpDef):
    """An elementwise op over the first `arity` arguments (tensors or scalars)."""

    def __init__(self, name, kernel, arity, promotion=DEFAULT, allowed=None, half_native=False,
                 **kw):
        kw.setdefault("tags", ("pointwise",))
        super().__init__(name, kernel, **kw)
        self.arity = arity
        self.promotion = promotion
        self.allowed = allowed      # set of dtype kinds the kernel supports (0..3)
        # a plain ufunc kernel can write into a caching allocator's buffer (out=)
        self.ufunc = kernel if isinstance(kernel, np.ufunc) else None
        self.meta = self._meta
        # one-tensor calls: input dtype -> result dtype, for the dtypes whose compute
        # dtype is the input's own (float32/64, complex), filled by the general path;
        # half_native: the kernel also takes bf16/fp16 arrays as they are (no float32 copy)
        self._fast1 = {D.float16: D.float16, D.bfloat16: D.bfloat16} if half_native else {}

    def _meta(self, *args):
        ops = args[:self.arity]
        shapes = [tuple(a.shape) for a in ops if isinstance(a, Tensor)]
        try:
            shape = broadcast_shapes(*shapes)
        except RuntimeError as e:
            if len(shapes) == 2:
                raise RuntimeError(f"{self.name}: {e} (shapes {list(shapes[0])} and "
                                   f"{list(shapes[1])})") from None
            raise RuntimeError(f"{self.name}: {e}") from None
        res, comp = result_and_compute(ops, self.promotion)
        self._check_kind(comp)
        return shape, res

    def _check_kind(self, comp):
        if self.allowed is not None and comp._kind not in self.allowed:
            raise NotImplementedError(
                f'"{self.name}_cpu" not implemented for \'{type_name(comp)}\'')

    def run_kernel(self, args):
        ar = self.arity
        a = args[0]
        if ar == 1 and a.__class__ is Tensor and CACHE[0] is None:
            res = self._fast1.get(a._dtype)
            if res is not None and a._backend == "cpu":   # no promotion, no cast: the kernel
                try:
                    out = self.kernels["cpu"](a._data, *args[1:])
                except (ValueError, TypeError, IndexError):
                    out = None                  # the general path below raises PyTorch's error
                if out is not None:
                    if out.__class__ is not _ndarray:
                        out = np.asarray(out)
                    if out.dtype != res.np:
                        out = cast(out, res.np)
                    return wrap(out, res)
        operands = args[:ar]
        if (ar == 2 and a.__class__ is Tensor and args[1].__class__ is Tensor
                and a._dtype is args[1]._dtype and self.promotion == DEFAULT
                and a._dtype._kind >= 1):
            res = a._dtype
            comp = D.compute_dtype(res)
        else:
            try:
                res, comp = result_and_compute(operands, self.promotion)
            except TypeError as e:
                if not builtins.any(isinstance(o, np.ndarray) for o in operands):
                    raise TypeError(f"{self.name}(): {e}") from None
                from .._numpy_protocol import to_ember   # t + ndarray: the array is a tensor
                return self.run_kernel(tuple(map(to_ember, operands)) + tuple(args[ar:]))
        for o in operands:
            if isinstance(o, Tensor) and o._backend != "cpu":
                _check_same_device(self.name, o, operands)
                from ._registry import _backend_kernel
                return _backend_kernel(self, o._backend, args)
        if self.allowed is not None and comp._kind not in self.allowed:
            self._check_kind(comp)
        if ar == 1 and a.__class__ is Tensor and comp is a._dtype and comp._kind >= 2:
            self._fast1[comp] = res     # (kind >= 2: the default dtype plays no part)
        cnp = comp.np
        arrs = []
        for o in operands:
            if isinstance(o, Tensor):
                x = o._data
                if x.dtype != cnp:
                    x = cast(x, cnp)
            elif isinstance(o, (int, float, complex, bool)) or isinstance(o, np.generic):
                weak = comp._kind >= 2 and not isinstance(o, complex)   # NumPy keeps cnp
                x = o if weak else np.asarray(o).astype(cnp)
            elif o is None:
                x = None
            else:
                raise TypeError(f"{self.name}(): expected Tensor or Number as argument, "
                                f"got {type(o).__name__}")
            arrs.append(x)
        if CACHE[0] is not None and self.ufunc is not None and len(args) == ar and \
                (res is comp or self.promotion == ALWAYS_BOOL):
            t = _cached_ufunc(self.ufunc, arrs, res)
            if t is not None:
                return t
        try:
            out = self.kernels["cpu"](*arrs, *args[ar:])
        except (ValueError, TypeError, IndexError) as e:
            self._meta(*args)
            # an operand of the wrong Python type stays a TypeError, as in PyTorch
            raise (TypeError if isinstance(e, TypeError) else RuntimeError)(
                f"{self.name}: {e}") from e
        if out.__class__ is not _ndarray:
            out = np.asarray(out)
        if out.dtype != res.np:
            out = cast(out, res.np)
        return wrap(out, res)


def _cached_ufunc(ufunc, arrs, res):
    """Run `ufunc` into a buffer from the active caching allocator (ember.cpu)."""
    shapes = [a.shape for a in arrs if isinstance(a, np.ndarray)]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        return None                  # the normal path raises PyTorch's error
    arr, storage = cached_empty(shape, res.np)
    ufunc(*arrs, out=arr)
    t = object.__new__(Tensor)
    t._data, t._dtype, t._storage = arr, res, storage
    return t


def pointwise(name, kernel, arity, promotion=DEFAULT, **kw):
    op = PointwiseOp(name, kernel, arity, promotion, **kw)
    if name in REGISTRY:
        raise RuntimeError(f"op '{name}' registered twice")
    REGISTRY[name] = op
    return op


# ------------------------------------------------------------------ in-place & out=

def check_inplace_dtype(self, res_dtype, opname):
    if not D.can_cast(res_dtype, self._dtype):
        raise RuntimeError(f"result type {type_name(res_dtype)} can't be cast to the desired "
                           f"output type {type_name(self._dtype)}")


def inplace(op, self, args):
    """self.op_(...): compute out of place, then commit into self through copy_.

    Note: like PyTorch, the backward of an in-place op keeps the original `self`
    only when a gradient needs it (a clone, since self is about to change); an op
    whose backward reads its result keeps `self` itself after the commit, so a
    later in-place change of it is caught by the version check.
    """
    if not isinstance(self, Tensor):
        raise TypeError(f"{op.name}_(): self must be a Tensor")
    recording = STATE.grad_enabled and (self._rg or _any_rg(args))
    drop_self = False
    if recording and (op.save is None or 0 in op.save):
        if _any_rg(args[1:]) or (self._rg and op.self_grad_uses_self):
            args = (self.clone(),) + tuple(args[1:])
        else:
            drop_self = True
    res = dispatch(op, args)
    if res._dtype is not self._dtype:
        check_inplace_dtype(self, res._dtype, op.name)
    if res._data.shape != self._data.shape:
        try:
            np.broadcast_shapes(res._data.shape, self._data.shape)
            ok = np.broadcast_shapes(res._data.shape, self._data.shape) == self._data.shape
        except ValueError:
            ok = False
        if not ok:
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the "
                               f"broadcast shape {list(res.shape)}")
    if not recording and not STATE.modes and not TF.active and self.__class__ is Tensor \
            and self._backend == "cpu" and not self._inference:
        # nothing observes the commit and no history changes (an optimizer step under
        # no_grad): copy_'s kernel and version bump without a second dispatch
        try:
            COPY_.kernels["cpu"](self._data, res._data)
        except ValueError:
            return dispatch(COPY_, (self, res))     # raises copy_'s error
        self._storage.version += 1
        return self
    node = res._grad_fn if recording else None
    out = dispatch(COPY_, (self, res))
    if node is not None and hasattr(node, "ctx"):
        _resave(node.ctx, self, drop_self)
    return out


def operator_methods(name, op):
    """Tensor.__name__, __rname__ (operands swapped) and __iname__ (in place) for a binary
    registry op that takes no arguments beyond its two operands."""
    return {f"__{name}__": lambda a, b: dispatch(op, (a, b)),
            f"__r{name}__": lambda a, b: dispatch(op, (b, a)),
            f"__i{name}__": lambda a, b: inplace(op, a, (a, b))}


def _resave(ctx, self, drop_self):
    """After the commit: forget an unneeded `self`; a saved result is now `self`."""
    from ..autograd.graph import SavedTensor, saved_output
    if drop_self and ctx._args:
        ctx._args[0] = None
    if ctx._out and isinstance(ctx._out, SavedTensor) and self._grad_fn is not None:
        ctx._out = saved_output(self)


def _any_rg(args):
    for a in args:
        if isinstance(a, Tensor) and a._rg:
            return True
    return False


def write_out(out, res, opname="op"):
    """Implements out=: resize out if needed, cast-check, copy, bump its version."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{opname}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if res._rg and STATE.grad_enabled:
        raise RuntimeError(f"{opname}(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires grad.")
    if not D.can_cast(res._dtype, out._dtype):
        raise RuntimeError(f"result type {type_name(res._dtype)} can't be cast to the desired "
                           f"output type {type_name(out._dtype)}")
    if out._data.shape != res._data.shape:
        if out._base is not None:
            raise RuntimeError(f"{opname}(): cannot resize an out= tensor that is a view")
        if STATE.modes:             # modes see out='s effects as resize_ + copy_ ops
            from .effects import RESIZE_
            dispatch(RESIZE_, (out, res._data.shape))
        else:
            out._data = np.empty(res._data.shape, out._dtype.np)
            resize_storage(out._storage, out._data.nbytes)
    if STATE.modes:
        with _no_grad():
            return dispatch(COPY_, (out, res))
    np.copyto(out._data, res._data, casting="unsafe")
    out._storage.version += 1
    return out


class _no_grad:
    """copy_ of an out= write records no history (out= never does)."""

    def __enter__(self):
        self.prev, STATE.grad_enabled = STATE.grad_enabled, False

    def __exit__(self, *exc):
        STATE.grad_enabled = self.prev


COPY_ = None   # set by ember.ops.copy (avoids an import cycle)


# ------------------------------------------------------------------ the fast path

def fast_binary(op, ufunc, extra=(), result=None, reverse=False):
    """A Python-operator entry point for `op` with a shortcut for the common case.

    Note: when both operands are plain cpu Tensors of one dtype that the ufunc
    computes natively, no mode is active and no grad is recorded, promotion and
    autograd have nothing to do: call the ufunc and wrap. A floating tensor with a
    Python int/float keeps its dtype too (PyTorch's wrapped-number rule), so that
    case is fast as well; recording then goes through the general `record`.
    Everything else goes through dispatch. `result(dtype)` gives the output dtype,
    or None to decline; `reverse` makes the entry for `b <op> a` (__radd__ ...).
    """
    from .._memory import new_storage
    fast = {}
    for d in D.ALL:
        r = result(d) if result is not None else (d if d._kind >= 1 and d.np.itemsize != 2
                                                   or d in (D.int16,) else None)
        if r is not None:
            fast[d] = r
    new = object.__new__
    state = STATE
    tf = TF                         # entered function modes also see operators
    cache = CACHE

    def entry(a, b):
        if b.__class__ is Tensor and a.__class__ is Tensor:
            d = a._dtype
            if d is b._dtype and d in fast and not state.modes and not tf.mode_count and \
                    a._backend == "cpu" and b._backend == "cpu":
                if cache[0] is not None:
                    t = _cached_ufunc(ufunc, (a._data, b._data), fast[d])
                    if t is None:
                        return dispatch(op, (a, b) + extra)
                    if (a._rg or b._rg) and state.grad_enabled and op.vjp is not None:
                        _record_binary(op, a, b, extra, t)
                    return t
                try:
                    out = ufunc(a._data, b._data)
                except ValueError:          # bad broadcast: dispatch raises PyTorch's error
                    return dispatch(op, (a, b) + extra)
                if out.__class__ is not _ndarray:
                    out = np.asarray(out)
                t = new(Tensor)
                t._data = out
                t._dtype = fast[d]
                t._storage = new_storage(out.nbytes)
                t._backend = "cpu"          # as wrap(): see there
                t._rg = False
                if (a._rg or b._rg) and state.grad_enabled and op.vjp is not None:
                    _record_binary(op, a, b, extra, t)
                return t
        elif (b.__class__ is float or b.__class__ is int) and a.__class__ is Tensor:
            d = a._dtype
            if d._kind == 2 and d in fast and not state.modes and not tf.mode_count and \
                    a._backend == "cpu":
                out = ufunc(b, a._data) if reverse else ufunc(a._data, b)
                if out.__class__ is not _ndarray:
                    out = np.asarray(out)
                t = new(Tensor)
                t._data = out
                t._dtype = fast[d]
                t._storage = new_storage(out.nbytes)
                t._backend = "cpu"          # as wrap(): see there
                t._rg = False
                if a._rg and state.grad_enabled and op.vjp is not None:
                    _record(op, ((b, a) if reverse else (a, b)) + extra, t)
                return t
        return dispatch(op, ((b, a) if reverse else (a, b)) + extra)
    return entry


def _record(op, args, out):
    global _record
    from ..autograd.graph import record
    _record = record
    record(op, args, out)


def _record_binary(op, a, b, extra, out):
    global _record_binary
    from ..autograd.graph import record_binary
    _record_binary = record_binary
    record_binary(op, a, b, extra, out)
