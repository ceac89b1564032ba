"""Key-value stores for rendezvous: TCPStore, FileStore, HashStore, PrefixStore.

Note: these are what process groups and RPC agents use to find each other before any
collective can run, so they must work between processes that share nothing but an
address (TCPStore) or a file (FileStore). Semantics follow torch.distributed's stores:
`get`/`wait` block until the keys exist or the store's timeout passes (DistStoreError),
`add` keeps a decimal counter, `compare_set` swaps only on a match, values are bytes.
"""
import fcntl
import os
import socket
import struct
import threading
import time
import weakref
from datetime import timedelta

from ._errors import DistNetworkError, DistStoreError

__all__ = ["Store", "TCPStore", "FileStore", "HashStore", "PrefixStore"]

_DEFAULT_TIMEOUT = timedelta(seconds=300)


def _to_bytes(value, what="value"):
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (list, tuple)) and all(isinstance(v, int) for v in value):
        return bytes(value)
    raise TypeError(f"Store: {what} must be str or bytes, got {type(value).__name__}")


def _seconds(timeout):
    if timeout is None:
        return None
    if isinstance(timeout, timedelta):
        return timeout.total_seconds()
    return float(timeout)


def _timeout_error(seconds, keys):
    return DistStoreError(f"wait timeout after {int(seconds * 1000)}ms, keys: "
                          + ", ".join("/" + k for k in keys))


class Store:
    """Base class (torch.distributed.Store); subclasses implement the primitives."""

    def __init__(self, timeout=_DEFAULT_TIMEOUT):
        self._timeout = timeout if isinstance(timeout, timedelta) else \
            timedelta(seconds=float(timeout))

    @property
    def timeout(self):
        return self._timeout

    def set_timeout(self, timeout):
        self._timeout = timeout if isinstance(timeout, timedelta) else \
            timedelta(seconds=float(timeout))

    def _wait_s(self, timeout=None):
        return _seconds(self._timeout if timeout is None else timeout)

    # Convenience methods PyTorch also offers, written on the primitives.
    def multi_get(self, keys):
        return [self.get(k) for k in keys]

    def multi_set(self, keys, values):
        for k, v in zip(keys, values):
            self.set(k, v)

    def append(self, key, value):
        raise NotImplementedError(f"{type(self).__name__}.append is not implemented")


class _KV:
    """A thread-safe dict with blocking waits: the state of HashStore and TCPStore's server."""

    def __init__(self):
        self.data = {}
        self.cond = threading.Condition()

    def set(self, key, value):
        with self.cond:
            self.data[key] = value
            self.cond.notify_all()

    def wait(self, keys, seconds):
        deadline = None if seconds is None else time.monotonic() + seconds
        with self.cond:
            while not all(k in self.data for k in keys):
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self.cond.wait(left)
        return True

    def get(self, key, seconds):
        if not self.wait([key], seconds):
            raise _timeout_error(seconds, [key])
        with self.cond:
            return self.data[key]

    def add(self, key, amount):
        with self.cond:
            value = int(self.data.get(key, b"0")) + int(amount)
            self.data[key] = str(value).encode()
            self.cond.notify_all()
            return value

    def append(self, key, value):
        with self.cond:
            self.data[key] = self.data.get(key, b"") + value
            self.cond.notify_all()

    def compare_set(self, key, expected, desired):
        with self.cond:
            if key not in self.data:
                if expected == b"":
                    self.data[key] = desired
                    self.cond.notify_all()
                    return desired
                return expected
            if self.data[key] == expected:
                self.data[key] = desired
                self.cond.notify_all()
                return desired
            return self.data[key]

    def delete(self, key):
        with self.cond:
            return self.data.pop(key, None) is not None

    def num_keys(self):
        with self.cond:
            return len(self.data)

    def check(self, keys):
        with self.cond:
            return all(k in self.data for k in keys)


class HashStore(Store):
    """An in-process store (threads of one process share it)."""

    def __init__(self):
        super().__init__()
        self._kv = _KV()

    def set(self, key, value):
        self._kv.set(key, _to_bytes(value))

    def get(self, key):
        return self._kv.get(key, self._wait_s())

    def add(self, key, amount):
        return self._kv.add(key, amount)

    def append(self, key, value):
        self._kv.append(key, _to_bytes(value))

    def compare_set(self, key, expected_value, desired_value):
        return self._kv.compare_set(key, _to_bytes(expected_value), _to_bytes(desired_value))

    def delete_key(self, key):
        return self._kv.delete(key)

    def num_keys(self):
        return self._kv.num_keys()

    def check(self, keys):
        return self._kv.check(list(keys))

    def wait(self, keys, timeout=None):
        s = self._wait_s(timeout)
        if not self._kv.wait(list(keys), s):
            raise _timeout_error(s, list(keys))


