"""DCGAN-style GAN (as pytorch/examples/dcgan, scaled down to 16x16): ConvTranspose2d
generator, strided-conv discriminator with BatchNorm and LeakyReLU, BCELoss, Adam(0.5, 0.999).

Held fixed: the "real" images and every latent batch come from a fixed NumPy seed (torch.randn
would draw from each framework's own generator: MT19937 vs Philox); weights_init's normal_
draws happen only in the PyTorch run, whose weights the ember run loads from --init.
"""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn

NZ, NGF, NDF = 8, 8, 8


def weights_init(m):
    name = m.__class__.__name__
    if name.find("Conv") != -1:
        nn.init.normal_(m.weight, 0.0, 0.02)
    elif name.find("BatchNorm") != -1:
        nn.init.normal_(m.weight, 1.0, 0.02)
        nn.init.constant_(m.bias, 0)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(NZ, NGF * 2, 4, 1, 0, bias=False),     # 4x4
            nn.BatchNorm2d(NGF * 2), nn.ReLU(True),
            nn.ConvTranspose2d(NGF * 2, NGF, 4, 2, 1, bias=False),    # 8x8
            nn.BatchNorm2d(NGF), nn.ReLU(True),
            nn.ConvTranspose2d(NGF, 1, 4, 2, 1, bias=False),          # 16x16
            nn.Tanh())

    def forward(self, z):
        return self.main(z)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(1, NDF, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(NDF, NDF * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(NDF * 2), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(NDF * 2, 1, 4, 1, 0, bias=False), nn.Sigmoid())

    def forward(self, x):
        return self.main(x).view(-1, 1).squeeze(1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--init", required=True)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--lr", type=float, default=0.0002)
    args = p.parse_args()

    rng = np.random.RandomState(0)
    yy, xx = np.mgrid[:16, :16]
    real_all = np.stack([np.tanh(np.sin(xx / (2 + i % 3)) + np.cos(yy / (3 + i % 2)))
                         for i in range(args.steps * args.batch_size)])[:, None]
    real_all = torch.tensor(real_all, dtype=torch.float32)

    netG, netD = Generator(), Discriminator()
    if os.path.exists(args.init):
        state = torch.load(args.init)
        netG.load_state_dict(state["G"])
        netD.load_state_dict(state["D"])
    else:
        netG.apply(weights_init)
        netD.apply(weights_init)
        torch.save({"G": netG.state_dict(), "D": netD.state_dict()}, args.init)

    criterion = nn.BCELoss()
    optD = torch.optim.Adam(netD.parameters(), lr=args.lr, betas=(0.5, 0.999))
    optG = torch.optim.Adam(netG.parameters(), lr=args.lr, betas=(0.5, 0.999))
    real_label, fake_label = 1.0, 0.0
    for step in range(args.steps):
        real = real_all[step * args.batch_size:(step + 1) * args.batch_size]
        b = real.size(0)
        noise = torch.from_numpy(rng.randn(b, NZ, 1, 1).astype(np.float32))
        # (1) update D: maximize log(D(x)) + log(1 - D(G(z)))
        netD.zero_grad()
        label = torch.full((b,), real_label, dtype=torch.float)
        errD_real = criterion(netD(real), label)
        errD_real.backward()
        fake = netG(noise)
        label.fill_(fake_label)
        errD_fake = criterion(netD(fake.detach()), label)
        errD_fake.backward()
        optD.step()
        # (2) update G: maximize log(D(G(z)))
        netG.zero_grad()
        label.fill_(real_label)
        errG = criterion(netD(fake), label)
        errG.backward()
        optG.step()
        # the harness reads "step N loss X": even N is D's loss, odd N is G's
        print(f"step {2 * step} loss {(errD_real + errD_fake).item():.8f}")
        print(f"step {2 * step + 1} loss {errG.item():.8f}")


if __name__ == "__main__":
    main()
