"""Super-resolution with a sub-pixel CNN (pytorch/examples/super_resolution, scaled down):
the Y channel of generated 32x32 PIL images, downscaled with torchvision's Resize (bicubic) as
the input, the original as the target, conv layers ending in nn.PixelShuffle(upscale), MSE
loss, Adam, PSNR printed per epoch.

Held fixed: images from a fixed NumPy seed; CenterCrop instead of the original's random crops;
batches in order. The orthogonal_ init runs only in the PyTorch run, whose weights the ember
run loads from --init.
"""
import argparse
import math
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.init as init
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms

UPSCALE = 2


class Net(nn.Module):
    def __init__(self, upscale_factor):
        super().__init__()
        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 16, 5, 1, 2)
        self.conv2 = nn.Conv2d(16, 16, 3, 1, 1)
        self.conv3 = nn.Conv2d(16, upscale_factor ** 2, 3, 1, 1)
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
        init.orthogonal_(self.conv1.weight, init.calculate_gain("relu"))
        init.orthogonal_(self.conv2.weight, init.calculate_gain("relu"))
        init.orthogonal_(self.conv3.weight)

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        return self.pixel_shuffle(self.conv3(x))


class FolderOfImages(Dataset):
    def __init__(self, root, crop=24):
        self.files = sorted(os.path.join(root, f) for f in os.listdir(root))
        self.input_transform = transforms.Compose([
            transforms.CenterCrop(crop), transforms.Resize(crop // UPSCALE),
            transforms.ToTensor()])
        self.target_transform = transforms.Compose([
            transforms.CenterCrop(crop), transforms.ToTensor()])

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        y, _, _ = Image.open(self.files[i]).convert("YCbCr").split()
        return self.input_transform(y), self.target_transform(y.copy())


def make_images(root, n=16):
    os.makedirs(root, exist_ok=True)
    rng = np.random.RandomState(0)
    yy, xx = np.mgrid[:32, :32] / 32.0
    for i in range(n):
        a, b, c = rng.rand(3) * 6
        img = np.stack([np.sin(a * xx + b * yy), np.cos(b * xx - c * yy),
                        np.sin(c * xx * yy)], -1)
        img = ((img + 1) * 127.5).clip(0, 255).astype(np.uint8)
        Image.fromarray(img).save(os.path.join(root, f"{i:02d}.png"))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--init", required=True)
    p.add_argument("--epochs", type=int, default=2)
    args = p.parse_args()

    make_images(args.data)
    loader = DataLoader(FolderOfImages(args.data), batch_size=4, shuffle=False)
    model = Net(UPSCALE)
    if os.path.exists(args.init):
        model.load_state_dict(torch.load(args.init))
    else:
        torch.save(model.state_dict(), args.init)
    criterion = nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.003)
    step = 0
    for epoch in range(args.epochs):
        for inp, target in loader:
            optimizer.zero_grad()
            loss = criterion(model(inp), target)
            loss.backward()
            optimizer.step()
            print(f"step {step} loss {loss.item():.8f}")
            step += 1
        with torch.no_grad():
            mse = sum(criterion(model(i), t).item() for i, t in loader) / len(loader)
        print(f"epoch {epoch} psnr {10 * math.log10(1 / mse):.4f}")


if __name__ == "__main__":
    main()