# --------------------------------------------------------------------------- TCP wire format
# request: op byte, n parts (u32), then each part as u32 length + bytes; reply: status byte
# (0 ok, 1 timeout, 2 error) and parts in the same way.
_OPS = ("set", "get", "add", "cset", "del", "nkeys", "check", "wait", "append", "ping")


def _send_msg(sock, code, parts):
    head = struct.pack("<BI", code, len(parts))
    body = b"".join(struct.pack("<I", len(p)) + p for p in parts)
    sock.sendall(head + body)


def _recv_exact(sock, n):
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise ConnectionError("connection closed by peer")
        got += k
    return bytes(buf)


def _recv_msg(sock):
    code, n = struct.unpack("<BI", _recv_exact(sock, 5))
    parts = []
    for _ in range(n):
        (ln,) = struct.unpack("<I", _recv_exact(sock, 4))
        parts.append(_recv_exact(sock, ln) if ln else b"")
    return code, parts


class _TCPServer:
    """The master's key-value server: one thread per client connection."""

    def __init__(self, host, port):
        self.kv = _KV()
        self.sock = socket.create_server(("", port), reuse_port=False, backlog=512,
                                         family=socket.AF_INET)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True, name="TCPStore-server").start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        kv = self.kv
        try:
            while True:
                code, p = _recv_msg(conn)
                op = _OPS[code]
                status, out = 0, []
                try:
                    if op == "set":
                        kv.set(p[0].decode(), p[1])
                    elif op == "get":
                        s = float(p[1].decode())
                        if kv.wait([p[0].decode()], s):
                            out = [kv.data[p[0].decode()]]
                        else:
                            status = 1
                    elif op == "add":
                        out = [str(kv.add(p[0].decode(), int(p[1]))).encode()]
                    elif op == "cset":
                        out = [kv.compare_set(p[0].decode(), p[1], p[2])]
                    elif op == "del":
                        out = [b"1" if kv.delete(p[0].decode()) else b"0"]
                    elif op == "nkeys":
                        out = [str(kv.num_keys()).encode()]
                    elif op == "check":
                        out = [b"1" if kv.check([k.decode() for k in p]) else b"0"]
                    elif op == "wait":
                        status = 0 if kv.wait([k.decode() for k in p[1:]],
                                              float(p[0].decode())) else 1
                    elif op == "append":
                        kv.append(p[0].decode(), p[1])
                except Exception as e:      # reported to the client, server keeps going
                    status, out = 2, [f"{type(e).__name__}: {e}".encode()]
                _send_msg(conn, status, out)
        except (ConnectionError, OSError, struct.error):
            pass
        finally:
            conn.close()

    def close(self):
        try:            # shutdown wakes the thread blocked in accept (close alone does not)
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


_servers = {}            # port -> _TCPServer, shared by multi_tenant masters
_servers_lock = threading.Lock()


