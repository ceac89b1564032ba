"""Backend registry, test backends (CompileCounter...), explain's output and the counters,
compared with torch._dynamo's own classes where they are plain Python."""
import logging
import traceback
import warnings

import numpy as np
import pytest

import ember
import ember.fx as fx
from ember._dynamo import testing, utils
from ember._dynamo._explain_output import (BreakReason, ExplainOutput, ExplainWithBackend,
                                           GraphCompileReason, _explain_graph_detail)
from ember._dynamo.backends import _pending, registry
from ember._dynamo.backends.registry import (InvalidBackend, list_backends, lookup_backend,
                                             register_backend)
from ember.ops._registry import REGISTRY

torch = pytest.importorskip("torch")


@pytest.fixture
def scratch_names():
    """Names registered by a test are removed after it (the registry is process-wide)."""
    names = []
    yield names
    for n in names:
        registry._COMPILER_FNS.pop(n, None)
        registry._BACKENDS.pop(n, None)


def make_gm():
    """(x + x) * 2 as a GraphModule of registry ops, as the capture builds them."""
    g = fx.Graph()
    x = g.placeholder("x")
    y = g.call_function(REGISTRY["add"], (x, x))
    z = g.call_function(REGISTRY["mul"], (y, 2.0))
    g.output((z,))
    return fx.GraphModule(ember.nn.Module(), g)


def check_runs(fn):
    (out,) = fn(ember.tensor([1.0, 2.0]))
    assert out.tolist() == [4.0, 8.0]


# --------------------------------------------------------------------------- registry

def test_register_backend_forms(scratch_names):
    @register_backend
    def my_backend_plain(gm, example_inputs):
        return gm.forward
    scratch_names.append("my_backend_plain")

    @register_backend(name="my_named", tags=("experimental",))
    def whatever(gm, example_inputs):
        return gm.forward
    scratch_names.append("my_named")

    assert lookup_backend("my_backend_plain") is my_backend_plain
    assert lookup_backend("my_named") is whatever
    assert whatever._tags == ("experimental",) and my_backend_plain._tags == ()
    assert "my_backend_plain" in list_backends()
    assert "my_named" not in list_backends()          # experimental is hidden by default
    assert "my_named" in list_backends(exclude_tags=())
    check_runs(lookup_backend("my_backend_plain")(make_gm(), []))


def test_register_backend_errors_match_torch():
    from torch._dynamo.backends.registry import lookup_backend as t_lookup
    from torch._dynamo.backends.registry import register_backend as t_register
    for reg, lookup in ((register_backend, lookup_backend), (t_register, t_lookup)):
        lookup("eager")                         # built-ins registered
        with pytest.raises(AssertionError, match="^duplicate name: eager$"):
            reg(lambda gm, ex: gm.forward, name="eager")
        with pytest.raises(AssertionError,
                           match="^compiler_fn must be callable, got <class 'int'>$"):
            reg(3, name="not_callable")


def test_lookup_backend_unknown_name():
    with pytest.raises(InvalidBackend) as e:
        lookup_backend("no_such_backend")
    assert isinstance(e.value, RuntimeError)
    assert isinstance(e.value, ember._dynamo.exc.TorchDynamoException)
    msg = str(e.value)
    with pytest.raises(Exception) as t:
        torch.compile(lambda x: x, backend="no_such_backend")
    assert type(t.value).__name__ == type(e.value).__name__ == "InvalidBackend"
    assert msg.startswith(str(t.value).replace("torch._dynamo", "ember._dynamo"))
    for name in ("eager", "aot_eager", "inductor"):       # the valid names are listed
        assert name in msg.split("Valid backends:")[1]


def _ep_backend(gm, example_inputs):
    return gm.forward


def test_entry_point_backends_load_on_lookup(scratch_names):
    """A package's backend (entry point group "ember_dynamo_backends") is listed before it
    is loaded, and loaded by its first lookup."""
    from importlib.metadata import EntryPoint
    ep = EntryPoint(name="ep_backend", value=f"{__name__}:_ep_backend",
                    group=registry.ENTRY_POINT_GROUP)
    registry._lazy_import()
    registry._BACKENDS["ep_backend"] = ep
    scratch_names.append("ep_backend")
    assert "ep_backend" in list_backends() and "ep_backend" not in registry._COMPILER_FNS
    assert lookup_backend("ep_backend") is _ep_backend
    check_runs(lookup_backend("ep_backend")(make_gm(), []))


def test_lookup_backend_passes_callables_through():
    def mine(gm, example_inputs):
        return gm.forward
    assert lookup_backend(mine) is mine
    with pytest.raises(TypeError, match="backend must be a string or a callable, got int"):
        lookup_backend(3)


def test_builtin_names_and_tags_match_torch():
    import torch._dynamo as td
    ours_all = list_backends(exclude_tags=())
    assert {"eager", "aot_eager", "inductor"} <= set(ours_all)
    assert list_backends() == sorted(list_backends())
    for name in ("eager", "aot_eager", "inductor"):
        assert (name in list_backends()) == (name in td.list_backends()), name
        assert lookup_backend(name)._tags == td.lookup_backend(name)._tags, name


