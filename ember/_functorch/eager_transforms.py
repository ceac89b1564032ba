"""grad, grad_and_value, vjp, jacrev, jacfwd, hessian, jvp, linearize on ember's autograd.

Note: reverse-mode transforms record with create_graph=True, so they nest (jacrev(jacrev),
vmap(grad), grad(grad)); an input already tracked by an outer transform is aliased rather
than detached so the outer level still sees it. Results of the outermost transform are
detached, as PyTorch's. Forward-mode transforms use ember.autograd.forward_ad.
"""
import functools
import threading

from .._tensor import Tensor
from .pytree import tree_flatten, tree_unflatten


class _Depth(threading.local):
    n = 0


_DEPTH = _Depth()


def _nums(argnums, nargs, name):
    if isinstance(argnums, int):
        nums = (argnums,)
    elif isinstance(argnums, tuple) and argnums and all(isinstance(a, int) for a in argnums):
        nums = argnums
    else:
        raise RuntimeError(f"{name}: Expected argnums to be int or Tuple[int, ...], got: "
                           f"{type(argnums)}" if not isinstance(argnums, tuple) else
                           f"{name}: argnums must be non-empty")
    out = []
    for a in nums:
        if not -nargs <= a < nargs:
            raise RuntimeError(f"Got argnum={a}, but only {nargs} positional inputs")
        out.append(a % nargs)
    return tuple(out)


def _prep(x):
    if not isinstance(x, Tensor):
        raise RuntimeError(f"Expected input to be a Tensor (or pytree of Tensors), got "
                           f"{type(x).__name__}")
    if x.requires_grad:
        return x.view_as(x)             # tracked by an outer level: keep the connection
    return x.detach().requires_grad_()


def _diff_args(args, nums):
    """args with the argnums pytrees replaced by fresh grad-tracking tensors; the flat list
    of those tensors and, per argnum, its (leaf count, spec)."""
    args = list(args)
    flat, specs = [], []
    for i in nums:
        leaves, spec = tree_flatten(args[i])
        new = [_prep(x) for x in leaves]
        args[i] = tree_unflatten(new, spec)
        flat.extend(new)
        specs.append((len(new), spec))
    return args, flat, specs


def _regroup(vals, specs, single):
    out, k = [], 0
    for n, spec in specs:
        out.append(tree_unflatten(vals[k:k + n], spec))
        k += n
    return out[0] if single else tuple(out)


def _finish(x):
    """Outermost transform: results carry no graph."""
    if _DEPTH.n == 0 and isinstance(x, Tensor):
        return x.detach()
    return x


def _grad(outputs, inputs, grad_outputs):
    from ..autograd import grad as agrad
    from ..ops.creation import zeros_like
    gs = agrad(outputs, inputs, grad_outputs, retain_graph=True, create_graph=True,
               allow_unused=True)
    return [zeros_like(x) if g is None else g for g, x in zip(gs, inputs)]


class _level:
    def __enter__(self):
        from ..autograd.grad_mode import enable_grad
        self.eg = enable_grad()
        self.eg.__enter__()
        _DEPTH.n += 1

    def __exit__(self, *exc):
        _DEPTH.n -= 1
        self.eg.__exit__(*exc)


def _split_aux(out, has_aux, name):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{name}(f, ...)(*args): output of function f should be a tuple: "
                           "(output, aux) if has_aux is True")
    return out


