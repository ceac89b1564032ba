"""AOT autograd (issue 10 points 1-2): functionalization, the joint forward+backward graph,
default and min-cut partitioning, the compiled forward as one autograd node, and the
"aot_eager" backend end to end against eager ember (and PyTorch where it applies)."""
import copy

import numpy as np
import pytest

import ember
import ember._dynamo
import ember.nn as nn
import ember.nn.functional as F
from ember._functorch._functionalize import functionalize_graph
from ember._functorch.aot_autograd import (aot_function, aot_module_simplified,
                                           make_boxed_func)
from ember._functorch.partitioners import (default_partition,
                                           min_cut_rematerialization_partition)
from ember.ops._registry import OpDef


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    """Compile caches are per code object (Sequential.forward is shared by every test):
    start each test empty so compile counts and cache limits do not depend on order."""
    ember._dynamo.reset()
    yield
    ember._dynamo.reset()


def close(a, b, tol=1e-6):
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def grads(m):
    return [p.grad.clone() for p in m.parameters()]


def recording_compiler(store, name):
    def compiler(gm, example_inputs):
        store.setdefault(name, []).append(gm)
        return make_boxed_func(gm.forward)
    return compiler


def saved_names(fw_gm):
    """The forward graph's outputs after the user's: what it saves for backward."""
    return fw_gm.meta_saved


# ------------------------------------------------------------------ end to end: aot_eager

def test_mlp_outputs_and_grads_of_inputs_and_parameters():
    ember.manual_seed(0)
    m = nn.Sequential(nn.Linear(6, 16), nn.GELU(), nn.Linear(16, 16), nn.Tanh(),
                      nn.Linear(16, 3))
    m2 = copy.deepcopy(m)
    cm = ember.compile(m2, backend="aot_eager")
    x1 = ember.randn(5, 6, requires_grad=True)
    x2 = x1.detach().clone().requires_grad_()
    y1, y2 = m(x1), cm(x2)
    close(y1, y2)
    assert type(y2.grad_fn).__name__ == "CompiledFunctionBackward"   # one autograd node
    y1.pow(2).sum().backward()
    y2.pow(2).sum().backward()
    close(x1.grad, x2.grad)
    for a, b in zip(grads(m), grads(m2)):
        close(a, b)


def test_small_cnn_batchnorm_dropout_buffers_and_philox():
    """Running stats and num_batches_tracked are updated in place as eager; dropout draws
    the same Philox numbers for the same seed."""
    ember.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                      nn.MaxPool2d(2), nn.Dropout(0.4), nn.Flatten(), nn.Linear(4 * 4 * 4, 5))
    m2 = copy.deepcopy(m)
    cm = ember.compile(m2, backend="aot_eager")
    for step in range(3):
        x = ember.randn(3, 2, 8, 8)
        ember.manual_seed(10 + step)
        y1 = m(x)
        ember.manual_seed(10 + step)
        y2 = cm(x)
        close(y1, y2, 1e-5)
        y1.sum().backward()
        y2.sum().backward()
        bn1, bn2 = m[1], m2[1]
        close(bn1.running_mean, bn2.running_mean)
        close(bn1.running_var, bn2.running_var)
        assert int(bn2.num_batches_tracked) == step + 1
        for a, b in zip(grads(m), grads(m2)):
            close(a, b, 1e-5)
    m.eval()
    m2.eval()
    x = ember.randn(2, 2, 8, 8)
    close(m(x), cm(x), 1e-5)


def test_dropout_generator_state_matches_eager():
    def f(x):
        return F.dropout(x, 0.5, True) * 2
    cf = ember.compile(f, backend="aot_eager")
    x = ember.randn(64, requires_grad=True)
    ember.manual_seed(3)
    a = f(x)
    after_eager = ember.rand(3)
    ember.manual_seed(3)
    b = cf(x)
    after_compiled = ember.rand(3)
    close(a, b)
    close(after_eager, after_compiled)


