"""The RPC agent: one ZeroMQ ROUTER socket to receive, one DEALER per peer to send.

Note: a single I/O thread owns every socket (ZeroMQ sockets are not thread-safe);
other threads queue outgoing messages and wake it through a pipe. Requests and user
payloads are decoded and run on a pool of `num_worker_threads` server threads;
responses complete their Future in the I/O thread (or on a callback thread when the
Future has callbacks, so a slow callback cannot stall the transport). Every message
starts with the shared token each worker read from the rendezvous store: a frame
without it is dropped before anything is unpickled, because payloads are pickles.
A socket monitor on each DEALER reports a lost connection, which fails the pending
calls to that peer at once instead of at their timeout.
Peers whose published address is loopback run on this host (and network namespace), so
the ROUTER also binds an abstract-namespace ipc:// endpoint (named by the group's token
hash and rank: nothing on disk to clean up) and such peers are dialled over it: a Unix
socket skips the TCP stack on every message. Other peers stay on tcp://.
"""
import collections
import hashlib
import heapq
import hmac
import ipaddress
import os
import pickle
import queue
import sys
import threading
import time
import traceback
import warnings
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlparse

import zmq
from zmq.utils.monitor import parse_monitor_message

from ...futures import Future
from . import _wire

# message kinds
CALL, REMOTE, FETCH, RESP, ERR, FORK_ADD, FORK_DEL, BWD, CTX_DEL = range(9)
_ONE_WAY = (FORK_ADD, FORK_DEL, CTX_DEL)


class WorkerInfo:
    """A worker's name and id (rank), as rpc.get_worker_info returns it."""
    __slots__ = ("name", "id")

    def __init__(self, name, id):
        self.name, self.id = name, id

    def __eq__(self, other):
        return isinstance(other, WorkerInfo) and (self.name, self.id) == (other.name, other.id)

    def __hash__(self):
        return hash((self.name, self.id))

    def __reduce__(self):
        return (WorkerInfo, (self.name, self.id))

    def __repr__(self):
        return f"WorkerInfo(id={self.id}, name={self.name})"


class _Pending:
    __slots__ = ("fut", "dst", "deadline", "keep")

    def __init__(self, fut, dst, deadline, keep):
        self.fut, self.dst, self.deadline, self.keep = fut, dst, deadline, keep


def timeout_error(seconds):
    return RuntimeError(f"RPC ran for more than set timeout ({int(seconds * 1000)} ms) and will "
                        "now be marked with an error")


