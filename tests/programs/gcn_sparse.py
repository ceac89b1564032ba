"""Graph convolutional network (Kipf & Welling, as pygcn) on a generated graph: a
stochastic-block-model graph from a fixed NumPy seed, the symmetric-normalised adjacency
D^-1/2 (A + I) D^-1/2 as a torch.sparse_coo_tensor, two GraphConvolution layers with
torch.sparse.mm, NLL loss on the training nodes, Adam with weight decay.

Held fixed: the graph and features come from NumPy; dropout is 0 (its masks come from each
framework's own generator: MT19937 vs Philox); the init's uniform_ draws run only in the
PyTorch run, whose weights the ember run loads from --init.
"""
import argparse
import math
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_graph(n=60, k=3, feats=12):
    rng = np.random.RandomState(0)
    labels = np.arange(n) % k
    same = labels[:, None] == labels[None, :]
    prob = np.where(same, 0.25, 0.02)
    a = np.triu(rng.rand(n, n) < prob, 1)
    a = (a | a.T).astype(np.float32) + np.eye(n, dtype=np.float32)
    d = 1.0 / np.sqrt(a.sum(1))
    norm = a * d[:, None] * d[None, :]
    rows, cols = np.nonzero(norm)
    adj = torch.sparse_coo_tensor(torch.from_numpy(np.stack([rows, cols])),
                                  torch.from_numpy(norm[rows, cols]), (n, n)).coalesce()
    x = (rng.randn(n, feats) + labels[:, None] * 0.3).astype(np.float32)
    return adj, torch.from_numpy(x), torch.from_numpy(labels.astype(np.int64))


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(in_features, out_features))
        self.bias = nn.Parameter(torch.empty(out_features))
        stdv = 1.0 / math.sqrt(out_features)
        self.weight.data.uniform_(-stdv, stdv)
        self.bias.data.uniform_(-stdv, stdv)

    def forward(self, x, adj):
        return torch.sparse.mm(adj, torch.mm(x, self.weight)) + self.bias


class GCN(nn.Module):
    def __init__(self, nfeat, nhid, nclass, dropout=0.0):
        super().__init__()
        self.gc1 = GraphConvolution(nfeat, nhid)
        self.gc2 = GraphConvolution(nhid, nclass)
        self.dropout = dropout

    def forward(self, x, adj):
        x = F.relu(self.gc1(x, adj))
        x = F.dropout(x, self.dropout, training=self.training)
        return F.log_softmax(self.gc2(x, adj), dim=1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--init", required=True)
    p.add_argument("--epochs", type=int, default=10)
    args = p.parse_args()

    adj, features, labels = make_graph()
    idx_train = torch.arange(0, 30)
    idx_val = torch.arange(30, 60)
    model = GCN(features.shape[1], 16, 3)
    if os.path.exists(args.init):
        model.load_state_dict(torch.load(args.init))
    else:
        torch.save(model.state_dict(), args.init)
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    for epoch in range(args.epochs):
        model.train()
        opt.zero_grad()
        output = model(features, adj)
        loss = F.nll_loss(output[idx_train], labels[idx_train])
        loss.backward()
        opt.step()
        print(f"step {epoch} loss {loss.item():.8f}")
    model.eval()
    with torch.no_grad():
        acc = (model(features, adj)[idx_val].argmax(1) == labels[idx_val]).float().mean()
    print(f"val accuracy {acc.item():.3f}")


if __name__ == "__main__":
    main()