def test_inplace_on_inputs_and_views():
    def f(x, y):
        x.add_(1)
        x[1:].mul_(2)
        x[:, 0].zero_()
        x[0] = 0.5
        y.t()[0].sub_(3)
        return x.t().sum(1), y * x.t()
    cf = ember.compile(f, backend="aot_eager")
    for _ in range(2):
        a = [ember.randn(4, 3), ember.randn(3, 4)]
        b = [t.clone() for t in a]
        for r1, r2 in zip(f(*a), cf(*b)):
            close(r1, r2)
        close(a[0], b[0])
        close(a[1], b[1])


def test_mutation_seen_through_an_aliasing_input():
    def f(a, b):
        a.add_(1)
        return b * 2
    cf = ember.compile(f, backend="aot_eager")
    for fn in (f, cf):
        x = ember.zeros(3, 3)
        close(fn(x, x[0]), ember.full((3,), 2.0))
        close(x, ember.ones(3, 3))


def test_parameter_written_under_no_grad_then_used_keeps_its_gradient():
    lin = nn.Linear(3, 2)
    lin2 = copy.deepcopy(lin)

    def make(m):
        def f(x):
            with ember.no_grad():
                m.weight.mul_(0.5)
            return m(x).sum()
        return f
    x = ember.randn(4, 3)
    make(lin)(x).backward()
    ember.compile(make(lin2), backend="aot_eager")(x).backward()
    close(lin.weight, lin2.weight)
    close(lin.weight.grad, lin2.weight.grad)
    close(lin.bias.grad, lin2.bias.grad)


def test_mutated_non_leaf_input_keeps_history():
    w = ember.randn(4, 3, requires_grad=True)

    def f(x):
        x.mul_(3)
        return x.sin()
    cf = ember.compile(f, backend="aot_eager")
    x1 = w * 1
    y1 = f(x1)
    (y1.sum() + x1.sum()).backward()
    g1, w.grad = w.grad.clone(), None
    x2 = w * 1
    y2 = cf(x2)
    (y2.sum() + x2.sum()).backward()
    close(y1, y2)
    close(x1, x2)
    close(g1, w.grad)


def test_outputs_aliasing_inputs_stay_aliases():
    def f(x):
        return x, x[0], x.view(12), x * 2
    cf = ember.compile(f, backend="aot_eager")
    x = ember.randn(4, 3)
    out = cf(x)
    assert out[0] is x
    assert out[1]._base is x and out[2]._base is x
    x.add_(1)                          # writes show through the returned views
    close(out[1], x[0])


def test_returned_view_of_intermediate_modified_in_place():
    """An output viewing another output is rebuilt outside the compiled node, so in-place
    on it rewrites the base's history as in eager (no custom-Function view error)."""
    def g(x):
        y = x.clone()
        return y, y[0], y
    cg = ember.compile(g, backend="aot_eager")
    w = ember.randn(3, 3)
    a, b = w.clone().requires_grad_(), w.clone().requires_grad_()
    for fn, x in ((g, a), (cg, b)):
        y, s, y2 = fn(x)
        assert s._base is y
        s += 1
        (y * x).sum().backward()
    close(a.grad, b.grad)


def test_multiple_outputs_int_outputs_and_grads():
    def f(x, w):
        h = x @ w
        a, b = h.split([1, 2], 1)
        v, i = h.max(1)
        return a.relu(), b.sigmoid(), v, i
    cf = ember.compile(f, backend="aot_eager")
    x1, w1 = ember.randn(5, 4, requires_grad=True), ember.randn(4, 3, requires_grad=True)
    x2, w2 = (t.detach().clone().requires_grad_() for t in (x1, w1))
    r1, r2 = f(x1, w1), cf(x2, w2)
    for a, b in zip(r1, r2):
        close(a, b)
    assert r2[3].dtype == ember.int64 and not r2[3].requires_grad
    (r1[0].sum() + r1[1].pow(2).sum() + r1[2].sum()).backward()
    (r2[0].sum() + r2[1].pow(2).sum() + r2[2].sum()).backward()
    close(x1.grad, x2.grad)
    close(w1.grad, w2.grad)


def test_unused_output_gets_zero_tangent():
    cf = ember.compile(lambda x: (x.exp(), x.sin()), backend="aot_eager")
    x = ember.randn(4, requires_grad=True)
    cf(x)[1].sum().backward()
    close(x.grad, x.detach().cos())


