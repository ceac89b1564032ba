"""functional_call (torch.nn.utils.stateless / torch.func): call a module with some of
its parameters and buffers replaced by the given tensors, then put the originals back."""
import contextlib

from ..._tensor import Tensor

__all__ = ["functional_call"]


def _split(name):
    prefix, _, attr = name.rpartition(".")
    return prefix, attr


def _tied_names(module, given):
    """name -> the names sharing its tensor (tie_weights): an un-given tie follows."""
    by_id = {}
    for n, t in list(module.named_parameters(remove_duplicate=False)) + \
            list(module.named_buffers(remove_duplicate=False)):
        by_id.setdefault(id(t), []).append(n)
    extra = {}
    for names in by_id.values():
        hit = [n for n in names if n in given]
        if len(hit) > 1 and any(given[h] is not given[hit[0]] for h in hit[1:]):
            raise ValueError(f"functional_call got multiple values for keys {hit}, which are "
                             "tied. Consider using tie_weights=False")
        if hit:
            for n in names:
                if n not in given:
                    extra[n] = given[hit[0]]
    return extra


@contextlib.contextmanager
def _reparametrize(module, tensors):
    saved = []
    try:
        for name, t in tensors.items():
            prefix, attr = _split(name)
            mod = module.get_submodule(prefix) if prefix else module
            for reg in (mod._parameters, mod._buffers):
                if attr in reg:
                    saved.append((reg, attr, reg[attr]))
                    reg[attr] = t
                    break
            else:
                saved.append((mod.__dict__, attr, mod.__dict__.get(attr, _MISSING)))
                mod.__dict__[attr] = t
        yield
    finally:
        for reg, attr, old in reversed(saved):
            if old is _MISSING:
                reg.pop(attr, None)
            else:
                reg[attr] = old


_MISSING = object()


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """module(*args, **kwargs) with its parameters/buffers taken from the given dict(s)."""
    if isinstance(parameter_and_buffer_dicts, dict):
        tensors = dict(parameter_and_buffer_dicts)
    elif isinstance(parameter_and_buffer_dicts, (list, tuple)):
        tensors = {}
        keys = [k for d in parameter_and_buffer_dicts for k in d]
        dup = sorted({k for k in keys if keys.count(k) > 1})
        if dup:
            raise ValueError(f"{dup} appeared in multiple dictionaries; behavior of "
                             "functional call is ambiguous")
        for d in parameter_and_buffer_dicts:
            tensors.update(d)
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple "
                         f"of dicts, but got {type(parameter_and_buffer_dicts)}")
    if strict:
        known = {n for n, _ in module.named_parameters(remove_duplicate=False)} | \
            {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing = sorted(known - set(tensors))
        unexpected = sorted(set(tensors) - known)
        if missing or unexpected:
            msgs = []
            if unexpected:
                msgs.append("Unexpected key(s): " + ", ".join(map(repr, unexpected)) + ".")
            if missing:
                msgs.append("Missing key(s): " + ", ".join(map(repr, missing)) + ".")
            raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n\t" +
                               "\n\t".join(msgs))
    if tie_weights:
        tensors.update(_tied_names(module, tensors))
    for k, v in tensors.items():
        if not isinstance(v, Tensor) and v is not None:
            raise TypeError(f"functional_call: value for '{k}' must be a Tensor, got "
                            f"{type(v).__name__}")
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize(module, tensors):
        return module(*args, **(kwargs or {}))
