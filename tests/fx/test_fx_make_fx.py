"""make_fx (registry-op level tracing) against torch's make_fx."""
import numpy as np
import pytest

import ember
from ember.fx.experimental.proxy_tensor import make_fx

torch = pytest.importorskip("torch")
from torch.fx.experimental.proxy_tensor import make_fx as tmake_fx  # noqa: E402


def _f(x, y):
    z = (x * y).sin()
    return z.sum(), z[0], x


def _packets(gm):
    return [(n.op, n.name, n.target.overloadpacket.__name__ if n.op == "call_function"
             else n.target) for n in gm.graph.nodes]


@pytest.mark.parametrize("mode", ["real", "fake"])
def test_make_fx_matches_torch(mode):
    gm = make_fx(_f, tracing_mode=mode)(ember.randn(3), ember.randn(3))
    tgm = tmake_fx(_f, tracing_mode=mode)(torch.randn(3), torch.randn(3))
    assert _packets(gm) == _packets(tgm)
    assert "ember.ops.aten.mul.Tensor(x_1, y_1)" in gm.code
    val = [n for n in gm.graph.nodes if n.name == "select"][0].meta["val"]
    assert val.shape == () and val._fake
    x, y = ember.randn(3), ember.randn(3)
    for got, want in zip(gm(x, y), _f(x, y)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_make_fx_records_backward_and_constants():
    lin = ember.nn.Linear(3, 2)

    def step(x):
        loss = lin(x).relu().sum()
        return ember.autograd.grad(loss, [lin.weight])[0]
    gm = make_fx(step)(ember.randn(4, 3))
    names = [n.name for n in gm.graph.nodes]
    assert names[:3] == ["x_1", "_param_constant0", "_param_constant1"]
    targets = {n.target.overloadpacket.__name__ for n in gm.graph.nodes
               if n.op == "call_function"}
    assert {"linear", "relu", "sum"} <= targets and len(targets) > 4   # backward ops too
    x = ember.randn(4, 3)
    np.testing.assert_allclose(gm(x).detach().numpy(), step(x).detach().numpy(), rtol=1e-6)


def test_make_fx_fake_mode_computes_nothing_and_decomposes():
    from ember.ops._registry import REGISTRY

    def f(x):
        return ember.nn.functional.gelu(x) * 2
    gelu = REGISTRY["gelu"]
    gm = make_fx(f, tracing_mode="fake",
                 decomposition_table={gelu: lambda x, approximate="none":
                                      x * ember.sigmoid(1.702 * x)})(ember.randn(1000, 1000))
    packets = [n.target.overloadpacket.__name__ for n in gm.graph.nodes
               if n.op == "call_function"]
    assert "gelu" not in packets and "sigmoid" in packets
    assert tuple(gm.graph.find_nodes(op="placeholder")[0].meta["val"].shape) == (1000, 1000)
    t = ember.randn(5)
    np.testing.assert_allclose(gm(t).numpy(), (t * ember.sigmoid(1.702 * t) * 2).numpy(),
                               rtol=1e-6)
    with pytest.raises(NotImplementedError, match="symbolic"):
        make_fx(f, tracing_mode="symbolic")