def grad_and_value(func, argnums=0, has_aux=False):
    """(gradient of scalar func w.r.t. args[argnums], value)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _nums(argnums, len(args), "grad_and_value")
        with _level():
            args2, flat, specs = _diff_args(args, nums)
            out, aux = _split_aux(func(*args2, **kwargs), has_aux, "grad_and_value")
            if not isinstance(out, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"Tensor, got {type(out)}")
            if out.dim() != 0:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"scalar Tensor, got tensor with {out.dim()} dims. Maybe "
                                   "you wanted to use the vjp or jacrev APIs instead?")
            gs = _grad([out], flat, None) if out.requires_grad else \
                _grad_none(flat)
        gs = [_finish(g) for g in gs]
        g = _regroup(gs, specs, isinstance(argnums, int))
        val = _finish(out)
        if has_aux:
            return g, (val, _map(_finish, aux))
        return g, val
    return wrapper


def _grad_none(flat):
    from ..ops.creation import zeros_like
    return [zeros_like(x) for x in flat]


def _map(f, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([f(x) for x in leaves], spec)


def grad(func, argnums=0, has_aux=False):
    """Gradient of scalar `func` w.r.t. args[argnums] (torch.func.grad)."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, v = gv(*args, **kwargs)
        return (g, v[1]) if has_aux else g
    return wrapper


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn): vjp_fn(cotangents) gives one gradient per primal."""
    with _level():
        args, flat, specs = _diff_args(primals, tuple(range(len(primals))))
        out, aux = _split_aux(func(*args), has_aux, "vjp")
    oleaves, ospec = tree_flatten(out)
    for o in oleaves:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"vjp(f, *primals): Expected f to be a function that has "
                               f"(potentially nested) Tensor outputs, got {type(o)}")

    def vjp_fn(cotangents):
        cl, cspec = tree_flatten(cotangents)
        if len(cl) != len(oleaves):
            raise RuntimeError("Expected pytree structure of cotangents to be the same as "
                               "pytree structure of outputs to the function")
        for o, c in zip(oleaves, cl):
            if tuple(o.shape) != tuple(c.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of "
                                   f"{tuple(c.shape)} and output[0] has a shape of "
                                   f"{tuple(o.shape)}.")
        with _level():
            pairs = [(o, c) for o, c in zip(oleaves, cl) if o.requires_grad]
            gs = _grad([o for o, _ in pairs], flat, [c for _, c in pairs]) if pairs else \
                _grad_none(flat)
        gs = [_finish(g) for g in gs]
        return tuple(_regroup(gs, specs, False))
    res = _map(_finish, out)
    return (res, vjp_fn, _map(_finish, aux)) if has_aux else (res, vjp_fn)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """Jacobian by reverse mode: one vjp per output element (basis cotangents)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _nums(argnums, len(args), "jacrev")
        with _level():
            args2, flat, specs = _diff_args(args, nums)
            out, aux = _split_aux(func(*args2, **kwargs), has_aux, "jacrev")
            oleaves, ospec = tree_flatten(out)
            per_out = [_jac_rows(o, flat, chunk_size) for o in oleaves]
        per_out = [_regroup([_finish(j) for j in jacs], specs, isinstance(argnums, int))
                   for jacs in per_out]
        res = tree_unflatten(per_out, ospec)
        return (res, _map(_finish, aux)) if has_aux else res
    return wrapper


