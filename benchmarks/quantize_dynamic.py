"""quantize_dynamic: ember's dynamic int8 Linear/LSTM vs its fp32 eager modules and vs
PyTorch's (fbgemm) dynamic quantization, side by side in one run; and checkpoint size.

Models (eval, from the same weights in both libraries):
- MLP 1024 -> 2048 -> 2048 -> 1024 (ReLU), batch 64;
- LSTM 256 -> 512, 2 layers, sequence 32, batch 16.
Each case: fp32 eager and quantize_dynamic({Linear, LSTM}, qint8) forward. The checkpoint
size is the bytes of ember.save / torch.save of the state_dict.
One thread everywhere (OMP/OpenBLAS 1, torch.set_num_threads(1)); the machine is shared,
so the cases run in alternation and the best time is kept.
Writes benchmarks/results/quantize_dynamic.json and .md.
Usage: python benchmarks/quantize_dynamic.py [--quick]
"""
import io
import json
import os
import sys
import time
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")          # before any OpenMP runtime loads
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"
REPS = 5 if "--quick" in sys.argv else 15


def _race(fns, reps):
    best = [float("inf")] * len(fns)
    for f in fns:
        f()
    for _ in range(reps):
        for i, f in enumerate(fns):
            t0 = time.perf_counter()
            f()
            best[i] = min(best[i], time.perf_counter() - t0)
    return [b * 1e3 for b in best]


def _models(lib):
    nn = lib.nn
    mlp = nn.Sequential(nn.Linear(1024, 2048), nn.ReLU(), nn.Linear(2048, 2048), nn.ReLU(),
                        nn.Linear(2048, 1024)).eval()
    lstm = nn.Sequential(nn.LSTM(256, 512, num_layers=2)).eval()
    return mlp, lstm


def _size(lib, module):
    buf = io.BytesIO()
    lib.save(module.state_dict(), buf)
    return buf.getbuffer().nbytes


def main():
    import torch
    import ember
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    ember.set_num_threads(1)
    torch.manual_seed(0)
    tm = _models(torch)
    em = _models(ember)
    for t, e in zip(tm, em):
        e.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy())
                           for k, v in t.state_dict().items()})
    tq = [torch.ao.quantization.quantize_dynamic(m, {torch.nn.Linear, torch.nn.LSTM},
                                                 dtype=torch.qint8) for m in tm]
    eq = [ember.ao.quantization.quantize_dynamic(m, {ember.nn.Linear, ember.nn.LSTM},
                                                 dtype=ember.qint8) for m in em]
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((64, 1024)).astype(np.float32),
              rng.standard_normal((32, 16, 256)).astype(np.float32)]
    rows = []
    for name, i, t, e, tqm, eqm in (("MLP 1024-2048-2048-1024, batch 64", 0, tm[0], em[0],
                                     tq[0], eq[0]),
                                    ("LSTM 256->512 x2, seq 32, batch 16", 1, tm[1], em[1],
                                     tq[1], eq[1])):
        x_t, x_e = torch.from_numpy(inputs[i]), ember.from_numpy(inputs[i])

        def run(m, x):
            def f():
                with (torch.no_grad() if isinstance(x, torch.Tensor) else ember.no_grad()):
                    m(x)
            return f
        e32, eq8, t32, tq8 = _race([run(e, x_e), run(eqm, x_e), run(t, x_t), run(tqm, x_t)],
                                   REPS)
        out_e = eqm(x_e)
        out_t = tqm(x_t)
        out_e, out_t = (out_e[0], out_t[0]) if i == 1 else (out_e, out_t)
        diff = float(np.abs(out_e.detach().numpy() - out_t.detach().numpy()).max())
        rows.append(dict(model=name, ember_fp32_ms=e32, ember_int8_ms=eq8, torch_fp32_ms=t32,
                         torch_int8_ms=tq8, int8_speedup_vs_ember_fp32=e32 / eq8,
                         ember_int8_vs_torch_int8=eq8 / tq8,
                         fp32_bytes=_size(ember, e), int8_bytes=_size(ember, eqm),
                         torch_int8_bytes=_size(torch, tqm), max_abs_diff_vs_torch_int8=diff))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "quantize_dynamic.json").write_text(json.dumps(rows, indent=2))
    lines = ["# quantize_dynamic (one thread, best of %d)" % REPS, "",
             "| model | ember fp32 ms | ember int8 ms | int8 speedup | torch fp32 ms | "
             "torch int8 ms | ember int8 / torch int8 | fp32 MB | int8 MB | torch int8 MB "
             "| max abs diff vs torch int8 |", "|---" * 11 + "|"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['ember_fp32_ms']:.2f} | {r['ember_int8_ms']:.2f} | "
                     f"{r['int8_speedup_vs_ember_fp32']:.2f}x | {r['torch_fp32_ms']:.2f} | "
                     f"{r['torch_int8_ms']:.2f} | {r['ember_int8_vs_torch_int8']:.2f}x | "
                     f"{r['fp32_bytes'] / 1e6:.2f} | {r['int8_bytes'] / 1e6:.2f} | "
                     f"{r['torch_int8_bytes'] / 1e6:.2f} | {r['max_abs_diff_vs_torch_int8']:.2g} |")
    (RESULTS / "quantize_dynamic.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
