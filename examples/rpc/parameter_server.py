"""A parameter server and N trainers over ember.distributed.rpc (PyTorch's RPC tutorial).

    python examples/rpc/parameter_server.py --trainers 2 --steps 30

Rank 0 holds the model; every trainer runs forward on it by RPC, backward with
distributed autograd (gradients cross back to the server) and steps a
DistributedOptimizer. Written against the PyTorch API: `import ember as torch`.
"""
import argparse
import os
import socket

import ember as torch
import ember.distributed.autograd as dist_autograd
import ember.distributed.rpc as rpc
import ember.multiprocessing as mp
import ember.nn.functional as F
from ember.distributed.optim import DistributedOptimizer


class ParameterServer:
    def __init__(self):
        torch.manual_seed(0)
        self.model = torch.nn.Sequential(torch.nn.Linear(2, 32), torch.nn.Tanh(),
                                         torch.nn.Linear(32, 1))

    def forward(self, x):
        # clones: another trainer may update the parameters before this backward runs
        w1, b1, w2, b2 = (p.clone() for p in self.model.parameters())
        return F.linear(torch.tanh(F.linear(x, w1, b1)), w2, b2)

    def parameter_rrefs(self):
        return [rpc.RRef(p) for p in self.model.parameters()]


def target(x):
    return (x[:, :1] * 3).sin() + x[:, 1:] ** 2


def run_trainer(ps_rref, steps, seed):
    g = torch.Generator().manual_seed(seed)
    opt = DistributedOptimizer(torch.optim.SGD, ps_rref.rpc_sync().parameter_rrefs(), lr=0.05)
    losses = []
    for _ in range(steps):
        x = torch.rand(32, 2, generator=g) * 2 - 1
        with dist_autograd.context() as cid:
            loss = F.mse_loss(ps_rref.rpc_sync().forward(x), target(x))
            dist_autograd.backward(cid, [loss])
            opt.step(cid)
        losses.append(loss.item())
    return losses


def main(rank, world_size, port, steps):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=world_size)
    if rank == 0:
        ps = rpc.RRef(ParameterServer())
        futs = [rpc.rpc_async(f"worker{k}", run_trainer, args=(ps, steps, k))
                for k in range(1, world_size)]
        for k, f in enumerate(futs, 1):
            losses = f.wait()
            print(f"trainer {k}: loss {losses[0]:.4f} -> {losses[-1]:.4f}")
    rpc.shutdown()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--trainers", type=int, default=2)
    ap.add_argument("--steps", type=int, default=30)
    a = ap.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(main, args=(a.trainers + 1, port, a.steps), nprocs=a.trainers + 1)