def test_eager_backend_runs_graph_forward():
    gm = make_gm()
    fn = lookup_backend("eager")(gm, [ember.ones(2)])
    x = ember.randn(2)
    # the graph replayed op by op on the eager kernels: what gm.forward computes
    ember.testing.assert_close(fn(x), gm.forward(x))
    check_runs(fn)


def test_inductor_backend_compiles_without_pending_warning():
    """inductor is built (ember/_inductor): no 'issue 10' warning, results as gm.forward."""
    pytest.importorskip("ember._inductor")
    gm = make_gm()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fn = lookup_backend("inductor")(gm, [ember.ones(2)])
        x = ember.randn(2)
        ember.testing.assert_close(fn(x), gm.forward(x))
    check_runs(fn)


# ----------------------------------------------------------------------- test backends

def test_compile_counter():
    cc = testing.CompileCounter()
    assert (cc.frame_count, cc.op_count) == (0, 0)
    check_runs(cc(make_gm(), []))
    check_runs(cc(make_gm(), []))
    assert (cc.frame_count, cc.op_count) == (2, 4)
    cc.clear()
    assert (cc.frame_count, cc.op_count) == (0, 0)


def test_compile_counter_with_backend_and_record():
    _pending._warned.add("aot_eager")
    for backend in ("eager", "aot_eager", testing.EagerAndRecordGraphs()):
        cc = testing.CompileCounterWithBackend(backend)
        gm = make_gm()
        check_runs(cc(gm, []))
        assert (cc.frame_count, cc.op_count, cc.graphs) == (1, 2, [gm])
    rec = testing.EagerAndRecordGraphs()
    gms = [make_gm(), make_gm()]
    for gm in gms:
        check_runs(rec(gm, []))
    assert rec.graphs == gms


def test_normalize_gm_matches_torch():
    from torch._dynamo.testing import normalize_gm as t_norm
    text = "class G(Module):  \n    # File: /x/y.py:3\n\n\n    def forward(self, x):   \n"
    assert testing.normalize_gm(text) == t_norm(text)


# --------------------------------------------------------------------------- explain

def _frames():
    return [traceback.FrameSummary("/home/u/model.py", 12, "forward", line="print(x)"),
            traceback.FrameSummary("/home/u/model.py", 30, "helper", line="y.item()")]


def test_explain_output_str_matches_torch():
    from torch._dynamo.backends.debugging import ExplainOutput as TExplain
    from torch._dynamo.output_graph import GraphCompileReason as TReason
    reasons = [("Failed to trace builtin operator print", _frames()),
               ("data dependent operator: aten._local_scalar_dense", _frames()[:1])]
    ops = [["aten.sin.default"], [], ["aten.add.Tensor", "aten.mul.Tensor"]]
    for kwargs in ({}, {"ops_per_graph": ops},
                   {"ops_per_graph": ops, "out_guards": ["TENSOR_MATCH x\n", "GRAD_MODE\n"],
                    "compile_times": "TorchDynamo compilation metrics: ..."}):
        ours = ExplainOutput(["g1", "g2", "g3"], 3, 2, [BreakReason(r, s) for r, s in reasons],
                             3, **kwargs)
        theirs = TExplain(["g1", "g2", "g3"], 3, 2,
                          [TReason(r, s, graph_break=True) for r, s in reasons], 3, **kwargs)
        assert str(ours) == str(theirs)
    text = str(ours)
    assert "Break Reason 2:\n    Reason: data dependent" in text
    assert "<FrameSummary file /home/u/model.py, line 12 in forward>" in text


def test_explain_output_lists_a_graphs_guard_set_line_by_line():
    out = ExplainOutput([], 1, 0, [], 0, out_guards=[["TENSOR_MATCH: L['x']", "GRAD_MODE"]])
    assert str(out).endswith("Out Guards:\n  Guard 1:\n    TENSOR_MATCH: L['x']\n"
                             "    GRAD_MODE\n")


def test_break_reason_fields():
    r = GraphCompileReason("why", _frames())
    assert r.graph_break is True and r.user_stack[0].lineno == 12
    assert BreakReason is GraphCompileReason


def test_explain_with_backend_collects_graphs_ops_and_breaks():
    eb = ExplainWithBackend("eager")
    first, second = make_gm(), make_gm()
    first.compile_subgraph_reason = GraphCompileReason("print", _frames())
    second.compile_subgraph_reason = GraphCompileReason("return", [], graph_break=False)
    check_runs(eb(first, []))
    check_runs(eb(second, []))
    out = eb.output()
    assert (out.graph_count, out.graph_break_count, out.op_count) == (2, 1, 4)
    assert [r.reason for r in out.break_reasons] == ["print"]
    assert out.graphs == [first, second]
    graphs, ops = [], []
    _explain_graph_detail(make_gm(), graphs, 0, ops, [])
    assert [[op.name for op in g] for g in ops] == [["add", "mul"]]


# -------------------------------------------------------------------------- counters

