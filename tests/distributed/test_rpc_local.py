"""ember.distributed.rpc in one process (a world of one calls itself through its sockets):
wire format, rendezvous URLs, binding, distributed autograd rules, API errors."""
import pickle

import numpy as np
import pytest

pytest.importorskip("zmq")

import ember  # noqa: E402
import ember.distributed.autograd as dist_autograd  # noqa: E402
import ember.distributed.rpc as rpc  # noqa: E402
from ember.distributed.rpc import _wire, api  # noqa: E402
from rpc_workers import add_one  # noqa: E402


def _opts(url):
    return rpc.TensorPipeRpcBackendOptions(init_method=url, rpc_timeout=20)


def test_self_calls_and_loopback_binding(world1):
    addr = pickle.loads(api._store.get("worker/0"))[1]
    assert addr.startswith("tcp://127.0.0.1:")
    x = ember.randn(3, 4)
    assert ember.equal(rpc.rpc_sync("solo", add_one, args=(x,)), x + 1)
    r = rpc.remote(0, ember.mul, args=(x, 2))
    assert r.is_owner() and ember.equal(r.to_here(), x * 2) and ember.equal(r.local_value(), x * 2)
    with pytest.raises(RuntimeError, match="Unknown destination worker nobody"):
        rpc.rpc_sync("nobody", add_one, args=(1,))
    with pytest.raises(RuntimeError, match="already initialized"):
        rpc.init_rpc("again", rank=0, world_size=1)
    with pytest.raises(RuntimeError, match="RRef can only be pickled inside an RPC"):
        pickle.dumps(r)
    with pytest.raises(Exception, match="lambda|local object|pickle"):
        rpc.rpc_sync(0, lambda v: v, args=(1,))


def test_wire_sends_raw_frames_without_pickling_data(world1):
    x = ember.arange(1000, dtype=ember.float32).reshape(10, 100)
    hooks = api._Hooks(api._agent)
    c0 = dict(_wire.COPIES)
    frames = _wire.dumps((x, {"t": x[:, 1]}), 0, hooks)
    assert len(frames) == 3 and len(frames[0]) < 400        # structure only
    assert np.shares_memory(frames[1], x.numpy())            # contiguous: no copy to send
    assert _wire.COPIES["send"] == c0["send"] + 1             # the strided column: one copy
    back, d = _wire.loads([bytes(f) for f in frames], 0, hooks)
    assert ember.equal(back, x) and ember.equal(d["t"], x[:, 1])
    assert _wire.COPIES["recv"] == c0["recv"] + 2
    back.add_(1)                                               # received tensors are writable
    with pytest.raises(RuntimeError, match="malformed RPC message"):
        _wire.loads([frames[0], b"short", frames[2]], 0, hooks)


def test_file_rendezvous(tmp_path):
    rpc.init_rpc("f0", rank=0, world_size=1,
                 rpc_backend_options=_opts(f"file://{tmp_path}/store"))
    try:
        assert rpc.rpc_sync("f0", add_one, args=(41,)) == 42
        assert rpc.get_worker_info() == rpc.WorkerInfo("f0", 0)
    finally:
        rpc.shutdown()


def test_dist_autograd_through_self_rpc_matches_local(world1):
    w = ember.randn(4, 3, requires_grad=True)
    x = ember.randn(2, 4)
    with dist_autograd.context() as cid:
        with pytest.raises(RuntimeError, match="Already have an autograd context"):
            dist_autograd.context().__enter__()
        y = rpc.rpc_sync(0, ember.matmul, args=(x, w))     # w crosses the wire and back
        assert y.grad_fn.name() == "torch::distributed::autograd::RecvRpcBackward"
        loss = (y.tanh() ** 2).sum()
        dist_autograd.backward(cid, [loss])
        grads = dist_autograd.get_gradients(cid)
        assert w.grad is None                                # in the context, not in .grad
        with pytest.raises(RuntimeError, match="scalars"):
            dist_autograd.backward(cid, [y])
    want = ember.autograd.grad((ember.matmul(x, w).tanh() ** 2).sum(), w)[0]
    assert list(grads) == [w] and ember.allclose(grads[w], want, atol=1e-6)
    with pytest.raises(RuntimeError, match="Could not find autograd context"):
        dist_autograd.get_gradients(cid)


def test_not_initialized():
    with pytest.raises(RuntimeError, match="RPC has not been initialized"):
        rpc.rpc_sync("x", add_one, args=(1,))
    with pytest.raises(RuntimeError, match="RPC has not been initialized"):
        rpc.RRef(1)
    with pytest.raises(TypeError, match="BackendType"):
        rpc.init_rpc("a", backend="zmq", rank=0, world_size=1)


def test_remote_module_forward_backward_and_optimizer(world1):
    from ember.distributed.nn import RemoteModule
    from ember.distributed.optim import DistributedOptimizer
    ember.manual_seed(0)
    rm = RemoteModule("solo/cpu", ember.nn.Linear, args=(4, 2))
    rm.get_module_rref().to_here()          # built (on a server thread) before reseeding
    ember.manual_seed(0)
    ref = ember.nn.Linear(4, 2)
    x = ember.randn(3, 4)
    assert ember.allclose(rm(x), ref(x)) and ember.allclose(rm.forward_async(x).wait(), ref(x))
    opt = DistributedOptimizer(ember.optim.SGD, rm.remote_parameters(), lr=0.5)
    with dist_autograd.context() as cid:
        dist_autograd.backward(cid, [rm(x).pow(2).sum()])
        opt.step(cid)
    ref_opt = ember.optim.SGD(ref.parameters(), lr=0.5)
    ref(x).pow(2).sum().backward()
    ref_opt.step()
    assert ember.allclose(rm(x), ref(x), atol=1e-6)
    with pytest.raises(ValueError, match="not supported for RemoteModule"):
        rm.parameters()
    with pytest.raises(ValueError, match="Could not parse remote_device"):
        RemoteModule("solo", ember.nn.Linear, args=(1, 1))