class TCPStore(Store):
    """A store served by the master process over TCP; every other process connects to it.

    Each thread uses its own connection, so a blocking `get` in one thread (an RPC agent
    waiting for a peer) never stalls another thread's `set`.
    """

    def __init__(self, host_name, port, world_size=None, is_master=False,
                 timeout=_DEFAULT_TIMEOUT, wait_for_workers=True, multi_tenant=False,
                 master_listen_fd=None, use_libuv=True):
        super().__init__(timeout)
        self.host = host_name
        self.libuvBackend = bool(use_libuv)
        self._server = None
        if is_master:
            with _servers_lock:
                if multi_tenant and port in _servers:
                    self._server = _servers[port]
                else:
                    try:
                        self._server = _TCPServer(host_name, port)
                    except OSError as e:
                        raise DistNetworkError(
                            f"The server socket has failed to listen on any local network "
                            f"address. port: {port}, useIpv6: 0, code: -98, name: EADDRINUSE, "
                            f"message: {e}") from e
                    if multi_tenant:
                        _servers[self._server.port] = self._server
            port = self._server.port
        self.port = port
        self._local = threading.local()
        self._socks = []
        self._socks_lock = threading.Lock()
        self._conn()
        if world_size is not None and world_size > 0:
            self.add("init/", 1)
            if is_master and wait_for_workers:
                self._wait_workers(world_size)

    def _wait_workers(self, world_size):
        limit = self._wait_s()
        deadline = time.monotonic() + limit
        while True:
            n = int(self._call("get", b"init/", b"0")[0])
            if n >= world_size:
                return
            if time.monotonic() > deadline:
                raise DistStoreError(f"Timed out after {int(limit)} seconds waiting for "
                                     f"clients. {n}/{world_size} clients joined.")
            time.sleep(0.01)

    def _conn(self):
        sock = getattr(self._local, "sock", None)
        if sock is not None:
            return sock
        limit = self._wait_s()
        deadline = time.monotonic() + limit
        while True:
            try:
                sock = socket.create_connection((self.host, self.port), timeout=max(0.1, min(
                    5.0, deadline - time.monotonic())))
                break
            except OSError as e:
                if time.monotonic() >= deadline:
                    raise DistNetworkError(
                        f"The client socket has timed out after {int(limit * 1000)}ms while "
                        f"trying to connect to ({self.host}, {self.port}).") from e
                time.sleep(0.05)
        sock.settimeout(None)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._local.sock = sock
        with self._socks_lock:
            self._socks.append(sock)
        return sock

    def _call(self, op, *parts):
        sock = self._conn()
        try:
            _send_msg(sock, _OPS.index(op), list(parts))
            status, out = _recv_msg(sock)
        except (ConnectionError, OSError) as e:
            raise DistNetworkError(f"TCPStore: connection to {self.host}:{self.port} broke "
                                   f"during '{op}': {e}") from e
        if status == 2:
            raise DistStoreError(out[0].decode())
        if status == 1:
            return None
        return out

    def set(self, key, value):
        self._call("set", key.encode(), _to_bytes(value))

    def get(self, key):
        s = self._wait_s()
        out = self._call("get", key.encode(), str(s).encode())
        if out is None:
            raise _timeout_error(s, [key])
        return out[0]

    def add(self, key, amount):
        return int(self._call("add", key.encode(), str(int(amount)).encode())[0])

    def append(self, key, value):
        self._call("append", key.encode(), _to_bytes(value))

    def compare_set(self, key, expected_value, desired_value):
        return self._call("cset", key.encode(), _to_bytes(expected_value),
                          _to_bytes(desired_value))[0]

    def delete_key(self, key):
        return self._call("del", key.encode())[0] == b"1"

    def num_keys(self):
        return int(self._call("nkeys")[0])

    def check(self, keys):
        return self._call("check", *[k.encode() for k in keys])[0] == b"1"

    def wait(self, keys, timeout=None):
        s = self._wait_s(timeout)
        if self._call("wait", str(s).encode(), *[k.encode() for k in keys]) is None:
            raise _timeout_error(s, list(keys))

    def _close(self):
        """Close this store's connections and, on the master, its server."""
        with self._socks_lock:
            for sock in self._socks:
                sock.close()
            self._socks = []
        self._local = threading.local()
        if self._server is not None:
            with _servers_lock:
                if _servers.get(self.port) is self._server:
                    del _servers[self.port]
            self._server.close()

    def __repr__(self):
        return f"TCPStore(host={self.host}, port={self.port}, master={self._server is not None})"


