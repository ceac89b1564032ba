"""PrivateUse1: a toy out-of-tree backend ("npu") defined here, as a user would write one.

Its memory is a separate pool (a bytearray per allocation, counted), handed to ember through
the allocator hook; its kernels are registered per op through ember._privateuse1.impl and run
NumPy on that memory (each counts its calls). An MLP trains end to end on it with the same
losses as on the cpu; moves between devices keep values and gradients; mixing devices raises
PyTorch's error; an op the backend lacks names itself.
"""
import collections

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember import _privateuse1 as pu1


class Pool:
    """The device's memory: every buffer comes from here and is given back on free."""

    def __init__(self):
        self.live = {}
        self.allocs = 0

    def alloc(self, nbytes, dev):
        buf = bytearray(nbytes)
        self.live[id(buf)] = nbytes
        self.allocs += 1
        return buf

    def free(self, buf, dev):
        self.live.pop(id(buf), None)

    @property
    def bytes_in_use(self):
        return sum(self.live.values())


POOL = Pool()
CALLS = collections.Counter()


class NpuModule:
    """The backend's runtime module (ember.npu)."""

    @staticmethod
    def is_available():
        return True

    @staticmethod
    def device_count():
        return 1

    @staticmethod
    def memory_allocated(device=None):
        return POOL.bytes_in_use


def _host_alias(t):
    """A cpu tensor over the device tensor's memory (the NumPy the kernels run)."""
    from ember._tensor import wrap
    c = wrap(pu1.array(t), t._dtype)
    c._storage = t._storage
    return c


def _kernel(op):
    """A kernel for `op` on the npu: ember's NumPy computation over device memory; fresh
    results are copied into the pool, views and in-place results stay device tensors."""
    def run(*args):
        CALLS[str(op.name)] += 1
        dev = next(t for t in pu1._tensors(args) if t._device.type == "npu")._device
        aliases = {}

        def host(a):
            if isinstance(a, ember.Tensor) and a._device.type == "npu":
                h = _host_alias(a)
                aliases[id(h)] = a
                return h
            if isinstance(a, (list, tuple)):
                return type(a)(host(x) for x in a)
            return a
        out = op.run_kernel(tuple(host(a) for a in args))
        first = next(iter(aliases.values()))

        def back(r):
            if not isinstance(r, ember.Tensor):
                return r
            if id(r) in aliases:                       # in place: the device tensor itself
                return aliases[id(r)]
            if op.view or any(np.shares_memory(r._data, pu1.array(t))
                              for t in aliases.values()):
                from ember._tensor import wrap_view
                arr = r._data.view(pu1.DeviceArray)
                arr._ember_device = dev
                return wrap_view(arr, first)
            return pu1.from_array(r._data, dev, r._dtype)
        if isinstance(out, (tuple, list)):
            return type(out)(back(r) for r in out)
        return back(out)
    return run


# the ops an MLP's training step reaches once composites decompose (linear, mse_loss,
# cross_entropy, ... need no kernel: the fallback runs their decompositions)
NPU_OPS = ["add", "sub", "mul", "div", "neg", "relu", "tanh", "exp", "log", "sum", "mean",
           "matmul", "mm", "addmm", "permute", "view", "_reshape_copy", "expand", "clone",
           "copy_", "full", "empty", "_to_copy", "threshold_backward", "where", "gt", "le",
           "lt", "ge", "eq", "amax", "max", "sub_", "add_", "mul_", "div_", "addcmul_",
           "addcdiv_", "sqrt", "fill_", "zero_", "unsqueeze", "squeeze", "select", "slice",
           "gather", "scatter", "log_softmax", "_log_softmax_backward_data", "nll_loss",
           "nll_loss_backward", "pow", "rsqrt", "sigmoid", "detach", "alias", "t",
           "transpose", "reshape", "sum_to_size", "maximum", "minimum", "abs", "sign",
           "lerp_", "square", "reciprocal", "argmax", "any", "all", "logical_not",
           "index_select", "cat", "stack", "_foreach_add_", "ne", "scatter_add", "softmax",
           "zeros_like"]


