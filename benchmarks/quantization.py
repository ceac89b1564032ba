"""ember int8 inference (pt2e PTQ -> ember.compile lowering to the int8 C kernels) vs ember
fp32 compiled, PyTorch's x86 int8 path and PyTorch fp32, side by side in one run.

Models: resnet18 and mobilenet_v2 (10 classes, random weights), batch 8 of 3x64x64, eval.
- ember int8: capture_pre_autograd_graph -> prepare_pt2e(X86InductorQuantizer default
  config) -> calibrate (4 batches) -> convert_pt2e -> ember.compile(backend="inductor"),
  whose int8 lowering turns dq -> conv/linear (-> relu) (-> q) into onednn.qconv2d/qlinear.
- ember fp32: ember.compile(model, backend="inductor").
- torch int8: torchvision.models.quantization's model, eager-mode static quantization with
  the "x86" qconfig/engine (fbgemm/oneDNN kernels): fuse_model, prepare, calibrate, convert.
  (torch's pt2e + torch.compile path needs minutes of compilation per model here.)
- torch fp32: torchvision's model, eager.
Microbenchmarks: one int8 linear/conv op (ember.ops.onednn) vs torch.ops.quantized (x86)
and vs ember's fp32 eager op of the same shape.
One thread everywhere (ember/torch.set_num_threads(1), OMP/OpenBLAS 1): the machine is
shared, so every case is raced in alternation and the best time kept.
Writes benchmarks/results/quantization.json and quantization.md.
Usage: python benchmarks/quantization.py [--quick]   (--quick: fewer repeats)
"""
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
BATCH, SIZE, CLASSES = 8, 64, 10
REPS = 4 if "--quick" in sys.argv else 12


def _race(fns, reps):
    """Best wall and CPU times (ms) of each of `fns`, run in alternation so that load from
    other users of the machine falls on all of them alike. CPU time (this process, one
    thread) does not count the time the process waited while others ran: on a loaded
    machine it is the steadier measure of the work each one does."""
    wall, cpu = [float("inf")] * len(fns), [float("inf")] * len(fns)
    for fn in fns:
        fn()
    for _ in range(reps):
        for i, fn in enumerate(fns):
            c0, t0 = time.process_time(), time.perf_counter()
            fn()
            wall[i] = min(wall[i], time.perf_counter() - t0)
            cpu[i] = min(cpu[i], time.process_time() - c0)
    return [(w * 1e3, c * 1e3) for w, c in zip(wall, cpu)]


def _ember_int8(model, calib):
    import ember
    from ember._export import capture_pre_autograd_graph
    from ember.ao.quantization.quantize_pt2e import convert_pt2e, prepare_pt2e
    from ember.ao.quantization.quantizer.x86_inductor_quantizer import (
        X86InductorQuantizer, get_default_x86_inductor_quantization_config)
    quantizer = X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config())
    with ember.no_grad():
        prepared = prepare_pt2e(capture_pre_autograd_graph(model, (calib[0],)), quantizer)
        for x in calib:
            prepared(x)
        return convert_pt2e(prepared)


