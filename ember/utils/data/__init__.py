"""ember.utils.data (torch.utils.data): datasets, samplers and the DataLoader."""
from .dataset import (Dataset, IterableDataset, TensorDataset, StackDataset, ConcatDataset,
                      ChainDataset, Subset, random_split)
from .sampler import (Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler,
                      WeightedRandomSampler, BatchSampler)
from ._utils.collate import default_collate, default_convert
from ._utils.worker import get_worker_info, WorkerInfo
from .dataloader import DataLoader, _DatasetKind  # noqa: F401
from .distributed import DistributedSampler

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split", "Sampler", "SequentialSampler",
           "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler",
           "DataLoader", "default_collate", "default_convert", "get_worker_info",
           "WorkerInfo", "DistributedSampler"]
