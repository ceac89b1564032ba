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
