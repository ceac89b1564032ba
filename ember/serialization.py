"""ember.save / ember.load: PyTorch's zip checkpoint format, without importing torch.

Note: a checkpoint is a zip archive (stored, not compressed) with the records
    <archive>/data.pkl              the object, pickled with protocol 2
    <archive>/.format_version, .storage_alignment, byteorder, version
    <archive>/data/<key>            each storage's raw little-endian bytes, 64-byte aligned
    <archive>/.data/serialization_id
Tensors pickle as torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
requires_grad, OrderedDict()) whose storage is the persistent id
('storage', torch.<Type>Storage, key, 'cpu', numel). ember writes the GLOBAL opcodes
for these torch names itself (a pure-Python pickler), and reads them back through an
unpickler that maps them to ember. A storage is the NumPy array that owns a tensor's
memory (the root of its `.base` chain), so views saved together keep sharing memory.
"""
import codecs
import collections
import contextlib
import io
import os
import pickle
import struct
import sys
import types
import zlib

import numpy as np

from . import _atomic_file
from . import _dtype as D
from ._device import device as _device
from ._memory import alias_storage, new_storage
from ._tensor import Size, Tensor, _alias

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals"]

_ALIGN = 64
_ZIP64_LIMIT = 0xFFFFFFFF          # sizes/offsets at or above this need zip64 fields

# ember dtype name <-> legacy typed storage class name in torch
_STORAGE_NAMES = {
    "float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
    "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage",
    "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage",
    "bool": "BoolStorage", "complex64": "ComplexFloatStorage",
    "complex128": "ComplexDoubleStorage", "qint8": "QInt8Storage", "quint8": "QUInt8Storage",
    "qint32": "QInt32Storage", "quint4x2": "QUInt4x2Storage", "quint2x4": "QUInt2x4Storage",
}
_DTYPE_OF_STORAGE = {v: k for k, v in _STORAGE_NAMES.items()}
_DTYPE_OF_STORAGE["UntypedStorage"] = "uint8"
# torch dtypes that ember does not have: named in the error when a file uses one
_UNSUPPORTED_DTYPES = {"uint16", "uint32", "uint64", "complex32", "float8_e4m3fn",
                       "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu",
                       "float4_e2m1fn_x2", "bits8", "bits16", "bits1x8", "bits2x4", "bits4x2"}


# ======================================================================= saving

class _TorchGlobal:
    """A torch name (module, qualname) that the pickler writes as a GLOBAL opcode."""
    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):      # pickle's save_reduce requires a callable
        raise TypeError(f"{self.module}.{self.name} is a name for the pickle stream only")


class _StorageRef:
    """One storage to write: its raw bytes (a 1-D uint8 view) and its typed numel."""
    __slots__ = ("key", "dtype", "raw", "numel")

    def __init__(self, key, dtype, raw):
        self.key, self.dtype, self.raw = key, dtype, raw
        self.numel = raw.size // dtype.itemsize


def _owner(a):
    """The last ndarray of a's `.base` chain: the array whose memory a lies in."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _raw_bytes(root):
    """root's memory as a 1-D uint8 array without copying, or None if not contiguous."""
    if not (root.flags.c_contiguous or root.flags.f_contiguous) or root.dtype.byteorder == ">":
        return None
    return root.ravel(order="K").view(np.uint8)


