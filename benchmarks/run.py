"""ember vs PyTorch (and NumPy), side by side in one run.

Writes benchmarks/results/core.json (for scripts) and core.md (for people) and
prints the table. Every workload is written once, parameterized by the library
module `L` (ember or torch), so both run the same code. Times are per call; each
library is timed in interleaved repeats so that machine noise hits both alike, and
the table reports the best repeat, as timeit advises (the JSON also keeps the median).

A workload that needs an op ember does not have yet reports "missing: <op>"
instead of failing the whole run.
"""
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import timeit
from pathlib import Path

import numpy as np
import torch

import ember

RESULTS = Path(__file__).resolve().parent / "results"
LIBS = {"ember": ember, "torch": torch}


class Missing(Exception):
    """ember lacks an op the workload needs."""


# ---------------------------------------------------------------------------
# timing

def _calls_per_repeat(fn, budget=0.05):
    """Enough calls that one repeat takes about `budget` seconds (like timeit.autorange)."""
    fn()
    n = 1
    while True:
        t = timeit.timeit(fn, number=n)
        if t >= budget / 4 or n >= 1 << 20:
            return max(1, int(n * budget / max(t, 1e-9)))
        n *= 4


def compare(fns, repeat=9, budget=0.05, pause=0.0):
    """Per-call seconds {name: {"min", "median"}} for each fn, repeats interleaved.

    `pause` seconds of sleep and one untimed call precede each timed batch, so that
    the previous library's BLAS/OpenMP threads stop spinning before the next starts.
    """
    numbers = {k: _calls_per_repeat(f, budget) for k, f in fns.items()}
    samples = {k: [] for k in fns}
    for _ in range(repeat):
        for k, f in fns.items():
            if pause:
                time.sleep(pause)
                f()
            samples[k].append(timeit.timeit(f, number=numbers[k]) / numbers[k])
    return {k: {"min": min(s), "median": statistics.median(s)} for k, s in samples.items()}


def _ember_call(fn, needs=()):
    """Run an ember workload, turning 'op not there' into Missing.

    `needs` names the functions (`log_softmax`) and Tensor methods (`Tensor.__matmul__`)
    the workload uses, so a missing operator is reported rather than a TypeError.
    """
    for name in needs:
        owner, _, attr = name.rpartition(".")
        if not hasattr(ember.Tensor if owner else ember, attr):
            raise Missing(name)
    try:
        return fn()
    except AttributeError as e:
        raise Missing(e.name or str(e)) from e
    except NotImplementedError as e:
        raise Missing(str(e)) from e


# ---------------------------------------------------------------------------
# workloads (each builder returns a zero-argument callable)

def add_workload(L, requires_grad):
    rng = np.random.default_rng(0)
    a = L.from_numpy(rng.standard_normal(10).astype(np.float32))
    b = L.from_numpy(rng.standard_normal(10).astype(np.float32))
    if requires_grad:
        a.requires_grad_(True)
    return lambda: a + b


MLP_OPS = ["Tensor.__matmul__", "relu", "log_softmax", "no_grad", "Tensor.__isub__"]


def mlp_workload(L, batch=32, sizes=(64, 128, 10), lr=0.01):
    """One SGD step of a 64-128-10 MLP with cross-entropy, in plain tensor code."""
    rng = np.random.default_rng(0)
    d_in, d_h, d_out = sizes

    def param(*shape):
        w = (rng.standard_normal(shape) * 0.1).astype(np.float32)
        return L.from_numpy(w).requires_grad_()

    w1, b1, w2, b2 = param(d_in, d_h), param(d_h), param(d_h, d_out), param(d_out)
    params = [w1, b1, w2, b2]
    x = L.from_numpy(rng.standard_normal((batch, d_in)).astype(np.float32))
    labels = rng.integers(0, d_out, batch)
    onehot = L.from_numpy(np.eye(d_out, dtype=np.float32)[labels])

    def step():
        h = L.relu(x @ w1 + b1)
        logits = h @ w2 + b2
        loss = -(L.log_softmax(logits, 1) * onehot).sum() / batch
        loss.backward()
        with L.no_grad():
            for p in params:
                p -= lr * p.grad
                p.grad = None
        return loss

    return step


