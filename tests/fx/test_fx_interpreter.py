"""Interpreter, Transformer and ShapeProp against torch.fx on the same modules."""
import operator

import numpy as np
import pytest

import ember
from ember import fx
from ember.fx.passes.shape_prop import ShapeProp

torch = pytest.importorskip("torch")
import torch.fx as tfx  # noqa: E402
from torch.fx.passes.shape_prop import ShapeProp as TShapeProp  # noqa: E402


def make_net(lib):
    nn, F = lib.nn, lib.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            h = lib.relu(self.conv(x))
            h = F.relu(h.mean((2, 3)))
            return lib.neg(self.fc(h)).sigmoid(), h.shape[1]
    return Net


def _same_weights(em, tm):
    for (n, p), (tn, tp) in zip(em.named_parameters(), tm.named_parameters()):
        assert n == tn
        with torch.no_grad():
            tp.copy_(torch.from_numpy(p.detach().numpy()))


def test_interpreter_runs_like_generated_code():
    m = make_net(ember)()
    gm = fx.symbolic_trace(m)
    x = ember.randn(2, 3, 5, 5)
    got = fx.Interpreter(gm).run(x)
    want = gm(x)
    np.testing.assert_allclose(got[0].detach().numpy(), want[0].detach().numpy(), rtol=1e-6)
    assert got[1] == want[1] == 4


def test_interpreter_frees_values_after_last_use():
    gm = fx.symbolic_trace(make_net(ember)())
    interp = fx.Interpreter(gm)
    interp.run(ember.randn(1, 3, 4, 4))
    assert interp.env == {n: interp.env[n] for n in interp.env if n.op == "output"}
    keep = fx.Interpreter(gm, garbage_collect_values=False)
    keep.run(ember.randn(1, 3, 4, 4))
    assert len(keep.env) == len(gm.graph.nodes)


def test_interpreter_override_swaps_ops_like_torch_docs():
    """torch.fx docs' NegSigmSwapInterpreter, written for each library."""
    def make(lib, fx_mod):
        class NegSigmSwap(fx_mod.Interpreter):
            def call_function(self, target, args, kwargs):
                if target is lib.neg:
                    return lib.sigmoid(*args, **kwargs)
                return super().call_function(target, args, kwargs)

            def call_method(self, target, args, kwargs):
                if target == "sigmoid":
                    return lib.neg(*args, **kwargs)
                return super().call_method(target, args, kwargs)
        return NegSigmSwap
    em, tm = make_net(ember)(), make_net(torch)()
    _same_weights(em, tm)
    x = np.random.randn(2, 3, 5, 5).astype("f4")
    got = make(ember, fx)(fx.symbolic_trace(em)).run(ember.tensor(x))
    want = make(torch, tfx)(tfx.symbolic_trace(tm)).run(torch.tensor(x))
    np.testing.assert_allclose(got[0].detach().numpy(), want[0].detach().numpy(), rtol=1e-5,
                               atol=1e-6)


def test_interpreter_error_names_the_node():
    g = fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_function(ember.matmul, (x, x)))
    gm = fx.GraphModule({}, g)
    with pytest.raises(RuntimeError, match="While executing %matmul"):
        fx.Interpreter(gm).run(ember.ones(2, 3))
    with pytest.raises(RuntimeError, match="Expected positional argument for parameter x"):
        fx.Interpreter(gm).run()


def test_boxed_run_clears_inputs():
    gm = fx.symbolic_trace(lambda a, b: a * b + 1)
    args = [ember.ones(2), ember.full((2,), 3.0)]
    out = fx.Interpreter(gm).boxed_run(args)
    assert args == [] and out.tolist() == [4.0, 4.0]


