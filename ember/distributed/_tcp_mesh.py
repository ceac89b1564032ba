"""A full mesh of TCP connections between the ranks of one process group.

Note: every connection has a reader thread that drains incoming frames into a mailbox
keyed by (kind, a, b) — (collective sequence number, step) or (p2p tag, count). Because
readers always drain, a rank's blocking `sendall` can never deadlock against a peer that
is itself sending, and the worker thread just sends and then takes what it needs.
A reader that sees EOF marks its peer dead, which fails every wait on that peer at once
(a SIGKILLed rank is noticed by all ranks it was connected to). Each rank also tells its
peers when it starts a collective (an ENTER frame), so a timeout can name the ranks that
never reached the collective. Tensors travel as raw bytes (a memoryview of the array).
A collective can `post` where a frame should land before it arrives: the reader then
receives it straight into the destination (or into one reused per-peer scratch buffer and
reduces it into the destination), so large transfers allocate nothing and the reduction
overlaps the worker's sends; a frame that arrives before its post takes the mailbox path.
"""
import atexit
import collections
import os
import socket
import struct
import threading
import time
import weakref

import numpy as np

from ._errors import DistBackendError, DistNetworkError

__all__ = ["Mesh", "COLL", "P2P", "ENTER", "CTRL", "BYE", "DONE"]

_live_meshes = weakref.WeakSet()


@atexit.register
def _say_goodbye():
    for mesh in list(_live_meshes):
        mesh.goodbye()

COLL, P2P, ENTER, CTRL, BYE = 1, 2, 3, 4, 5
_HDR = struct.Struct("<BqqQ")       # kind, a, b, nbytes
DONE = object()     # mailbox entry: a posted frame already landed in its destination


def _recv_into(sock, view):
    got, n = 0, len(view)
    while got < n:      # MSG_WAITALL: one syscall (one GIL round trip) per frame
        k = sock.recv_into(view[got:], n - got, socket.MSG_WAITALL)
        if k == 0:
            raise ConnectionError("connection closed")
        got += k


class _Peer:
    def __init__(self, mesh, rank, sock):
        self.mesh, self.rank, self.sock = mesh, rank, sock
        self.mailbox = collections.defaultdict(collections.deque)
        self.cond = threading.Condition()
        self.send_lock = threading.Lock()
        self.dead = None          # reason string once the connection is gone
        self.entered = -1         # highest collective sequence number the peer started
        self.recv_hooks = {}      # (kind, a, b) -> callable(buf): irecv completion
        self.said_bye = False     # the peer shut down on purpose (not a crash)
        self.posted = {}          # (kind, a, b) -> (dest array, reduce fn or None)
        self.scratch = np.empty(0, np.uint8)
        self.reader = threading.Thread(target=self._read, daemon=True,
                                       name=f"ember-dist-reader-{rank}")
        self.reader.start()

    def _read(self):
        hdr = bytearray(_HDR.size)
        try:
            while True:
                _recv_into(self.sock, memoryview(hdr))
                kind, a, b, n = _HDR.unpack(hdr)
                with self.cond:
                    post = self.posted.pop((kind, a, b), None)
                if post is not None and post[0].nbytes == n:
                    self._land(post, n)
                    with self.cond:
                        self.mailbox[(kind, a, b)].append(DONE)
                        self.cond.notify_all()
                    continue
                buf = np.empty(n, np.uint8)
                if n:
                    _recv_into(self.sock, memoryview(buf))
                if kind == BYE:
                    self.said_bye = True
                    continue
                with self.cond:
                    if kind == ENTER:
                        self.entered = max(self.entered, a)
                    else:
                        hook = self.recv_hooks.pop((kind, a, b), None)
                        if hook is not None:
                            hook(buf)
                        else:
                            self.mailbox[(kind, a, b)].append(buf)
                    self.cond.notify_all()
        except (ConnectionError, OSError) as e:
            with self.cond:
                if self.dead is None:
                    self.dead = f"rank {self.rank} closed its connection ({e})" \
                        if not self.mesh.closing else "process group destroyed"
                hooks, self.recv_hooks = self.recv_hooks, {}
                self.posted.clear()
                self.cond.notify_all()
            if not self.said_bye and not self.mesh.closing:
                self.mesh.peer_crashed(self.rank)
            for hook in hooks.values():
                hook(None)

    def _land(self, post, n):
        dest, f = post
        if f is None:
            _recv_into(self.sock, memoryview(dest.view(np.uint8)))
            return
        if self.scratch.nbytes < n:
            self.scratch = np.empty(n, np.uint8)
        _recv_into(self.sock, memoryview(self.scratch[:n]))
        f(dest, self.scratch[:n].view(dest.dtype), out=dest)

    def post(self, key, dest, f=None):
        """Have the frame `key` land in `dest` (1-D, contiguous): copied, or, with `f`,
        reduced into it as f(dest, frame, out=dest). take(key) then returns DONE."""
        with self.cond:
            if key not in self.mailbox:
                self.posted[key] = (dest, f)

    def send(self, kind, a, b, payload=None):
        data = b"" if payload is None else payload
        nbytes = data.nbytes if isinstance(data, np.ndarray) else len(data)
        try:
            with self.send_lock:
                self.sock.sendall(_HDR.pack(kind, a, b, nbytes))
                if nbytes:
                    self.sock.sendall(memoryview(data) if isinstance(data, np.ndarray)
                                      else data)
        except OSError as e:
            with self.cond:
                if self.dead is None:
                    self.dead = f"rank {self.rank} closed its connection ({e})"
            if not self.said_bye and not self.mesh.closing:
                self.mesh.peer_crashed(self.rank)
            raise DistBackendError(f"send to rank {self.rank} failed: {e}") from e

    def take(self, key, deadline, what):
        """The next frame for `key`; raises naming `what` on peer death or timeout."""
        with self.cond:
            while True:
                box = self.mailbox.get(key)
                if box:
                    buf = box.popleft()
                    if not box:
                        del self.mailbox[key]
                    return buf
                crashed = self.mesh.crashed
                if self.dead is not None or crashed:
                    reason = self.dead if self.dead is not None else \
                        f"rank {crashed[0]} died (connection lost)"
                    missing = sorted(set(crashed) | ({self.rank} if self.dead else set()))
                    raise DistBackendError(f"{what} failed: {reason}; missing ranks: "
                                           f"{missing}")
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(min(left, 1.0))


