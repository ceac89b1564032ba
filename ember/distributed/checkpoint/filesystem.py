"""FileSystemWriter / FileSystemReader: one safetensors data file per rank plus `.metadata`.

Note: each rank writes its tensor chunks into `__<rank>_<save_id>.safetensors` and, when it
holds non-tensor values, pickles them into `__<rank>_<save_id>.pkl` (temp file, fsync,
rename); the coordinator then writes `.metadata` (JSON, atomically) and only after that
deletes data files of earlier saves. A save that dies midway therefore leaves the previous
`.metadata` and the files it names untouched: that checkpoint stays loadable. The reader
opens each safetensors file once (memory-mapped by the package) and slices out only the
region of a saved chunk that a rank needs, so loading a quarter of a chunk reads a quarter.
"""
import contextlib
import json
import os
import pickle
import re
import tempfile
import uuid

import numpy as np

try:
    import fcntl
except ImportError:         # Windows: no advisory lock
    fcntl = None

from ..._atomic_file import atomic_write, remove_stale_temps
from ...futures import Future
from .metadata import MetadataIndex, metadata_from_json, metadata_to_json
from .planner import LoadItemType, WriteItemType
from .storage import StorageReader, StorageWriter, WriteResult

__all__ = ["FileSystemWriter", "FileSystemReader"]

_DATA_RE = re.compile(r"__\d+_[0-9a-f]+\.(safetensors|pkl)\Z")
METADATA = ".metadata"


def _safetensors():
    """The `safetensors` package, imported on first use (an optional dependency)."""
    try:
        import safetensors
    except ImportError as e:
        raise ImportError("ember.distributed.checkpoint writes its data files with the "
                          "`safetensors` package, which is not installed: "
                          "pip install 'ember[distributed]' (or pip install safetensors)") from e
    return safetensors


def _done(value):
    fut = Future()
    fut.set_result(value)
    return fut


def _key(index):
    """The tensor's name inside the safetensors file: fqn@offsets (one file, many chunks)."""
    return f"{index.fqn}@{','.join(str(o) for o in index.offset)}"


def _write_safetensors(path, arrays):
    """safetensors.serialize_file into a temporary beside `path`, fsync, rename: the naming
    and stale clean-up of ember._atomic_file, without a whole-file copy in memory."""
    st = _safetensors()
    specs = {k: st.TensorSpec(dtype=a.dtype.name, shape=a.shape, data_ptr=a.ctypes.data,
                              data_len=a.nbytes) for k, a in arrays.items()}
    folder = os.path.dirname(os.path.abspath(path))
    remove_stale_temps(path)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.{os.getpid()}.",
                               suffix=".tmp")
    os.close(fd)                # the package writes a new file at `tmp` (a new inode)
    try:
        st.serialize_file(specs, tmp, metadata={"format": "ember.distributed.checkpoint"})
        with open(tmp, "rb") as f:
            if fcntl is not None:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX)  # a live writer's temp is not stale
            os.fsync(f.fileno())
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class _PathCheckpoint:
    """What FileSystemWriter and FileSystemReader share: the checkpoint id is a folder path."""

    def reset(self, checkpoint_id=None):
        if checkpoint_id is not None:
            self.path = os.fspath(checkpoint_id)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id):
        return isinstance(checkpoint_id, (str, os.PathLike))


