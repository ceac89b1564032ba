"""Time-series prediction (pytorch/examples/time_sequence_prediction, scaled down): two
stacked LSTMCells in float64 learn noisy sine waves generated from a fixed NumPy seed, trained
with LBFGS (closure re-evaluating the loss), then predict future values.

Held fixed: the waves come from NumPy; float64 as in the original, which also keeps LBFGS's
line search and curvature pairs from amplifying float32 rounding differences.
"""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn


class Sequence(nn.Module):
    def __init__(self, hidden=12):
        super().__init__()
        self.hidden = hidden
        self.lstm1 = nn.LSTMCell(1, hidden)
        self.lstm2 = nn.LSTMCell(hidden, hidden)
        self.linear = nn.Linear(hidden, 1)

    def forward(self, input, future=0):
        outputs = []
        n = input.size(0)
        h_t = torch.zeros(n, self.hidden, dtype=torch.double)
        c_t = torch.zeros(n, self.hidden, dtype=torch.double)
        h_t2 = torch.zeros(n, self.hidden, dtype=torch.double)
        c_t2 = torch.zeros(n, self.hidden, dtype=torch.double)
        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for _ in range(future):
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        return torch.cat(outputs, dim=1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--init", required=True)
    p.add_argument("--steps", type=int, default=4)
    args = p.parse_args()

    rng = np.random.RandomState(2)
    T, L, N = 20, 30, 12
    x = np.empty((N, L), np.int64)
    x[:] = np.arange(L) + rng.randint(-4 * T, 4 * T, N).reshape(N, 1)
    data = np.sin(x / 1.0 / T).astype("float64")
    inp = torch.from_numpy(data[3:, :-1])
    target = torch.from_numpy(data[3:, 1:])
    test_input = torch.from_numpy(data[:3, :-1])
    test_target = torch.from_numpy(data[:3, 1:])

    seq = Sequence().double()
    if os.path.exists(args.init):
        seq.load_state_dict(torch.load(args.init))
    else:
        torch.save(seq.state_dict(), args.init)
    criterion = nn.MSELoss()
    optimizer = torch.optim.LBFGS(seq.parameters(), lr=0.8, max_iter=4)
    for step in range(args.steps):
        losses = []

        def closure():
            optimizer.zero_grad()
            loss = criterion(seq(inp), target)
            losses.append(loss.item())
            loss.backward()
            return loss
        optimizer.step(closure)
        print(f"step {step} loss {losses[-1]:.12f}")
        with torch.no_grad():
            future = 5
            pred = seq(test_input, future=future)
            print(f"test loss {criterion(pred[:, :-future], test_target).item():.6f}")


if __name__ == "__main__":
    main()
