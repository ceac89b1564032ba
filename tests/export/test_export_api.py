"""export's signature, ranges, guards and errors, compared with torch.export."""
import copy
import io

import numpy as np
import pytest

import ember
from ember.export import Dim, dims, export, save, load

def _pair():
    class M:
        pass

    def make(lib):
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = lib.nn.Linear(3, 4)
                self.bn = lib.nn.BatchNorm1d(4)
                self.register_buffer("scale", lib.ones(4), persistent=False)

            def forward(self, x, y):
                return self.bn(self.fc(x)).relu() * self.scale + y
        return Net()
    M.e = make(ember)
    try:
        import torch
        M.t = make(torch)
    except ImportError:
        M.t = None
    return M


def _specs(sig):
    return ([(s.kind.name, s.arg.name, s.target, s.persistent) for s in sig.input_specs],
            [(s.kind.name, s.target) for s in sig.output_specs])


@pytest.mark.parametrize("train", [False, True])
def test_graph_signature_matches_torch(train):
    torch = pytest.importorskip("torch")
    m = _pair()
    m.e.train(train)
    m.t.train(train)
    xe, ye = ember.randn(5, 3), ember.randn(5, 4)
    ep = export(m.e, (xe, ye), dynamic_shapes={"x": {0: Dim("b", min=2, max=64)},
                                                "y": {0: Dim("b", min=2, max=64)}})
    tp = torch.export.export(m.t, (torch.randn(5, 3), torch.randn(5, 4)),
                             dynamic_shapes={"x": {0: torch.export.Dim("b", min=2, max=64)},
                                             "y": {0: torch.export.Dim("b", min=2, max=64)}})
    # torch 2.13 exports a training IR that keeps in-place ops; its functional form (what
    # ember.export gives directly) is the one after run_decompositions
    tp = tp.run_decompositions()
    ins_e, outs_e = _specs(ep.graph_signature)
    ins_t, outs_t = _specs(tp.graph_signature)
    assert ins_e == ins_t
    # torch orders mutated buffers by where they are updated; compare as sets + kinds
    assert sorted(outs_e, key=str) == sorted(outs_t, key=str)
    assert ep.graph_signature.parameters == tp.graph_signature.parameters
    assert ep.graph_signature.buffers == tp.graph_signature.buffers
    assert ep.graph_signature.user_inputs == tp.graph_signature.user_inputs
    assert set(ep.graph_signature.buffers_to_mutate.values()) == \
        set(tp.graph_signature.buffers_to_mutate.values())
    assert set(ep.state_dict) == set(tp.state_dict)
    assert set(ep.constants) == {"scale"}
    (vr,) = ep.range_constraints.values()
    (tvr,) = tp.range_constraints.values()
    assert (vr.lower, vr.upper) == (tvr.lower, tvr.upper) == (2, 64)


def test_export_does_not_change_the_module_and_module_updates_buffers():
    m = _pair().e.train()
    before = {k: v.clone() for k, v in m.state_dict().items()}
    x, y = ember.randn(6, 3), ember.randn(6, 4)
    ep = export(m, (x, y))
    for k, v in m.state_dict().items():
        assert ember.equal(v, before[k]), k
    ref = copy.deepcopy(m)
    mod = ep.module()
    out = mod(x, y)
    want = ref(x, y)
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(mod.bn.running_mean.numpy(), ref.bn.running_mean.numpy(),
                               rtol=1e-6)
    assert int(mod.bn.num_batches_tracked) == 1


def test_graph_is_functional():
    m = _pair().e.train()
    ep = export(m, (ember.randn(5, 3), ember.randn(5, 4)))
    names = [getattr(n.target, "name", "") for n in ep.graph.nodes if n.op == "call_function"]
    assert not any(n.endswith("_") for n in names), names


def test_dim_violation_errors_as_torch():
    m = _pair().e.eval()
    b = Dim("b", min=2, max=8)
    ep = export(m, (ember.randn(5, 3), ember.randn(5, 4)),
                dynamic_shapes={"x": {0: b}, "y": {0: b}})
    mod = ep.module()
    with pytest.raises(AssertionError, match=r"Guard failed: x.size\(\)\[0\] <= 8"):
        mod(ember.randn(9, 3), ember.randn(9, 4))
    with pytest.raises(AssertionError, match=r"Guard failed: x.size\(\)\[1\] == 3"):
        mod(ember.randn(4, 2), ember.randn(4, 4))
    with pytest.raises(AssertionError, match="dynamic size"):
        mod(ember.randn(4, 3), ember.randn(5, 4))
    assert mod(ember.randn(8, 3), ember.randn(8, 4)).shape == (8, 4)


def test_specialized_dim_raises_user_error():
    class V(ember.nn.Module):
        def forward(self, x):
            return x.reshape(5, -1)
    with pytest.raises(ember._dynamo.exc.UserError, match="Constraints violated"):
        export(V(), (ember.randn(5, 3),), dynamic_shapes={"x": {0: Dim("b")}})
    with pytest.raises(ember._dynamo.exc.UserError, match="outside"):
        export(V(), (ember.randn(5, 3),), dynamic_shapes={"x": {0: Dim("b", max=4)}})


