"""stack_module_state: stack the parameters/buffers of same-shaped modules for vmap
(model ensembling)."""


def stack_module_state(models):
    """(params, buffers): dicts name -> tensor stacked over `models` along a new dim 0.
    The stacked parameters are new leaves that require grad as the originals did."""
    from .. import stack
    models = list(models)
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/"
                           "eval mode.")
    t0 = type(models[0])
    if not all(type(m) is t0 for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def gather(named):
        names = [n for n, _ in named(models[0])]
        out = {}
        for n in names:
            vals = [dict(named(m))[n] for m in models]
            out[n] = stack([v.detach() for v in vals]).requires_grad_(vals[0].requires_grad) \
                if vals[0].is_floating_point() else stack([v.detach() for v in vals])
        return out
    params = gather(lambda m: m.named_parameters())
    buffers = gather(lambda m: m.named_buffers())
    return params, buffers
