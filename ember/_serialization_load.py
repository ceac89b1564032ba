"""ember.load: reads PyTorch's zip checkpoints and its legacy (pre-1.6) raw-pickle format.

Note: a damaged file raises what torch.load raises for it (RuntimeError for a broken zip
archive or record, EOFError for a pickle that ends early, pickle.UnpicklingError for a
refused or malformed pickle under weights_only, FileNotFoundError / IsADirectoryError from
open), never a bare zipfile.BadZipFile, KeyError, struct.error or NumPy ValueError, and the
message names the file. weights_only=True reads pickles with ember's own opcode-level
interpreter (_weights_only_unpickler), as PyTorch does.
"""
import contextlib
import io
import os
import pickle
import struct
import zipfile

import numpy as np

from . import _dtype as D
from . import serialization as S
from ._device import device as _device
from ._tensor import Size, Tensor
from ._weights_only_unpickler import MemoMiss, StackUnderflow
from ._weights_only_unpickler import Unpickler as _WeightsUnpickler
from ._weights_only_unpickler import unsupported_global_message

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C      # legacy format: first pickle in the file
PROTOCOL_VERSION = 1001

_UNSAFE = ("In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
           "`torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` "
           "set to `False` will likely succeed, but it can result in arbitrary code "
           "execution. Do it only if you got the file from a trusted source.")
_DOCS = ("\n\nCheck the documentation of torch.load to learn more about types accepted by "
         "default with weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")
_NJT = ("torch.nested._internal.nested_tensor.NestedTensor",
        "torch.nested._internal.nested_tensor._rebuild_njt", "torch._dynamo.decorators._DimRange")
_DTENSOR = ("torch.distributed.device_mesh.DeviceMesh",
            "torch.distributed.tensor._dtensor_spec.DTensorSpec",
            "torch.distributed.tensor._dtensor_spec.TensorMeta", "torch.distributed.tensor.DTensor",
            "torch.distributed.tensor.placement_types.Partial",
            "torch.distributed.tensor.placement_types.Replicate",
            "torch.distributed.tensor.placement_types.Shard")


def _weights_only_message(message):
    """torch.load's _get_wo_message: the text around a WeightsUnpickler error."""
    if "was not an allowed global by default." in message:
        return ("Weights only load failed. This file can still be loaded, to do so you have two "
                "options, \033[1mdo those steps only if you trust the source of the checkpoint"
                f"\033[0m. \n\t(1) {_UNSAFE}\n\t(2) Alternatively, to load with `weights_only="
                "True` please check the recommended steps in the following error message.\n\t"
                "WeightsUnpickler error: " + message + _DOCS)
    if " must be imported to load" in message:
        return f"Weights only load failed. {message}\n {_UNSAFE}\n"
    out = f"Weights only load failed. {_UNSAFE}\n"
    if "is blocked" not in message:
        out += ("Please file an issue with the following so that we can make `weights_only=True`"
                " compatible with your use case: WeightsUnpickler error: ")
    return out + "\n\n" + message + _DOCS


# ------------------------------------------------------------------ unpicklers

def _resolve_weights_only(module, name):
    """A global under weights_only: PyTorch's allowlist (mapped to ember) or the user's."""
    full = f"{module}.{name}"
    allowed = S._allowed()
    if full in allowed:
        return allowed[full]
    if module == "torch" and (name in S._UNSUPPORTED_DTYPES or
                              isinstance(getattr(D, name, None), D.dtype)):
        return S._dtype_global(name)
    if full in S._USER_GLOBALS:
        return S._USER_GLOBALS[full]
    if full in _NJT:
        raise pickle.UnpicklingError("``torch.nested`` and ``torch._dynamo`` must be imported "
                                     "to load nested jagged tensors (NJTs)")
    if full in _DTENSOR:
        raise pickle.UnpicklingError("``torch.distributed.tensor`` must be imported to load "
                                     "DTensors")
    raise pickle.UnpicklingError(unsupported_global_message(full))


def _allowed_ids():
    ids = {id(v) for v in S._allowed().values()}
    ids.update(id(v) for v in S._USER_GLOBALS.values())
    ids.update(id(v) for v in vars(D).values() if isinstance(v, D.dtype))
    return ids


