"""FileSystemWriter / FileSystemReader: one raw-bytes data file per rank plus `.metadata`.

Note: each rank writes its items as raw C-order bytes into `__<rank>_<save_id>.distcp`
(temp file, fsync, rename); the coordinator then writes `.metadata` (JSON, atomically) and
only after that deletes data files of earlier saves. A save that dies midway therefore
leaves the previous `.metadata` and the files it names untouched: that checkpoint stays
loadable. The reader memory-maps each saved chunk and copies only the regions a rank needs.
"""
import json
import os
import pickle
import re
import uuid

import numpy as np

from ..._atomic_file import atomic_write
from ...futures import Future
from .metadata import MetadataIndex, metadata_from_json, metadata_to_json
from .planner import LoadItemType, WriteItemType
from .storage import StorageReader, StorageWriter, WriteResult

__all__ = ["FileSystemWriter", "FileSystemReader"]

_DATA_RE = re.compile(r"__\d+_[0-9a-f]+\.distcp\Z")
METADATA = ".metadata"


def _done(value):
    fut = Future()
    fut.set_result(value)
    return fut


class FileSystemWriter(StorageWriter):
    def __init__(self, path, single_file_per_rank=True, sync_files=True, thread_count=1,
                 per_thread_copy_ahead=10_000_000, cache_staged_state_dict=False,
                 overwrite=True, **kwargs):
        self.path = os.fspath(path) if path is not None else None
        self.sync_files, self.overwrite = sync_files, overwrite

    def reset(self, checkpoint_id=None):
        if checkpoint_id is not None:
            self.path = os.fspath(checkpoint_id)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id):
        return isinstance(checkpoint_id, (str, os.PathLike))

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
            p.storage_data = {"relative_path": f"__{r}_{save_id}.distcp", "save_id": save_id}
        return plans

    def write_data(self, plan, planner):
        name = plan.storage_data["relative_path"]
        results, offset = [], 0
        with atomic_write(os.path.join(self.path, name), 0o644) as f:     # fsyncs, renames
            for item in plan.items:
                data = planner.resolve_data(item)
                if item.type == WriteItemType.BYTE_IO:
                    raw = pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)
                else:
                    raw = np.ascontiguousarray(data.numpy()).tobytes()
                f.write(raw)
                results.append(WriteResult(item.index, len(raw), {
                    "relative_path": name, "offset": offset, "length": len(raw)}))
                offset += len(raw)
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


class FileSystemReader(StorageReader):
    def __init__(self, path):
        self.path = os.fspath(path) if path is not None else None

    def reset(self, checkpoint_id=None):
        if checkpoint_id is not None:
            self.path = os.fspath(checkpoint_id)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id):
        return isinstance(checkpoint_id, (str, os.PathLike))

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
        for item in plan.items:
            key = MetadataIndex(item.storage_index.fqn, item.storage_index.offset)
            info = storage[key]
            path = os.path.join(self.path, info["relative_path"])
            if item.type == LoadItemType.BYTE_IO:
                with open(path, "rb") as f:
                    f.seek(info["offset"])
                    planner.load_bytes(item, pickle.loads(f.read(info["length"])))
                continue
            md = sdm[item.storage_index.fqn]
            chunk = next(c for c in md.chunks if tuple(c.offsets) == tuple(key.offset))
            npd = md.properties.dtype.np
            if info["length"] == 0:
                continue
            saved = np.memmap(path, dtype=npd, mode="r", offset=info["offset"],
                              shape=tuple(chunk.sizes) or (1,))
            if not chunk.sizes:
                saved = saved.reshape(())
            region = saved[tuple(slice(o, o + n) for o, n in
                                 zip(item.storage_offsets, item.lengths))]
            target = planner.resolve_tensor(item)
            with ember.no_grad():
                target.copy_(ember.from_numpy(np.array(region)))
            planner.commit_tensor(item, target)
            del saved
        return _done(None)
