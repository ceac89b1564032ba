"""nn.functional helpers that are compositions: softmax/softmin/log_softmax with the
legacy implicit dim, one_hot, normalize, cosine_similarity, pairwise_distance and
gumbel_softmax (PyTorch's formulas, so values and gradients agree)."""
import warnings

from ... import _dtype as D
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...ops.activation import _get_softmax_dim
from ...ops.creation import arange, zeros_like
from ...ops.vector_norm import pairwise_distance  # noqa: F401  (F.pairwise_distance)

__all__ = ["softmax", "softmin", "log_softmax", "one_hot", "normalize", "cosine_similarity",
           "pairwise_distance", "gumbel_softmax", "pdist"]


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    return input.softmax(dim) if dtype is None else input.softmax(dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    x = -input
    return x.softmax(dim) if dtype is None else x.softmax(dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    return input.log_softmax(dim) if dtype is None else input.log_softmax(dim, dtype=dtype)


def one_hot(tensor, num_classes=-1):
    """int64 one-hot encoding along a new last dimension."""
    if not isinstance(tensor, Tensor) or tensor.dtype is not D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max().item()) + 1
    elif num_classes < -1:
        raise RuntimeError("num_classes should be positive")
    if tensor.numel():
        if int(tensor.min().item()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        if int(tensor.max().item()) >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return (tensor.unsqueeze(-1) == arange(num_classes)).long()


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p over dim, eps)."""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    from ...ops.pointwise import div
    return div(input, denom, out=out)


def _clamped(norm, eps):
    """norm.clamp_min_(eps) under no_grad on a clone, as PyTorch does: the values are
    clamped while the gradient flows through as if unclamped."""
    with no_grad():
        delta = norm.clamp_min(eps) - norm
    return norm + delta


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1/||x1|| * x2/||x2||) over dim, with each norm clamped to >= eps."""
    from ...linalg import vector_norm
    common = D.result_dtype((x1, x2))
    if common._kind != 2:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{_scalar_name(common)}")
    x1 = x1.to(common) if x1.dtype is not common else x1
    x2 = x2.to(common) if x2.dtype is not common else x2
    shape = _broadcast(x1, x2)
    x1, x2 = x1.expand(shape), x2.expand(shape)
    n1 = _clamped(vector_norm(x1, 2, dim, True), eps)
    n2 = _clamped(vector_norm(x2, 2, dim, True), eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def _broadcast(a, b):
    from ...ops._elementwise import broadcast_shapes
    return broadcast_shapes(tuple(a.shape), tuple(b.shape))


def _scalar_name(d):
    from ...ops._elementwise import type_name
    return type_name(d)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """Samples from the Gumbel-softmax distribution; `hard` returns one-hot vectors with
    the soft sample's gradient (straight-through)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    with no_grad():
        gumbels = -logits.new_empty(logits.shape).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def pdist(input, p=2):
    """Distances between all pairs of rows (the upper triangle of cdist(x, x), row-major)."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    import ember
    n = input.shape[0]
    if n < 2:
        return input.new_zeros(0)
    i, j = ember.triu_indices(n, n, 1)
    diff = input[i] - input[j]
    return ember.linalg.vector_norm(diff, ord=p, dim=1)
