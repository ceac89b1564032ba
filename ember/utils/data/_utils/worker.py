"""The worker process side of a multi-process DataLoader.

Note: a worker takes (send_idx, index) tasks from its own index queue, fetches and
collates, and puts (send_idx, batch) on the shared result queue. Tensors cross the
queue as pickles of their NumPy arrays (Tensor.__reduce_ex__) and are rebuilt in the
parent. An exception travels as an ExceptionWrapper carrying the worker's formatted
traceback; the parent re-raises it. A worker exits on a None task, or when it sees
that its parent is gone or the done event is set (it polls every _DONE_POLL_INTERVAL s).
"""
import os
import random
import sys
import traceback

__all__ = ["get_worker_info", "WorkerInfo", "ExceptionWrapper"]

MP_STATUS_CHECK_INTERVAL = 5.0
# An idle worker also checks the done event this often: when the parent's iterator is
# collected as cyclic garbage, its index queues' feeder threads may already be gone,
# and the None that asks a worker to stop is then never delivered.
_DONE_POLL_INTERVAL = 0.1

_worker_info = None


class WorkerInfo:
    """What `get_worker_info()` returns inside a worker: id, num_workers, seed, dataset."""
    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = [f"{k}={getattr(self, k)}" for k in self.__keys]
        return f"{self.__class__.__name__}({', '.join(items)})"


def get_worker_info():
    """This worker's WorkerInfo in a DataLoader worker process; None in the main process."""
    return _worker_info


class ExceptionWrapper:
    """An exception with its traceback text, to re-raise in another process."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


class KeyErrorMessage(str):
    """KeyError quotes its message; this keeps the traceback text readable."""

    def __repr__(self):
        return self


class _IterableDatasetStopIteration:
    """A worker's note that its IterableDataset copy is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class _ResumeIteration:
    """Sent to persistent workers at a new epoch: restart the fetcher."""

    def __init__(self, seed=None):
        self.seed = seed


def _generate_state(base_seed, worker_id):
    """NumPy's seed for a worker: PyTorch's SeedSequence-style hash of
    (worker_id, base_seed), so workers get decorrelated NumPy streams."""
    INIT_A, MULT_A, INIT_B, MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
    MIX_MULT_L, MIX_MULT_R, XSHIFT, MASK32 = 0xCA01F9DD, 0x4973F715, 16, 0xFFFFFFFF
    entropy = [worker_id, base_seed & MASK32, base_seed >> 32, 0]
    hash_const_a = INIT_A

    def hash_(value):
        nonlocal hash_const_a
        value = (value ^ hash_const_a) & MASK32
        hash_const_a = (hash_const_a * MULT_A) & MASK32
        value = (value * hash_const_a) & MASK32
        return (value ^ (value >> XSHIFT)) & MASK32

    def mix(x, y):
        r = ((MIX_MULT_L * x) & MASK32) - ((MIX_MULT_R * y) & MASK32)
        r &= MASK32
        return (r ^ (r >> XSHIFT)) & MASK32

    pool = [hash_(e) for e in entropy]
    for i_src in range(4):
        for i_dst in range(4):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hash_(pool[i_src]))
    hash_const_b, state = INIT_B, []
    for v in pool:
        v = (v ^ hash_const_b) & MASK32
        hash_const_b = (hash_const_b * MULT_B) & MASK32
        v = (v * hash_const_b) & MASK32
        state.append((v ^ (v >> XSHIFT)) & MASK32)
    return state


def _seed_worker(seed, base_seed, worker_id):
    """Seeds Python's random, ember and NumPy in a worker, as PyTorch does."""
    import numpy as np
    from ....random import manual_seed
    random.seed(seed)
    manual_seed(seed)
    np.random.seed(_generate_state(base_seed, worker_id))


def _put(data_queue, item, worker_id):
    """Pickles here, not in the queue's feeder thread, so that a batch that cannot be
    pickled becomes an error the parent sees instead of a silent hang."""
    from multiprocessing.reduction import ForkingPickler
    try:
        payload = ForkingPickler.dumps(item)
    except Exception:
        payload = ForkingPickler.dumps(
            (item[0], ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")))
    data_queue.put(bytes(payload))


def _worker_loop(kind_iterable, dataset, index_queue, data_queue, done_event, auto_collation,
                 collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers,
                 persistent_workers, parent_pid):
    import queue
    from .fetch import create_fetcher
    global _worker_info
    try:
        seed = base_seed + worker_id
        _seed_worker(seed, base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        init_exception = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(kind_iterable, dataset, auto_collation, collate_fn,
                                     drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        iteration_end = False
        while True:
            if os.getppid() != parent_pid:      # the parent died: nobody will read
                break
            try:
                r = index_queue.get(timeout=_DONE_POLL_INTERVAL)
            except queue.Empty:
                if done_event.is_set():         # shutdown, even if the None got lost
                    break
                continue
            if isinstance(r, _ResumeIteration):
                _put(data_queue, (r, None), worker_id)
                iteration_end = False
                if r.seed is not None:
                    _seed_worker(r.seed + worker_id, r.seed, worker_id)
                try:
                    fetcher = create_fetcher(kind_iterable, dataset, auto_collation,
                                             collate_fn, drop_last)
                except Exception:
                    init_exception = ExceptionWrapper(
                        where=f"in DataLoader worker process {worker_id}")
                continue
            if r is None:                       # shutdown
                break
            if done_event.is_set() or iteration_end:
                continue
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and kind_iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(
                            where=f"in DataLoader worker process {worker_id}")
            _put(data_queue, (idx, data), worker_id)
            del data, idx, index, r
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
