"""Rendezvous: turn an init URL into `(store, rank, world_size)` (torch.distributed.rendezvous).

Note: a handler is a generator, as in PyTorch, so a caller takes `next(rendezvous(url))`
and a re-rendezvous (elastic) could ask for the next one; the built-in handlers support
one rendezvous and raise on the second, like PyTorch's.
"""
import numbers
import os
from datetime import timedelta
from urllib.parse import parse_qsl, urlencode, urlparse, urlunparse

from ._store import FileStore, TCPStore

__all__ = ["register_rendezvous_handler", "rendezvous"]

default_pg_timeout = timedelta(minutes=30)

_rendezvous_handlers = {}


def register_rendezvous_handler(scheme, handler):
    """Register `handler(url, **kwargs)` (a generator of (store, rank, world_size))."""
    if scheme in _rendezvous_handlers:
        raise RuntimeError(f"Rendezvous handler for {scheme}:// already registered")
    _rendezvous_handlers[scheme] = handler


def rendezvous(url, rank=-1, world_size=-1, **kwargs):
    if not isinstance(url, (str, bytes)):
        raise RuntimeError(f"`url` must be a string. {type(url)}: {url}")
    if not isinstance(rank, numbers.Integral):
        raise RuntimeError(f"`rank` must be an integer. {rank}")
    if not isinstance(world_size, numbers.Integral):
        raise RuntimeError(f"`world_size` must be an integer. {world_size}")
    if isinstance(url, bytes):
        url = url.decode()
    result = urlparse(url)
    if rank != -1 or world_size != -1:
        query = dict(parse_qsl(result.query))
        if "rank" in query or "world_size" in query:
            raise ValueError(f"The url: {url} has node-specific arguments(rank, world_size) "
                             f"already.")
        if rank != -1:
            query["rank"] = str(rank)
        if world_size != -1:
            query["world_size"] = str(world_size)
        result = result._replace(query=urlencode(query))
        url = urlunparse(result)
    if result.scheme not in _rendezvous_handlers:
        raise RuntimeError(f"No rendezvous handler for {result.scheme}://")
    return _rendezvous_handlers[result.scheme](url, **kwargs)


def _query(url):
    return dict(parse_qsl(urlparse(url).query))


def _rendezvous_error(msg):
    return ValueError("Error initializing torch.distributed using " + msg)


def _rank_and_world_size(query, error):
    """file:// and tcp:// URLs must carry rank and world_size in their query."""
    if "rank" not in query:
        raise error("rank parameter missing")
    if "world_size" not in query:
        raise error("world size parameter missing")
    return int(query["rank"]), int(query["world_size"])


def _create_c10d_store(hostname, port, rank, world_size, timeout, use_libuv=True):
    if not 0 <= port < 2 ** 16:
        raise ValueError(f"port must have value from 0 to 65535 but was {port}.")
    return TCPStore(hostname, port, world_size, rank == 0, timeout, multi_tenant=True,
                    use_libuv=use_libuv)


def _file_rendezvous_handler(url, **kwargs):
    def error(msg):
        return _rendezvous_error("file:// rendezvous: " + msg)

    result = urlparse(url)
    path = result.path
    if not path:
        raise error("path missing")
    query = _query(url)
    rank, world_size = _rank_and_world_size(query, error)
    store = FileStore(path, world_size)
    yield (store, rank, world_size)
    raise RuntimeError("Unable to perform rerendezvous using file:// method")


def _tcp_rendezvous_handler(url, timeout=default_pg_timeout, **kwargs):
    def error(msg):
        return _rendezvous_error("tcp:// rendezvous: " + msg)

    result = urlparse(url)
    if not result.port:
        raise error("port number missing")
    query = _query(url)
    rank, world_size = _rank_and_world_size(query, error)
    use_libuv = query.get("use_libuv", "1") == "1"
    store = _create_c10d_store(result.hostname, result.port, rank, world_size, timeout,
                               use_libuv)
    yield (store, rank, world_size)
    raise RuntimeError("Unable to perform re-rendezvous using tcp:// method")


def _env_rendezvous_handler(url, timeout=default_pg_timeout, **kwargs):
    def error(msg):
        return _rendezvous_error("env:// rendezvous: " + msg)

    def env_error(var):
        return error(f"environment variable {var} expected, but not set")

    def get_env(var):
        value = os.environ.get(var)
        if value is None:
            raise env_error(var)
        return value

    query = _query(url)
    rank = int(query["rank"]) if "rank" in query else int(get_env("RANK"))
    world_size = int(query["world_size"]) if "world_size" in query else \
        int(get_env("WORLD_SIZE"))
    master_addr = get_env("MASTER_ADDR")
    master_port = int(get_env("MASTER_PORT"))
    use_libuv = query.get("use_libuv", os.environ.get("USE_LIBUV", "1")) == "1"
    store = _create_c10d_store(master_addr, master_port, rank, world_size, timeout, use_libuv)
    yield (store, rank, world_size)
    raise RuntimeError("Unable to perform re-rendezvous using env:// method")


register_rendezvous_handler("tcp", _tcp_rendezvous_handler)
register_rendezvous_handler("env", _env_rendezvous_handler)
register_rendezvous_handler("file", _file_rendezvous_handler)
