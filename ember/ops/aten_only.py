"""aten ops that PyTorch exposes only as torch.ops.aten.* (no torch.<name>): backward
helpers that decompositions and custom autograd code call directly, and the antialiased
bilinear upsample.

Why registry entries: `ember.ops.aten.<name>.<overload>` serves exactly the registry's
schemas, so code written against torch.ops.aten finds these only here. Each is a
composite of ember ops (PyTorch's own decomposition), so its gradient, meta and
decomposition come from the ops it is made of.
"""
from ._composite import decomp_kernel, decomp_meta, decomp_vjp
from ._registry import register
from .antialias import interpolate_aa

__all__ = []


def _composite(name, decomp, schema, tags=(), meta=None):
    return register(name, decomp_kernel(decomp), meta=meta or decomp_meta(decomp),
                    vjp=decomp_vjp(decomp), decomp=decomp, tags=tags, schema=schema)


def _like_self_meta(grad_output, self, *rest):
    """The gradient has self's (possibly symbolic) shape and grad's dtype."""
    return tuple(self.shape), grad_output.dtype


def _native_dropout_backward(grad_output, mask, scale):
    """grad * (mask * scale) in grad's dtype (integers give the default float dtype)."""
    return grad_output * (mask.to(grad_output.dtype) * scale)


NATIVE_DROPOUT_BACKWARD = _composite(
    "native_dropout_backward", _native_dropout_backward,
    "native_dropout_backward(Tensor grad_output, Tensor mask, float scale) -> Tensor",
    tags=("pointwise",))


def _max_pool_backward(n):
    def decomp(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
        """Each output gradient added at the input position its index names (indices
        count within each flattened spatial plane)."""
        from .creation import zeros_like
        lead = self.dim() - n
        gi = zeros_like(self, dtype=grad_output.dtype).flatten(lead)
        return gi.scatter_add(lead, indices.flatten(lead), grad_output.flatten(lead)) \
            .view_as(self)
    return decomp


MAX_POOL2D_BACKWARD = _composite(
    "max_pool2d_with_indices_backward", _max_pool_backward(2),
    "max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, int[2] kernel_size, "
    "int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices) "
    "-> Tensor", meta=_like_self_meta)
MAX_POOL3D_BACKWARD = _composite(
    "max_pool3d_with_indices_backward", _max_pool_backward(3),
    "max_pool3d_with_indices_backward(Tensor grad_output, Tensor self, int[3] kernel_size, "
    "int[3] stride, int[3] padding, int[3] dilation, bool ceil_mode, Tensor indices) "
    "-> Tensor", meta=_like_self_meta)


def _aa_size(input, output_size, scale_factors):
    if output_size is not None:
        return [int(s) for s in output_size], None
    if scale_factors is None:
        raise RuntimeError("Must specify exactly one of output_size and scale_factors")
    return [int(input.shape[2 + k] * scale_factors[k]) for k in range(2)], \
        [float(s) for s in scale_factors]


def _upsample_bilinear2d_aa_vec(input, output_size, align_corners, scale_factors):
    """Antialiased bilinear resize (F.interpolate(mode='bilinear', antialias=True))."""
    size, scales = _aa_size(input, output_size, scale_factors)
    return interpolate_aa(input, size, "bilinear", align_corners, scales)


def _upsample_bilinear2d_aa(input, output_size, align_corners, scales_h=None, scales_w=None):
    scales = None if scales_h is None or scales_w is None else [scales_h, scales_w]
    return interpolate_aa(input, [int(s) for s in output_size], "bilinear", align_corners,
                          scales)


UPSAMPLE_BILINEAR2D_AA = _composite(
    "_upsample_bilinear2d_aa", _upsample_bilinear2d_aa,
    "_upsample_bilinear2d_aa(Tensor self, SymInt[2] output_size, bool align_corners, "
    "float? scales_h=None, float? scales_w=None) -> Tensor")
UPSAMPLE_BILINEAR2D_AA_VEC = _composite(
    "_upsample_bilinear2d_aa_vec", _upsample_bilinear2d_aa_vec,
    "_upsample_bilinear2d_aa.vec(Tensor input, SymInt[]? output_size, bool align_corners, "
    "float[]? scale_factors) -> Tensor")
