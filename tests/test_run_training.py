"""A real PyTorch training script runs unchanged through `ember run` and reaches the
same loss as under PyTorch (weights come from NumPy, so both start identically)."""
import re
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent('''
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    text = ("the quick brown fox jumps over the lazy dog. " * 6 +
            "pack my box with five dozen liquor jugs. " * 6)
    chars = sorted(set(text))
    idx = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([idx[c] for c in text], dtype=torch.long)

    class CharLM(nn.Module):
        def __init__(self, vocab, emb=16, hidden=32):
            super().__init__()
            self.emb = nn.Embedding(vocab, emb)
            self.rnn = nn.LSTM(emb, hidden, batch_first=True)
            self.head = nn.Linear(hidden, vocab)

        def forward(self, x):
            out, _ = self.rnn(self.emb(x))
            return self.head(out)

    model = CharLM(len(chars))
    rng = np.random.default_rng(0)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy((rng.standard_normal(tuple(p.shape)) * 0.1)
                                     .astype(np.float32)))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    seq = 32
    starts = np.arange(0, len(data) - seq - 1, 16)
    for step in range(40):
        s = starts[step % len(starts)]
        x = torch.stack([data[s + k: s + k + seq] for k in range(4)])
        y = torch.stack([data[s + k + 1: s + k + seq + 1] for k in range(4)])
        loss = F.cross_entropy(model(x).reshape(-1, len(chars)), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"final loss {loss.item():.6f}")
''')


def final_loss(cmd, tmp_path):
    script = tmp_path / "lm.py"
    script.write_text(SCRIPT)
    out = subprocess.run(cmd + [str(script)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return float(re.search(r"final loss ([0-9.]+)", out.stdout).group(1))


def test_lstm_language_model_matches_torch(tmp_path):
    pytest.importorskip("torch")
    ours = final_loss([sys.executable, "-m", "ember", "run"], tmp_path)
    theirs = final_loss([sys.executable], tmp_path)
    assert ours == pytest.approx(theirs, rel=2e-3, abs=2e-3)