class FileStore(Store):
    """A store in one file shared by processes (an append-only log under an flock).

    Note: the file is removed when the last FileStore using it is destroyed (PyTorch's
    rule), so a `file://` rendezvous can reuse the path for the next run.
    """

    _USERS = "cleanup/"

    def __init__(self, file_name, world_size=-1):
        super().__init__()
        self.path = file_name
        self.world_size = world_size
        self._cache, self._offset, self._ino = {}, 0, None
        self._lock = threading.Lock()
        self._add_locked(self._USERS, 1)
        weakref.finalize(self, FileStore._release, file_name)

    @staticmethod
    def _release(path):
        try:
            tmp = FileStore.__new__(FileStore)
            Store.__init__(tmp)
            tmp.path, tmp._cache, tmp._offset, tmp._ino = path, {}, 0, None
            tmp._lock = threading.Lock()
            if tmp._add_locked(FileStore._USERS, -1) <= 0:
                os.remove(path)
        except OSError:
            pass

    # -- log access --------------------------------------------------------
    def _locked(self, fn):
        with self._lock:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                st = os.fstat(fd)
                if st.st_ino != self._ino or st.st_size < self._offset:
                    self._cache, self._offset, self._ino = {}, 0, st.st_ino
                if st.st_size > self._offset:
                    os.lseek(fd, self._offset, os.SEEK_SET)
                    self._replay(os.read(fd, st.st_size - self._offset))
                    self._offset = st.st_size
                return fn(fd)
            finally:
                os.close(fd)        # closing drops the flock

    def _replay(self, buf):
        i = 0
        while i + 9 <= len(buf):
            op, kl, vl = struct.unpack_from("<BII", buf, i)
            i += 9
            key = buf[i:i + kl].decode()
            val = buf[i + kl:i + kl + vl]
            i += kl + vl
            if op == 0:
                self._cache[key] = val
            else:
                self._cache.pop(key, None)

    def _write(self, fd, op, key, value=b""):
        k = key.encode()
        rec = struct.pack("<BII", op, len(k), len(value)) + k + value
        os.lseek(fd, 0, os.SEEK_END)
        os.write(fd, rec)
        self._offset += len(rec)
        if op == 0:
            self._cache[key] = value
        else:
            self._cache.pop(key, None)

    def _add_locked(self, key, amount):
        def fn(fd):
            value = int(self._cache.get(key, b"0")) + int(amount)
            self._write(fd, 0, key, str(value).encode())
            return value
        return self._locked(fn)

    # -- API ---------------------------------------------------------------
    def set(self, key, value):
        v = _to_bytes(value)
        self._locked(lambda fd: self._write(fd, 0, key, v))

    def get(self, key):
        self.wait([key])
        return self._locked(lambda fd: self._cache[key])

    def add(self, key, amount):
        return self._add_locked(key, amount)

    def append(self, key, value):
        v = _to_bytes(value)
        self._locked(lambda fd: self._write(fd, 0, key, self._cache.get(key, b"") + v))

    def compare_set(self, key, expected_value, desired_value):
        e, d = _to_bytes(expected_value), _to_bytes(desired_value)

        def fn(fd):
            cur = self._cache.get(key)
            if (cur is None and e == b"") or cur == e:
                self._write(fd, 0, key, d)
                return d
            return e if cur is None else cur
        return self._locked(fn)

    def delete_key(self, key):
        # PyTorch's FileStore answers True even for a missing key.
        return self._locked(lambda fd: self._write(fd, 1, key) or True)

    def num_keys(self):
        return self._locked(lambda fd: len(self._cache))

    def check(self, keys):
        return self._locked(lambda fd: all(k in self._cache for k in keys))

    def wait(self, keys, timeout=None):
        s = self._wait_s(timeout)
        deadline = time.monotonic() + s
        delay = 0.001
        while not self.check(keys):
            if time.monotonic() >= deadline:
                raise _timeout_error(s, list(keys))
            time.sleep(delay)
            delay = min(delay * 2, 0.02)


class PrefixStore(Store):
    """Puts `prefix/` in front of every key of an underlying store (one namespace each)."""

    def __init__(self, prefix, store):
        super().__init__(store.timeout)
        self._prefix = prefix
        self.underlying_store = store

    def _k(self, key):
        return f"{self._prefix}/{key}"

    @property
    def timeout(self):
        return self.underlying_store.timeout

    def set_timeout(self, timeout):
        self.underlying_store.set_timeout(timeout)

    def set(self, key, value):
        self.underlying_store.set(self._k(key), value)

    def get(self, key):
        return self.underlying_store.get(self._k(key))

    def add(self, key, amount):
        return self.underlying_store.add(self._k(key), amount)

    def append(self, key, value):
        self.underlying_store.append(self._k(key), value)

    def compare_set(self, key, expected_value, desired_value):
        return self.underlying_store.compare_set(self._k(key), expected_value, desired_value)

    def delete_key(self, key):
        return self.underlying_store.delete_key(self._k(key))

    def num_keys(self):
        return self.underlying_store.num_keys()

    def check(self, keys):
        return self.underlying_store.check([self._k(k) for k in keys])

    def wait(self, keys, timeout=None):
        if timeout is None:
            self.underlying_store.wait([self._k(k) for k in keys])
        else:
            self.underlying_store.wait([self._k(k) for k in keys], timeout)