def mlp_numpy(batch=32, sizes=(64, 128, 10), lr=0.01):
    """The same step with a hand-written backward: the floor for any NumPy framework."""
    rng = np.random.default_rng(0)
    d_in, d_h, d_out = sizes

    def param(*shape):
        return (rng.standard_normal(shape) * 0.1).astype(np.float32)

    w1, b1, w2, b2 = param(d_in, d_h), param(d_h), param(d_h, d_out), param(d_out)
    x = rng.standard_normal((batch, d_in)).astype(np.float32)
    labels = rng.integers(0, d_out, batch)
    onehot = np.eye(d_out, dtype=np.float32)[labels]

    def step():
        pre = x @ w1 + b1
        h = np.maximum(pre, 0)
        z = h @ w2 + b2
        z = z - z.max(1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(1, keepdims=True))
        loss = -(logp * onehot).sum() / batch
        dz = (np.exp(logp) - onehot) / batch
        dh = (dz @ w2.T) * (pre > 0)
        grads = (x.T @ dh, dh.sum(0), h.T @ dz, dz.sum(0))
        for p, g in zip((w1, b1, w2, b2), grads):
            p -= lr * g
        return loss

    return step


def matmul_workload(L, n=1024):
    rng = np.random.default_rng(0)
    a = L.from_numpy(rng.standard_normal((n, n)).astype(np.float32))
    b = L.from_numpy(rng.standard_normal((n, n)).astype(np.float32))
    return lambda: a @ b


# ---------------------------------------------------------------------------
# benchmarks (each returns a list of rows)

def row(name, times, target=None, status="ok", note=""):
    """One table row; `target` = (reference, max allowed ember/reference time, text)."""
    r = {"benchmark": name, "status": status, "note": note, "times_s": times}
    e = times.get("ember")
    for ref in ("torch", "numpy"):
        if e and times.get(ref):
            r[f"ember/{ref}"] = e["min"] / times[ref]["min"]
    if target:
        ref, limit, r["target"] = target
        ratio = r.get(f"ember/{ref}")
        r["met"] = None if ratio is None else ratio <= limit
    return r


def bench_dispatch():
    rows = []
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal(10).astype(np.float32) for _ in range(2))
    for rg in (False, True):
        name = "dispatch: a + b, 10 float32" + (", a.requires_grad" if rg else "")
        fns = {k: add_workload(L, rg) for k, L in LIBS.items()}
        if not rg:
            fns["numpy"] = lambda: x + y
        # issue 8: plain dispatch at torch's cost, recording autograd history within 1.2x
        target = ("torch", 1.2, "≤ 1.2× torch") if rg else ("torch", 1.0, "≤ 1.0× torch")
        rows.append(row(name, compare(fns), target=target))
    rows.append(_profiled_dispatch())
    return rows


def _profiled_dispatch():
    """The same a + b while a profiler records every op (the profiler-off cost is the
    first row: ember's profiler adds nothing to dispatch when it is not running)."""
    fns = {}
    for k, L in LIBS.items():
        step = add_workload(L, False)
        prof = L.profiler.profile()
        prof.__enter__()
        fns[k] = (prof, step)
    try:
        times = compare({k: f for k, (_, f) in fns.items()}, repeat=5, budget=0.02)
    finally:
        for prof, _ in fns.values():
            prof.__exit__(None, None, None)
    return row("dispatch: a + b, 10 float32, inside profile()", times,
               note="per-op cost of recording an event; profiler off = first row")


def bench_mlp():
    name = "MLP 64-128-10, batch 32: fwd + bwd + SGD step"
    target = ("torch", 1.5, "≤ 1.5× torch")
    try:
        first = _ember_call(lambda: mlp_workload(ember)().item(), MLP_OPS)
    except Missing as e:
        return [row(name, {}, target=target, status=f"missing: {e}")]
    expect = mlp_workload(torch)().item()
    if not np.isclose(first, expect, rtol=1e-4):
        return [row(name, {}, status=f"error: loss {first} != torch {expect}")]
    steps = {"ember": mlp_workload(ember), "torch": mlp_workload(torch), "numpy": mlp_numpy()}
    return [row(name, compare(steps, budget=0.1, pause=0.3), target=target,
                note="numpy = the same step with a hand-written backward")]