def test_double_backward_raises_pytorch_error():
    cf = ember.compile(lambda x: (x.sin() * x).sum(), backend="aot_eager")
    x = ember.randn(5, requires_grad=True)
    g, = ember.autograd.grad(cf(x), x, create_graph=True)
    close(g, (x.sin() + x * x.cos()).detach())
    with pytest.raises(RuntimeError) as e:
        g.sum().backward()
    torch = pytest.importorskip("torch")
    tx = torch.randn(5, requires_grad=True)
    tcf = torch.compile(lambda x: (x.sin() * x).sum(), backend="aot_eager")
    tg, = torch.autograd.grad(tcf(tx), tx, create_graph=True)
    with pytest.raises(RuntimeError) as te:
        tg.sum().backward()
    assert str(e.value) == str(te.value)


def test_inference_only_functionalizes():
    m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    m2 = copy.deepcopy(m)
    cm = ember.compile(m2, backend="aot_eager")
    x = ember.randn(6, 3)
    with ember.no_grad():
        y1, y2 = m(x), cm(x)
    close(y1, y2)
    assert y2.grad_fn is None and not y2.requires_grad
    close(m[1].running_mean, m2[1].running_mean)


def test_automatic_dynamic_batch_sizes():
    from ember._dynamo.testing import CompileCounterWithBackend
    cnt = CompileCounterWithBackend("aot_eager")
    m = nn.Linear(3, 2)
    cm = ember.compile(m, backend=cnt)
    for n in (4, 5, 6, 7):
        x = ember.randn(n, 3, requires_grad=True)
        y = cm(x)
        y.pow(2).sum().backward()
        x2 = x.detach().clone().requires_grad_()
        close(y, m(x2))
        m(x2).pow(2).sum().backward()
        close(x.grad, x2.grad)
    assert cnt.frame_count == 2          # static, then symbolic batch size


def _keeping_backend(store):
    """aot_eager that keeps the compiled callables and the backward graphs it makes."""
    def backend(gm, ex):
        fn = aot_module_simplified(gm, ex, make_boxed_func_compiler,
                                   recording_compiler(store, "bw"))
        store.setdefault("compiled", []).append(fn)
        return fn
    return backend


def make_boxed_func_compiler(gm, ex):
    return make_boxed_func(gm.forward)


def test_symbolic_joint_graph_serves_all_batch_sizes():
    """When no backward formula reads a size as a number, one joint graph (sizes as
    sym_size nodes) serves every batch size."""
    store = {}
    ember.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 8), nn.GELU(), nn.Linear(8, 2))
    cm = ember.compile(m, backend=_keeping_backend(store))
    for n in (4, 5, 6, 9):
        x = ember.randn(n, 3, requires_grad=True)
        x2 = x.detach().clone().requires_grad_()
        cm(x).sum().backward()
        m(x2).sum().backward()
        close(x.grad, x2.grad, 1e-5)
    dynamic = store["compiled"][-1]
    assert len(dynamic._cache) == 1 and next(iter(dynamic._cache))[0] == "symbolic"
    bw = store["bw"][-1]
    assert any(getattr(n.target, "__name__", "") == "sym_size" or n.op == "placeholder"
               and isinstance(n.meta.get("val"), int) for n in bw.graph.nodes)


def test_sizes_baked_by_a_vjp_fall_back_to_per_size_graphs():
    """mean's backward expands to the example sizes: the shifted-hint trace differs, so
    the AOT graphs are specialized per size (and stay correct)."""
    store = {}
    cf = ember.compile(lambda x: (x.sin().mean(0) * 3).sum(), backend=_keeping_backend(store))
    for n in (4, 5, 6, 7):
        x = ember.randn(n, 3, requires_grad=True)
        cf(x).backward()
        close(x.grad, (x.detach().cos() * 3 / n))
    dynamic = store["compiled"][-1]
    assert all(k[0] != "symbolic" for k in dynamic._cache) and len(dynamic._cache) >= 2


