"""pt2e int8 accuracy and size: resnet18 and mobilenet_v2 on a self-made image task.

The task: scikit-learn's digits (8x8, shipped offline) upscaled to 32x32 RGB, a fixed
train/test split. Each model is trained briefly in float32 (weights cached under
ember's cache dir, so a second run does not retrain), then
  * PTQ: capture -> prepare_pt2e(X86InductorQuantizer) -> calibrate on 256 training
    images -> convert_pt2e; test accuracy vs float32 and the saved size of the model;
  * a case where PTQ loses accuracy: 4-bit weights and activations (XNNPACK config
    with quant ranges [-7, 7] / [-8, 7]); QAT (prepare_qat_pt2e, a few dozen
    fake-quantized training steps) recovers it.
Run: OPENBLAS_NUM_THREADS=1 python benchmarks/quantization_accuracy.py
Writes benchmarks/results/quantization_accuracy.{json,md}. `accuracy_rows()` is the
entry point other benchmark scripts call.
"""
import io
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ember  # noqa: E402
from ember._export import capture_pre_autograd_graph  # noqa: E402
from ember.ao.quantization import (convert_pt2e, move_exported_model_to_eval,  # noqa: E402
                                   move_exported_model_to_train, prepare_pt2e,
                                   prepare_qat_pt2e)
from ember.ao.quantization.quantizer.x86_inductor_quantizer import (  # noqa: E402
    X86InductorQuantizer, get_default_x86_inductor_quantization_config)
from ember.ao.quantization.quantizer.xnnpack_quantizer import (  # noqa: E402
    XNNPACKQuantizer, get_symmetric_quantization_config)

SIZE = 32
ARCHS = {"resnet18": 4, "mobilenet_v2": 8}     # float32 training epochs


def digits(size=SIZE):
    """(x_train, y_train, x_test, y_test): digits upscaled to size x size, 3 channels,
    standardized; the split is fixed (seeded permutation, 360 test images)."""
    from sklearn.datasets import load_digits
    d = load_digits()
    x = d.images.astype(np.float32) / 16.0
    rep = size // 8
    x = np.kron(x, np.ones((rep, rep), np.float32))
    x = (x - x.mean()) / x.std()
    x = np.repeat(x[:, None], 3, axis=1)
    perm = np.random.default_rng(0).permutation(len(x))
    x, y = x[perm], d.target[perm].astype(np.int64)
    return x[360:], y[360:], x[:360], y[:360]


def _cache_path(arch):
    from ember._inductor.config import cache_dir
    d = os.path.join(cache_dir(), "pt2e_proof")
    os.makedirs(d, exist_ok=True)
    return os.path.join(d, f"{arch}_{SIZE}px_{ARCHS[arch]}ep.pt")


def _build(arch):
    from ember.vision import models
    ember.manual_seed(0)
    return getattr(models, arch)(num_classes=10)


def _batches(x, y, batch, rng):
    idx = rng.permutation(len(x))
    for i in range(0, len(x) - batch + 1, batch):
        j = idx[i:i + batch]
        yield ember.from_numpy(x[j]), ember.from_numpy(y[j])


def _fit(model, x, y, epochs, lr, params=None, max_steps=None, seed=0):
    model_params = model.parameters() if params is None else params
    opt = ember.optim.SGD(model_params, lr=lr, momentum=0.9, weight_decay=1e-4)
    rng = np.random.default_rng(seed)
    steps = 0
    for _ in range(epochs):
        for xb, yb in _batches(x, y, 64, rng):
            opt.zero_grad()
            loss = ember.nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            steps += 1
            if max_steps is not None and steps >= max_steps:
                return


def trained(arch):
    """The float32 model, trained once and cached."""
    model = _build(arch)
    path = _cache_path(arch)
    if os.path.exists(path):
        model.load_state_dict(ember.load(path))
        return model.eval()
    x, y, _, _ = digits()
    model.train()
    _fit(model, x, y, ARCHS[arch], lr=0.05)
    ember.save(model.state_dict(), path + ".tmp")
    os.replace(path + ".tmp", path)
    return model.eval()


def accuracy(model, x, y, batch=120):
    correct = 0
    with ember.no_grad():
        for i in range(0, len(x), batch):
            out = model(ember.from_numpy(x[i:i + batch]))
            correct += int((out.argmax(1).numpy() == y[i:i + batch]).sum())
    return 100.0 * correct / len(x)


def saved_bytes(module):
    buf = io.BytesIO()
    ember.save(module.state_dict(), buf)
    return buf.tell()


