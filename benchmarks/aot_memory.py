"""Activation memory of a training step: eager vs AOT autograd ("aot_eager"), side by side
with PyTorch eager and PyTorch's aot_eager in one run (issue 10 point 2: compiled <= eager).

Measured per workload, after the forward and loss, before backward:
  - ember: bytes the allocator holds beyond what it held before the forward
    (`ember.memory_allocated()` delta: saved activations plus the loss) -- eager,
    aot_eager with the min-cut partitioner (the backend's default), and aot_eager with the
    default partitioner (saves everything the backward reads, as eager autograd);
  - both libraries: storage bytes of the distinct tensors kept for backward, excluding
    parameters and the input (PyTorch: `saved_tensors_hooks`, as it has no CPU allocator
    counter; ember: a walk of the autograd graph);
  - time of one forward+backward step (ms, best of 10), for reference only.
Writes benchmarks/results/aot_memory.json and aot_memory.md.
Usage: python benchmarks/aot_memory.py
"""
import json
import time
import warnings
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"


def _models(L):
    nn = L.nn

    def mlp():
        return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)), (32, 64)

    def gelu_mlp():
        return nn.Sequential(nn.Linear(64, 256), nn.LayerNorm(256), nn.GELU(),
                             nn.Linear(256, 256), nn.Tanh(), nn.Linear(256, 10)), (32, 64)

    def cnn():
        return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Flatten(), nn.Linear(16 * 7 * 7, 10)), (32, 1, 28, 28)
    return {"MLP 64-128-10 b32": mlp, "MLP+LayerNorm+GELU 64-256-256-10 b32": gelu_mlp,
            "small CNN b32 28x28": cnn}


def _saved_bytes(L, step, exclude):
    """Storage bytes of the distinct tensors the autograd graph of one forward keeps for
    backward, not counting `exclude` (parameters, input). PyTorch: saved_tensors_hooks;
    ember (no hooks yet): a walk of the graph from the loss's grad_fn."""
    skip = set()
    if L.__name__ == "torch":
        skip = {e.untyped_storage().data_ptr() for e in exclude}
        seen = {}

        def pack(t):
            st = t.untyped_storage()
            if st.data_ptr() not in skip:
                seen[st.data_ptr()] = st.nbytes()
            return t
        with L.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            loss = step()
        return sum(seen.values()), loss
    loss = step()
    return _ember_graph_bytes(loss, exclude), loss


def _ember_graph_bytes(loss, exclude):
    from ember._tensor import Tensor
    from ember.autograd.graph import Node, SavedTensor
    skip = {id(e._storage) for e in exclude}
    seen, storages, stack = set(), {}, [loss.grad_fn]
    while stack:
        o = stack.pop()
        if o is None or id(o) in seen:
            continue
        seen.add(id(o))
        if isinstance(o, Tensor):
            if o is not loss and id(o._storage) not in skip:
                storages[id(o._storage)] = o._storage.nbytes
            stack.append(o._grad_fn)
        elif isinstance(o, SavedTensor):
            stack.append(o.t)
        elif isinstance(o, (tuple, list)):
            stack.extend(o)
        elif isinstance(o, dict):
            stack.extend(o.values())
        elif isinstance(o, Node):
            vals = list(getattr(o, "__dict__", {}).values())
            for cls in type(o).__mro__:
                for name in getattr(cls, "__slots__", ()):
                    vals.append(getattr(o, name, None))
            stack.extend(vals)
    return sum(storages.values())


def _time_step(step, n=10):
    best = float("inf")
    for _ in range(n + 1):
        t = time.perf_counter()
        step().backward()
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def _run(L, make, shape, backend, partition=None):
    L.manual_seed(0)
    model, _ = make()
    x = L.randn(*shape)
    y = L.randint(0, 10, (shape[0],))
    if backend == "eager":
        fwd = model
    elif partition is None:
        fwd = L.compile(model, backend=backend)
    else:
        from ember._functorch.aot_autograd import aot_module_simplified
        from ember._dynamo.backends.aot import boxed_nop

        def be(gm, ex):
            return aot_module_simplified(gm, ex, boxed_nop, boxed_nop, partition_fn=partition)
        fwd = L.compile(model, backend=be)

    def step():
        return L.nn.functional.cross_entropy(fwd(x), y)
    step().backward()                                    # compile / warm up
    res = {}
    if L.__name__ == "ember":
        before = L.memory_allocated()
        loss = step()
        res["held_bytes"] = L.memory_allocated() - before
        del loss
    params = list(model.parameters()) + [x]
    res["saved_bytes"], loss = _saved_bytes(L, step, params)
    del loss
    res["step_ms"] = _time_step(step)
    return res


def main():
    import ember
    from ember._functorch.partitioners import default_partition
    rows = {}
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError:
        torch = None
    for name, make in _models(ember).items():
        shape = make()[1]
        row = {"ember eager": _run(ember, make, shape, "eager"),
               "ember aot_eager (min-cut)": _run(ember, make, shape, "aot_eager"),
               "ember aot_eager (default partition)": _run(ember, make, shape, "aot_eager",
                                                           default_partition)}
        if torch is not None:
            tmake = _models(torch)[name]
            row["torch eager"] = _run(torch, tmake, shape, "eager")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                row["torch aot_eager"] = _run(torch, tmake, shape, "aot_eager")
        rows[name] = row
    RESULTS.mkdir(exist_ok=True)
    _write(RESULTS / "aot_memory.json", json.dumps(rows, indent=2))
    lines = ["| workload | run | held after forward (KiB) | saved for backward (KiB) | "
             "fwd+bwd step (ms) |", "|---|---|---|---|---|"]
    for name, row in rows.items():
        for run, r in row.items():
            held = f"{r['held_bytes'] / 1024:.1f}" if "held_bytes" in r else "n/a"
            lines.append(f"| {name} | {run} | {held} | {r['saved_bytes'] / 1024:.1f} | "
                         f"{r['step_ms']:.2f} |")
    text = "\n".join(lines) + "\n"
    _write(RESULTS / "aot_memory.md", text)
    print(text)


def _write(path, text):
    import os
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
