"""Batching rules, read from the op registry.

Note: an op's rule is `op.batch_rule` (set here for the view/shape and matmul families),
else derived from its tags: pointwise ops broadcast with the batch dim in front, reductions
and other single-input ops shift their `dim` arguments (read from the schema), composites
run their decomposition (which batches op by op). Rules get the logical args (BatchedTensors
of the mode's level and plain values) and return physical results with the batch at dim 0;
they are written in ember ops, so nested transforms compose.
"""
from .. import _dispatch
from .._tensor import Tensor
from ..ops._registry import REGISTRY
from .batched import BatchedTensor

_DIM_ARGS = ("dim", "dims", "dim0", "dim1", "dim2", "dimension", "source", "destination",
             "start_dim", "end_dim")


def decomposition(func, args, mode):
    """Marker: run the op's decomposition under the vmap mode."""
    raise AssertionError("handled by the mode")


def _val(a, lvl):
    return a._bt_value if isinstance(a, BatchedTensor) and a._bt_level == lvl else None


def _ndim(a, lvl):
    return a.dim()


def loop(func, args, mode, before=None):
    """The fallback: run the op per batch element and stack (correct for any op).
    `before(i)` runs ahead of each element (randomness='same' replays the generator)."""
    lvl, n = mode.level, mode.batch_size
    results = []
    for i in range(n):
        def pick(a):
            if isinstance(a, BatchedTensor) and a._bt_level == lvl:
                return a._bt_value.select(0, i)
            if isinstance(a, (list, tuple)):
                return type(a)(pick(x) for x in a)
            return a
        if before is not None:
            before(i)
        results.append(func(*[pick(a) for a in args]))
    from .. import stack
    first = results[0]
    if isinstance(first, (tuple, list)):
        return tuple(stack([r[j] for r in results]) for j in range(len(first)))
    if not isinstance(first, Tensor):
        raise RuntimeError(f"vmap: {func.name} returned {type(first).__name__}, not a Tensor; "
                           "it cannot be batched")
    return stack(results)


def pointwise(func, args, mode):
    """Broadcasting ops: pad each batched operand to the widest logical rank after its batch
    dim; unbatched operands broadcast from the right as usual."""
    lvl = mode.level
    rank = max((a.dim() for a in _dispatch._flat(args) if isinstance(a, Tensor)), default=0)
    new = []
    for a in args:
        v = _val(a, lvl)
        if v is not None:
            k = rank - a.dim()
            if k:
                v = v.reshape((v.shape[0],) + (1,) * k + tuple(a.shape))
            new.append(v)
        else:
            new.append(a)
    return func(*new)


def _norm(d, n):
    if d < -n or d >= n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {d})")
    return d % n


def _dim_specs(func):
    """[(position, is_list, is_optional)] of the schema's dim arguments."""
    spec = getattr(func, "_bt_dims", None)
    if spec is None:
        spec = []
        if func._schema_text is not None:
            for i, a in enumerate(func._schema.arguments):
                if a.name in _DIM_ARGS:
                    t = str(a.type)
                    if t.startswith("int"):
                        spec.append((i, "[" in t, t.endswith("?")))
        func._bt_dims = spec
    return spec


def dim_shift(func, args, mode, extra=0):
    """Single-tensor ops with dim arguments (reductions, softmax-like, dim views): the
    batch stays in front, every dim moves up by one. `extra`: how far past the last dim a
    dim may point (1 for unsqueeze)."""
    lvl = mode.level
    x = args[0]
    v = _val(x, lvl)
    if v is None or any(_val(a, lvl) is not None for a in _dispatch._flat(args[1:])):
        return loop(func, args, mode)
    n = x.dim()
    args = list(args)
    args[0] = v
    reshape_after = None
    for i, is_list, opt in _dim_specs(func):
        if i >= len(args):
            continue
        d = args[i]
        if d is None:
            if not opt:
                continue
            if is_list:
                if n == 0:
                    args[0] = v.reshape((v.shape[0], 1))
                    args[i] = (1,)
                else:
                    args[i] = tuple(range(1, n + 1))
            else:       # int? dim=None: the op flattens; do it per sample
                keep = len(args) > i + 1 and args[i + 1] is True
                args[0] = v.reshape((v.shape[0], -1))
                args[i] = 1
                if keep:
                    args[i + 1] = False
                    reshape_after = (1,) * n
            continue
        m = max(n, 1) + extra
        if is_list:
            kind = type(d) if isinstance(d, (list, tuple)) else None
            d = [d] if kind is None else d
            d = [(0 if n == 0 and extra == 0 else _norm(e, m)) + 1 for e in d]
            args[i] = d[0] if kind is None else kind(d)
        else:
            args[i] = (0 if n == 0 and extra == 0 else _norm(d, m)) + 1
    out = func(*args)
    if reshape_after is not None:
        out = out.reshape((out.shape[0],) + reshape_after)
    return out


