"""GradScaler: dynamic loss scaling (PyTorch's algorithm, step for step).

Note: the scale and growth tracker are float32 / int32 tensors, updated exactly as
torch._amp_update_scale_ does: an inf/nan in any unscaled gradient multiplies the
scale by backoff_factor and resets the tracker; `growth_interval` clean steps in a
row multiply it by growth_factor. The optimizer is duck-typed (param_groups, step).
"""
import enum

from .. import _dtype as D
from .._dispatch import STATE
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..ops.creation import full
from ..ops.effects import AMP_UNSCALE_, AMP_UPDATE_SCALE_

__all__ = ["GradScaler", "OptState"]


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _new_state():
    return {"stage": OptState.READY, "found_inf": None}


def _maybe_opt_step(optimizer, found_inf, args, kwargs):
    """optimizer.step() unless found_inf. Eager (no mode, real tensors) reads the flag, as
    PyTorch does; under a mode the step always runs and every parameter and state tensor
    it touched is put back where found_inf (torch.where), so no host read is needed."""
    if not STATE.modes and not found_inf._fake:
        return None if found_inf.item() else optimizer.step(*args, **kwargs)  # eager only
    from ..ops.indexing import where
    tensors = []
    for group in optimizer.param_groups:
        for p in group["params"]:
            if p.grad is None:
                continue
            tensors.append(p)
            tensors.extend(v for v in optimizer.state.get(p, {}).values()
                           if isinstance(v, Tensor))
    with no_grad():
        saved = [t.clone() for t in tensors]
        retval = optimizer.step(*args, **kwargs)
        skip = found_inf != 0
        for t, old in zip(tensors, saved):
            t.copy_(where(skip, old, t))
    return retval


class GradScaler:
    def __init__(self, device="cpu", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale = init_scale
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._init_growth_tracker = 0
        self._scale = None
        self._growth_tracker = None
        self._per_optimizer_states = {}

    # -- scale ----------------------------------------------------------------
    def _lazy_init(self):
        self._scale = full((), self._init_scale, dtype=D.float32)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=D.int32)

    def _check(self, funcname):
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  This may indicate "
                                 "your script did not use scaler.scale(loss or outputs) earlier "
                                 "in the iteration.")

    def scale(self, outputs):
        """outputs * scale (tensors, or any nesting of lists/tuples of them)."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._lazy_init()
        if isinstance(outputs, Tensor):
            return outputs * self._scale.to(outputs.dtype)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        if isinstance(outputs, dict):
            return {k: self.scale(v) for k, v in outputs.items()}
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    # -- unscale / step ----------------------------------------------------------
    def unscale_(self, optimizer):
        if not self._enabled:
            return
        self._check("unscale_")
        state = self._per_optimizer_states.setdefault(id(optimizer), _new_state())
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # PyTorch's order: reciprocal in double, rounded to float32; one registry op
        # checks every gradient for inf/nan and unscales it (no host read)
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = full((), 0.0, dtype=D.float32)
        with no_grad():
            grads = []
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if g.dtype is D.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    grads.append(g)
            if grads:
                AMP_UNSCALE_(grads, found_inf, inv_scale)
        state["found_inf"] = found_inf
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """optimizer.step() unless an unscaled gradient is inf/nan (then the step is skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check("step")
        state = self._per_optimizer_states.setdefault(id(optimizer), _new_state())
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if state["found_inf"] is None:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = _maybe_opt_step(optimizer, state["found_inf"], args, kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    # -- update ---------------------------------------------------------------------
    def update(self, new_scale=None):
        if not self._enabled:
            return
        self._check("update")
        if new_scale is not None:
            # in place, as PyTorch: the scale tensor a recording saw stays the scale
            if isinstance(new_scale, float):
                self._scale.fill_(new_scale)
            elif isinstance(new_scale, Tensor) and new_scale.numel() == 1 and \
                    not new_scale.requires_grad and new_scale.dtype is D.float32:
                self._scale.copy_(new_scale.reshape(()))
            else:
                raise AssertionError("new_scale should be a float or a 1-element "
                                     "torch.cuda.FloatTensor or torch.FloatTensor with "
                                     "requires_grad=False.")
        else:
            found = [s["found_inf"] for s in self._per_optimizer_states.values()
                     if s["found_inf"] is not None]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            found_inf_combined = found[0]
            for f in found[1:]:
                found_inf_combined = found_inf_combined + f
            AMP_UPDATE_SCALE_(self._scale, self._growth_tracker, found_inf_combined,
                              self._growth_factor, self._backoff_factor,
                              self._growth_interval)
        self._per_optimizer_states = {}

    # -- accessors --------------------------------------------------------------------
    def get_scale(self):
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale.item()

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else \
            int(self._growth_tracker.item())

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale = full((), float(state_dict["scale"]), dtype=D.float32)
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker = full((), int(state_dict["_growth_tracker"]), dtype=D.int32)
