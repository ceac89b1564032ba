"""Issue 9 API points the corpus does not cover: explain's fields, the logs a compile
writes, counters, allow_in_graph, custom backends receiving an ember.fx.GraphModule,
guard failures recompiling, the recompile limit, disable/reset/is_compiling."""
import os
import subprocess
import sys
import warnings

import pytest

import ember
import ember.nn as nn
from ember._dynamo import config
from ember._dynamo.testing import CompileCounter
from ember._dynamo.utils import counters


@pytest.fixture(autouse=True)
def _reset():
    ember._dynamo.reset()
    yield
    ember._dynamo.reset()


def breaky(x):
    y = x * 2
    print("side effect")          # break 1
    if y.sum() > 0:               # break 2 (data-dependent branch)
        return y + 1
    return y - 1


def test_explain_counts_reasons_and_user_lines(capsys):
    ex = ember._dynamo.explain(breaky)(ember.ones(3))
    assert ex.graph_count == 3 and ex.graph_break_count == 2
    reasons = [r.reason for r in ex.break_reasons]
    assert "print" in reasons[0] and "data-dependent" in reasons[1]
    lines = [r.user_stack[-1].lineno for r in ex.break_reasons]
    src = open(__file__).read().splitlines()
    assert "print(" in src[lines[0] - 1] and "if y.sum()" in src[lines[1] - 1]
    assert all(r.user_stack[-1].filename == __file__ for r in ex.break_reasons)
    assert [len(o) for o in ex.ops_per_graph] == [1, 2, 1]
    text = str(ex)
    assert "Graph Count: 3" in text and "Graph Break Count: 2" in text
    assert f"{__file__}, line {lines[0]}" in text.replace("file ", "")
    assert capsys.readouterr().out.count("side effect") == 1


def test_fullgraph_raises_unsupported_naming_the_line():
    cf = ember.compile(breaky, backend="eager", fullgraph=True)
    with pytest.raises(ember._dynamo.exc.Unsupported, match="print") as info:
        cf(ember.ones(3))
    assert "test_capture.py" in str(info.value)


def test_custom_backend_gets_graph_module_with_fake_vals():
    seen = []

    def backend(gm, example_inputs):
        seen.append(gm)
        gm.graph.print_tabular()
        return gm.forward

    m = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    out = ember.compile(m, backend=backend)(ember.randn(2, 4))
    assert out.shape == (2, 3)
    (gm,) = seen
    assert isinstance(gm, ember.fx.GraphModule)
    ops = [n for n in gm.graph.nodes if n.op == "call_function"]
    assert [n.target.name for n in ops] == ["linear", "relu"]
    phs = [n for n in gm.graph.nodes if n.op == "placeholder"]
    assert [tuple(n.meta["val"].shape) for n in phs] == [(2, 4), (3, 4), (3,)]
    assert all(n.meta["val"]._fake for n in phs)
    assert "linear" in gm.code


def test_allow_in_graph_is_one_node():
    def helper(x):
        return x.sin() * 2

    ember.compiler.allow_in_graph(helper)
    ex = ember._dynamo.explain(lambda x: helper(x) + 1)(ember.randn(3))
    assert ex.ops_per_graph[0][0] is helper and len(ex.ops_per_graph[0]) == 2


def test_ops_namespace_paths_are_graph_ops():
    """torch.ops.aten.add.Tensor(...) and friends, written in user code, capture as the
    registry ops themselves (PyTorch's dynamo treats op overloads as graph calls)."""
    def f(x, y):
        a = ember.ops.aten.add.Tensor(x, y)
        b = ember.ops.aten.relu.default(a) * ember.ops.aten.mul(a, 2)
        return b, ember.ops.quantized_decomposed.quantize_per_tensor.default(
            x, 0.1, 0, -128, 127, ember.int8)
    x, y = ember.randn(5), ember.randn(5)
    ex = ember._dynamo.explain(f)(x, y)
    assert ex.graph_count == 1 and ex.graph_break_count == 0
    names = [getattr(op, "__name__", str(op)) for op in ex.ops_per_graph[0]]
    assert "quantize_per_tensor" in str(ex.ops_per_graph[0]) and len(names) == 5
    got, want = ember.compile(f, fullgraph=True, backend="eager")(x, y), f(x, y)
    assert all(ember.equal(g, w) for g, w in zip(got, want))


def test_counters():
    ember.compile(breaky, backend="eager")(ember.ones(3))
    assert counters["frames"]["total"] == counters["frames"]["ok"] == 3
    assert counters["stats"]["unique_graphs"] == 3
    assert sum(counters["graph_break"].values()) == 2


def test_guard_failures_recompile_and_never_go_stale():
    cnt = CompileCounter()
    scale = {"k": 2.0}

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)
            self.p = 0.5

        def forward(self, x):
            return self.lin(x) * self.p * scale["k"]

    m = M()
    cm = ember.compile(m, backend=cnt)
    x = ember.randn(2, 3)
    for change in (None, "p", "lin", "rg", "grad", "dtype", "global"):
        if change == "p":
            m.p = 0.25
        elif change == "lin":
            m.lin = nn.Linear(3, 3)
        elif change == "rg":
            m.lin.weight.requires_grad_(False)
        elif change == "dtype":
            x = x.double()
            m.double()
        elif change == "global":
            scale["k"] = 3.0
        if change == "grad":
            with ember.no_grad():
                got, want = cm(x), m(x)
        else:
            got, want = cm(x), m(x)
        ember.testing.assert_close(got, want)
        assert got.requires_grad == want.requires_grad
    assert cnt.frame_count >= 5


