"""The torchvision oracle for tests/vision.

torchvision 0.28 on PyPI is CUDA-linked: its C extension (_C.so) needs libc10_cuda and does not
load with the CPU torch. Its Python code (models, transforms, box math) does. torchvision's
import registers fake kernels for two ops of that extension unconditionally, so we declare
their schemas first (no kernels: torchvision.ops.nms itself stays unusable and is not used as
an oracle). Everything else compared against here is torchvision's own Python source.
"""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

_tv = None


def torchvision():
    """Import torchvision (declaring the two extension schemas if _C cannot load)."""
    global _tv
    if _tv is not None:
        return _tv
    try:
        import torchvision as tv
    except RuntimeError:
        import sys
        for name in [n for n in sys.modules if n.startswith("torchvision")]:
            del sys.modules[name]
        lib = torch.library.Library("torchvision", "FRAGMENT")
        for op in ("nms", "qnms"):
            try:
                lib.define(f"{op}(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
            except RuntimeError:
                pass
        _keep.append(lib)
        import torchvision as tv
    except ImportError:
        pytest.skip("torchvision is not installed")
    _tv = tv
    return tv


_keep = []


def load_torch_state(ember_module, torch_module):
    """Copy a torch module's state_dict into an ember module with load_state_dict (strict)."""
    import ember
    sd = {k: ember.tensor(v.detach().numpy().copy()) for k, v in
          torch_module.state_dict().items()}
    ember_module.load_state_dict(sd)


def to_np(t):
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t)
