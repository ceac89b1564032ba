"""The op registry and the op families that fill it (one module per family)."""
from ._registry import REGISTRY, OpDef, register, get
from . import (copy, creation, pointwise, shape, as_strided, join, reduction,  # noqa: F401
               mask, indexing, matmul,
               activation, random, pointwise_math, scan, histogram, sorting, rearrange,
               index_ops, complex, einsum)
from . import vector_norm  # noqa: F401,E402  (torch.norm/dist: above reduction)
from . import conv  # noqa: F401,E402
from . import norm, embedding  # noqa: F401,E402
from . import pool  # noqa: F401,E402
from . import loss  # noqa: F401,E402
from . import misc  # noqa: F401,E402  (last: composes the families above)
from . import effects  # noqa: F401,E402  (registry ops for non-math effects)
from . import aten_only  # noqa: F401,E402  (torch.ops.aten-only composites)
from . import attention  # noqa: F401,E402  (the flash SDPA ops)
from ._aten import aten  # noqa: F401,E402  (torch.ops.aten)
from . import quantized_decomposed  # noqa: F401,E402  (torch.ops.quantized_decomposed)
from . import fake_quantize  # noqa: F401,E402  (aten's fake-quant ops, for QAT)
from . import quantized as onednn  # noqa: F401,E402  (torch.ops.onednn: fused int8 linear/conv)
