"""Checkpoint metadata types (torch.distributed.checkpoint.metadata) and their JSON form.

Note: the `.metadata` file is JSON (see the package docstring for the layout), not a pickle,
so a checkpoint can be inspected with any JSON tool and loading it runs no code.
"""
from dataclasses import dataclass, field

__all__ = ["ChunkStorageMetadata", "TensorProperties", "TensorStorageMetadata",
           "BytesStorageMetadata", "MetadataIndex", "Metadata", "StorageMeta"]


@dataclass
class ChunkStorageMetadata:
    offsets: tuple
    sizes: tuple


@dataclass
class TensorProperties:
    dtype: object = None
    requires_grad: bool = False


@dataclass
class TensorStorageMetadata:
    properties: TensorProperties
    size: tuple
    chunks: list


@dataclass
class BytesStorageMetadata:
    pass


@dataclass(frozen=True)
class MetadataIndex:
    """Names one stored item: a tensor chunk by (fqn, offset) or a non-tensor by fqn."""
    fqn: str
    offset: tuple = None
    index: int = field(default=None, hash=False, compare=False)


@dataclass
class StorageMeta:
    checkpoint_id: object = None
    save_id: str = None
    load_id: str = None


@dataclass
class Metadata:
    state_dict_metadata: dict
    planner_data: object = None
    storage_data: object = None
    storage_meta: StorageMeta = None
    version: str = "1.0.0"


def _dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def _dtype_from(name):
    from ..._dtype import _by_name
    return _by_name(name)


def metadata_to_json(md):
    """The JSON-able dict of a Metadata (storage_data: fqn|offset -> file location)."""
    items = {}
    for fqn, m in md.state_dict_metadata.items():
        if isinstance(m, TensorStorageMetadata):
            items[fqn] = {"type": "tensor", "dtype": _dtype_name(m.properties.dtype),
                          "requires_grad": bool(m.properties.requires_grad),
                          "size": list(m.size),
                          "chunks": [{"offsets": list(c.offsets), "sizes": list(c.sizes)}
                                     for c in m.chunks]}
        else:
            items[fqn] = {"type": "bytes"}
    storage = [{"fqn": k.fqn, "chunk_offset": None if k.offset is None else list(k.offset), **v}
               for k, v in (md.storage_data or {}).items()]
    return {"version": md.version, "state_dict_metadata": items, "storage_data": storage,
            "planner_data": md.planner_data,
            "save_id": md.storage_meta.save_id if md.storage_meta else None}


def metadata_from_json(obj):
    sdm = {}
    for fqn, m in obj["state_dict_metadata"].items():
        if m["type"] == "tensor":
            sdm[fqn] = TensorStorageMetadata(
                TensorProperties(_dtype_from(m["dtype"]), m.get("requires_grad", False)),
                tuple(m["size"]),
                [ChunkStorageMetadata(tuple(c["offsets"]), tuple(c["sizes"]))
                 for c in m["chunks"]])
        else:
            sdm[fqn] = BytesStorageMetadata()
    storage = {}
    for s in obj["storage_data"]:
        off = None if s["chunk_offset"] is None else tuple(s["chunk_offset"])
        storage[MetadataIndex(s["fqn"], off)] = {k: v for k, v in s.items()
                                                 if k not in ("fqn", "chunk_offset")}
    planner_data = obj.get("planner_data")
    return Metadata(sdm, planner_data=planner_data, storage_data=storage,
                    storage_meta=StorageMeta(save_id=obj.get("save_id")),
                    version=obj.get("version", "1.0.0"))
