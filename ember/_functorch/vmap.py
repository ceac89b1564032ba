"""vmap: map a function over a batch dim of its inputs (torch.func.vmap)."""
import functools

from .._tensor import Tensor
from .batched import add_batch_dim, remove_batch_dim
from .pytree import broadcast_prefix, spec_str, tree_flatten, tree_unflatten
from .vmap_mode import VmapMode

_LEVEL = [0]


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Vectorize `func` over dim `in_dims` of its inputs; outputs get the batch at
    `out_dims`. `chunk_size` maps that many samples at a time (None: all at once)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return _vmap_call(func, in_dims, out_dims, randomness, chunk_size, args, kwargs)
    return wrapped


def _fname(func):
    return getattr(func, "__name__", repr(func))


def _flat_in(func, in_dims, args):
    where = f"vmap({_fname(func)}, in_dims={in_dims}, ...)(<inputs>)"
    if not isinstance(in_dims, (int, tuple)) and in_dims is not None:
        raise ValueError(f"vmap({_fname(func)}, in_dims={in_dims}, ...): expected `in_dims` to "
                         "be int or a (potentially nested) tuple matching the structure of "
                         f"inputs, got: {type(in_dims)}.")
    if len(args) == 0:
        raise ValueError(f"vmap({_fname(func)})(<inputs>): got no inputs. Maybe you forgot to "
                         "add inputs, or you are trying to vmap over a function with no "
                         "inputs. The latter is unsupported.")
    leaves, spec = tree_flatten(args)
    if isinstance(in_dims, tuple) and len(in_dims) != len(args):
        raise ValueError(f"{where}: in_dims is not compatible with the structure of `inputs`. "
                         f"in_dims has structure {spec_str(tree_flatten(in_dims)[1])} but "
                         f"inputs has structure {spec_str(spec)}.")
    try:
        dims = broadcast_prefix(in_dims, args, "")
    except ValueError:
        raise ValueError(f"{where}: in_dims is not compatible with the structure of `inputs`. "
                         f"in_dims has structure {spec_str(tree_flatten(in_dims)[1])} but "
                         f"inputs has structure {spec_str(spec)}.") from None
    sizes = []
    for x, d in zip(leaves, dims):
        if d is None:
            continue
        if not isinstance(d, int):
            raise ValueError(f"{where}: in_dims must be int or None for each input, got "
                             f"{d!r}.")
        if not isinstance(x, Tensor):
            raise ValueError(f"{where}: Got in_dim={d} for an input but the input is of type "
                             f"{type(x)}. We cannot vmap over non-Tensor arguments, please use "
                             "None as the respective in_dim")
        n = x.dim()
        if d < -n or d >= n:
            raise ValueError(f"{where}: Got in_dim={d} for some input, but that input is a "
                             f"Tensor of dimensionality {n} so expected in_dim to satisfy "
                             f"-{n} <= in_dim < {n}.")
        sizes.append(x.shape[d % n])
    if not sizes:
        raise ValueError(f"{where}: at least one input must be a Tensor mapped over a dim; "
                         "got in_dims=None for every Tensor input")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"{where}: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return leaves, spec, [None if d is None else d % leaves[i].dim()
                          for i, d in enumerate(dims)], sizes[0]


def _vmap_call(func, in_dims, out_dims, randomness, chunk_size, args, kwargs):
    leaves, spec, dims, n = _flat_in(func, in_dims, args)
    if chunk_size is None or chunk_size >= n:
        return _run(func, leaves, spec, dims, n, out_dims, randomness, kwargs)
    parts = []
    for s in range(0, n, chunk_size):
        m = min(chunk_size, n - s)
        sub = [x if d is None else x.narrow(d, s, m) for x, d in zip(leaves, dims)]
        parts.append(_run(func, sub, spec, dims, m, out_dims, randomness, kwargs))
    flat0, ospec = tree_flatten(parts[0])
    flats = [tree_flatten(p)[0] for p in parts]
    odims = broadcast_prefix(out_dims, parts[0], "out_dims")
    from .. import cat
    res = [f if od is None else cat([fl[i] for fl in flats], od)
           for i, (f, od) in enumerate(zip(flat0, odims))]
    return tree_unflatten(res, ospec)


def _run(func, leaves, spec, dims, n, out_dims, randomness, kwargs):
    _LEVEL[0] += 1
    level = _LEVEL[0]
    try:
        batched = [x if d is None else add_batch_dim(x, d, level) for x, d in zip(leaves, dims)]
        with VmapMode(level, n, randomness):
            out = func(*tree_unflatten(batched, spec), **kwargs)
        return _unwrap_out(func, out, level, n, out_dims)
    finally:
        _LEVEL[0] -= 1


def _unwrap_out(func, out, level, n, out_dims):
    leaves, spec = tree_flatten(out)
    try:
        odims = broadcast_prefix(out_dims, out, "")
    except ValueError:
        raise ValueError(f"vmap({_fname(func)}, ..., out_dims={out_dims})(<inputs>): out_dims "
                         "is not compatible with the structure of `outputs`. out_dims has "
                         f"structure {spec_str(tree_flatten(out_dims)[1])} but outputs has "
                         f"structure {spec_str(spec)}.") from None
    res = []
    for x, od in zip(leaves, odims):
        if not isinstance(x, Tensor):
            if od is None:
                res.append(x)
                continue
            raise ValueError(f"vmap({_fname(func)}, ...): `{_fname(func)}` must only return "
                             f"Tensors, got type {type(x)}. Did you mean to set out_dims= to "
                             "None for output?")
        if od is None:
            from .batched import is_batched
            if is_batched(x, level):
                raise ValueError(f"vmap({_fname(func)}, ..., out_dims={out_dims}): Can not set "
                                 "out_dims=None for an output that is batched")
            res.append(x)
            continue
        if not isinstance(od, int):
            raise ValueError(f"vmap({_fname(func)}, ..., out_dims={out_dims}): out_dims must be "
                             f"int or None for each output, got {od!r}")
        nd = x.dim() + 1
        if od < -nd or od >= nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, "
                             f"{nd - 1}], but got {od})")
        res.append(remove_batch_dim(x, level, n, od % nd))
    return tree_unflatten(res, spec)
