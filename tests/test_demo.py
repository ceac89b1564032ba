"""The main job (`make demo`) runs, learns, and writes a checkpoint PyTorch loads."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_digits_demo_two_epochs(tmp_path):
    pytest.importorskip("sklearn")
    ckpt = tmp_path / "digits.pt"
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "digits_cnn.py"),
                          "--epochs", "2", "--checkpoint", str(ckpt)],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    acc = float(re.search(r"^test accuracy: ([0-9.]+)%$", out.stdout, re.M).group(1))
    assert acc > 90.0
    torch = pytest.importorskip("torch")
    sd = torch.load(ckpt, weights_only=True)
    assert "features.0.weight" in sd and sd["classifier.2.weight"].shape == (10, 64)