class Agent:
    def __init__(self, name, rank, world_size, token, addrs, names, router, ctx,
                 num_worker_threads, rpc_timeout):
        self.name, self.rank, self.world_size = name, rank, world_size
        self.token = token
        self.names = names                      # rank -> name
        self.rpc_timeout = rpc_timeout
        self._ctx = ctx
        self._router = router
        self._dealers, self._monitors = {}, {}
        ipc = _ipc_endpoint(token, rank) if _is_loopback(addrs.get(rank)) else None
        if ipc is not None:         # peers dial it: failing to bind is an error, not tcp
            router.bind(ipc)
        for r, addr in addrs.items():
            d = ctx.socket(zmq.DEALER)
            if ipc is not None and _is_loopback(addr):
                addr = _ipc_endpoint(token, r)
                # the peer binds its ipc endpoint as its agent starts, maybe after this
                # connect: retry soon rather than after ZeroMQ's default 100 ms
                d.setsockopt(zmq.RECONNECT_IVL, 5)
                d.setsockopt(zmq.RECONNECT_IVL_MAX, 1000)
            d.setsockopt(zmq.SNDHWM, 0)
            d.setsockopt(zmq.LINGER, 2000)
            d.setsockopt(zmq.IMMEDIATE, 0)
            m = d.get_monitor_socket(zmq.EVENT_DISCONNECTED | zmq.EVENT_CONNECTED)
            d.connect(addr)
            self._dealers[r], self._monitors[m] = d, r
        self._send_locks = {r: threading.Lock() for r in self._dealers}
        self._connected = set()
        self._dead = {}                          # rank -> reason
        self.deferred = collections.deque()      # (fn, args) run by the I/O thread (from __del__)
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        self._lock = threading.Lock()
        self._next_id = 1
        self._pending = {}
        self._deadlines = []
        self.sent = self.received = 0
        self.inflight = 0                        # requests being served here
        self._idle = threading.Condition(self._lock)
        self.pool = _ServerPool(num_worker_threads, f"rpc-{name}")
        self._cb_pool = ThreadPoolExecutor(2, thread_name_prefix=f"rpc-cb-{name}")
        self.handlers = {}                       # kind -> fn(src, mid, meta, frames) (pool)
        self.inline_handlers = {}                # kind -> fn(src, meta) (I/O thread, ordered)
        self.rejected = 0
        self._running = True
        self._stopping = False
        self._io = threading.Thread(target=self._loop, name=f"rpc-io-{name}", daemon=True)

    def start(self):
        """Start the I/O thread (after the handlers are installed)."""
        self._io.start()

    # -- sending ----------------------------------------------------------------
    def send(self, dst, kind, mid, meta, frames=()):
        """Send from the calling thread under that peer's lock (frames go without a copy).

        Only sends touch a DEALER and only the I/O thread touches the ROUTER, so a lock per
        DEALER is all the thread-safety ZeroMQ needs; it saves a thread hand-off per message.
        """
        head = pickle.dumps((kind, mid, self.rank, meta), protocol=pickle.HIGHEST_PROTOCOL)
        with self._lock:
            self.sent += 1
        with self._send_locks[dst]:
            if not self._running:
                raise RuntimeError(f"RPC agent {self.name} is shut down")
            self._dealers[dst].send_multipart([self.token, head, *frames], copy=False)

    def request(self, dst, kind, meta, frames=(), timeout=None, keep=None):
        """Send a request; returns a Future completed by the response (or the timeout)."""
        if timeout is None:
            timeout = self.rpc_timeout
        fut = Future()
        if dst in self._dead:
            fut.set_exception(self._dead_error(dst))
            return fut
        deadline = time.monotonic() + timeout if timeout and timeout > 0 else None
        with self._lock:
            mid = self._next_id
            self._next_id += 1
            self._pending[mid] = _Pending(fut, dst, deadline, keep)
            if deadline is not None:
                heapq.heappush(self._deadlines, (deadline, mid, timeout))
        self.send(dst, kind, mid, meta, frames)
        return fut

    def respond(self, dst, mid, value_frames=None, exc=None):
        if exc is not None:
            self.send(dst, ERR, mid, None, [_pickle_exc(exc, self)])
        else:
            self.send(dst, RESP, mid, None, value_frames)

    def _dead_error(self, dst):
        return RuntimeError(f"RPC to {WorkerInfo(self.names[dst], dst)} failed: "
                            f"{self._dead[dst]}")

    # -- the I/O thread ---------------------------------------------------------
    def _io_stop(self):
        self._stopping = True
        os.write(self._wake_w, b"x")
        self._io.join(5)

    def _loop(self):
        poller = zmq.Poller()
        poller.register(self._router, zmq.POLLIN)
        poller.register(self._wake_r, zmq.POLLIN)
        for m in self._monitors:
            poller.register(m, zmq.POLLIN)
        while not self._stopping:
            wait_ms = 50
            if self._deadlines:
                wait_ms = max(0, min(wait_ms, (self._deadlines[0][0] - time.monotonic()) * 1e3))
            try:
                events = dict(poller.poll(wait_ms))
            except zmq.ZMQError:
                break
            if self._wake_r in events:
                try:
                    while os.read(self._wake_r, 4096):
                        pass
                except BlockingIOError:
                    pass
            while self.deferred:
                fn, args = self.deferred.popleft()
                try:
                    fn(*args)
                except Exception as e:
                    warnings.warn(f"RPC agent {self.name}: deferred {fn} failed: {e}",
                                  RuntimeWarning)
            if self._router in events:
                for _ in range(1000):
                    try:
                        frames = self._router.recv_multipart(zmq.NOBLOCK, copy=False)
                    except zmq.Again:
                        break
                    self._incoming(frames)
            for m, r in self._monitors.items():
                if m in events:
                    self._monitor_event(m, r)
            if self._deadlines:
                self._expire()

    def _incoming(self, frames):
        # frames: [identity, token, head, *payload]
        if len(frames) < 3 or not hmac.compare_digest(frames[1].bytes, self.token):
            self.rejected += 1
            return
        try:
            kind, mid, src, meta = pickle.loads(frames[2].bytes)
            if src not in self._dealers:
                raise ValueError(f"unknown sender rank {src}")
        except Exception as e:      # malformed header: nobody to answer
            self.rejected += 1
            warnings.warn(f"RPC agent {self.name} dropped a malformed message: {e}", RuntimeWarning)
            return
        with self._lock:
            self.received += 1
        payload = frames[3:]
        if kind in (RESP, ERR):
            self._complete(mid, kind, payload)
            return
        inline = self.inline_handlers.get(kind)
        if inline is not None:
            try:
                inline(src, mid, meta)
            except Exception as e:
                if mid:
                    self.respond(src, mid, exc=e)
                else:
                    warnings.warn(f"RPC agent {self.name}: message {kind} from rank {src} "
                                  f"failed: {e}", RuntimeWarning)
            if kind in _ONE_WAY:
                return
        handler = self.handlers.get(kind)
        if handler is None:
            if mid:
                self.respond(src, mid, exc=RuntimeError(f"unknown RPC message type {kind}"))
            return
        with self._lock:
            self.inflight += 1
        self.pool.submit(self._serve, handler, src, mid, meta, payload)

    def _serve(self, handler, src, mid, meta, payload):
        try:
            handler(src, mid, meta, payload)
        except Exception as e:
            self.respond(src, mid, exc=e)
            self.done_serving()

    def done_serving(self):
        with self._lock:
            self.inflight -= 1
            self._idle.notify_all()

    def _complete(self, mid, kind, payload):
        with self._lock:
            p = self._pending.pop(mid, None)
            self._idle.notify_all()
        if p is None:
            return              # timed out already
        if p.fut._callbacks:
            self._cb_pool.submit(self._finish, p, kind, payload)
        else:
            self._finish(p, kind, payload)

    def _finish(self, p, kind, payload):
        try:
            if kind == ERR:
                exc = _unpickle_exc(payload[0].bytes)
                p.fut.set_exception(exc)
            else:
                p.fut.set_result(self.decode_response(payload, p.dst, p.keep))
        except Exception as e:
            if not p.fut.done():
                p.fut.set_exception(e)

    def decode_response(self, payload, src, keep):
        return payload          # replaced by the api layer (unpickles the value)

    def _expire(self):
        now = time.monotonic()
        while self._deadlines and self._deadlines[0][0] <= now:
            _, mid, seconds = heapq.heappop(self._deadlines)
            with self._lock:
                p = self._pending.pop(mid, None)
                self._idle.notify_all()
            if p is not None:
                p.fut.set_exception(timeout_error(seconds))

    def _monitor_event(self, m, r):
        while True:
            try:
                ev = parse_monitor_message(m.recv_multipart(zmq.NOBLOCK))
            except zmq.Again:
                return
            if ev["event"] == zmq.EVENT_CONNECTED:
                self._connected.add(r)
            elif ev["event"] == zmq.EVENT_DISCONNECTED and not self._stopping:
                self._dead[r] = ("connection lost (the worker exited or crashed before "
                                 "answering)")
                self.fail_peer(r)

    def fail_peer(self, r):
        with self._lock:
            gone = [(k, p) for k, p in self._pending.items() if p.dst == r]
            for k, _ in gone:
                del self._pending[k]
            self._idle.notify_all()
        for _, p in gone:
            p.fut.set_exception(self._dead_error(r))

    # -- state ------------------------------------------------------------------
    def defer(self, fn, *args):
        """Run fn(*args) on the I/O thread; safe from __del__ (takes no lock)."""
        self.deferred.append((fn, args))
        try:
            os.write(self._wake_w, b"x")
        except OSError:
            pass

    def wait_idle(self, timeout=None):
        end = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while self._pending or self.inflight or self.deferred:
                left = 0.05 if end is None else min(0.05, end - time.monotonic())
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def counts(self):
        with self._lock:
            return self.sent, self.received

    def stop(self):
        self._io_stop()
        for lock in self._send_locks.values():    # no send in flight past this point
            lock.acquire()
        self._running = False
        for lock in self._send_locks.values():
            lock.release()
        self.pool.shutdown(wait=True, cancel_futures=True)
        self._cb_pool.shutdown(wait=True)
        for d in self._dealers.values():     # (disable_monitor can block: just close)
            d.close(1000)
        for m in self._monitors:
            m.close(0)
        self._router.close(0)
        os.close(self._wake_r)
        os.close(self._wake_w)


