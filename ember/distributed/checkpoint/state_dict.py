"""get/set model and optimizer state_dicts for DCP (torch.distributed.checkpoint.state_dict).

Note: keys are parameter FQNs with wrapper prefixes ("module.", "_fsdp_wrapped_module.")
removed, so a checkpoint written from a DDP or FSDP model loads into a plain one and back.
FSDP-sharded parameters (and the optimizer state that has their shape) become DTensors
with Shard(0) — or full tensors with `StateDictOptions(full_state_dict=True)`. Optimizer
state is keyed by parameter FQN, param_groups list FQNs, as PyTorch does.
"""
from dataclasses import dataclass

__all__ = ["StateDictOptions", "get_model_state_dict", "get_optimizer_state_dict",
           "get_state_dict", "set_model_state_dict", "set_optimizer_state_dict",
           "set_state_dict"]

_WRAPPERS = ("module.", "_fsdp_wrapped_module.", "_checkpoint_wrapped_module.",
             "_orig_mod.")


@dataclass
class StateDictOptions:
    full_state_dict: bool = False
    cpu_offload: bool = False
    ignore_frozen_params: bool = False
    keep_submodule_prefixes: bool = True
    strict: bool = True
    broadcast_from_rank0: bool = False
    flatten_optimizer_state_dict: bool = False
    dsd_fqn_modifiers: str = "_fqn_modifiers"


def _clean(name):
    parts = [p for p in name.split(".") if p + "." not in _WRAPPERS]
    return ".".join(parts)


def _fqns(model):
    """{clean fqn: parameter} in named_parameters order."""
    return {_clean(n): p for n, p in model.named_parameters()}


def _spec(t):
    return getattr(t, "_fsdp_spec", None)


def _to_dtensor(local, spec, full):
    from ..tensor import DTensor, Shard
    mesh, shape = spec
    d = DTensor.from_local(local.detach(), mesh, [Shard(0)], shape=shape)
    return d.full_tensor() if full else d


def _to_local(value, param):
    """A checkpoint value (DTensor, full tensor) as this rank's piece for `param`."""
    from ..tensor import DTensor
    from ..tensor.placement_types import chunk_bounds
    if isinstance(value, DTensor):
        return value.to_local()
    spec = _spec(param)
    if spec is not None and tuple(value.shape) == tuple(spec[1]):
        mesh = spec[0]
        start, n = chunk_bounds(value.shape[0], mesh.size(), mesh.get_local_rank())
        return value.narrow(0, start, n)
    return value


def _check_opts(options):
    options = options or StateDictOptions()
    if options.broadcast_from_rank0:
        raise NotImplementedError("StateDictOptions(broadcast_from_rank0=True) is not "
                                  "implemented in ember")
    return options


def _raw_state_dict(model):
    """{name: parameter or persistent buffer} walking modules directly, so wrapper
    state_dict overrides (FSDP's) are not involved."""
    out = {}
    for mname, mod in model.named_modules():
        skip = getattr(mod, "_non_persistent_buffers_set", ())
        for name, t in list(mod._parameters.items()) + list(mod._buffers.items()):
            if t is not None and name not in skip:
                out.setdefault((mname + "." if mname else "") + name, t)
    return out


def get_model_state_dict(model, *, submodules=None, options=None):
    options = _check_opts(options)
    if submodules is not None:
        raise NotImplementedError("get_model_state_dict: submodules= is not implemented")
    out = {}
    for name, t in _raw_state_dict(model).items():
        if options.ignore_frozen_params and not t.requires_grad and \
                getattr(t, "_is_param", isinstance(t, _param_type())):
            continue
        spec = _spec(t)
        out[_clean(name)] = (_to_dtensor(t, spec, options.full_state_dict) if spec is not None
                             else t.detach())
    return out


def _param_type():
    from ...nn.parameter import Parameter
    return Parameter


def _optim_list(optimizers):
    return list(optimizers) if isinstance(optimizers, (list, tuple)) else [optimizers]


