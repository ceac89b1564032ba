"""subgraph_rewriter.replace_pattern against torch.fx's on the same module."""
import numpy as np
import pytest

import ember
from ember import fx
from ember.fx import subgraph_rewriter

torch = pytest.importorskip("torch")
import torch.fx as tfx  # noqa: E402


def _case(lib, fx_mod):
    F = lib.nn.functional

    class M(lib.nn.Module):
        def forward(self, x, y):
            a = lib.relu(x + y)
            b = lib.relu(a + x)
            return b * 2, lib.relu(x - y)

    def pattern(x, y):
        return lib.relu(x + y)

    def replacement(x, y):
        return F.gelu(lib.add(x, y))
    gm = fx_mod.symbolic_trace(M())
    return gm, fx_mod.subgraph_rewriter.replace_pattern(gm, pattern, replacement)


def test_replace_pattern_matches_torch():
    (egm, em), (tgm, tm) = _case(ember, fx), _case(torch, tfx)
    assert len(em) == len(tm) == 2
    assert [m.anchor.name for m in em] == [m.anchor.name for m in tm]
    summary = [(n.op, n.name, getattr(n.target, "__name__", n.target)) for n in egm.graph.nodes]
    tsummary = [(n.op, n.name, getattr(n.target, "__name__", n.target))
                for n in tgm.graph.nodes]
    assert summary == tsummary
    x, y = np.random.randn(3).astype("f4"), np.random.randn(3).astype("f4")
    got, want = egm(ember.tensor(x), ember.tensor(y)), tgm(torch.tensor(x), torch.tensor(y))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)


def test_match_with_interior_used_outside_is_skipped():
    def f(x, y):
        s = x + y
        return ember.relu(s), s * 3       # `s` escapes: relu(x + y) cannot be replaced
    gm = fx.symbolic_trace(f)
    matches = subgraph_rewriter.replace_pattern(gm, lambda x, y: ember.relu(x + y),
                                                lambda x, y: ember.sigmoid(x - y))
    assert matches == []
    assert "relu" in gm.code


def test_multi_output_pattern_and_repeated_input():
    def f(x):
        a = x * x
        b = a.sin()
        c = a.cos()
        return b + c

    def pattern(x):
        a = x * x
        return a.sin(), a.cos()

    def replacement(x):
        return ember.sin(x.pow(2)), ember.cos(x.pow(2))
    gm = fx.symbolic_trace(f)
    t = ember.randn(4)
    want = f(t)
    matches = subgraph_rewriter.replace_pattern(gm, pattern, replacement)
    assert len(matches) == 1
    gm.graph.lint()
    assert "pow" in gm.code and "mul" not in gm.code
    np.testing.assert_allclose(gm(t).numpy(), want.numpy(), rtol=1e-6)
    # x * y does not match x * x (a placeholder stands for one value)
    gm2 = fx.symbolic_trace(lambda x, y: (x * y).sin() + (x * y).cos())
    assert subgraph_rewriter.replace_pattern(gm2, pattern, replacement) == []


def test_literals_must_be_equal():
    gm = fx.symbolic_trace(lambda x: (x + 1) * (x + 2))
    matches = subgraph_rewriter.replace_pattern(gm, lambda x: x + 2, lambda x: x - 2)
    assert len(matches) == 1
    t = ember.ones(2)
    np.testing.assert_allclose(gm(t).numpy(), [-2.0, -2.0])
