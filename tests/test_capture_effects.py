"""Every effect of a training step is a registry op on the dispatch path (DESIGN §6).

A recording TorchDispatchMode, written as a PyTorch user writes one, captures one full
training step of a small CNN (conv, BatchNorm, ReLU, Dropout, linear, cross-entropy;
backward; GradScaler + Adam/AdamW/SGD-momentum; with and without bfloat16 autocast) as a
list of registry calls with tensors replaced by ids. A tensor the step uses that is
neither a declared input nor the output of a recorded call "appeared from nowhere" and
fails the capture. Replaying the list on real tensors from the same starting state must
give bit-identical parameters, optimizer state, running statistics, scaler state and RNG
state to the eager step -- with the capture taken on real tensors and under
FakeTensorMode (no data at all). While the real capture runs, .item()/.numpy()/.tolist()/
bool() raise, and a lint greps the step path for host reads.
"""
import re
from pathlib import Path

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember._subclasses.fake_tensor import FakeTensorMode
from ember.ops._registry import REGISTRY
from ember.utils._python_dispatch import TorchDispatchMode

ROOT = Path(__file__).resolve().parent.parent


class Recorder(TorchDispatchMode):
    """Records (op name, args with tensors as ('t', key), output keys)."""

    def __init__(self, inputs):
        super().__init__()
        self.keys = {}          # id(tensor) -> key
        self.keep = []          # keeps recorded tensors alive (ids stay unique)
        self.calls = []
        for name, t in inputs.items():
            self.keys[id(t)] = ("in", name)
            self.keep.append(t)

    def _ref(self, func, a):
        if isinstance(a, ember.Tensor):
            k = self.keys.get(id(a))
            if k is None:
                raise AssertionError(f"{func.name}: an argument of shape {list(a.shape)} "
                                     "appeared from nowhere (no recorded op made it)")
            return ("t", k)
        if isinstance(a, (list, tuple)):
            return type(a)(self._ref(func, x) for x in a)
        return a

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        assert not kwargs
        sargs = tuple(self._ref(func, a) for a in args)
        out = func(*args)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        keys = []
        for o in outs:
            if isinstance(o, ember.Tensor):
                k = ("v", len(self.calls), len(keys))
                self.keys[id(o)] = k
                self.keep.append(o)
                keys.append(k)
            else:
                keys.append(None)
        self.calls.append((func.name, sargs, keys))
        return out


def replay(calls, inputs):
    """Run the recorded calls on `inputs` (same names as at capture time)."""
    env = {("in", name): t for name, t in inputs.items()}

    def arg(a):
        if isinstance(a, tuple) and len(a) == 2 and a[0] == "t":
            return env[a[1]]
        if isinstance(a, (list, tuple)):
            return type(a)(arg(x) for x in a)
        return a

    with ember.no_grad():
        for name, sargs, keys in calls:
            out = REGISTRY[name](*(arg(a) for a in sargs))
            outs = out if isinstance(out, (tuple, list)) else (out,)
            for k, o in zip(keys, outs):
                if k is not None:
                    env[k] = o


# ----------------------------------------------------------------------------- the step

def build(opt_name):
    ember.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Dropout(0.5),
                          nn.Flatten(), nn.Linear(4 * 4 * 4, 3))
    params = list(model.parameters())
    if opt_name == "Adam":
        opt = ember.optim.Adam(params, lr=1e-2, capturable=True)
    elif opt_name == "AdamW":
        opt = ember.optim.AdamW(params, lr=1e-2, amsgrad=True, capturable=True)
    else:
        opt = ember.optim.SGD(params, lr=1e-2, momentum=0.9, nesterov=True, weight_decay=1e-3)
    scaler = ember.amp.GradScaler("cpu", init_scale=2.0 ** 8, growth_interval=1)
    return model, opt, scaler


def step(model, opt, scaler, x, y, autocast=False):
    opt.zero_grad(set_to_none=True)
    with ember.autocast("cpu", dtype=ember.bfloat16, enabled=autocast):
        loss = F.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()


def state(model, opt, scaler):
    """Every tensor the step reads or writes, by a stable name."""
    out = {}
    for name, t in model.named_parameters():
        out["param." + name] = t
    for name, t in model.named_buffers():
        out["buffer." + name] = t
    for i, p in enumerate(model.parameters()):
        for k, v in opt.state[p].items():
            if isinstance(v, ember.Tensor):
                out[f"opt.{i}.{k}"] = v
    out["scaler.scale"] = scaler._scale
    out["scaler.growth_tracker"] = scaler._growth_tracker
    return out


