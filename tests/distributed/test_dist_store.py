"""Stores and rendezvous: same results and error types as torch.distributed's stores."""
import os
import subprocess
import sys
import textwrap
from datetime import timedelta

import pytest

import ember.distributed as edist

torch = pytest.importorskip("torch")
tdist = torch.distributed
PY = sys.executable


def _script(store_expr, side):
    """The same sequence of calls on an ember or torch store; returns the observed results."""
    out = []
    s = store_expr(side)
    out.append(s.set("a", "x"))
    out.append(s.get("a"))
    out.append(s.add("c", 3))
    out.append(s.add("c", -1))
    out.append(s.get("c"))
    out.append(s.compare_set("z", "", "q"))
    out.append(s.compare_set("y", "e", "q"))
    out.append(s.compare_set("a", "x", "w"))
    out.append(s.compare_set("a", "x", "v"))
    out.append(s.check(["a", "c"]))
    out.append(s.check(["a", "nope"]))
    out.append(s.delete_key("a"))
    out.append(s.delete_key("a"))
    out.append(s.num_keys())
    out.append(s.set("b", b"\x00\xffbin"))
    out.append(s.get("b"))
    out.append(s.timeout)
    s.set_timeout(timedelta(milliseconds=200))
    for call in (lambda: s.get("never"), lambda: s.wait(["never"]),
                 lambda: s.wait(["never"], timedelta(milliseconds=100))):
        try:
            call()
            out.append("no error")
        except Exception as e:
            # torch's FileStore raises a plain RuntimeError; ember's DistStoreError is one
            out.append(isinstance(e, RuntimeError))
    return out


def _make(kind, tmp_path):
    def build(side):
        d = edist if side == "ember" else tdist
        if kind == "hash":
            return d.HashStore()
        if kind == "tcp":
            return d.TCPStore("127.0.0.1", 0, 1, True, timeout=timedelta(seconds=300))
        if kind == "file":
            return d.FileStore(str(tmp_path / f"fs_{side}"), 1)
        if kind == "prefix":
            return d.PrefixStore("pre", d.HashStore())
    return build


@pytest.mark.parametrize("kind", ["hash", "tcp", "file", "prefix"])
def test_store_semantics_match_torch(kind, tmp_path):
    assert _script(_make(kind, tmp_path), "ember") == _script(_make(kind, tmp_path), "torch")


def test_error_types_are_runtime_errors():
    assert issubclass(edist.DistStoreError, edist.DistError)
    assert issubclass(edist.DistError, RuntimeError)
    assert issubclass(edist.DistNetworkError, edist.DistError)


def test_tcpstore_connect_timeout_raises_network_error():
    with pytest.raises(edist.DistNetworkError, match="timed out"):
        edist.TCPStore("127.0.0.1", 1, 2, False, timeout=timedelta(seconds=0.3))


def test_prefix_store_namespaces_keys():
    base = edist.HashStore()
    p = edist.PrefixStore("pg", base)
    p.set("k", "v")
    assert base.get("pg/k") == b"v"
    assert p.underlying_store is base


_CHILD = textwrap.dedent("""
    import sys
    from datetime import timedelta
    import ember.distributed as dist
    url, rank = sys.argv[1], int(sys.argv[2])
    store, r, ws = next(dist.rendezvous(url, rank=rank, world_size=2,
                                        timeout=timedelta(seconds=20)))
    assert (r, ws) == (rank, 2), (r, ws)
    store.set(f"hello{rank}", f"from{rank}")
    other = store.get(f"hello{1 - rank}")
    n = store.add("count", 1)
    store.wait(["count"])
    print(other.decode(), n >= 1)
    if rank == 1:
        store.set("bye", "1")
    else:           # the master hosts the store: it leaves last
        store.wait(["bye"])
        import time
        time.sleep(0.5)
""")


@pytest.mark.parametrize("scheme", ["tcp", "file", "env"])
def test_rendezvous_between_processes(scheme, tmp_path):
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = {"tcp": f"tcp://127.0.0.1:{port}", "file": f"file://{tmp_path}/rdv",
           "env": "env://"}[scheme]
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    procs = [subprocess.Popen([PY, "-c", _CHILD, url, str(r)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for r in range(2)]
    outs = [p.communicate(timeout=60) for p in procs]
    for r, (p, (out, err)) in enumerate(zip(procs, outs)):
        assert p.returncode == 0, err
        assert out.split() == [f"from{1 - r}", "True"]


def test_env_rendezvous_missing_variable(monkeypatch):
    monkeypatch.delenv("MASTER_ADDR", raising=False)
    with pytest.raises(ValueError, match="MASTER_ADDR expected"):
        next(edist.rendezvous("env://", rank=0, world_size=1))


@pytest.mark.parametrize("url", ["file:///tmp/ember_rdzv_q?rank=0",
                                 "file:///tmp/ember_rdzv_q?world_size=1",
                                 "tcp://127.0.0.1:29999?rank=0",
                                 "tcp://127.0.0.1:29999?world_size=1"])
def test_url_rendezvous_missing_query_parameter(url):
    torch_dist = pytest.importorskip("torch.distributed")
    with pytest.raises(ValueError) as want:
        next(torch_dist.rendezvous(url))
    with pytest.raises(ValueError) as got:
        next(edist.rendezvous(url))
    assert str(got.value) == str(want.value)


def test_unknown_scheme():
    with pytest.raises(RuntimeError, match="No rendezvous handler for foo://"):
        edist.rendezvous("foo://x")


def test_filestore_file_removed_after_last_user(tmp_path):
    path = str(tmp_path / "fs")
    a = edist.FileStore(path, 2)
    b = edist.FileStore(path, 2)
    a.set("k", "v")
    assert b.get("k") == b"v"
    del a
    assert os.path.exists(path)
    del b
    assert not os.path.exists(path)
