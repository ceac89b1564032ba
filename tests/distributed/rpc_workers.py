"""Per-rank programs for the RPC tests (importable by the child processes)."""
import os
import pickle
import sys
import threading
import time


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dist_workers import free_port, run_world  # noqa: E402,F401

from ember.distributed.rpc.functions import async_execution  # noqa: E402


def init(rank, ws, port, threads=4, timeout=20, hang_s=45, url=None):
    """Join the RPC world. Default rendezvous: a FileStore named after the harness's
    port and parent pid (no TCP port to race for when test runs overlap); basics uses
    env:// (MASTER_ADDR/MASTER_PORT) to cover the usual path."""
    import faulthandler

    import ember.distributed.rpc as rpc
    faulthandler.dump_traceback_later(hang_s, exit=True)   # a hung child shows where, then dies
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    if url is None:
        import tempfile
        url = f"file://{tempfile.gettempdir()}/ember_rpc_test_{os.getppid()}_{port}"
    opts = rpc.TensorPipeRpcBackendOptions(num_worker_threads=threads, rpc_timeout=timeout,
                                           init_method=url)
    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=ws, rpc_backend_options=opts)
    return rpc


def cleanup_stores():
    """Remove the FileStores `init` made for this process's children."""
    import glob
    import tempfile
    for f in glob.glob(f"{tempfile.gettempdir()}/ember_rpc_test_{os.getpid()}_*"):
        os.remove(f)


def mark(outdir, rank, obj=True):
    tmp = os.path.join(outdir, f".r{rank}")
    with open(tmp, "wb") as f:
        pickle.dump(obj, f)
    os.replace(tmp, os.path.join(outdir, f"ok{rank}"))


# -- functions run remotely ---------------------------------------------------------
def add_one(x):
    return x + 1


def raise_value_error(msg):
    raise ValueError(msg)


def slow_add(x, y, delay=0.05):
    time.sleep(delay)
    return x + y


def memory():
    import ember
    return ember.memory_allocated()


def owners_count():
    from ember.distributed.rpc import rref
    return len(rref._owners)


def rref_sum(rref):
    return rref.to_here().sum()


def rref_is_local(rref):
    return rref.is_owner(), rref.local_value().sum()


def pass_on(rref, to):
    import ember.distributed.rpc as rpc
    return rpc.rpc_sync(to, rref_sum, args=(rref,))


def die_soon():
    threading.Timer(0.2, lambda: os._exit(0)).start()
    return True


@async_execution
def async_relay(to, x):
    import ember.distributed.rpc as rpc
    return rpc.rpc_async(to, slow_add, args=(x, 1)).then(lambda f: f.value() * 2)


@async_execution
def async_chain(path, x):
    """a -> b -> c: each hop is async, no thread waits."""
    import ember.distributed.rpc as rpc
    if not path:
        from ember.futures import Future
        f = Future()
        f.set_result(x + 100)
        return f
    return rpc.rpc_async(path[0], async_chain, args=(path[1:], x + 1))


class Counter:
    def __init__(self, start):
        self.n = start

    def add(self, k):
        self.n += k
        return self.n

    def get(self):
        return self.n


class BatchUpdateParameterServer:
    """PyTorch's batch-RPC tutorial: the reply waits until every trainer has reported."""

    def __init__(self, batch_update_size):
        import ember
        self.model = ember.zeros(3)
        self.lock = threading.Lock()
        self.batch_update_size = batch_update_size
        self.curr = 0
        from ember.futures import Future
        self.future_model = Future()

    @staticmethod
    @async_execution
    def update_and_fetch(ps_rref, grad):
        from ember.futures import Future
        self = ps_rref.local_value()
        with self.lock:
            self.curr += 1
            self.model += grad
            fut = self.future_model
            if self.curr >= self.batch_update_size:
                self.curr = 0
                self.future_model = Future()
                fut.set_result(self.model.clone())
        return fut


