"""Project-level rules: ember never imports torch; import stays light."""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_ember_never_imports_torch():
    code = "import sys, ember; ember.ones(2) + 1; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout.strip()
    assert out == "False"
    pattern = re.compile(r"^\s*(import torch|from torch)", re.M)
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "ember").rglob("*.py")
                 if pattern.search(p.read_text())]
    assert offenders == []


def test_import_does_not_load_scipy():
    code = "import sys, ember; print('scipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout.strip()
    assert out == "False"
