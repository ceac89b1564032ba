"""ember.backends: PyTorch's backend switches, as a CPU build reports them.

The cudnn/mps flags are plain attributes (programs set them unconditionally); nothing
reads them because ember has neither backend."""
import types

__all__ = ["cudnn", "mps", "cuda", "mkldnn", "openmp"]

cudnn = types.SimpleNamespace(enabled=True, benchmark=False, deterministic=False,
                              allow_tf32=True, is_available=lambda: False,
                              version=lambda: None)
mps = types.SimpleNamespace(is_available=lambda: False, is_built=lambda: False)
mkldnn = types.SimpleNamespace(enabled=True, is_available=lambda: False)
openmp = types.SimpleNamespace(is_available=lambda: False)
cuda = types.SimpleNamespace(is_built=lambda: False,
                             matmul=types.SimpleNamespace(allow_tf32=False,
                                                          allow_fp16_reduced_precision_reduction=True))
