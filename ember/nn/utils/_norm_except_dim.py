"""norm_except_dim and _weight_norm (PyTorch's weight-norm helpers), in ember ops."""


def norm_except_dim(v, pow=2, dim=0):
    """The p-norm over every dimension except `dim`, kept as size-1 dims (dim=-1: all)."""
    if dim == -1:
        return v.norm(pow)
    if dim == 0:
        shape = (v.shape[0],) + (1,) * (v.dim() - 1)
        return v.contiguous().view(v.shape[0], -1).norm(pow, 1).view(shape)
    if dim == v.dim() - 1:
        shape = (1,) * (v.dim() - 1) + (v.shape[-1],)
        return v.contiguous().view(-1, v.shape[-1]).norm(pow, 0).view(shape)
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _weight_norm(v, g, dim=0):
    """w = g * v / ||v|| (norm over every dim except `dim`)."""
    return v * (g / norm_except_dim(v, 2, dim))