def _init_optim_state(opt):
    """Give a fresh optimizer its state (a step with zero grads and lr 0), as PyTorch does,
    so a checkpoint can be loaded into it in place."""
    import ember
    if opt.state:
        return
    lrs = [g.get("lr") for g in opt.param_groups]
    for g in opt.param_groups:
        if "lr" in g:
            g["lr"] = 0.0
        for p in g["params"]:
            if p.requires_grad and p.grad is None:
                p.grad = ember.zeros_like(p)
    opt.step()
    for g, lr in zip(opt.param_groups, lrs):
        if lr is not None:
            g["lr"] = lr
    opt.zero_grad(set_to_none=True)


def get_optimizer_state_dict(model, optimizers, *, submodules=None, options=None):
    options = _check_opts(options)
    names = {id(p): n for n, p in _fqns(model).items()}
    state, groups = {}, []
    for opt in _optim_list(optimizers):
        _init_optim_state(opt)
        sd = opt.state_dict()
        order = [p for g in opt.param_groups for p in g["params"]]
        fqn_of = {i: names[id(p)] for i, p in enumerate(order)}
        for idx, st in sd["state"].items():
            p = order[idx]
            spec = _spec(p)
            state[fqn_of[idx]] = {
                k: (_to_dtensor(v, spec, options.full_state_dict)
                    if spec is not None and hasattr(v, "shape") and tuple(v.shape) ==
                    tuple(p.shape) and v.dim() > 0 else v)
                for k, v in st.items()}
        for g in sd["param_groups"]:
            g = dict(g)
            g["params"] = [fqn_of[i] for i in g["params"]]
            groups.append(g)
    return {"state": state, "param_groups": groups}


def get_state_dict(model, optimizers, *, submodules=None, options=None):
    return (get_model_state_dict(model, submodules=submodules, options=options),
            get_optimizer_state_dict(model, optimizers, submodules=submodules,
                                     options=options))


def set_model_state_dict(model, model_state_dict, *, options=None):
    """Load FQN-keyed values (DTensors or full tensors) into the model's (sharded) params;
    returns (missing_keys, unexpected_keys) as load_state_dict does."""
    import ember
    options = _check_opts(options)
    own = {_clean(k): v for k, v in _raw_state_dict(model).items()}
    missing = [k for k in own if k not in model_state_dict]
    unexpected = [k for k in model_state_dict if k not in own]
    if options.strict and (missing or unexpected):
        raise RuntimeError(f"Error(s) in loading state_dict for {type(model).__name__}: "
                           f"missing keys {missing}, unexpected keys {unexpected}")
    with ember.no_grad():
        for k, v in model_state_dict.items():
            if k in own:
                target = own[k]
                value = _to_local(v, target)
                if tuple(value.shape) != tuple(target.shape):
                    raise RuntimeError(f"size mismatch for {k}: copying a param with shape "
                                       f"{tuple(value.shape)}, the shape in current model is "
                                       f"{tuple(target.shape)}.")
                target.copy_(value)
    return missing, unexpected


def _optim_sd_to_load(model, opt, optim_state_dict):
    """An FQN-keyed optimizer state_dict as `opt.load_state_dict` takes it (index keys,
    this rank's shard of each sharded state tensor)."""
    params = _fqns(model)
    order = [p for g in opt.param_groups for p in g["params"]]
    index = {id(p): i for i, p in enumerate(order)}
    mine = {n for n, p in params.items() if id(p) in index}
    state = {}
    for fqn, st in optim_state_dict["state"].items():
        if fqn in mine:
            p = params[fqn]
            state[index[id(p)]] = {k: _to_local(v, p) if hasattr(v, "shape") else v
                                   for k, v in st.items()}
    groups = []
    for g in optim_state_dict["param_groups"]:
        if not set(g["params"]) & mine:
            continue
        g = dict(g)
        g["params"] = [index[id(params[f])] for f in g["params"]]
        groups.append(g)
    return {"state": state, "param_groups": groups}


def set_optimizer_state_dict(model, optimizers, optim_state_dict, *, options=None):
    _check_opts(options)
    for opt in _optim_list(optimizers):
        opt.load_state_dict(_optim_sd_to_load(model, opt, optim_state_dict))


def set_state_dict(model, optimizers, *, model_state_dict, optim_state_dict, options=None):
    result = set_model_state_dict(model, model_state_dict, options=options)
    set_optimizer_state_dict(model, optimizers, optim_state_dict, options=options)
    return result