class _Pickler(pickle._Pickler):
    """Pickler (protocol 2 by default, as PyTorch's) that writes ember tensors, dtypes,
    Size and device under torch's names, and storages as torch's persistent ids."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file, protocol=2):
        super().__init__(file, protocol=protocol)
        self.storages = {}          # key -> _StorageRef, in key order
        self._roots = {}            # id(root array) -> (_StorageRef, root) (root kept alive)
        self._globals = {}

    def _g(self, module, name):
        g = self._globals.get((module, name))
        if g is None:
            g = self._globals[(module, name)] = _TorchGlobal(module, name)
        return g

    def _save_torch_global(self, obj):
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
        self.memoize(obj)

    dispatch[_TorchGlobal] = _save_torch_global

    def save_global(self, obj, name=None):
        """As the C pickler (torch.save's): a local class or function is an AttributeError
        "Can't pickle local object", not pickle.py's PicklingError."""
        qualname = name or getattr(obj, "__qualname__", None)
        if isinstance(qualname, str) and "<locals>" in qualname:
            raise AttributeError(f"Can't pickle local object {qualname!r}")
        return super().save_global(obj, name)

    dispatch[types.FunctionType] = save_global

    def _save_dtype(self, obj):
        self.save(self._g("torch", obj.name))

    dispatch[D.dtype] = _save_dtype
    dispatch[D.qscheme] = _save_dtype       # torch.per_tensor_affine, ...

    def persistent_id(self, obj):
        if type(obj) is _StorageRef:
            return ("storage", self._g("torch", _STORAGE_NAMES[obj.dtype.name]), obj.key,
                    "cpu", obj.numel)
        return None

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        if type(obj) is Size:
            return self._g("torch", "Size"), (tuple(obj),)
        if type(obj) is _device:
            return self._g("torch", "device"), (str(obj),)
        return NotImplemented

    def _reduce_tensor(self, t):
        from .nn.parameter import Parameter
        if t._backend == "quantized":       # torch's layout: integer storage + quantizer
            ref, offset, stride = self._storage_of(t)
            return (self._g("torch._utils", "_rebuild_qtensor"),
                    (ref, offset, tuple(t.shape), stride, t._quantizer(), False,
                     collections.OrderedDict()))
        if t._backend != "cpu":
            raise RuntimeError(f"ember.save: cannot save a tensor without data on device "
                               f"'{t.device}' ({'fake' if t._fake else 'meta'} tensor)")
        if isinstance(t, Parameter):
            return (self._g("torch._utils", "_rebuild_parameter"),
                    (_alias(t, t._data), t.requires_grad, collections.OrderedDict()))
        ref, offset, stride = self._storage_of(t)
        return (self._g("torch._utils", "_rebuild_tensor_v2"),
                (ref, offset, tuple(t.shape), stride, t.requires_grad,
                 collections.OrderedDict()))

    def _storage_of(self, t):
        """(storage, element offset, element strides) of t, sharing the storage of
        every tensor whose memory lies in the same owning array."""
        a, isz = t._data, t._dtype.itemsize
        root = _owner(a)
        hit = self._roots.get(id(root))
        if hit is None and a.size:
            raw = _raw_bytes(root)
            if raw is not None and raw.size % isz == 0:
                hit = self._roots[id(root)] = (self._new_storage(t._dtype, raw), root)
        if hit is not None and a.size:
            ref = hit[0]
            if ref.dtype is not t._dtype:
                raise RuntimeError("Cannot save multiple tensors or storages that view the "
                                   "same data as different types")
            lo = a.__array_interface__["data"][0] - ref.raw.__array_interface__["data"][0]
            if lo % isz == 0 and all(s >= 0 and s % isz == 0 for s in a.strides):
                return ref, lo // isz, tuple(s // isz for s in a.strides)
        # memory ember cannot address as a storage: save a compact copy of its own
        dense = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("="), copy=False)
        return self._new_storage(t._dtype, dense.reshape(-1).view(np.uint8)), 0, t.stride()

    def _new_storage(self, dtype, raw):
        ref = _StorageRef(str(len(self.storages)), dtype, raw)
        self.storages[ref.key] = ref
        return ref


