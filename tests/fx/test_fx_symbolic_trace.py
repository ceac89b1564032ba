"""symbolic_trace against torch.fx: the same small modules, written once and built with
either library, give the same nodes (op, name, target name, arg structure) in the same
order; the traced GraphModule equals eager."""
import math
import operator

import numpy as np
import pytest

import ember
from ember import fx

torch = pytest.importorskip("torch")
import torch.fx as tfx  # noqa: E402


def make_cases(lib):
    """Modules/functions written once; `lib` is ember or torch."""
    nn, F = lib.nn, lib.nn.functional

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(8, 16)
            self.fc2 = nn.Linear(16, 8)
            self.drop = nn.Dropout(0.0)

        def forward(self, x):
            h = lib.relu(self.fc1(x))
            h = self.drop(h)
            return F.softmax(self.fc2(h) + x, dim=-1)

    class ConvNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)
            self.bn = nn.BatchNorm2d(4)
            self.head = nn.Linear(4 * 4 * 4, 5)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
            x = x.view(x.size(0), -1)
            return self.head(x)

    class Attn(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(lib.randn(6, 6))
            self.register_buffer("bias", lib.zeros(6))

        def forward(self, q, k):
            s = (q @ self.w) @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
            s = s.softmax(-1)
            return s.sum(dim=1, keepdim=True) + self.bias[1:4].sum()

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            return lib.tanh(self.lin(x)) * 0.5 + x

    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Block() for _ in range(3)])
            self.out = nn.Sequential(nn.Linear(4, 2), nn.ReLU())

        def forward(self, x):
            for b in self.blocks:
                x = b(x)
            return self.out(x)

    class Mixed(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = nn.ModuleDict({"a": nn.Linear(4, 4), "b": nn.Linear(4, 2)})
            self.enc = nn.TransformerEncoderLayer(4, 2, 8, batch_first=True)
            self.scale = 0.5

        def forward(self, x, mask=None):
            b, t, c = x.size()
            h = self.heads["a"](self.enc(x)) * self.scale
            h = h.reshape(b * t, c).transpose(0, 1).contiguous()
            y = lib.zeros_like(h) + lib.ones(1) * x.dim()      # tensor * proxy
            z = F.dropout(lib.where(h > 0, h, y), p=0.1, training=self.training)
            out = self.heads["b"](z.t())
            return {"out": out.softmax(dim=-1), "n": x.size(1),
                    "m": lib.flatten(x, 1).max(dim=1).values}

    def fn_ops(x, y):
        a, b = x.chunk(2, dim=0)
        c = lib.cat([a * 2, 1 - b, -y[1:3]], dim=0)
        d = lib.stack((c, c.abs()), 1)
        return d.pow(2).mean(), lib.matmul(x, y.t()), 2 ** x[0]

    return {"mlp": (MLP, lambda: (lib.randn(3, 8),)),
            "convnet": (ConvNet, lambda: (lib.randn(2, 3, 8, 8),)),
            "attn": (Attn, lambda: (lib.randn(2, 3, 6), lib.randn(2, 5, 6))),
            "stack": (Stack, lambda: (lib.randn(5, 4),)),
            "mixed": (Mixed, lambda: (lib.randn(2, 3, 4),)),
            "fn_ops": (lambda: fn_ops, lambda: (lib.randn(4, 3), lib.randn(4, 3)))}


def _target_name(n):
    if n.op == "call_function":
        return n.target.__name__
    return n.target


def _summary(graph):
    """(op, name, target name, args) per node, and kwargs separately: torch's
    __torch_function__ also passes defaults (dtype=None, _stacklevel=3)."""
    def arg(a):
        return ("node", a.name) if hasattr(a, "op") else a
    out, kws = [], []
    for n in graph.nodes:
        args = fx.map_aggregate(n.args, arg) if n.op != "output" else None
        out.append((n.op, n.name, _target_name(n), repr(args)))
        kws.append({k: repr(fx.map_aggregate(v, arg)) for k, v in n.kwargs.items()})
    return out, kws


CASES = ["mlp", "convnet", "attn", "stack", "mixed", "fn_ops"]


@pytest.mark.parametrize("name", CASES)
def test_graph_matches_torch_fx(name):
    e_ctor, _ = make_cases(ember)[name]
    t_ctor, _ = make_cases(torch)[name]
    eg = fx.symbolic_trace(e_ctor()).graph
    tg = tfx.symbolic_trace(t_ctor()).graph
    (e, ekw), (t, tkw) = _summary(eg), _summary(tg)
    assert e == t, "\n".join(f"{a}\n{b}\n" for a, b in zip(e, t) if a != b)
    for node, a, b in zip(e, ekw, tkw):
        assert a.items() <= b.items(), (node, a, b)


@pytest.mark.parametrize("name", CASES)
def test_traced_module_equals_eager(name):
    ctor, inputs = make_cases(ember)[name]
    ember.manual_seed(0)
    m = ctor()
    if isinstance(m, ember.nn.Module):
        m.eval()
    gm = fx.symbolic_trace(m)
    assert isinstance(gm, fx.GraphModule)
    args = inputs()
    want, got = m(*args), gm(*args)
    if isinstance(want, dict):
        assert want.keys() == got.keys()
        want, got = tuple(want.values()), tuple(got.values())
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    for w, g in zip(want, got):
        if isinstance(w, int):
            assert g == w
            continue
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)


