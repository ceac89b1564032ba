"""ember.nn.utils: gradient clipping, parameter/vector conversion, parametrizations,
weight/spectral norm, conv-bn fusion and functional_call (torch.nn.utils' layout)."""
from . import parametrize, parametrizations, stateless  # noqa: F401,E402
from .clip_grad import (clip_grad_norm_, clip_grad_norm, clip_grad_value_,  # noqa: F401,E402
                        get_total_norm, clip_grads_with_norm_)
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401,E402
from .weight_norm import weight_norm, remove_weight_norm  # noqa: F401,E402
from .spectral_norm import spectral_norm, remove_spectral_norm  # noqa: F401,E402
from .fusion import (fuse_conv_bn_eval, fuse_conv_bn_weights,  # noqa: F401,E402
                     fuse_linear_bn_eval, fuse_linear_bn_weights)
from .stateless import functional_call  # noqa: F401,E402
from . import rnn  # noqa: F401,E402
