"""Forward-mode AD (torch.autograd.forward_ad): dual tensors carry a tangent per level.

Note: inside `dual_level()` a dispatch mode sees every op; when an input carries a tangent it
runs the op and then its jvp rule: the registry entry's `jvp` attribute (`jvp(args,
tangents, out)` in ember ops, `tangents` aligned with `args`), else the transpose of the
op's registry vjp (the vjp is linear in the cotangent, so differentiating
<vjp(u), t> by u gives J t), which every differentiable op has. Ops with float outputs and
neither raise NotImplementedError naming the op. Backward ops run under the mode too, so
forward-over-reverse (hessian = jacfwd(jacrev(f))) works. Levels nest (jacfwd(jacfwd(f))):
each tensor keeps a tangent per level, and a level's rules run with only that level's mode
popped, so outer levels differentiate the inner tangents.
"""
from collections import namedtuple

from .. import _dispatch
from .._tensor import Tensor

__all__ = ["dual_level", "make_dual", "unpack_dual", "enter_dual_level", "exit_dual_level",
           "UnpackedDualTensor"]

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])

_LEVELS = []     # active _ForwardMode objects (at most one)


def _tangent(t, level):
    ft = t.__dict__.get("_fw_tangent")
    return None if ft is None else ft.get(level)


def _set_tangent(t, level, tangent, mode):
    ft = t.__dict__.get("_fw_tangent")
    if ft is None:
        ft = t._fw_tangent = {}
    ft[level] = tangent
    mode.tracked.append(t)


class _ForwardMode:
    _mode_rank = _dispatch.RANK_USER

    def __init__(self, level):
        self.level = level
        self.tracked = []

    def __torch_dispatch__(self, func, types, args, kwargs=None):
        if kwargs:
            args = func._bind(args, kwargs)
        lvl = self.level
        tans = [_arg_tangent(a, lvl) for a in args]
        if all(t is None or (isinstance(t, list) and all(x is None for x in t)) for t in tans):
            return func(*args)
        out = func(*args)
        outs = out if isinstance(out, tuple) else (out,)
        diff = [o for o in outs if isinstance(o, Tensor) and o._dtype._kind >= 2]
        if not diff:
            return out
        rule = getattr(func, "jvp", None)
        if rule is not None:
            res = rule(args, tans, out)
        elif func.vjp is not None:
            res = _transpose_vjp(func, args, tans, out)
        else:
            raise NotImplementedError(
                f"Trying to use forward AD with {_opname(func)} that does not support it "
                "because it has not been implemented yet.")
        res = res if isinstance(res, tuple) else (res,)
        for o, t in zip(outs, res):
            if t is not None and isinstance(o, Tensor) and o._dtype._kind >= 2:
                _set_tangent(o, lvl, t, self)
        return out


def _opname(func):
    try:
        return func.name()
    except Exception:
        return str(func.name)


def _arg_tangent(a, lvl):
    if isinstance(a, Tensor):
        return _tangent(a, lvl)
    if isinstance(a, (list, tuple)) and a and isinstance(a[0], Tensor):
        return [_tangent(x, lvl) for x in a]
    return None