def _write_zip(f, records):
    """Writes (name, bytes-like) records as an uncompressed zip, each record's data
    64-byte aligned through a padding extra field ('FB', as PyTorch's writer does)."""
    pos, central = 0, []
    for name, data in records:
        name_b = name.encode("utf-8")
        mv = memoryview(data).cast("B")
        size, crc = mv.nbytes, zlib.crc32(mv)
        z64 = size >= _ZIP64_LIMIT
        extra = struct.pack("<HHQQ", 1, 16, size, size) if z64 else b""
        pad = -(pos + 30 + len(name_b) + len(extra) + 4) % _ALIGN
        extra += struct.pack("<HH", 0x4246, pad) + b"Z" * pad
        small = 0xFFFFFFFF if z64 else size
        f.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 45 if z64 else 20, 0, 0, 0, 0, crc,
                            small, small, len(name_b), len(extra)))
        f.write(name_b)
        f.write(extra)
        f.write(mv)
        central.append((name_b, crc, size, pos))
        pos += 30 + len(name_b) + len(extra) + size
    cd_start = pos
    for name_b, crc, size, off in central:
        fields = ([size, size] if size >= _ZIP64_LIMIT else []) + \
                 ([off] if off >= _ZIP64_LIMIT else [])
        extra = struct.pack(f"<HH{len(fields)}Q", 1, 8 * len(fields), *fields) if fields else b""
        ver = 45 if fields else 20
        f.write(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, ver, ver, 0, 0, 0, 0, crc,
                            min(size, 0xFFFFFFFF), min(size, 0xFFFFFFFF), len(name_b),
                            len(extra), 0, 0, 0, 0, min(off, 0xFFFFFFFF)))
        f.write(name_b)
        f.write(extra)
        pos += 46 + len(name_b) + len(extra)
    n, cd_size = len(central), pos - cd_start
    if n >= 0xFFFF or cd_start >= _ZIP64_LIMIT or cd_size >= _ZIP64_LIMIT or \
            any(s >= _ZIP64_LIMIT or o >= _ZIP64_LIMIT for _, _, s, o in central):
        f.write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, n, n, cd_size,
                            cd_start))
        f.write(struct.pack("<IIQI", 0x07064B50, 0, pos, 1))
    f.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, min(n, 0xFFFF), min(n, 0xFFFF),
                        min(cd_size, 0xFFFFFFFF), min(cd_start, 0xFFFFFFFF), 0))


def _records(obj, protocol=2, archive="archive"):
    """The checkpoint's (name, data) records in PyTorch's order."""
    buf = io.BytesIO()
    pickler = _Pickler(buf, protocol)
    pickler.dump(obj)
    serialization_id = str(int.from_bytes(os.urandom(16), "little")).rjust(40, "0")[:40]
    recs = [("data.pkl", buf.getvalue()), (".format_version", b"1"),
            (".storage_alignment", str(_ALIGN).encode()), ("byteorder", b"little")]
    recs += [(f"data/{k}", s.raw) for k, s in pickler.storages.items()]
    recs += [("version", b"3\n"), (".data/serialization_id", serialization_id.encode())]
    if sys.byteorder != "little":
        raise NotImplementedError("ember.save on a big-endian machine")
    return [(f"{archive}/{name}", data) for name, data in recs]


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """torch.save: writes `obj` in PyTorch's zip format. A path is written atomically
    (a temporary `.<name>.<pid>.<random>.tmp` in the same directory, then os.replace), so a
    failure leaves any old file intact. A save killed mid-write cannot remove its temporary:
    the next save of the same path deletes such leftovers, only those whose writer pid is
    no longer alive and whose advisory lock (held by every writer while writing) is free."""
    if pickle_module is not None and pickle_module is not pickle:
        raise NotImplementedError("ember.save: pickle_module other than pickle")
    if not 2 <= pickle_protocol <= pickle.HIGHEST_PROTOCOL:
        raise ValueError(f"ember.save: pickle_protocol must be in 2..{pickle.HIGHEST_PROTOCOL} "
                         f"(persistent ids need a binary protocol), got {pickle_protocol}")
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("ember.save: the legacy (non-zip) format")
    # pickle first: a pickling error never touches the file
    records = _records(obj, pickle_protocol)
    if not isinstance(f, (str, os.PathLike)):
        _write_zip(f, records)
        return
    path = os.fspath(f)
    with _atomic_file.atomic_write(path, _file_mode(path)) as out:
        _write_zip(out, records)


