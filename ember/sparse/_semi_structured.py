"""2:4 semi-structured sparse matrices (torch.sparse.SparseSemiStructuredTensor) on CPU.

Note: PyTorch has this layout only on CUDA (CUTLASS or cuSPARSELt kernels); ember keeps its
Python surface — the two classes, `_FORCE_CUTLASS`, per-dtype minimum shapes and error texts,
`values()`/`indices()`, `t()`, `to_dense()` — and runs the products on its own CPU kernels
(`_semi_structured_kernels.py`), which load and multiply only the kept values.

A SparseSemiStructuredTensor is an ember.Tensor subclass with backend 'semi_structured':
`OpDef.run_kernel` sends linear/mm/matmul/addmm calls that have one in any position to
the kernels `install()` registers here, and every other op to PyTorch's "only supports a
specific set of operations" NotImplementedError. Storage: `_vals` (m, k/2) kept values of
the (m, k) matrix W and `_meta` (m, k/4) uint8, the positions of the two kept values in
each group of four (bits 0-1, 2-3); `t()` only flips `_transposed` (the logical matrix is
then W^T), since the kernels serve both x @ W^T and x @ W.

Differences from PyTorch, on purpose: a dense matrix with more than two nonzeros in a
group of four raises (CUTLASS's conversion silently drops the extra values); float32 is
2:4 like the other dtypes (CUTLASS's TF32 path is 1:2, so a [0, 0, 1, 1] row would lose
values there); the dense operand of matmul may have batch dims on the left (the linear
backward passes them); gradients flow to the dense operand, never to the sparse one.
"""
import warnings
from collections import namedtuple

import numpy as np

from .. import _dtype as D
from .._dispatch import _disabled_torch_function_impl
from .._memory import _Storage
from .._tensor import Tensor, wrap
from ..ops._registry import ANY_POSITION, BACKENDS, REGISTRY
from . import _semi_structured_kernels as K
from ._coo import _SparseData

__all__ = ["SparseSemiStructuredTensor", "SparseSemiStructuredTensorCUTLASS",
           "SparseSemiStructuredTensorCUSPARSELT", "to_sparse_semi_structured"]

BACKEND = "semi_structured"

_SEMI_STRUCTURED_SPARSE_CONFIG = namedtuple(
    "_SEMI_STRUCTURED_SPARSE_CONFIG",
    "sparse_min_rows sparse_min_cols dense_min_rows dense_min_cols")


