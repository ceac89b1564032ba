"""Per-sample gradients with torch.func (the torch.func per-sample-grads tutorial, used as in
DP-SGD): functional_call + vmap(grad(loss)) give one gradient per example, each clipped to a
norm bound, averaged and applied to the module's parameters by hand.

Held fixed: data from a fixed NumPy seed; DP-SGD's Gaussian noise is left out (it draws from
each framework's own generator: MT19937 vs Philox).
"""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap


class SimpleCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.fc1 = nn.Linear(4 * 3 * 3, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        return self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--init", required=True)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--max-norm", type=float, default=1.0)
    p.add_argument("--lr", type=float, default=0.5)
    args = p.parse_args()

    rng = np.random.RandomState(0)
    n = args.steps * args.batch_size
    y_all = rng.randint(0, 4, size=n)
    x_all = rng.randn(n, 1, 8, 8).astype(np.float32) * 0.5
    for i, y in enumerate(y_all):
        x_all[i, 0, 2 * y:2 * y + 2] += 1.0
    x_all, y_all = torch.from_numpy(x_all), torch.from_numpy(y_all)

    model = SimpleCNN()
    if os.path.exists(args.init):
        model.load_state_dict(torch.load(args.init))
    else:
        torch.save(model.state_dict(), args.init)

    def compute_loss(params, buffers, sample, target):
        out = functional_call(model, (params, buffers), (sample.unsqueeze(0),))
        return F.cross_entropy(out, target.unsqueeze(0))

    per_sample_grad = vmap(grad(compute_loss), in_dims=(None, None, 0, 0))
    for step in range(args.steps):
        sl = slice(step * args.batch_size, (step + 1) * args.batch_size)
        x, y = x_all[sl], y_all[sl]
        params = {k: v.detach() for k, v in model.named_parameters()}
        buffers = {k: v.detach() for k, v in model.named_buffers()}
        with torch.no_grad():
            loss = F.cross_entropy(model(x), y)
        grads = per_sample_grad(params, buffers, x, y)
        norms = torch.stack([g.flatten(1).norm(dim=1) for g in grads.values()], 1).norm(dim=1)
        scale = (args.max_norm / (norms + 1e-6)).clamp(max=1.0)
        with torch.no_grad():
            for name, param in model.named_parameters():
                g = grads[name]
                clipped = g * scale.view(-1, *([1] * (g.dim() - 1)))
                param.sub_(args.lr * clipped.mean(0))
        print(f"step {step} loss {loss.item():.8f}")


if __name__ == "__main__":
    main()
