"""The pt2e accuracy proof: resnet18 and mobilenet_v2 on digits upscaled to 32x32.

int8 PTQ (X86InductorQuantizer) stays within 1 point of float32 and the saved model is
~4x smaller; 4-bit PTQ loses accuracy and a short QAT recovers most of it. The float32
weights are trained once and cached (benchmarks/quantization_accuracy.py holds the
task, the training and the flows; its results table is benchmarks/results/).
"""
import importlib.util
import os

import pytest

import ember
from ember.ao.quantization.quantizer.x86_inductor_quantizer import (
    X86InductorQuantizer, get_default_x86_inductor_quantization_config)
from ember.ao.quantization.quantizer.xnnpack_quantizer import XNNPACKQuantizer

pytest.importorskip("sklearn")

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _proof():
    spec = importlib.util.spec_from_file_location(
        "quantization_accuracy", os.path.join(_ROOT, "benchmarks", "quantization_accuracy.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
def test_int8_ptq_accuracy_size_and_qat_recovery():
    Q = _proof()
    x, y, xt, yt = Q.digits()
    for arch in ("resnet18", "mobilenet_v2"):
        model = Q.trained(arch)
        fp32 = Q.accuracy(model, xt, yt)
        assert fp32 > 90.0, f"{arch} float32 training failed ({fp32:.1f}%)"
        q = Q.ptq(model, X86InductorQuantizer().set_global(
            get_default_x86_inductor_quantization_config()), x[:256])
        int8 = Q.accuracy(q, xt, yt)
        assert fp32 - int8 <= 1.0, f"{arch}: int8 {int8:.1f}% vs float32 {fp32:.1f}%"
        ratio = Q.saved_bytes(model) / Q.saved_bytes(q)
        assert ratio > 3.5, f"{arch}: int8 model only {ratio:.2f}x smaller"
        assert any(v.dtype == ember.int8 for v in q.state_dict().values())

    model = Q.trained("resnet18")
    fp32 = Q.accuracy(model, xt, yt)
    low = Q.ptq(model, XNNPACKQuantizer().set_global(Q.low_bit_config(False)), x[:256])
    ptq4 = Q.accuracy(low, xt, yt)
    assert fp32 - ptq4 >= 2.0, "the 4-bit case should lose accuracy under PTQ"
    qat4 = Q.accuracy(Q.qat(model, Q.low_bit_config(True), x, y, steps=20), xt, yt)
    assert qat4 - ptq4 >= (fp32 - ptq4) / 2, \
        f"QAT {qat4:.1f}% did not recover PTQ's {ptq4:.1f}% toward {fp32:.1f}%"