class SparseSemiStructuredTensor(Tensor):
    """A 2-d matrix with at most two nonzeros in each group of four along its rows,
    stored compressed: kept values (m, k/2) + 4 bits of positions per group."""
    _backend = BACKEND
    __torch_function__ = _disabled_torch_function_impl   # keep dense dispatch fast
    _DEFAULT_ALG_ID = 0
    _FORCE_CUTLASS = False
    _FUSE_TRANSPOSE = False
    _PROTOTYPE_WARNING_SHOWN = False
    _DTYPE_SHAPE_CONSTRAINTS = {}
    BACKEND = "cpu"
    layout = "torch.strided"
    is_sparse = False
    is_sparse_csr = False

    @classmethod
    def _validate_device_dim_dtype_shape(cls, original_tensor):
        """PyTorch's checks and texts (the device check asks for CPU here)."""
        t = original_tensor
        if t._backend != "cpu":
            raise RuntimeError(f"Error original_tensor.device= {t.device} is not supported! "
                               "Only CPU tensors are currently supported.")
        if t.dim() != 2:
            raise RuntimeError(f"Error original_tensor.dim = {t.dim()} is not supported! "
                               "Only 2d tensors are currently supported.")
        if not t.is_contiguous():
            raise RuntimeError("Error original_tensor is not contiguous!"
                               "Only contiguous tensors are currently supported.")
        if t.dtype not in cls._DTYPE_SHAPE_CONSTRAINTS:
            raise RuntimeError(f"Error original_tensor.dtype {t.dtype} is not a supported "
                               f"dtype for {cls}!")
        m, n = t.shape
        c = cls._DTYPE_SHAPE_CONSTRAINTS[t.dtype]
        rows, cols = c.sparse_min_rows, c.sparse_min_cols
        if m < rows or m % rows or n < cols or n % cols:
            raise RuntimeError(f"Error original_tensor.shape {t.shape} is not supported! Both "
                               f"dimensions must be larger or equal than and a multiple of "
                               f"({rows}, {cols})")

    @classmethod
    def from_dense(cls, original_tensor, alg_id=0):
        """Compress a 2:4 sparse dense matrix (see `compress` for the layout)."""
        if cls is SparseSemiStructuredTensor:
            raise NotImplementedError("SparseSemiStructuredTensor is abstract: use "
                                      "to_sparse_semi_structured or a backend subclass")
        cls._warn_prototype()
        cls._validate_device_dim_dtype_shape(original_tensor)
        vals, meta = compress(original_tensor._data)
        return _make(cls, vals, meta, False, original_tensor.requires_grad, alg_id)

    @classmethod
    def prune_dense_static_sort(cls, original_tensor, algorithm=""):
        """Magnitude-prune each 4x4 tile to 2:4 along both rows and columns (largest
        |value| first, greedily, as PyTorch's tile pruner), then compress."""
        cls._validate_device_dim_dtype_shape(original_tensor)
        arr = original_tensor._data
        pruned = arr * prune_mask_2_4_tile(arr)
        vals, meta = compress(pruned)
        return _make(cls, vals, meta, False, False, 0)

    @classmethod
    def _warn_prototype(cls):
        if not SparseSemiStructuredTensor._PROTOTYPE_WARNING_SHOWN:
            warnings.warn("The PyTorch API of SparseSemiStructuredTensor is in prototype stage "
                          "and will change in the near future. Please open a Github issue for "
                          "features requests and see our documentation on the torch.sparse "
                          "module for further information about the project.", UserWarning,
                          stacklevel=4)
            SparseSemiStructuredTensor._PROTOTYPE_WARNING_SHOWN = True

    # ------------------------------------------------------------------ surface
    def __repr__(self):
        return f"{type(self).__name__}(shape={self.shape})"

    __str__ = __repr__

    def numpy(self, *a, **k):
        raise RuntimeError(f"Can't call numpy() on a {type(self).__name__}: call "
                           ".to_dense() first")

    def is_contiguous(self, memory_format=None):
        return True

    def to_dense(self):
        """The dense (m, k) matrix (a new tensor; no gradient flows through it)."""
        return wrap(np.ascontiguousarray(self._dense_array()))

    def _dense_array(self):
        dense = decompress(self._vals, self._meta)
        return dense.T if self._transposed else dense

    def values(self):
        """The kept values, (m, k/2) of the untransposed matrix (PyTorch's `packed`)."""
        return wrap(self._vals)

    def t(self):
        return _make(type(self), self._vals, self._meta, not self._transposed, False,
                     self.alg_id_cusparselt, self._layout)

    T = property(t)
    mT = property(t)

    def transpose(self, dim0, dim1):
        if {dim0 % 2, dim1 % 2} == {0, 1}:
            return self.t()
        return self

    def conj(self):
        return self          # real dtypes only

    resolve_conj = conj

    def detach(self):
        return _make(type(self), self._vals, self._meta, self._transposed, False,
                     self.alg_id_cusparselt, self._layout)

    def clone(self, *, memory_format=None):
        return _make(type(self), self._vals.copy(), self._meta.copy(), self._transposed,
                     self.requires_grad, self.alg_id_cusparselt)

    def view(self, *shape):
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) \
            else shape
        if tuple(shape) != tuple(self.shape):
            raise NotImplementedError("`view` is not implemented for "
                                      "SparseSemiStructuredTensor, except for the dummy case "
                                      f"(shape={list(shape)})")
        return self

    def to(self, *args, **kwargs):
        """Only the move to CPU, which, as PyTorch's, gives the dense tensor."""
        device = kwargs.get("device", args[0] if len(args) == 1 else None)
        if len(args) + len(kwargs) == 1 and isinstance(device, (str, type(self.device))) \
                and str(device).split(":")[0] == "cpu":
            return self.to_dense()
        raise NotImplementedError(f"`to()` with args={args}, kwargs={kwargs} is not implemented "
                                  "for SparseSemiStructuredTensor. Only `to('cpu')` is "
                                  "supported currently.")

    def cpu(self, memory_format=None):
        return self.to_dense()

    def requires_grad_(self, requires_grad=True):
        """Allowed (nn.Parameter sets it), but a gradient reaching the sparse matrix raises:
        only the dense operand of a product gets one."""
        super().requires_grad_(requires_grad)
        if requires_grad and not self._hooks:
            self.register_hook(_no_sparse_grad)
        return self

    @classmethod
    def _as_parameter(cls, data, requires_grad):
        """nn.Parameter(sparse): the same sparse matrix, registered as a parameter (as
        PyTorch's Parameter keeps a tensor subclass's type)."""
        cls = _parameter_class(getattr(type(data), "_plain", type(data)))
        p = _make(cls, data._vals, data._meta, data._transposed, False, data.alg_id_cusparselt,
                  data._layout)
        p.requires_grad_(requires_grad)
        return p