def test_training_through_traced_module_matches_eager():
    ctor, inputs = make_cases(ember)["mlp"]
    m = ctor()
    gm = fx.symbolic_trace(m)
    (x,) = inputs()
    m(x).pow(2).sum().backward()
    ref = [p.grad.clone() for p in m.parameters()]
    for p in m.parameters():
        p.grad = None
    gm(x).pow(2).sum().backward()     # gm shares the parameters with m
    for r, p in zip(ref, m.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), r.numpy(), rtol=1e-6)


def test_control_flow_raises_trace_error_like_torch():
    def f(lib):
        def g(x):
            if x.sum() > 0:
                return x
            return -x
        return g
    with pytest.raises(tfx.proxy.TraceError, match="control flow") as te:
        tfx.symbolic_trace(f(torch))
    with pytest.raises(fx.TraceError, match="control flow") as ee:
        fx.symbolic_trace(f(ember))
    assert str(ee.value) == str(te.value)
    assert issubclass(fx.TraceError, ValueError)


def test_iteration_len_and_unpacking():
    with pytest.raises(fx.TraceError, match="cannot be iterated"):
        fx.symbolic_trace(lambda x: [a for a in x])
    with pytest.raises(RuntimeError, match="'len' is not supported"):
        fx.symbolic_trace(lambda x: len(x))

    def unpack(x):
        a, b, c = x
        return a + b * c
    gm = fx.symbolic_trace(unpack)
    t = ember.randn(3, 2)
    np.testing.assert_allclose(gm(t).numpy(), unpack(t).numpy())


def test_concrete_args_specialize_with_assert():
    def g(x, flag):
        if flag:
            return x + 1
        return x - 1
    gm = fx.symbolic_trace(g, concrete_args={"flag": True})
    tgm = tfx.symbolic_trace(g, concrete_args={"flag": True})
    assert [n.name for n in gm.graph.nodes] == [n.name for n in tgm.graph.nodes]
    t = ember.ones(2)
    np.testing.assert_allclose(gm(t, True).numpy(), [2.0, 2.0])
    with pytest.raises(AssertionError, match="specialized to have value True"):
        gm(t, False)