def _setup():
    if pu1.backend_name() != "npu":
        ember.utils.rename_privateuse1_backend("npu")
        ember._register_device_module("npu", NpuModule)
        ember.utils.generate_methods_for_privateuse1_backend()
        pu1.register_allocator(POOL.alloc, POOL.free)
        from ember.ops._registry import REGISTRY
        for name in NPU_OPS:
            op = REGISTRY.get(name)
            if op is not None:
                pu1.impl(name, _kernel(op))


_setup()


def test_names_and_generated_methods():
    x = ember.randn(3, 4)
    y = x.npu()
    assert y.is_npu and not x.is_npu
    assert y.device == ember.device("npu", 0) and str(y.device) == "npu:0"
    assert ember.npu.is_available() and ember.npu.device_count() == 1
    m = nn.Linear(4, 2).npu()
    assert all(p.is_npu for p in m.parameters())
    assert ember.device("npu:0").type == "npu"
    with pytest.raises(RuntimeError, match="already been set"):
        ember.utils.rename_privateuse1_backend("tpu2")
    z = ember.zeros(2, 3, device="npu")
    assert z.is_npu and z.cpu().tolist() == [[0.0] * 3] * 2


def test_values_survive_moves_and_memory_is_the_pools():
    x = ember.randn(5, 7, dtype=ember.float64)
    before = POOL.allocs
    y = x.to("npu")
    assert POOL.allocs == before + 1
    assert isinstance(y._data, pu1.DeviceArray)
    np.testing.assert_array_equal(y.cpu().numpy(), x.numpy())
    np.testing.assert_array_equal(y.to("cpu", ember.float32).numpy(),
                                  x.float().numpy())
    i = ember.arange(6).npu()
    assert i.dtype == ember.int64 and i.cpu().tolist() == list(range(6))
    in_use = POOL.bytes_in_use
    del y
    import gc
    gc.collect()
    assert POOL.bytes_in_use <= in_use - 5 * 7 * 8


def test_kernels_run_on_the_device_and_count_calls():
    CALLS.clear()
    a, b = ember.randn(3, 4), ember.randn(4, 2)
    out = (a.npu() @ b.npu()).relu() + 1
    assert out.is_npu
    np.testing.assert_allclose(out.cpu().numpy(), ((a @ b).relu() + 1).numpy(), rtol=1e-6)
    assert CALLS["matmul"] == 1 and CALLS["relu"] == 1 and CALLS["add"] == 1
    v = out.view(2, 3)                      # a view shares the device memory
    v.mul_(0)
    assert v.is_npu and out.cpu().abs().sum().item() == 0


def test_mixing_devices_raises_pytorchs_error():
    a = ember.randn(3).npu()
    b = ember.randn(3)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, "
                                           "but found at least two devices, npu:0 and cpu!"):
        ember.mm(a.view(1, 3), b.view(3, 1))
    with pytest.raises(RuntimeError, match="same device|expected device"):
        b * a
    with pytest.raises(RuntimeError, match="same device|expected device"):
        a + b
    assert (a + ember.tensor(2.0)).is_npu       # a cpu scalar tensor mixes, as in PyTorch


def test_missing_op_names_itself():
    x = ember.randn(4).npu()
    with pytest.raises(NotImplementedError, match="'aten::cumsum.*'npu' backend"):
        x.cumsum(0)


def _train(device, steps=5):
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    model = model.npu() if device == "npu" else model
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((32, 8)).astype(np.float32))
    y = ember.tensor(rng.integers(0, 3, 32))
    if device == "npu":
        x, y = x.npu(), y.npu()
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return model, losses


def test_mlp_trains_end_to_end_on_the_device():
    CALLS.clear()
    model, losses = _train("npu")
    _, cpu_losses = _train("cpu")
    assert all(p.is_npu and p.grad.is_npu for p in model.parameters())
    np.testing.assert_allclose(losses, cpu_losses, rtol=1e-5)
    assert losses[-1] < losses[0]
    assert CALLS["mm"] + CALLS["matmul"] + CALLS["addmm"] > 0
    back = model.cpu()
    assert not any(p.is_npu for p in back.parameters())


def test_gradients_flow_back_across_devices():
    x = ember.randn(3, requires_grad=True)
    y = (x.npu() * 2).sum()
    y.backward()
    assert not x.grad.is_npu
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 2.0, np.float32))