class SparseSemiStructuredTensorCUTLASS(SparseSemiStructuredTensor):
    """CUTLASS's layout rules: kept values and metadata stored apart."""
    BACKEND = "cutlass"
    _DTYPE_SHAPE_CONSTRAINTS = {
        D.int8: _SEMI_STRUCTURED_SPARSE_CONFIG(16, 128, 16, 16),
        D.float16: _SEMI_STRUCTURED_SPARSE_CONFIG(32, 64, 8, 8),
        D.bfloat16: _SEMI_STRUCTURED_SPARSE_CONFIG(32, 64, 8, 8),
        D.float32: _SEMI_STRUCTURED_SPARSE_CONFIG(32, 32, 4, 4),
    }

    def indices(self):
        """CUTLASS's metadata: 4-bit codes, 4 per int16 (8 per int32 for int8),
        interleaved as its sparse GEMM reads them."""
        return wrap(cutlass_meta(self._meta, self._vals.dtype == np.int8))

    packed = property(lambda self: self.values())
    meta = property(lambda self: self.indices())
    packed_t = meta_t = compressed_swizzled_bitmask = None


class SparseSemiStructuredTensorCUSPARSELT(SparseSemiStructuredTensor):
    """cuSPARSELt's layout rules: one `packed` tensor, kept values then metadata."""
    BACKEND = "cusparselt"
    _DTYPE_SHAPE_CONSTRAINTS = {
        D.int8: _SEMI_STRUCTURED_SPARSE_CONFIG(32, 32, 16, 16),
        D.float16: _SEMI_STRUCTURED_SPARSE_CONFIG(16, 16, 8, 8),
        D.bfloat16: _SEMI_STRUCTURED_SPARSE_CONFIG(16, 16, 8, 8),
    }

    @property
    def packed(self):
        """Values, then the row-major int16 codes (4 per int16), in one 1-d tensor."""
        codes = _pack_codes(self._meta, np.int16)
        raw = np.concatenate([self._vals.reshape(-1).view(np.uint8),
                              codes.reshape(-1).view(np.uint8)])
        return wrap(raw.view(self._vals.dtype))

    def indices(self):
        m = self._vals.shape[0]
        return wrap(_pack_codes(self._meta, np.int16).reshape(m, -1))

    meta = packed_t = meta_t = compressed_swizzled_bitmask = None


class _SemiData(_SparseData):
    """`_data` of a semi-structured tensor: shape/dtype for Tensor's metadata methods; a
    consumer that wants the dense array (NumPy, ember.compile's C backend) gets a clear
    NotImplementedError instead of an AttributeError deep inside it."""
    __slots__ = ()

    @property
    def flags(self):
        raise NotImplementedError(
            f"{self.backend}: this consumer needs the dense array (e.g. ember.compile's "
            "inductor backend, which has no 2:4 kernel); run the module eagerly, with "
            "ember.compile(backend='eager'), or use .to_dense()")


_PARAMETER_CLASSES = {}


def _parameter_class(cls):
    """`cls` and nn.Parameter in one class, so isinstance(p, Parameter) holds."""
    if cls not in _PARAMETER_CLASSES:
        from ..nn.parameter import Parameter
        _PARAMETER_CLASSES[cls] = type(cls.__name__, (cls, Parameter),
                                       {"__repr__": cls.__repr__, "_plain": cls,
                                        "__module__": cls.__module__})
    return _PARAMETER_CLASSES[cls]


def _no_sparse_grad(grad):
    raise NotImplementedError(
        "SparseSemiStructuredTensor: the gradient w.r.t. the 2:4 sparse matrix is not "
        "supported in ember (gradients reach the dense operand only); freeze it with "
        "requires_grad_(False) or build it from a tensor that does not require grad")


