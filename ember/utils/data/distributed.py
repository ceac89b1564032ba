"""DistributedSampler: each rank iterates its own 1/world_size share of a dataset.

Note: PyTorch shuffles with `torch.randperm(n, generator=torch.Generator().manual_seed(
seed + epoch))`, which is a Fisher-Yates shuffle driven by the raw 32-bit outputs of
MT19937. ember's own generator is Philox (its randperm differs), so this sampler runs
that exact shuffle on NumPy's legacy MT19937 (same seeding): every rank gets the same
indices, in the same order, as under PyTorch for the same seed and epoch.
"""
import math

import numpy as np

from .sampler import Sampler

__all__ = ["DistributedSampler"]


def _torch_randperm(n, seed):
    """torch.randperm(n) of a CPU generator seeded with `seed`, bit for bit (n < 2**32/20)."""
    if n >= (2 ** 32 - 1) // 20:
        raise NotImplementedError(f"DistributedSampler: datasets of {n} items or more use "
                                  f"PyTorch's 64-bit shuffle, which ember does not reproduce")
    perm = list(range(n))
    if n < 2:
        return perm
    raw = np.random.RandomState(seed % (2 ** 32))._bit_generator.random_raw(n - 1).tolist()
    for i in range(n - 1):
        z = raw[i] % (n - i) + i
        perm[i], perm[z] = perm[z], perm[i]
    return perm


class DistributedSampler(Sampler):
    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None or rank is None:
            from ... import distributed as dist
            if num_replicas is None:
                num_replicas = dist.get_world_size()
            if rank is None:
                rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(self.dataset) % self.num_replicas != 0:
            self.num_samples = math.ceil((len(self.dataset) - self.num_replicas)
                                         / self.num_replicas)
        else:
            self.num_samples = math.ceil(len(self.dataset) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        if self.shuffle:
            indices = _torch_randperm(len(self.dataset), self.seed + self.epoch)
        else:
            indices = list(range(len(self.dataset)))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[:self.total_size]
        assert len(indices) == self.total_size
        indices = indices[self.rank:self.total_size:self.num_replicas]
        assert len(indices) == self.num_samples
        return iter(indices)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Reshuffle differently each epoch (the shuffle seed is seed + epoch)."""
        self.epoch = epoch