def _no_build(torch_name, readonly):
    """BUILD on ember's stand-in for one of torch's C types: those have no __dict__ and
    read-only attributes, so torch's unpickler fails with these AttributeErrors."""
    def refuse(inst, state):
        slots = None
        if isinstance(state, tuple) and len(state) == 2:
            state, slots = state
        if state:
            raise AttributeError(f"'{torch_name}' object has no attribute '__dict__'")
        for k in slots or {}:
            raise AttributeError(readonly.format(name=k))
    return refuse


def _build_tensor(inst, state):
    raise NotImplementedError("ember.load: BUILD on a torch.Tensor (Tensor.set_ from a "
                              "pickled state) is not supported")


def _build_parameter(inst, state):
    """Tensor.__setstate__ for a Parameter: (requires_grad, _, backward_hooks)."""
    if isinstance(state, tuple) and len(state) in (4, 5):
        raise NotImplementedError("ember.load: legacy Tensor/Variable state in BUILD")
    requires_grad, _, _hooks = state
    inst.requires_grad = bool(requires_grad)


def _build_hooks():
    from .nn.parameter import Parameter
    return {Size: _no_build("torch.Size", "'torch.Size' object attribute '{name}' is read-only"),
            _device: _no_build("torch.device",
                               "attribute '{name}' of 'torch.device' objects is not writable"),
            Tensor: _build_tensor,
            Parameter: _build_parameter}


def _ember_name(module, name):
    """torch.a.b.Name -> ember.a.b.Name (weights_only=False loads of arbitrary objects)."""
    import importlib
    target = "ember" + module[len("torch"):]
    obj = None
    with contextlib.suppress(ImportError):
        obj = importlib.import_module(target)
        for part in name.split("."):
            obj = getattr(obj, part, None)
    if obj is None and module.startswith("torch.nn.modules"):
        from . import nn
        obj = getattr(nn, name, None)
    if obj is None:
        raise AttributeError(f"ember.load: the file needs {module}.{name}, which ember "
                             "does not provide")
    return obj


class _FullUnpickler(pickle.Unpickler):
    """weights_only=False: any global, with torch names resolved to ember."""

    def __init__(self, file, persistent_load):
        super().__init__(file, encoding="utf-8")
        self._pl = persistent_load

    def find_class(self, module, name):
        import _compat_pickle
        if (module, name) in _compat_pickle.NAME_MAPPING:      # protocol 2: Python 2 names
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        full = f"{module}.{name}"
        allowed = S._allowed()
        if full in allowed:
            return allowed[full]
        if full in S._USER_GLOBALS:
            return S._USER_GLOBALS[full]
        if module == "torch" and (name in S._UNSUPPORTED_DTYPES or
                                  isinstance(getattr(D, name, None), D.dtype)):
            return S._dtype_global(name)
        if module == "torch" and name in S._DTYPE_OF_STORAGE:     # as torch's UnpicklerWrapper
            return S._StorageType(name)
        if module == "torch" or module.startswith("torch."):
            return _ember_name(module, name)
        return super().find_class(module, name)

    def persistent_load(self, pid):
        return self._pl(pid)


def _unpickle(file, weights_only, persistent_load):
    if weights_only:
        return _WeightsUnpickler(file, _resolve_weights_only, _allowed_ids, persistent_load,
                                 _build_hooks()).load()
    return _FullUnpickler(file, persistent_load).load()


def _storage_type(stype):
    if not isinstance(stype, S._StorageType):
        raise RuntimeError(f"ember.load: a storage's type must be a torch.*Storage, got "
                           f"{stype!r}")
    return stype.dtype


def _numel(numel, key, itemsize=1, mmap=False):
    """A storage's element count from the file: a non-negative int whose byte size fits in
    uint64 (else TypeError, as torch's get_storage_from_record raises; with mmap torch
    slices its mapped storage instead and raises RuntimeError)."""
    if type(numel) is not int or numel < 0 or (not mmap and numel * itemsize >= 2 ** 64):
        kind = RuntimeError if mmap else TypeError
        raise kind(f"ember.load: storage {key!r} has an invalid size {numel!r} (a "
                   "non-negative element count whose byte size fits in uint64)")
    return numel


# --------------------------------------------------------------------- zip format

@contextlib.contextmanager
def _zip_errors(what):
    try:
        yield
    except (zipfile.BadZipFile, zipfile.LargeZipFile, struct.error, EOFError, KeyError,
            ValueError, NotImplementedError, OverflowError) as e:
        raise RuntimeError(f"PytorchStreamReader failed {what}: {e}") from None


