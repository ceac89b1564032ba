"""A training script written for PyTorch 2's torch.compile: the model compiled with
backend="aot_eager" (compiled forward and backward graphs), a compiled loss function (the
default-argument decorator form), a last batch of another size (automatic dynamic shapes),
and a Python-side print of a tensor value inside the compiled step (a graph break).

Held fixed: generated data from a NumPy seed; batches in order.
"""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 3, padding=1)
        self.bn = nn.BatchNorm2d(6)
        self.conv2 = nn.Conv2d(6, 8, 3, padding=1)
        self.fc = nn.Linear(8 * 4 * 4, 5)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(torch.flatten(x, 1))


@torch.compile(backend="eager")
def loss_fn(logits, target, step):
    loss = F.cross_entropy(logits, target)
    if step % 4 == 0:
        print("  logits mean", round(logits.mean().item(), 4))
    return loss


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--init", required=True)
    args = p.parse_args()
    rng = np.random.RandomState(0)
    X = rng.rand(44, 1, 16, 16).astype(np.float32)
    Y = rng.randint(0, 5, size=44)
    model = Net()
    if os.path.exists(args.init):
        model.load_state_dict(torch.load(args.init))
    else:
        torch.save(model.state_dict(), args.init)
    compiled = torch.compile(model, backend="aot_eager")
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    step = 0
    for epoch in range(2):
        for i in range(0, 44, 16):            # batches of 16, 16 and 12
            x = torch.from_numpy(X[i:i + 16])
            y = torch.from_numpy(Y[i:i + 16]).long()
            opt.zero_grad()
            loss = loss_fn(compiled(x), y, step)
            loss.backward()
            opt.step()
            print(f"step {step} loss {loss.item():.8f}")
            step += 1
    print("running mean", float(model.bn.running_mean.sum()))


if __name__ == "__main__":
    main()
