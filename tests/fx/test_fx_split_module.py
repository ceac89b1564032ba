"""split_module against torch.fx's on the same module."""
import numpy as np
import pytest

import ember
from ember import fx
from ember.fx.passes.split_module import split_module

torch = pytest.importorskip("torch")
import torch.fx as tfx  # noqa: E402
from torch.fx.passes.split_module import split_module as tsplit  # noqa: E402


def make(lib):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = lib.nn.Linear(4, 4)
            self.b = lib.nn.Linear(4, 4)
            self.p = lib.nn.Parameter(lib.ones(4))

        def forward(self, x, y):
            h = self.a(x).relu()
            g = h * y
            k = self.b(g) + self.p
            return k.sum(-1), h
    return M


def _callback(node):
    """partition 0 up to relu, 1 after (by node position in the traced graph)."""
    return 0 if node.name in ("a", "relu") else 1


def _summary(gm):
    out = []
    for n in gm.graph.nodes:
        t = n.target if isinstance(n.target, str) else n.target.__name__
        out.append((n.op, n.name, t, len(n.args)))
    return out


def test_split_module_matches_torch():
    em, tm = make(ember)(), make(torch)()
    for (n, p), (_, tp) in zip(em.named_parameters(), tm.named_parameters()):
        with torch.no_grad():
            tp.copy_(torch.from_numpy(p.detach().numpy()))
    egm, tgm = fx.symbolic_trace(em), tfx.symbolic_trace(tm)
    eq, tq = {}, {}
    es = split_module(egm, em, _callback, qualname_map=eq)
    ts = tsplit(tgm, tm, _callback, qualname_map=tq)
    assert _summary(es) == _summary(ts)
    assert _summary(es.submod_0) == _summary(ts.submod_0)
    assert _summary(es.submod_1) == _summary(ts.submod_1)
    assert eq == tq
    x, y = np.random.randn(2, 4).astype("f4"), np.random.randn(2, 4).astype("f4")
    got, want = es(ember.tensor(x), ember.tensor(y)), ts(torch.tensor(x), torch.tensor(y))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
    assert es.submod_0.a is em.a        # submodules are shared, not copied


def test_split_module_cycle_raises():
    gm = fx.symbolic_trace(lambda x: (x.sin() + 1).cos() * 2)
    ids = {"sin": 0, "add": 1, "cos": 0, "mul": 1}
    with pytest.raises(RuntimeError, match="cycle"):
        split_module(gm, gm, lambda n: ids[n.name])
