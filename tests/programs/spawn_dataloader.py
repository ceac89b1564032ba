"""A DataLoader with worker processes started by 'spawn' (num_workers=2,
multiprocessing_context="spawn", persistent_workers=True): a map-style Dataset defined in this
script (the workers re-import it, as on macOS/Windows), a collate_fn, worker_init_fn, then an
MLP classifier trained with RMSprop.

Held fixed: the data comes from a fixed NumPy seed inside __getitem__ (deterministic in any
worker); no shuffling (a NumPy permutation ordered sampler instead), so batch order does not
depend on either framework's generator.
"""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class Points(Dataset):
    def __init__(self, n=96):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        rng = np.random.RandomState(1000 + i)
        label = i % 3
        x = rng.randn(8).astype(np.float32) + np.eye(3, 8, dtype=np.float32)[label] * 2
        return torch.from_numpy(x), label


def collate(batch):
    xs, ys = zip(*batch)
    return torch.stack(xs), torch.tensor(ys)


def worker_init_fn(worker_id):
    np.random.seed(worker_id)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--init", required=True)
    p.add_argument("--epochs", type=int, default=2)
    args = p.parse_args()

    ds = Points()
    order = np.random.RandomState(0).permutation(len(ds)).tolist()
    loader = DataLoader(ds, batch_size=16, sampler=order, num_workers=2,
                        multiprocessing_context="spawn", persistent_workers=True,
                        collate_fn=collate,
                        worker_init_fn=worker_init_fn)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 3))
    if os.path.exists(args.init):
        model.load_state_dict(torch.load(args.init))
    else:
        torch.save(model.state_dict(), args.init)
    opt = torch.optim.RMSprop(model.parameters(), lr=0.01)
    step = 0
    for _ in range(args.epochs):
        for x, y in loader:
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            print(f"step {step} loss {loss.item():.8f}")
            step += 1


if __name__ == "__main__":
    main()
