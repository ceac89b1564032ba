"""`ember run`: unmodified PyTorch programs run on ember."""
import subprocess
import sys
import textwrap



def run(tmp_path, code, *args):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(code))
    return subprocess.run([sys.executable, "-m", "ember", "run", str(script), *args],
                          capture_output=True, text=True, timeout=300)


def test_torch_resolves_to_ember(tmp_path):
    out = run(tmp_path, """
        import sys, torch, torch.nn as nn
        from torch.autograd import grad
        x = torch.ones(3, requires_grad=True)
        (g,) = grad((x * x).sum(), x)
        print(type(x).__module__, g.tolist(), sys.argv[1:], isinstance(x, torch.Tensor))
    """, "--flag", "7")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[0] == "ember._tensor [2.0, 2.0, 2.0] ['--flag', '7'] True"


def test_unsupported_attribute_names_it(tmp_path):
    out = run(tmp_path, "import torch\ntorch.no_such_function(1)\n")
    assert out.returncode != 0
    assert "AttributeError" in out.stderr and "torch.no_such_function" in out.stderr


def test_missing_submodule_is_an_import_error(tmp_path):
    out = run(tmp_path, "import torch.no_such_submodule\n")
    assert out.returncode != 0 and "ModuleNotFoundError" in out.stderr
    assert "torch.no_such_submodule" in out.stderr


def test_usage_and_version():
    out = subprocess.run([sys.executable, "-m", "ember"], capture_output=True, text=True)
    assert out.returncode == 2 and "usage" in out.stderr
    out = subprocess.run([sys.executable, "-m", "ember", "--version"], capture_output=True,
                         text=True)
    assert out.returncode == 0 and out.stdout.startswith("ember ")


def test_importing_submodules_by_full_name_keeps_ember_intact(tmp_path):
    """`import torch.nn.init` etc. once renamed ember's own modules (their __package__ became
    torch.*), so later relative imports inside ember failed."""
    out = run(tmp_path, """
        import io
        import torch
        import torch.nn.init
        import torch.serialization
        from torch.nn.utils.clip_grad import clip_grad_norm_
        from torch.utils.data.sampler import RandomSampler
        import torch.backends.cudnn as cudnn
        from torch.nn.modules.activation import MultiheadAttention
        import torch.nn as nn
        cudnn.benchmark = True
        m = nn.Linear(3, 2)
        torch.nn.init.xavier_uniform_(m.weight)
        m(torch.randn(4, 3)).sum().backward()
        n = clip_grad_norm_(m.parameters(), 1.0)
        buf = io.BytesIO()
        torch.save(m.state_dict(), buf)
        buf.seek(0)
        print(sorted(torch.load(buf)), float(torch.linalg.norm(torch.ones(4))),
              len(list(RandomSampler(range(3)))), torch.backends.cudnn.benchmark,
              torch.Tensor([1, 2]).tolist(), torch.FloatTensor(2).shape)
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['bias', 'weight'] 2.0 3 True [1.0, 2.0] torch.Size([2])"
