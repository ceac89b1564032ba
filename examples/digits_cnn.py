"""ember's main job (`make demo`): train a small CNN on scikit-learn's handwritten digits.

A plain PyTorch program: `import ember as torch` is the only change, and
`python examples/digits_cnn.py --torch` runs the very same code on PyTorch.
It uses a DataLoader, a tqdm progress bar, AdamW with a OneCycle schedule, reports
per-epoch loss and test accuracy, saves a checkpoint PyTorch can load, and ends
with `test accuracy: NN.N%`.
"""
import argparse
import os
import sys
import time

import numpy as np
from sklearn.datasets import load_digits
from tqdm import tqdm

if "--torch" in sys.argv:
    import torch
else:
    import ember as torch
nn = torch.nn
F = torch.nn.functional
DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset


class DigitsCNN(nn.Module):
    """8x8 grey digits -> 10 classes: two conv blocks, then a small classifier."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, kernel_size=3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.Conv2d(16, 32, kernel_size=3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(32, 64, kernel_size=3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(64, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


def data(seed):
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None]
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(x))
    x, y = x[order], y[order]
    n_test = 360
    train = TensorDataset(torch.from_numpy(x[n_test:]), torch.from_numpy(y[n_test:]))
    test = (torch.from_numpy(x[:n_test]), torch.from_numpy(y[:n_test]))
    return train, test


def evaluate(model, test):
    model.eval()
    with torch.no_grad():
        logits = model(test[0])
        loss = F.cross_entropy(logits, test[1]).item()
        acc = (logits.argmax(1) == test[1]).float().mean().item()
    model.train()
    return loss, acc


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--checkpoint", default="digits_cnn.pt")
    p.add_argument("--torch", action="store_true", help="run on PyTorch instead of ember")
    args = p.parse_args()

    torch.manual_seed(args.seed)
    train, test = data(args.seed)
    loader = DataLoader(train, batch_size=args.batch_size, shuffle=True,
                        generator=torch.Generator().manual_seed(args.seed))
    model = DigitsCNN()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, epochs=args.epochs,
                                                steps_per_epoch=len(loader))
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        total, seen = 0.0, 0
        bar = tqdm(loader, desc=f"epoch {epoch}/{args.epochs}", leave=False,
                   disable=not sys.stderr.isatty())
        for xb, yb in bar:
            opt.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(yb)
            seen += len(yb)
            bar.set_postfix(loss=f"{loss.item():.3f}")
        test_loss, acc = evaluate(model, test)
        print(f"epoch {epoch}: train loss {total / seen:.4f}  test loss {test_loss:.4f}  "
              f"test accuracy {acc * 100:.1f}%", flush=True)
    torch.save(model.state_dict(), args.checkpoint)
    print(f"saved {args.checkpoint} ({os.path.getsize(args.checkpoint)} bytes) in "
          f"{time.perf_counter() - start:.1f} s")
    print(f"test accuracy: {acc * 100:.1f}%")


if __name__ == "__main__":
    main()
