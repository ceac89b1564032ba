"""ember.compile vs torch.compile(backend="eager"), side by side in one run.

What the capture costs, with the "eager" backend on both sides (the graph runs on each
library's eager kernels, so only capture and call overhead differ):

- capture: the first compiled call of resnet18's forward (1x3x64x64, eval, no_grad) minus
  one eager call, after a reset (best of a few);
- per call: a compiled call against an eager call of the same module (a small MLP and
  resnet18 at 1x3x64x64); the issue's goal is compiled ≤ 1.1x eager;
- guards per call: a compiled call of a 20-parameter module (10 x Linear(8, 8)) minus a
  direct call of the graph it runs: guard evaluation plus the compiled wrapper's own
  work (goal ≤ 5 µs). The graph's direct call is timed by a backend that keeps the
  arguments the compiled function passes to the graph and calls the graph with them.
  For ember the note also times the guard function of the compiled entry alone (read from
  ember._dynamo.runtime's cache; left out if those internals change).

The "inductor" rows compare the code-generating backends (ember/_inductor against
torch.compile's default inductor), both on one thread, with both eagers in the note: the
4M-element pointwise+sum, MLP inference, MLP and small-CNN training steps, and the cold
compile of the MLP in fresh processes with empty caches (plus ember's first call from a
warm disk cache in another new process).

While ember.compile does not exist or raises, ember's cells read "n/a (not built)" and
torch's numbers are still measured.

    .venv/bin/python benchmarks/compile.py [row-name-substring ...]

writes benchmarks/results/compile.json and compile.md (a full run only) and prints the table;
"others' CPU" is the share of the CPUs other processes used during a row (run.py's measure):
rows taken while it is high are noise.
"""
import json
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # before NumPy loads its BLAS
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ember  # noqa: E402
from run import RESULTS, compare, machine, with_others_share  # noqa: E402

torch.set_num_threads(1)   # both libraries on one BLAS thread: the box is shared
ember.set_num_threads(1)
LIBS = {"ember": ember, "torch": torch}


class NotBuilt(Exception):
    """ember.compile is missing or raised: the ember cells read n/a."""


def compiled(L, fn, backend="eager"):
    """L.compile(fn, backend=backend); for ember, any failure becomes NotBuilt."""
    if L is torch:
        return torch.compile(fn, backend=backend)
    if not hasattr(ember, "compile"):
        raise NotBuilt("ember.compile does not exist")
    try:
        return ember.compile(fn, backend=backend)
    except Exception as e:      # noqa: BLE001  (any failure: the row says why)
        raise NotBuilt(f"{type(e).__name__}: {e}") from e


def first_call(L, fn, *args):
    """Run fn (a compiled function's first call may raise for ember: NotBuilt)."""
    if L is torch:
        return fn(*args)
    try:
        return fn(*args)
    except Exception as e:      # noqa: BLE001
        raise NotBuilt(f"{type(e).__name__}: {e}") from e


def reset(L):
    if L is torch:
        torch._dynamo.reset()
        return
    try:
        import ember._dynamo
        ember._dynamo.reset()
    except Exception as e:      # noqa: BLE001
        raise NotBuilt(f"ember._dynamo.reset: {type(e).__name__}: {e}") from e


# ------------------------------------------------------------------------- models

def resnet18(L):
    L.manual_seed(0)
    if L is torch:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "vision"))
        from tv_oracle import torchvision
        return torchvision().models.resnet18().eval()
    import ember.vision.models
    return ember.vision.models.resnet18().eval()


def mlp(L):
    L.manual_seed(0)
    nn = L.nn
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                         nn.Linear(128, 10)).eval()


def linear_stack(L):
    """20 parameters: ten Linear(8, 8) layers."""
    L.manual_seed(0)
    return L.nn.Sequential(*[L.nn.Linear(8, 8) for _ in range(10)]).eval()


def _input(L, *shape):
    return L.from_numpy(np.random.default_rng(0).standard_normal(shape).astype(np.float32))


def _no_grad(L, module):
    def forward(x):
        with L.no_grad():
            return module(x)
    return forward


# ------------------------------------------------------------------------- rows

def _row(name, times, note="", target=None, met=None, status="ok", extra=None):
    r = {"benchmark": name, "status": status, "times_s": times, "note": note,
         "target": target, "met": met}
    if "ember" in times and "torch" in times:
        r["ember/torch"] = times["ember"]["min"] / times["torch"]["min"]
    r.update(extra or {})
    return r


