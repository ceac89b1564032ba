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
