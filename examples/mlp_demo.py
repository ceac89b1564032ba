"""Train a small MLP on three interleaved spirals with ember, written as PyTorch code.

Everything past the data generation is what a PyTorch user would write with
`import torch`: tensors, `@`, relu, log_softmax, `.backward()`, and SGD with momentum
written by hand under `no_grad` (ember has no `optim` package yet).

    python examples/mlp_demo.py
"""
import time

import numpy as np

import ember as torch

CLASSES, POINTS, HIDDEN = 3, 200, 64
STEPS, LR, MOMENTUM, PRINT_EVERY = 1000, 0.1, 0.9, 100


def spirals(rng, classes=CLASSES, points=POINTS, noise=0.3):
    """`classes` arms of a spiral in the plane, `points` noisy points each."""
    r = np.tile(np.linspace(0.05, 1.0, points), classes)
    label = np.repeat(np.arange(classes), points)
    theta = label * 2 * np.pi / classes + r * 2 * np.pi + rng.standard_normal(r.size) * noise
    x = np.stack([r * np.sin(theta), r * np.cos(theta)], axis=1)
    return x.astype(np.float32), label


def init_params(rng, sizes):
    """He-initialised weights and zero biases, as leaf tensors that require grad."""
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        w = rng.standard_normal((fan_in, fan_out)) * np.sqrt(2.0 / fan_in)
        params.append(torch.tensor(w, dtype=torch.float32, requires_grad=True))
        params.append(torch.zeros(fan_out, requires_grad=True))
    return params


def forward(params, x):
    """Linear layers with relu between them; returns the logits."""
    h = x
    for i in range(0, len(params), 2):
        h = h @ params[i] + params[i + 1]
        if i + 2 < len(params):
            h = torch.relu(h)
    return h


def cross_entropy(logits, onehot):
    """Mean negative log-likelihood of the true class."""
    return -(torch.log_softmax(logits, dim=1) * onehot).sum() / logits.shape[0]


def sgd_momentum_step(params, velocity, lr=LR, momentum=MOMENTUM):
    """torch.optim.SGD(momentum=m): v = m * v + grad; p -= lr * v."""
    with torch.no_grad():
        for p, v in zip(params, velocity):
            v.mul_(momentum).add_(p.grad)
            p.sub_(lr * v)
            p.grad = None


def accuracy(params, x, y):
    """Fraction of points whose largest logit is the true class."""
    with torch.no_grad():
        pred = forward(params, x).argmax(dim=1)
    return (pred == y).float().mean().item()


def main():
    rng = np.random.default_rng(0)
    x_np, y_np = spirals(rng)
    x = torch.from_numpy(x_np)
    y = torch.from_numpy(y_np)
    onehot = torch.from_numpy(np.eye(CLASSES, dtype=np.float32)[y_np])
    params = init_params(rng, [2, HIDDEN, HIDDEN, CLASSES])
    velocity = [torch.zeros_like(p) for p in params]

    print(f"spirals: {len(y_np)} points, {CLASSES} classes; MLP 2-{HIDDEN}-{HIDDEN}-{CLASSES}")
    start = time.perf_counter()
    for step in range(1, STEPS + 1):
        loss = cross_entropy(forward(params, x), onehot)
        loss.backward()
        sgd_momentum_step(params, velocity)
        if step % PRINT_EVERY == 0 or step == 1:
            print(f"step {step:5d}  loss {loss.item():.4f}")
    seconds = time.perf_counter() - start

    x_test, y_test = (torch.from_numpy(a) for a in spirals(rng))
    print(f"{STEPS} steps in {seconds:.1f} s ({seconds / STEPS * 1e3:.2f} ms/step)")
    print(f"train accuracy: {accuracy(params, x, y) * 100:.1f}%")
    test = accuracy(params, x_test, y_test)
    print(f"test accuracy: {test * 100:.1f}% (new points from the same spirals)")


if __name__ == "__main__":
    main()
