"""Image classification from a folder of PNGs: torchvision ImageFolder + transforms, a small
CNN, SGD with momentum and StepLR.

Held fixed so PyTorch and ember agree step by step: the images are generated from a fixed
NumPy seed; the loader does not shuffle (a NumPy permutation orders the files instead), and the
augmentation is deterministic (Resize + CenterCrop + a flip applied to every image) because
random transforms draw from each framework's own generator (MT19937 vs Philox).
"""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Subset
from torchvision import datasets, transforms


def make_image_folder(root, classes=3, per_class=8, size=20):
    rng = np.random.RandomState(0)
    for c in range(classes):
        d = os.path.join(root, f"class_{c}")
        os.makedirs(d, exist_ok=True)
        for i in range(per_class):
            img = rng.randint(0, 80, size=(size, size, 3)).astype(np.uint8)
            img[:, :, c] += 150                        # the class is the dominant channel
            Image.fromarray(img).save(os.path.join(d, f"{i:03d}.png"))


class Net(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16 * 4 * 4, num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(torch.flatten(x, 1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--init", required=True)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--lr", type=float, default=0.05)
    args = p.parse_args()

    make_image_folder(args.data)
    tf = transforms.Compose([
        transforms.Resize(18),
        transforms.CenterCrop(16),
        transforms.RandomHorizontalFlip(p=1.0),
        transforms.ToTensor(),
        transforms.Normalize((0.5, 0.5, 0.5), (0.25, 0.25, 0.25)),
    ])
    ds = datasets.ImageFolder(args.data, transform=tf)
    order = np.random.RandomState(1).permutation(len(ds)).tolist()
    loader = DataLoader(Subset(ds, order), batch_size=args.batch_size, shuffle=False)

    model = Net(len(ds.classes))
    if os.path.exists(args.init):
        model.load_state_dict(torch.load(args.init))
    else:
        torch.save(model.state_dict(), args.init)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
    step = 0
    for _ in range(args.epochs):
        model.train()
        for x, y in loader:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            sched.step()
            print(f"step {step} loss {loss.item():.8f}")
            step += 1
    model.eval()
    with torch.no_grad():
        correct = sum((model(x).argmax(1) == y).sum().item() for x, y in loader)
    print(f"accuracy {correct / len(ds):.3f}")


if __name__ == "__main__":
    main()