def _make(cls, vals, meta, transposed, requires_grad, alg_id, layout=None):
    """`layout`: a dict shared by the tensors over the same storage (t(), detach()) that
    caches the kernels' reordered copies of it (gather: True, scatter: False)."""
    t = object.__new__(cls)
    t._vals, t._meta, t._transposed = vals, meta, bool(transposed)
    t._layout = {} if layout is None else layout
    m, k = vals.shape[0], vals.shape[1] * 2
    t._data = _SemiData((k, m) if transposed else (m, k), vals.dtype, _name(cls))
    t._dtype, t._storage = D.from_numpy_dtype(vals.dtype), _Storage(0)
    t.alg_id_cusparselt = alg_id
    t.fuse_transpose_cusparselt = SparseSemiStructuredTensor._FUSE_TRANSPOSE
    if requires_grad:
        t.requires_grad_(True)
    return t


def to_sparse_semi_structured(original_tensor, transposed=False, alg_id=0):
    """torch.sparse.to_sparse_semi_structured: the cuSPARSELt layout, or CUTLASS's when
    `SparseSemiStructuredTensor._FORCE_CUTLASS` is set (float32 needs it, as in PyTorch)."""
    if transposed:
        warnings.warn("Setting transpose from `to_sparse_semi_structured` is deprecated and "
                      "will be removed in a future release. `SparseSemiStructuredTensor` only "
                      "support contiguous input tensors.", FutureWarning, stacklevel=2)
    cls = SparseSemiStructuredTensorCUTLASS if SparseSemiStructuredTensor._FORCE_CUTLASS \
        else SparseSemiStructuredTensorCUSPARSELT
    return cls.from_dense(original_tensor, alg_id=alg_id)


# --------------------------------------------------------------------- the layout
def _first_two(nz):
    """Positions (idx0, idx1) of the kept values of each group of four from its nonzero
    flags; with fewer than two nonzeros, PyTorch's CUTLASS choice of zero positions."""
    m0, m1, m3 = nz[..., 0], nz[..., 1], nz[..., 3]
    expr0, expr1, expr2 = m0 & m1, ~m0 & m1, ~m0 & ~m1
    idx0 = expr1.astype(np.uint8) | (expr2.astype(np.uint8) << 1)
    idx1 = (expr0 | expr2 | m3).astype(np.uint8) | ((expr1 | ~m1).astype(np.uint8) << 1)
    return idx0, idx1