class Mesh:
    """Connections from this rank to every other rank of a group, set up through a store."""

    def __init__(self, store, rank, world_size, timeout_s):
        self.rank, self.size, self.timeout_s = rank, world_size, timeout_s
        self.closing = False
        self.peers = {}
        self.crashed = []         # ranks whose connection dropped without a goodbye
        if world_size == 1:
            return
        _live_meshes.add(self)
        host = _advertised_host(store)
        lsock = socket.create_server(("", 0), backlog=world_size + 8)
        lsock.settimeout(timeout_s)
        # a store reused by a later group (re-init) still holds old addresses: every rank
        # counts its own meshes on this store, so all ranks agree on a fresh key space
        gen = store.add(f"mesh/generation/{rank}", 1)
        key = f"mesh/{gen}/addr"
        store.set(f"{key}/{rank}", f"{host}:{lsock.getsockname()[1]}")
        deadline = time.monotonic() + timeout_s
        try:
            for j in range(rank):
                h, p = store.get(f"{key}/{j}").decode().rsplit(":", 1)
                sock = _connect(h, int(p), deadline)
                sock.sendall(struct.pack("<q", rank))
                self._add(j, sock)
            for _ in range(world_size - 1 - rank):
                sock, _ = lsock.accept()
                sock.settimeout(max(0.1, deadline - time.monotonic()))
                buf = bytearray(8)
                _recv_into(sock, memoryview(buf))
                self._add(struct.unpack("<q", buf)[0], sock)
        except socket.timeout as e:
            missing = [j for j in range(world_size) if j != rank and j not in self.peers]
            raise DistBackendError(f"[Rank {rank}] timed out after {timeout_s:.0f} s "
                                   f"connecting the process group; ranks {missing} did "
                                   f"not connect") from e
        finally:
            lsock.close()

    def _add(self, j, sock):
        sock.settimeout(None)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # a large send buffer; the receive buffer is left to the kernel's autotuning, which
        # grows past what SO_RCVBUF may set (rmem_max): more slack when a peer is descheduled
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
        except OSError:
            pass
        self.peers[j] = _Peer(self, j, sock)

    def peer_crashed(self, rank):
        """A peer vanished mid-run (killed): wake every wait of this group so it fails."""
        if rank not in self.crashed:
            self.crashed.append(rank)
        for p in list(self.peers.values()):
            with p.cond:
                p.cond.notify_all()

    def enter(self, seq):
        for p in self.peers.values():
            if p.dead is None:
                try:
                    p.send(ENTER, seq, 0)
                except DistBackendError:
                    pass

    def unpost(self, seq):
        """Drop the posts of collective `seq` (it failed): no late frame lands in its data."""
        for p in self.peers.values():
            with p.cond:
                for key in [k for k in p.posted if k[0] == COLL and k[1] == seq]:
                    del p.posted[key]

    def missing_for(self, seq):
        return [j for j, p in sorted(self.peers.items()) if p.entered < seq]

    def dead_peers(self):
        return [j for j, p in sorted(self.peers.items()) if p.dead is not None]

    def goodbye(self):
        """Tell peers this rank leaves on purpose, so they do not treat it as a crash."""
        for p in self.peers.values():
            if p.dead is None:
                try:
                    p.send(BYE, 0, 0)
                except DistBackendError:
                    pass

    def close(self, linger=5.0):
        """Leave gracefully: BYE, then half-close (our FIN follows every byte we sent) and
        keep reading until each peer closes too (at most `linger` seconds). Closing a
        socket with unread data sends RST, and a peer that receives it discards what it had
        not read yet — the last frames of a broadcast this rank just sent."""
        self.goodbye()
        self.closing = True
        for p in self.peers.values():
            try:
                p.sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        deadline = time.monotonic() + linger
        for p in self.peers.values():
            p.reader.join(max(0.0, deadline - time.monotonic()))
        for p in self.peers.values():
            p.sock.close()


def _connect(host, port, deadline):
    while True:
        try:
            return socket.create_connection((host, port), timeout=5)
        except OSError as e:
            if time.monotonic() > deadline:
                raise DistNetworkError(f"could not connect to {host}:{port}: {e}") from e
            time.sleep(0.05)


def _advertised_host(store):
    """The address peers should dial: EMBER_DIST_HOST, else the one that reaches the store."""
    if os.environ.get("EMBER_DIST_HOST"):
        return os.environ["EMBER_DIST_HOST"]
    base = store
    while hasattr(base, "underlying_store"):
        base = base.underlying_store
    conn = getattr(base, "_conn", None)
    if conn is not None:
        try:
            return conn().getsockname()[0]
        except OSError:
            pass
    return "127.0.0.1"