def test_counters_and_compile_times_match_torch():
    import torch._dynamo.utils as tu
    utils.reset_counters()
    utils.counters["stats"]["calls_captured"] += 3
    utils.counters["graph_break"]["print"] += 1
    assert utils.counters["frames"]["total"] == 0
    assert dict(utils.counters["stats"]) == {"calls_captured": 3}
    with utils.dynamo_timed("build_guards"):
        pass

    @utils.dynamo_timed("call_user_compiler")
    def compile_it():
        return 7
    assert compile_it() == 7 and compile_it() == 7
    assert [len(v) for v in utils.compilation_time_metrics.values()] == [1, 2]
    fixed = {"build_guards": [0.5], "call_user_compiler": [0.25, 0.125]}
    utils.compilation_time_metrics.clear()
    utils.compilation_time_metrics.update(fixed)
    saved = dict(tu.compilation_time_metrics)
    tu.compilation_time_metrics.clear()
    tu.compilation_time_metrics.update(fixed)
    try:
        for kwargs in ({}, {"aggregate": True}, {"repr": "csv"}, {"repr": "csv", "aggregate": True}):
            assert utils.compile_times(**kwargs) == tu.compile_times(**kwargs), kwargs
    finally:
        tu.compilation_time_metrics.clear()
        tu.compilation_time_metrics.update(saved)
        utils.reset_counters()
    assert not utils.counters and not utils.compilation_time_metrics


# ------------------------------------------------------------------------------ same

def _both(make):
    """make(L) for ember and torch."""
    return make(ember), make(torch)


@pytest.mark.parametrize("make_ref, make_res, kwargs", [
    (lambda L: L.tensor([1.0, 2.0]), lambda L: L.tensor([1.0, 2.00001]), {}),
    (lambda L: L.tensor([1.0, 2.0]), lambda L: L.tensor([1.0, 2.1]), {}),
    (lambda L: L.tensor([1.0, 2.0]), lambda L: L.tensor([1.0, 2.0], dtype=L.float64), {}),
    (lambda L: L.tensor([1.0, 2.0]), lambda L: L.tensor([1.0, 2.0], dtype=L.float64),
     {"exact_dtype": False}),
    (lambda L: L.tensor([1.0, float("nan")]), lambda L: L.tensor([1.0, float("nan")]), {}),
    (lambda L: L.tensor([1.0, float("nan")]), lambda L: L.tensor([1.0, float("nan")]),
     {"equal_nan": True}),
    (lambda L: L.tensor([True, False]), lambda L: L.tensor([True, True]), {}),
    (lambda L: L.tensor([3, 4]), lambda L: L.tensor([3, 4]), {}),
    (lambda L: [L.ones(2), {"a": L.zeros(3), "b": 3}], lambda L: [L.ones(2),
                                                                  {"a": L.zeros(3), "b": 3}], {}),
    (lambda L: [L.ones(2), {"a": L.zeros(3), "b": 3}], lambda L: [L.ones(2),
                                                                  {"a": L.zeros(3), "b": 4}], {}),
    (lambda L: (L.ones(2), 1.5), lambda L: (L.ones(2), 1.5), {}),
    (lambda L: (L.ones(2),), lambda L: (L.ones(2), L.ones(2)), {}),
    (lambda L: L.ones(1000) * 0.3, lambda L: L.ones(1000) * 0.3 + 1e-3, {"tol": 1e-2}),
    (lambda L: L.tensor([1.0, 2.0]), lambda L: L.tensor([-1.0, -2.0]), {"cos_similarity": True}),
    (lambda L: "abc", lambda L: "abc", {}),
    (lambda L: None, lambda L: None, {}),
    (lambda L: np.float32(1.5), lambda L: np.float32(1.5), {}),
    (lambda L: np.ones(3), lambda L: np.ones(3), {}),
])
def test_same_matches_torch(make_ref, make_res, kwargs):
    quiet = dict(log_error=lambda *a: None)
    ours = testing.same(make_ref(ember), make_res(ember), **kwargs, **quiet)
    theirs = torch._dynamo.testing.same(make_ref(torch), make_res(torch), **kwargs, **quiet)
    assert bool(ours) == bool(theirs)


def test_same_fp64_reference_rule_matches_torch():
    rng = np.random.default_rng(0)
    exact = rng.standard_normal(2000)
    noisy_ref = (exact + rng.standard_normal(2000) * 1e-3).astype(np.float32)
    for scale in (1e-3, 5e-3):
        noisy_res = (exact + rng.standard_normal(2000) * scale).astype(np.float32)
        args = [(L.from_numpy(noisy_ref), L.from_numpy(noisy_res), L.from_numpy(exact))
                for L in (ember, torch)]
        ours = testing.same(*args[0], log_error=lambda *a: None)
        theirs = torch._dynamo.testing.same(*args[1], log_error=lambda *a: None)
        assert bool(ours) == bool(theirs), scale


def test_same_logs_what_differs(caplog):
    with caplog.at_level(logging.ERROR):
        assert not testing.same(ember.ones(2), ember.ones(2, dtype=ember.float64))
    assert "dtype mismatch" in caplog.text
