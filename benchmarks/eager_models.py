"""Eager speed where users feel it: ember vs PyTorch on the same workloads in one run.

Each row is a model step or one op's forward + backward, written once against the library
module `L` (ember or torch), timed with run.compare (interleaved repeats, best taken) and
reported as the ember/torch ratio of wall-clock minima and of CPU-time minima (this
process's CPU seconds: on a shared box they move less with the others' load, which the
"others' CPU" column reports as the cores other processes kept busy during the row),
with the peak memory of one call: ember's
max_memory_allocated above what was allocated before the call, torch's from its profiler
(the running sum of each op's own CPU allocations minus frees, in start order, maximum
over the call: an op's transient scratch inside it is not seen).

    .venv/bin/python benchmarks/eager_models.py [row-name-substring ...]

writes benchmarks/results/eager.json and eager.md (a full run only) and prints the table.
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
from run import RESULTS, _calls_per_repeat, cnn_workload, mlp_workload  # noqa: E402

torch.set_num_threads(1)   # both libraries on one BLAS thread: the box is shared
ember.set_num_threads(1)


# ---------------------------------------------------------------- peak memory

def torch_peak(fn):
    """Bytes: the highest running total of CPU allocations minus frees during fn()."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    ev = sorted(prof.events(), key=lambda e: e.time_range.start)
    run = peak = 0
    for e in ev:        # an op's own allocations minus frees, in the order the ops started
        run += e.self_cpu_memory_usage
        peak = max(peak, run)
    return peak


def ember_peak(fn):
    fn()
    base = ember.memory_allocated()
    ember.reset_peak_memory_stats()
    fn()
    return ember.max_memory_allocated() - base


# ---------------------------------------------------------------- workloads

def _t(L, *shape, grad=True, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    t = L.from_numpy(a)
    return t.requires_grad_() if grad else t


def _fwd_bwd(L, make):
    """make(L) -> (inputs, fn); the step runs fn(*inputs).sum().backward()."""
    inputs, fn = make(L)

    def step():
        for a in inputs:
            a.grad = None
        fn(*inputs).sum().backward()
    return step


def conv_op(L):
    return [_t(L, 16, 32, 32, 32), _t(L, 64, 32, 3, 3, seed=1)], \
        lambda x, w: L.nn.functional.conv2d(x, w, padding=1)


def depthwise_op(L):
    return [_t(L, 16, 64, 32, 32), _t(L, 64, 1, 3, 3, seed=1)], \
        lambda x, w: L.nn.functional.conv2d(x, w, padding=1, groups=64)


def conv_transpose_op(L):
    return [_t(L, 16, 32, 16, 16), _t(L, 32, 16, 4, 4, seed=1)], \
        lambda x, w: L.nn.functional.conv_transpose2d(x, w, stride=2, padding=1)


def maxpool_op(L):
    return [_t(L, 32, 32, 32, 32)], lambda x: L.nn.functional.max_pool2d(x, 2)


def maxpool3_op(L):
    return [_t(L, 32, 32, 32, 32)], lambda x: L.nn.functional.max_pool2d(x, 3, 2, 1)


def avgpool_op(L):
    return [_t(L, 32, 32, 32, 32)], lambda x: L.nn.functional.avg_pool2d(x, 2)


def batchnorm_op(L):
    bn = L.nn.BatchNorm2d(32)
    return [_t(L, 32, 32, 32, 32)], bn


def layernorm_op(L):
    ln = L.nn.LayerNorm(256)
    return [_t(L, 64, 64, 256)], ln


def embedding_op(L):
    emb = L.nn.Embedding(10000, 128)
    idx = L.from_numpy(np.random.default_rng(0).integers(0, 10000, (64, 64)))
    return [], lambda: emb(idx)


def lstm_op(L):
    L.manual_seed(0)
    lstm = L.nn.LSTM(64, 128, batch_first=True)
    return [_t(L, 32, 20, 64)], lambda x: lstm(x)[0]


def cross_entropy_op(L):
    y = L.from_numpy(np.random.default_rng(0).integers(0, 1000, (256,)))
    return [_t(L, 256, 1000)], lambda x: L.nn.functional.cross_entropy(x, y)


def model_forward(L, name, batch):
    """Forward of a (randomly initialized, eval-mode) vision model under no_grad."""
    L.manual_seed(0)
    if L is torch:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "vision"))
        from tv_oracle import torchvision
        models = torchvision().models
    else:
        import ember.vision.models as models
    m = getattr(models, name)().eval()
    x = _t(L, batch, 3, 224, 224, grad=False)

    def step():
        with L.no_grad():
            return m(x)
    return step


def _cnn(amp):
    def make(L):
        return cnn_workload(L, amp)[0]
    return make