def test_twenty_training_steps_match_eager():
    """A whole step compiled (forward, backward, optimizer step: graph breaks around
    backward; parameters and momentum buffers are mutated by a compiled graph)."""
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.2),
                          nn.Linear(16, 4))
    model2 = copy.deepcopy(model)
    opt = ember.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    opt2 = ember.optim.SGD(model2.parameters(), lr=0.05, momentum=0.9)

    def make_step(m, o):
        def step(x, y):
            loss = F.cross_entropy(m(x), y)
            loss.backward()
            o.step()
            o.zero_grad()
            return loss
        return step
    eager, compiled = make_step(model, opt), ember.compile(make_step(model2, opt2),
                                                           backend="aot_eager")
    data = ember.Generator().manual_seed(5)
    for i in range(20):
        x = ember.randn(16, 8, generator=data)
        y = ember.randint(0, 4, (16,), generator=data)
        ember.manual_seed(100 + i)
        l1 = eager(x, y)
        ember.manual_seed(100 + i)
        l2 = compiled(x, y)
        close(l1, l2, 1e-5)
    for p, q in zip(model.parameters(), model2.parameters()):
        close(p, q, 1e-5)
    close(model[1].running_var, model2[1].running_var, 1e-5)


def test_custom_function_inside_compiled_region():
    class Square(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g
    cf = ember.compile(lambda x: Square.apply(x.sin()).sum(), backend="aot_eager")
    x = ember.randn(6, requires_grad=True)
    cf(x).backward()
    close(x.grad, (2 * x.sin() * x.cos()).detach())


# ------------------------------------------------------------------ partitioners

def _chain(x):
    return (x.sin().cos().exp() * 2).sum()


@pytest.mark.parametrize("partition_fn, n_saved", [(default_partition, 3),
                                                   (min_cut_rematerialization_partition, 1)])
def test_partition_saved_tensors_on_pointwise_chain(partition_fn, n_saved):
    store = {}
    f = aot_function(_chain, recording_compiler(store, "fw"), recording_compiler(store, "bw"),
                     partition_fn=partition_fn)
    x = ember.randn(8, requires_grad=True)
    f(x).backward()
    x2 = x.detach().clone().requires_grad_()
    _chain(x2).backward()
    close(x.grad, x2.grad)
    fw, bw = store["fw"][0], store["bw"][0]
    assert len(saved_names(fw)) == n_saved
    bw_inputs = [n.name for n in bw.graph.nodes if n.op == "placeholder"]
    assert bw_inputs == saved_names(fw) + ["tangents_1"]
    if partition_fn is min_cut_rematerialization_partition:
        assert saved_names(fw) == ["primals_1"]              # sin/cos/exp recomputed
        bw_ops = {n.target.name for n in bw.graph.nodes if isinstance(n.target, OpDef)}
        assert {"sin", "cos", "exp"} <= bw_ops


def test_default_partition_saves_what_pytorch_saves():
    torch = pytest.importorskip("torch")
    from functorch.compile import aot_function as taot, default_partition as tdefault
    from functorch.compile import make_boxed_func as tboxed
    got = []

    def fw(gm, ex):
        got.append(len(next(n for n in gm.graph.nodes if n.op == "output").args[0]))
        return tboxed(gm.forward)
    tf = taot(lambda x: (x.sin().cos().exp() * 2).sum(), fw, fw, partition_fn=tdefault)
    tf(torch.randn(8, requires_grad=True)).backward()
    store = {}
    f = aot_function(_chain, recording_compiler(store, "fw"), recording_compiler(store, "bw"),
                     partition_fn=default_partition)
    f(ember.randn(8, requires_grad=True)).backward()
    assert 1 + len(saved_names(store["fw"][0])) == got[0]     # outputs: loss + saved


def test_min_cut_never_recomputes_random_or_matmul():
    store = {}

    def f(x, w):
        h = (x @ w).relu()
        return F.dropout(h, 0.5, True).tanh().sum()
    af = aot_function(f, recording_compiler(store, "fw"), recording_compiler(store, "bw"))
    x, w = ember.randn(4, 5, requires_grad=True), ember.randn(5, 6, requires_grad=True)
    ember.manual_seed(1)
    af(x, w).backward()
    x2, w2 = (t.detach().clone().requires_grad_() for t in (x, w))
    ember.manual_seed(1)
    f(x2, w2).backward()
    close(x.grad, x2.grad)
    close(w.grad, w2.grad)
    bw_ops = [n.target for n in store["bw"][0].graph.nodes if isinstance(n.target, OpDef)]
    assert not any("random" in op.tags for op in bw_ops)
    assert sum(op.name in ("mm", "matmul") for op in bw_ops) == 2     # the two grads only


def test_min_cut_saves_less_than_default_on_a_cnn():
    def sizes(partition_fn):
        store = {}
        ember.manual_seed(0)
        m = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(), nn.Flatten(),
                          nn.Linear(8 * 6 * 6, 10))
        gm_holder = {}

        def backend(gm, ex):
            gm_holder["gm"] = gm
            return aot_module_simplified(gm, ex, recording_compiler(store, "fw"),
                                         recording_compiler(store, "bw"),
                                         partition_fn=partition_fn)
        cm = ember.compile(m, backend=backend)
        F.cross_entropy(cm(ember.randn(4, 3, 8, 8)), ember.tensor([1, 2, 3, 4])).backward()
        fw = store["fw"][0]
        vals = {n.name: n.meta.get("val") for n in fw.graph.nodes}
        return sum(vals[s].numel() * vals[s].element_size() for s in saved_names(fw)
                   if not s.startswith("primals"))
    assert sizes(min_cut_rematerialization_partition) < sizes(default_partition)


