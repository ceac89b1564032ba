"""Pretraining on the shapes task, cached: the starting point every fine-tuning run shares.

Weights are cached under ember's hub directory (`<hub>/tiny/<model>-<size>.pt`) keyed by
model name, input size and the recipe below, so the minutes of pretraining are paid once.
"""
import os

from .. import load, manual_seed, nn, no_grad, optim, save
from ..hub import get_dir
from ..models.tiny_nets import TINY_MODELS
from .data import SHAPES, shapes_dataset

__all__ = ["pretrained", "train", "accuracy"]

RECIPE = dict(samples=8192, epochs=3, batch=64, lr=3e-3)


def accuracy(model, images, labels, batch=256):
    """Top-1 accuracy of `model` (eval mode) on (images, labels)."""
    model.eval()
    correct = 0
    with no_grad():
        for i in range(0, len(labels), batch):
            correct += int((model(images[i:i + batch]).argmax(1) == labels[i:i + batch]).sum())
    return correct / len(labels)


def train(model, images, labels, epochs, batch, lr, seed=0):
    """Adam on cross entropy (BN in train mode); returns the last epoch's mean loss."""
    manual_seed(seed)
    opt = optim.Adam(model.parameters(), lr=lr)
    sched = optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
    model.train()
    for _ in range(epochs):
        total = 0.0
        for i in range(0, len(labels), batch):
            loss = nn.functional.cross_entropy(model(images[i:i + batch]), labels[i:i + batch])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
        sched.step()
    return total / ((len(labels) + batch - 1) // batch)


def pretrained(name, size=32, verbose=False):
    """`name` from ember.models.TINY_MODELS pretrained on the shapes task at `size`."""
    tag = "-".join(f"{k}{v}" for k, v in RECIPE.items())
    path = os.path.join(get_dir(), "tiny", f"{name}-{size}-{tag}.pt")
    manual_seed(0)
    model = TINY_MODELS[name](len(SHAPES))
    if os.path.exists(path):
        model.load_state_dict(load(path))
        return model.eval()
    images, labels = shapes_dataset(RECIPE["samples"], size, seed=0)
    loss = train(model, images, labels, RECIPE["epochs"], RECIPE["batch"], RECIPE["lr"])
    if verbose:
        test = shapes_dataset(1024, size, seed=1)
        print(f"pretrained {name}: loss {loss:.3f}, shapes accuracy {accuracy(model, *test):.3f}")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    save(model.state_dict(), path)
    return model.eval()
