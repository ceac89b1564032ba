"""ember.tiny.compile_training: the compiled, pruned, reordered step run in its planned arena
gives ember's eager SGD step (masked by the update scheme); pruning is visible in the graph;
the arena plan never overlaps two live tensors."""
import pytest

import ember
from ember import nn
from ember.tiny import UpdateScheme, compile_training, fold_bn
from ember.tiny.memory import Buffer, live_peak, plan_arena

LR = 0.1


def _net():
    ember.manual_seed(0)
    m = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU6(),
        nn.Conv2d(8, 8, 3, padding=1, groups=8), nn.ReLU(),
        nn.Conv2d(8, 6, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 3))
    with ember.no_grad():  # non-trivial BN statistics so folding matters
        m[1].running_mean.uniform_(-0.5, 0.5)
        m[1].running_var.uniform_(0.5, 2.0)
    return m.eval()


def _data():
    ember.manual_seed(1)
    return ember.randn(2, 3, 8, 8), ember.tensor([0, 2])


def _eager_step(model, scheme, x, y):
    """ember's ordinary step on the BN-folded model, updates masked by the scheme."""
    ref = fold_bn(model)
    for p in ref.parameters():
        p.requires_grad_(True)
    loss = nn.functional.cross_entropy(ref(x), y)
    loss.backward()
    out = {}
    with ember.no_grad():
        for name, p in ref.named_parameters():
            layer = name.rpartition(".")[0]
            rule, new = scheme.rule(layer), p.detach().clone()
            if rule != "frozen" and name.endswith("bias"):
                new -= LR * p.grad
            elif rule not in ("frozen", "bias"):
                k = scheme.channels(layer, ref.get_submodule(layer))
                new[:k] -= LR * p.grad[:k]
            out[name] = new
    return loss.item(), out


SCHEMES = {
    "full": lambda m: UpdateScheme.full(m),
    "bias_only": lambda m: UpdateScheme.bias_only(m),
    "sparse": lambda m: UpdateScheme({"3": 0.5, "5": "bias", "8": 0.34}),
    "last_layer": lambda m: UpdateScheme.last_k(m, 1),
}


@pytest.mark.parametrize("reorder", [False, True])
@pytest.mark.parametrize("kind", list(SCHEMES))
def test_step_matches_eager(kind, reorder):
    model = _net()
    x, y = _data()
    scheme = SCHEMES[kind](model)
    prog = compile_training(model, (x, y), nn.functional.cross_entropy, lr=LR, scheme=scheme,
                            reorder=reorder)
    loss = prog.step(x, y)
    ref_loss, ref = _eager_step(model, scheme, x, y)
    assert loss == pytest.approx(ref_loss, rel=1e-6)
    got = prog.state_dict()
    assert set(got) == set(ref)
    for name in ref:
        assert ember.allclose(got[name], ref[name], atol=1e-6), name
    # parameters the scheme freezes are untouched, updated ones moved
    before = dict(fold_bn(model).named_parameters())
    assert ember.equal(got["0.weight"], before["0.weight"]) == (kind not in ("full",))


def _op_names(prog):
    return [str(n.target) for n in prog.graph_module.graph.nodes if n.op == "call_function"]


def test_pruning_visible_in_graph():
    model = _net()
    x, y = _data()
    full = compile_training(model, (x, y), nn.functional.cross_entropy,
                            scheme=UpdateScheme.full(model))
    last = compile_training(model, (x, y), nn.functional.cross_entropy,
                            scheme=UpdateScheme.last_k(model, 1))
    bias = compile_training(model, (x, y), nn.functional.cross_entropy,
                            scheme=UpdateScheme({"5": "bias", "8": "bias"}))
    # frozen convs: no weight gradient; backprop stops at the classifier
    assert any("convolution_backward_weight" in o for o in _op_names(full))
    assert not any("convolution" in o and "backward" in o for o in _op_names(last))
    assert len(last.graph_module.graph.nodes) < len(full.graph_module.graph.nodes)
    # bias-only layers: no weight-gradient op and their input activations die in the forward
    assert not any("convolution_backward_weight" in o for o in _op_names(bias))
    conv5_input = [n for n in bias.graph_module.graph.nodes
                   if n.op == "call_function" and "convolution" in str(n.target)][1]
    fwd_end = max(i for i, item in enumerate(bias.schedule)
                  if item[0] == "node" and item[1] is bias.loss_node)
    assert bias.buffers[bias._storage(conv5_input)].end <= fwd_end


