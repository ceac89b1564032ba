"""Train/eval switching for captured graphs.

Why: a captured GraphModule has no submodules whose `.training` flag changes what
runs; the mode is baked into the ops. BatchNorm is the op that differs, so switching
rewrites its `training` argument in place (PyTorch rewrites the same patterns), and
`model.train()` / `model.eval()` on a prepared or converted model raise, as PyTorch's
do, unless allow_exported_model_train_eval() routes them here.
"""
from .utils import is_op

__all__ = ["move_exported_model_to_eval", "move_exported_model_to_train",
           "allow_exported_model_train_eval"]

_TRAIN_EVAL_ERROR = (
    "Calling train() or eval() is not supported for exported models. Please call "
    "`torch.ao.quantization.move_exported_model_to_train(model)` (or "
    "move_exported_model_to_eval) instead. If the calls to model.train()/model.eval() "
    "cannot be replaced, `torch.ao.quantization.allow_exported_model_train_eval(model)` "
    "makes them do that; it only switches ops that differ between modes (batch norm).")


def _set_batch_norm_training(model, train):
    """Training mode calls ember.batch_norm, which also updates the running statistics
    in place (the registry op alone computes the normalization only)."""
    import ember
    changed = False
    for node in model.graph.nodes:
        if is_op(node, "batch_norm") and bool(node.args[5]) != train:
            args = list(node.args)
            args[5] = train
            node.args = tuple(args)
            node.target = ember.batch_norm if train else ember.ops.aten.batch_norm.default
            changed = True
    if changed:
        model.recompile()


def move_exported_model_to_eval(model):
    """BatchNorm in the graph uses its running statistics from now on."""
    _set_batch_norm_training(model, False)
    return model


def move_exported_model_to_train(model):
    """BatchNorm in the graph uses batch statistics (and updates the running ones)."""
    _set_batch_norm_training(model, True)
    return model


def _with_train_eval(model, train, eval_):
    """Give `model` its own class whose train/eval are these (a class, not bound methods
    in the instance dict, so copy.deepcopy of the model stays finite)."""
    base = type(model)
    while getattr(base, "_pt2e_train_eval", False):
        base = base.__bases__[0]
    model.__class__ = type(base.__name__, (base,), {"train": train, "eval": eval_,
                                                    "_pt2e_train_eval": True})
    return model


def allow_exported_model_train_eval(model):
    """Make `model.train()` / `model.eval()` call move_exported_model_to_train/eval."""
    def train(self, mode=True):
        return move_exported_model_to_train(self) if mode else \
            move_exported_model_to_eval(self)

    def eval_(self):
        return move_exported_model_to_eval(self)

    return _with_train_eval(model, train, eval_)


def _disallow_eval_train(model):
    def _raise(self, mode=True):
        raise NotImplementedError(_TRAIN_EVAL_ERROR)

    return _with_train_eval(model, _raise, _raise)
