"""Siamese network (pytorch/examples/siamese_network, scaled down): pairs of 16x16 digit-like
images, a shared CNN tower, the two embeddings concatenated into a small head with a sigmoid,
BCELoss on "same class?", Adadelta with StepLR, as the original.

Held fixed: images and pair choices come from a fixed NumPy seed (the original picks pairs with
torch.randint, which draws from each framework's own generator: MT19937 vs Philox); batches in
order.
"""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, Dataset


class PairDataset(Dataset):
    def __init__(self, n=48, classes=4):
        rng = np.random.RandomState(0)
        yy, xx = np.mgrid[:16, :16]
        self.labels = rng.randint(0, classes, size=n)
        self.images = np.stack([
            np.exp(-((yy - 3 - 3 * c) ** 2 + (xx - 12 + 2 * c) ** 2) / 8.0)
            + 0.2 * rng.rand(16, 16) for c in self.labels]).astype(np.float32)[:, None]
        self.pairs = []
        for i in range(n):
            same = i % 2 == 0
            cands = np.flatnonzero((self.labels == self.labels[i]) == same)
            self.pairs.append((i, int(cands[rng.randint(len(cands))]), float(same)))

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, k):
        i, j, target = self.pairs[k]
        return (torch.from_numpy(self.images[i]), torch.from_numpy(self.images[j]),
                torch.tensor(target))


class SiameseNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.tower = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d((2, 2)), nn.Flatten())
        self.fc = nn.Sequential(nn.Linear(2 * 64, 32), nn.ReLU(inplace=True), nn.Linear(32, 1))
        self.sigmoid = nn.Sigmoid()

    def forward_once(self, x):
        return self.tower(x)

    def forward(self, input1, input2):
        output = torch.cat((self.forward_once(input1), self.forward_once(input2)), 1)
        return self.sigmoid(self.fc(output))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--init", required=True)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--lr", type=float, default=1.0)
    p.add_argument("--gamma", type=float, default=0.7)
    args = p.parse_args()

    loader = DataLoader(PairDataset(), batch_size=12, shuffle=False)
    model = SiameseNetwork()
    if os.path.exists(args.init):
        model.load_state_dict(torch.load(args.init))
    else:
        torch.save(model.state_dict(), args.init)
    optimizer = torch.optim.Adadelta(model.parameters(), lr=args.lr)
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    criterion = nn.BCELoss()
    step = 0
    for _ in range(args.epochs):
        model.train()
        for images_1, images_2, targets in loader:
            optimizer.zero_grad()
            outputs = model(images_1, images_2).squeeze()
            loss = criterion(outputs, targets)
            loss.backward()
            optimizer.step()
            print(f"step {step} loss {loss.item():.8f}")
            step += 1
        scheduler.step()
    model.eval()
    with torch.no_grad():
        correct = sum(((model(a, b).squeeze() > 0.5).float() == t).sum().item()
                      for a, b, t in loader)
    print(f"pair accuracy {correct / len(loader.dataset):.3f}")


if __name__ == "__main__":
    main()