MATMUL_TARGET = ("numpy", 1 / 0.95, "≥ 0.95× numpy speed")


def bench_matmul(n=1024):
    name = f"matmul {n}x{n} float32"
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
    try:
        mm = matmul_workload(ember, n)
        got = _ember_call(lambda: mm().numpy(), ["Tensor.__matmul__"])
    except Missing as e:
        return [row(name, {}, target=MATMUL_TARGET, status=f"missing: {e}")]
    if not np.allclose(got, a @ b, rtol=1e-3, atol=1e-2):
        return [row(name, {}, status="error: ember result differs from np.matmul")]
    fns = {"ember": mm, "torch": matmul_workload(torch, n), "numpy": lambda: np.matmul(a, b)}
    times = compare(fns, repeat=11, budget=0.2, pause=0.3)
    gflops = {k: 2 * n**3 / t["min"] / 1e9 for k, t in times.items()}
    note = ", ".join(f"{k} {g:.0f} GFLOP/s" for k, g in gflops.items())
    return [row(name, times, target=MATMUL_TARGET, note=note)]


def fork_workload(L, forked, n=1 << 21):
    """Two independent branches of large elementwise work, with jit.fork or in sequence."""
    a, b = L.ones(n) * 0.5, L.ones(n) * 0.25

    def branch(x):
        return ((x * 1.5 + 0.5).exp() * x).sqrt().sum()

    def step():
        if forked:
            fa, fb = L.jit.fork(branch, a), L.jit.fork(branch, b)
            return L.jit.wait(fa) + L.jit.wait(fb)
        return branch(a) + branch(b)
    return step


def bench_fork():
    name = "fork/wait: 2 branches of 2M-element elementwise work"
    try:
        _ember_call(lambda: fork_workload(ember, True)(), ["jit"])
    except Missing as e:
        return [row(name, {}, status=f"missing: {e}")]
    fns = {"ember": fork_workload(ember, True), "torch": fork_workload(torch, True),
           "ember sequential": fork_workload(ember, False),
           "torch sequential": fork_workload(torch, False)}
    times = compare(fns, repeat=7, budget=0.3, pause=0.3)
    seq_e, seq_t = times.pop("ember sequential"), times.pop("torch sequential")
    speed_e = seq_e["min"] / times["ember"]["min"]
    speed_t = seq_t["min"] / times["torch"]["min"]
    r = row(name, times, note=f"speedup over sequential: ember {speed_e:.2f}×, torch "
                              f"{speed_t:.2f}× (torch.jit.fork runs eagerly outside TorchScript)")
    r["target"] = "ember fork speedup > 1×"
    r["met"] = speed_e > 1.0
    r["speedup"] = {"ember": speed_e, "torch": speed_t}
    return [r]


ALLOC_SIZES = {"small MLP 64-128-10, batch 32": ((64, 128, 10), 32, 300),
               "wide MLP 2048-4096-10, batch 2048": ((2048, 4096, 10), 2048, 8)}


def alloc_child(label, cache):
    """Runs in a child process: repeated training steps; prints the mean step time."""
    import contextlib
    sizes, batch, steps = ALLOC_SIZES[label]
    step = mlp_workload(ember, batch=batch, sizes=sizes)
    ctx = ember.cpu.caching_allocator() if cache else contextlib.nullcontext()
    with ctx:
        step()
        t = time.perf_counter()
        for _ in range(steps):
            step()
        print((time.perf_counter() - t) / steps)


def _alloc_run(label, cache):
    """(step seconds, minor page faults of the whole run) under /usr/bin/time -v."""
    cmd = [sys.executable, __file__, "--alloc-child", label, "cache" if cache else "plain"]
    if os.path.exists("/usr/bin/time"):
        cmd = ["/usr/bin/time", "-v"] + cmd
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    faults = None
    for line in out.stderr.splitlines():
        if "Minor (reclaiming a frame) page faults" in line:
            faults = int(line.rsplit(":", 1)[1])
    return float(out.stdout.strip().splitlines()[-1]), faults