def test_varargs_kwargs_and_defaults_codegen_like_torch():
    def f(lib):
        def h(x, *args, scale=2.0, **kwargs):
            a, b = x.chunk(2)
            return lib.cat([a * scale, b + math.sqrt(2)]) + args[0] + kwargs["z"]
        return h
    gm, tgm = fx.symbolic_trace(f(ember)), tfx.symbolic_trace(f(torch))
    assert gm.code.replace("ember.", "torch.").rstrip() == tgm.code.rstrip()
    x, o = ember.randn(4), ember.ones(4)
    np.testing.assert_allclose(gm(x, 3.0, o, z=o).numpy(),
                               f(ember)(x, o, scale=3.0, z=o).numpy(), rtol=1e-6)


def _my_helper(x):
    return x.numpy().sum()      # not traceable: leaves ember


fx.wrap("_my_helper")


def test_wrap_records_one_call():
    def f(x):
        return _my_helper(x) + x
    gm = fx.symbolic_trace(f)
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    assert calls[0].target is _my_helper and calls[1].target is operator.add
    t = ember.ones(3)
    np.testing.assert_allclose(gm(t).numpy(), f(t).numpy())
    # the patch is gone once tracing ends
    assert globals()["_my_helper"].__name__ == "_my_helper"
    assert not hasattr(globals()["_my_helper"], "__fx_original__")


def test_wrap_must_be_module_level():
    with pytest.raises(NotImplementedError, match="top level"):
        fx.wrap("len")


