"""Fine-tuning torchvision's resnet18 (the transfer-learning tutorial, on 32x32 images): the
backbone's weights come from a torchvision-format state_dict (the PyTorch run saves real
torchvision's resnet18 state_dict at --init, standing in for a downloaded checkpoint), the
1000-class fc is replaced by a new 3-class head, and the whole net is trained with SGD.

Held fixed: the new head's initial weights are saved next to --init by the PyTorch run (its
init draws from each framework's own generator: MT19937 vs Philox); images come from a fixed
NumPy seed; no random augmentation; batches in order. The backbone's BatchNorm layers stay in
eval mode (a common fine-tuning choice for small batches): with 6 images of 32x32, layer4's maps
are 1x1 and train-mode statistics over 6 values make the loss ill-conditioned. PyTorch's own
float32 and float64 runs of this net then differ by ~6% in gradients at step 3, so no
cross-framework comparison could be tight.
"""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
from torchvision import models, transforms


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--init", required=True)
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--batch-size", type=int, default=6)
    args = p.parse_args()

    model = models.resnet18(weights=None)
    if os.path.exists(args.init):
        model.load_state_dict(torch.load(args.init))      # strict: torchvision's key names
    else:
        torch.save(model.state_dict(), args.init)
    model.fc = nn.Linear(model.fc.in_features, 3)
    head = args.init + ".head"
    if os.path.exists(head):
        model.fc.load_state_dict(torch.load(head))
    else:
        torch.save(model.fc.state_dict(), head)

    rng = np.random.RandomState(0)
    labels = np.arange(args.steps * args.batch_size) % 3
    images = rng.rand(len(labels), 32, 32, 3).astype(np.float32) * 0.5
    for i, y in enumerate(labels):
        images[i, :, :, y] += 0.5
    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    x_all = normalize(torch.from_numpy(images).permute(0, 3, 1, 2))
    y_all = torch.from_numpy(labels)

    criterion = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    model.train()
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.eval()
    for step in range(args.steps):
        sl = slice(step * args.batch_size, (step + 1) * args.batch_size)
        opt.zero_grad()
        loss = criterion(model(x_all[sl]), y_all[sl])
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item():.8f}")


if __name__ == "__main__":
    main()
