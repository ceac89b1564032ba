"""ember.sparse vs torch.sparse, side by side in one run (seconds).

Measures torch.sparse.mm of a 10k x 10k COO adjacency with 1e5 nonzeros (coalesced,
float32) by a (10k, 64) dense matrix: forward alone, and forward + backward to the dense
operand; also coalesce() of the same tensor built from unsorted, duplicated indices.
Both libraries run on one thread (torch.set_num_threads(1); ember's scipy.sparse product
is single-threaded). Writes benchmarks/results/sparse.json and sparse.md.
Usage: python benchmarks/sparse.py
"""
import json
import os
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"
N, NNZ, F = 10_000, 100_000, 64


def _best(fn, reps=20):
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times) * 1e3


def _measure(lib):
    rng = np.random.default_rng(0)
    idx = rng.integers(0, N, (2, NNZ))
    vals = rng.standard_normal(NNZ).astype(np.float32)
    dense = rng.standard_normal((N, F)).astype(np.float32)
    raw = lib.sparse_coo_tensor(lib.tensor(idx), lib.tensor(vals), (N, N))
    adj = raw.coalesce()
    x = lib.tensor(dense)
    xg = lib.tensor(dense).requires_grad_(True)

    def fwd_bwd():
        lib.sparse.mm(adj, xg).sum().backward()
        xg.grad = None

    def coalesce():
        lib.sparse_coo_tensor(lib.tensor(idx), lib.tensor(vals), (N, N)).coalesce()

    out = lib.sparse.mm(adj, x)
    return {"mm_ms": _best(lambda: lib.sparse.mm(adj, x)), "mm_fwd_bwd_ms": _best(fwd_bwd),
            "coalesce_ms": _best(coalesce, 10)}, np.asarray(out.detach().numpy())


def main():
    import torch
    import ember
    torch.set_num_threads(1)
    e, oe = _measure(ember)
    t, ot = _measure(torch)
    err = float(np.abs(oe - ot).max())
    rows = [{"case": k[:-3], "ember_ms": round(e[k], 3), "torch_ms": round(t[k], 3),
             "ratio": round(e[k] / t[k], 2)} for k in e]
    result = {"shape": f"({N}x{N}, nnz={NNZ}) @ ({N}x{F}) float32, 1 thread",
              "max_abs_diff": err, "rows": rows}
    RESULTS.mkdir(exist_ok=True)
    for name, text in (("sparse.json", json.dumps(result, indent=1)),
                       ("sparse.md", _markdown(result))):
        tmp = RESULTS / (name + ".tmp")
        tmp.write_text(text)
        os.replace(tmp, RESULTS / name)
    print(_markdown(result))


def _markdown(result):
    lines = [f"sparse.mm {result['shape']}; max |ember - torch| = {result['max_abs_diff']:.2e}",
             "", "| case | ember ms | torch ms | ember/torch |", "|---|---|---|---|"]
    lines += [f"| {r['case']} | {r['ember_ms']} | {r['torch_ms']} | {r['ratio']} |"
              for r in result["rows"]]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