def test_custom_leaf_and_patches_restored():
    class Leafy(fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return qualname == "blocks.1" or super().is_leaf_module(m, qualname)
    ctor, _ = make_cases(ember)["stack"]
    m = ctor()
    graph = Leafy().trace(m)
    mods = [n.target for n in graph.nodes if n.op == "call_module"]
    assert mods == ["blocks.0.lin", "blocks.1", "blocks.2.lin", "out.0", "out.1"]
    gm = fx.GraphModule(m, graph)
    x = ember.randn(2, 4)
    np.testing.assert_allclose(gm(x).detach().numpy(), m(x).detach().numpy(), rtol=1e-6)
    # nothing of the tracer is left behind
    assert ember.relu.__name__ == "relu" and not hasattr(ember.relu, "__fx_original__")
    assert ember.nn.Module.__call__ is ember.nn.Module._call_impl
    with pytest.raises(TypeError):
        ember.ones(2) + object()


def test_patches_restored_after_trace_error():
    def bad(x):
        y = ember.sigmoid(x)
        if y:
            return y
    with pytest.raises(fx.TraceError):
        fx.symbolic_trace(bad)
    assert not hasattr(ember.sigmoid, "__fx_original__")
    assert ember.nn.Module.__call__ is ember.nn.Module._call_impl


def test_tensor_constants_become_attributes():
    c = ember.tensor([1.0, 2.0, 3.0])

    def f(x):
        return x * c + c
    gm = fx.symbolic_trace(f)
    gets = [n.target for n in gm.graph.nodes if n.op == "get_attr"]
    assert gets == ["_tensor_constant0", "_tensor_constant0"]
    t = ember.ones(3)
    np.testing.assert_allclose(gm(t).numpy(), f(t).numpy())


def test_retrace_graph_module_of_registry_ops():
    """Code calling registry ops directly (what ember.compile captures) traces too."""
    from ember.ops._registry import REGISTRY
    g = fx.Graph()
    x = g.placeholder("x")
    a = g.call_function(REGISTRY["cos"], (x,))
    b = g.call_function(REGISTRY["add"], (a, x, 1))
    g.output((g.call_function(REGISTRY["relu"], (b,)),))
    gm = fx.GraphModule({}, g)
    re = fx.symbolic_trace(gm)
    assert [n.target for n in re.graph.nodes if n.op == "call_function"] == \
        [REGISTRY["cos"], REGISTRY["add"], REGISTRY["relu"]]
    t = ember.randn(5)
    np.testing.assert_allclose(re(t)[0].numpy(), gm(t)[0].numpy())
    assert ember.ops.aten.cos.default(t).shape == (5,)     # patch undone


def test_tutorial_print_graph_backend_with_compile(capsys):
    """The PyTorch tutorial's custom backend, unmodified, under ember.compile."""
    def my_compiler(gm: fx.GraphModule, example_inputs):
        print("my_compiler() called with FX graph:")
        gm.graph.print_tabular()
        return gm.forward

    @ember.compile(backend=my_compiler)
    def fn(x, y):
        a = ember.cos(x)
        b = ember.sin(y)
        return a + b
    x, y = ember.randn(10), ember.randn(10)
    np.testing.assert_allclose(fn(x, y).numpy(), (ember.cos(x) + ember.sin(y)).numpy(),
                               rtol=1e-6)
    out = capsys.readouterr().out
    assert "my_compiler() called with FX graph:" in out
    rows = [ln.split()[0] for ln in out.splitlines()[3:] if ln.strip()]
    assert rows.count("placeholder") == 2 and rows.count("call_function") == 3
    assert rows[-1] == "output"


@pytest.mark.parametrize("arch", ["resnet18", "mobilenet_v2"])
def test_trace_vision_models_equals_eager(arch):
    from ember.vision import models
    ember.manual_seed(0)
    m = getattr(models, arch)(num_classes=10).eval()
    gm = fx.symbolic_trace(m)
    mods = [n.target for n in gm.graph.nodes if n.op == "call_module"]
    assert mods[0] in ("conv1", "features.0.0") and all(
        type(gm.get_submodule(t)).__module__.startswith("ember.nn") for t in mods)
    x = ember.randn(1, 3, 32, 32)
    with ember.no_grad():
        np.testing.assert_allclose(gm(x).numpy(), m(x).numpy(), rtol=1e-5, atol=1e-6)


def test_deepcopy_of_proxy_stands_for_same_value():
    import copy

    def f(x):
        y = copy.deepcopy(x)
        return y + 1
    gm = fx.symbolic_trace(f)
    assert [n.op for n in gm.graph.nodes] == ["placeholder", "call_function", "output"]
    assert gm(ember.ones(2)).tolist() == [2.0, 2.0]


def test_helpers_in_other_modules_using_imported_ember_functions():
    """`from ember import relu` in a helper module: torch.fx sees such calls through
    __torch_function__; ember patches the helper's globals when it is entered."""
    import types
    mod = types.ModuleType("fx_helper_mod")
    exec("from ember import relu\nfrom ember.nn.functional import gelu\n"
         "def helper(x):\n    return gelu(relu(x)) * 2\n", mod.__dict__)
    gm = fx.symbolic_trace(lambda x: mod.helper(x) + 1)
    calls = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert calls == [ember.relu, ember.nn.functional.gelu, operator.mul, operator.add]
    assert mod.relu is ember.relu and mod.gelu is ember.nn.functional.gelu   # restored
    t = ember.randn(3)
    np.testing.assert_allclose(gm(t).numpy(), (mod.helper(t) + 1).numpy(), rtol=1e-6)


def test_function_stored_on_module_records():
    class Act(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = ember.nn.Linear(3, 3)
            self.activation = ember.nn.functional.gelu

        def forward(self, x):
            return self.activation(self.lin(x))
    m = Act()
    gm = fx.symbolic_trace(m)
    assert [n.op for n in gm.graph.nodes] == ["placeholder", "call_module", "call_function",
                                              "output"]
    assert m.activation is ember.nn.functional.gelu
    t = ember.randn(2, 3)
    np.testing.assert_allclose(gm(t).detach().numpy(), m(t).detach().numpy(), rtol=1e-6)


def test_uninterceptable_call_names_the_cause():
    def make():
        act = ember.nn.functional.gelu        # bound in a closure: not interceptable

        def f(x):
            return act(x)
        return f
    with pytest.raises(fx.TraceError, match="reached ember's own code"):
        fx.symbolic_trace(make())
