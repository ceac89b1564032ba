"""ember.cond: eager semantics, export of both branches, compile with fullgraph."""
import numpy as np
import pytest

import ember
from ember.export import export, save, load


class _C(ember.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = ember.nn.Linear(3, 3)

    def forward(self, x):
        return ember.cond(x.sum() > 0, lambda x: self.fc(x).relu(), lambda x: x.cos() - 1,
                          (x,))


def test_eager_runs_one_branch():
    calls = []

    def t(x):
        calls.append("t")
        return x + 1

    def f(x):
        calls.append("f")
        return x - 1
    x = ember.ones(2)
    assert ember.equal(ember.cond(x.sum() > 0, t, f, (x,)), x + 1)
    assert ember.equal(ember.cond(False, t, f, (x,)), x - 1)
    assert calls == ["t", "f"]


def test_export_holds_both_branches_and_round_trips(tmp_path):
    ember.manual_seed(0)
    m = _C()
    ep = export(m, (ember.randn(4, 3),))
    ops = {n.target.name for n in ep.graph.nodes if n.op == "call_function"}
    assert {"linear", "relu", "cos", "where"} <= ops
    assert ep.graph_signature.parameters == ("fc.weight", "fc.bias")
    save(ep, str(tmp_path / "c.zip"))
    mod = load(str(tmp_path / "c.zip")).module()
    for x in (ember.ones(4, 3), -ember.ones(4, 3), ember.randn(4, 3)):
        np.testing.assert_allclose(mod(x).detach().numpy(), m(x).detach().numpy(), rtol=1e-6)


def test_compile_fullgraph_with_cond():
    f = ember.compile(lambda x: ember.cond(x.sum() > 0, lambda x: x + 1, lambda x: x - 1,
                                           (x,)), fullgraph=True, backend="eager")
    assert ember.equal(f(ember.ones(2)), ember.full((2,), 2.0))
    assert ember.equal(f(-ember.ones(2)), ember.full((2,), -2.0))


def test_branch_mismatch_and_bad_pred():
    class Bad(ember.nn.Module):
        def forward(self, x):
            return ember.cond(x.sum() > 0, lambda x: x, lambda x: x[:1], (x,))
    with pytest.raises(ember._dynamo.exc.UserError, match="same metadata"):
        export(Bad(), (ember.randn(3),))
    with pytest.raises(RuntimeError, match="single-element"):
        ember.cond(ember.ones(2) > 0, lambda: 1, lambda: 2, ())
