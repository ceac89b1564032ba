"""Transformer encoder language model (pytorch/examples/word_language_model's TransformerModel,
scaled down): character tokens from a fixed text, sinusoidal PositionalEncoding, a causal
nn.TransformerEncoder, Adam with a LambdaLR warm-up.

Held fixed: dropout is 0 (dropout masks come from each framework's own generator: MT19937 vs
Philox); batches are taken in order (no shuffling).
"""
import argparse
import math
import os

import torch
import torch.nn as nn

TEXT = ("to be, or not to be, that is the question: whether 'tis nobler in the mind to "
        "suffer the slings and arrows of outrageous fortune, or to take arms against a sea "
        "of troubles and by opposing end them. ") * 4


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.0, max_len=512):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0).transpose(0, 1))

    def forward(self, x):
        return self.dropout(x + self.pe[:x.size(0), :])


class TransformerModel(nn.Module):
    def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.0):
        super().__init__()
        self.pos_encoder = PositionalEncoding(ninp, dropout)
        layer = nn.TransformerEncoderLayer(ninp, nhead, nhid, dropout)
        self.transformer_encoder = nn.TransformerEncoder(layer, nlayers,
                                                         enable_nested_tensor=False)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.decoder = nn.Linear(ninp, ntoken)
        self.ninp = ninp

    def forward(self, src):
        mask = nn.Transformer.generate_square_subsequent_mask(len(src))
        src = self.pos_encoder(self.encoder(src) * math.sqrt(self.ninp))
        out = self.transformer_encoder(src, mask, is_causal=True)
        return torch.log_softmax(self.decoder(out), dim=-1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--init", required=True)
    p.add_argument("--bptt", type=int, default=16)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--steps", type=int, default=8)
    args = p.parse_args()

    vocab = sorted(set(TEXT))
    stoi = {c: i for i, c in enumerate(vocab)}
    data = torch.tensor([stoi[c] for c in TEXT], dtype=torch.long)
    nb = data.size(0) // args.batch_size
    data = data[:nb * args.batch_size].view(args.batch_size, -1).t().contiguous()

    model = TransformerModel(len(vocab), 32, 4, 64, 2)
    if os.path.exists(args.init):
        model.load_state_dict(torch.load(args.init))
    else:
        torch.save(model.state_dict(), args.init)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 4))
    criterion = nn.NLLLoss()
    model.train()
    for step in range(args.steps):
        i = (step * args.bptt) % (data.size(0) - args.bptt - 1)
        src, tgt = data[i:i + args.bptt], data[i + 1:i + 1 + args.bptt]
        opt.zero_grad()
        out = model(src)
        loss = criterion(out.view(-1, len(vocab)), tgt.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        sched.step()
        print(f"step {step} loss {loss.item():.8f}")


if __name__ == "__main__":
    main()