def _transpose_vjp(func, args, tans, out):
    """J t for any op with a vjp: t . d/du vjp(u), since vjp(u) = u^T J is linear in u."""
    from . import grad as agrad
    from .grad_mode import enable_grad
    from ..ops.creation import zeros_like
    xs, ts, new = [], [], []
    # an outer reverse pass (jacrev(jacfwd(f))) needs the tangent as a function of the
    # primals and tangents: keep their graphs then
    keep = _dispatch.STATE.grad_enabled and any(
        isinstance(a, Tensor) and a.requires_grad or isinstance(t, Tensor) and t.requires_grad
        for a, t in zip(args, tans))

    def prep(a, t):
        if t is None or a._dtype._kind < 2:
            return a if keep else a.detach()
        x = a.view_as(a) if keep and a.requires_grad else a.detach().requires_grad_()
        xs.append(x)
        ts.append(t)
        return x
    for a, t in zip(args, tans):
        if isinstance(a, Tensor):
            new.append(prep(a, t))
        elif isinstance(t, list):
            new.append(type(a)(prep(x, tx) for x, tx in zip(a, t)))
        else:
            new.append(a)
    outs = out if isinstance(out, tuple) else (out,)
    with enable_grad():
        o = func(*new)
        os_ = o if isinstance(o, tuple) else (o,)
        pos = [i for i, x in enumerate(os_) if isinstance(x, Tensor) and x.requires_grad]
        if not pos:
            return tuple(None for _ in outs) if isinstance(out, tuple) else None
        us = [zeros_like(os_[i]).requires_grad_() for i in pos]
        gs = agrad([os_[i] for i in pos], xs, us, create_graph=True, allow_unused=True)
        pairs = [(g, t) for g, t in zip(gs, ts) if g is not None and g.requires_grad]
        if pairs:
            jv = agrad([g for g, _ in pairs], us, [t for _, t in pairs], allow_unused=True,
                       create_graph=keep)
        else:
            jv = [None] * len(us)
    res = [None] * len(outs)
    for i, j in zip(pos, jv):
        res[i] = zeros_like(outs[i]) if j is None else j
    return tuple(res) if isinstance(out, tuple) else res[0]


def enter_dual_level():
    """Start a forward AD level (use `dual_level()`); returns its index."""
    from .._functorch import jvp_rules  # noqa: F401  (attaches the registry's jvp rules)
    mode = _ForwardMode(len(_LEVELS))
    _dispatch.push_mode(mode)
    _LEVELS.append(mode)
    return mode.level


def exit_dual_level(*, level=None):
    if not _LEVELS or (level is not None and level != _LEVELS[-1].level):
        raise RuntimeError("Trying to exit a forward AD level that was not the last one "
                           "that was created. This is not supported.")
    mode = _LEVELS.pop()
    _dispatch.pop_mode(mode)
    for t in mode.tracked:           # tangents do not outlive their level
        t.__dict__.get("_fw_tangent", {}).pop(mode.level, None)
    mode.tracked.clear()


class dual_level:
    """Context manager for a forward AD level: duals made inside lose their tangents at
    exit."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()


def _current(level):
    if not _LEVELS:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if level is not None and level != _LEVELS[-1].level:
        raise RuntimeError(f"forward AD level {level} is not the active level")
    return _LEVELS[-1]


def make_dual(tensor, tangent, *, level=None):
    """A view of `tensor` whose tangent (forward gradient) is `tangent`."""
    mode = _current(level)
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError("make_dual(): expected Tensors for tensor and tangent")
    if not tensor.is_floating_point() and not tensor.is_complex():
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if not tangent.is_floating_point() and not tangent.is_complex():
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    if tuple(tensor.shape) != tuple(tangent.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than "
                           "that of the original Tensor, this is not supported. Tensor is of "
                           f"size {list(tensor.shape)} while the given forward gradient is of "
                           f"size {list(tangent.shape)}.")
    from ..overrides import ALIAS
    _dispatch.pop_mode(mode)        # the alias itself carries no tangent of this level
    try:
        out = ALIAS(tensor)
    finally:
        _dispatch.push_mode(mode)
    _set_tangent(out, mode.level, tangent, mode)
    return out


def unpack_dual(tensor, *, level=None):
    """(primal, tangent): the primal as a view without the tangent; tangent None if none."""
    if not _LEVELS or not isinstance(tensor, Tensor):
        return UnpackedDualTensor(tensor, None)
    mode = _LEVELS[-1] if level is None else _current(level)
    t = _tangent(tensor, mode.level)
    if t is None:
        return UnpackedDualTensor(tensor, None)
    from ..overrides import ALIAS
    _dispatch.pop_mode(mode)
    try:
        primal = ALIAS(tensor)
    finally:
        _dispatch.push_mode(mode)
    return UnpackedDualTensor(primal, t)

