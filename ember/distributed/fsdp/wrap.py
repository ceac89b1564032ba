"""Auto-wrap policies (torch.distributed.fsdp.wrap): which submodules become FSDP units."""
__all__ = ["ModuleWrapPolicy", "size_based_auto_wrap_policy", "lambda_auto_wrap_policy",
           "transformer_auto_wrap_policy"]


class ModuleWrapPolicy:
    """Wrap every submodule whose class is in `module_classes`."""

    def __init__(self, module_classes):
        self._classes = tuple(module_classes)

    def __call__(self, module, recurse, nonwrapped_numel):
        return recurse or isinstance(module, self._classes)


def size_based_auto_wrap_policy(module, recurse, nonwrapped_numel, min_num_params=int(1e8),
                                force_leaf_modules=None, exclude_wrap_modules=None):
    """Wrap a submodule once it holds at least `min_num_params` not-yet-wrapped parameters."""
    if recurse:
        return True
    return nonwrapped_numel >= min_num_params


def lambda_auto_wrap_policy(module, recurse, nonwrapped_numel, lambda_fn):
    return True if recurse else bool(lambda_fn(module))


def transformer_auto_wrap_policy(module, recurse, nonwrapped_numel, transformer_layer_cls):
    return True if recurse else isinstance(module, tuple(transformer_layer_cls))
