"""A training loop that logs to TensorBoard (torch.utils.tensorboard.SummaryWriter): the loss
and learning rate as scalars, each parameter's histogram every other step, a text note; an
MLP regressor with Adam and ExponentialLR on data from a fixed NumPy seed.

Held fixed: data from NumPy; batches in order. The event files go to <data>/runs.
"""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.tensorboard import SummaryWriter


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 32)
        self.fc2 = nn.Linear(32, 1)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--init", required=True)
    p.add_argument("--epochs", type=int, default=2)
    args = p.parse_args()

    rng = np.random.RandomState(0)
    x = rng.randn(64, 6).astype(np.float32)
    y = (np.sin(x[:, :1]) + 0.5 * x[:, 1:2] * x[:, 2:3]).astype(np.float32)
    loader = DataLoader(TensorDataset(torch.from_numpy(x), torch.from_numpy(y)), batch_size=16)
    model = MLP()
    if os.path.exists(args.init):
        model.load_state_dict(torch.load(args.init))
    else:
        torch.save(model.state_dict(), args.init)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
    writer = SummaryWriter(log_dir=os.path.join(args.data, "runs", "mlp"))
    writer.add_text("note", "tests/programs tensorboard loop", 0)
    step = 0
    for _ in range(args.epochs):
        for xb, yb in loader:
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(xb), yb)
            loss.backward()
            opt.step()
            writer.add_scalar("train/loss", loss.item(), step)
            writer.add_scalar("train/lr", opt.param_groups[0]["lr"], step)
            if step % 2 == 0:
                for name, param in model.named_parameters():
                    writer.add_histogram(name, param, step)
            print(f"step {step} loss {loss.item():.8f}")
            step += 1
        sched.step()
    writer.flush()
    writer.close()


if __name__ == "__main__":
    main()
