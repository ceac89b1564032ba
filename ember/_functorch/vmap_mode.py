"""The vmap dispatch mode: routes every op that touches a BatchedTensor of its level to the
op's batching rule (from the registry entry, or derived from its tags), else to a loop over
the batch that warns which op lacks a rule.

Note: rules compute on physical tensors with grad mode as it is, so an outer grad transform
records on the physical values; when a logical (batched) input requires grad (a grad
transform inside vmap), the op is also recorded on the BatchedTensors with its registry
vjp, whose backward ops then batch through this mode too.
"""
import warnings

from .. import _dispatch
from .._dispatch import STATE
from .._tensor import Tensor
from . import batch_rules
from .batched import BatchedTensor, make_batched

_RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either "
                 "use the 'same' or 'different' randomness flags on vmap or perform the "
                 "randomness operation out of vmap")


class VmapMode:
    _mode_rank = _dispatch.RANK_USER

    def __init__(self, level, batch_size, randomness):
        self.level = level
        self.batch_size = batch_size
        self.randomness = randomness

    def __enter__(self):
        _dispatch.push_mode(self)
        return self

    def __exit__(self, *exc):
        _dispatch.pop_mode(self)

    def __torch_dispatch__(self, func, types, args, kwargs=None):
        if kwargs:
            args = func._bind(args, kwargs)
        lvl = self.level
        batched = any(isinstance(a, BatchedTensor) and a._bt_level == lvl
                      for a in _dispatch._flat(args))
        if "random" in func.tags:
            return self._random(func, args, batched)
        if not batched:
            return func(*args)
        return self.apply(func, args)

    def apply(self, func, args):
        rule = getattr(func, "batch_rule", None)
        if rule is None:
            rule = batch_rules.rule_for(func)
        if rule is batch_rules.decomposition:
            with self:                       # the decomposition's ops batch through us
                return func.decomp(*args)
        if rule is None:
            warnings.warn(f"There is a performance drop because we have not yet implemented "
                          f"the batching rule for {_opname(func)}. Please file us an issue on "
                          "GitHub so that we can prioritize its implementation.",
                          UserWarning, stacklevel=4)
            rule = batch_rules.loop
        phys = rule(func, args, self)
        out = _wrap_out(phys, self.level)
        if STATE.grad_enabled and func.vjp is not None and _needs_grad(args):
            from ..autograd.graph import record
            record(func, args, out)
            if func.save_out:
                o = out[0] if isinstance(out, tuple) else out
                if o._grad_fn is not None:
                    o._grad_fn._bt_keep = out    # saved outputs unpack through the wrappers
        return out

    def _random(self, func, args, batched):
        if self.randomness == "error":
            raise RuntimeError(_RANDOM_ERROR)
        if self.randomness == "same":
            if not batched:
                return func(*args)
            # the same random bits for every sample: replay the generator per sample
            from ..random import get_rng_state, set_rng_state
            state = get_rng_state()

            def restore(i):
                set_rng_state(state)
            phys = batch_rules.loop(func, args, self, before=restore)
            return _wrap_out(phys, self.level)
        phys = batch_rules.loop(func, args, self)     # 'different': one draw per sample
        return _wrap_out(phys, self.level)


def _opname(func):
    try:
        return func.name()
    except Exception:
        return str(func.name)


def _wrap_out(phys, level):
    if isinstance(phys, (tuple, list)):
        return type(phys)(make_batched(p, level) if isinstance(p, Tensor) else p for p in phys)
    return make_batched(phys, level)


def _needs_grad(args):
    for a in _dispatch._flat(args):
        if isinstance(a, Tensor) and a._rg:
            return True
    return False