def _archive(zf, weights_only):
    """(prefix, {name: ZipInfo}) of a torch.save archive, checked as torch's
    PyTorchStreamReader checks it: every record under one folder, a readable `version` in
    1..10, a data.pkl; the first of two records with one name wins, as in torch."""
    infos = zf.infolist()
    if not infos:
        raise RuntimeError("PytorchStreamReader failed reading zip archive: archive is empty")
    first = infos[0].filename
    if "/" not in first:
        raise RuntimeError(f"file in archive is not in a subdirectory: {first}")
    prefix = first.split("/")[0] + "/"
    records = {}
    for info in infos:
        records.setdefault(info.filename, info)
    if prefix + "constants.pkl" in records:
        if weights_only:
            raise RuntimeError("Cannot use ``weights_only=True`` with TorchScript archives "
                               "passed to ``torch.load``. " + _UNSAFE)
        raise RuntimeError("ember.load: this is a TorchScript archive (torch.jit.save); "
                           "ember.load reads torch.save checkpoints")
    version = records.get(prefix + ".data/version") or records.get(prefix + "version")
    if version is None:
        raise RuntimeError('Expected hasRecord("version") to be true, but got false.')
    with _zip_errors("reading file version"):
        text = zf.read(version).decode("latin-1")
    try:
        number = int(text.strip().split()[0] if text.strip() else "")
    except ValueError:
        raise RuntimeError(f"Couldn't parse the version {text} as Long Long.") from None
    if number < 1:
        raise RuntimeError(f"Attempted to read a PyTorch file with version {number}, but the "
                           "minimum supported version for reading is 1. Your PyTorch script "
                           "module file is too old.")
    if number > 10:
        raise RuntimeError(f"Attempted to read a PyTorch file with version {number}, but the "
                           "maximum supported version for reading is 10. The version of your "
                           "PyTorch installation may be too old.")
    if prefix + "data.pkl" not in records:
        raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not found")
    return prefix, records


def _record_offset(f, info):
    """Where a stored record's bytes start in the file (after its local header)."""
    f.seek(info.header_offset)
    hdr = f.read(30)
    if hdr[:4] != b"PK\x03\x04":
        raise RuntimeError(f"ember.load: bad zip local header for {info.filename}")
    nlen, elen = struct.unpack("<HH", hdr[26:30])
    return info.header_offset + 30 + nlen + elen


def _load_zip(fobj, path, map_location, weights_only, mmap):
    with _zip_errors("reading zip archive"):
        zf = zipfile.ZipFile(fobj)
    with zf:
        prefix, records = _archive(zf, weights_only)
        with _zip_errors("reading file byteorder"):
            swap = prefix + "byteorder" in records and \
                zf.read(records[prefix + "byteorder"]) == b"big"
        storages = {}

        def read_storage(key, dtype, numel, location):
            name = f"{prefix}data/{key}"
            info = records.get(name)
            if info is None:
                raise RuntimeError(f"PytorchStreamReader failed locating file data/{key}: "
                                   "file not found")
            nbytes = numel * dtype.itemsize
            if mmap and not swap and info.compress_type == 0 and nbytes:
                # torch maps the storage without checking its size against the record (a
                # tensor may then read the next record's bytes); ember maps at most the
                # record, so only a tensor that really reaches past it raises
                off = _record_offset(fobj, info)
                avail = min(nbytes, info.file_size, max(os.path.getsize(path) - off, 0))
                avail -= avail % dtype.itemsize
                if not avail:
                    return S._restore_location(map_location, S._LoadedStorage(
                        np.empty(0, dtype.np), location), location)
                raw = np.memmap(path, np.uint8, mode="c", offset=off, shape=(avail,))
                arr = raw.view(np.ndarray).view(dtype.np)
                return S._restore_location(map_location, S._LoadedStorage(arr, location),
                                           location)
            if info.file_size < nbytes:
                raise RuntimeError(f"ember.load: record {name} holds {info.file_size} bytes, "
                                   f"{nbytes} expected ({numel} {dtype} elements)")
            # raw bytes at the record's offset, as torch reads them (no CRC check)
            arr = np.empty(numel, dtype.np)
            if info.compress_type == 0:
                fobj.seek(_record_offset(fobj, info))
                _readinto(fobj, arr, f"record {name}")
            else:
                with _zip_errors(f"reading file data/{key}"), zf.open(info) as r:
                    _readinto(r, arr, f"record {name}")
            if swap and dtype.itemsize > 1:
                arr = arr.byteswap()
            return S._restore_location(map_location, S._LoadedStorage(arr, location), location)

        def persistent_load(pid):
            if not isinstance(pid, tuple) or len(pid) != 5:
                raise RuntimeError(f"ember.load: unknown persistent id {pid!r}")
            tag, stype, key, location, numel = pid
            tag = tag.decode("ascii") if isinstance(tag, bytes) else tag
            if tag != "storage":
                raise RuntimeError(f"Unknown typename for persistent_load, expected 'storage' "
                                   f"but got '{tag}'")
            dtype = _storage_type(stype)
            key = key.decode("ascii") if isinstance(key, bytes) else str(key)
            location = location.decode("ascii") if isinstance(location, bytes) else location
            s = storages.get(key)
            if s is None:
                numel = _numel(numel, key, dtype.itemsize, mmap)
                s = storages[key] = read_storage(key, dtype, numel, str(location))
            return s

        with _zip_errors("reading file data.pkl"):
            data = zf.read(records[prefix + "data.pkl"])
        return _unpickle(io.BytesIO(data), weights_only, persistent_load)