def test_plan_has_no_overlap_and_reports():
    model = _net()
    x, y = _data()
    prog = compile_training(model, (x, y), nn.functional.cross_entropy,
                            scheme=SCHEMES["sparse"](model))
    bufs = list(prog.buffers.values())
    for a in bufs:
        for b in bufs:
            if a is not b and a.start <= b.end and b.start <= a.end and a.nbytes and b.nbytes:
                assert a.offset + a.nbytes <= b.offset or b.offset + b.nbytes <= a.offset
    report = prog.memory_report(png=None)
    assert report["arena_bytes"] >= report["live_peak_bytes"] > 0
    assert report["full"] > report["sparse"] >= report["sparse_reorder"]
    assert report["full"] > report["bias_only"]
    assert len(report["timeline"]) == len(bufs)


def test_reorder_frees_gradients_early():
    """Reordered updates shorten gradient lifetimes, so the arena can only shrink."""
    model = _net()
    x, y = _data()
    kw = dict(scheme=UpdateScheme.full(model))
    plain = compile_training(model, (x, y), nn.functional.cross_entropy, reorder=False, **kw)
    moved = compile_training(model, (x, y), nn.functional.cross_entropy, reorder=True, **kw)
    assert moved.peak_bytes() <= plain.peak_bytes()
    first_update = min(i for i, it in enumerate(moved.schedule) if it[0] == "update")
    assert first_update < len(moved.schedule) - len(moved.updates)


def test_planner_first_fit():
    bufs = [Buffer("a", 100, 0, 1), Buffer("b", 50, 1, 2), Buffer("c", 100, 2, 3)]
    size = plan_arena(bufs)
    assert bufs[0].offset != bufs[1].offset
    assert bufs[2].offset == bufs[0].offset  # a is dead when c is born: same place
    assert size >= live_peak(bufs) == 150


def test_bad_input():
    model = _net()
    x, y = _data()
    with pytest.raises(ValueError, match="channel ratio"):
        UpdateScheme({"3": 2.0})
    with pytest.raises(ValueError, match="not Conv2d/Linear"):
        compile_training(model, (x, y), nn.functional.cross_entropy,
                         scheme=UpdateScheme({"1": "bias"}))
    with pytest.raises(NotImplementedError, match="adam"):
        compile_training(model, (x, y), nn.functional.cross_entropy, optimizer="adam")
    with pytest.raises(ValueError, match="no parameter"):
        compile_training(model, (x, y), nn.functional.cross_entropy,
                         scheme=UpdateScheme({"0": "frozen"}))


def test_inplace_pointwise_shares_buffers():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU6(), nn.AdaptiveAvgPool2d(1),
                          nn.Flatten(), nn.Linear(16, 3))
    x, y = _data()
    kw = dict(lr=LR, scheme=UpdateScheme.last_k(model, 1))  # the forward sets the peak
    own = compile_training(model, (x, y), nn.functional.cross_entropy, inplace=False, **kw)
    shared = compile_training(model, (x, y), nn.functional.cross_entropy, **kw)
    assert shared.inplace_of and not own.inplace_of
    assert shared.arena_bytes < own.arena_bytes
    assert shared.step(x, y) == own.step(x, y)
    for a, b in zip(shared.parameters, own.parameters):
        assert ember.equal(a, b)


def test_timeline_png(tmp_path):
    """The PNG is drawn when matplotlib is installed; without it the report says None."""
    model = _net()
    x, y = _data()
    prog = compile_training(model, (x, y), nn.functional.cross_entropy,
                            scheme=UpdateScheme.last_k(model, 1))
    png = prog.memory_report(png=str(tmp_path / "t.png"))["png"]
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert png is None
    else:
        assert (tmp_path / "t.png").stat().st_size > 0
