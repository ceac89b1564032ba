"""init_rpc / rpc_sync / rpc_async / remote / shutdown: the user-facing RPC calls.

Note: one agent per process (module global, as in PyTorch). A call to any worker,
this one included, goes through the agent's sockets, so arguments are always copied
as they would be between processes. Request handlers run on the agent's server
threads; a function marked @async_execution returns a Future and frees its thread
until that Future completes.
"""
import ipaddress
import pickle
import secrets
import socket
import threading
import time
from datetime import timedelta
from urllib.parse import urlparse

import zmq

from ...futures import Future
from .._store import PrefixStore
from ..rendezvous import rendezvous
from . import _wire
from ._agent import (BWD, CALL, CTX_DEL, FETCH, FORK_ADD, FORK_DEL, REMOTE, Agent, WorkerInfo)
from .backend_registry import BackendType, TensorPipeRpcBackendOptions

__all__ = ["init_rpc", "shutdown", "rpc_sync", "rpc_async", "remote", "get_worker_info",
           "WorkerInfo", "FORK_ADD", "FORK_DEL", "CTX_DEL", "BWD"]

UNSET_RPC_TIMEOUT = -1.0
_agent = None
_store = None
_init_lock = threading.Lock()


def _require_agent():
    if _agent is None:
        raise RuntimeError("RPC has not been initialized. Call torch.distributed.rpc.init_rpc "
                           "first.")
    return _agent


# -- message hooks ---------------------------------------------------------------
class _Hooks:
    """Per-message callbacks of the wire layer: RRef forks, autograd send/recv records."""

    def __init__(self, agent, dctx=None, prof=None):
        from . import rref
        self.rref_type = rref.RRef
        self.agent, self.dctx, self.prof = agent, dctx, prof
        self.sent_tensors = []
        self.send_id = None
        self.recv = {}

    def on_send_tensor(self, t):
        if self.dctx is None:
            return None
        if self.send_id is None:
            self.send_id = self.dctx.new_send(self.sent_tensors)
        self.sent_tensors.append(t)
        return (self.dctx.context_id, self.send_id, len(self.sent_tensors) - 1)

    def on_recv_tensor(self, t, grad, src):
        if grad is None:
            t.requires_grad_(True)
            return
        from ..autograd import _context
        _context.attach_recv(self, t, grad, src)

    def rref_from_wire(self, info, src):
        from . import rref
        return rref.from_wire(self.agent, info)


def _dist_ctx(context_id, src=None):
    from ..autograd import _context
    return _context.lookup(context_id, create=True, peer=src) if context_id is not None else None


def _current_ctx():
    from ..autograd import _context
    return _context.current()


# -- handlers (server side) --------------------------------------------------------
def _run_user(agent, fn, args, kwargs, dctx, on_done, prof_key=None):
    """Run fn; call on_done(value, exc) now or, for async_execution, when its Future completes."""
    from ..autograd import _context
    from . import _profiling
    prev = _context.set_current(dctx)
    rec = _profiling.start_remote(prof_key)
    try:
        result = fn(*args, **(kwargs or {}))
    except Exception as e:
        _context.set_current(prev)
        on_done(None, e, _profiling.stop_remote(rec))
        return
    _context.set_current(prev)
    if getattr(fn, "_wrapped_async_rpc_function", None) is not None:
        if not isinstance(result, Future):
            on_done(None, TypeError(f"function {getattr(fn, '__name__', fn)} is marked "
                                    f"@async_execution but returned "
                                    f"{type(result).__name__}, not a Future"),
                    _profiling.stop_remote(rec))
            return
        events = _profiling.stop_remote(rec)

        def finish(f):
            if f._exc is not None:
                on_done(None, f._exc, events)
            else:
                on_done(f._value, None, events)
        result.add_done_callback(finish)
    else:
        on_done(result, None, _profiling.stop_remote(rec))