# -- per-rank programs -------------------------------------------------------------
def basics(rank, ws, port, outdir):
    import ember
    rpc = init(rank, ws, port, url="env://")
    if rank == 0:
        x = ember.arange(6.0).reshape(2, 3)
        assert ember.equal(rpc.rpc_sync("worker1", ember.add, args=(x, 2)), x + 2)
        assert ember.equal(rpc.rpc_sync(1, add_one, args=(x,)), x + 1)
        fut = rpc.rpc_async(rpc.get_worker_info("worker1"), ember.matmul, args=(x, x.t()))
        assert ember.allclose(fut.wait(), x @ x.t()) and fut.done()
        assert ember.allclose(fut.then(lambda f: f.value() * 2).wait(), 2 * (x @ x.t()))
        futs = [rpc.rpc_async(f"worker{1 + i % (ws - 1)}", add_one, args=(ember.tensor(i),))
                for i in range(10)]
        import ember.futures as F
        assert [int(v) for v in F.wait_all(futs)] == list(range(1, 11))
        assert all(f.done() for f in F.collect_all(futs).wait())
        # dtypes, empty, non-contiguous, bfloat16 survive the wire
        for t in (ember.zeros(0, 3), x.t(), ember.ones(4, dtype=ember.bfloat16),
                  ember.tensor([1, 2], dtype=ember.int64), ember.tensor(3.5)):
            back = rpc.rpc_sync(1, ember.clone, args=(t,))
            assert back.dtype == t.dtype and back.shape == t.shape and ember.equal(back, t)
        # remote errors come back with their type and the remote traceback
        try:
            rpc.rpc_sync(1, raise_value_error, args=("bad thing",))
            raise AssertionError("no error")
        except ValueError as e:
            assert "bad thing" in str(e) and "worker1" in str(e)
        # timeout
        t0 = time.monotonic()
        try:
            rpc.rpc_sync(1, slow_add, args=(1, 2, 2.0), timeout=0.2)
            raise AssertionError("no timeout")
        except RuntimeError as e:
            assert "RPC ran for more than set timeout (200 ms)" in str(e)
        assert time.monotonic() - t0 < 1.5
        assert rpc.get_worker_info().name == "worker0" and rpc.get_worker_info().id == 0
        # remote / RRef
        rr = rpc.remote("worker1", ember.ones, args=(2, 2))
        assert not rr.is_owner() and rr.owner_name() == "worker1" and rr.owner().id == 1
        assert ember.equal(rr.to_here(), ember.ones(2, 2))
        assert rr.confirmed_by_owner()
        try:
            rr.local_value()
            raise AssertionError("local_value on a user")
        except RuntimeError as e:
            assert "owner" in str(e)
        c = rpc.remote("worker1", Counter, args=(5,))
        assert c.rpc_sync().add(3) == 8
        assert c.rpc_async().add(2).wait() == 10
        assert c.remote().get().to_here() == 10
        local = rpc.RRef(ember.full((3,), 2.0))
        assert local.is_owner() and local.to_here().sum().item() == 6.0
        assert rpc.rpc_sync(1, rref_sum, args=(local,)).item() == 6.0
        # a user RRef passed back to its owner becomes the owner's own reference
        assert rpc.rpc_sync(1, rref_is_local, args=(rr,))[0] is True
        if ws > 2:
            assert rpc.rpc_sync(2, pass_on, args=(rr, "worker1")).item() == 4.0
        # a remote error surfaces at to_here
        bad = rpc.remote(1, raise_value_error, args=("in remote",))
        try:
            bad.to_here()
            raise AssertionError("no error")
        except ValueError as e:
            assert "in remote" in str(e)
        keep = rr
    rpc.shutdown()
    if rank == 0:
        try:
            keep.to_here()
            raise AssertionError("RRef usable after shutdown")
        except RuntimeError as e:
            assert "shutdown" in str(e)
        try:
            rpc.rpc_sync(1, add_one, args=(1,))
            raise AssertionError("rpc after shutdown")
        except RuntimeError as e:
            assert "not been initialized" in str(e)
    mark(outdir, rank)


def refcount(rank, ws, port, outdir):
    """The owner frees a value once no user (including forks on other workers) holds it."""
    import gc

    import ember
    rpc = init(rank, ws, port)
    if rank == 0:
        base_mem = rpc.rpc_sync(1, memory)
        base_n = rpc.rpc_sync(1, owners_count)
        rrefs = [rpc.remote(1, ember.ones, args=(256, 1024)) for _ in range(4)]   # 4 x 1 MB
        for r in rrefs:
            r.to_here()
        assert rpc.rpc_sync(1, memory) >= base_mem + 4 * 2 ** 20
        # fork to worker2, which forks back to worker1 (the owner) and keeps a copy
        out = rpc.rpc_sync(2, pass_on, args=(rrefs[0], "worker1"))
        assert out.item() == 256 * 1024
        del rrefs, r
        gc.collect()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if (rpc.rpc_sync(1, memory) == base_mem
                    and rpc.rpc_sync(1, owners_count) == base_n):
                break
            time.sleep(0.05)
        else:
            raise AssertionError(f"owner memory {rpc.rpc_sync(1, memory)} != {base_mem}")
    # graceful shutdown waits for work still running on other workers
    late = rpc.rpc_async((rank + 1) % ws, slow_add, args=(rank, 1, 0.5))
    rpc.shutdown()
    assert late.done() and late.value() == rank + 1
    mark(outdir, rank)


def async_exec(rank, ws, port, outdir):
    import ember
    rpc = init(rank, ws, port, threads=2 if rank == 1 else 8)
    if rank == 0:
        futs = [rpc.rpc_async(1, async_relay, args=("worker2", ember.tensor(float(i))))
                for i in range(50)]
        vals = [f.wait().item() for f in futs]
        assert vals == [2.0 * (i + 1) for i in range(50)], vals
        assert rpc.rpc_sync(1, async_chain, args=(["worker2", "worker1", "worker2"], 0)) == 103
        ps = rpc.remote(1, BatchUpdateParameterServer, args=(ws,))
        # every worker (this one too) reports once; nobody gets the model before all did
        futs = [rpc.rpc_async(1, run_trainer, args=(ps, k)) for k in range(1, ws)]
        mine = rpc.rpc_sync(1, BatchUpdateParameterServer.update_and_fetch,
                            args=(ps, ember.ones(3)))
        assert ember.equal(mine, ember.full((3,), float(ws)))
        for f in futs:
            assert ember.equal(f.wait(), mine)
    rpc.shutdown()
    mark(outdir, rank)