# ------------------------------------------------------------------ legacy format

def _readinto(f, arr, what):
    """Fills arr's bytes from f; a short read is torch's "unexpected EOF" RuntimeError."""
    view = memoryview(arr.view(np.uint8).reshape(-1))
    got, nbytes = 0, arr.nbytes
    while got < nbytes:
        if hasattr(f, "readinto"):
            n = f.readinto(view[got:])
        else:
            chunk = f.read(nbytes - got)
            n = len(chunk)
            view[got:got + n] = chunk
        if not n:
            raise RuntimeError(f"unexpected EOF, expected {nbytes - got} more bytes. The file "
                               f"might be corrupted ({what}).")
        got += n


def _read_exact(f, n):
    data = f.read(n)
    if len(data) != n:
        raise RuntimeError(f"unexpected EOF, expected {n - len(data)} more bytes. The file "
                           "might be corrupted.")
    return data


def _load_legacy(fobj, map_location, weights_only):
    """torch.save(..., _use_new_zipfile_serialization=False): four pickles (magic number,
    protocol version, system info, the object) then the list of storage keys, then each
    storage as an int64 element count and its raw bytes."""
    import tarfile
    start = fobj.tell()
    try:
        if start == 0 and fobj.fileno() >= 0:      # a real file at its start, as torch checks
            with tarfile.open(fileobj=fobj, mode="r:"):
                pass
            if weights_only:
                raise RuntimeError("Cannot use ``weights_only=True`` with files saved in the "
                                   "legacy .tar format. " + _UNSAFE)
            raise NotImplementedError("ember.load: the legacy .tar checkpoint format "
                                      "(PyTorch <= 0.1.10)")
    except (tarfile.TarError, OSError, AttributeError, EOFError):
        fobj.seek(start)
    objs = {}
    here = fobj.tell()
    file_size = fobj.seek(0, os.SEEK_END)
    fobj.seek(here)

    def no_pid(pid):
        raise pickle.UnpicklingError("unsupported persistent id encountered")

    def persistent_load(saved_id):
        if not isinstance(saved_id, tuple) or not saved_id:
            raise RuntimeError(f"ember.load: unknown persistent id {saved_id!r}")
        tag = saved_id[0].decode("ascii") if isinstance(saved_id[0], bytes) else saved_id[0]
        data = saved_id[1:]
        if tag == "module" and not weights_only:
            return data[0]
        if tag != "storage" or len(data) != 5:
            raise RuntimeError(f"Unknown saved id type: {saved_id[0]}")
        stype, root_key, location, numel, view = data
        dtype = _storage_type(stype)
        location = location.decode("ascii") if isinstance(location, bytes) else str(location)
        if root_key not in objs:
            nbytes = _numel(numel, root_key, dtype.itemsize) * dtype.itemsize
            if nbytes > file_size:              # never allocate more than the file can fill
                raise RuntimeError(f"unexpected EOF: storage {root_key!r} of {nbytes} bytes "
                                   f"does not fit in a file of {file_size} bytes. The file "
                                   "might be corrupted.")
            arr = np.empty(numel, dtype.np)
            objs[root_key] = S._restore_location(map_location, S._LoadedStorage(arr, location),
                                                 location)
        root = objs[root_key]
        if view is None:
            return root
        view_key, offset, size = view
        if view_key not in objs:
            if _numel(offset, view_key) + _numel(size, view_key) > root.array.size:
                raise RuntimeError(f"ember.load: storage view {view_key!r} runs past its "
                                   "storage")
            objs[view_key] = S._LoadedStorage(root.array[offset:offset + size], location)
        return objs[view_key]

    magic = _unpickle(fobj, weights_only, no_pid)
    if magic != MAGIC_NUMBER:
        raise RuntimeError("Invalid magic number; corrupt file?")
    version = _unpickle(fobj, weights_only, no_pid)
    if version != PROTOCOL_VERSION:
        raise RuntimeError(f"Invalid protocol version: {version}")
    _unpickle(fobj, weights_only, no_pid)                     # system info
    result = _unpickle(fobj, weights_only, persistent_load)
    keys = _unpickle(fobj, weights_only, no_pid)
    if not isinstance(keys, list):
        raise RuntimeError(f"ember.load: the storage key list is a {type(keys).__name__}")
    for key in keys:
        if key not in objs:
            raise RuntimeError(f"ember.load: storage key {key!r} is not used by the object")
        arr = objs[key].array
        (numel,) = struct.unpack("<q", _read_exact(fobj, 8))
        if numel * arr.itemsize != arr.nbytes:
            raise RuntimeError(f"storage has wrong byte size: expected {arr.nbytes} got "
                               f"{numel * arr.itemsize}")
        _readinto(fobj, arr, f"storage {key!r}")
    return result