def _handle_call(agent, src, mid, meta, payload):
    ctx_id, prof_key = meta
    dctx = _dist_ctx(ctx_id, src)
    fn, args, kwargs = _wire.loads(payload, src, _Hooks(agent, dctx))

    def done(value, exc, events):
        try:
            if exc is None:
                frames = _wire.dumps((value, events), src, _Hooks(agent, dctx))
                agent.respond(src, mid, frames)
            else:
                agent.respond(src, mid, exc=exc)
        except Exception as e:
            agent.respond(src, mid, exc=e)
        finally:
            agent.done_serving()
    _run_user(agent, fn, args, kwargs, dctx, done, prof_key)


def _remote_inline(agent, src, mid, meta):
    from . import rref
    rid, fork = meta[0], meta[1]
    rref.fork_change(rid, fork, 1, create=True)
    agent.respond(src, mid, [pickle.dumps((None, None))])


def _handle_remote(agent, src, mid, meta, payload):
    from . import rref
    rid, _, ctx_id, prof_key = meta
    e = rref.touch(rid)
    try:
        dctx = _dist_ctx(ctx_id, src)
        fn, args, kwargs = _wire.loads(payload, src, _Hooks(agent, dctx))
    except Exception as exc:
        e.fut.set_exception(exc)
        agent.done_serving()
        return

    def done(value, exc, events):
        if exc is None:
            e.fut.set_result(value)
        else:
            e.fut.set_exception(exc)
        agent.done_serving()
    _run_user(agent, fn, args, kwargs, dctx, done, prof_key)


def _handle_fetch(agent, src, mid, meta, payload):
    from . import rref
    rid, ctx_id = meta
    e = rref.touch(rid)
    dctx = _dist_ctx(ctx_id, src)     # a fetch inside a context records the send

    def done(f):
        try:
            if f._exc is not None:
                agent.respond(src, mid, exc=f._exc)
            else:
                agent.respond(src, mid, _wire.dumps((f._value, None), src, _Hooks(agent, dctx)))
        except Exception as exc:
            agent.respond(src, mid, exc=exc)
        finally:
            agent.done_serving()
    e.fut.add_done_callback(done)


def _handle_bwd(agent, src, mid, meta, payload):
    from ..autograd import _context
    ctx_id, send_id, retain_graph = meta
    grads = _wire.loads(payload, src, _Hooks(agent))
    fut = _context.backward_from_send(ctx_id, send_id, grads, retain_graph)

    def done(f):
        if f._exc is not None:
            agent.respond(src, mid, exc=f._exc)
        else:
            agent.respond(src, mid, _wire.dumps((None, None), src, _Hooks(agent)))
        agent.done_serving()
    fut.add_done_callback(done)


def _fork_add_inline(agent, src, mid, meta):
    from . import rref
    rref.fork_change(meta[0], meta[1], 1)


def _fork_del_inline(agent, src, mid, meta):
    from . import rref
    rref.fork_change(meta[0], meta[1], -1)


def _ctx_del_inline(agent, src, mid, meta):
    from ..autograd import _context       # pass it on: nested RPCs reached other workers;
    _context.release(meta, notify=True)   # a worker that already released it stops the wave


def _decode_response(agent):
    def decode(payload, src, keep):
        value, events = _wire.loads(payload, src, _Hooks(agent, keep[0] if keep else None))
        if keep and keep[1] is not None:   # before the Future completes: the caller's
            from . import _profiling       # profiler may stop right after wait()
            if events:
                _profiling.add_remote_events(keep[1], events)
            _profiling.end_call(keep[1])
        return value
    return decode


# -- init / shutdown ------------------------------------------------------------------
def _bind_host(init_method):
    """Loopback unless the rendezvous address is another interface of this machine."""
    url = urlparse(init_method)
    host = None
    if url.scheme == "env":
        import os
        host = os.environ.get("MASTER_ADDR")
    elif url.scheme == "tcp":
        host = url.hostname
    if not host:
        return "127.0.0.1"
    try:
        addr = socket.gethostbyname(host)
        if ipaddress.ip_address(addr).is_loopback:
            return "127.0.0.1"
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((addr, 9))
            return s.getsockname()[0]
    except OSError:
        return "127.0.0.1"