def _jac_rows(o, flat, chunk_size):
    """d o / d flat[k] for each k: vjps of the basis cotangents, batched by vmap (one
    backward pass over all rows, `chunk_size` rows at a time)."""
    from ..ops.creation import eye, zeros
    from .vmap import vmap
    m = o.numel()
    if m == 0 or not o.requires_grad:
        return [zeros(tuple(o.shape) + tuple(x.shape), dtype=x.dtype) for x in flat]
    basis = eye(m, dtype=o.dtype).reshape((m,) + tuple(o.shape))
    rows = vmap(lambda e: tuple(_grad([o], flat, [e])), chunk_size=chunk_size)(basis)
    return [r.reshape(tuple(o.shape) + tuple(x.shape)) for r, x in zip(rows, flat)]


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), J tangents) by forward-mode AD."""
    from ..autograd import forward_ad as fwAD
    from ..ops.creation import zeros_like
    if not isinstance(primals, (tuple, list)):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. "
                           "it should be valid to call f(*primals).")
    if not isinstance(tangents, (tuple, list)) or len(tangents) != len(primals):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have "
                           "the same python structure. For example, if primals is a tuple of "
                           "3 tensors, tangents also must be. Got primals with structure "
                           f"{len(primals)} and tangents with structure "
                           f"{len(tangents) if isinstance(tangents, (tuple, list)) else 1}")
    pl, pspec = tree_flatten(tuple(primals))
    tl, _ = tree_flatten(tuple(tangents))
    if len(pl) != len(tl):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have "
                           "the same python structure.")
    for p, t in zip(pl, tl):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(f"jvp(f, primals, tangents): Expected primals and tangents to "
                               f"have the same shape. Got {tuple(p.shape)} and "
                               f"{tuple(t.shape)}")
    with fwAD.dual_level():
        duals = [fwAD.make_dual(p, t) for p, t in zip(pl, tl)]
        out, aux = _split_aux(func(*tree_unflatten(duals, pspec)), has_aux, "jvp")
        ol, ospec = tree_flatten(out)
        po, to = [], []
        for o in ol:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"jvp(f, primals, tangents): Expected f(*primals) to return "
                                   f"only tensors, got unsupported type {type(o)}")
            p, t = fwAD.unpack_dual(o)
            po.append(p.detach() if _DEPTH.n == 0 else p)
            to.append(zeros_like(o) if t is None else t)
    res = (tree_unflatten(po, ospec), tree_unflatten(to, ospec))
    return res + (aux,) if has_aux else res


def linearize(func, *primals):
    """(func(*primals), jvp_fn): jvp_fn(*tangents) = J tangents at primals."""
    out = func(*primals)

    def jvp_fn(*tangents):
        return jvp(func, primals, tangents)[1]
    return _map(_finish, out), jvp_fn


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """Jacobian by forward mode: the jvps of all basis tangents in one vmapped pass."""
    @functools.wraps(func)
    def wrapper(*args):
        from ..ops.creation import eye, zeros
        from .vmap import vmap
        nums = _nums(argnums, len(args), "jacfwd")
        leaves_per = [tree_flatten(args[i]) for i in nums]
        flat = [x for lv, _ in leaves_per for x in lv]
        specs = [(len(lv), sp) for lv, sp in leaves_per]
        sizes = [x.numel() for x in flat]
        total = sum(sizes)

        def f_flat(*xs):
            a, k = list(args), 0
            for i, (n, sp) in zip(nums, specs):
                a[i] = tree_unflatten(list(xs[k:k + n]), sp)
                k += n
            return func(*a)
        # basis tangents: row j of the identity, split per input leaf
        dt = flat[0].dtype if flat else None
        basis = eye(total, dtype=dt) if total else zeros((0, 0))
        tans, k = [], 0
        for x, n in zip(flat, sizes):
            tans.append(basis[:, k:k + n].reshape((total,) + tuple(x.shape)).to(x.dtype))
            k += n

        def one(*ts):
            r = jvp(f_flat, tuple(flat), ts, has_aux=has_aux)
            return r[1]
        r0 = jvp(f_flat, tuple(flat), tuple(zeros(tuple(x.shape), dtype=x.dtype)
                                           for x in flat), has_aux=has_aux)
        out, aux = r0[0], (r0[2] if has_aux else None)
        ol, ospec = tree_flatten(out)
        if total:
            cols = tree_flatten(vmap(one, randomness=randomness)(*tans))[0]
        per_out = []
        for oi, o in enumerate(ol):
            jacs, k = [], 0
            for x, n in zip(flat, sizes):
                if n == 0:
                    jacs.append(zeros(tuple(o.shape) + tuple(x.shape), dtype=o.dtype))
                    continue
                col = cols[oi][k:k + n].movedim(0, -1)        # (*out, n)
                jacs.append(_finish(col.reshape(tuple(o.shape) + tuple(x.shape))))
                k += n
            per_out.append(_regroup(jacs, specs, isinstance(argnums, int)))
        res = tree_unflatten(per_out, ospec)
        return (res, aux) if has_aux else res
    return wrapper


def hessian(func, argnums=0):
    """Second derivatives: jacfwd(jacrev(func)), as PyTorch computes it."""
    return jacfwd(jacrev(func, argnums), argnums)