def test_data_dependent_control_flow_names_the_line_and_cond():
    class D(ember.nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x + 1
            return x - 1
    with pytest.raises(ember._dynamo.exc.UserError) as ei:
        export(D(), (ember.randn(3),))
    msg = str(ei.value)
    assert "test_export_api.py" in msg and "if x.sum() > 0" in msg and "ember.cond" in msg


def test_not_a_module_and_direct_call():
    with pytest.raises(ValueError, match="Expected `mod` to be an instance"):
        export(lambda x: x, (ember.ones(2),))
    ep = export(ember.nn.ReLU(), (ember.ones(2),))
    with pytest.raises(RuntimeError, match="module\\(\\)"):
        ep(ember.ones(2))


def test_dims_and_repr():
    a, b = dims("a", "b", min=2, max=9)
    assert (a.__name__, a.min, a.max, b.__name__) == ("a", 2, 9, "b")
    assert repr(Dim("n")) == "Dim('n')"


def test_save_load_file_object_and_nested_outputs():
    class N(ember.nn.Module):
        def forward(self, x, n=2):
            return {"a": x * n, "b": (x.sum(), 3)}
    ep = export(N(), (ember.randn(4),))
    buf = io.BytesIO()
    save(ep, buf)
    buf.seek(0)
    ep2 = load(buf)
    x = ember.randn(4)
    out = ep2.module()(x)
    assert set(out) == {"a", "b"} and out["b"][1] == 3
    np.testing.assert_allclose(out["a"].numpy(), (x * 2).numpy())


def test_run_decompositions_gives_primitives():
    m = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.LayerNorm(4), ember.nn.GELU())
    x = ember.randn(2, 3)
    ep = export(m, (x,)).run_decompositions()
    ops = {n.target.name for n in ep.graph.nodes if n.op == "call_function"}
    assert not ops & {"linear", "layer_norm", "gelu"}, ops
    np.testing.assert_allclose(ep.module()(x).detach().numpy(), m(x).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_aot_compile_wants_an_exported_program():
    # aot_compile itself is tested in test_aot_compile.py
    with pytest.raises(TypeError, match="expected an ExportedProgram"):
        ember.export.aot_compile(None, "x.so")


def test_user_input_mutation_and_kwargs():
    class Acc(ember.nn.Module):
        def forward(self, x, *, scale):
            x.add_(1)
            return x * scale
    x = ember.zeros(3)
    ep = export(Acc(), (x,), {"scale": ember.full((3,), 2.0)})
    assert ember.equal(x, ember.zeros(3))          # export leaves the example alone
    kinds = [s.kind.name for s in ep.graph_signature.output_specs]
    assert kinds == ["USER_INPUT_MUTATION", "USER_OUTPUT"]
    y = ember.zeros(3)
    out = ep.module()(y, scale=ember.full((3,), 3.0))
    assert ember.equal(y, ember.ones(3)) and ember.equal(out, ember.full((3,), 3.0))


def test_weights_fall_back_to_ember_format_without_safetensors(monkeypatch, tmp_path):
    from ember.utils import safetensors as st

    def missing(*a, **k):
        raise ImportError("no safetensors")
    monkeypatch.setattr(st, "save", missing)
    m = ember.nn.Linear(3, 2)
    save(export(m, (ember.randn(2, 3),)), str(tmp_path / "p.zip"))
    import zipfile
    assert "ember_export/weights.pt" in zipfile.ZipFile(tmp_path / "p.zip").namelist()
    x = ember.randn(2, 3)
    np.testing.assert_allclose(load(str(tmp_path / "p.zip")).module()(x).detach().numpy(),
                               m(x).detach().numpy(), rtol=1e-6)


def test_export_is_independent_of_earlier_compiles():
    m = ember.nn.Linear(3, 2)
    export(m, (ember.randn(5, 3),))
    ep = export(m, (ember.randn(7, 3),))
    assert ep._input_shapes == [("float32", [7, 3])] and ep.range_constraints == {}


def test_run_decompositions_keeps_dynamic_dims(tmp_path):
    m = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.LayerNorm(4),
                            ember.nn.Flatten(0)).eval()
    ep = export(m, (ember.randn(5, 3),), dynamic_shapes=({0: Dim("b")},)).run_decompositions()
    assert "layer_norm" not in {n.target.name for n in ep.graph.nodes
                                if hasattr(n.target, "name")}
    save(ep, str(tmp_path / "d.zip"))
    mod = load(str(tmp_path / "d.zip")).module()
    for b in (2, 9):
        x = ember.randn(b, 3)
        np.testing.assert_allclose(mod(x).detach().numpy(), m(x).detach().numpy(), rtol=1e-5,
                                   atol=1e-6)


def test_example_size_one_for_a_dim_is_refused():
    with pytest.raises(ember._dynamo.exc.UserError, match=r"Constraints violated \(b\)"):
        export(ember.nn.Linear(3, 2), (ember.randn(1, 3),),
               dynamic_shapes={"input": {0: Dim("b")}})


def test_constant_tensor_attribute_and_random_ops_round_trip():
    class K(ember.nn.Module):
        def __init__(s):        # noqa: N805 - the self argument's name is free
            super().__init__()
            s.fc = ember.nn.Linear(3, 3)
            s.table = ember.arange(3.0)
            s.drop = ember.nn.Dropout(0.5)

        def forward(s, x):      # noqa: N805
            return s.drop(s.fc(x)) + s.table, None, 7
    m = K()
    ep = export(m, (ember.randn(2, 3),))
    const = [(s.kind.name, s.arg.name, s.target) for s in ep.graph_signature.input_specs
             if s.kind.name == "CONSTANT_TENSOR"]
    assert const == [("CONSTANT_TENSOR", "c_table", "table")]      # torch.export's naming
    buf = io.BytesIO()
    save(ep, buf)
    buf.seek(0)
    mod = load(buf).module()
    ember.manual_seed(0)
    got = mod(ember.ones(2, 3))
    ember.manual_seed(0)
    want = m(ember.ones(2, 3))
    assert got[1:] == (None, 7)
    np.testing.assert_allclose(got[0].detach().numpy(), want[0].detach().numpy())