def init_rpc(name, backend=None, rank=-1, world_size=None, rpc_backend_options=None):
    """Join the RPC group: rendezvous, publish this worker's address, start the agent."""
    global _agent, _store
    if backend is not None and not isinstance(backend, BackendType):
        raise TypeError("Argument backend must be a member of BackendType")
    if not isinstance(name, str) or not name:
        raise ValueError(f"Worker name must be a non-empty string, got {name!r}")
    opts = rpc_backend_options or TensorPipeRpcBackendOptions()
    with _init_lock:
        if _agent is not None:
            raise RuntimeError("RPC is already initialized")
        store, rank, world_size = next(rendezvous(
            opts.init_method, rank=rank, world_size=-1 if world_size is None else world_size,
            timeout=timedelta(seconds=max(opts.rpc_timeout, 60))))
        store = PrefixStore("rpc", store)
        zctx = zmq.Context.instance()
        router = zctx.socket(zmq.ROUTER)
        router.setsockopt(zmq.RCVHWM, 0)
        router.setsockopt(zmq.LINGER, 0)
        host = _bind_host(opts.init_method)
        port = router.bind_to_random_port(f"tcp://{host}")
        if rank == 0:
            store.set("token", secrets.token_bytes(32))
        token = store.get("token")
        store.set(f"worker/{rank}", pickle.dumps((name, f"tcp://{host}:{port}")))
        store.wait([f"worker/{r}" for r in range(world_size)])
        infos = {r: pickle.loads(store.get(f"worker/{r}")) for r in range(world_size)}
        names = {r: n for r, (n, _) in infos.items()}
        if len(set(names.values())) != world_size:
            router.close(0)
            raise RuntimeError(f"RPC worker names must be unique, got {sorted(names.values())}")
        agent = Agent(name, rank, world_size, token, {r: a for r, (_, a) in infos.items()},
                      names, router, zctx, opts.num_worker_threads, opts.rpc_timeout)
        agent.ids = {n: r for r, n in names.items()}
        agent.decode_response = _decode_response(agent)
        h = agent.handlers
        h[CALL] = lambda *a: _handle_call(agent, *a)
        h[REMOTE] = lambda *a: _handle_remote(agent, *a)
        h[FETCH] = lambda *a: _handle_fetch(agent, *a)
        h[BWD] = lambda *a: _handle_bwd(agent, *a)
        inl = agent.inline_handlers
        inl[REMOTE] = lambda *a: _remote_inline(agent, *a)
        inl[FORK_ADD] = lambda *a: _fork_add_inline(agent, *a)
        inl[FORK_DEL] = lambda *a: _fork_del_inline(agent, *a)
        inl[CTX_DEL] = lambda *a: _ctx_del_inline(agent, *a)
        # published before serving: a request handled the moment the agent starts may run
        # user code that makes RPC calls itself (an observer calling back its agent)
        _agent, _store = agent, store
        try:
            agent.start()
        except BaseException:
            _agent = _store = None
            raise


def _all_workers_idle(agent, store, timeout):
    """Rounds of (sent, received) totals until two rounds agree and nothing is in flight."""
    prev, r = None, 0
    end = time.monotonic() + timeout
    keys = None
    while True:
        agent.wait_idle(max(0.0, end - time.monotonic()))
        sent, recv = agent.counts()
        store.set(f"shutdown/{r}/{agent.rank}", f"{sent},{recv}")
        keys = [f"shutdown/{r}/{k}" for k in range(agent.world_size)]
        store.wait(keys, timedelta(seconds=max(1.0, end - time.monotonic())))
        tot = [0, 0]
        for k in keys:
            s, v = store.get(k).decode().split(",")
            tot[0] += int(s)
            tot[1] += int(v)
        if tot[0] == tot[1] and tot == prev:
            return
        prev, r = tot, r + 1