def bench_capture(repeat=3):
    """Capture time of resnet18's forward: first compiled call minus an eager call."""
    name = "capture: resnet18 forward, 1x3x64x64 (first call - eager call)"
    times, status = {}, {}
    for k, L in LIBS.items():
        fn = _no_grad(L, resnet18(L))
        x = _input(L, 1, 3, 64, 64)
        eager = min(_timed(fn, x) for _ in range(3))
        samples = []
        try:
            for _ in range(repeat):
                reset(L)
                c = compiled(L, fn)
                samples.append(_timed(lambda: first_call(L, c, x)) - eager)
        except NotBuilt as e:
            status[k] = f"n/a (not built: {e})"
            continue
        times[k] = {"min": min(samples), "median": sorted(samples)[len(samples) // 2]}
    met = times["ember"]["min"] <= 1.0 if "ember" in times else None
    return _row(name, times, target="ember ≤ 1 s", met=met,
                status=status.get("ember", "ok"),
                note="; ".join(f"{k}: {v}" for k, v in status.items()))


def _timed(fn, *args):
    t = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t


def bench_per_call(name, build, shape, repeat=7, budget=0.1):
    """Compiled call vs eager call of the same module, per library."""
    fns, status = {}, {}
    for k, L in LIBS.items():
        fn = _no_grad(L, build(L))
        x = _input(L, *shape)
        fns[f"{k} eager"] = (lambda f, a: lambda: f(a))(fn, x)
        try:
            c = compiled(L, fn)
            first_call(L, c, x)
            fns[f"{k} compiled"] = (lambda f, a: lambda: f(a))(c, x)
        except NotBuilt as e:
            status[k] = f"n/a (not built: {e})"
    t = compare(fns, repeat=repeat, budget=budget, pause=0.05)
    times = {k: t[f"{k} compiled"] for k in LIBS if f"{k} compiled" in t}
    ratio = {k: t[f"{k} compiled"]["min"] / t[f"{k} eager"]["min"] for k in times}
    note = ", ".join(f"{k} eager {_fmt(t[f'{k} eager'])}" for k in LIBS)
    note += "".join(f"; {k}: {v}" for k, v in status.items())
    return _row(name, times, note=note, target="ember compiled ≤ 1.1× ember eager",
                met=ratio["ember"] <= 1.1 if "ember" in ratio else None,
                status=status.get("ember", "ok"), extra={"compiled/eager": ratio,
                                                         "eager_times_s": {
                                                             k: t[f"{k} eager"] for k in LIBS}})


def bench_guards(repeat=15, budget=0.1):
    """Compiled call minus a direct call of the captured graph: guards + wrapper."""
    name = "guards per call: 10 x Linear(8, 8) (20 parameters), 1x8 input"
    fns, status, graph_args = {}, {}, {}
    for k, L in LIBS.items():
        fn = _no_grad(L, linear_stack(L))
        x = _input(L, 1, 8)
        seen = []

        def backend(gm, example_inputs, seen=seen):
            def run(*args):
                if not seen:
                    seen.append((gm.forward, args))
                return gm.forward(*args)
            return run
        try:
            c = compiled(L, fn, backend=backend)
            first_call(L, c, x)
        except NotBuilt as e:
            status[k] = f"n/a (not built: {e})"
            continue
        if len(seen) != 1:
            status[k] = f"error: expected one graph, backend saw {len(seen)}"
            continue
        graph, args = seen[0]
        graph_args[k] = len(args)
        fns[f"{k} compiled"] = (lambda f, a: lambda: f(a))(c, x)
        fns[f"{k} graph"] = (lambda g, a: lambda: g(*a))(graph, args)
        if L is ember and _ember_guard_fn(fn, x) is not None:
            fns["ember guard function"] = _ember_guard_fn(fn, x)
    t = compare(fns, repeat=repeat, budget=budget, pause=0.05)
    times = {}
    for k in LIBS:
        if f"{k} compiled" in t:
            times[k] = {s: t[f"{k} compiled"][s] - t[f"{k} graph"][s] for s in ("min", "median")}
    note = ", ".join(f"{k}: compiled {_fmt(t[f'{k} compiled'])}, graph {_fmt(t[f'{k} graph'])}"
                     f" ({graph_args[k]} graph inputs)" for k in times)
    if "ember guard function" in t:
        note += f"; ember's guard function alone {_fmt(t['ember guard function'])}"
    note += "".join(f"; {k}: {v}" for k, v in status.items())
    return _row(name, times, note=note, target="ember ≤ 5 µs",
                met=times["ember"]["min"] <= 5e-6 if "ember" in times else None,
                status=status.get("ember", "ok"))


def _ember_guard_fn(fn, x):
    """A call of the guard of fn's first compiled entry alone (ember._dynamo.runtime's
    internals: None when they are not there, and the note leaves it out)."""
    try:
        from ember._dynamo import runtime
        code = fn.__code__
        entry = runtime.entries(fn)[0]
        L = runtime._bind(fn, code, (x,), {})
        C = dict(zip(code.co_freevars, fn.__closure__ or ()))
        G = fn.__globals__
        if entry.guard(L, [], G, C, entry.consts) is not True:
            return None
        return lambda: entry.guard(L, [], G, C, entry.consts)
    except Exception:   # noqa: BLE001  (internals changed: no breakdown)
        return None


# ------------------------------------------------------------------------- inductor rows
# ember's "inductor" (generated C, ember/_inductor) against torch.compile's default inductor,
# both on one thread (set above); eager times of both in the note.

def _pointwise_sum(x):
    return (x.sin() * x.cos()).relu().exp().sum()


def bench_inductor_call(name, build, target, repeat=7, budget=0.2):
    """Steady-state call time: ember inductor vs torch.compile (inductor), eager in the note."""
    fns, status = {}, {}
    for k, L in LIBS.items():
        fn, args = build(L)
        fns[f"{k} eager"] = (lambda f, a: lambda: f(*a))(fn, args)
        try:
            reset(L)
            c = compiled(L, fn, backend="inductor")
            first_call(L, c, *args)
            fns[f"{k} compiled"] = (lambda f, a: lambda: f(*a))(c, args)
        except NotBuilt as e:
            status[k] = f"n/a (not built: {e})"
    t = compare(fns, repeat=repeat, budget=budget, pause=0.05)
    times = {k: t[f"{k} compiled"] for k in LIBS if f"{k} compiled" in t}
    ratio = {k: t[f"{k} compiled"]["min"] / t[f"{k} eager"]["min"] for k in times}
    note = ", ".join(f"{k} eager {_fmt(t[f'{k} eager'])}" for k in LIBS)
    if "ember" in times:
        vs = times["ember"]["min"] / t["torch eager"]["min"]
        note += f"; ember compiled / torch eager {vs:.2f}×"
    note += "".join(f"; {k}: {v}" for k, v in status.items())
    r = _row(name, times, note=note, target=target, status=status.get("ember", "ok"),
             extra={"compiled/eager": ratio,
                    "eager_times_s": {k: t[f"{k} eager"] for k in LIBS}})
    r["met"] = r["ember/torch"] <= 1.0 if "ember/torch" in r else None
    return r


def _peak_bytes(fn, args):
    """Peak bytes NumPy allocated during one call (tracemalloc sees NumPy's data; torch's
    CPU allocator is invisible to it, so only ember's side is measured)."""
    import tracemalloc
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        fn(*args)
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def bench_vs_torch_eager(name, build, target, goal, mode=None, repeat=5, budget=0.3,
                         memory=False):
    """ember compiled (`mode`) against torch EAGER (the issue's goal for these rows), ember
    eager and the compiled/eager ratio in the note; with `memory`, ember's peak NumPy bytes
    of one eager and one compiled call (the training steps' activation memory)."""
    fns, status, first = {}, {}, {}
    for k, L in LIBS.items():
        fn, args = build(L)
        fns[f"{k} eager"] = (lambda f, a: lambda: f(*a))(fn, args)
        if L is ember:
            eager_peak = _peak_bytes(fn, args) if memory else None
            try:
                reset(L)
                c = ember.compile(fn, mode=mode)
                t0 = time.perf_counter()
                first_call(L, c, *args)
                first[k] = time.perf_counter() - t0
                fns[f"{k} compiled"] = (lambda f, a: lambda: f(*a))(c, args)
            except (NotBuilt, Exception) as e:      # noqa: BLE001
                status[k] = f"n/a (not built: {e})"
    t = compare(fns, repeat=repeat, budget=budget, pause=0.05)
    times = {"torch": t["torch eager"]}
    note = f"ember eager {_fmt(t['ember eager'])}"
    extra = {"eager_times_s": {k: t[f"{k} eager"] for k in LIBS}}
    met = None
    if "ember compiled" in t:
        times["ember"] = t["ember compiled"]
        ce = t["ember compiled"]["min"] / t["ember eager"]["min"]
        extra["compiled/eager"] = {"ember": ce}
        note += f"; ember compiled / ember eager {ce:.2f}× (first call {first['ember']:.1f} s)"
        met = goal(t["ember compiled"]["min"] / t["torch eager"]["min"], ce)
        if memory:
            peak = _peak_bytes(lambda *a: fns["ember compiled"](), ())
            note += (f"; ember peak NumPy memory of a step: eager {eager_peak / 2**20:.1f} MiB, "
                     f"compiled {peak / 2**20:.1f} MiB")
    note += "".join(f"; {k}: {v}" for k, v in status.items())
    return _row(name, times, note=note, target=target, met=met,
                status=status.get("ember", "ok"), extra=extra)


def _resnet18_b8_case(L):
    return _no_grad(L, resnet18(L)), (_input(L, 8, 3, 224, 224),)


def _lstm_lm(L):
    L.manual_seed(0)
    nn = L.nn

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(1000, 64)
            self.lstm = nn.LSTM(64, 128, batch_first=True)
            self.out = nn.Linear(128, 1000)

        def forward(self, x):
            h, _ = self.lstm(self.emb(x))
            return self.out(h).reshape(-1, 1000)
    return LM()


def _lstm_train_case(L):
    m = _lstm_lm(L)
    rng = np.random.default_rng(0)
    x = L.from_numpy(rng.integers(0, 1000, (16, 32)).astype(np.int64))
    y = L.from_numpy(rng.integers(0, 1000, 16 * 32).astype(np.int64))
    return _train_step(L, m, x, y)


def _pw_case(L):
    return _pointwise_sum, (_input(L, 4_000_000),)


def _mlp_case(L):
    m = mlp(L)
    return _no_grad(L, m), (_input(L, 32, 64),)


def _train_step(L, model, x, y):
    opt = L.optim.SGD(model.parameters(), lr=0.01)

    def step(x, y):
        opt.zero_grad()
        loss = L.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step, (x, y)


def _labels(L, n, k):
    return L.from_numpy(np.random.default_rng(1).integers(0, k, n).astype(np.int64))


def _mlp_train_case(L):
    L.manual_seed(0)
    nn = L.nn
    m = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    return _train_step(L, m, _input(L, 32, 64), _labels(L, 32, 10))


def _cnn_train_case(L):
    L.manual_seed(0)
    nn = L.nn
    m = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Flatten(), nn.Linear(16 * 7 * 7, 10))
    return _train_step(L, m, _input(L, 32, 1, 28, 28), _labels(L, 32, 10))


_COLD_CHILD = r"""
import os, sys, time
os.environ["OPENBLAS_NUM_THREADS"] = "1"
sys.path.insert(0, sys.argv[1])
import numpy as np
lib = sys.argv[2]
if lib == "torch":
    import torch as L
    L.set_num_threads(1)
else:
    import ember as L
    L.set_num_threads(1)
from compile import mlp, _no_grad, _input
fn = _no_grad(L, mlp(L))
x = _input(L, 32, 64)
fn(x)
t = time.perf_counter()
c = L.compile(fn, backend="inductor")
c(x)
print(time.perf_counter() - t)
"""


def _cold_child(lib, env):
    import subprocess
    r = subprocess.run([sys.executable, "-c", _COLD_CHILD, str(Path(__file__).resolve().parent),
                        lib], env=env, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise NotBuilt(f"child failed: {r.stderr[-300:]}")
    return float(r.stdout.split()[-1])


def bench_inductor_cold():
    """First compiled call of the MLP (capture + decompose + C compile) in a fresh process
    with empty caches (EMBER_CACHE_DIR / TORCHINDUCTOR_CACHE_DIR in a temporary directory),
    torch.compile's beside it; the note has ember's first call in another new process that
    finds its disk cache warm."""
    import tempfile
    name = "inductor cold compile: MLP 64-128-128-10 b32 inference (first call, new process)"
    times, status, note = {}, {}, ""
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, EMBER_CACHE_DIR=os.path.join(d, "ember"),
                   TORCHINDUCTOR_CACHE_DIR=os.path.join(d, "torch"))
        for k in LIBS:
            try:
                s = _cold_child(k, env)
                times[k] = {"min": s, "median": s}
            except NotBuilt as e:
                status[k] = f"n/a ({e})"
        if "ember" in times:
            try:
                note = (f"ember from the disk cache in a new process: "
                        f"{_cold_child('ember', env) * 1e3:.0f} ms")
            except NotBuilt as e:
                note = f"warm-cache child: {e}"
    note += "".join(f"; {k}: {v}" for k, v in status.items())
    return _row(name, times, note=note, target="ember ≤ 2 s cold, ≤ 0.3 s from cache",
                met=times["ember"]["min"] <= 2.0 if "ember" in times else None,
                status=status.get("ember", "ok"))


_COLD_TRAIN_CHILD = r"""
import os, sys, time
os.environ["OPENBLAS_NUM_THREADS"] = "1"
sys.path.insert(0, sys.argv[1])
import numpy as np
if sys.argv[2] == "torch":
    import torch as L
else:
    import ember as L
L.set_num_threads(1)
from compile import resnet18, _input, _labels, _train_step
m = resnet18(L).train()
step, args = _train_step(L, m, _input(L, 2, 3, 64, 64), _labels(L, 2, 1000))
t = time.perf_counter()
L.compile(step)(*args)
print(time.perf_counter() - t)
"""


def bench_cold_train():
    """First compiled call of a resnet18 training step (b2, 64x64; capture, AOT autograd,
    code generation, C compiler) in a fresh process with empty caches, both libraries."""
    import subprocess
    import tempfile
    name = "cold compile: resnet18 training step (first call, new process, empty caches)"
    times, status = {}, {}
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, EMBER_CACHE_DIR=os.path.join(d, "ember"),
                   TORCHINDUCTOR_CACHE_DIR=os.path.join(d, "torch"))
        for k in LIBS:
            r = subprocess.run([sys.executable, "-c", _COLD_TRAIN_CHILD,
                                str(Path(__file__).resolve().parent), k], env=env,
                               capture_output=True, text=True, timeout=1800)
            if r.returncode != 0:
                status[k] = f"n/a (child failed: {r.stderr[-300:]})"
                continue
            s = float(r.stdout.split()[-1])
            times[k] = {"min": s, "median": s}
    met = times["ember"]["min"] <= 0.25 * times["torch"]["min"] \
        if len(times) == 2 else None
    return _row(name, times, target="ember ≤ 25% of torch.compile's", met=met,
                status=status.get("ember", "ok"),
                note="; ".join(f"{k}: {v}" for k, v in status.items()))