def _file_mode(path):
    """The permissions a plain open(path, 'wb') would give (mkstemp's are 0600)."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


# ====================================================================== loading

class _StorageType:
    """torch.<Type>Storage / torch.UntypedStorage as it appears in a pickle."""

    def __init__(self, name):
        self.name = name
        self.dtype = getattr(D, _DTYPE_OF_STORAGE[name])

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(f"ember.load: constructing torch.{self.name} directly")

    def __repr__(self):
        return f"torch.{self.name}"


class _LoadedStorage:
    """A storage read from the archive: a 1-D array of its dtype, plus the ember
    _Storage that its first tensor owns (later tensors alias it)."""

    def __init__(self, array, location):
        self.array, self.location = array, location
        self.dtype = D.from_numpy_dtype(array.dtype)
        self._owner = None

    def _new_storage(self):
        if self._owner is None:
            self._owner = new_storage(self.array.nbytes)
            return self._owner
        return alias_storage(self._owner)

    def nbytes(self):
        return self.array.nbytes

    def size(self):
        return self.array.size

    def cpu(self):
        return self

    def __len__(self):
        return self.array.size


def _rebuild_tensor(storage, storage_offset, size, stride, dtype=None):
    arr = storage.array
    dt = storage.dtype if dtype is None else dtype
    if dt is not storage.dtype:
        if arr.nbytes % dt.itemsize:
            raise RuntimeError(f"ember.load: storage of {arr.nbytes} bytes does not hold "
                               f"whole {dt} elements")
        arr = arr.view(dt.np)
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride) or any(s < 0 for s in size + stride) or storage_offset < 0:
        raise RuntimeError(f"ember.load: invalid tensor geometry size={size} "
                           f"stride={stride} offset={storage_offset}")
    isz = dt.itemsize
    if 0 in size:
        data = np.empty(size, dt.np)
    else:
        need = storage_offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
        if need > arr.size:
            raise RuntimeError(f"ember.load: tensor of size {list(size)}, stride "
                               f"{list(stride)} and offset {storage_offset} reads past its "
                               f"storage of {arr.size} elements")
        data = np.ndarray(size, dt.np, buffer=arr, offset=storage_offset * isz,
                          strides=tuple(s * isz for s in stride))
    t = object.__new__(Tensor)
    t._data, t._dtype = data, dt
    t._storage = storage._new_storage() if data.size else new_storage(0)
    return t


def _rebuild_tensor_v1(storage, storage_offset, size, stride):
    return _rebuild_tensor(storage, storage_offset, size, stride)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       metadata=None):
    t = _rebuild_tensor(storage, storage_offset, size, stride)
    t.requires_grad = requires_grad
    return t


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    t = _rebuild_tensor(storage, storage_offset, size, stride, dtype)
    t.requires_grad = requires_grad
    return t


def _rebuild_parameter(data, requires_grad, backward_hooks=None):
    from .nn.parameter import Parameter
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _set_obj_state(_rebuild_parameter(data, requires_grad), state)


def _set_obj_state(obj, state):
    """torch._utils._set_obj_state: `state` is a __dict__ or a (__dict__, slots) pair,
    applied with setattr to `obj` (a tensor this load just made)."""
    if isinstance(state, tuple):
        if len(state) != 2:
            raise RuntimeError(f"Invalid serialized state: {state}")
        state, slots = state
    else:
        slots = None
    for part in (state, slots):
        for k, v in (part or {}).items():
            setattr(obj, k, v)
    return obj


def _rebuild_from_type_v2(func, new_type, args, state):
    """torch._tensor._rebuild_from_type_v2: func(*args) is a tensor, cast to new_type,
    then given `state` (a tensor subclass's __dict__)."""
    t = func(*args)
    if type(t) is not new_type:
        if not isinstance(t, Tensor):
            raise AttributeError(f"'{type(t).__name__}' object has no attribute 'as_subclass'")
        t = t.as_subclass(new_type)
    return _set_obj_state(t, state)


def _rebuild_qtensor(storage, storage_offset, size, stride, quantizer_params, requires_grad,
                     backward_hooks):
    from .ao.quantization._qtensor import from_ints
    return from_ints(_rebuild_tensor(storage, storage_offset, size, stride), quantizer_params)


def _rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad):
    from .ops.creation import empty
    return empty(tuple(size), dtype=dtype, device="meta", requires_grad=requires_grad)


def _unsupported(name):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"ember.load: torch._utils.{name} (sparse, quantized, "
                                  "nested or device tensors) is not supported")
    return fn