def shutdown(graceful=True, timeout=0):
    """Stop the agent; graceful waits until no worker has outstanding work."""
    global _agent, _store
    agent, store = _agent, _store
    if agent is None:
        return
    try:
        if graceful:
            _all_workers_idle(agent, store, timeout or 300.0)
            store.set(f"exit/{agent.rank}", b"1")
            if agent.rank == 0:   # the store server lives here: let everyone finish with it
                store.wait([f"exit/{k}" for k in range(agent.world_size)])
    finally:
        _agent = _store = None
        from ..autograd import _context
        _context.clear_all()
        agent.stop()


def get_worker_info(worker_name=None):
    agent = _require_agent()
    if worker_name is None:
        return WorkerInfo(agent.name, agent.rank)
    if worker_name not in agent.ids:
        raise RuntimeError(f"Unknown destination worker {worker_name}")
    return WorkerInfo(worker_name, agent.ids[worker_name])


def _to_rank(agent, to):
    if isinstance(to, WorkerInfo):
        return to.id
    if isinstance(to, str):
        if to not in agent.ids:
            raise RuntimeError(f"Unknown destination worker {to}")
        return agent.ids[to]
    if isinstance(to, int) and 0 <= to < agent.world_size:
        return to
    raise ValueError(f"Cannot resolve RPC destination {to!r}")


def _timeout(agent, timeout):
    return agent.rpc_timeout if timeout is None or timeout == UNSET_RPC_TIMEOUT else timeout


def rpc_async(to, func, args=None, kwargs=None, timeout=UNSET_RPC_TIMEOUT):
    """Run func(*args, **kwargs) on `to`; returns a Future of the result."""
    return _call(to, func, args, kwargs, timeout, "rpc_async")


def _call(to, func, args, kwargs, timeout, kind):
    from . import _profiling
    agent = _require_agent()
    dst = _to_rank(agent, to)
    if not callable(func):
        raise TypeError(f"function should be callable, got {type(func).__name__}")
    dctx = _current_ctx()
    prof = _profiling.begin_call(kind, func, agent, dst)
    frames = _wire.dumps((func, tuple(args or ()), dict(kwargs or {})), dst, _Hooks(agent, dctx))
    fut = agent.request(dst, CALL, (dctx.context_id if dctx else None,
                                    prof.key if prof else None),
                        frames, _timeout(agent, timeout), keep=(dctx, prof))
    if dctx is not None:
        dctx.peers.add(dst)
    return fut


def rpc_sync(to, func, args=None, kwargs=None, timeout=UNSET_RPC_TIMEOUT):
    """rpc_async(...).wait()."""
    return _call(to, func, args, kwargs, timeout, "rpc_sync").wait()


def remote(to, func, args=None, kwargs=None, timeout=UNSET_RPC_TIMEOUT):
    """Run func on `to` and keep the result there; returns an RRef to it."""
    from . import _profiling
    from . import rref as _rref
    agent = _require_agent()
    dst = _to_rank(agent, to)
    if not callable(func):
        raise TypeError(f"function should be callable, got {type(func).__name__}")
    dctx = _current_ctx()
    prof = _profiling.begin_call("remote", func, agent, dst)
    rid = (agent.rank, next(_rref._fork_ids))
    fork = _rref.new_fork_id(agent.rank)
    frames = _wire.dumps((func, tuple(args or ()), dict(kwargs or {})), dst, _Hooks(agent, dctx))
    if dctx is not None:
        dctx.peers.add(dst)
    if dst == agent.rank:       # the REMOTE message to ourselves does the counting
        r = _rref.RRef._make(agent, dst, rid, fork, _rref.touch(rid), True)
    else:
        r = _rref.RRef._make(agent, dst, rid, fork, None, False)
    r._created = agent.request(dst, REMOTE, (rid, fork, dctx.context_id if dctx else None,
                                             prof.key if prof else None),
                               frames, _timeout(agent, timeout))
    if prof is not None:
        r._created.add_done_callback(lambda f: _profiling.end_call(prof))
    return r


def _fetch(agent, rref, timeout):
    dctx = _current_ctx()
    if dctx is not None:
        dctx.peers.add(rref._owner)
    return agent.request(rref._owner, FETCH, (rref._rid, dctx.context_id if dctx else None), (),
                         _timeout(agent, timeout), keep=(dctx, None))
