"""ember.distributed.checkpoint (DCP): sharded, resharding checkpoints of state_dicts.

Note: `save` has every rank write its own items in parallel (a plain tensor — replicated —
is written by one rank only; a DTensor by each rank for its shard), then the coordinator
writes the metadata file last, atomically. `load` fills the given state_dict in place and
works with any world size: for each local target chunk it reads only the overlapping
regions of the saved chunks.

Data files are raw bytes, not safetensors: one `__<rank>_<save_id>.distcp` per rank,
items back to back in C order, located by (offset, length) in the metadata. Why: a rank's
shards of many tensors go in one file with one write and no per-file header, the reader
can memory-map exactly one saved chunk and slice the overlap it needs, and nothing beyond
NumPy is required. Non-tensor values (step counts, hyper-parameters) are pickled items.

The metadata file `<dir>/.metadata` is JSON::

    {"version": "1.0.0",
     "save_id": "<12 hex>",                 # the save that wrote it
     "state_dict_metadata": {               # one entry per flattened key
        "model.fc.weight": {"type": "tensor", "dtype": "float32", "requires_grad": false,
                            "size": [8, 4],                     # global shape
                            "chunks": [{"offsets": [0, 0], "sizes": [4, 4]},
                                       {"offsets": [4, 0], "sizes": [4, 4]}]},
        "optim.param_groups.0.lr": {"type": "bytes"}},
     "storage_data": [                      # where each saved item lies
        {"fqn": "model.fc.weight", "chunk_offset": [0, 0],    # null for a bytes item
         "relative_path": "__0_<save_id>.distcp", "offset": 0, "length": 64}],
     "planner_data": {"model.fc.weight": ["model", "fc.weight"]}}   # key -> nested path
"""
from . import state_dict  # noqa: F401
from .default_planner import DefaultLoadPlanner, DefaultSavePlanner
from .filesystem import FileSystemReader, FileSystemWriter
from .metadata import (BytesStorageMetadata, ChunkStorageMetadata, Metadata, MetadataIndex,
                       TensorProperties, TensorStorageMetadata)
from .planner import (LoadItemType, LoadPlan, LoadPlanner, ReadItem, SavePlan, SavePlanner,
                      WriteItem, WriteItemType)
from .state_dict_loader import load, load_state_dict
from .state_dict_saver import async_save, save, save_state_dict
from .storage import StorageReader, StorageWriter, WriteResult
from .utils import CheckpointException

__all__ = ["BytesStorageMetadata", "CheckpointException", "ChunkStorageMetadata",
           "DefaultLoadPlanner", "DefaultSavePlanner", "FileSystemReader", "FileSystemWriter",
           "LoadItemType", "LoadPlan", "LoadPlanner", "Metadata", "MetadataIndex", "ReadItem",
           "SavePlan", "SavePlanner", "StorageReader", "StorageWriter", "TensorProperties",
           "TensorStorageMetadata", "WriteItem", "WriteItemType", "WriteResult", "async_save",
           "load", "load_state_dict", "save", "save_state_dict"]
