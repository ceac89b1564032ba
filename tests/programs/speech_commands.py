"""Speech-commands style keyword classifier (the torchaudio speech-command tutorial, scaled
down): one-second 8 kHz WAV clips per label folder written with soundfile (tones and chirps
plus noise from a fixed NumPy seed; no download), torchaudio.transforms.MelSpectrogram +
AmplitudeToDB features, an M5-like 1-d CNN over the mel frames, AdamW with StepLR.

Held fixed: the noise in the clips is NumPy's; no random augmentation (time/frequency masking
draws from each framework's own generator: MT19937 vs Philox); the loader does not shuffle, a
fixed NumPy permutation orders the clips.
"""
import argparse
import os

import numpy as np
import soundfile as sf
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchaudio
from torch.utils.data import DataLoader, Dataset

LABELS = ["yes", "no", "up"]
SR = 8000


def write_clips(root, per_label=6):
    rng = np.random.RandomState(0)
    t = np.arange(SR // 2) / SR
    for k, label in enumerate(LABELS):
        os.makedirs(os.path.join(root, label), exist_ok=True)
        for i in range(per_label):
            f0 = 300 * (k + 1) + 20 * i
            wave = 0.5 * np.sin(2 * np.pi * (f0 + 400 * k * t) * t)
            wave += 0.05 * rng.randn(len(t))
            sf.write(os.path.join(root, label, f"{i:02d}.wav"), wave.astype(np.float32), SR,
                     subtype="PCM_16")


class KeywordDataset(Dataset):
    def __init__(self, root):
        self.items = [(os.path.join(root, lab, f), k) for k, lab in enumerate(LABELS)
                      for f in sorted(os.listdir(os.path.join(root, lab)))]
        self.items = [self.items[i] for i in np.random.RandomState(1).permutation(len(self.items))]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        path, label = self.items[i]
        wave, sr = sf.read(path, dtype="float32")
        return torch.from_numpy(wave).unsqueeze(0), label


class KeywordNet(nn.Module):
    def __init__(self, n_mels=32, n_classes=3):
        super().__init__()
        self.features = nn.Sequential(
            torchaudio.transforms.MelSpectrogram(sample_rate=SR, n_fft=256, hop_length=128,
                                                 n_mels=n_mels),
            torchaudio.transforms.AmplitudeToDB(top_db=80.0))
        self.conv1 = nn.Conv1d(n_mels, 32, 3, padding=1)
        self.bn1 = nn.BatchNorm1d(32)
        self.conv2 = nn.Conv1d(32, 32, 3, padding=1)
        self.fc = nn.Linear(32, n_classes)

    def forward(self, wave):
        x = self.features(wave).squeeze(1)            # (batch, n_mels, frames)
        x = (x + 40.0) / 40.0
        x = F.max_pool1d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.relu(self.conv2(x))
        return F.log_softmax(self.fc(F.adaptive_avg_pool1d(x, 1).squeeze(-1)), dim=-1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--init", required=True)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=6)
    args = p.parse_args()

    write_clips(args.data)
    loader = DataLoader(KeywordDataset(args.data), batch_size=args.batch_size, shuffle=False)
    model = KeywordNet()
    if os.path.exists(args.init):
        model.load_state_dict(torch.load(args.init))
    else:
        torch.save(model.state_dict(), args.init)
    opt = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
    step = 0
    for _ in range(args.epochs):
        model.train()
        for wave, label in loader:
            opt.zero_grad()
            loss = F.nll_loss(model(wave), label)
            loss.backward()
            opt.step()
            sched.step()
            print(f"step {step} loss {loss.item():.8f}")
            step += 1


if __name__ == "__main__":
    main()
