"""export -> save -> load in a fresh process without the model's code -> same outputs."""
import os
import subprocess
import sys
import textwrap

import numpy as np

import ember
import ember.models
from ember.export import Dim, export, save

_CHILD = textwrap.dedent("""
    import sys, numpy as np
    import ember
    from ember.export import load
    path, inp, out = sys.argv[1:4]
    ep = load(path)
    assert not any(m.startswith("ember.vision.models") for m in sys.modules), "model code"
    data = np.load(inp)
    xs = [ember.from_numpy(data[k]) for k in sorted(data.files)]
    res = {}
    mod = ep.module()
    for i, x in enumerate(xs):
        with ember.no_grad():
            y = mod(x)
        leaves = [y] if isinstance(y, ember.Tensor) else list(y)
        flat = []
        while leaves:
            v = leaves.pop(0)
            if isinstance(v, (tuple, list)):
                leaves = list(v) + leaves
            else:
                flat.append(v)
        for j, v in enumerate(flat):
            res[f"o{i}_{j}"] = v.numpy()
    np.savez(out, **res)
""")


def _flat(y):
    if isinstance(y, ember.Tensor):
        return [y]
    out = []
    for v in y:
        out += _flat(v)
    return out


def _roundtrip(tmp_path, model, example, dynamic_shapes, inputs, tol=1e-5):
    model.eval()
    ep = export(model, (example,), dynamic_shapes=dynamic_shapes)
    path = tmp_path / "prog.zip"
    save(ep, str(path))
    np.savez(tmp_path / "in.npz", **{f"x{i}": x.numpy() for i, x in enumerate(inputs)})
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(ember.__file__)))
    r = subprocess.run([sys.executable, str(script), str(path), str(tmp_path / "in.npz"),
                        str(tmp_path / "out.npz")], capture_output=True, text=True,
                       timeout=120, cwd=str(tmp_path), env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    got = np.load(tmp_path / "out.npz")
    for i, x in enumerate(inputs):
        with ember.no_grad():
            want = _flat(model(x))
        for j, w in enumerate(want):
            np.testing.assert_allclose(got[f"o{i}_{j}"], w.numpy(), rtol=tol, atol=tol)
    return ep


def test_resnet18_dynamic_batch(tmp_path):
    ember.manual_seed(0)
    m = ember.models.resnet18(num_classes=10)
    ep = _roundtrip(tmp_path, m, ember.randn(4, 3, 32, 32),
                    {"x": {0: Dim("batch", min=2, max=16)}},
                    [ember.randn(3, 3, 32, 32), ember.randn(7, 3, 32, 32)], tol=1e-4)
    (sym, vr), = ep.range_constraints.items()
    assert (vr.lower, vr.upper) == (2, 16)


def test_mobilenet_v2_dynamic_batch(tmp_path):
    ember.manual_seed(0)
    m = ember.models.mobilenet_v2(num_classes=10)
    _roundtrip(tmp_path, m, ember.randn(2, 3, 32, 32), {"x": {0: Dim("batch", max=8)}},
               [ember.randn(3, 3, 32, 32), ember.randn(5, 3, 32, 32)], tol=1e-4)


def _encoder():
    ember.manual_seed(0)
    layer = ember.nn.TransformerEncoderLayer(d_model=16, nhead=4, dim_feedforward=32,
                                             batch_first=True, dropout=0.0)
    return ember.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)


def test_transformer_encoder_roundtrip(tmp_path):
    _roundtrip(tmp_path, _encoder(), ember.randn(3, 5, 16), None,
               [ember.randn(3, 5, 16), ember.randn(3, 5, 16)], tol=1e-4)


def test_transformer_encoder_dynamic_batch(tmp_path):
    _roundtrip(tmp_path, _encoder(), ember.randn(3, 5, 16),
               {"src": {0: Dim("batch", min=2, max=32)}},
               [ember.randn(2, 5, 16), ember.randn(6, 5, 16)], tol=1e-4)


def test_lstm_dynamic_batch(tmp_path):
    ember.manual_seed(0)
    m = ember.nn.LSTM(4, 8, num_layers=2, batch_first=True)
    ep = _roundtrip(tmp_path, m, ember.randn(3, 5, 4), {"input": {0: Dim("batch", min=2)}},
                    [ember.randn(4, 5, 4), ember.randn(2, 5, 4)])
    (vr,) = ep.range_constraints.values()
    assert (vr.lower, vr.upper) == (2, float("inf"))
