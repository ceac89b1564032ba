"""The "gloo" backend: collectives over TCP sockets between self-started processes.

Note: why not MPI here. PyTorch programs pass backend="gloo" and start their own
processes (`torch.multiprocessing.spawn` + `tcp://` / `env://`); MPI cannot join such
independently started processes into one world (MPI_Comm_accept/connect between singleton
processes fails), so this backend implements the collectives itself on the TCP mesh of
`_tcp_mesh`: ring reduce-scatter + ring all-gather for large all-reduces (chunked and
pipelined: each chunk is forwarded as soon as it is reduced), direct exchange for small
ones, a chunked chain for large broadcasts. Every ring/direct result is computed in the same
order on all ranks, so all ranks get bit-identical results. Collectives run on the group's
worker thread (`_work.Worker`), so `async_op=True` overlaps with Python.
"""
import collections
import threading
import time

import numpy as np

from ._errors import DistBackendError
from ._reduce_op import combine, is_avg
from ._tcp_mesh import COLL, DONE, P2P, Mesh
from ._work import Work, Worker

__all__ = ["ProcessGroupGloo"]

SMALL_BYTES = 64 << 10        # below this, all-reduce exchanges whole tensors directly
CHUNK_BYTES = 4 << 20         # pipelining unit of rings and chains (4 MB measured best)


def _flat(t):
    """A writable contiguous 1-D view of t's data (a copy when t is strided) + original."""
    a = t._data
    if a.flags.c_contiguous and a.flags.writeable:
        return a.reshape(-1), None
    return np.ascontiguousarray(a).reshape(-1), a


def _commit(t, flat, orig):
    if orig is not None:
        np.copyto(orig, flat.reshape(orig.shape))
    t._bump()


def _ro(t):
    """A contiguous 1-D read-only view (or copy) of t's data."""
    return np.ascontiguousarray(t._data).reshape(-1)


def _b(a):
    return a.view(np.uint8)