def data():
    rng = np.random.default_rng(1)
    x = ember.tensor(rng.standard_normal((8, 1, 6, 6)).astype(np.float32))
    y = ember.tensor(rng.integers(0, 3, 8))
    return x, y


def warm(opt_name):
    """A model after one eager step (optimizer and scaler state exist), and the RNG state."""
    m, o, s = build(opt_name)
    step(m, o, s, *data())
    return (m, o, s), ember.get_rng_state()


def snapshot(tensors):
    return {k: np.array(t.detach().numpy(), copy=True) for k, t in tensors.items()}


def assert_identical(a, b):
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].dtype == b[k].dtype and a[k].shape == b[k].shape, k
        assert a[k].tobytes() == b[k].tobytes(), f"{k} differs"


@pytest.fixture
def no_host_reads(monkeypatch):
    """While the step is recorded, reading a tensor's value on the host fails."""
    def refuse(self, *a, **k):
        raise AssertionError("a host read (.item()/.numpy()/.tolist()/bool()) happened "
                             "inside the training step")
    active = []

    def guarded(name):
        orig = getattr(ember.Tensor, name)

        def method(self, *a, **k):
            return refuse(self) if active else orig(self, *a, **k)
        return method
    for name in ("item", "numpy", "tolist", "__bool__", "__float__", "__int__"):
        monkeypatch.setattr(ember.Tensor, name, guarded(name))
    return active


def eager_result(opt_name, autocast=False):
    (m, o, s), rng = warm(opt_name)
    step(m, o, s, *data(), autocast=autocast)
    return snapshot(state(m, o, s)), ember.get_rng_state().numpy().tobytes(), rng


@pytest.mark.parametrize("opt_name,autocast", [("Adam", False), ("AdamW", False),
                                               ("SGD", False), ("Adam", True)])
def test_real_capture_replays_bit_identical(opt_name, autocast, no_host_reads):
    want, want_rng, rng0 = eager_result(opt_name, autocast)

    (m, o, s), _ = warm(opt_name)
    ember.set_rng_state(rng0)
    x, y = data()
    inputs = dict(state(m, o, s), x=x, y=y)
    no_host_reads.append(True)
    with Recorder(inputs) as rec:
        step(m, o, s, x, y, autocast)
    no_host_reads.clear()
    assert_identical(snapshot(state(m, o, s)), want)       # recording changes nothing

    (m, o, s), _ = warm(opt_name)
    ember.set_rng_state(rng0)
    x, y = data()
    replay(rec.calls, dict(state(m, o, s), x=x, y=y))
    assert_identical(snapshot(state(m, o, s)), want)
    assert ember.get_rng_state().numpy().tobytes() == want_rng
    names = {c[0] for c in rec.calls}
    for effect in ("accumulate_grad_", "_amp_foreach_non_finite_check_and_unscale_",
                   "_amp_update_scale_", "bernoulli_p", "copy_"):
        assert any(n.startswith(effect) for n in names), effect


def fake_state(opt_name, fm):
    """The same model, optimizer and scaler built and warmed up on fake tensors."""
    with fm:
        m, o, s = build(opt_name)
        x, y = data()
        step(m, o, s, x, y)
    return (m, o, s), (x, y)


@pytest.mark.parametrize("opt_name,autocast", [("Adam", False), ("AdamW", False),
                                               ("SGD", False), ("SGD", True)])
def test_fake_capture_replays_bit_identical(opt_name, autocast):
    want, want_rng, rng0 = eager_result(opt_name, autocast)

    fm = FakeTensorMode()
    (m, o, s), (x, y) = fake_state(opt_name, fm)
    fakes = dict(state(m, o, s), x=x, y=y)
    assert all(t._fake for t in fakes.values())
    before = ember.get_rng_state().numpy().tobytes()
    with fm, Recorder(fakes) as rec:
        step(m, o, s, x, y, autocast)
    assert ember.get_rng_state().numpy().tobytes() == before    # fake runs draw nothing

    (m, o, s), _ = warm(opt_name)
    ember.set_rng_state(rng0)
    x, y = data()
    real = dict(state(m, o, s), x=x, y=y)
    assert real.keys() == fakes.keys()
    replay(rec.calls, real)
    assert_identical(snapshot(state(m, o, s)), want)
    assert ember.get_rng_state().numpy().tobytes() == want_rng