class FileSystemWriter(_PathCheckpoint, StorageWriter):
    def __init__(self, path, single_file_per_rank=True, sync_files=True, thread_count=1,
                 per_thread_copy_ahead=10_000_000, cache_staged_state_dict=False,
                 overwrite=True, **kwargs):
        _safetensors()
        self.path = os.fspath(path) if path is not None else None
        self.sync_files, self.overwrite = sync_files, overwrite

    def set_up_storage_writer(self, is_coordinator, *args, **kwargs):
        self.is_coordinator = is_coordinator
        if is_coordinator:
            os.makedirs(self.path, exist_ok=True)
            if not self.overwrite and os.path.exists(os.path.join(self.path, METADATA)):
                raise RuntimeError(f"Checkpoint already exists at {self.path} and "
                                   f"overwrite=False")

    def prepare_local_plan(self, plan):
        os.makedirs(self.path, exist_ok=True)
        return plan

    def prepare_global_plan(self, plans):
        save_id = uuid.uuid4().hex[:12]
        for r, p in enumerate(plans):
            p.storage_data = {"prefix": f"__{r}_{save_id}", "save_id": save_id}
        return plans

    def write_data(self, plan, planner):
        prefix = plan.storage_data["prefix"]
        tensor_file, bytes_file = prefix + ".safetensors", prefix + ".pkl"
        arrays, pickles, results, offset = {}, [], [], 0
        for item in plan.items:
            data = planner.resolve_data(item)
            if item.type == WriteItemType.BYTE_IO:
                raw = pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)
                pickles.append(raw)
                results.append(WriteResult(item.index, len(raw), {
                    "relative_path": bytes_file, "offset": offset, "length": len(raw)}))
                offset += len(raw)
                continue
            a = np.require(data.numpy(), requirements="C")     # keeps 0-d
            info = {"relative_path": tensor_file, "key": _key(item.index)}
            if a.dtype.kind == "c":          # safetensors has no complex128: a real view
                a = a[..., None].view(a.real.dtype)     # shape + (2,)
                info["complex"] = True
            if a.dtype.byteorder == ">":
                a = a.astype(a.dtype.newbyteorder("<"))
            arrays[info["key"]] = a
            results.append(WriteResult(item.index, a.nbytes, info))
        if arrays:
            _write_safetensors(os.path.join(self.path, tensor_file), arrays)
        if pickles:
            with atomic_write(os.path.join(self.path, bytes_file), 0o644) as f:
                for raw in pickles:
                    f.write(raw)
        return _done(results)

    def finish(self, metadata, results):
        storage = {}
        for per_rank in results:
            for r in per_rank:
                storage[r.index] = r.storage_data
        metadata.storage_data = storage
        text = json.dumps(metadata_to_json(metadata), indent=1)
        with atomic_write(os.path.join(self.path, METADATA), 0o644) as f:
            f.write(text.encode())
        keep = {s["relative_path"] for s in storage.values()}
        for name in os.listdir(self.path):      # data files of earlier saves, now unreferenced
            if _DATA_RE.match(name) and name not in keep:
                try:
                    os.remove(os.path.join(self.path, name))
                except FileNotFoundError:
                    pass

    def storage_meta(self):
        return None


class FileSystemReader(_PathCheckpoint, StorageReader):
    def __init__(self, path):
        _safetensors()
        self.path = os.fspath(path) if path is not None else None

    def read_metadata(self):
        with open(os.path.join(self.path, METADATA)) as f:
            return metadata_from_json(json.load(f))

    def set_up_storage_reader(self, metadata, is_coordinator, *args, **kwargs):
        self.metadata = metadata

    def prepare_local_plan(self, plan):
        return plan

    def prepare_global_plan(self, plans):
        return plans

    def read_data(self, plan, planner):
        import ember
        storage, sdm = self.metadata.storage_data, self.metadata.state_dict_metadata
        st = _safetensors()
        with contextlib.ExitStack() as stack:
            files = {}
            for item in plan.items:
                key = MetadataIndex(item.storage_index.fqn, item.storage_index.offset)
                info = storage[key]
                path = os.path.join(self.path, info["relative_path"])
                if item.type == LoadItemType.BYTE_IO:
                    with open(path, "rb") as f:
                        f.seek(info["offset"])
                        planner.load_bytes(item, pickle.loads(f.read(info["length"])))
                    continue
                if "key" not in info:
                    raise RuntimeError(f"checkpoint {self.path}: {item.storage_index.fqn!r} is "
                                       f"in the old raw-bytes layout; ember reads only "
                                       f"safetensors data files now (save it again)")
                if path not in files:
                    files[path] = stack.enter_context(st.safe_open(path, framework="numpy"))
                region = self._region(files[path], info, item)
                npd = sdm[item.storage_index.fqn].properties.dtype.np
                if info.get("complex"):
                    shape = region.shape[:-1]
                    region = np.require(region, requirements="C").view(npd).reshape(shape)
                elif region.dtype != npd:        # bfloat16 without ml_dtypes' registration
                    region = region.view(npd)
                target = planner.resolve_tensor(item)
                with ember.no_grad():
                    target.copy_(ember.from_numpy(np.require(region, requirements="CW")))
                planner.commit_tensor(item, target)
        return _done(None)

    @staticmethod
    def _region(f, info, item):
        """Only the overlap of a saved chunk: get_slice reads those bytes, not the chunk."""
        sl = f.get_slice(info["key"])
        index = tuple(slice(o, o + n) for o, n in zip(item.storage_offsets, item.lengths))
        if info.get("complex"):
            index += (slice(None),)
        return sl[index] if index else sl[...]