def test_recompile_limit_runs_eagerly_with_a_warning():
    cnt = CompileCounter()
    cf = ember.compile(lambda x, n: x + n, backend=cnt, dynamic=False)
    with config.patch(cache_size_limit=2, automatic_dynamic_shapes=False):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for n in range(4):
                x = ember.ones(n + 2)
                ember.testing.assert_close(cf(x, 1), x + 1)
    assert cnt.frame_count == 2
    assert any("cache_size_limit" in str(x.message) for x in w)


def test_disable_reset_is_compiling():
    seen = []

    @ember.compiler.disable
    def inner(x):
        seen.append(ember.compiler.is_compiling())
        return x + 1

    def f(x):
        seen.append(ember.compiler.is_compiling())
        return inner(x * 2)

    cnt = CompileCounter()
    cf = ember.compile(f, backend=cnt)
    assert (cf(ember.ones(2)) == 3).all() and not ember.compiler.is_compiling()
    cf(ember.ones(2))
    n = cnt.frame_count
    ember.compiler.reset()
    cf(ember.ones(2))
    assert cnt.frame_count == n + 1


@pytest.mark.parametrize("logs, expect", [
    ("graph_breaks", "Graph break: print()"),
    ("recompiles", "Recompiling function f"),
    ("guards", "TENSOR_MATCH: L['x']"),
    ("graph_code", "TRACED GRAPH f"),
])
def test_logs(logs, expect):
    code = (
        "import ember\n"
        "def f(x):\n"
        "    print('hi')\n"
        "    return x.sin()\n"
        "cf = ember.compile(f, backend='eager')\n"
        "cf(ember.ones(2)); cf(ember.ones(2, 2))\n")
    env = dict(os.environ, EMBER_LOGS=logs)
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert expect in res.stderr


def test_frame_state_rebuilt_from_the_segments_start():
    def f(a, b):
        a, b = b, a                   # the new locals read the old ones
        print("break")
        return a - b

    x, y = ember.ones(2), ember.zeros(2)
    ember.testing.assert_close(ember.compile(f, backend="eager")(x, y), f(x, y))


def test_rebinding_a_global_to_another_ember_function_recompiles():
    g = globals()
    g["_ACT"] = ember.relu
    cf = ember.compile(lambda x: _ACT(x), backend="eager")   # noqa: F821
    x = ember.randn(5)
    ember.testing.assert_close(cf(x), ember.relu(x))
    g["_ACT"] = ember.tanh
    ember.testing.assert_close(cf(x), ember.tanh(x))


def test_aliased_inputs_to_a_mutating_graph_recompile():
    def f(a, b):
        a.add_(1)
        return b * 2

    cf = ember.compile(f, backend="eager")
    x, y = ember.zeros(2), ember.zeros(2)
    ember.testing.assert_close(cf(x, y), ember.zeros(2))
    z = ember.zeros(2)
    ember.testing.assert_close(cf(z, z), ember.full((2,), 2.0))


def test_user_object_len_and_replaced_method_are_not_baked():
    class Bag:
        def __init__(self):
            self.items = []

        def __len__(self):
            return len(self.items)

        def scale(self):
            return 2.0

    bag = Bag()

    def f(x):
        return x * len(bag) * bag.scale()

    cf = ember.compile(f, backend="eager")
    x = ember.ones(2)
    for n in range(3):
        ember.testing.assert_close(cf(x), f(x))
        bag.items.append(n)
    Bag.scale = lambda self: 5.0
    ember.testing.assert_close(cf(x), f(x))


def test_long_tuple_built_across_breaks_keeps_every_item():
    """CPython builds a long tuple literal with BUILD_LIST + LIST_APPEND; a break in the
    middle hands the half-built list to the next segment, whose appends reach it."""
    def brk(x):
        print(end="")
        return x + 1

    body = ", ".join(f"(x * {i}) if {i} % 7 else brk(x * {i})" for i in range(70))
    ns = {"brk": brk}
    exec(f"def f(x):\n    return ({body},)\n", ns)
    f, x = ns["f"], ember.arange(3.0)
    got, want = ember.compile(f, backend="eager")(x), f(x)
    assert len(got) == len(want) == 70
    for a, b in zip(got, want):
        assert ember.equal(a, b)


def test_suppress_errors_falls_back_to_eager_with_a_warning():
    def failing_backend(gm, example_inputs):
        raise ValueError("backend broke")

    f = ember.compile(lambda x: x * 2, backend=failing_backend)
    with pytest.raises(ember._dynamo.exc.BackendCompilerFailed, match="backend broke"):
        f(ember.ones(2))
    ember._dynamo.reset()
    with config.patch(suppress_errors=True):
        with pytest.warns(UserWarning, match="runs eagerly"):
            out = ember.compile(lambda x: x * 2, backend=failing_backend)(ember.ones(2))
    assert out.tolist() == [2.0, 2.0]