def test_transformer_relu_to_gelu_matches_torch():
    def make(lib, fx_mod):
        class ReluToGelu(fx_mod.Transformer):
            def call_function(self, target, args, kwargs):
                if target in (lib.relu, lib.nn.functional.relu):
                    kwargs = {k: v for k, v in kwargs.items() if k != "inplace"}
                    return super().call_function(lib.nn.functional.gelu, args, kwargs)
                return super().call_function(target, args, kwargs)
        return ReluToGelu
    em, tm = make_net(ember)(), make_net(torch)()
    _same_weights(em, tm)
    egm = make(ember, fx)(fx.symbolic_trace(em)).transform()
    tgm = make(torch, tfx)(tfx.symbolic_trace(tm)).transform()
    assert isinstance(egm, fx.GraphModule)
    names = [(n.op, n.name, n.target if isinstance(n.target, str) else n.target.__name__)
             for n in egm.graph.nodes]
    tnames = [(n.op, n.name, n.target if isinstance(n.target, str) else n.target.__name__)
              for n in tgm.graph.nodes]
    assert names == tnames
    assert sum(n[2] == "gelu" for n in names) == 2 and all(n[2] != "relu" for n in names)
    x = np.random.randn(2, 3, 5, 5).astype("f4")
    got, want = egm(ember.tensor(x)), tgm(torch.tensor(x))
    np.testing.assert_allclose(got[0].detach().numpy(), want[0].detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    assert got[1] == want[1]


def test_transformer_keeps_provenance_meta_and_placeholder_vals():
    g = fx.Graph()
    x = g.placeholder("x")
    x.meta["val"] = ember.empty(3)
    x.meta["source"] = "L['x']"
    a = g.call_function(operator.mul, (x, 2))
    a.meta["stack_trace"] = 'File "user.py", line 3'
    a.meta["val"] = ember.empty(3)
    g.output((a,))
    gm = fx.GraphModule({}, g)
    new = fx.Transformer(gm).transform()
    nx, na = list(new.graph.nodes)[:2]
    assert nx.meta["source"] == "L['x']" and nx.meta["val"] is x.meta["val"]
    assert na.meta["stack_trace"] == 'File "user.py", line 3'
    assert "val" not in na.meta          # a transformer may change the value
    assert new(ember.ones(3))[0].tolist() == [2.0, 2.0, 2.0]


def test_shape_prop_matches_torch():
    em, tm = make_net(ember)(), make_net(torch)()
    egm, tgm = fx.symbolic_trace(em), tfx.symbolic_trace(tm)
    ShapeProp(egm).propagate(ember.randn(2, 3, 5, 5))
    TShapeProp(tgm).propagate(torch.randn(2, 3, 5, 5))
    for en, tn in zip(egm.graph.nodes, tgm.graph.nodes):
        assert ("tensor_meta" in en.meta) == ("tensor_meta" in tn.meta), en.name
        if "tensor_meta" not in en.meta or en.op == "output":
            continue
        e, t = en.meta["tensor_meta"], tn.meta["tensor_meta"]
        assert tuple(e.shape) == tuple(t.shape), en.name
        assert str(e.dtype) == str(t.dtype) and e.requires_grad == t.requires_grad
        assert tuple(e.stride) == tuple(t.stride), en.name
        assert str(e.memory_format) == str(t.memory_format), en.name


def test_shape_prop_fake_mode_keeps_module_real():
    from ember._subclasses.fake_tensor import FakeTensorMode
    m = make_net(ember)()
    gm = fx.symbolic_trace(m)
    w = m.conv.weight
    ShapeProp(gm, fake_mode=FakeTensorMode()).propagate(ember.randn(8, 3, 16, 16))
    shapes = {n.name: tuple(n.meta["tensor_meta"].shape) for n in gm.graph.nodes
              if n.op != "output" and "tensor_meta" in n.meta}
    assert shapes["conv"] == (8, 4, 16, 16) and shapes["sigmoid"] == (8, 3)
    assert m.conv.weight is w and gm.conv.weight is w
    assert gm(ember.randn(1, 3, 4, 4))[0].shape == (1, 3)


def test_transformer_handlers_call_ember_functions_on_proxies_like_torch_docs():
    """torch.fx docs' NegSigmSwapXformer: handlers call library functions on Proxies."""
    def make(lib, fx_mod):
        class NegSigmSwapXformer(fx_mod.Transformer):
            def call_function(self, target, args, kwargs):
                if target == lib.neg:
                    return lib.sigmoid(*args, **kwargs)
                return super().call_function(target, args, kwargs)

            def call_method(self, target, args, kwargs):
                if target == "sigmoid":
                    return lib.neg(*args, **kwargs)
                return super().call_method(target, args, kwargs)
        return NegSigmSwapXformer

    def fn(lib):
        def f(x):
            return lib.sigmoid(lib.neg(x)).sigmoid()
        return f
    egm = make(ember, fx)(fx.symbolic_trace(fn(ember))).transform()
    tgm = make(torch, tfx)(tfx.symbolic_trace(fn(torch))).transform()
    assert [(n.op, n.name) for n in egm.graph.nodes] == [(n.op, n.name) for n in tgm.graph.nodes]
    assert [n.target for n in egm.graph.nodes if n.op == "call_function"][0] is ember.sigmoid
    x = np.random.randn(4).astype("f4")
    np.testing.assert_allclose(egm(ember.tensor(x)).numpy(), tgm(torch.tensor(x)).numpy(),
                               rtol=1e-6)
    assert ember.sigmoid.__class__.__name__ == "function"      # patch undone


def test_proxy_by_hand_decomposition():
    """torch.fx docs' decomposition-by-Proxy pattern; ember functions need
    fx.proxy_calls() around it (torch routes them through __torch_function__)."""
    def relu_decomposition(x):
        return (x > 0) * x

    gm = fx.symbolic_trace(lambda x: ember.relu(x) + 1)
    graph = fx.Graph()
    env = {}
    tracer = fx.proxy.GraphAppendingTracer(graph)
    with fx.proxy_calls():
        for node in gm.graph.nodes:
            if node.op == "call_function" and node.target == ember.relu:
                proxy_args = [fx.Proxy(env[a.name], tracer) if isinstance(a, fx.Node) else a
                              for a in node.args]
                out = relu_decomposition(*proxy_args)
                env[node.name] = ember.abs(out).node
            else:
                env[node.name] = graph.node_copy(node, lambda a: env[a.name])
    new = fx.GraphModule(gm, graph)
    assert "relu" not in new.code and "ember.abs" in new.code
    t = ember.tensor([-1.0, 2.0])
    np.testing.assert_allclose(new(t).numpy(), [1.0, 3.0])


def test_fake_tensor_prop_fills_meta_val_without_compute():
    from ember.fx.passes.fake_tensor_prop import FakeTensorProp
    m = make_net(ember)()
    gm = fx.symbolic_trace(m)
    out = FakeTensorProp(gm).propagate(ember.randn(64, 3, 32, 32))
    assert out[0].shape == (64, 3) and out[0]._fake
    vals = {n.name: n.meta["val"] for n in gm.graph.nodes if n.op != "output"}
    assert tuple(vals["conv"].shape) == (64, 4, 32, 32) and vals["conv"]._fake
    assert vals["getitem"] == 4          # a Python int stays an int
    assert not m.conv.weight._fake       # parameters are real again
    s = gm.print_readable(print_output=False)
    assert 'conv: "f32[64, 4, 32, 32]" = self.conv(x)' in s