def bench_allocator():
    rows = []
    for label in ALLOC_SIZES:
        runs = {c: [_alloc_run(label, c) for _ in range(3)] for c in (False, True)}
        best = {c: min(r[0] for r in v) for c, v in runs.items()}
        faults = {c: min(r[1] for r in v) if v[0][1] is not None else None
                  for c, v in runs.items()}
        times = {"ember": {"min": best[True], "median": best[True]}}
        r = row(f"caching allocator: {label}, step", times,
                note=f"without the cache {best[False] * 1e3:.2f} ms/step, "
                     f"{faults[False]} minor page faults per run; with it "
                     f"{best[True] * 1e3:.2f} ms/step, {faults[True]} faults")
        r["target"] = "fewer page faults, step time ≤ without"
        r["met"] = (faults[True] is None or faults[True] <= faults[False]) and \
            best[True] <= best[False] * 1.02
        r["allocator"] = {"plain_s": best[False], "cached_s": best[True],
                          "plain_faults": faults[False], "cached_faults": faults[True]}
        rows.append(r)
    return rows


def cnn_workload(L, amp, batch=32):
    """One training step of a small CNN (conv-bn-relu x2, pool, linear), float32 or bf16
    autocast; returns (step, peak activation bytes or None)."""
    nn = L.nn
    L.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                          nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))
    x = L.randn(batch, 3, 32, 32)
    y = L.randint(0, 10, (batch,))
    opt = L.optim.SGD(model.parameters(), lr=0.01)

    def step():
        opt.zero_grad()
        with L.autocast("cpu", dtype=L.bfloat16, enabled=amp):
            loss = nn.functional.cross_entropy(model(x), y)
        loss.float().backward()
        opt.step()
        return loss

    peak = None
    if L is ember:
        step()
        base = ember.memory_allocated()
        ember.reset_peak_memory_stats()
        opt.zero_grad()
        with L.autocast("cpu", dtype=L.bfloat16, enabled=amp):
            loss = nn.functional.cross_entropy(model(x), y)
        peak = ember.max_memory_allocated() - base      # forward activations kept for backward
        del loss
    return step, peak


def bench_amp():
    rows = []
    for amp in (False, True):
        name = f"small CNN step, batch 32, {'bf16 autocast' if amp else 'float32'}"
        try:
            step_e, peak = _ember_call(lambda: cnn_workload(ember, amp))
            step_e()
        except Missing as e:
            rows.append(row(name, {}, status=f"missing: {e}"))
            continue
        step_t, _ = cnn_workload(torch, amp)
        times = compare({"ember": step_e, "torch": step_t}, repeat=5, budget=0.3, pause=0.3)
        r = row(name, times, note=f"ember activation memory {peak / 2**20:.2f} MiB")
        r["activation_bytes"] = peak
        rows.append(r)
    return rows


def import_seconds(module):
    """Seconds `import module` takes in a fresh interpreter (startup excluded).

    Bytecode caching is left on (as for any user), even where the environment sets
    PYTHONDONTWRITEBYTECODE: torch and numpy ship compiled .pyc files, ember writes
    its own on first import.
    """
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env)
    return float(out.stdout)


def bench_import(modules=("ember", "torch", "numpy"), runs=9):
    for m in modules:            # warm the file cache
        import_seconds(m)
    samples = {m: [] for m in modules}
    for _ in range(runs):        # interleaved, like compare()
        for m in modules:
            samples[m].append(import_seconds(m))
    times = {m: {"min": min(s), "median": statistics.median(s)} for m, s in samples.items()}
    r = row("import (fresh process)", times, note="ember's time includes importing numpy")
    r["target"] = "≤ 0.15 s"
    r["met"] = times["ember"]["min"] <= 0.15
    return [r]


# ---------------------------------------------------------------------------
# report

