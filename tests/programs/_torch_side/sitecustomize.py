"""Put on PYTHONPATH for the *PyTorch* run of a tests/programs script only (never for
`ember run`): torchvision 0.28's C extension needs CUDA libraries, so its two extension op
schemas are declared before it imports (its Python code then works; nms stays unusable), and
torchaudio's pure-Python oracle (.venv/torchaudio-oracle, see the Makefile) joins sys.path.
The program files themselves stay plain PyTorch code."""
import os
import sys

_ORACLE = os.environ.get("EMBER_TORCHAUDIO_ORACLE", os.path.join(
    os.path.dirname(__file__), "..", "..", "..", ".venv", "torchaudio-oracle"))
if os.path.isdir(_ORACLE) and _ORACLE not in sys.path:
    sys.path.append(_ORACLE)

try:
    import torch

    _lib = torch.library.Library("torchvision", "FRAGMENT")
    for _op in ("nms", "qnms"):
        try:
            _lib.define(f"{_op}(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        except RuntimeError:        # already declared (torchvision's extension did load)
            pass
except ImportError:
    pass
