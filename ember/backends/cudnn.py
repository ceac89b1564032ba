"""torch.backends.cudnn: no cuDNN in ember; the flags exist because programs set them."""
import sys

from ._flags import set_flags

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available():
    return False


def version():
    return None


def is_acceptable(tensor):
    return False


def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
          allow_tf32=True):
    return set_flags(sys.modules[__name__], enabled=enabled, benchmark=benchmark,
                     benchmark_limit=benchmark_limit, deterministic=deterministic,
                     allow_tf32=allow_tf32)
