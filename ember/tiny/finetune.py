"""Fine-tuning with a compiled training program: the on-device loop, run on the host.

The pretrained model gets a fresh classifier for the transfer task; the program is compiled
once for (batch, image size) and then stepped over the data; accuracy is measured on the
BN-folded model carrying the program's updated parameters.
"""
from .. import manual_seed, nn
from .fold import fold_bn
from .pretrain import accuracy
from .program import compile_training
from .scheme import UpdateScheme

__all__ = ["with_new_head", "with_head", "finetune"]


def with_new_head(model, num_classes, seed=0):
    """`model` (not copied) with its final Linear replaced by a fresh one for `num_classes`."""
    manual_seed(seed)
    name, layer = [(n, m) for n, m in model.named_modules() if isinstance(m, nn.Linear)][-1]
    parent, _, attr = name.rpartition(".")
    owner = model.get_submodule(parent) if parent else model
    head = nn.Linear(layer.in_features, num_classes)
    with_zero = head.weight.detach()
    with_zero.zero_()  # a zero head starts every scheme from the same uniform prediction
    setattr(owner, attr, head)
    return model.eval()


def with_head(model, scheme):
    """A copy of `scheme` that also updates the final Linear's weights and bias."""
    head = [n for n, m in model.named_modules() if isinstance(m, nn.Linear)][-1]
    return UpdateScheme({**scheme.layers, head: 1.0})


def finetune(model, scheme, train_data, test_data, epochs=2, batch=32, lr=0.05):
    """SGD with `scheme` through compile_training; returns (test accuracy, losses, program).
    The new classifier is always trained in full (it starts from zero); the last partial
    batch is dropped (the program is compiled for one batch size)."""
    scheme = with_head(model, scheme)
    images, labels = train_data
    n = len(labels) // batch * batch
    prog = compile_training(model, (images[:batch], labels[:batch]),
                            nn.functional.cross_entropy, lr=lr, scheme=scheme)
    losses = []
    for _ in range(epochs):
        for i in range(0, n, batch):
            losses.append(prog.step(images[i:i + batch], labels[i:i + batch]))
    trained = fold_bn(model)
    trained.load_state_dict(prog.state_dict())
    return accuracy(trained, *test_data), losses, prog