class _ServerPool:
    """`num_worker_threads` server threads fed by one SimpleQueue: a request reaches a
    thread with one C-level put/get (ThreadPoolExecutor.submit costs a Future, locks and
    a thread-count check per call, on the I/O thread's critical path)."""

    def __init__(self, n, name):
        self._q = queue.SimpleQueue()
        self._threads = [threading.Thread(target=self._run, daemon=True, name=f"{name}_{i}")
                         for i in range(n)]
        for t in self._threads:
            t.start()

    def submit(self, fn, *args):
        self._q.put((fn, args))

    def _run(self):
        while True:
            item = self._q.get()
            if item is None:
                return
            fn, args = item
            try:
                fn(*args)
            except BaseException as e:     # handlers report their own errors; keep serving
                warnings.warn(f"RPC server thread: {fn} raised {e!r}", RuntimeWarning)

    def shutdown(self, wait=True, cancel_futures=False):
        """Stop the threads; with cancel_futures, queued (not yet started) work is dropped."""
        if cancel_futures:
            try:
                while True:
                    self._q.get_nowait()
            except queue.Empty:
                pass
        for _ in self._threads:
            self._q.put(None)
        if wait:
            me = threading.current_thread()
            for t in self._threads:
                if t is not me:
                    t.join()


def _is_loopback(addr):
    if not addr or sys.platform != "linux":    # abstract ipc names are Linux-only
        return False
    url = urlparse(addr)
    try:
        return url.scheme == "tcp" and ipaddress.ip_address(url.hostname).is_loopback
    except ValueError:
        return False


def _ipc_endpoint(token, rank):
    return f"ipc://@ember-rpc-{hashlib.sha256(token).hexdigest()[:24]}-{rank}"


def _pickle_exc(exc, agent):
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    where = WorkerInfo(agent.name, agent.rank)
    try:
        return pickle.dumps((type(exc), f"On {where}:\n{exc!r}\n{tb}"))
    except Exception:
        return pickle.dumps((RuntimeError, f"On {where}:\n{exc!r}\n{tb}"))


def _unpickle_exc(data):
    cls, msg = pickle.loads(data)
    try:
        return cls(msg)
    except Exception:
        return RuntimeError(msg)


__all__ = ["Agent", "WorkerInfo", "timeout_error", "_wire"]
