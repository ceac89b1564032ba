"""RRef: a reference to a value owned by one worker, with reference counting.

Note (the fork protocol): every RRef object is a *fork* with its own id; the owner
keeps, per value, a count per fork id and deletes the value when all counts reach
zero. Passing an RRef in a message creates a child fork: the owner counts it at once
when it is the sender, otherwise the sender queues FORK_ADD(child) to the owner before
the message itself, so on the sender->owner connection the add always precedes the
sender's own later FORK_DEL. A child's FORK_DEL may overtake its FORK_ADD (different
connections); counts may go negative for a moment, so the order does not matter.
Deletions are queued from __del__ to the agent's I/O thread (no lock in a finalizer).
"""
import itertools
import threading

from ...futures import Future
from . import api as _api

__all__ = ["RRef"]

_owners = {}                     # rref id -> _OwnerEntry (on the owner)
_owners_lock = threading.RLock()
_fork_ids = itertools.count(1)


class _OwnerEntry:
    __slots__ = ("fut", "forks", "created", "type")

    def __init__(self):
        self.fut = Future()
        self.forks = {}
        self.created = False
        self.type = None


def touch(rid):
    with _owners_lock:
        e = _owners.get(rid)
        if e is None:
            e = _owners[rid] = _OwnerEntry()
        return e


def fork_change(rid, fork, delta, create=False):
    with _owners_lock:
        e = touch(rid)
        if create:
            e.created = True
        c = e.forks.get(fork, 0) + delta
        if c:
            e.forks[fork] = c
        else:
            e.forks.pop(fork, None)
        if not e.forks and e.created:
            del _owners[rid]
        return e


def new_fork_id(rank):
    return (rank, next(_fork_ids))


class RRef:
    """RRef(value) makes a local (owner) reference; rpc.remote returns user references."""

    def __init__(self, value, type_hint=None):
        agent = _api._require_agent()
        rid = (agent.rank, next(_fork_ids))
        fork = new_fork_id(agent.rank)
        e = fork_change(rid, fork, 1, create=True)
        e.fut.set_result(value)
        self._setup(agent, agent.rank, rid, fork, e, True)

    @classmethod
    def _make(cls, agent, owner, rid, fork, entry, confirmed):
        r = cls.__new__(cls)
        r._setup(agent, owner, rid, fork, entry, confirmed)
        return r

    def _setup(self, agent, owner, rid, fork, entry, confirmed):
        self._agent, self._owner, self._rid, self._fork = agent, owner, rid, fork
        self._entry = entry                  # set on the owner only
        self._confirmed = confirmed
        self._created = None                 # Future of the owner's ack (remote())

    # -- identity -----------------------------------------------------------------
    def _live_agent(self):
        if self._agent is None or self._agent is not _api._agent:
            raise RuntimeError(f"RRef {self._rid} used after RPC shutdown (or from another RPC "
                               "session); an RRef is valid only while the RPC agent that made "
                               "it is running")
        return self._agent

    def is_owner(self):
        return self._entry is not None

    def owner(self):
        a = self._live_agent()
        return _api.WorkerInfo(a.names[self._owner], self._owner)

    def owner_name(self):
        return self._live_agent().names[self._owner]

    def confirmed_by_owner(self):
        if not self._confirmed and self._created is not None and self._created.done():
            self._confirmed = self._created._exc is None
        return self._confirmed

    # -- values -------------------------------------------------------------------
    def local_value(self):
        if self._entry is None:
            raise RuntimeError(f"Call it on owner worker. Current worker is "
                               f"{self._live_agent().name}, but the owner is "
                               f"{self.owner_name()}. (RRef.local_value)")
        return self._entry.fut.wait()

    def to_here(self, timeout=-1.0):
        a = self._live_agent()
        if self._entry is not None:
            return self._entry.fut.wait()
        return _api._fetch(a, self, timeout).wait()

    def _get_future(self):
        a = self._live_agent()
        if self._entry is not None:
            return self._entry.fut
        return _api._fetch(a, self, -1.0)

    def _get_type(self, timeout=-1.0, blocking=True):
        fut = _api.rpc_async(self._owner, _value_type, args=(self,), timeout=timeout)
        return fut.wait() if blocking else fut

    # -- proxies ------------------------------------------------------------------
    def rpc_sync(self, timeout=-1.0):
        return _Proxy(self, "rpc_sync", timeout)

    def rpc_async(self, timeout=-1.0):
        return _Proxy(self, "rpc_async", timeout)

    def remote(self, timeout=-1.0):
        return _Proxy(self, "remote", timeout)

    # -- forking ------------------------------------------------------------------
    def _fork_to(self, dst):
        """Called while pickling this RRef into a message for worker `dst`."""
        a = self._live_agent()
        child = new_fork_id(a.rank)
        if self._entry is not None:
            fork_change(self._rid, child, 1)
        else:
            a.send(self._owner, _api.FORK_ADD, 0, (self._rid, child))
        return (self._owner, self._rid, child)

    def __reduce__(self):
        raise RuntimeError("RRef can only be pickled inside an RPC call (as an argument or a "
                           "return value); to keep a value, fetch it with to_here()")

    def __del__(self):
        a = getattr(self, "_agent", None)
        if a is None or a is not _api._agent:
            return
        if self._entry is not None:
            a.defer(fork_change, self._rid, self._fork, -1)
        else:
            a.defer(a.send, self._owner, _api.FORK_DEL, 0, (self._rid, self._fork))

    def __repr__(self):
        kind = "OwnerRRef" if self._entry is not None else "UserRRef"
        return f"{kind}(RRefId = {self._rid}, ForkId = {self._fork})"


def from_wire(agent, info):
    owner, rid, child = info
    if owner == agent.rank:
        with _owners_lock:
            e = touch(rid)
        return RRef._make(agent, owner, rid, child, e, True)
    return RRef._make(agent, owner, rid, child, None, True)


def _value_type(rref):
    return type(rref.local_value())


def _invoke(rref, name, args, kwargs):
    return getattr(rref.local_value(), name)(*args, **kwargs)


def _invoke_async(rref, name, args, kwargs):
    return getattr(rref.local_value(), name)(*args, **kwargs)


_invoke_async._wrapped_async_rpc_function = _invoke_async


class _Proxy:
    """rref.rpc_sync().method(*args): runs value.method on the owner."""

    def __init__(self, rref, how, timeout):
        self._rref, self._how, self._timeout = rref, how, timeout

    def __getattr__(self, name):
        rref, how, timeout = self._rref, self._how, self._timeout

        def call(*args, **kwargs):
            fn = _invoke
            if rref.is_owner():
                method = getattr(type(rref.local_value()), name, None)
                if getattr(method, "_wrapped_async_rpc_function", None) is not None:
                    fn = _invoke_async
            else:       # ask the owner once per RRef and method name
                cache = rref.__dict__.setdefault("_async_methods", {})
                if name not in cache:
                    cache[name] = _api.rpc_sync(rref._owner, _is_async_method,
                                                args=(rref, name))
                if cache[name]:
                    fn = _invoke_async
            return getattr(_api, how)(rref._owner, fn, args=(rref, name, args, kwargs),
                                      timeout=timeout)
        return call


def _is_async_method(rref, name):
    method = getattr(type(rref.local_value()), name, None)
    return getattr(method, "_wrapped_async_rpc_function", None) is not None