def _capture(model, example):
    """The captured graph, with a dynamic batch size (calibration and evaluation batches
    differ)."""
    from ember.export import Dim
    return capture_pre_autograd_graph(model, (ember.from_numpy(example),),
                                      dynamic_shapes=({0: Dim("batch")},))


def ptq(model, quantizer, x_calib, batch=64):
    gm = _capture(model, x_calib[:batch])
    prepared = prepare_pt2e(gm, quantizer)
    with ember.no_grad():
        for i in range(0, len(x_calib), batch):
            prepared(ember.from_numpy(x_calib[i:i + batch]))
    return convert_pt2e(prepared)


def low_bit_config(is_qat):
    """4-bit activations and weights: where PTQ visibly loses accuracy."""
    return get_symmetric_quantization_config(is_per_channel=True, is_qat=is_qat,
                                             act_qmin=-8, act_qmax=7, weight_qmin=-7,
                                             weight_qmax=7)


def qat(model, config, x, y, steps, lr=0.01):
    """prepare_qat_pt2e on a copy of the trained model, `steps` SGD steps, convert."""
    import copy
    model = copy.deepcopy(model).train()
    gm = _capture(model, x[:64])
    prepared = prepare_qat_pt2e(gm, XNNPACKQuantizer().set_global(config))
    move_exported_model_to_train(prepared)
    _fit(prepared, x, y, epochs=100, lr=lr, max_steps=steps, seed=1)
    move_exported_model_to_eval(prepared)
    return convert_pt2e(prepared)


def accuracy_rows(archs=tuple(ARCHS), qat_arch="resnet18", qat_steps=40):
    x, y, xt, yt = digits()
    rows = []
    for arch in archs:
        model = trained(arch)
        fp32 = accuracy(model, xt, yt)
        t0 = time.perf_counter()
        q = ptq(model, X86InductorQuantizer().set_global(
            get_default_x86_inductor_quantization_config()), x[:256])
        quantize_s = time.perf_counter() - t0
        rows.append({"model": arch, "case": "PTQ int8 (X86InductorQuantizer)",
                     "fp32_acc": fp32, "quant_acc": accuracy(q, xt, yt),
                     "quant_compiled_acc": accuracy(ember.compile(q), xt, yt),
                     "fp32_bytes": saved_bytes(model), "quant_bytes": saved_bytes(q),
                     "quantize_s": quantize_s})
    model = trained(qat_arch)
    fp32 = accuracy(model, xt, yt)
    low = ptq(model, XNNPACKQuantizer().set_global(low_bit_config(False)), x[:256])
    t0 = time.perf_counter()
    recovered = qat(model, low_bit_config(True), x, y, qat_steps)
    rows.append({"model": qat_arch, "case": "4-bit PTQ vs QAT", "fp32_acc": fp32,
                 "ptq_acc": accuracy(low, xt, yt), "qat_acc": accuracy(recovered, xt, yt),
                 "qat_steps": qat_steps, "qat_s": time.perf_counter() - t0})
    return rows


def _markdown(rows):
    lines = ["| model | case | fp32 acc | quantized acc | size fp32 -> int8 |",
             "|---|---|---|---|---|"]
    for r in rows:
        if "quant_acc" in r:
            lines.append(f"| {r['model']} | {r['case']} | {r['fp32_acc']:.1f}% | "
                         f"{r['quant_acc']:.1f}% (compiled int8: "
                         f"{r['quant_compiled_acc']:.1f}%) | {r['fp32_bytes'] / 1e6:.2f} MB -> "
                         f"{r['quant_bytes'] / 1e6:.2f} MB "
                         f"({r['fp32_bytes'] / r['quant_bytes']:.2f}x smaller) |")
        else:
            lines.append(f"| {r['model']} | {r['case']} | {r['fp32_acc']:.1f}% | "
                         f"PTQ {r['ptq_acc']:.1f}%, QAT ({r['qat_steps']} steps) "
                         f"{r['qat_acc']:.1f}% | |")
    return "\n".join(lines) + "\n"


def main():
    rows = accuracy_rows()
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "quantization_accuracy.json"), "w") as f:
        json.dump(rows, f, indent=1)
    md = _markdown(rows)
    with open(os.path.join(out, "quantization_accuracy.md"), "w") as f:
        f.write("# pt2e quantization: accuracy and size (digits upscaled to 32x32)\n\n"
                "Test accuracy on 360 held-out images; the int8 model run eagerly (the "
                "q/dq reference graph) and under ember.compile (int8 kernels). Size: "
                "ember.save of the state_dict.\n\n" + md)
    print(md)


if __name__ == "__main__":
    main()
