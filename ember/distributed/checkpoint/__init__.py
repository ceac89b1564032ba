"""ember.distributed.checkpoint (DCP): sharded, resharding checkpoints of state_dicts.

Note: `save` has every rank write its own items in parallel (a plain tensor — replicated —
is written by one rank only; a DTensor by each rank for its shard), then the coordinator
writes the metadata file last, atomically. `load` fills the given state_dict in place and
works with any world size: for each local target chunk it reads only the overlapping
regions of the saved chunks.

Data files are safetensors (DESIGN §8): one `__<rank>_<save_id>.safetensors` per rank
holding all of that rank's chunks, each named `<fqn>@<offsets>` ("model.fc.weight@4,0").
Why: a standard, code-free tensor format any safetensors tool can open, and `safe_open`'s
`get_slice` memory-maps the file, so a resharding load reads only the overlapping region of
a saved chunk: a quarter of the rows of a 256 MiB chunk reads ~85 MiB from disk and raises
peak RSS by 129 MiB (the mapped pages + the copy), not 256+. A quarter of the *columns*
touches every page of a C-order chunk, so that reshard still reads the whole chunk. bool
and bfloat16 are stored natively; complex (safetensors has no complex128) as a real view
with a trailing dimension of 2, flagged `"complex": true` in the metadata. Non-tensor values
(step counts, hyper-parameters) are pickled into a side file `__<rank>_<save_id>.pkl`,
located by (offset, length). The `safetensors` package is imported on first use; without
it FileSystemWriter/Reader raise ImportError naming `pip install 'ember[distributed]'`.

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
        {"fqn": "model.fc.weight", "chunk_offset": [0, 0],
         "relative_path": "__0_<save_id>.safetensors", "key": "model.fc.weight@0,0"},
        {"fqn": "optim.param_groups.0.lr", "chunk_offset": null,
         "relative_path": "__0_<save_id>.pkl", "offset": 0, "length": 21}],
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
from .stateful import Stateful
from .storage import StorageReader, StorageWriter, WriteResult
from .utils import CheckpointException

__all__ = ["BytesStorageMetadata", "CheckpointException", "ChunkStorageMetadata",
           "DefaultLoadPlanner", "DefaultSavePlanner", "FileSystemReader", "FileSystemWriter",
           "LoadItemType", "LoadPlan", "LoadPlanner", "Metadata", "MetadataIndex", "ReadItem",
           "SavePlan", "SavePlanner", "Stateful", "StorageReader", "StorageWriter",
           "TensorProperties", "TensorStorageMetadata", "WriteItem", "WriteItemType",
           "WriteResult", "async_save", "load", "load_state_dict", "save", "save_state_dict"]