def _size_rule(func, args, mode):
    """view/_reshape_copy(self, size): the batch dim prepended to the size. The logical
    tensor's strides are not the physical ones, so the physical reshape picks view or copy."""
    v = _val(args[0], mode.level)
    return v.reshape((v.shape[0],) + tuple(args[1]))


def _expand(func, args, mode):
    x, size = args[0], list(args[1])
    v = _val(x, mode.level)
    k = len(size) - x.dim()
    if k > 0:
        v = v.reshape((v.shape[0],) + (1,) * k + tuple(x.shape))
    return func(v, (v.shape[0],) + tuple(size))


def _permute(func, args, mode):
    x = args[0]
    n = x.dim()
    dims = [0] + [_norm(d, max(n, 1)) + 1 for d in args[1]]
    return func(_val(x, mode.level), type(args[1])(dims))


def _unsqueeze(func, args, mode):
    return dim_shift(func, args, mode, extra=1)


def _identity(func, args, mode):
    return func(_val(args[0], mode.level), *args[1:])


def _as_batched(a, lvl, n):
    v = _val(a, lvl)
    if v is not None:
        return v
    return a.unsqueeze(0).expand((n,) + tuple(a.shape))


def _cat_like(extra):
    def rule(func, args, mode):
        ts, dim = args[0], args[1]
        lvl, b = mode.level, mode.batch_size
        n = max(t.dim() for t in ts)
        phys = [_as_batched(t, lvl, b) for t in ts]
        return func(phys, _norm(dim, n + extra) + 1, *args[2:])
    return rule


def _matmul(func, args, mode):
    """matmul batches natively: 1-D operands become a row/column (squeezed after), batched
    operands are padded after their batch dim so that their batch dims line up."""
    lvl = mode.level
    a, b = args[0], args[1]
    va, vb = _val(a, lvl), _val(b, lvl)
    a1, b1 = a.dim() == 1, b.dim() == 1
    pa = (va.unsqueeze(1) if va is not None else a.unsqueeze(0)) if a1 else \
        (va if va is not None else a)
    pb = (vb.unsqueeze(-1) if vb is not None else b.unsqueeze(-1)) if b1 else \
        (vb if vb is not None else b)
    na, nb = max(a.dim(), 2), max(b.dim(), 2)
    rank = max(na, nb)
    if va is not None and rank > na:
        pa = pa.reshape((pa.shape[0],) + (1,) * (rank - na) + tuple(pa.shape[1:]))
    if vb is not None and rank > nb:
        pb = pb.reshape((pb.shape[0],) + (1,) * (rank - nb) + tuple(pb.shape[1:]))
    out = func(pa, pb)
    if b1:
        out = out.squeeze(-1)
    if a1:
        out = out.squeeze(-1 if b1 else -2)
    return out


def _convolution(func, args, mode):
    """Batched input, plain weight/bias: fold the vmap batch into conv's N."""
    lvl = mode.level
    x, w = args[0], args[1]
    if _val(w, lvl) is not None or (isinstance(args[2], Tensor) and
                                    _val(args[2], lvl) is not None):
        return loop(func, args, mode)
    v = _val(x, lvl)
    if x.dim() == w.dim() - 1:          # unbatched conv input: the vmap batch is N
        return func(v, *args[1:])
    b, nn = v.shape[0], v.shape[1]
    out = func(v.reshape((b * nn,) + tuple(v.shape[2:])), *args[1:])
    return out.reshape((b, nn) + tuple(out.shape[1:]))


def _sum_to_size(func, args, mode):
    """sum_to_size(self, size): the size padded with ones to the logical rank, so the
    leading logical dims are summed and never the batch dim."""
    x, size = args[0], tuple(args[1])
    v = _val(x, mode.level)
    full = (1,) * (x.dim() - len(size)) + size
    return func(v, (v.shape[0],) + full).reshape((v.shape[0],) + size)