def compress(arr):
    """(values (m, k/2), codes (m, k/4) uint8) of a 2:4 sparse (m, k) array."""
    m, k = arr.shape
    groups = arr.reshape(m, k // 4, 4)
    nz = groups != 0
    count = nz.sum(-1)
    if count.size and count.max() > 2:
        r, g = np.argwhere(count > 2)[0]
        raise RuntimeError(f"to_sparse_semi_structured: the dense matrix is not 2:4 sparse: "
                           f"row {r}, columns {4 * g}..{4 * g + 3} hold {count[r, g]} nonzeros "
                           "(at most 2 in each group of 4 along a row); prune it first, e.g. "
                           "with ember.sparse.semi_structured.prune_mask_2_4")
    idx0, idx1 = _first_two(nz)
    vals = np.stack([np.take_along_axis(groups, idx0[..., None], -1)[..., 0],
                     np.take_along_axis(groups, idx1[..., None], -1)[..., 0]], -1)
    return np.ascontiguousarray(vals.reshape(m, k // 2)), (idx0 | (idx1 << 2))


def decompress(vals, meta):
    m, h = vals.shape
    dense = np.zeros((m, 2 * h), vals.dtype)
    np.put_along_axis(dense, K.columns(meta), vals, axis=1)
    return dense


def _pack_codes(meta, dtype):
    """Codes packed little-end first, 4 per int16 or 8 per int32 (row-major)."""
    per = np.dtype(dtype).itemsize * 2
    m, g = meta.shape
    q = meta.reshape(m, g // per, per).astype(np.uint64)
    word = (q << (4 * np.arange(per, dtype=np.uint64))).sum(-1, dtype=np.uint64)
    return word.astype(np.uint32 if per == 8 else np.uint16).view(dtype)


def cutlass_meta(meta, is_int8):
    """CUTLASS's reordered metadata (ColumnMajorInterleaved<2> with 2x2 swizzles), as
    PyTorch's sparse_semi_structured_from_dense_cutlass lays it out."""
    dtype = np.int32 if is_int8 else np.int16
    packed = _pack_codes(meta, dtype)
    m, ncols = packed.shape
    rows = np.repeat(np.arange(m)[:, None], ncols, 1)
    cols = np.repeat(np.arange(ncols)[None, :], m, 0)
    group, inter = (16, 2) if is_int8 else (32, 4)
    rows = rows // group * group + (rows % 8) * inter + (rows % group) // 8
    topright = ((rows % 2 == 0) & (cols % 2 == 1)).astype(np.int64)
    bottomleft = ((rows % 2 == 1) & (cols % 2 == 0)).astype(np.int64)
    rows = rows + topright - bottomleft
    cols = cols - (topright - bottomleft)
    offsets = (cols // 2) * m * 2 + rows * 2 + cols % 2
    out = np.empty(m * ncols, dtype)
    out[offsets.reshape(-1)] = packed.reshape(-1)
    return out.reshape(m, ncols)


def prune_mask_2_4(arr):
    """Keep the two largest |values| of each group of four along the rows (ties: the
    first); a bool mask of `arr`'s shape (last dim a multiple of 4)."""
    a = np.abs(np.asarray(arr, np.float32))
    g = a.reshape(-1, 4)
    order = np.argsort(-g, axis=-1, kind="stable")[:, :2]
    mask = np.zeros(g.shape, bool)
    np.put_along_axis(mask, order, True, axis=-1)
    return mask.reshape(a.shape)


def prune_mask_2_4_tile(arr):
    """2:4 along rows and columns of each 4x4 tile: the largest |values| first, each
    taken while its row and column keep fewer than two."""
    a = np.abs(np.asarray(arr, np.float32))
    m, k = a.shape
    tiles = a.reshape(m // 4, 4, k // 4, 4).transpose(0, 2, 1, 3).reshape(-1, 16)
    order = np.argsort(-tiles, axis=-1, kind="stable")
    keep = np.zeros(tiles.shape, bool)
    rows = np.zeros((tiles.shape[0], 4), np.int8)
    cols = np.zeros((tiles.shape[0], 4), np.int8)
    ix = np.arange(tiles.shape[0])
    for step in range(16):
        p = order[:, step]
        r, c = p // 4, p % 4
        ok = (rows[ix, r] < 2) & (cols[ix, c] < 2)
        keep[ix, p] |= ok
        rows[ix, r] += ok
        cols[ix, c] += ok
    return keep.reshape(m // 4, k // 4, 4, 4).transpose(0, 2, 1, 3).reshape(m, k)


# --------------------------------------------------------------------- products
def _name(s):
    return (s if isinstance(s, type) else type(s)).__name__


def _check_dtypes(s, b, bias=None):
    if b.dtype != s.dtype:
        raise NotImplementedError(
            f"`{_name(s)}` matmul: trying to do `A={tuple(s.shape)} @ B={tuple(b.shape)}`, "
            f"with A.dtype={s.dtype} and B.dtype={b.dtype}. This operation is only "
            "supported when A and B have the same data type.")
    if bias is not None and bias.dtype != s.dtype:
        raise NotImplementedError(
            f"`{_name(s)}` matmul: trying to do `A={tuple(s.shape)} @ B={tuple(b.shape)} + "
            f"C`, with A.dtype=B.dtype={s.dtype} and C.dtype={bias.dtype}. This operation "
            "is only supported when A, B and C have the same data type.")


def _shapes(a, b):
    def s(t):
        return "x".join(str(n) for n in t.shape) if t.ndim == 2 else \
            f"{int(np.prod(t.shape[:-1]))}x{t.shape[-1]}"
    raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({s(a)} and {s(b)})")


def _times(x2, s, transpose, bias=None):
    """x2 (N, p) @ M for M = s's logical matrix (transposed if `transpose`): the gather
    kernel when M is W^T, the scatter kernel when M is W."""
    gather = s._transposed != transpose
    layout = s._layout.get(gather)
    if layout is None:
        layout = s._layout[gather] = K.blocked(s._vals, s._meta, gather)
    if gather:
        b = None if bias is None else np.asarray(bias, np.int32 if s._vals.dtype == np.int8
                                                 else np.float32)
        return K.gather(s._vals, s._meta, x2, b, layout)
    y = K.scatter(s._vals, s._meta, x2, layout)
    return y if bias is None else (y + bias).astype(y.dtype)


def _unsupported(what):
    return NotImplementedError(f"`SparseSemiStructuredTensor` matmul: {what}")


def _is_semi(t):
    return isinstance(t, SparseSemiStructuredTensor)


def mm(a, b):
    """semi @ dense or dense @ semi (2-d), as PyTorch's semi_sparse_mm."""
    if _is_semi(a) and _is_semi(b):
        raise ValueError("`SparseSemiStructuredTensor @ SparseSemiStructuredTensor` is not "
                         "supported by the hardware")
    if a.ndim != 2 or b.ndim != 2:
        raise _unsupported("Broadcasting is not implemented")
    return matmul(a, b)


def matmul(a, b):
    """mm, and dense (..., p) @ semi (p, q) with batch dims on the dense side."""
    if _is_semi(a) and _is_semi(b):
        return mm(a, b)
    if _is_semi(a):
        if b.ndim != 2:
            raise _unsupported("Broadcasting is not implemented")
        _check_dtypes(a, b)
        if a.shape[1] != b.shape[0]:
            _shapes(a, b)
        return wrap(np.ascontiguousarray(_times(b._data.T, a, True).T))
    if a.ndim < 1 or b.ndim != 2:
        raise _unsupported("Broadcasting is not implemented")
    _check_dtypes(b, a)
    if a.shape[-1] != b.shape[0]:
        _shapes(a, b)
    x = a._data
    y = _times(x.reshape(-1, x.shape[-1]), b, False)
    return wrap(y.reshape(x.shape[:-1] + (b.shape[1],)))


def addmm(bias, a, b, beta=1, alpha=1):
    """bias + a @ b with b semi-structured and a 1-d bias (PyTorch's semi_sparse_addmm)."""
    if a.ndim != 2 or b.ndim != 2:
        raise _unsupported("Broadcasting is not implemented")
    if bias.ndim != 1:
        raise _unsupported(f"only bias dim=1 supported. Shape={tuple(bias.shape)}")
    if _is_semi(a):
        raise _unsupported("only operand B of `addmm` can be sparse")
    _check_dtypes(b, a, bias)
    if a.shape[1] != b.shape[0]:
        _shapes(a, b)
    if bias.shape[0] != b.shape[1]:
        raise RuntimeError(f"The expanded size of the tensor ({b.shape[1]}) must match the "
                           f"existing size ({bias.shape[0]}) at non-singleton dimension 1.  "
                           f"Target sizes: [{a.shape[0]}, {b.shape[1]}].  Tensor sizes: "
                           f"[{bias.shape[0]}]")
    if beta == 1 and alpha == 1:
        return wrap(_times(a._data, b, False, bias._data))
    y = wrap(_times(a._data, b, False))
    return bias * beta + y * alpha


def linear(x, w, bias=None):
    """x @ w^T (+ bias) with w semi-structured: one pass over the kept values."""
    if _is_semi(x):
        raise _unsupported("only operand B of `addmm` can be sparse")
    _check_dtypes(w, x, bias)
    if x.ndim == 0:
        raise RuntimeError("both arguments to linear need to be at least 1D, but they are 0D "
                           "and 2D")
    if x.shape[-1] != w.shape[1]:
        _shapes(x, w.t())
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != w.shape[0]):
        raise _unsupported(f"only bias dim=1 supported. Shape={tuple(bias.shape)}")
    arr = x._data
    y = _times(arr.reshape(-1, arr.shape[-1]), w, True, None if bias is None else bias._data)
    return wrap(y.reshape(arr.shape[:-1] + (w.shape[0],)))


def _refuse(op, args):
    s = next(a for a in args if isinstance(a, Tensor) and a._backend == BACKEND)
    raise NotImplementedError(f"{_name(s)} only supports a specific set of operations, "
                              f"can't perform requested op ({op.__name__})")


def install():
    """Register the kernels on the registry's 'semi_structured' backend."""
    from ..nn.functional._linear import LINEAR
    BACKENDS[BACKEND] = _refuse
    ANY_POSITION.add(BACKEND)
    LINEAR.kernels[BACKEND] = linear
    for name, fn in (("mm", mm), ("matmul", matmul), ("addmm", addmm)):
        REGISTRY[name].kernels[BACKEND] = fn
