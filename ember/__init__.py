"""ember: a deep-learning framework with PyTorch's API, on NumPy."""
import warnings as _warnings

# Kernels follow IEEE semantics silently (inf/nan), as PyTorch does; NumPy's
# floating-point warnings are attributed to the kernel's module, so filter ember's
# modules instead of paying for np.errstate on every call. (ember's own warnings use
# UserWarning and its subclasses, never RuntimeWarning.)
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"ember\.")
from ._dtype import (dtype, bool, uint8, int8, int16, int32, int64, float16, bfloat16,
                     float32, float64, complex64, complex128, finfo, iinfo, promote_types,
                     can_cast, get_default_dtype, set_default_dtype)
from ._dtype import float32 as float, float64 as double, float16 as half, int16 as short
from ._dtype import int32 as int, int64 as long, complex64 as cfloat, complex128 as cdouble
from ._dtype import (qint8, quint8, qint32, quint4x2, quint2x4, qscheme,  # noqa: F401
                     per_tensor_affine, per_channel_affine, per_tensor_symmetric,
                     per_channel_symmetric, per_channel_affine_float_qparams)
from ._device import device
from ._tensor import Tensor, Size, is_tensor
from ._memory import (memory_allocated, max_memory_allocated, reset_peak_memory_stats,
                      memory_stats, memory_reserved, OutOfMemoryError)
from ._malloc import tune as _tune_malloc
_tune_malloc()      # keep freed temporaries in the process: no page faults per step
from . import ops
from .ops.creation import (tensor, as_tensor, asarray, from_numpy, zeros, ones, empty, full,
                           zeros_like, ones_like, empty_like, full_like, arange, linspace,
                           logspace, eye, scalar_tensor)
from .ops.copy import clone
from .ops.effects import (_amp_foreach_non_finite_check_and_unscale_,  # noqa: F401
                          _amp_update_scale_)
from .ops.pointwise import *  # noqa: F401,F403
from .ops.shape import *  # noqa: F401,F403
from .ops.join import *  # noqa: F401,F403
from .ops.as_strided import *  # noqa: F401,F403
from .ops.reduction import *  # noqa: F401,F403
from .ops.vector_norm import *  # noqa: F401,F403
from .ops.mask import *  # noqa: F401,F403
from .ops.indexing import *  # noqa: F401,F403
from .ops.matmul import *  # noqa: F401,F403
from .ops.activation import *  # noqa: F401,F403
from .ops.random import *  # noqa: F401,F403
from .ops.pointwise_math import *  # noqa: F401,F403
from .ops.scan import *  # noqa: F401,F403
from .ops.histogram import *  # noqa: F401,F403
from .ops.sorting import *  # noqa: F401,F403
from .ops.rearrange import *  # noqa: F401,F403
from .ops.index_ops import *  # noqa: F401,F403
from .ops.complex import *  # noqa: F401,F403
from ._determinism import *  # noqa: F401,F403
from .ops.misc import *  # noqa: F401,F403
from ._native_norms import (native_layer_norm, native_batch_norm, native_group_norm,  # noqa: F401
                            _native_batch_norm_legit)
from ._lowrank import svd_lowrank, pca_lowrank  # noqa: F401
from ._histogramdd import histogramdd  # noqa: F401
from .ops.internal import *  # noqa: F401,F403
from .ops.fake_quantize import *  # noqa: F401,F403
from .linalg._lapack_raw import geqrf, ormqr  # noqa: F401,E402
from . import linalg, fft, special  # noqa: E402
from . import random
from .random import (manual_seed, seed, initial_seed, get_rng_state, set_rng_state,
                     default_generator, Generator)
from . import autograd
from .autograd.grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode,
                                 is_grad_enabled, is_inference_mode_enabled)
from .autograd.anomaly_mode import is_anomaly_enabled, is_anomaly_check_nan_enabled
from . import _numpy_protocol  # noqa: F401  (Tensor.__array__/__array_ufunc__/...)
from ._tensor_str import set_printoptions, get_printoptions
from . import overrides, utils, _subclasses  # noqa: F401
from . import futures, jit, cpu, profiler, amp, nn, cuda, backends, accelerator  # noqa: F401
from .amp.autocast_mode import (autocast, is_autocast_enabled, get_autocast_dtype,  # noqa: F401
                                set_autocast_enabled, set_autocast_dtype,
                                get_autocast_cpu_dtype, is_autocast_cpu_enabled,
                                clear_autocast_cache, is_autocast_available)
from .autograd import profiler as _legacy_profiler  # noqa: F401
from .utils import _python_dispatch  # noqa: F401
from . import sparse  # noqa: E402
from .sparse import (sparse_coo_tensor, sparse_csr_tensor, spmm, sparse_coo,  # noqa: F401
                     sparse_csr)