def test_skipped_step_under_a_mode_matches_eager():
    """An inf gradient: eager skips the optimizer step; under a mode the step runs and
    is masked out by where(found_inf, ...) -- the same bits, and the scale backs off."""
    def run(mode):
        m, o, s = build("Adam")
        step(m, o, s, *data())
        x, y = data()
        x[0, 0, 0, 0] = float("inf")
        if mode:
            with Recorder(dict(state(m, o, s), x=x, y=y)):
                step(m, o, s, x, y)
        else:
            step(m, o, s, x, y)
        return snapshot(state(m, o, s))
    eager, moded = run(False), run(True)
    assert_identical(eager, moded)
    assert eager["scaler.scale"] == np.float32(2.0 ** 8)   # grew to 2**9, backed off


def test_out_t_and_tensor_are_recorded():
    """out= writes, t_() and ember.tensor() constants reach a mode as registry ops."""
    a = ember.ones(2, 3)
    out = ember.empty(0)
    with Recorder({"a": a, "out": out}) as rec:
        ember.add(a, a, out=out)
        a.t_()
        c = ember.tensor([1.0, 2.0])
        ember.mul(c, 2, out=c)
    names = [n for n, _, _ in rec.calls]
    assert names == ["add", "resize_", "copy_", "permute", "set_", "lift_fresh_copy", "mul",
                     "copy_"]
    assert list(a.shape) == [3, 2] and list(out.shape) == [2, 3]
    assert rec.calls[5][1][0].tolist() == [1.0, 2.0]      # the constant's value is in the call
    b, out2 = ember.ones(2, 3), ember.empty(0)
    replay(rec.calls, {"a": b, "out": out2})
    assert list(b.shape) == [3, 2] and out2.tolist() == [[2.0] * 3] * 2


def test_saved_output_unpacks_through_alias():
    x = ember.randn(4, requires_grad=True)
    with Recorder({"x": x}) as rec:
        x.relu().sum().backward()
    names = [n for n, _, _ in rec.calls]
    assert "alias" in names and "accumulate_grad_" in names


@pytest.mark.parametrize("name,kw", [("Adam", {}), ("Adam", dict(amsgrad=True, weight_decay=0.1)),
                                     ("AdamW", {}), ("AdamW", dict(amsgrad=True))])
def test_capturable_adam_matches_torch(name, kw, monkeypatch):
    """capturable=True follows PyTorch's capturable formulas (torch allows it only on
    accelerators; its cpu check is lifted here to use it as the oracle)."""
    torch = pytest.importorskip("torch")
    import torch.optim.adam as torch_adam
    monkeypatch.setattr(torch_adam, "_get_capturable_supported_devices",
                        lambda supports_xla=True: ["cpu"])
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((5, 3)).astype(np.float32)
    grads = [rng.standard_normal((5, 3)).astype(np.float32) for _ in range(4)]
    res = []
    for L in (torch, ember):
        p = L.tensor(w0.copy(), requires_grad=True)
        opt = getattr(L.optim, name)([p], lr=0.1, capturable=True, **kw)
        for g in grads:
            p.grad = L.tensor(g)
            opt.step()
        res.append(p.detach().numpy().copy())
        assert opt.state[p]["step"].dtype == L.float32
    np.testing.assert_allclose(res[1], res[0], rtol=1e-6, atol=1e-7)


STEP_PATH = ["ember/optim/_functional.py", "ember/amp/grad_scaler.py", "ember/optim/adam.py",
             "ember/optim/sgd.py", "ember/ops/effects.py"]


def test_step_path_has_no_host_reads():
    """Lint: the capturable step path reads no tensor values back to Python, except the
    documented eager-only branches (marked `# eager only`)."""
    bad = []
    for rel in STEP_PATH:
        src = (ROOT / rel).read_text()
        fn = None
        for n, line in enumerate(src.splitlines(), 1):
            m = re.match(r"\s*(?:def|class) (\w+)", line)
            if m:
                fn = m.group(1)
            if fn in _HOST_READ_ALLOWED.get(rel, ()) or "# eager only" in line:
                continue
            if re.search(r"\.item\(\)|\.numpy\(\)|\.tolist\(\)|\._data\b", line):
                bad.append(f"{rel}:{n}: {line.strip()}")
    assert not bad, "host reads on the step path:\n" + "\n".join(bad)


# functions that are not on the step path, or are kernels (where data is read by design)
_HOST_READ_ALLOWED = {
    "ember/optim/_functional.py": {"adagrad", "adamax", "nadam", "radam", "asgd", "rprop",
                                   "rmsprop", "adadelta"},
    "ember/amp/grad_scaler.py": {"get_scale", "_get_growth_tracker"},
    "ember/ops/effects.py": {"_set", "_resize", "_non_finite_check_and_unscale",
                             "_update_scale"},
}