# --------------------------------------------------------------------------- load

def _check_seekable(f):
    """torch's _check_seekable: a stream ember cannot seek is refused, not read ahead."""
    try:
        f.seek(f.tell())
    except (io.UnsupportedOperation, AttributeError) as e:
        if "seek" in str(e) or "tell" in str(e):
            raise type(e)(f"{e}. You can only torch.load from a file that is seekable. Please "
                          "pre-load the data into a buffer like io.BytesIO and try to load "
                          "from it instead.") from None
        raise


def _label(f):
    if isinstance(f, (str, os.PathLike)):
        return repr(os.fspath(f))
    name = getattr(f, "name", None)
    return repr(name) if isinstance(name, str) else f"<{type(f).__name__}>"


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """torch.load for PyTorch's zip format and its legacy raw-pickle format.
    weights_only=True (the default) unpickles only tensors, storages, containers, primitive
    types and torch dtypes (PyTorch's allowlist) and raises pickle.UnpicklingError, running
    nothing and changing no object it did not create, for anything else. A damaged file
    raises what torch.load raises for it, with the file named in the message."""
    if weights_only is None:            # torch: unset means True unless a pickle_module is given
        weights_only = pickle_module is None
    mmap = bool(mmap)
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified")
    if pickle_module is not None and pickle_module is not pickle:
        raise NotImplementedError("ember.load: pickle_module other than pickle")
    is_path = isinstance(f, (str, os.PathLike))
    with contextlib.ExitStack() as stack:
        fobj = stack.enter_context(open(f, "rb")) if is_path else f
        if not is_path:
            _check_seekable(fobj)
        try:
            start = fobj.tell()
            head = fobj.read(4)
            fobj.seek(start)
            if head == b"PK\x03\x04":
                path = os.fspath(f) if is_path else None
                if mmap and path is None:
                    path = getattr(f, "name", None)     # ember also maps a named open file
                    if not isinstance(path, str) or not os.path.isfile(path):
                        raise ValueError("f must be a file path in order to use the mmap "
                                         "argument")
                return _load_zip(fobj, path, map_location, weights_only, mmap)
            if mmap:
                name = f"{os.fspath(f)}, " if isinstance(f, str) else ""
                raise RuntimeError(
                    "mmap can only be used with files saved with "
                    f"`torch.save({name}_use_new_zipfile_serialization=True), please torch.save "
                    "your checkpoint with this option in order to use mmap.")
            return _load_legacy(fobj, map_location, weights_only)
        except pickle.UnpicklingError as e:
            msg = _weights_only_message(str(e)) if weights_only else str(e)
            kind = type(e) if isinstance(e, (StackUnderflow, MemoMiss)) else \
                pickle.UnpicklingError
            raise kind(f"{msg}\n(ember.load: {_label(f)})") from None
        except (RuntimeError, EOFError, ValueError) as e:
            if type(e) not in (RuntimeError, EOFError, ValueError):
                raise
            raise type(e)(f"{e or 'Ran out of input'} (ember.load: {_label(f)})") from None