@async_execution
def run_trainer(ps, k):
    import ember
    import ember.distributed.rpc as rpc
    return rpc.rpc_async(ps.owner(), BatchUpdateParameterServer.update_and_fetch,
                         args=(ps, ember.ones(3)))



def failures(rank, ws, port, outdir):
    """Unknown functions, malformed and unauthenticated messages, a dying worker."""
    import types

    import zmq

    import ember
    rpc = init(rank, ws, port, timeout=30)
    if rank == 0:
        from ember.distributed.rpc import api
        agent = api._agent
        ghost = types.ModuleType("ghost_module_only_on_worker0")
        exec("def f(x):\n    return x\n", ghost.__dict__)
        sys.modules[ghost.__name__] = ghost
        try:
            rpc.rpc_sync(1, ghost.f, args=(1,))
            raise AssertionError("unknown function ran")
        except Exception as e:
            assert "ghost_module_only_on_worker0" in str(e), e
        assert rpc.rpc_sync(1, add_one, args=(1,)) == 2       # still serving
        # raw messages to worker1: wrong token (a pickle that would create a file), garbage
        addr = pickle.loads(api._store.get("worker/1"))[1]
        flag = os.path.join(outdir, "pwned")
        evil = pickle.dumps(EvilReduce(flag))
        s = zmq.Context.instance().socket(zmq.DEALER)
        s.connect(addr)
        s.send_multipart([b"0" * 32, evil, evil])
        s.send_multipart([agent.token, b"not a pickle"])
        s.send_multipart([agent.token])
        time.sleep(0.3)
        s.close(0)
        assert not os.path.exists(flag)
        assert rpc.rpc_sync(1, rejected_count) >= 3
        assert rpc.rpc_sync(1, add_one, args=(2,)) == 3
        # a malformed body from a peer is an error to that caller
        fut = agent.request(1, api.CALL, (None, None), [b"garbage"])
        try:
            fut.wait()
            raise AssertionError("garbage body accepted")
        except Exception as e:
            assert "pickle" in str(e).lower() or "load" in str(e).lower(), e
        # worker2 dies with a call pending: the error comes well before the 30 s timeout
        slow = rpc.rpc_async(2, slow_add, args=(ember.ones(1), 1, 20.0))
        rpc.rpc_sync(2, die_soon)
        t0 = time.monotonic()
        try:
            slow.wait()
            raise AssertionError("no error from a dead worker")
        except RuntimeError as e:
            assert "worker2" in str(e) and "connection lost" in str(e), e
        assert time.monotonic() - t0 < 5
        mark(outdir, rank, time.monotonic() - t0)
    elif rank == 2:
        while True:
            time.sleep(1)
    else:
        while not os.path.exists(os.path.join(outdir, "ok0")):
            time.sleep(0.05)
        mark(outdir, rank)
    rpc.shutdown(graceful=False)


def rejected_count():
    from ember.distributed.rpc import api
    return api._agent.rejected


class EvilReduce:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def udf_with_ops(x, y):
    import ember
    return ember.mm(x, y).add(1)


def profiled(rank, ws, port, outdir):
    """RPCs under the profiler: the call event, and the remote ops with their node id."""
    import json

    import ember
    from ember.profiler import profile
    rpc = init(rank, ws, port)
    if rank == 0:
        x = ember.ones(3, 3)
        with profile() as prof:
            fut = rpc.rpc_async("worker1", udf_with_ops, args=(x, x))
            assert ember.equal(fut.wait(), ember.full((3, 3), 4.0))
            rpc.rpc_sync("worker1", ember.add, args=(x, 1))
        names = [e.name for e in prof.events()]
        call = "rpc_async#udf_with_ops(worker0 -> worker1)"
        assert call in names, names
        remote = [e for e in prof.events() if e.name.startswith(call + "#remote_op: ")]
        ops = {e.name.rsplit(": ", 1)[1] for e in remote}
        assert {"aten::mm", "aten::add"} <= ops, ops
        assert all(e.node_id == 1 for e in remote)
        assert all(e.node_id == -1 for e in prof.events() if "#remote_op" not in e.name)
        assert "rpc_sync#aten::add(worker0 -> worker1)" in names, names
        keys = {a.key for a in prof.key_averages()}
        assert call in keys and f"{call}#remote_op: aten::mm" in keys
        path = os.path.join(outdir, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)["traceEvents"]
        hits = [e for e in trace if e["name"] == f"{call}#remote_op: aten::mm"]
        assert hits and hits[0]["args"]["Node Id"] == 1
        os.remove(path)
    rpc.shutdown()
    mark(outdir, rank)
