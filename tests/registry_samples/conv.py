"""Samples for the convolution primitives: convolution (plain and transposed, through
F.conv2d / F.conv_transpose1d), im2col (F.unfold) and col2im (F.fold)."""
import ember.nn.functional as F
from ember.ops.conv import CONV_WEIGHT_GRAD

from ._util import t

SAMPLES = {
    "convolution": lambda: (lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=1,
                                                     dilation=(1, 2), groups=2),
                            [t(1, 4, 5, 6), t(4, 2, 2, 3, seed=1), t(4, seed=2)]),
    # conv's grad_weight as one op (F.conv2d's backward dispatches it)
    "convolution_backward_weight": lambda: (
        lambda x, g: CONV_WEIGHT_GRAD(x, g, [2, 3], [2, 1], [1, 1], [1, 2], 2),
        [t(1, 4, 5, 6), t(1, 4, 3, 4, seed=1)]),
    "im2col": lambda: (lambda x: F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=2),
                       [t(2, 2, 4, 5)]),
    "col2im": lambda: (lambda x: F.fold(x, (4, 5), (2, 3), dilation=(1, 2), padding=1,
                                        stride=2), [t(2, 12, 6)]),
}

