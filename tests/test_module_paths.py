"""Issue 11 point 6: the torch.X module paths programs commonly import resolve under `ember
run` (scripts/api_coverage.py's COMMON_PATHS, each with a name programs take from it), and
the new path modules behave as PyTorch's (checked against torch where it is installed)."""
import importlib
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ember

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _common_paths():
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    try:
        pytest.importorskip("torch")
        return importlib.import_module("api_coverage").COMMON_PATHS
    finally:
        sys.path.remove(os.path.join(ROOT, "scripts"))


def test_common_paths_resolve_under_ember_run(tmp_path):
    paths = _common_paths()
    script = tmp_path / "imports.py"
    lines = ["import importlib, os", "import torch", "bad = []",
             f"ember_dir = {os.path.join(ROOT, 'ember') + os.sep!r}"]
    for path, name in paths.items():       # ember's module (not torch's), with the name
        lines.append(f"m = importlib.import_module({path!r})")
        lines.append(f"if not (getattr(m, '__file__', None) or '').startswith(ember_dir) "
                     f"or not hasattr(m, {name!r}): bad.append({path!r})")
    lines += ["import torch.onnx, torch.nn.modules.activation",
              "from torch.nn.modules.activation import MultiheadAttention",
              "from torch.serialization import safe_globals",
              "assert torch.version.cuda is None and torch.onnx.export",
              "print('BAD', bad)"]
    script.write_text("\n".join(lines) + "\n")
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.run([sys.executable, "-m", "ember", "run", str(script)], capture_output=True,
                       text=True, env=env, timeout=120, cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr[-3000:]
    assert "BAD []" in p.stdout, p.stdout[-2000:]


def test_missing_path_still_says_so(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("import torch.package\n")
    p = subprocess.run([sys.executable, "-m", "ember", "run", str(script)], capture_output=True,
                       text=True, env=dict(os.environ, PYTHONPATH=ROOT), timeout=120)
    assert p.returncode != 0 and "ember does not provide torch.package" in p.stderr


def test_variable_is_detach_with_requires_grad():
    from ember.autograd import Variable
    x = ember.randn(3)
    v = Variable(x, requires_grad=True)
    assert v is not x and v.requires_grad and not x.requires_grad and v.is_leaf
    assert v.data_ptr() == x.data_ptr() and isinstance(x, Variable)
    y = (ember.randn(2, requires_grad=True) * 2)
    assert Variable(y).grad_fn is None and not Variable(y).requires_grad


def test_version_module():
    torch = pytest.importorskip("torch")
    import ember.version as v
    assert v.cuda is None and v.hip is None and v.debug is False
    assert set(n for n in dir(torch.version) if not n.startswith("_") and n != "Optional") <= \
        set(dir(v))


def test_common_types_match_torch():
    pytest.importorskip("torch")
    import torch.nn.common_types as tct

    import ember.nn.common_types as ect
    names = [n for n in dir(tct) if n.startswith("_") and n.endswith("_t")]
    assert names and all(hasattr(ect, n) for n in names)


def test_dlpack_round_trip_shares_memory():
    from ember.utils.dlpack import from_dlpack, to_dlpack
    t = ember.arange(4.0)
    u = from_dlpack(to_dlpack(t))
    u[0] = 9
    assert t.tolist() == [9.0, 1.0, 2.0, 3.0]
    a = np.arange(3, dtype=np.int32)
    e = from_dlpack(a)
    assert e.dtype == ember.int32 and e.tolist() == [0, 1, 2]
    with pytest.raises(RuntimeError, match="require gradient"):
        to_dlpack(ember.ones(2, requires_grad=True))


@pytest.mark.parametrize("dev", ["cpu", "cuda"])
def test_device_amp_spellings(dev):
    amp = importlib.import_module(f"ember.{dev}.amp")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.warns(FutureWarning, match=f"torch.{dev}.amp.autocast"):
            ctx = amp.autocast()
        with ctx:
            out = ember.randn(2, 2) @ ember.randn(2, 2)
        assert out.dtype == (ember.bfloat16 if dev == "cpu" else ember.float32)
        with pytest.warns(FutureWarning):
            s = amp.GradScaler(init_scale=8.0)
        assert s.get_scale() == 8.0 or not s.is_enabled()


def test_data_parallel_path():
    from ember.nn.parallel.data_parallel import DataParallel, data_parallel
    m = ember.nn.Linear(2, 2)
    x = ember.randn(3, 2)
    assert ember.equal(data_parallel(m, x), m(x)) and ember.equal(DataParallel(m)(x), m(x))