def _fold_batch(rank):
    """Ops over (N, C, *spatial) that also take an unbatched (C, *spatial) input (pools):
    the vmap batch folds into N."""
    def rule(func, args, mode):
        x = args[0]
        v = _val(x, mode.level)
        if any(_val(a, mode.level) is not None for a in _dispatch._flat(args[1:])):
            return loop(func, args, mode)
        if x.dim() == rank - 1:
            return func(v, *args[1:])
        b, n = v.shape[0], v.shape[1]
        out = func(v.reshape((b * n,) + tuple(v.shape[2:])), *args[1:])
        if isinstance(out, tuple):
            return tuple(o.reshape((b, n) + tuple(o.shape[1:])) for o in out)
        return out.reshape((b, n) + tuple(out.shape[1:]))
    return rule


def _aligned_dim(func, args, mode):
    """gather/scatter family: every tensor argument gets the batch in front (unbatched ones
    expanded), dims shift by one (normalized by the first tensor's logical rank)."""
    lvl, b = mode.level, mode.batch_size
    n = max(args[0].dim(), 1)
    new = [_as_batched(a, lvl, b) if isinstance(a, Tensor) else a for a in args]
    for i, is_list, _ in _dim_specs(func):
        if i < len(new) and isinstance(new[i], int):
            new[i] = _norm(new[i], n) + 1
    return func(*new)


def _embedding(func, args, mode):
    """embedding(weight, indices): batched indices index the shared table natively."""
    if _val(args[0], mode.level) is not None:
        return loop(func, args, mode)
    return func(args[0], _val(args[1], mode.level), *args[2:])


def _repeat(func, args, mode):
    """repeat(self, repeats): leading new dims go after the batch dim, which repeats once."""
    x, reps = args[0], tuple(args[1])
    v = _val(x, mode.level)
    k = len(reps) - x.dim()
    if k > 0:
        v = v.reshape((v.shape[0],) + (1,) * k + tuple(x.shape))
    return func(v, (1,) + reps)


def _copy_(func, args, mode):
    lvl = mode.level
    s, src = args[0], args[1]
    vs = _val(s, lvl)
    if vs is None:
        raise RuntimeError("vmap: copy_(self, src): self is not batched but src is; in-place "
                           "into an unbatched tensor would write every batch element into "
                           "one place")
    vsrc = _val(src, lvl)
    if vsrc is not None and src.dim() < s.dim():
        vsrc = vsrc.reshape((vsrc.shape[0],) + (1,) * (s.dim() - src.dim()) + tuple(src.shape))
    func(vs, src if vsrc is None else vsrc, *args[2:])
    return vs


_SPECIFIC = {
    "view": _size_rule, "_reshape_copy": _size_rule, "expand": _expand,
    "permute": _permute, "unsqueeze": _unsqueeze, "detach": _identity, "alias": _identity,
    "squeeze": dim_shift, "select": dim_shift, "slice": dim_shift, "flip": dim_shift,
    "diagonal": dim_shift, "unbind": dim_shift, "split_with_sizes": dim_shift,
    "cat": _cat_like(0), "stack": _cat_like(1), "matmul": _matmul,
    "convolution": _convolution, "sum_to_size": _sum_to_size,
    "gather": _aligned_dim, "scatter": _aligned_dim, "scatter_add": _aligned_dim,
    "scatter_reduce": _aligned_dim, "slice_scatter": _aligned_dim,
    "select_scatter": _aligned_dim, "diagonal_scatter": _aligned_dim,
    "index_select": dim_shift, "embedding": _embedding, "sort": dim_shift,
    "contiguous": _identity, "constant_pad_nd": _identity, "repeat": _repeat,
    "max_pool2d_with_indices": _fold_batch(4), "avg_pool2d": _fold_batch(4),
    "_adaptive_avg_pool2d": _fold_batch(4), "adaptive_max_pool2d": _fold_batch(4),
    "max_pool3d_with_indices": _fold_batch(5), "max_pool3d": _fold_batch(5),
    "avg_pool3d": _fold_batch(5), "_adaptive_avg_pool3d": _fold_batch(5),
    "adaptive_max_pool3d": _fold_batch(5), "copy_": _copy_, "tril": _identity, "triu": _identity,
}


def _attach():
    """Set `batch_rule` on the registry entries this module has specific rules for."""
    for name, rule in _SPECIFIC.items():
        op = REGISTRY.get(name)
        if op is not None and getattr(op, "batch_rule", None) is None:
            op.batch_rule = rule


def rule_for(func):
    """The tag-derived rule (None: the fallback loop)."""
    tags = func.tags
    if "pointwise" in tags and "inplace" not in tags:
        return pointwise
    if func.decomp is not None:
        return decomposition
    if "reduction" in tags and _dim_specs(func):
        return dim_shift
    return None


_attach()
