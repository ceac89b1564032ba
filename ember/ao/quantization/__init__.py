"""ember.ao.quantization: PyTorch's torch.ao.quantization (a flat list of re-exports)."""
from ._qtensor import (QuantizedTensor, quantize_per_tensor, quantize_per_channel,  # noqa: F401
                       quantize_per_tensor_dynamic, dequantize)
from .observer import *  # noqa: F401,F403
from .fake_quantize import *  # noqa: F401,F403
from .quantize_pt2e import prepare_pt2e, prepare_qat_pt2e, convert_pt2e  # noqa: F401
from .pt2e.export_utils import (move_exported_model_to_eval,  # noqa: F401
                                move_exported_model_to_train, allow_exported_model_train_eval)
from .observer import (default_observer, default_placeholder_observer,  # noqa: F401
                       default_debug_observer, default_weight_observer,
                       default_histogram_observer, default_per_channel_weight_observer,
                       default_dynamic_quant_observer, default_float_qparams_observer)
from .fake_quantize import (default_fake_quant, default_weight_fake_quant,  # noqa: F401
                            default_per_channel_weight_fake_quant)
from .qconfig import *  # noqa: F401,F403
from .stubs import QuantStub, DeQuantStub, QuantWrapper  # noqa: F401
from .quantize import *  # noqa: F401,F403
from .qconfig_mapping import *  # noqa: F401,F403