@pytest.mark.parametrize("found,tracker,interval,scale", [(0.0, 0, 3, 4.0), (0.0, 2, 3, 4.0),
                                                          (1.0, 2, 3, 4.0),
                                                          (0.0, 0, 1, 3.0e38)])
def test_amp_update_scale_matches_torch(found, tracker, interval, scale):
    torch = pytest.importorskip("torch")
    res = []
    for L in (torch, ember):
        s = L.full((), scale, dtype=L.float32)
        tr = L.full((), tracker, dtype=L.int32)
        out = L._amp_update_scale_(s, tr, L.full((), found), 2.0, 0.5, interval)
        assert out is s
        res.append((s.item(), tr.item()))
    assert res[0] == res[1]


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@pytest.mark.parametrize("bad", [None, float("inf"), float("nan")])
def test_amp_unscale_matches_torch(dtype, bad):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    vals = [rng.standard_normal(5).astype(dtype), rng.standard_normal((2, 3)).astype(dtype)]
    if bad is not None:
        vals[1][1, 2] = bad
    res = []
    for L in (torch, ember):
        grads = [L.tensor(v.copy()) for v in vals]
        found = L.zeros((), dtype=L.float32)
        L._amp_foreach_non_finite_check_and_unscale_(grads, found,
                                                     L.full((), 1 / 3, dtype=L.float32))
        res.append([found.item()] + [g.numpy().tobytes() for g in grads])
    assert res[0] == res[1]


def test_unscale_refuses_fp16_grads_like_torch():
    torch = pytest.importorskip("torch")
    for L in (torch, ember):
        p = L.zeros(2, dtype=L.float16, requires_grad=True)
        p.grad = L.ones(2, dtype=L.float16)
        opt = L.optim.SGD([p], lr=0.1)
        scaler = L.amp.GradScaler("cpu")
        scaler.scale(L.ones(()))
        with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients."):
            scaler.unscale_(opt)


def test_update_with_new_scale_is_in_place():
    scaler = ember.amp.GradScaler("cpu")
    scaler.scale(ember.ones(()))
    s = scaler._scale
    for found in ("float", "tensor"):
        scaler._per_optimizer_states = {}
        scaler.update(8.0 if found == "float" else ember.full((), 16.0))
        assert scaler._scale is s
    assert scaler.get_scale() == 16.0


def test_adam_and_grad_scaler_run_on_fake_tensors():
    """Default (non-capturable) Adam with a GradScaler runs under FakeTensorMode: fake
    step counters take the tensor formulas and nothing reads a value."""
    with FakeTensorMode():
        p = ember.nn.Parameter(ember.randn(3, 2))
        opt = ember.optim.Adam([p], lr=0.1)
        scaler = ember.amp.GradScaler("cpu")
        for _ in range(2):
            scaler.scale((p * p).sum()).backward()
            scaler.step(opt)
            scaler.update()
    assert p._fake and opt.state[p]["step"]._fake and scaler._scale._fake


def test_post_accumulate_grad_hooks_fire_under_a_mode():
    """DDP's hook point: it runs after the accumulate_grad_ op, with .grad set."""
    p = ember.nn.Parameter(ember.ones(3))
    seen = []
    p.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    with Recorder({"p": p}) as rec:
        (p * 2).sum().backward()
        (p * 3).sum().backward()
    assert seen == [[2.0] * 3, [5.0] * 3]
    assert [n for n, _, _ in rec.calls].count("accumulate_grad_") == 2


def test_custom_function_outputs_come_from_ops_under_a_mode():
    """A custom Function that returns an input as-is and saves its output: both reach a
    recording as alias ops, so its backward uses only recorded tensors."""
    class Scale(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            out = x * 2
            ctx.save_for_backward(out)
            return out, y

        @staticmethod
        def backward(ctx, g, gy):
            (out,) = ctx.saved_tensors
            return g * out, gy

    x = ember.ones(3, requires_grad=True)
    y = ember.ones(3, requires_grad=True)
    with Recorder({"x": x, "y": y}) as rec:
        a, b = Scale.apply(x, y)
        (a + b).sum().backward()
    assert x.grad.tolist() == [2.0] * 3 and y.grad.tolist() == [1.0] * 3
    assert [n for n, _, _ in rec.calls].count("alias") >= 2