from . import _tensor_methods  # noqa: E402  (Tensor's method table)
_tensor_methods.install()

strided = "torch.strided"
__version__ = "0.1.0"


def result_type(tensor1, tensor2):
    from ._dtype import result_dtype
    return result_dtype((tensor1, tensor2))


def is_floating_point(input):
    return input.is_floating_point()


def is_complex(input):
    return input.is_complex()


def numel(input):
    return input.numel()


import builtins as _builtins  # noqa: E402  (ember.int/ember.max shadow the builtins here)

_NUM_THREADS = [__import__("os").cpu_count() or 1]


def get_num_threads():
    return _NUM_THREADS[0]


def set_num_threads(n):
    """Sets the BLAS thread count through threadpoolctl when it is installed; the
    value is reported by get_num_threads() either way."""
    if not isinstance(n, _builtins.int) or n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _NUM_THREADS[0] = n
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    threadpool_limits(n)


def get_num_interop_threads():
    return 1


def set_num_interop_threads(n):
    if not isinstance(n, _builtins.int) or n <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")


from .linalg import _top_level as _linalg_top; globals().update(_linalg_top.exports())  # noqa: E402,E702
from . import optim  # noqa: E402

def _export_nn_functions():
    """torch exposes many nn.functional ops at the top level (torch.conv2d, torch.dropout...)."""
    from .nn import functional as F
    from .ops import conv as _conv, norm as _norm, embedding as _emb, pool as _pool
    names = ["adaptive_avg_pool1d", "adaptive_max_pool1d", "alpha_dropout", "avg_pool1d",
             "bilinear", "binary_cross_entropy_with_logits", "celu", "channel_shuffle",
             "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
             "conv_transpose3d", "cosine_embedding_loss", "cosine_similarity", "ctc_loss",
             "dropout", "feature_alpha_dropout", "hardshrink", "hinge_embedding_loss",
             "kl_div", "margin_ranking_loss", "max_pool1d", "max_pool2d", "max_pool3d",
             "max_pool1d_with_indices", "pairwise_distance", "pdist", "pixel_shuffle",
             "pixel_unshuffle", "poisson_nll_loss", "prelu", "rrelu", "selu", "threshold",
             "triplet_margin_loss", "native_channel_shuffle", "affine_grid_generator"]
    g = globals()
    for n in names:
        if n not in g and hasattr(F, n):
            g[n] = getattr(F, n)
    for mod in (_conv, _norm, _emb, _pool):
        for n in getattr(mod, "__all__", ()):
            g.setdefault(n, getattr(mod, n))


_export_nn_functions()


# torch.exp_(t) and friends: the function form of every in-place Tensor method
for _name, _fn in ops.misc._install_inplace_functions():
    globals()[_name] = _fn
del _name, _fn
from .serialization import save, load  # noqa: E402
from ._legacy import TENSOR_TYPES as _TENSOR_TYPES  # noqa: E402
globals().update(_TENSOR_TYPES)
from . import types  # noqa: E402,F401  (torch.types)
from .utils import checkpoint as _utils_checkpoint, hooks as _utils_hooks  # noqa: E402,F401
from . import distributed  # noqa: E402,F401  (torch.distributed)

# Subpackages most programs never touch are imported on first attribute access (PEP 562),
# keeping `import ember` cheap: `ember.hub.x`, `import ember.hub`, `from ember import vmap`
# and `import torch.distributions` under `ember run` all still work.
_LAZY_SUBMODULES = frozenset({"distributions", "hub", "testing", "masked", "nested",
                              "signal", "multiprocessing", "func", "fx", "_dynamo", "compiler",
                              "_logging", "_numpy", "onnx", "export", "version",
                              "ao", "quantization"})
_LAZY_ATTRS = {"vmap": "func", "cond": "_higher_order",
               "_register_device_module": "_privateuse1"}   # torch.vmap -> torch.func.vmap
_LAZY_ATTRS.update({n: "ao.quantization._qtensor" for n in (
    "quantize_per_tensor", "quantize_per_channel", "quantize_per_tensor_dynamic", "dequantize")})


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    """torch.compile: capture `model` into graphs (ember/_dynamo) and run them through
    `backend`; usable as a decorator with or without arguments."""
    from ._dynamo import compile as _compile
    return _compile(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                    options=options, disable=disable)


def __getattr__(name):
    import importlib
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _LAZY_ATTRS:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY_ATTRS[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _LAZY_SUBMODULES | set(_LAZY_ATTRS))


from . import functional  # noqa: E402,F401  (torch.functional: stft/istft)
from .functional import stft, istft  # noqa: E402,F401
