"""ember.func vs torch.func, side by side in one run (seconds).

Measures: per-sample gradients of a small MLP (32-64-10, cross entropy, float32) by
vmap(grad) against a Python loop of grad and against torch.func; jacrev and jacfwd of a
64 -> 64 function; jvp of the MLP loss. Writes benchmarks/results/func.json and func.md.
Usage: python benchmarks/func.py
"""
import json
import time
import warnings
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"


def _timeit(fn, n=10):
    fn()
    best = float("inf")
    for _ in range(n):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def bench(L):
    F = L.nn.functional
    rng = np.random.default_rng(0)
    B = 64
    x = L.tensor(rng.standard_normal((B, 32)).astype(np.float32))
    y = L.tensor(rng.integers(0, 10, B))
    p = {k: L.tensor(v.astype(np.float32)) for k, v in dict(
        w1=rng.standard_normal((64, 32)) * .1, b1=np.zeros(64),
        w2=rng.standard_normal((10, 64)) * .1, b2=np.zeros(10)).items()}

    def loss(p, xi, yi):
        h = F.relu(F.linear(xi, p["w1"], p["b1"]))
        return F.cross_entropy(F.linear(h, p["w2"], p["b2"]).unsqueeze(0), yi.unsqueeze(0))
    vg = L.func.vmap(L.func.grad(loss), in_dims=(None, 0, 0))
    g = L.func.grad(loss)
    v = L.tensor(rng.standard_normal(64))

    def f(u):
        return (u.sin() * u.sum()).tanh()
    t = {k: L.ones_like(w) for k, w in p.items()}
    return {
        "per-sample grads vmap(grad), B=64": _timeit(lambda: vg(p, x, y)),
        "per-sample grads, loop of grad, B=64": _timeit(lambda: [g(p, x[i], y[i])
                                                                 for i in range(B)], 2),
        "jacrev 64->64": _timeit(lambda: L.func.jacrev(f)(v)),
        "jacfwd 64->64": _timeit(lambda: L.func.jacfwd(f)(v)),
        "jvp of MLP loss (params tangent)": _timeit(
            lambda: L.func.jvp(lambda q: loss(q, x[0], y[0]), (p,), (t,))),
    }


def main():
    import torch
    import ember
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    e, t = bench(ember), bench(torch)
    rows = [{"case": k, "ember_ms": round(e[k], 3), "torch_ms": round(t[k], 3),
             "ember/torch": round(e[k] / t[k], 2)} for k in e]
    RESULTS.mkdir(exist_ok=True)
    tmp = RESULTS / "func.json.tmp"
    tmp.write_text(json.dumps(rows, indent=1))
    tmp.replace(RESULTS / "func.json")
    md = ["| case | ember ms | torch ms | ember/torch |", "|---|---|---|---|"]
    md += [f"| {r['case']} | {r['ember_ms']} | {r['torch_ms']} | {r['ember/torch']} |"
           for r in rows]
    tmp = RESULTS / "func.md.tmp"
    tmp.write_text("\n".join(md) + "\n")
    tmp.replace(RESULTS / "func.md")
    print("\n".join(md))


if __name__ == "__main__":
    main()