ROWS = [  # (name, builder(L) -> step, repeats, budget seconds, issue target ratio)
    ("small CNN train step, batch 32, float32", _cnn(False), 5, 0.3, 2.0),
    ("small CNN train step, batch 32, bf16 autocast", _cnn(True), 5, 0.3, None),
    ("MLP 64-128-10 SGD step, batch 32", mlp_workload, 7, 0.1, 1.5),
    ("resnet18 forward, 2x3x224x224", lambda L: model_forward(L, "resnet18", 2), 3, 0.5, 1.5),
    ("mobilenet_v3_small forward, 8x3x224x224",
     lambda L: model_forward(L, "mobilenet_v3_small", 8), 3, 0.5, None),
    ("conv2d 3x3 32->64, 16x32x32 fwd+bwd", lambda L: _fwd_bwd(L, conv_op), 5, 0.2, None),
    ("depthwise conv2d 3x3 64, 16x32x32 fwd+bwd", lambda L: _fwd_bwd(L, depthwise_op), 5,
     0.2, None),
    ("conv_transpose2d 4x4/2 32->16, 16x16x16 fwd+bwd",
     lambda L: _fwd_bwd(L, conv_transpose_op), 5, 0.2, None),
    ("max_pool2d 2, 32x32x32x32 fwd+bwd", lambda L: _fwd_bwd(L, maxpool_op), 5, 0.1, None),
    ("max_pool2d 3/2 pad 1, 32x32x32x32 fwd+bwd", lambda L: _fwd_bwd(L, maxpool3_op), 5, 0.1,
     None),
    ("avg_pool2d 2, 32x32x32x32 fwd+bwd", lambda L: _fwd_bwd(L, avgpool_op), 5, 0.1, None),
    ("batch_norm (train) 32x32x32x32 fwd+bwd", lambda L: _fwd_bwd(L, batchnorm_op), 5, 0.1,
     None),
    ("layer_norm 64x64x256 fwd+bwd", lambda L: _fwd_bwd(L, layernorm_op), 5, 0.1, None),
    ("embedding 10000x128, 64x64 ids fwd+bwd", lambda L: _fwd_bwd(L, embedding_op), 5, 0.1,
     None),
    ("LSTM 64->128, batch 32 x 20 steps fwd+bwd", lambda L: _fwd_bwd(L, lstm_op), 5, 0.2, None),
    ("cross_entropy 256x1000 fwd+bwd", lambda L: _fwd_bwd(L, cross_entropy_op), 5, 0.1, None),
]


# ---------------------------------------------------------------- timing

def _busy_seconds():
    """CPU seconds all processes spent busy so far (the first line of /proc/stat), or
    None where there is no /proc."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
    except OSError:
        return None
    return (v[0] + v[1] + v[2] + sum(v[5:8])) / os.sysconf("SC_CLK_TCK")


def compare(fns, repeat, budget, pause=0.1):
    """run.compare's interleaved repeats, timing each batch by the wall clock and by this
    process's CPU time: {name: {"min", "median", "cpu_min"}}, and the cores that other
    processes kept busy meanwhile (None without /proc)."""
    numbers = {k: _calls_per_repeat(f, budget) for k, f in fns.items()}
    wall = {k: [] for k in fns}
    cpu = {k: [] for k in fns}
    b0, c0, t0 = _busy_seconds(), time.process_time(), time.perf_counter()
    for _ in range(repeat):
        for k, f in fns.items():
            time.sleep(pause)
            f()
            n = numbers[k]
            w, c = time.perf_counter(), time.process_time()
            for _ in range(n):
                f()
            cpu[k].append((time.process_time() - c) / n)
            wall[k].append((time.perf_counter() - w) / n)
    b1, c1, t1 = _busy_seconds(), time.process_time(), time.perf_counter()
    others = None if b0 is None else max(0.0, (b1 - b0) - (c1 - c0)) / (t1 - t0)
    times = {k: {"min": min(wall[k]), "median": sorted(wall[k])[len(wall[k]) // 2],
                 "cpu_min": min(cpu[k])} for k in fns}
    return times, others


def bench_row(name, build, repeat, budget, target):
    steps = {"ember": build(ember), "torch": build(torch)}
    times, others = compare(steps, repeat=repeat, budget=budget)
    ratio = times["ember"]["min"] / times["torch"]["min"]
    cpu_ratio = times["ember"]["cpu_min"] / times["torch"]["cpu_min"]
    peaks = {"ember": ember_peak(steps["ember"]), "torch": torch_peak(steps["torch"])}
    return {"benchmark": name, "times_s": times, "ember/torch": ratio,
            "ember/torch (cpu time)": cpu_ratio, "others_cpu_cores": others,
            "peak_bytes": peaks, "target": target,
            "met": None if target is None else ratio <= target}


def markdown(rows):
    out = ["| workload | ember | torch | ember/torch | CPU-time ratio | target | "
           "peak MiB ember / torch | others' CPU |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        t, p = r["times_s"], r["peak_bytes"]
        tgt = "" if r["target"] is None else \
            f"≤ {r['target']}× ({'met' if r['met'] else 'not met'})"
        oth = "" if r["others_cpu_cores"] is None else \
            f"{r['others_cpu_cores']:.1f} of {os.cpu_count()} cores"
        out.append(f"| {r['benchmark']} | {t['ember']['min'] * 1e3:.2f} ms | "
                   f"{t['torch']['min'] * 1e3:.2f} ms | {r['ember/torch']:.2f}× | "
                   f"{r['ember/torch (cpu time)']:.2f}× | {tgt} | "
                   f"{p['ember'] / 2**20:.1f} / {p['torch'] / 2**20:.1f} | {oth} |")
    return "\n".join(out) + "\n"


def main(filters):
    rows = []
    for spec in ROWS:
        if filters and not any(f in spec[0] for f in filters):
            continue
        print(f"running {spec[0]} ...", file=sys.stderr, flush=True)
        rows.append(bench_row(*spec))
        print(markdown(rows[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
    table = markdown(rows)
    if not filters:
        RESULTS.mkdir(exist_ok=True)
        for fname, text in (("eager.json", json.dumps({"torch_threads": 1, "rows": rows},
                                                        indent=2) + "\n"), ("eager.md", table)):
            tmp = RESULTS / (fname + ".tmp")
            tmp.write_text(text)
            tmp.replace(RESULTS / fname)
    print(table)


if __name__ == "__main__":
    main(sys.argv[1:])