def _torchvision():
    """torchvision through the tests' oracle loader (its CUDA-linked C extension does not
    load with the CPU torch; the Python models do)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "vision"))
    from tv_oracle import torchvision
    return torchvision()


def _torch_int8(name, calib):
    import torch
    _torchvision()
    import torchvision.models.quantization as tq
    torch.backends.quantized.engine = "x86"
    m = getattr(tq, name)(weights=None, quantize=False, num_classes=CLASSES).eval()
    m.fuse_model()
    m.qconfig = torch.ao.quantization.get_default_qconfig("x86")
    torch.ao.quantization.prepare(m, inplace=True)
    with torch.no_grad():
        for x in calib:
            m(x)
    return torch.ao.quantization.convert(m)


def _nbytes(gm):
    """Bytes of the tensors a (converted) graph reads through get_attr, or of all parameters
    and buffers of a module."""
    import ember
    if hasattr(gm, "graph"):
        seen = {}
        for n in gm.graph.nodes:
            if n.op == "get_attr":
                t = gm
                for part in n.target.split("."):
                    t = getattr(t, part)
                if isinstance(t, ember.Tensor):
                    seen[id(t)] = t.numel() * t.element_size()
        return sum(seen.values())
    return sum(t.numel() * t.element_size()
               for t in list(gm.parameters()) + list(gm.buffers()))


def _models():
    import torch
    import ember
    from ember._inductor import quant_lowering
    from ember.vision import models as evm
    rows = []
    rng = np.random.default_rng(0)
    calib_np = [rng.standard_normal((BATCH, 3, SIZE, SIZE)).astype(np.float32) for _ in range(4)]
    for name in ("resnet18", "mobilenet_v2"):
        ember.manual_seed(0)
        em = getattr(evm, name)(num_classes=CLASSES).eval()
        calib = [ember.from_numpy(c) for c in calib_np]
        x = calib[0]
        before = dict(quant_lowering.counters)
        q = _ember_int8(em, calib)
        with ember.no_grad():
            e8 = ember.compile(q, backend="inductor")
            e32 = ember.compile(em, backend="inductor")
            out8, out32, ref8 = e8(x), e32(x), q(x)
        fused = {k: v - before.get(k, 0) for k, v in quant_lowering.counters.items()
                 if v != before.get(k, 0)}
        tcal = [torch.from_numpy(c) for c in calib_np]
        t8 = _torch_int8(name, tcal)
        t32 = getattr(_torchvision().models, name)(weights=None, num_classes=CLASSES).eval()
        tx = tcal[0]
        with ember.no_grad(), torch.no_grad():
            ms = _race([lambda: e8(x), lambda: e32(x), lambda: t8(tx), lambda: t32(tx)], REPS)
        (e8_ms, e8_cpu), (e32_ms, e32_cpu), (t8_ms, t8_cpu), (t32_ms, t32_cpu) = ms
        o8 = out8.numpy()
        rows.append({
            "model": name, "input": f"{BATCH}x3x{SIZE}x{SIZE}", "fused_ops": fused,
            "ember_int8_ms": round(e8_ms, 2), "ember_fp32_compiled_ms": round(e32_ms, 2),
            "torch_int8_x86_eager_ms": round(t8_ms, 2), "torch_fp32_eager_ms": round(t32_ms, 2),
            "cpu_ms": {"ember_int8": round(e8_cpu, 2), "ember_fp32_compiled": round(e32_cpu, 2),
                       "torch_int8_x86_eager": round(t8_cpu, 2),
                       "torch_fp32_eager": round(t32_cpu, 2)},
            "ember_fp32_over_int8": round(e32_ms / e8_ms, 2),
            "ember_int8_over_torch_int8": round(e8_ms / t8_ms, 2),
            "ember_int8_over_torch_fp32": round(e8_ms / t32_ms, 2),
            "cpu_ember_fp32_over_int8": round(e32_cpu / e8_cpu, 2),
            "cpu_ember_int8_over_torch_int8": round(e8_cpu / t8_cpu, 2),
            "compiled_vs_reference_qdq_max_abs": float(np.abs(o8 - ref8.numpy()).max()),
            "int8_vs_fp32_max_abs": float(np.abs(o8 - out32.numpy()).max()),
            "weights_bytes_int8": _nbytes(q), "weights_bytes_fp32": _nbytes(em),
        })
        print(rows[-1], flush=True)
    return rows


def _q_tensors(torch, shape, w_shape):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(*shape, generator=g)
    w = torch.randn(*w_shape, generator=g) * 0.1
    ws = (w.flatten(1).abs().amax(1) / 127).double()
    xq = torch.quantize_per_tensor(x, 0.05, 120, torch.quint8)
    wq = torch.quantize_per_channel(w, ws, torch.zeros(len(ws), dtype=torch.long), 0,
                                    torch.qint8)
    return x, w, ws.float(), xq, wq


OPS = [  # (kind, input shape, weight shape, stride, padding, groups, note)
    ("linear", (8, 512), (1000, 512), 1, 0, 1, "resnet18 fc, batch 8"),
    ("linear", (256, 1024), (1024, 1024), 1, 0, 1, "transformer-sized"),
    ("conv", (8, 64, 16, 16), (64, 64, 3, 3), 1, 1, 1, "resnet18 layer1 3x3"),
    ("conv", (8, 256, 4, 4), (256, 256, 3, 3), 1, 1, 1, "resnet18 layer3 3x3"),
    ("conv", (8, 512, 2, 2), (512, 512, 3, 3), 1, 1, 1, "resnet18 layer4 3x3"),
    ("conv", (8, 3, 64, 64), (64, 3, 7, 7), 2, 3, 1, "resnet18 stem 7x7/2"),
    ("conv", (8, 96, 32, 32), (96, 1, 3, 3), 1, 1, 96, "mobilenet_v2 depthwise"),
    ("conv", (8, 144, 16, 16), (24, 144, 1, 1), 1, 0, 1, "mobilenet_v2 pointwise"),
]


def _ops():
    import torch
    import ember
    import ember.nn.functional as F
    torch.backends.quantized.engine = "x86"
    on = ember.ops.onednn
    rows = []
    for kind, shape, w_shape, stride, pad, groups, note in OPS:
        x, w, ws, xq, wq = _q_tensors(torch, shape, w_shape)
        oc = w_shape[0]
        b = torch.zeros(oc)
        ex, ew = ember.from_numpy(xq.int_repr().numpy()), ember.from_numpy(wq.int_repr().numpy())
        ews, ez, eb = ember.from_numpy(ws.numpy()), ember.zeros(oc, dtype=ember.int64), \
            ember.zeros(oc)
        fx, fw = ember.from_numpy(x.numpy()), ember.from_numpy(w.numpy())
        if kind == "linear":
            packed = torch.ops.quantized.linear_prepack(wq, b)

            def mine():
                return on.qlinear_pointwise.default(ex, 0.05, 120, ew, ews, ez, eb, 0.3, 60,
                                                    None, "none", [], "")

            def theirs():
                return torch.ops.quantized.linear(xq, packed, 0.3, 60)

            def fp32():
                return F.linear(fx, fw)
            macs = shape[0] * oc * shape[1]
        else:
            packed = torch.ops.quantized.conv2d_prepack(wq, b, [stride] * 2, [pad] * 2, [1, 1],
                                                        groups)

            def mine():
                return on.qconv2d_pointwise.default(ex, 0.05, 120, ew, ews, ez, eb,
                                                    [stride] * 2, [pad] * 2, [1, 1], groups,
                                                    0.3, 60, None, "none", [], None)

            def theirs():
                return torch.ops.quantized.conv2d(xq, packed, 0.3, 60)

            def fp32():
                return F.conv2d(fx, fw, None, stride, pad, 1, groups)
            out_hw = (shape[2] + 2 * pad - w_shape[2]) // stride + 1
            macs = shape[0] * oc * out_hw * out_hw * w_shape[1] * w_shape[2] * w_shape[3]
        diff = int(np.abs(mine().numpy().astype(int) - theirs().int_repr().numpy()
                          .astype(int)).max())
        with ember.no_grad(), torch.no_grad():
            (m, mc), (t, tc), (f, fc) = _race([mine, theirs, fp32], REPS * 2)
        rows.append({"op": kind, "input": "x".join(map(str, shape)),
                     "weight": "x".join(map(str, w_shape)), "stride": stride, "groups": groups,
                     "note": note, "ember_int8_ms": round(m, 3), "torch_int8_ms": round(t, 3),
                     "ember_fp32_ms": round(f, 3),
                     "cpu_ms": {"ember_int8": round(mc, 3), "torch_int8": round(tc, 3),
                                "ember_fp32": round(fc, 3)},
                     "int8_over_torch": round(mc / tc, 2), "fp32_over_int8": round(fc / mc, 2),
                     "ember_gmac_s": round(macs / m / 1e6, 1), "max_int_diff": diff})
        print(rows[-1], flush=True)
    return rows


def main():
    import torch
    import ember
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    ember.set_num_threads(1)
    result = {"threads": 1, "batch": BATCH, "input": f"3x{SIZE}x{SIZE}", "models": _models(),
              "ops": _ops()}
    RESULTS.mkdir(exist_ok=True)
    for name, text in (("quantization.json", json.dumps(result, indent=1)),
                       ("quantization.md", _markdown(result))):
        tmp = RESULTS / (name + ".tmp")
        tmp.write_text(text)
        os.replace(tmp, RESULTS / name)
    print(_markdown(result))


def _markdown(result):
    lines = [f"int8 inference, batch {result['batch']} of {result['input']}, 1 thread, best of "
             "alternating repeats (shared machine: wall time, and in brackets the process's "
             "CPU time, which leaves out time spent waiting for other users' processes). "
             "ember int8 = pt2e PTQ (X86InductorQuantizer) compiled by ember's inductor (int8 "
             "lowering to the VNNI C kernels); torch int8 = torchvision's eager x86 static "
             "quantization (fbgemm/oneDNN); fp32: ember compiled, torch eager.", "",
             "| model | ember int8 ms | ember fp32 compiled ms | torch int8 (x86) ms | "
             "torch fp32 ms | ember fp32 / int8 | ember int8 / torch int8 | fused ops | "
             "weights int8 / fp32 |", "|---|---|---|---|---|---|---|---|---|"]
    for r in result["models"]:
        fused = ", ".join(f"{k} {v}" for k, v in sorted(r["fused_ops"].items()))
        c = r["cpu_ms"]
        lines.append(
            f"| {r['model']} | {r['ember_int8_ms']} [{c['ember_int8']}] | "
            f"{r['ember_fp32_compiled_ms']} [{c['ember_fp32_compiled']}] | "
            f"{r['torch_int8_x86_eager_ms']} [{c['torch_int8_x86_eager']}] | "
            f"{r['torch_fp32_eager_ms']} [{c['torch_fp32_eager']}] | "
            f"{r['ember_fp32_over_int8']}× [{r['cpu_ember_fp32_over_int8']}×] | "
            f"{r['ember_int8_over_torch_int8']}× [{r['cpu_ember_int8_over_torch_int8']}×] | "
            f"{fused} | "
            f"{r['weights_bytes_int8'] / 2**20:.2f} / {r['weights_bytes_fp32'] / 2**20:.2f} MiB |")
    lines += ["", "One int8 op (uint8 activations, per-channel int8 weights, uint8 output) vs "
              "torch.ops.quantized (x86 engine) and ember's fp32 eager op of the same shape; "
              "ratios from CPU time; max int diff: largest difference of the quantized "
              "outputs.", "",
              "| op | input | weight | note | ember int8 ms | torch int8 ms | ember fp32 ms | "
              "int8 / torch int8 | fp32 / int8 | ember GMAC/s | max int diff |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['op']} | {r['input']} | {r['weight']} | {r['note']} | "
              f"{r['ember_int8_ms']} [{r['cpu_ms']['ember_int8']}] | "
              f"{r['torch_int8_ms']} [{r['cpu_ms']['torch_int8']}] | "
              f"{r['ember_fp32_ms']} [{r['cpu_ms']['ember_fp32']}] | {r['int8_over_torch']}× | "
              f"{r['fp32_over_int8']}× | {r['ember_gmac_s']} | {r['max_int_diff']} |"
              for r in result["ops"]]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
