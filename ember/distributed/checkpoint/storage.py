"""StorageWriter / StorageReader protocols and WriteResult (torch.distributed.checkpoint)."""
import abc
from dataclasses import dataclass

__all__ = ["StorageWriter", "StorageReader", "WriteResult"]


@dataclass
class WriteResult:
    index: object            # MetadataIndex
    size_in_bytes: int
    storage_data: object     # where it lies: {"relative_path", "key"} or {.., "offset", "length"}


class StorageWriter(abc.ABC):
    def reset(self, checkpoint_id=None):
        ...

    @abc.abstractmethod
    def set_up_storage_writer(self, is_coordinator):
        ...

    @abc.abstractmethod
    def prepare_local_plan(self, plan):
        ...

    @abc.abstractmethod
    def prepare_global_plan(self, plans):
        ...

    @abc.abstractmethod
    def write_data(self, plan, planner):
        ...

    @abc.abstractmethod
    def finish(self, metadata, results):
        ...

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id):
        return False

    def storage_meta(self):
        return None


class StorageReader(abc.ABC):
    def reset(self, checkpoint_id=None):
        ...

    @abc.abstractmethod
    def read_metadata(self):
        ...

    @abc.abstractmethod
    def set_up_storage_reader(self, metadata, is_coordinator):
        ...

    @abc.abstractmethod
    def prepare_local_plan(self, plan):
        ...

    @abc.abstractmethod
    def prepare_global_plan(self, plans):
        ...

    @abc.abstractmethod
    def read_data(self, plan, planner):
        ...

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id):
        return False