def _get_layout(name):
    if name != "torch.strided":
        raise NotImplementedError(f"ember.load: layout {name}")
    from . import strided
    return strided


def _dtype_global(name):
    if name in _UNSUPPORTED_DTYPES:
        raise pickle.UnpicklingError(f"ember.load: the file uses dtype torch.{name}, which "
                                     "ember does not have")
    return getattr(D, name)


def _torch_globals():
    """PyTorch's weights_only allowlist (torch/_weights_only_unpickler.py), mapped to ember."""
    from . import nn
    g = {
        "collections.OrderedDict": collections.OrderedDict,
        "collections.Counter": collections.Counter,
        "torch.nn.parameter.Parameter": nn.Parameter,
        "torch.serialization._get_layout": _get_layout,
        "torch.Size": Size,
        "torch.Tensor": Tensor,
        "torch.device": _device,
        "_codecs.encode": codecs.encode,
        "builtins.bytearray": bytearray,
        "builtins.set": set,
        "builtins.complex": complex,
        "torch._utils._rebuild_tensor": _rebuild_tensor_v1,
        "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch._utils._rebuild_meta_tensor_no_storage": _rebuild_meta_tensor_no_storage,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
    }
    g["torch._utils._rebuild_qtensor"] = _rebuild_qtensor
    for q in ("per_tensor_affine", "per_channel_affine", "per_tensor_symmetric",
              "per_channel_symmetric", "per_channel_affine_float_qparams"):
        g[f"torch.{q}"] = getattr(D, q)
    for name in ("_rebuild_sparse_tensor", "_rebuild_nested_tensor",
                 "_rebuild_wrapper_subclass", "_rebuild_device_tensor_from_numpy",
                 "_rebuild_device_tensor_from_cpu_tensor"):
        g[f"torch._utils.{name}"] = _unsupported(name)
    for name in _STORAGE_NAMES.values():
        g[f"torch.{name}"] = _StorageType(name)
    g["torch.storage.UntypedStorage"] = _StorageType("UntypedStorage")
    return g


_GLOBALS = None
_USER_GLOBALS = {}


def _allowed():
    global _GLOBALS
    if _GLOBALS is None:
        _GLOBALS = _torch_globals()
    return _GLOBALS


def add_safe_globals(safe_globals):
    """torch.serialization.add_safe_globals: also allow these for weights_only loads
    (an object, or an (object, "module.name") pair)."""
    for g in safe_globals:
        obj, name = g if isinstance(g, tuple) else (g, f"{g.__module__}.{g.__qualname__}")
        _USER_GLOBALS[name] = obj


def get_safe_globals():
    return list(_USER_GLOBALS.values())


def clear_safe_globals():
    _USER_GLOBALS.clear()


@contextlib.contextmanager
def safe_globals(globals_list):
    saved = dict(_USER_GLOBALS)
    add_safe_globals(globals_list)
    try:
        yield
    finally:
        _USER_GLOBALS.clear()
        _USER_GLOBALS.update(saved)


def _restore_location(map_location, storage, location):
    """Applies map_location to a storage saved on `location` (ember keeps data on the cpu)."""
    if callable(map_location) and not isinstance(map_location, (str, _device)):
        out = map_location(storage, location)
        if out is None:
            return _restore_location(None, storage, location)
        if not isinstance(out, _LoadedStorage):
            raise TypeError("ember.load: a map_location function must return the storage "
                            f"it was given (or None), got {type(out).__name__}")
        return out
    if isinstance(map_location, dict):
        return _restore_location(map_location.get(location, location), storage, location)
    target = location if map_location is None else str(map_location)
    kind = target.split(":")[0]
    if kind != "cpu":
        if map_location is None:
            raise RuntimeError(
                f"Attempting to deserialize object on a {kind.upper()} device but ember has "
                "only the cpu. If you are running on a CPU-only machine, please use "
                "ember.load with map_location=torch.device('cpu') to map your storages to "
                "the CPU.")
        from ._device import check_supported
        check_supported(target)
    return storage


# the loader lives in its own module (zip and legacy readers, weights-only checks)
from ._serialization_load import _record_offset, load  # noqa: E402,F401