def _pieces(start, end, itemsize):
    step = max(1, CHUNK_BYTES // itemsize)
    return [(s, min(s + step, end)) for s in range(start, end, step)] or [(start, end)]


def _avg(flat, n):
    if flat.dtype.kind in "fc" or flat.dtype.name == "bfloat16":
        flat /= n
    else:
        flat //= n


class ProcessGroupGloo:
    """One process group's transport, worker thread, and collective algorithms."""

    def __init__(self, store, rank, size, timeout):
        self._rank, self._size = rank, size
        self.timeout_s = timeout.total_seconds()
        self.mesh = Mesh(store, rank, size, self.timeout_s)
        self.worker = Worker(f"ember-gloo-worker-r{rank}")
        self.sender = Worker(f"ember-gloo-p2p-r{rank}")
        self.seq = 0
        self._send_counts = collections.Counter()
        self._recv_counts = collections.Counter()
        self._lock = threading.Lock()

    def rank(self):
        return self._rank

    def size(self):
        return self._size

    def name(self):
        return "gloo"

    def shutdown(self):
        self.worker.stop(1.0)
        self.sender.stop(1.0)
        self.mesh.close()

    # ------------------------------------------------------------- plumbing
    def _submit(self, name, fn, outputs=None):
        with self._lock:
            self.seq += 1
            seq = self.seq
        work = Work(name, outputs, seq)

        def run():
            self.mesh.enter(seq)
            try:
                fn(_Ctx(self, name, seq))
            except BaseException:
                self.mesh.unpost(seq)
                raise
        return self.worker.submit(work, run)

    # ------------------------------------------------------------- collectives
    def allreduce(self, t, op):
        def fn(c):
            flat, orig = _flat(t)
            f = combine(op, flat.dtype)
            if self._size > 1:
                if flat.nbytes <= SMALL_BYTES:
                    c.allreduce_direct(flat, f)
                else:
                    bounds = np.linspace(0, flat.size, self._size + 1).astype(int)
                    blocks = list(zip(bounds[:-1], bounds[1:]))
                    c.ring_reduce_scatter(flat, blocks, f)
                    c.ring_allgather(flat, blocks)
            if is_avg(op):
                _avg(flat, self._size)
            _commit(t, flat, orig)
        return self._submit("all_reduce", fn, [t])

    def broadcast(self, t, src):
        def fn(c):
            flat, orig = _flat(t)
            c.broadcast(flat, src)
            if self._rank != src:
                _commit(t, flat, orig)
        return self._submit("broadcast", fn, [t])

    def reduce(self, t, dst, op):
        def fn(c):
            flat, orig = _flat(t)
            if self._rank != dst:
                c.send(dst, 0, flat)
                return
            f = combine(op, flat.dtype)
            acc = None
            for j in range(self._size):
                data = flat.copy() if j == dst else c.take(j, 0, flat.nbytes).view(flat.dtype)
                acc = data if acc is None else f(acc, data, out=acc)
            flat[...] = acc
            if is_avg(op):
                _avg(flat, self._size)
            _commit(t, flat, orig)
        return self._submit("reduce", fn, [t])

    def allgather(self, outs, t, name="all_gather"):
        """`outs`: list of world_size tensors (or one flat output for the _into_tensor form)."""
        def fn(c):
            mine = _ro(t)
            for j in self._peers():
                c.send(j, 0, mine)
            for j in range(self._size):
                data = mine if j == self._rank else c.take(j, 0, mine.nbytes).view(mine.dtype)
                _write(outs[j], data)
        return self._submit(name, fn, [outs] if isinstance(outs, list) else outs)

    def gather(self, outs, t, dst):
        def fn(c):
            mine = _ro(t)
            if self._rank != dst:
                c.send(dst, 0, mine)
                return
            for j in range(self._size):
                data = mine if j == dst else c.take(j, 0, mine.nbytes).view(mine.dtype)
                _write(outs[j], data)
        return self._submit("gather", fn, [outs] if outs else [])

    def scatter(self, out, ins, src):
        def fn(c):
            if self._rank == src:
                for j in self._peers():
                    c.send(j, 0, _ro(ins[j]))
                _write(out, _ro(ins[src]))
            else:
                flat, orig = _flat(out)
                flat[...] = c.take(src, 0, flat.nbytes).view(flat.dtype)
                _commit(out, flat, orig)
        return self._submit("scatter", fn, [out])

    def reduce_scatter(self, out, ins, op, name="reduce_scatter"):
        """`ins`: list of world_size equally sized tensors; rank r gets the reduced ins[r]."""
        def fn(c):
            parts = [_ro(x) for x in ins]
            flat = np.concatenate(parts) if parts else np.empty(0)
            f = combine(op, flat.dtype)
            offs = np.cumsum([0] + [p.size for p in parts])
            blocks = list(zip(offs[:-1], offs[1:]))
            if self._size > 1:
                if flat.nbytes <= SMALL_BYTES:
                    c.reduce_scatter_direct(flat, blocks, f)
                else:
                    c.ring_reduce_scatter(flat, blocks, f)
            s, e = blocks[self._rank]
            res = flat[s:e]
            if is_avg(op):
                _avg(res, self._size)
            _write(out, res)
        return self._submit(name, fn, [out])

    def alltoall(self, outs, ins, name="all_to_all"):
        """`ins`/`outs`: per-rank lists of 1-D arrays-to-be (tensors or (tensor, s, e))."""
        def fn(c):
            for j in self._peers():
                c.send(j, 0, _ro_part(ins[j]))
            for j in range(self._size):
                src = _ro_part(ins[j]) if j == self._rank else None
                n = _nbytes_part(outs[j])
                data = src if src is not None else c.take(j, 0, n)
                _write_part(outs[j], data)
        return self._submit(name, fn, [outs])

    def barrier(self):
        def fn(c):
            for j in self._peers():
                c.send(j, 0, None)
            for j in self._peers():
                c.take(j, 0, 0)
        return self._submit("barrier", fn)

    def monitored_barrier(self, timeout_s, wait_all_ranks):
        def fn(c):
            deadline = time.monotonic() + timeout_s
            ms = int(timeout_s * 1000)
            if self._rank != 0:
                c.send(0, 0, None)
                if c.take(0, 1, 0, deadline=deadline, soft=True) is None:
                    raise RuntimeError(f"[Rank {self._rank}]: Rank {self._rank} successfully "
                                       f"reached monitoredBarrier, but received errors while "
                                       f"waiting for send/recv from rank 0.")
                return
            missing = []
            for j in self._peers():
                if c.take(j, 0, 0, deadline=deadline, soft=True) is None:
                    missing.append(j)
                    if not wait_all_ranks:
                        break
            if missing:
                if wait_all_ranks:
                    raise RuntimeError(f"[Rank 0]: Ranks {', '.join(map(str, missing))} "
                                       f"failed to pass monitoredBarrier in {ms} ms")
                raise RuntimeError(f"[Rank 0]: Rank {missing[0]} failed to pass "
                                   f"monitoredBarrier in {ms} ms")
            for j in self._peers():
                c.send(j, 1, None)
        return self._submit("monitored_barrier", fn)

    # ------------------------------------------------------------- point to point
    def send(self, t, dst, tag):
        with self._lock:
            count = self._send_counts[(dst, tag)]
            self._send_counts[(dst, tag)] += 1
        data = _ro(t)
        work = Work("send", [t])
        peer = self.mesh.peers[dst]
        return self.sender.submit(work, lambda: peer.send(P2P, tag, count, _b(data)))

    def recv(self, t, src, tag):
        work = Work("recv", [t])
        work._timeout = self.timeout_s
        if src is None:
            threading.Thread(target=self._recv_any, args=(t, tag, work), daemon=True).start()
            return work
        with self._lock:
            count = self._recv_counts[(src, tag)]
            self._recv_counts[(src, tag)] += 1
        self._expect(t, src, (P2P, tag, count), work)
        return work

    def _expect(self, t, src, key, work):
        peer = self.mesh.peers[src]

        def deliver(buf):
            if buf is None:
                work._finish(DistBackendError(f"recv from rank {src} failed: {peer.dead}"),
                             self.sender._done)
                return
            try:
                _write(t, buf.view(t._data.dtype))
            except Exception as e:      # size mismatch etc. reaches the waiter
                work._finish(e, self.sender._done)
                return
            work._source_rank = src
            work._finish(None, self.sender._done)
        with peer.cond:
            box = peer.mailbox.get(key)
            buf = box.popleft() if box else None
            if box is not None and not box:
                del peer.mailbox[key]
            dead = peer.dead
            if buf is None and dead is None:
                peer.recv_hooks[key] = deliver
                return
        deliver(buf)

    def _recv_any(self, t, tag, work):
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            for j in self._peers():
                peer = self.mesh.peers[j]
                with self._lock:
                    key = (P2P, tag, self._recv_counts[(j, tag)])
                    if peer.mailbox.get(key):
                        self._recv_counts[(j, tag)] += 1
                        self._expect(t, j, key, work)
                        return
            time.sleep(0.001)
        work._finish(DistBackendError(f"recv from any source (tag {tag}) timed out after "
                                      f"{int(self.timeout_s * 1000)} ms"), self.sender._done)

    def _peers(self):
        return [j for j in range(self._size) if j != self._rank]


class _Ctx:
    """Helpers for one running collective: keyed sends/takes, ring and direct algorithms."""

    def __init__(self, pg, name, seq):
        self.pg, self.name, self.seq = pg, name, seq
        self.deadline = time.monotonic() + pg.timeout_s
        self.r, self.n = pg._rank, pg._size

    def send(self, j, sub, arr, kind=COLL):
        mesh = self.pg.mesh
        try:
            mesh.peers[j].send(kind, self.seq, sub, None if arr is None else _b(arr))
        except DistBackendError as e:
            missing = sorted(set(mesh.crashed) | {j})
            raise DistBackendError(f"[Rank {self.r}] {self.name} (sequence number {self.seq}) "
                                   f"failed: {e}; missing ranks: {missing}") from e

    def take(self, j, sub, nbytes, deadline=None, soft=False, kind=COLL):
        pg, what = self.pg, f"[Rank {self.r}] {self.name} (sequence number {self.seq})"
        buf = pg.mesh.peers[j].take((kind, self.seq, sub), deadline or self.deadline, what)
        if buf is DONE:
            return buf
        if buf is None:
            if soft:
                return None
            missing = pg.mesh.missing_for(self.seq) or [j]
            raise DistBackendError(
                f"{what} timed out after {int(pg.timeout_s * 1000)} ms: ranks {missing} did "
                f"not join it (waiting for data from rank {j})")
        if buf.nbytes != nbytes:
            raise DistBackendError(f"{what}: rank {j} sent {buf.nbytes} bytes where "
                                   f"{nbytes} were expected (shapes or dtypes differ across "
                                   f"ranks)")
        return buf

    def allreduce_direct(self, flat, f):
        for j in self.pg._peers():
            self.send(j, 0, flat)
        acc = None
        for j in range(self.n):
            data = flat if j == self.r else self.take(j, 0, flat.nbytes).view(flat.dtype)
            if acc is None:
                acc = data.copy()
            else:
                f(acc, data, out=acc)
        flat[...] = acc

    def reduce_scatter_direct(self, flat, blocks, f):
        for j in self.pg._peers():
            s, e = blocks[j]
            self.send(j, 0, flat[s:e])
        s, e = blocks[self.r]
        acc = None
        for j in range(self.n):
            data = flat[s:e] if j == self.r else \
                self.take(j, 0, flat[s:e].nbytes).view(flat.dtype)
            if acc is None:
                acc = data.copy()
            else:
                f(acc, data, out=acc)
        flat[s:e] = acc

    def ring_reduce_scatter(self, flat, blocks, f):
        """After n-1 steps rank r holds the fully reduced blocks[r] (chunk-pipelined)."""
        self._ring(flat, blocks, 1, self.r - 1, f)

    def ring_allgather(self, flat, blocks):
        """Rank r owns blocks[r]; after n-1 steps every rank holds every block."""
        self._ring(flat, blocks, 2, self.r)

    def _ring(self, flat, blocks, tag, first, f=None):
        """Send blocks[first] right, then n-2 times pass on the block just received from the
        left: reduced into `flat` with `f`, else copied. Every incoming chunk is posted
        first, so the reader thread lands it in `flat` as it arrives; the worker only
        forwards each finished chunk to the right."""
        n, item = self.n, flat.itemsize
        right, left = (self.r + 1) % n, (self.r - 1) % n
        steps = [[((tag << 40) + (step << 20) + k, s, e)
                  for k, (s, e) in enumerate(_pieces(*blocks[(first - step - 1) % n], item))]
                 for step in range(n - 1)]
        peer = self.pg.mesh.peers[left]
        for chunks in steps:
            for key, s, e in chunks:
                peer.post((COLL, self.seq, key), flat[s:e], f)
        for k, (s, e) in enumerate(_pieces(*blocks[first % n], item)):
            self.send(right, (tag << 40) + k, flat[s:e])
        for step, chunks in enumerate(steps):
            for k, (key, s, e) in enumerate(chunks):
                buf = self.take(left, key, (e - s) * item)
                if buf is DONE:
                    pass
                elif f is None:
                    flat[s:e] = buf.view(flat.dtype)
                else:
                    f(flat[s:e], buf.view(flat.dtype), out=flat[s:e])
                if step + 1 < n - 1:
                    self.send(right, (tag << 40) + ((step + 1) << 20) + k, flat[s:e])

    def broadcast(self, flat, src):
        n, r = self.n, self.r
        if flat.nbytes <= SMALL_BYTES or n == 2:
            if r == src:
                for j in self.pg._peers():
                    self.send(j, 0, flat)
            else:
                flat[...] = self.take(src, 0, flat.nbytes).view(flat.dtype)
            return
        pos = (r - src) % n              # a chunked chain src -> src+1 -> ... -> src-1
        nxt, prev = (r + 1) % n, (r - 1) % n
        for k, (s, e) in enumerate(_pieces(0, flat.size, flat.itemsize)):
            if pos > 0:
                flat[s:e] = self.take(prev, k, (e - s) * flat.itemsize).view(flat.dtype)
            if pos < n - 1:
                self.send(nxt, k, flat[s:e])


# -- output helpers: a target is a tensor, or (tensor, start, end) over its flat elements
def _write(t, data):
    flat, orig = _flat(t)
    if flat.size != data.size:
        raise RuntimeError(f"ember.distributed: output tensor has {flat.size} elements but "
                           f"{data.size} arrived (tensor sizes differ across ranks)")
    flat[...] = data.reshape(-1)
    _commit(t, flat, orig)


def _ro_part(x):
    if isinstance(x, tuple):
        t, s, e = x
        return _ro(t)[s:e]
    return _ro(x)


def _nbytes_part(x):
    if isinstance(x, tuple):
        t, s, e = x
        return (e - s) * t._data.itemsize
    return x._data.nbytes


def _write_part(x, data):
    if isinstance(x, tuple):
        t, s, e = x
        a = t._data
        if not (a.flags.c_contiguous and a.flags.writeable):
            raise RuntimeError("all_to_all_single: output tensor must be contiguous")
        a.reshape(-1)[s:e] = data.view(a.dtype)
        t._bump()
        return
    _write(x, data.view(x._data.dtype))