ROWS = [
    ("capture", bench_capture),
    ("per call: MLP", lambda: bench_per_call(
        "per call: MLP 64-128-128-10, batch 8, compiled", mlp, (8, 64))),
    ("per call: resnet18", lambda: bench_per_call(
        "per call: resnet18 forward, 1x3x64x64, compiled", resnet18, (1, 3, 64, 64),
        repeat=5, budget=0.3)),
    ("guards", bench_guards),
    ("inductor: pointwise", lambda: bench_inductor_call(
        "inductor: 4M-element (x.sin()*x.cos()).relu().exp().sum()", _pw_case,
        "ember ≤ 1.0× torch.compile")),
    ("inductor: MLP", lambda: bench_inductor_call(
        "inductor: MLP 64-128-128-10 b32 inference", _mlp_case, "ember ≤ 1.0× torch.compile")),
    ("inductor: MLP train", lambda: bench_inductor_call(
        "inductor: MLP 64-128-10 b32 training step (fwd+bwd+SGD)", _mlp_train_case,
        "ember ≤ 1.0× torch.compile", budget=0.3)),
    ("inductor: CNN train", lambda: bench_inductor_call(
        "inductor: small CNN b32 28x28 training step (conv-relu-pool x2, linear; SGD)",
        _cnn_train_case, "ember ≤ 1.0× torch.compile", repeat=5, budget=0.3)),
    ("inductor: cold", bench_inductor_cold),
    ("modes: MLP reduce-overhead", lambda: bench_vs_torch_eager(
        "reduce-overhead: MLP 64-128-128-10 b32 inference vs torch eager", _mlp_case,
        "ember ≤ 1.0× torch eager", lambda r, ce: r <= 1.0, mode="reduce-overhead",
        repeat=7, budget=0.2)),
    ("modes: MLP train reduce-overhead", lambda: bench_vs_torch_eager(
        "reduce-overhead: MLP 64-128-10 b32 training step (fwd+bwd+SGD) vs torch eager",
        _mlp_train_case, "ember ≤ 0.33× torch eager", lambda r, ce: r <= 0.33,
        mode="reduce-overhead", repeat=7, memory=True)),
    ("modes: CNN train", lambda: bench_vs_torch_eager(
        "reduce-overhead: small CNN b32 28x28 training step vs torch eager", _cnn_train_case,
        "ember ≤ 1.0× torch eager, ≥ 3× faster than ember eager",
        lambda r, ce: r <= 1.0 and ce <= 1 / 3, mode="reduce-overhead", memory=True)),
    ("models: resnet18 b8", lambda: bench_vs_torch_eager(
        "reduce-overhead: resnet18 inference b8 224x224 vs torch eager", _resnet18_b8_case,
        "ember ≤ 1.2× torch eager", lambda r, ce: r <= 1.2, mode="reduce-overhead",
        repeat=3, budget=0.5)),
    ("models: LSTM LM train", lambda: bench_vs_torch_eager(
        "reduce-overhead: LSTM LM train step (emb 64, LSTM 128, vocab 1000, b16 x 32 tokens) "
        "vs torch eager", _lstm_train_case, "ember ≤ 1.0× torch eager",
        lambda r, ce: r <= 1.0, mode="reduce-overhead", repeat=3, budget=0.5, memory=True)),
    ("cold: resnet18 train", lambda: bench_cold_train()),
]


