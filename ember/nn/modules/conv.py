"""Convolution layers: Conv1d/2d/3d and ConvTranspose1d/2d/3d (torch.nn's conv.py).

Note: constructor arguments, validation errors, parameter names and shapes, default
initialisation (kaiming_uniform_(a=sqrt(5)) for the weight, U(-1/sqrt(fan_in),
1/sqrt(fan_in)) for the bias) and extra_repr follow PyTorch. A non-'zeros'
padding_mode pads with F.pad and then convolves without padding, as PyTorch does.
"""
import math

from ...autograd.grad_mode import no_grad
from ...ops.creation import empty
from .. import functional as F, init
from ..parameter import Parameter
from .module import Module
from .utils import _pair, _single, _triple

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d"]




def _reverse_repeat_tuple(t, n):
    return tuple(x for x in reversed(t) for _ in range(n))


class _ConvNd(Module):
    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode",
                     "output_padding", "in_channels", "out_channels", "kernel_size"]

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None,
                 dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(padding, str):
            pads = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total = d * (k - 1)
                    pads[2 * i] = total // 2
                    pads[2 * i + 1] = total - total // 2
            self._reversed_padding_repeated_twice = pads
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(padding, 2)
        shape = (in_channels, out_channels // groups) if transposed else \
            (out_channels, in_channels // groups)
        self.weight = Parameter(empty((*shape, *kernel_size), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        with no_grad():
            init.kaiming_uniform_(self.weight, a=math.sqrt(5))
            if self.bias is not None:
                fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
                bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class _ConvForward(_ConvNd):
    _parse = None
    _fn = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        p = self._parse
        super().__init__(in_channels, out_channels, p(kernel_size), p(stride),
                         padding if isinstance(padding, str) else p(padding), p(dilation),
                         False, p(0), groups, bias, padding_mode, device=device, dtype=dtype)

    def _conv_forward(self, input, weight, bias):
        fn = getattr(F, self._fn)
        if self.padding_mode != "zeros":
            return fn(F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode),
                      weight, bias, self.stride, self._parse(0), self.dilation, self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_ConvForward):
    """1-d convolution over (N, C_in, L) (or unbatched (C_in, L)) input."""
    _parse, _fn = staticmethod(_single), "conv1d"


class Conv2d(_ConvForward):
    """2-d convolution over (N, C_in, H, W) (or unbatched) input."""
    _parse, _fn = staticmethod(_pair), "conv2d"


class Conv3d(_ConvForward):
    """3-d convolution over (N, C_in, D, H, W) (or unbatched) input."""
    _parse, _fn = staticmethod(_triple), "conv3d"


class _ConvTransposeNd(_ConvNd):
    _n = 0
    _parse = None
    _fn = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{self.__class__.__name__}")
        p = self._parse
        super().__init__(in_channels, out_channels, p(kernel_size), p(stride), p(padding),
                         p(dilation), True, p(output_padding), groups, bias, padding_mode,
                         device=device, dtype=dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size,
                        num_spatial_dims, dilation=None):
        """output_padding that makes the output `output_size` (PyTorch's rule)."""
        if output_size is None:
            return _single(self.output_padding)
        has_batch_dim = input.dim() == num_spatial_dims + 2
        num_non_spatial_dims = 2 if has_batch_dim else 1
        output_size = list(output_size)
        if len(output_size) == num_non_spatial_dims + num_spatial_dims:
            output_size = output_size[num_non_spatial_dims:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, "
                             f"output_size must have {num_spatial_dims} or "
                             f"{num_non_spatial_dims + num_spatial_dims} elements (got "
                             f"{len(output_size)})")
        min_sizes, max_sizes = [], []
        for d in range(num_spatial_dims):
            dim_size = ((input.size(d + num_non_spatial_dims) - 1) * stride[d]
                        - 2 * padding[d]
                        + (dilation[d] if dilation is not None else 1) * (kernel_size[d] - 1)
                        + 1)
            min_sizes.append(dim_size)
            max_sizes.append(min_sizes[d] + stride[d] - 1)
        for size, lo, hi in zip(output_size, min_sizes, max_sizes):
            if size < lo or size > hi:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {min_sizes} to {max_sizes} (for an input of "
                                 f"{input.size()[2:]})")
        return [output_size[d] - min_sizes[d] for d in range(num_spatial_dims)]

    def forward(self, input, output_size=None):
        if self.padding_mode != "zeros":
            raise ValueError(f"Only `zeros` padding mode is supported for "
                             f"{type(self).__name__}")
        if not isinstance(self.padding, tuple):
            raise AssertionError("self.padding must be a tuple")
        output_padding = self._output_padding(input, output_size, self.stride, self.padding,
                                              self.kernel_size, self._n, self.dilation)
        return getattr(F, self._fn)(input, self.weight, self.bias, self.stride, self.padding,
                                    output_padding, self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-d transposed convolution ("deconvolution"), the gradient of Conv1d."""
    _n, _parse, _fn = 1, staticmethod(_single), "conv_transpose1d"


class ConvTranspose2d(_ConvTransposeNd):
    """2-d transposed convolution."""
    _n, _parse, _fn = 2, staticmethod(_pair), "conv_transpose2d"


class ConvTranspose3d(_ConvTransposeNd):
    """3-d transposed convolution."""
    _n, _parse, _fn = 3, staticmethod(_triple), "conv_transpose3d"
