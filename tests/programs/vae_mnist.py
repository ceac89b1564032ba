"""Variational autoencoder on MNIST (pytorch/examples/vae, scaled down): torchvision's
datasets.MNIST reads idx files that this script writes itself (28x28 digit-like blobs from a
fixed NumPy seed; no download), an MLP encoder/decoder, reparameterisation, BCE + KL, Adam.

Held fixed: the reparameterisation noise eps comes from a NumPy generator (torch.randn_like
would draw from each framework's own generator: MT19937 vs Philox); the loader does not shuffle.
"""
import argparse
import os
import struct

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn, optim
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


def write_idx(root, n_train=48, n_test=8):
    raw = os.path.join(root, "MNIST", "raw")
    os.makedirs(raw, exist_ok=True)
    rng = np.random.RandomState(0)
    yy, xx = np.mgrid[:28, :28]
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        labels = rng.randint(0, 10, size=n).astype(np.uint8)
        imgs = np.zeros((n, 28, 28), np.uint8)
        for i, lab in enumerate(labels):
            cy, cx = 8 + lab, 6 + 1.5 * lab
            imgs[i] = (255 * np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 18.0)).astype(np.uint8)
        with open(os.path.join(raw, f"{prefix}-images-idx3-ubyte"), "wb") as f:
            f.write(struct.pack(">IIII", 2051, n, 28, 28) + imgs.tobytes())
        with open(os.path.join(raw, f"{prefix}-labels-idx1-ubyte"), "wb") as f:
            f.write(struct.pack(">II", 2049, n) + labels.tobytes())


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 64)
        self.fc21 = nn.Linear(64, 8)
        self.fc22 = nn.Linear(64, 8)
        self.fc3 = nn.Linear(8, 64)
        self.fc4 = nn.Linear(64, 784)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar, eps):
        std = torch.exp(0.5 * logvar)
        return mu + eps * std

    def decode(self, z):
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

    def forward(self, x, eps):
        mu, logvar = self.encode(x.view(-1, 784))
        return self.decode(self.reparameterize(mu, logvar, eps)), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    bce = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--init", required=True)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=16)
    args = p.parse_args()

    write_idx(args.data)
    train = datasets.MNIST(args.data, train=True, download=False,
                           transform=transforms.ToTensor())
    test = datasets.MNIST(args.data, train=False, transform=transforms.ToTensor())
    loader = DataLoader(train, batch_size=args.batch_size, shuffle=False)
    model = VAE()
    if os.path.exists(args.init):
        model.load_state_dict(torch.load(args.init))
    else:
        torch.save(model.state_dict(), args.init)
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    noise = np.random.RandomState(1)
    step = 0
    for _ in range(args.epochs):
        model.train()
        for data, _ in loader:
            eps = torch.from_numpy(noise.randn(data.size(0), 8).astype(np.float32))
            optimizer.zero_grad()
            recon, mu, logvar = model(data, eps)
            loss = loss_function(recon, data, mu, logvar)
            loss.backward()
            optimizer.step()
            print(f"step {step} loss {loss.item() / len(data):.8f}")
            step += 1
    model.eval()
    with torch.no_grad():
        x, _ = next(iter(DataLoader(test, batch_size=len(test))))
        recon, mu, logvar = model(x, torch.zeros(len(x), 8))
        print(f"test loss {loss_function(recon, x, mu, logvar).item() / len(x):.4f}")


if __name__ == "__main__":
    main()