# ------------------------------------------------------------------------- report

def _fmt(t):
    if t is None:
        return "—"
    s = t["min"]
    if abs(s) < 1e-3:
        return f"{s * 1e6:.2f} µs"
    if abs(s) < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def _share(share):
    return "?" if share is None else f"{share:.0%}"


def markdown(meta, rows):
    lines = [f"ember.compile vs torch.compile(backend=\"eager\"), {meta['date']} — {meta['cpu']}, "
             f"ember at {meta['commit'] or 'unknown commit'}, torch {meta['torch']}",
             "",
             "| benchmark | ember | torch | ember/torch | compiled/eager ember · torch | target "
             "| met | others' CPU |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        t = r["times_s"]
        ember_cell = _fmt(t.get("ember")) if "ember" in t else (
            "n/a (not built)" if r["status"].startswith("n/a") else r["status"])
        ratio = f"{r['ember/torch']:.2f}×" if "ember/torch" in r else "—"
        ce = r.get("compiled/eager", {})
        ce_cell = " · ".join(f"{ce[k]:.2f}×" if k in ce else "—" for k in LIBS) if ce else ""
        met = {True: "yes", False: "**no**", None: "—"}[r["met"]]
        lines.append(f"| {r['benchmark']} | {ember_cell} | {_fmt(t.get('torch'))} | {ratio} | "
                     f"{ce_cell} | {r['target'] or ''} | {met} | {_share(r.get('others_cpu'))} |")
    notes = [f"- {r['benchmark']}: {r['note']}" for r in rows if r["note"]]
    return "\n".join(lines + ([""] + notes if notes else [])) + "\n"


def _write(path, text):
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def main(filters):
    meta = machine()
    rows = []
    for key, bench in ROWS:
        if filters and not any(f in key for f in filters):
            continue
        print(f"running {key} ...", file=sys.stderr, flush=True)
        row, others = with_others_share(bench)
        row["others_cpu"] = others      # share of the CPUs other processes used meanwhile
        rows.append(row)
        print(markdown(meta, rows[-1:]).splitlines()[4], file=sys.stderr, flush=True)
    table = markdown(meta, rows)
    if not filters:
        RESULTS.mkdir(exist_ok=True)
        _write(RESULTS / "compile.json", json.dumps({"machine": meta, "rows": rows}, indent=2)
               + "\n")
        _write(RESULTS / "compile.md", table)
    print(table)


if __name__ == "__main__":
    main(sys.argv[1:])