def machine():
    blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    torch_blas = next((p.split("=")[1] for p in torch.__config__.show().replace(",", " ").split()
                       if p.startswith("BLAS_INFO=")), "unknown")
    return {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "commit": _git_commit(),
        "cpu": _cpu_name(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": f"{np.__version__} ({blas['name']} {blas.get('version', '')})",
        "torch": f"{torch.__version__} ({torch_blas}, {torch.get_num_threads()} threads)",
        "env": {k: v for k, v in os.environ.items()
                if k.startswith(("OPENBLAS_", "OMP_", "MKL_"))},
    }


def _cpu_seconds():
    """(busy, total) CPU seconds of the whole machine so far, from /proc/stat (Linux)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    hz = os.sysconf("SC_CLK_TCK")
    return (sum(fields) - fields[3] - fields[4]) / hz, sum(fields) / hz


def _own_seconds():
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def with_others_share(bench):
    """Run `bench` and the share of the CPUs other processes used meanwhile (None off Linux).

    Timings taken while other processes ran are not trustworthy; the table shows it.
    """
    try:
        busy0, total0 = _cpu_seconds()
    except (OSError, ValueError, IndexError):
        return bench(), None
    own0 = _own_seconds()
    rows = bench()
    busy1, total1 = _cpu_seconds()
    others = (busy1 - busy0) - (_own_seconds() - own0)
    return rows, round(max(others, 0.0) / max(total1 - total0, 1e-9), 3)


def _git_commit():
    """HEAD's short hash, with '+dirty' when the working tree has changes."""
    def git(*args):
        return subprocess.run(["git", *args], capture_output=True, text=True,
                              cwd=RESULTS.parent).stdout.strip()
    try:
        head = git("rev-parse", "--short", "HEAD")
        return head + ("+dirty" if git("status", "--porcelain") else "") if head else None
    except OSError:
        return None


def _cpu_name():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _fmt_time(t):
    if t is None:
        return "—"
    s = t["min"]
    if s < 1e-3:
        return f"{s * 1e6:.2f} µs"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def _fmt_share(share):
    return "?" if share is None else f"{share:.0%}"


def _fmt_ratio(r, key):
    return f"{r[key]:.2f}×" if key in r else "—"


def markdown(meta, rows):
    env = ", ".join(f"{k}={v}" for k, v in meta["env"].items()) or "none"
    lines = [
        f"ember vs PyTorch, {meta['date']} — {meta['cpu']}, {meta['cores']} cores, "
        f"Python {meta['python']}, ember at {meta['commit'] or 'unknown commit'}",
        "",
        f"NumPy {meta['numpy']}; torch {meta['torch']}; BLAS env: {env}. "
        "Times are the best of interleaved repeats (the JSON also has medians); "
        "ratios are ember time / other time, lower is better for ember. "
        "\"others' CPU\" is the share of the CPUs other processes used meanwhile.",
        "",
        "| benchmark | ember | torch | numpy | ember/torch | ember/numpy | target | met "
        "| others' CPU |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        t = r["times_s"]
        met = {True: "yes", False: "**no**", None: "—"}[r.get("met")]
        if r["status"] != "ok":
            met = r["status"]
        lines.append(
            f"| {r['benchmark']} | {_fmt_time(t.get('ember'))} | {_fmt_time(t.get('torch'))} | "
            f"{_fmt_time(t.get('numpy'))} | {_fmt_ratio(r, 'ember/torch')} | "
            f"{_fmt_ratio(r, 'ember/numpy')} | {r.get('target', '')} | {met} | "
            f"{_fmt_share(r['others_cpu'])} |")
    notes = [f"- {r['benchmark']}: {r['note']}" for r in rows if r["note"]]
    return "\n".join(lines + ([""] + notes if notes else [])) + "\n"


def main():
    meta = machine()
    rows = []
    for bench in (bench_dispatch, bench_mlp, bench_matmul, bench_fork, bench_allocator,
                  bench_amp, bench_import):
        print(f"running {bench.__name__} ...", file=sys.stderr, flush=True)
        bench_rows, others = with_others_share(bench)
        for r in bench_rows:
            r["others_cpu"] = others
        rows += bench_rows
    busy = [r["others_cpu"] for r in rows if r["others_cpu"]]
    if busy and max(busy) > 0.05:
        print(f"warning: other processes used up to {max(busy):.0%} of the CPUs during the run; "
              "those timings are noisy", file=sys.stderr)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "core.json").write_text(json.dumps({"machine": meta, "rows": rows}, indent=2) + "\n")
    table = markdown(meta, rows)
    (RESULTS / "core.md").write_text(table)
    print(table)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--alloc-child":
        alloc_child(sys.argv[2], sys.argv[3] == "cache")
    else:
        main()
