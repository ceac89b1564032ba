"""The public submodule paths PyTorch programs import resolve in ember, both as ember.<path>
and as torch.<path> under `ember run`; torch.types and torch.utils.hooks behave like torch's."""
import importlib
import os
import subprocess
import sys
import textwrap

import pytest

import ember

# the paths issue 16 names, plus the per-distribution modules programs import from
PATHS = [
    "nn.modules.linear", "nn.modules.conv", "nn.modules.activation", "nn.modules.loss",
    "nn.modules.batchnorm", "nn.modules.module", "nn.modules.container", "nn.modules.rnn",
    "nn.utils.rnn", "distributions", "distributions.normal", "distributions.categorical",
    "distributions.kl", "distributions.constraints", "distributions.transforms",
    "distributions.utils", "distributions.multivariate_normal", "distributions.studentT",
    "hub", "testing", "utils.checkpoint", "utils.hooks", "utils.model_zoo", "backends",
    "backends.cudnn", "backends.mps", "accelerator", "masked", "signal", "signal.windows",
    "nested", "types",
]


@pytest.mark.parametrize("path", PATHS)
def test_path_imports(path):
    importlib.import_module("ember." + path)


def test_attributes_after_import_ember():
    for path in ["distributions", "hub", "testing", "utils.checkpoint", "utils.hooks",
                 "masked", "signal.windows", "nested", "types"]:
        obj = ember
        for part in path.split("."):
            obj = getattr(obj, part)


def test_accelerator_reports_none():
    assert ember.accelerator.is_available() is False


def test_program_under_ember_run(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent('''
        import torch
        import torch.nn.modules.linear
        from torch.nn.utils.rnn import pad_sequence
        from torch.distributions import Normal, kl_divergence
        from torch.distributions.categorical import Categorical
        from torch.testing import assert_close
        from torch.utils.checkpoint import checkpoint
        from torch.utils.hooks import RemovableHandle
        from torch.signal.windows import hann
        import torch.masked, torch.nested, torch.hub, torch.types
        d = Normal(torch.zeros(3), torch.ones(3))
        assert_close(kl_divergence(d, d), torch.zeros(3))
        x = torch.ones(2, requires_grad=True)
        checkpoint(lambda a: (a * 3).sum(), x, use_reentrant=False).backward()
        assert_close(x.grad, torch.full((2,), 3.0))
        assert torch.masked.sum(torch.ones(3), mask=torch.tensor([1, 0, 1]).bool()) == 2
        nt = torch.nested.nested_tensor([torch.ones(2), torch.ones(3)])
        print(tuple(torch.nested.to_padded_tensor(nt, 0.0).shape), hann(4).shape[0],
              Categorical(probs=torch.ones(4)).sample().dtype, torch.accelerator.is_available())
    '''))
    out = subprocess.run([sys.executable, "-m", "ember", "run", str(script)],
                         capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONWARNINGS="ignore"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["(2,", "3)", "4", "torch.int64", "False"]


def test_types_and_removable_handle():
    import ember.types as T
    from ember.utils.hooks import RemovableHandle
    assert T.Number.__args__ == (int, float, bool)
    assert isinstance(ember.device("cpu"), T._device)
    from collections import OrderedDict
    hooks = OrderedDict()      # as in torch, the dict must be weak-referenceable
    h = RemovableHandle(hooks)
    hooks[h.id] = print
    with h:
        assert h.id in hooks
    assert h.id not in hooks
    m = ember.nn.Linear(2, 2)
    assert isinstance(m.register_forward_hook(lambda *a: None), RemovableHandle)


def test_module_coverage_script_measures_paths():
    root = os.path.join(os.path.dirname(__file__), "..", "scripts")
    sys.path.insert(0, root)
    try:
        cov = importlib.import_module("api_coverage")
    finally:
        sys.path.remove(root)
    pytest.importorskip("torch")
    paths = cov.torch_module_paths()
    assert "torch.distributions.normal" in paths and "torch.utils.checkpoint" in paths
    assert not any(p.startswith("torch.cuda") or "._" in p for p in paths)
    assert cov._resolves("torch.distributions.normal")
    assert not cov._resolves("torch.onnx.symbolic_opset9")