# ------------------------------------------------------------------ aot_function API

def test_aot_function_compiles_once_per_signature():
    store = {}
    af = aot_function(lambda a, b: {"s": (a * b).sum(), "p": [a + b]},
                      recording_compiler(store, "fw"), recording_compiler(store, "bw"))
    a, b = ember.randn(3, requires_grad=True), ember.randn(3)
    out = af(a, b)
    assert set(out) == {"s", "p"} and isinstance(out["p"], list)
    out["s"].backward()
    close(a.grad, b)
    af(a, b)
    assert len(store["fw"]) == 1 and len(store["bw"]) == 1
    af(ember.randn(5, requires_grad=True), ember.randn(5))
    assert len(store["fw"]) == 2


def test_aot_module_parameters_and_buffers_are_inputs():
    from ember._functorch.aot_autograd import aot_module
    ember.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))
    m2 = copy.deepcopy(m)
    am = aot_module(m2, make_boxed_func_compiler)
    for _ in range(3):
        x = ember.randn(5, 3)
        close(m(x), am(x))
        m(x).sum().backward()
        am(x).sum().backward()
    for a, b in zip(grads(m), grads(m2)):
        close(a, b, 1e-5)
    close(m[1].running_mean, m2[1].running_mean)
    assert int(m2[1].num_batches_tracked) == 6


# ------------------------------------------------------------------ functionalization

def test_functionalized_graph_is_pure():
    captured = {}

    def backend(gm, ex):
        captured["gm"] = gm
        return gm.forward

    def f(x):
        x[1:].mul_(2)
        y = x.view(-1)
        y[0] = 7.0
        return x.sum() + y.sum()
    ember.compile(f, backend=backend)(ember.randn(3, 4))
    fg = functionalize_graph(captured["gm"])
    ops = [n.target for n in fg.gm.graph.nodes if isinstance(n.target, OpDef)]
    assert not any("inplace" in op.tags for op in ops)
    assert {"slice_scatter", "select_scatter"} <= {op.name for op in ops}
    assert fg.mutated_inputs == [0] and fg.num_user_outputs == 1
    x1 = ember.randn(3, 4)
    x2 = x1.clone()
    out, new_x = fg.gm(x1)
    ref = f(x2)
    close(out, ref)
    close(new_x, x2)


def test_functionalize_refuses_writes_into_expanded_views():
    captured = {}

    def backend(gm, ex):
        captured["gm"] = gm
        return gm.forward
    ember.compile(lambda x: x.unfold(0, 2, 1).copy_(ember.ones(2, 2)) + 0,
                  backend=backend)(ember.randn(3))
    with pytest.raises(NotImplementedError, match="unfold"):
        functionalize_graph(captured["gm"])
