"""ember.multiprocessing: torch.multiprocessing — Python's multiprocessing plus `spawn`.

Note: ember tensors are NumPy arrays, so they pickle by value between processes; the
shared-memory tensor reductions of torch.multiprocessing are not provided (tensors sent
through a Queue arrive as copies).
"""
import multiprocessing as _mp
from multiprocessing import *  # noqa: F401,F403  (torch.multiprocessing re-exports it)

from .spawn import (ProcessContext, ProcessExitedException, ProcessRaisedException,
                    SpawnContext, spawn, start_processes)

__all__ = list(getattr(_mp, "__all__", [])) + [
    "ProcessContext", "ProcessExitedException", "ProcessRaisedException", "SpawnContext",
    "spawn", "start_processes", "get_sharing_strategy", "set_sharing_strategy",
    "get_all_sharing_strategies"]

_sharing_strategy = "file_system"


def get_all_sharing_strategies():
    return {"file_system"}


def get_sharing_strategy():
    return _sharing_strategy


def set_sharing_strategy(new_strategy):
    if new_strategy not in get_all_sharing_strategies():
        raise ValueError(f"sharing strategy {new_strategy!r} is not supported by ember")
