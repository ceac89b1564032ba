"""Save/load plan types and the planner protocols (torch.distributed.checkpoint.planner).

Note: a planner turns a state_dict into items (what each rank writes or reads); the
coordinator sees every rank's local plan and may rewrite them (the default save planner
keeps each replicated item in exactly one rank's plan) before storage runs them.
"""
import abc
import enum
from dataclasses import dataclass

__all__ = ["WriteItemType", "LoadItemType", "TensorWriteData", "WriteItem", "ReadItem",
           "SavePlan", "LoadPlan", "SavePlanner", "LoadPlanner"]


class WriteItemType(enum.Enum):
    TENSOR = enum.auto()
    SHARD = enum.auto()
    BYTE_IO = enum.auto()


class LoadItemType(enum.Enum):
    TENSOR = enum.auto()
    BYTE_IO = enum.auto()


@dataclass
class TensorWriteData:
    chunk: object          # ChunkStorageMetadata
    properties: object     # TensorProperties
    size: tuple


@dataclass
class WriteItem:
    index: object          # MetadataIndex
    type: WriteItemType
    tensor_data: TensorWriteData = None

    def tensor_storage_size(self):
        if self.tensor_data is None:
            return None
        n = 1
        for s in self.tensor_data.chunk.sizes:
            n *= s
        return n * self.tensor_data.properties.dtype.itemsize


@dataclass
class ReadItem:
    type: LoadItemType
    dest_index: object       # MetadataIndex of the target (fqn, target chunk offset)
    dest_offsets: tuple      # region start inside the target chunk
    storage_index: object    # MetadataIndex of the saved chunk
    storage_offsets: tuple   # region start inside the saved chunk
    lengths: tuple           # region extent


@dataclass
class SavePlan:
    items: list
    storage_data: object = None
    planner_data: object = None


@dataclass
class LoadPlan:
    items: list
    storage_data: object = None
    planner_data: object = None


class SavePlanner(abc.ABC):
    @abc.abstractmethod
    def set_up_planner(self, state_dict, storage_meta=None, is_coordinator=False):
        ...

    @abc.abstractmethod
    def create_local_plan(self):
        ...

    @abc.abstractmethod
    def create_global_plan(self, all_plans):
        ...

    @abc.abstractmethod
    def finish_plan(self, new_plan):
        ...

    @abc.abstractmethod
    def resolve_data(self, write_item):
        ...


class LoadPlanner(abc.ABC):
    @abc.abstractmethod
    def set_up_planner(self, state_dict, metadata=None, is_coordinator=False):
        ...

    @abc.abstractmethod
    def create_local_plan(self):
        ...

    @abc.abstractmethod
    def create_global_plan(self, global_plan):
        ...

    @abc.abstractmethod
    def finish_plan(self, central_plan):
        ...

    @abc.abstractmethod
    def load_bytes(self, read_item, value):
        ...

    @abc.abstractmethod
    def resolve_tensor(self, read_item):
        ...

    @abc.abstractmethod
    def commit_tensor(self, read_item, tensor):
        ...
