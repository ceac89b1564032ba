"""Word-level LSTM language model (pytorch/examples/word_language_model, scaled down): a
Corpus/Dictionary built from a fixed text, batchify, truncated BPTT with repackaged hidden
states, RNNModel (Embedding -> LSTM -> Linear, tied weights), SGD by hand with clip_grad_norm_.
It keeps the original's `import torch.onnx` at the top (the original exports the model).

Held fixed: dropout is 0 (dropout masks come from each framework's own generator: MT19937 vs
Philox); the original's uniform_ init runs only in the PyTorch run, whose weights the ember run
loads from --init.
"""
import argparse
import os

import torch
import torch.nn as nn
import torch.onnx  # noqa: F401  (as the original example)

TEXT = ("the quick brown fox jumps over the lazy dog . the dog sleeps and the fox runs . "
        "a cat watches the fox and the dog . the lazy cat sleeps in the sun . ") * 6


class Dictionary:
    def __init__(self):
        self.word2idx, self.idx2word = {}, []

    def add_word(self, word):
        if word not in self.word2idx:
            self.idx2word.append(word)
            self.word2idx[word] = len(self.idx2word) - 1
        return self.word2idx[word]

    def __len__(self):
        return len(self.idx2word)


class Corpus:
    def __init__(self, path):
        self.dictionary = Dictionary()
        self.train = self.tokenize(path)

    def tokenize(self, path):
        with open(path, encoding="utf8") as f:
            ids = []
            for line in f:
                words = line.split() + ["<eos>"]
                ids.append(torch.tensor([self.dictionary.add_word(w) for w in words],
                                        dtype=torch.int64))
        return torch.cat(ids)


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.0, tie_weights=True):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            self.decoder.weight = self.encoder.weight
        self.init_weights()
        self.nhid, self.nlayers = nhid, nlayers

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        decoded = self.decoder(self.drop(output)).view(-1, self.decoder.out_features)
        return nn.functional.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid))


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    return data.narrow(0, 0, nbatch * bsz).view(bsz, -1).t().contiguous()


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def get_batch(source, i, bptt):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].view(-1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--init", required=True)
    p.add_argument("--lr", type=float, default=5.0)
    p.add_argument("--clip", type=float, default=0.25)
    p.add_argument("--bptt", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=4)
    args = p.parse_args()

    os.makedirs(args.data, exist_ok=True)
    path = os.path.join(args.data, "train.txt")
    with open(path, "w") as f:
        f.write(TEXT.replace(" . ", " .\n"))
    corpus = Corpus(path)
    train_data = batchify(corpus.train, args.batch_size)
    ntokens = len(corpus.dictionary)
    model = RNNModel(ntokens, 16, 16, 2)
    if os.path.exists(args.init):
        model.load_state_dict(torch.load(args.init))
    else:
        torch.save(model.state_dict(), args.init)
    criterion = nn.NLLLoss()
    model.train()
    hidden = model.init_hidden(args.batch_size)
    for step, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
        data, targets = get_batch(train_data, i, args.bptt)
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        for p_ in model.parameters():
            p_.data.add_(p_.grad, alpha=-args.lr)
        print(f"step {step} loss {loss.item():.8f}")


if __name__ == "__main__":
    main()
